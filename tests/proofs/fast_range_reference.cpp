// The plain second implementation of the candidate algorithm's evaluation (see
// fast_range_reference.hpp).
#include "tests/proofs/fast_range_reference.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"
#include "core/stopwatch.hpp"
#include "numeric/exact.hpp"
#include "proofs/range/fast_range.hpp"
#include "proofs/range/fast_range_detail.hpp"

namespace fast_range_test {

using ropesim::numeric::Value;
namespace proofs = ropesim::proofs;

proofs::CertifiedRange reference_range_by_candidates(const proofs::FixedOffsetHead& head,
                                                     const proofs::ScanOptions& options) {
  if (options.max_length < 1 || options.max_length > proofs::kMaxScanLength)
    throw ropesim::InvalidArgument("reference: max_length outside 1..kMaxScanLength");
  if (auto why = proofs::fast_range_refusal(head)) throw ropesim::InvalidArgument(*why);
  const auto start = ropesim::Clock::now();
  const mpq_class E = *proofs::realised_score_error_bound(head);
  const std::uint64_t k = head.k;
  const std::uint64_t last_query = options.max_length + 1;
  const std::uint64_t positions = last_query + 1;
  const std::size_t D = head.head.head_dim;

  // every realised query and key, as doubles (elements of F)
  const auto rotations = ropesim::attention::realise_head(head.head, positions, head.policy);
  const std::vector<Value> no_input(head.head.query.cols, Value());
  std::vector<std::vector<Value>> q(positions), key(positions);
  for (std::uint64_t p = 0; p < positions; ++p) {
    q[p] = ropesim::attention::head_query(head.head, rotations, p, no_input, head.policy);
    key[p] = ropesim::attention::head_key(head.head, rotations, p, no_input, head.policy);
  }
  const auto kernel = options.use_fast_kernel ? proofs::ScoreKernel::make(head) : std::nullopt;
  auto score = [&](std::uint64_t i, std::uint64_t j) {
    Value s;
    if (kernel) {
      std::vector<double> a(D), b(D);
      for (std::size_t c = 0; c < D; ++c) {
        a[c] = q[i][c].narrow();
        b[c] = key[j][c].narrow();
      }
      s = Value::from_double_exact(kernel->dot(a.data(), b.data(), D));
    } else {
      s = ropesim::attention::head_score(head.head, q[i], key[j], head.policy);
    }
    if (!s.is_finite()) throw std::logic_error("reference: a score is not finite");
    return s;
  };

  // candidate offsets: n ≤ k − 1 for competitors after the target, n ≤ i − k before it
  const std::vector<std::uint64_t> after = proofs::candidate_offsets(head, E, k - 1);
  const std::vector<std::uint64_t> before =
      proofs::candidate_offsets(head, E, last_query > k ? last_query - k : 0);

  // per-query bounds (THEORY §6): competitor offset n is scored when u(n) > σ_i
  const ropesim::proofs::detail::QueryBound bound(head, E);
  const ropesim::proofs::detail::IdealDoubles ideal(head.ideal);
  std::vector<bool> scored_before(last_query + 1, false), scored_after(k, false);

  proofs::CertifiedRange r;
  r.algorithm = "candidates";
  r.error_bound = E;
  r.max_length = options.max_length;
  r.fast_kernel = kernel.has_value();
  std::uint64_t seen = 0;  // the last query examined
  for (std::uint64_t i = k + 1; i <= last_query; ++i) {
    seen = i;
    const std::uint64_t target = i - k;
    const Value t = score(i, target);
    ++r.scores_evaluated;
    std::vector<double> qd(D);
    for (std::size_t c = 0; c < D; ++c) qd[c] = q[i][c].narrow();
    const double C = head.C.to_double();
    const double sigma = ropesim::proofs::detail::prune_threshold(
        t.to_double(), head.f_large.to_double(), bound.error(i, qd.data()), C);
    // the split bound (THEORY §6 "Split bounds"): also excluded when u(n) + A(n)/C, rounded
    // up, is at most σ2_i = (t − f_large − R_i)/C rounded down
    const double sigma2 = bound.has_split() ? ropesim::proofs::detail::prune_threshold(
                                                  t.to_double(), head.f_large.to_double(),
                                                  bound.split_error(i, qd.data()), C)
                                            : 0.0;
    // the per-query bound alone: one target and every competitor with u(n) > σ_i
    ++r.scores_per_query_bound;
    for (const std::uint64_t n : before)
      if (n <= target && ideal.upper(n) > sigma) ++r.scores_per_query_bound;
    for (const std::uint64_t n : after)
      if (ideal.upper(n) > sigma) ++r.scores_per_query_bound;
    auto kept = [&](std::uint64_t n) {
      const double u = ideal.upper(n);
      if (!(u > sigma)) return false;
      if (!bound.has_split()) return true;
      const double a = std::nextafter(bound.offset_error(n) / C, HUGE_VAL);
      return std::nextafter(u + a, HUGE_VAL) > sigma2;
    };
    // competitors j in increasing order: target − n (n ≤ target, from the largest n down),
    // then target + n, those not excluded by either bound
    std::vector<std::uint64_t> competitors;
    for (const std::uint64_t n : before) {
      if (n <= target && kept(n)) {
        competitors.push_back(target - n);
        scored_before[n] = true;
      }
    }
    for (const std::uint64_t n : after) {
      if (kept(n)) {
        competitors.push_back(target + n);
        scored_after[n] = true;
      }
    }
    std::sort(competitors.begin(), competitors.end());
    std::optional<std::uint64_t> best;
    Value m;
    for (const std::uint64_t j : competitors) {
      const Value s = score(i, j);
      ++r.scores_evaluated;
      if (!best || ropesim::numeric::exact_rational(s) > ropesim::numeric::exact_rational(m)) {
        best = j;
        m = s;
      }
    }
    if (!best) continue;
    const mpq_class gap = ropesim::numeric::exact_rational(t) - ropesim::numeric::exact_rational(m);
    if (gap >= head.f_large_exact) continue;
    r.n_max = i - 2;
    r.fail_query = i;
    r.fail_competitor = *best;
    r.fail_offset = static_cast<std::int64_t>(target) - static_cast<std::int64_t>(*best);
    r.gap = gap;
    r.target_score = t;
    r.competitor_score = m;
    break;
  }
  const std::uint64_t reach = seen > k ? seen - k : 0;
  r.candidate_offsets = after.size() + static_cast<std::uint64_t>(std::count_if(
                                           before.begin(), before.end(),
                                           [&](std::uint64_t n) { return n <= reach; }));
  r.offsets_scored =
      static_cast<std::uint64_t>(std::count(scored_before.begin(), scored_before.end(), true) +
                                 std::count(scored_after.begin(), scored_after.end(), true));
  if (!r.fail_query) {
    r.n_max = options.max_length;
    r.at_limit = true;
  }
  r.seconds = ropesim::seconds_since(start);
  return r;
}

}  // namespace fast_range_test
