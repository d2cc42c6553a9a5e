// The census's source of realised pairs along its line (LineSource) and the exact key of
// formats beyond binary64.
#include "attention/census/census_internal.hpp"

namespace ropesim::attention::census_impl {

std::string wide_key(const RealisedPair& p) {
  return (p.cos.is_nan() ? "nan" : p.cos.to_hex()) + "|" +
         (p.sin.is_nan() ? "nan" : p.sin.to_hex());
}

LineSource::LineSource(const Schedule& s, std::size_t b, const std::vector<Realisation>& members,
                       const CensusOptions& options)
    : s_(s), b_(b), members_(members), options_(options) {
  const RotaryBlock& block = s.blocks[b];
  mixed_ = s.is_multi_axis() && block.axis_angles.size() > 1;
  if (mixed_) return;
  ev_ =
      std::make_unique<detail::BlockEvaluator>(s, b, members, members.front().arithmetic_engine());
  if (!s.is_multi_axis()) return;
  if (block.axis_angles.empty() ||
      (options.axis && block.axis_angles.front().axis != *options.axis)) {
    // reads an axis fixed at `at` (or none: θ = 0, realised at 0 as realise() does): one
    // value for the whole window
    const std::uint64_t q = block.axis_angles.empty() || options.at.empty()
                                ? 0
                                : options.at[block.axis_angles.front().axis];
    ev_->evaluate(q, q + 1, constant_);
    is_constant_ = true;
  }
}

void LineSource::evaluate(std::uint64_t begin, std::uint64_t end,
                          std::vector<std::vector<RealisedPair>>& values) {
  const std::uint64_t start = options_.start;
  if (is_constant_) {
    values.resize(members_.size());
    for (std::size_t m = 0; m < members_.size(); ++m)
      values[m].assign(end - begin, constant_[m][0]);
    return;
  }
  if (!mixed_) return ev_->evaluate(start + begin, start + end, values);
  values.resize(members_.size());
  PositionTuple p = options_.at.empty() ? PositionTuple(s_.position_axes.size(), 0) : options_.at;
  for (std::size_t m = 0; m < members_.size(); ++m) values[m].resize(end - begin);
  for (std::uint64_t i = begin; i < end; ++i) {
    if (options_.axis) {
      p[*options_.axis] = start + i;
    } else {
      std::fill(p.begin(), p.end(), start + i);
    }
    for (std::size_t m = 0; m < members_.size(); ++m) {
      values[m][i - begin] =
          detail::evaluate_mixed(s_.blocks[b_], members_[m], p, s_.position_axes, nullptr);
    }
  }
}

void LineSource::evaluate_bits(std::uint64_t begin, std::uint64_t end,
                               std::vector<std::vector<PairBits>>& bits) {
  if (!is_constant_ && !mixed_) {
    ev_->evaluate_bits(options_.start + begin, options_.start + end, bits);
    return;
  }
  evaluate(begin, end, scratch_);
  bits.resize(scratch_.size());
  for (std::size_t m = 0; m < scratch_.size(); ++m) {
    bits[m].resize(scratch_[m].size());
    for (std::size_t k = 0; k < scratch_[m].size(); ++k) {
      const RealisedPair& p = scratch_[m][k];
      bits[m][k] = PairBits{p.cos.bits_key(), p.sin.bits_key(), p.flags};
    }
  }
}

}  // namespace ropesim::attention::census_impl
