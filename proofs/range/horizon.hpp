#pragma once
/// The horizon report of a fixed-offset head (THEORY §6): the measured certified range
/// N_max^(k) (RoPE-X eq. 10, realised scores in F) next to the comparison columns —
/// the largest L certified by the exact-arithmetic sufficient condition C·δ_L ≥ f_large,
/// the tie distance (first n with round_F(cos g·n) = 1), the Dirichlet heuristic
/// L + 1 ≲ π·sqrt(2C/f_large), the rounding cap L ≲ π·sqrt(2/u), and [PM]'s precision
/// ceiling 1/eps_mach where angles are formed in a format — and, with C = auto, the choice of
/// C among f_large/δ_n at the record distances n and the powers of two.
#include <gmpxx.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "proofs/common/f_large.hpp"
#include "proofs/range/fast_range.hpp"
#include "proofs/range/fixed_offset_head.hpp"
#include "proofs/range/records.hpp"

namespace ropesim::proofs {

/// How the certified range is measured: `automatic` uses the candidate algorithm
/// (certified_range_fast) wherever fast_range_refusal accepts the head and the quadratic scan
/// (certified_range) elsewhere; `scan` forces the scan (cross-checks); `candidates` forces the
/// candidate algorithm (InvalidArgument where it does not apply). Both give the same N_max and
/// failure witness (tests/proofs: property against the scan).
enum class RangeAlgorithm { automatic, scan, candidates };

/// Parses "auto" | "scan" | "candidates" (core/enum_names.hpp); throws InvalidArgument
/// "unknown certified-range algorithm 'x'; accepted: auto, candidates, scan" for other text.
RangeAlgorithm parse_range_algorithm(const std::string& text);

/// "auto", "candidates" or "scan": the spelling parse_range_algorithm reads.
std::string_view to_string(RangeAlgorithm algorithm);

/// The algorithm `algorithm` resolves to for `head` (automatic → candidates or scan).
/// Throws InvalidArgument when `candidates` is forced on a head outside its domain.
RangeAlgorithm resolve_range_algorithm(RangeAlgorithm algorithm, const FixedOffsetHead& head);

/// The default L_max for a head under an algorithm: fast_range_length_limit(head) for the
/// candidate algorithm, scan_length_limit(head) for the scan.
std::uint64_t default_max_length(RangeAlgorithm resolved, const FixedOffsetHead& head);

// FLargeCause, FLargeUndefined and require_f_large: proofs/common/f_large.hpp

/// The estimated cost of one horizon run by the candidate algorithm up to max_length:
/// estimate_certified_range_fast for a given C; for C = auto (`auto_C`, the candidates of
/// auto_c_candidates with `slack`) the sum over the candidates in increasing order, each on
/// `threads` as horizon() runs them, stopping after the first one predicted to reach max_length
/// (its probe passes and C·δ_L ≥ f_large in exact arithmetic, delta_bound), where the search stops.
/// `head` is the head with C = 1 for C = auto. Throws InvalidArgument outside the candidate
/// algorithm's domain.
RangeEstimate estimate_horizon(const FixedOffsetHead& head, std::uint64_t max_length,
                               unsigned threads, bool auto_C = false,
                               const mpq_class& slack = mpq_class(1, 16));

/// The L_max of one horizon run (THEORY §6): `requested` when given, else
/// default_max_length(resolved, head). A requested L beyond that quick limit runs when the
/// candidate algorithm's estimate (estimate_horizon, measured by a probe of a few hundredths
/// of a second per candidate C) is within numeric::Budget's default (10 min, 8 GiB), and is
/// refused otherwise unless `allow_slow`. Throws InvalidArgument with one line: "L must be at
/// least 1" (L = 0); "L = … is beyond the candidate algorithm's quick limit … and its
/// estimate exceeds the budget of 10 min (estimate: up to … and … GB on T threads); pass
/// --allow-slow to run it anyway"; "L = … is beyond what the quadratic scan does in the time a
/// user would wait for this head (limit …, up to N^2/2 = … scores); pass --allow-slow to run it
/// anyway" (N = L + 2). Whether L is refused depends on the measured estimate (and so on the
/// machine and `threads`).
/// When `estimate` is given and L is beyond the quick limit, the estimate (computed in either
/// case then) is stored there for the caller to show; it is left untouched otherwise (the quick
/// limit is quick by construction for one C and the estimate costs as much as a short run),
/// except for C = auto (`auto_C`) with the candidate algorithm: its candidates are measured
/// one after another, so L (the quick limit when none is requested) is estimated and stored
/// (not refused: within the quick limit the estimate is an upper bound, each candidate charged
/// up to its δ bound).
std::uint64_t horizon_max_length(RangeAlgorithm resolved, const FixedOffsetHead& head,
                                 std::optional<std::uint64_t> requested, bool allow_slow,
                                 unsigned threads = 1, bool auto_C = false,
                                 const mpq_class& slack = mpq_class(1, 16),
                                 std::optional<RangeEstimate>* estimate = nullptr);

/// The widest head horizon runs without --allow-slow: 4096 rotary blocks (head dimension
/// 8192; real models' heads have at most 256 dimensions). The error analysis, the exact
/// angles and each candidate C's probe cost time linear in the blocks (about 10 s per C at
/// 8192 blocks on one core), before any offset is scanned.
inline constexpr std::size_t kHorizonQuickBlocks = 4096;

/// "0.5 s", "12 min", "3.1 h": a duration for estimates.
std::string duration_text(double seconds);

/// What to measure.
struct HorizonSpec {
  /// The head (its C is used unless auto_C).
  FixedOffsetSpec head;
  /// Choose C automatically (see auto_c_candidates).
  bool auto_C = false;
  /// Relative slack of the record candidates: C_n = f_large/δ_n · (1 + slack), rounded up.
  mpq_class slack = mpq_class(1, 16);
  /// L_max of the scan; 0 = default_max_length (fast_range_length_limit for the candidate
  /// algorithm, scan_length_limit(head) for the scan).
  std::uint64_t max_length = 0;
  /// Candidate algorithm or scan (see RangeAlgorithm). With C = auto the choice is made on the
  /// head with C = 1; a candidate C too large for the error analysis (possible overflow) is
  /// scanned instead, up to min(max_length, scan_length_limit).
  RangeAlgorithm algorithm = RangeAlgorithm::automatic;
  /// See ScanOptions.
  bool use_fast_kernel = true;
  /// Called after each candidate C of C = auto with (tried, candidates), on the calling
  /// thread (for a progress display); may be empty.
  std::function<void(std::size_t, std::size_t)> progress;
  /// Worker threads (numeric::parallel_for); ≥ 1. The report does not depend on it. The
  /// candidate algorithm runs its position chunks on them (certified_range_fast), for the one
  /// C given or for each of C = auto's candidates in turn (in increasing order, stopping at the
  /// first that reaches L_max); the scan (a C outside the candidate algorithm's domain) runs on
  /// one. The δ-bound and tie-distance scans of several blocks run on them too (first_reaching,
  /// cosine_scan.hpp).
  unsigned threads = 1;
  /// The candidate algorithm's estimate for a max_length beyond the quick limit (horizon_spec
  /// fills it when it was computed for that check); none for the quick default.
  std::optional<RangeEstimate> estimate;
};

/// One candidate C tried by C = auto.
struct CandidateResult {
  numeric::Value C;
  /// "record n=44" or "2^10".
  std::string source;
  std::uint64_t n_max = 0;
  bool at_limit = false;
};

/// The report (one row of `ropesim horizon` / `ropesim table horizon`).
struct HorizonReport {
  std::string format;  ///< F's name
  /// F has no infinities and saturates (e.g. fp8e4m3): an extension of THEORY §1's F.
  bool saturating = false;
  std::string schedule;     ///< the head's schedule spec
  std::string realisation;  ///< Realisation::name()
  std::string rounding;
  std::string summation;
  /// g for a single-frequency head with rational g (nullopt otherwise).
  std::optional<mpq_class> g;
  std::uint64_t k = 1;
  std::size_t blocks = 1;
  numeric::Value C;  ///< the C used (element of F)
  numeric::Value f_large;
  CertifiedRange range;
  /// Largest L with C·δ_L ≥ f_large (exact arithmetic; THEORY §6).
  SearchBound delta_bound;
  /// First n with round_F(S(n)/S(0)) = 1 (= round_F(cos g·n) = 1 for one block).
  std::optional<SearchBound> tie_distance;
  /// π·sqrt(2C/f_large) − 1: the Dirichlet heuristic for L (single frequency only).
  std::optional<double> heuristic;
  /// π·sqrt(2/u), u the unit roundoff of F (THEORY §6: ≈ 201 fp16, 71 bf16, 18198 fp32).
  double tie_cap = 0;
  /// [PM] 1/eps_mach = 2^(p-1) of the format the angle is formed in (r2: F; pipelines: their
  /// angle format); nullopt for r1/r3 (exact angles) and fixed point.
  std::optional<double> pm_ceiling;
  /// C = auto: every candidate tried, in the order tried (increasing C).
  std::vector<CandidateResult> candidates;
  bool auto_C = false;
  /// The candidate chosen by C = auto ("record n=…" / "2^e"), or "given".
  std::string C_source = "given";
};

/// The C candidates of C = auto, increasing and distinct: f_large/δ_n·(1 + slack) rounded up
/// into F for the record distances n of the head's ideal score (one block: all records up to
/// 4·10^18; several blocks: records up to `record_limit`), and the powers of two from
/// 2^ceil(log2(f_large/2)) (smaller C cannot lead by f_large) up to 2^(ceil(log2 f_large)+p+2)
/// or the largest finite power of F, whichever is smaller (beyond, doubling C scales every
/// realised score exactly and cannot raise N_max; see horizon.cpp). Values that are not
/// finite in F are dropped. Each carries its source label.
std::vector<std::pair<numeric::Value, std::string>> auto_c_candidates(const FixedOffsetHead& head,
                                                                      const mpq_class& slack,
                                                                      std::int64_t record_limit);

/// Measures the report. With auto_C, tries the candidates in increasing order, keeps the
/// one with the largest N_max (the smallest C on ties) and stops early once a candidate
/// reaches the scan limit. Throws InvalidArgument like make_fixed_offset_head, and if
/// max_length < 1.
HorizonReport horizon(const HorizonSpec& spec);

/// The report as JSON with the keys `format g k C realization f_large n_max fail_query
/// fail_competitor gap delta_bound tie_distance` (numbers; null where not applicable) and
/// `schedule rounding summation blocks n_max_at_limit max_length offset gap_exact
/// delta_bound_at_limit tie_distance_at_limit heuristic tie_cap pm_ceiling C_source
/// candidates scores_evaluated fast_kernel algorithm candidate_offsets error_bound
/// offsets_scored binary32_kernel` (offsets_scored: the candidate offsets scored exactly at some
/// query, the others excluded by the per-query bounds of THEORY §6; null for the scan). Exact
/// values are JSON numbers with `KEY_exact` ("P/Q", numeric::put_exact) beside them where
/// binary64 cannot hold them: g (e.g. 0.1 with g_exact "1/10"), C, f_large, target_score,
/// competitor_score and each candidate's C (elements of F: only formats wider than fp64 need
/// it), smallest_passing_gap and error_bound (rationals); gap is the nearest binary64 with
/// gap_exact, the exact decimal, always beside it. heuristic, tie_cap, pm_ceiling are binary64
/// approximations by definition. Does not print.
nlohmann::json to_json(const HorizonReport& report);

}  // namespace ropesim::proofs
