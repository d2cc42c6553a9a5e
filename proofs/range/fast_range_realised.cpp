// Realised queries and keys of a fixed-offset head over ranges of positions, for the candidate
// algorithm (proofs/range/fast_range_detail.hpp RealisedHead): each rotation realised once, the
// biases through the matvec once, THEORY §2.1's rotation in F.
#include <algorithm>

#include "attention/realisations/realisation.hpp"
#include "attention/transformer/transformer.hpp"
#include "proofs/range/fast_range_detail.hpp"

namespace ropesim::proofs::detail {

using numeric::Value;

RealisedHead::RealisedHead(const FixedOffsetHead& head)
    : head_(head),
      D_(head.head.head_dim),
      B_(head.ideal.blocks.size()),
      R_(head.policy.format, head.policy.rounding) {
  const std::vector<Value> zero(head.head.query.cols, Value());
  bq_ = attention::matvec(head.head.query, zero, head.head.query_bias, head.policy);
  bk_ = attention::matvec(head.head.key, zero, head.head.key_bias, head.policy);
  // the binary64 rotation applies where Binary64Rounding is exact and the head's one rotary
  // segment realises every block as the head's realisation does
  fast_ =
      R_.fast_arithmetic() && head.head.rotary.size() == 1 && bq_.size() == D_ && bk_.size() == D_;
  if (fast_) {
    const auto& seg = head.head.rotary[0];
    fast_ = seg.dimension() == D_ && seg.realisations.size() == B_ &&
            seg.layout == head.realisation.layout;
    // a pipeline whose table, rotation and output are F (structural_refusal's domain): its
    // rotation is THEORY §2.1's in F — hf_eager's rnd(rnd(x0·c) + rnd(−x1·s)) equals
    // rnd(rnd(c·x0) − rnd(s·x1)) under round-to-nearest-even (rnd(−y) = −rnd(y)), which
    // fast_arithmetic() implies
    auto in_F = [&](const attention::Realisation& r) {
      const auto& st = r.steps;
      return r.kind != attention::Realisation::Kind::pipeline ||
             (st.table == head.policy.format && st.rotation.compute == head.policy.format &&
              st.rotation.stored() == head.policy.format && st.output == head.policy.format &&
              st.rotation.rounding.value_or(r.rounding) == head.policy.rounding);
    };
    for (const auto& r : seg.realisations) {
      fast_ = fast_ && r && in_F(*r) && r->format == head.policy.format &&
              r->rounding == head.policy.rounding;
    }
  }
  for (std::size_t d = 0; d < B_; ++d) coords_.push_back(block_coordinates(head, d));
  for (std::size_t c = 0; c < bq_.size(); ++c) bq_d_.push_back(bq_[c].narrow());
  for (std::size_t c = 0; c < bk_.size(); ++c) bk_d_.push_back(bk_[c].narrow());
}

std::vector<std::vector<attention::RealisedPair>> RealisedHead::realise(std::uint64_t begin,
                                                                        std::uint64_t end) const {
  std::vector<std::vector<attention::RealisedPair>> pairs(B_);
  for (std::size_t b = 0; b < B_; ++b)
    pairs[b] = attention::realise_block(head_.schedule, head_.realisation, b, begin, end);
  return pairs;
}

void RealisedHead::rotate(const std::vector<std::vector<attention::RealisedPair>>& pairs,
                          std::size_t index, double* q, double* k) const {
  if (fast_) {
    if (q) std::copy(bq_d_.begin(), bq_d_.end(), q);
    if (k) std::copy(bk_d_.begin(), bk_d_.end(), k);
    for (std::size_t b = 0; b < B_; ++b) {
      const double c = pairs[b][index].cos.narrow(), s = pairs[b][index].sin.narrow();
      const auto [i0, i1] = coords_[b];
      for (double* y : {q, k}) {
        if (!y) continue;
        const double* x = y == q ? bq_d_.data() : bk_d_.data();
        y[i0] = R_.sub(R_.mul(c, x[i0]), R_.mul(s, x[i1]));
        y[i1] = R_.add(R_.mul(s, x[i0]), R_.mul(c, x[i1]));
      }
    }
    return;
  }
  attention::HeadRotations one;
  one.positions = 1;
  one.blocks.resize(B_);
  for (std::size_t b = 0; b < B_; ++b) one.blocks[b].assign(1, pairs[b][index]);
  if (q) {
    const auto v = attention::rotate(head_.head, one, 0, bq_, head_.policy);
    for (std::size_t c = 0; c < D_; ++c) q[c] = v[c].narrow();
  }
  if (k) {
    const auto v = attention::rotate(head_.head, one, 0, bk_, head_.policy);
    for (std::size_t c = 0; c < D_; ++c) k[c] = v[c].narrow();
  }
}

KeyBlock RealisedHead::keys(std::uint64_t begin, std::uint64_t end) const {
  KeyBlock out{begin, end, std::vector<double>(D_ * (end - begin))};
  const auto pairs = realise(begin, end);
  for (std::uint64_t p = begin; p < end; ++p)
    rotate(pairs, p - begin, nullptr, &out.keys[D_ * (p - begin)]);
  return out;
}

}  // namespace ropesim::proofs::detail
