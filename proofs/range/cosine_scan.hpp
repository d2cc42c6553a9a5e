#pragma once
/// The scans of a cosine sum S(n) = Σ_b w_b·cos(θ_b·n) over n = 1..L behind the horizon
/// report's comparison columns for several blocks (THEORY §6; records.hpp): the first n with
/// S(n) above a rational threshold, found by a binary64 filter with a proven error bound and
/// decided exactly (CosineSum::compare) only where the filter cannot, and the exact scan it is
/// checked against.
///
/// The filter (CosineSumFilter) evaluates S over runs of consecutive n: cos and sin of θ_b·n0
/// by the realisation fast path (numeric/trig/fast_trig.hpp: θ_b/2π in double-double,
/// the turns reduced in double-double, Taylor polynomials, a proven bound of about 2^-49),
/// then n0 + 1, n0 + 2, … by multiplying by e^{iθ_b} in binary64; the error argument is beside
/// the code in cosine_scan.cpp (CORE-MATH habit).
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "proofs/common/exact_trig.hpp"

namespace ropesim::proofs {

/// Counters of one filtered scan (for tests and benchmarks). Counted over n = 1 up to the
/// answer (or the limit), so they do not depend on the thread count.
struct CosineScanStats {
  /// Offsets n whose S(n) the binary64 filter evaluated.
  std::int64_t filtered = 0;
  /// Offsets decided by the exact comparison: the filter's interval contained the threshold,
  /// or the angles were outside its domain (CosineSumFilter::evaluate returned false).
  std::int64_t exact = 0;
};

/// Options of first_reaching.
struct CosineScanOptions {
  /// Worker threads (numeric::parallel_for over runs of n); ≥ 1. The answer and the stats do
  /// not depend on it.
  unsigned threads = 1;
  /// Filled when given (set, not added to).
  CosineScanStats* stats = nullptr;
  /// For the tests only (never set in the library or the tools): multiplies the proven error
  /// bound (1 = the proof; 0 trusts binary64, a broken filter the tests must see fail).
  double bound_scale = 1;
  /// For the tests only: added to the binary64 threshold the filter compares with (0 = the
  /// proof; any other value is a broken filter).
  double threshold_shift = 0;
};

/// binary64 values of S(n) over runs of consecutive n, each with a proven bound on its error.
/// Blocks with weight 0 are left out (as in CosineSum::exact and enclose). Thread-safe.
class CosineSumFilter {
 public:
  /// The longest run evaluate takes (the rotation error grows linearly along a run).
  static constexpr std::size_t kRun = 1024;

  /// Precomputes θ_b/2π (numeric::trig::turn_of), e^{iθ_b} and the weights in binary64.
  /// Throws only what ExactReal::enclose and MPFR throw.
  explicit CosineSumFilter(const CosineSum& s);

  /// For k < count (count ≤ kRun, n0 ≥ 0): value[k] ≈ S(n0 + k) with |value[k] − S(n0 + k)|
  /// ≤ bound[k] (bound[k] ≥ 0). Returns false, leaving the arrays unspecified, when an angle is
  /// outside the binary64 path's domain (|θ_b/2π| ∉ [2^-900, 2^20] for θ_b ≠ 0, n0 ≥ 2^53,
  /// |n0·θ_b/2π| ≥ 2^50): the caller then decides exactly. Never throws.
  bool evaluate(std::int64_t n0, std::size_t count, double* value, double* bound) const;

 private:
  bool usable_ = true;
  std::size_t padded_ = 0;  ///< blocks rounded up to a multiple of 4 (padding: w = 0, angle 0)
  /// θ_b/2π = turn_hi_ + turn_lo_ within turn_error_ (numeric::trig::Turn); all 0 for θ_b = 0
  std::vector<double> turn_hi_, turn_lo_, turn_error_;
  std::vector<double> weight_, rot_cos_, rot_sin_;
  double rot_error_ = 0;     ///< max_b |e^{iθ_b} − (rot_cos_ + i·rot_sin_)|
  double weight_error_ = 0;  ///< Σ_b |w_b − weight_[b]|, rounded up
  double weight_abs_ = 0;    ///< Σ_b |weight_[b]|, rounded up
};

/// The sign of x − y, proven, for reals x ∈ [value − bound, value + bound] and
/// y ∈ [threshold − threshold_error, threshold + threshold_error] (all finite binary64, bounds
/// ≥ 0): 1 when x > y for every such pair, −1 when x < y, 0 when the intervals are too close to
/// tell (the binary64 roundings of the test itself accounted for). Never throws.
int proven_sign(double value, double bound, double threshold, double threshold_error);

/// The first n in 1..limit with S(n) > t (S(n) ≥ t when `inclusive`; an exact comparison
/// undecided at 4096 bits counts as equal, as in CosineSum::compare), or std::nullopt when
/// there is none (or limit < 1). The same answer as first_reaching_exact, always: the filter
/// only skips n where its proven interval lies strictly on one side of t. Cost: O(limit·blocks)
/// binary64 operations (about 10 per block and offset) plus one exact comparison per
/// undecided n; the runs after one holding an answer are cancelled.
std::optional<std::int64_t> first_reaching(const CosineSum& s, const mpq_class& t, bool inclusive,
                                           std::int64_t limit,
                                           const CosineScanOptions& options = {});

/// The same by the exact comparison CosineSum::compare(n, t) at every n = 1, 2, …: the
/// reference first_reaching is tested against (O(limit·blocks) MPFR evaluations; tests and
/// small limits only).
std::optional<std::int64_t> first_reaching_exact(const CosineSum& s, const mpq_class& t,
                                                 bool inclusive, std::int64_t limit);

}  // namespace ropesim::proofs
