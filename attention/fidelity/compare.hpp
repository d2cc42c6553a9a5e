#pragma once
/// Measuring the damage of a realisation (THEORY §3; NUMERIC §3–4): two realisations of one
/// schedule, or one realisation against the exact rotation R_i = blockdiag(Rot(θ_d·i)),
/// compared entry by entry over positions S..S+N-1 × a set of blocks.
///
/// For every (position i, block d) the realised (cos, sin) of realisation A is compared with
/// the reference: realisation B's realised (cos, sin), or cos θ_d·i and sin θ_d·i computed by
/// ExactBlockRotation far beyond a double. Reported per block and overall: the largest
/// absolute and relative error of cos and of sin, of the angle where both sides form one
/// (r2's φ and a pipeline's `angle` step; against exact the exact angle θ_d·i, or 2π·(i mod
/// λ_d)/λ_d for a tabulated block of resonance-table, whose angle is that of entry i mod λ_d; r1
/// and r3 form no angle), the largest error in ulps of A's table format, how many entries differ,
/// and where every maximum is (position, block). The GPT-NeoX #1003 table (NUMERIC §4) is
/// `compare` of r2 at fp16 against the exact rotation.
#include <mpfr.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attention/census/realised_table.hpp"
#include "attention/fidelity/compare_fast.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/budget.hpp"

namespace ropesim::attention {

/// The largest N of a comparison (2^31 positions, as the census).
inline constexpr std::uint64_t kMaxComparePositions = std::uint64_t{1} << 31;
/// The largest last position S + N - 1 of a comparison (2^63 - 1, as rotations --position).
inline constexpr std::uint64_t kMaxCompareLastPosition = (std::uint64_t{1} << 63) - 1;

/// cos θi, sin θi and θi of one rotary block at any position i, accurate far beyond a
/// double: every result is within 2^-150 of the exact real (absolute; the angle relative
/// to its magnitude). This is the reference of query_position (realisation.hpp), made fast
/// for many positions: θ is enclosed once (numeric::AngleEnclosure, refined as i grows) and
/// θ·i is formed at 200 + bits(i) + exponent(θ) bits before MPFR's correctly rounded sin_cos.
/// Rational blocks θ = 2πa/m are reduced exactly (r = a·i mod m, then cospi/sinpi of 2r/m),
/// and their rational values (cos, sin ∈ {0, ±1/2, ±1}: Niven's theorem, angles kπ/6) are set
/// exactly, so that sin 2π·i is exactly 0 and an exactly realised entry has error 0.
class ExactBlockRotation {
 public:
  /// Precision in bits of the results (angle, cos, sin).
  static constexpr mpfr_prec_t kPrecision = 192;
  explicit ExactBlockRotation(const RotaryBlock& block);
  ~ExactBlockRotation();
  ExactBlockRotation(const ExactBlockRotation&) = delete;
  ExactBlockRotation& operator=(const ExactBlockRotation&) = delete;
  /// Sets angle, cos, sin (any precisions; rounded to nearest into them) to θ·i, cos θ·i,
  /// sin θ·i.
  void at(std::uint64_t i, mpfr_ptr angle, mpfr_ptr cos, mpfr_ptr sin);
  /// The fast path of at() (compare()'s binary64 error arithmetic, compare_fast.hpp): θ·i,
  /// cos θ·i and sin θ·i as double-doubles (numeric::dd_mul_uint, numeric::dd_cos_sin), each
  /// with a bound on its distance from the real and from at()'s value. False (nothing set)
  /// where there is none: rational blocks, i = 0, θ·i ≥ 2^28.
  bool enclose(std::uint64_t i, detail::EnclosedReference& angle, detail::EnclosedReference& cos,
               detail::EnclosedReference& sin) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Options of a comparison.
struct CompareOptions {
  std::uint64_t start = 0;      ///< S: the first position (0-based, BOS = 0)
  std::uint64_t positions = 1;  ///< N ≥ 1: positions S..S+N-1
  /// 0-based block indices (each < the schedule's block count, each once); empty = all.
  std::vector<std::size_t> blocks;
  /// Whether the per-entry error arithmetic may take its binary64 fast path
  /// (compare_fast.hpp: the same results, MPFR where the fast path cannot decide); false:
  /// MPFR for every entry (the tests compare the two).
  bool fast_arithmetic = true;
  /// Whether A's entries are realised kBatch positions at a time on the realisations' batched
  /// fast path (BlockEvaluator::evaluate_with_angles: the same values and angle steps as one
  /// entry at a time, which the exact path gives where the fast path does not decide); false:
  /// entry by entry (the tests compare the two).
  bool batch_realisation = true;
};

/// One maximum: its value and where it is first attained (smallest position, then block).
struct ErrorMaximum {
  double value = 0;  ///< ≥ 0; +inf for a relative error against an exact 0
  std::uint64_t position = 0;
  std::size_t block = 0;
  bool seen = false;  ///< false: no entry contributed (value 0)
};

/// Merges the maximum `m` into `into` (the one merge of maxima: compare's blocks into its
/// overall statistics, diagnose's bands into a path's): a strictly larger value wins; on a
/// tie the smaller position, then the smaller block, wins, so the result is the first place
/// where the larger value is attained. An unseen `m` changes nothing.
void merge(ErrorMaximum& into, const ErrorMaximum& m);

/// A maximum as JSON: {"value" (the string "inf" when infinite), "position", "block"
/// (both null when no entry contributed)}. Does not print.
nlohmann::json to_json(const ErrorMaximum& m);

/// Largest |realised - reference| and |realised - reference| / |reference| of one quantity.
/// The relative error is 0 where both are 0 and +inf where only the reference is 0.
struct ErrorPair {
  ErrorMaximum absolute;
  ErrorMaximum relative;
};

/// The statistics of a set of (position, block) entries.
struct CompareStats {
  ErrorPair cos, sin;
  /// The angle's errors; nullopt where a side forms no angle (r1, r3; dropped θ = 0 blocks of
  /// a pipeline), reported "n/a".
  std::optional<ErrorPair> angle;
  /// Largest |realised - reference| / ulp_T(round_T(reference)) over cos and sin, T = A's
  /// table format (numeric::ulp_exponent; round to nearest-even).
  ErrorMaximum ulps;
  std::uint64_t entries = 0;  ///< (position, block) entries compared
  /// Entries whose (cos, sin) differ: by bit pattern against B (numeric::Value::same_bits),
  /// by value against the exact rotation (a non-zero error in cos or sin).
  std::uint64_t differing = 0;
  /// Entries where a side's cos or sin is ±inf or NaN (overflow, cos(inf)): counted here
  /// (and as differing unless the bit patterns agree) and left out of the maxima.
  std::uint64_t nonfinite = 0;
  std::optional<std::uint64_t> first_nonfinite;  ///< its smallest position
};

/// One block's statistics.
struct BlockComparison {
  std::size_t block = 0;
  CompareStats stats;
};

/// The attention factor s of a schedule (Schedule::attention_scaling: YaRN's mscale, longrope's
/// factor) as it enters a comparison. Hugging Face multiplies cos and sin by s
/// (`cos = emb.cos() * self.attention_scaling`, transformers' `_compute_yarn_parameters` and
/// `_compute_longrope_parameters` return it as `attention_factor`), so a framework pipeline's
/// realised (cos, sin) is s·(cos θi, sin θi) rounded, and |cos| may exceed 1. compare() puts
/// the reference in A's convention: the exact reference is s·(cos θi, sin θi) when A carries
/// s, and B's realised pair is multiplied by s_A/s_B (s_X = s when X carries it, else 1).
/// Errors (absolute, relative, ulps) then measure rounding only, never s − 1.
struct CompareAttentionFactor {
  mpq_class value;           ///< s, exactly (the binary64 value transformers computes)
  std::string expression;    ///< its exact expression, e.g. "0.1*ln(4)+1" (reports only)
  bool realisation = false;  ///< A's realised cos and sin carry s
  bool against = false;      ///< B's carry s (false against the exact rotation)
};

/// Whether realisation `r` multiplies cos and sin by the schedule's attention factor: a
/// framework pipeline (its attention_scaling step, realisation.hpp) on a schedule that has
/// one (Schedule::attention_scaling set). r1, r2 and r3 realise the rotation alone.
bool carries_attention_factor(const Schedule& s, const Realisation& r);

/// The result of compare(): per block (in the order asked) and overall.
struct CompareResult {
  std::string schedule;                        ///< Schedule::spec
  std::string realisation;                     ///< A's name()
  std::string against;                         ///< B's name(), or "exact"
  Format table_format;                         ///< A's table format (ulps are of this format)
  std::optional<Format> against_table_format;  ///< B's (unset against exact)
  std::uint64_t start = 0;                     ///< S
  std::uint64_t positions = 0;                 ///< N
  /// The schedule's attention factor when A or B carries it (the reference then carries it
  /// as A does: CompareAttentionFactor); unset when neither side does.
  std::optional<CompareAttentionFactor> attention_factor;
  std::vector<BlockComparison> blocks;
  CompareStats overall;
};

/// The realised values of one realisation over positions S..S+N-1, every block of the
/// schedule, as compare() realises them: (cos, sin) in the table format and the angle step
/// (BlockReport::steps "angle" / "phi") where the entry forms one, each held exactly in a
/// binary64 (the formats must fit a double: check_table_fits_double, and a narrow angle
/// format). compare() fills the entries of its window and blocks (CompareValues::record) and
/// can read its B side from them instead of realising B again (CompareValues::against):
/// `ropesim diagnose` realises each path once and hands the same values to its comparisons,
/// its census (census_of_table) and its score check. Row-major N × B: entry (i, d) is index
/// (i - S)·B + d. Memory: 27 bytes an entry.
struct RealisedValues {
  RealisedValues() = default;
  /// Room for positions S..S+N-1 and `blocks` blocks, nothing filled.
  RealisedValues(std::uint64_t start, std::uint64_t positions, std::size_t blocks);
  /// The same as a new RealisedValues(start, positions, blocks), keeping the vectors' memory
  /// (a path's table is 27 bytes an entry: fresh pages for every path cost more in page
  /// faults and zeroing than filling them). Only `filled` is cleared: an entry's other
  /// values are meaningful once compare() has filled it.
  void reset(std::uint64_t start, std::uint64_t positions, std::size_t blocks);
  /// The realised (cos, sin) (RealisedPair::cos, sin) and, once finish() has run, per
  /// position the OR of its blocks' flags: then realised_table() of the same realisation
  /// over the same window, bit for bit.
  RealisedTable table;
  std::vector<double> angle;              ///< the angle step where has_angle (else 0)
  std::vector<std::uint8_t> entry_flags;  ///< RealisedPair::flags (numeric::Flags bits)
  std::vector<std::uint8_t> has_angle;    ///< 1: the entry formed an angle step
  std::vector<std::uint8_t> filled;       ///< 1: compare() wrote the entry
  /// The index of entry (position i, block d), or std::logic_error when (i, d) is outside.
  std::size_t index(std::uint64_t i, std::size_t d) const;
  /// Whether every entry has been filled.
  bool complete() const;
  /// Sets table.flags from entry_flags. Throws std::logic_error unless complete().
  void finish();
};

/// What compare() shares with other comparisons of the same realisations.
struct CompareValues {
  /// When set, A's realised values at every compared entry are written here (its window must
  /// hold the comparison's; entries of other blocks or positions are left alone, so calls on
  /// disjoint blocks or positions may fill one RealisedValues concurrently). A value that a
  /// double cannot hold exactly is a std::logic_error.
  RealisedValues* record = nullptr;
  /// When set, B's realised values are read from here (filled by compare() of the
  /// realisation `against` over these entries) instead of being realised again; the results
  /// are the same bit for bit. An entry not filled is a std::logic_error.
  const RealisedValues* against = nullptr;
};

/// Census facts of a realised table (the equivalence i ~ j ⟺ every block's (cos, sin) has the
/// same bit pattern, Value::bits_key: one key for every NaN, +0 ≠ -0, and the positions'
/// overflow and NaN flags agree — the classes census() counts).
struct TableCensus {
  std::uint64_t distinct = 0;  ///< CensusResult::distinct_rotations
  std::optional<std::uint64_t> first_repeat_earlier, first_repeat_later;  ///< FirstRepeat
  std::uint64_t largest_class_size = 0, largest_class_position = 0;       ///< LargestClass
  std::uint64_t overflow_count = 0, nan_count = 0;                        ///< FlagSummary
  std::optional<std::uint64_t> first_overflow, first_nan;
};

/// census()'s distinct rotations, first repeat, largest class and overflow/NaN positions of
/// the positions of `table` (absolute: table.start + row), computed from the table itself by
/// hashing its rows (collisions resolved by comparing the rows): no realisation. Equal to
/// census() of the same realisation over the same window (tests/attention/test_compare.cpp).
/// Throws nothing but std::bad_alloc; O(N·B) time, O(N) memory beside the table.
TableCensus census_of_table(const RealisedTable& table);

/// Compares realisation `a` with `against` (nullopt = the exact rotation) on schedule `s` over
/// options.positions positions from options.start and options.blocks, like with like: when a
/// side carries the schedule's attention factor s (carries_attention_factor), the reference is
/// scaled into A's convention (CompareAttentionFactor), so the errors are rounding errors.
/// Entries "differ" against B by bit pattern when both sides carry s alike, else by value.
/// `progress`, when set, is called after each block with (entries done, entries in all).
/// Cost: one realised
/// pair per side per entry, plus one 192-bit sin_cos per entry against exact.
/// Throws InvalidArgument for N = 0 or N > kMaxComparePositions, S + N - 1 >
/// kMaxCompareLastPosition, a block index out of range or repeated, or a realisation that
/// does not apply (check_applicable).
/// `values` (optional) records A's realised values and/or supplies B's (CompareValues).
CompareResult compare(const Schedule& s, const Realisation& a,
                      const std::optional<Realisation>& against, const CompareOptions& options,
                      const std::function<void(std::uint64_t, std::uint64_t)>& progress = {},
                      const CompareValues& values = {});

/// The work of compare(), in compared (position, block) entries, for check_budget: rates
/// measured on this machine kind, one thread (about 4·10^5 entries/s against a realisation,
/// 10^5 against exact). Memory O(blocks).
WorkEstimate compare_work(const Schedule& s, const CompareOptions& options, bool against_exact);

/// The result as JSON: {"schedule", "realization", "against", "table_format",
/// "against_table_format" (null against exact), "start", "positions", "attention_factor"
/// (null, or {"value": s as a JSON number (numeric::put_exact; s is a binary64, so no
/// "value_exact"), "decimal": its 17-digit decimal, "expression", "realization": bool,
/// "against": bool}), "blocks": [{"block",
/// "cos", "sin", "angle", "ulps", "entries", "differing", "nonfinite", "first_nonfinite"}],
/// "overall": {...}}; "cos"/"sin"/"angle" are {"absolute": M, "relative": M} with M =
/// {"value", "position", "block"} ("value" is the string "inf" when infinite; "angle" is null
/// when n/a). Does not print.
nlohmann::json to_json(const CompareResult& result);

}  // namespace ropesim::attention
