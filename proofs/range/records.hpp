#pragma once
/// Record distances and the exact-arithmetic comparison columns of the fixed-offset head
/// (THEORY §6): δ_L(g) = 1 − max_{1≤n≤L} cos(g·n), the largest L with C·δ_L(g) ≥ f_large, and
/// the tie distance (the first n with round_F(cos g·n) = 1). Generalised to a multi-frequency
/// head S(n) = Σ_d w_d·cos(θ_d·n) with δ_L = S(0) − max_{1≤n≤L} S(n).
///
/// All decisions are exact (proven enclosures refined until they decide, exact_trig.hpp); for
/// several blocks a binary64 filter with a proven error bound (cosine_scan.hpp) skips the
/// offsets it can decide, without changing any result.
#include <gmpxx.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"
#include "proofs/common/exact_trig.hpp"
#include "proofs/range/cosine_scan.hpp"

namespace ropesim::proofs {

/// A distance n ≥ 1 at which S(0) − S(n) reaches a new strict minimum over 1..n (for one
/// frequency g: 1 − cos(g·n); for g = 1 the records are n = 1, 6, 19, 25, 44, 333, 710,
/// 103993, 312689, …, the convergent denominators of 1/2π; THEORY §6).
struct RecordDistance {
  std::int64_t n = 0;
  /// S(0) − S(n) (= δ_n), nearest double (display and C candidates only).
  double delta = 0;
};

/// The record distances n ≤ limit of S.
///
/// One block: from the continued fraction of θ/2π (exact for rational turns; from a proven
/// enclosure otherwise, refined as needed): by Lagrange's best-approximation theorem the strict
/// minima of ||n·θ/2π|| over n ≥ 1 occur exactly at n = 1 and at the convergent denominators,
/// and 1 − cos(θn) = 1 − cos(2π||nθ/2π||) is increasing in that distance. Each record is
/// confirmed exactly. Cost: O(number of records). limit ≤ 4·10^18.
/// Several blocks: a scan n = 1..limit, O(limit·blocks) binary64 operations (the filter of
/// cosine_scan.hpp) plus an exact comparison where the filter cannot tell.
/// Throws InvalidArgument if limit < 1.
std::vector<RecordDistance> record_distances(const CosineSum& s, std::int64_t limit);

/// A bound found by a search that may stop at its limit.
struct SearchBound {
  /// The value found, or the search limit when `at_limit`.
  std::int64_t value = 0;
  /// True when the search reached its limit without deciding: the true value is ≥ `value`
  /// (for the δ bound) or > `value` (for the tie distance).
  bool at_limit = false;
};

/// The largest L ≥ 0 with C·δ_L ≥ f_large, δ_L = S(0) − max_{1≤n≤L} S(n) (THEORY §6, the
/// sufficient condition under exact scores; L = 0 when already C·δ_1 < f_large), searched
/// over L ≤ limit. C > 0 and f_large > 0 are exact rationals. One block: over the record
/// distances (continued fractions). Several blocks: L + 1 is the first n with
/// S(n) > S(0) − f_large/C, found by first_reaching (cosine_scan.hpp; `scan`: its threads and
/// stats, the same answer as the exact scan first_reaching_exact for every thread count).
/// Throws InvalidArgument if C ≤ 0.
SearchBound delta_bound(const CosineSum& s, const mpq_class& C, const mpq_class& f_large,
                        std::int64_t limit, const CosineScanOptions& scan = {});

/// The smallest real t with round_F(t) = 1 under `r`, and whether t itself rounds to 1
/// (`inclusive`; false for round-up, where every t > prev(1) rounds to 1 but prev(1) does
/// not). std::nullopt when 1 is not an element of F (fixed point with max < 1).
struct RoundsToOne {
  mpq_class threshold;
  bool inclusive = true;
};
std::optional<RoundsToOne> rounds_to_one(const numeric::Format& f, numeric::Rounding r);

/// The tie distance (THEORY §6): the first n ≥ 1 with round_F(S(n)/S(0)) = 1, i.e.
/// round_F(cos g·n) = 1 for one block with w = 1 (44 for fp16 and bf16, 710 for fp32 at
/// g = 1). Searched over n ≤ limit; `at_limit` when none was found. std::nullopt value when
/// nothing rounds to 1 (rounds_to_one is nullopt). Several blocks: the first n with
/// S(n) ≥ t·S(0) (S(n) > t·S(0) when not `inclusive`), t from rounds_to_one, found by
/// first_reaching with `scan` (as delta_bound).
std::optional<SearchBound> tie_distance(const CosineSum& s, const numeric::Format& f,
                                        numeric::Rounding r, std::int64_t limit,
                                        const CosineScanOptions& scan = {});

/// Continued-fraction partial quotients [a0; a1, a2, …] of x > 0 given by a proven
/// enclosure (or exactly when rational), as far as the convergent denominators stay
/// ≤ limit (one more quotient is included). Exposed for tests.
std::vector<mpz_class> continued_fraction_of_turn(const BlockAngle& angle, std::int64_t limit);

}  // namespace ropesim::proofs
