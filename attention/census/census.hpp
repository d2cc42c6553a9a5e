#pragma once
/// The rotation census (THEORY §3, "component-periodic" and Prop 4.1): over positions
/// S..S+N-1 (S = 0 unless CensusOptions::start says otherwise), how many distinct realised
/// rotations R̂_i occur, how many positions the largest class of equal rotations holds, when
/// the first one repeats, and whether i ↦ R̂_i is periodic on that window — or, if not, a
/// witness position for every candidate period.
///
/// Realised rotations are compared by the bit patterns of their (cos, sin) entries in the
/// table format (numeric::Value::bits_key; every NaN equals every NaN). Memory stays a few
/// bytes a position, never O(N·D) (docs/PERFORMANCE.md, "Census memory"): blocks are streamed
/// one at a time, each block's (cos, sin) patterns are kept as exact per-position keys only
/// while that block is counted, and the whole rotation R̂_i is remembered as a 64-bit
/// fingerprint of all blocks' keys. Equal fingerprints are never trusted: every group of
/// positions with one fingerprint is re-realised block by block and compared bit for bit with
/// its first position, and a group that differs is split by the exact rotations; so no
/// "distinct" and no "repeat" is ever false. Work is split by positions (census threads); on
/// lines of at most 2^20 positions with at least two blocks a thread, by whole blocks instead,
/// each thread keeping its own block keys and partial fingerprints (a fingerprint is a sum of
/// per-block terms, so the split does not change it).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/budget.hpp"

namespace ropesim::attention {

/// The smallest census length N accepted: a census compares realised rotations, so it needs
/// two positions (with one, no pair is compared and no period 1..N-1 exists).
inline constexpr std::uint64_t kMinCensusPositions = 2;
/// The largest census length N accepted (2^31 positions).
inline constexpr std::uint64_t kMaxCensusPositions = std::uint64_t{1} << 31;
/// The largest last position S + N - 1 of a census (2^63 - 1, the range of --position).
inline constexpr std::uint64_t kMaxCensusLastPosition = (std::uint64_t{1} << 63) - 1;

/// Options of a census.
struct CensusOptions {
  /// N: positions S..S+N-1 are realised. Must be in kMinCensusPositions..kMaxCensusPositions.
  std::uint64_t positions = 65536;
  /// S: the first position of the window (0-based, BOS = 0). Every position the result
  /// reports (first repeat, witnesses, largest class, first overflow/NaN) is absolute, and
  /// periods and witnesses are about the window S..S+N-1 only: R̂_{i+P} = R̂_i is checked for
  /// S ≤ i < S+N-P. S + N - 1 must be ≤ kMaxCensusLastPosition.
  std::uint64_t start = 0;
  /// P_max: witnesses are sought for P = 1..P_max. Default (nullopt) N/2; must be in 1..N-1.
  std::optional<std::uint64_t> max_period;
  /// Worker threads (numeric::parallel_for) over tasks of consecutive positions, one rotary
  /// block after the other; results do not depend on it. ≥ 1.
  unsigned threads = 1;
  /// Multi-axis schedules (Schedule::position_axes): the axis a the window runs along, as an
  /// index into position_axes. The census then realises the tuples p = at + (i - at_a)·e_a
  /// for i = S..S+N-1 (p_a = i, the other coordinates fixed at `at`), and every position it
  /// reports (periods, witnesses, first repeat) is that coordinate i. Unset: the diagonal
  /// (i, ..., i), which is what a scalar position means on a multi-axis schedule (for a
  /// schedule whose blocks each read one axis, the same result as the one-axis census of
  /// its angles). Must be unset on a one-axis schedule.
  std::optional<std::size_t> axis;
  /// With `axis`: the fixed coordinates (k entries, entry `axis` ignored); empty = all 0.
  /// Must be empty without `axis`.
  PositionTuple at;
};

/// Positions with a flag (overflow or NaN in some block).
struct FlagSummary {
  std::uint64_t count = 0;             ///< positions flagged
  std::optional<std::uint64_t> first;  ///< smallest flagged position
};

/// The smallest j with R̂_j = R̂_i for some i < j (both in the census window), and that i.
struct FirstRepeat {
  std::uint64_t earlier = 0;  ///< i
  std::uint64_t later = 0;    ///< j
};

/// The most positions that share one realised rotation (a class of the equivalence
/// i ~ j ⟺ R̂_i = R̂_j on the census window).
struct LargestClass {
  std::uint64_t size = 0;  ///< how many positions the class holds (1: all distinct)
  /// The smallest position of the class; among classes of equal size, the one whose
  /// smallest position comes first.
  std::uint64_t position = 0;
};

/// Result of one census: schedule × realisation × window S..S+N-1.
struct CensusResult {
  std::string schedule;     ///< Schedule::spec
  std::string realisation;  ///< Realisation::name()
  Format format;            ///< the realisation's format (F, or activation A)
  Format table_format;      ///< the format of the compared (cos, sin) entries
  /// The rounding of every step (THEORY §2.1; the realisation's FormatBinding::rounding).
  numeric::Rounding rounding = numeric::Rounding::nearest_even;
  std::uint64_t positions = 0;  ///< N
  std::uint64_t start = 0;      ///< S
  /// Multi-axis schedules: the axis name the window ran along, or "diagonal"; empty on
  /// one-axis schedules.
  std::string axis;
  /// Multi-axis schedules: the fixed coordinates (entry of the window's axis set to 0; all 0
  /// for the diagonal); empty on one-axis schedules.
  PositionTuple at;

  /// Number of distinct R̂_i over S..S+N-1.
  std::uint64_t distinct_rotations = 0;
  /// The largest class of positions with one realised rotation. E.g. r2 at bf16 on
  /// single:g=1 over 65536..65792: bf16 has 8 significant bits, so its ulp on [2^16, 2^17) is
  /// 512 and î = round(i) is 65536 for i ≤ 65792 (65792 is the midpoint to 66048 and ties to
  /// the even significand 1.0000000·2^16); θ̂ = 1, so φ = 65536 at all 257 positions: one class
  /// of size 257 (from 65793 to 66303, î = 66048).
  LargestClass largest_class;
  /// Per block: number of distinct realised (cos, sin) pairs.
  std::vector<std::uint64_t> distinct_per_block;
  /// Per block: its smallest period P ≤ N/2 (R̂^(d)_{i+P} = R̂^(d)_i for all S ≤ i < S+N-P),
  /// if any (component periodicity, THEORY §3 Def 2.1, observed on S..S+N-1).
  std::vector<std::optional<std::uint64_t>> period_per_block;

  std::optional<FirstRepeat> first_repeat;
  /// The smallest P ≤ N/2 with R̂_{i+P} = R̂_i for all S ≤ i < S+N-P; nullopt = non-periodic
  /// on S..S+N-1 up to N/2.
  std::optional<std::uint64_t> period;
  /// P_max used for witnesses.
  std::uint64_t max_period = 0;
  /// witnesses[P-1] = the smallest i ≥ S with R̂_{i+P} ≠ R̂_i (i + P < S+N), for P = 1..P_max when
  /// non-periodic, for P = 1..period-1 when periodic; -1 when P has no witness (only possible
  /// for P > N/2). Together: the non-periodicity certificate of THEORY §3 Prop 4.1.
  std::vector<std::int64_t> witnesses;
  /// The largest witness (its P and i), if any witness exists.
  std::optional<std::uint64_t> largest_witness_period;
  std::optional<std::uint64_t> largest_witness_position;

  FlagSummary overflow;  ///< positions where some step overflowed (±inf or clamped)
  FlagSummary nan;       ///< positions where some step produced NaN

  /// Set (and everything above left empty) when the realisation does not apply to the
  /// schedule (sweep() only; census() throws instead).
  std::string not_applicable;
  /// Wall time of this census in seconds (sweep shares work across cells: then the time of
  /// the shared computation divided among the cells). Not part of the science.
  double seconds = 0;
  /// What the realisation fast path (numeric/trig/fast_trig.hpp; FastPathStats counts
  /// (position, evaluator group) evaluations) did for this census: the main pass (every
  /// position of the window in every block realised once, blocks reading an axis fixed at `at`
  /// and blocks mixing axes excepted: they do not go through the fast path), the verification
  /// of equal fingerprints (the chunks of 4096 positions that hold a class of ≥ 2 positions,
  /// again in every block) and the splitting of a class that failed it. Summed from per-task
  /// counters, so it does not depend on CensusOptions::threads. census_many evaluates its
  /// realisations together: every result of one call carries that call's totals.
  FastPathStats fast_path;
  /// The most bytes the census's per-position arrays held at once (fingerprints, one block's
  /// keys, the distinct-count tables, class ids, the z-function), over all realisations of
  /// one census_many call. Not part of the science; the memory test and bench read it
  /// (about 16 bytes a position at bf16, docs/PERFORMANCE.md).
  std::uint64_t working_bytes = 0;
};

/// Progress callback: (cells done, cells total, last cell). May be empty. Called from the
/// calling thread only.
using CensusProgress = std::function<void(std::size_t, std::size_t, const CensusResult&)>;

/// The census limits, checked once for every caller (census, census_many, the CLI's rotations
/// and sweep before they measure anything): N in 2..2^31, P_max (when set) in 1..N-1, the last
/// position S + N - 1 ≤ kMaxCensusLastPosition. Throws InvalidArgument with one line naming the
/// CLI's flag: "--positions: N must be at least 2, got 1", "--positions: N = 2147483649;
/// accepted: 2..2147483648", "--max-period: P_max must be in 1..N-1 = 1..9", "--start: the last
/// position S + N - 1 = … exceeds 2^63 - 1; accepted: S <= …".
void check_census_limits(std::uint64_t positions, std::uint64_t start,
                         std::optional<std::uint64_t> max_period);

/// Census of one schedule × realisation over positions S..S+N-1 (options.start, positions);
/// on a multi-axis schedule along options.axis with the others at options.at (or along the
/// diagonal). Along axis a the period found is the smallest m with R̂(p + m·e_a) = R̂(p)
/// over the window: for a schedule of exact turns realised by r1/r3, lcm over the blocks
/// that read a of m_{d,a}/gcd(a_{d,a}, m_{d,a}) (docs/variants/MULTI_AXIS.md, the period
/// lattice). Throws InvalidArgument for limits check_census_limits refuses, threads = 0, the axis
/// or `at` do not fit the schedule (naming its axes), or the realisation does not apply
/// (check_applicable).
CensusResult census(const Schedule& s, const Realisation& r, const CensusOptions& options);

/// The work of `cells` censuses of schedule `s` over options.positions positions, in
/// realised (position, block) pairs, for check_budget. The rate is the one-thread rate of the
/// exact path measured in bench_census (about 2·10^6 pairs/s; MPFR-heavy realisations are
/// slower); memory is O(N): CensusResult::working_bytes, at most 24 bytes a position per
/// realisation (16 for formats with ≤ 8 significant bits such as bf16, 20 for fp16/fp32), and
/// that much again for every further thread on lines of at most 2^20 positions (blocks in
/// lanes: census()).
WorkEstimate census_work(const Schedule& s, const CensusOptions& options, std::size_t cells = 1);

/// Census of one schedule under several realisations at once, sharing work (r1's
/// high-precision cos/sin across formats, a pipeline's fp32 table across activation
/// formats). Result k belongs to realisations[k]; identical to calling census() on each.
/// Throws like census().
std::vector<CensusResult> census_many(const Schedule& s,
                                      const std::vector<Realisation>& realisations,
                                      const CensusOptions& options);

/// A sweep grid: every schedule × realisation spec × format.
struct SweepGrid {
  std::vector<Schedule> schedules;
  std::vector<std::string> realisations;  ///< specs for parse_realisation
  std::vector<Format> formats;
  /// The rounding of every step of every realisation (THEORY §2.1; default nearest-even).
  numeric::Rounding rounding = numeric::Rounding::nearest_even;
  /// The arithmetic engine of every realisation (Realisation::engine; nullptr = default).
  const numeric::Engine* engine = nullptr;
};

/// The default sweep grid: the 10 model presets × r1 r2 hf × bf16 fp16 fp32 fp64.
SweepGrid default_sweep_grid();

/// Runs the grid; cells in order schedule-major, then realisation, then format: cell
/// (s, r, f) has index (s·|realisations| + r)·|formats| + f. Cells whose realisation does not
/// apply carry `not_applicable` instead of throwing. `selected` (if given) picks the cells to
/// run by index (one shard of a sweep run as several jobs); the others are skipped and left
/// out of the result, which keeps the grid order, and `progress` then counts selected cells.
/// A cell's result (but for its `seconds`) does not depend on which other cells run with it.
/// Deterministic: results do not depend on options.threads. Throws InvalidArgument for a bad
/// realisation spec or options.
std::vector<CensusResult> sweep(const SweepGrid& grid, const CensusOptions& options,
                                const CensusProgress& progress = {},
                                const std::function<bool(std::size_t cell)>& selected = {});

/// The result as JSON: the one census JSON of the library, the CLI (`ropesim rotations
/// --json`, docs/CLI.md) and the Python module. Keys: schedule, realization, format,
/// table_format, rounding, positions, start (only when S ≠ 0), axis and at (multi-axis
/// schedules only), then distinct, largest_class (its size), largest_class_position,
/// distinct_per_block, period_per_block, first_repeat ([earlier, later] or null), periodic,
/// period, max_period, max_witness and max_witness_period (the largest witness i and its P),
/// witnessed (how many P have a witness; null when periodic), witnesses (only with
/// `include_witnesses`: the P_max-long list, -1 where P has none), overflow_positions,
/// first_overflow, nan_positions, first_nan, and fast_path ({"evaluations", "fallbacks",
/// "exact_cases", "exact_only"}: CensusResult::fast_path); or not_applicable in place of the
/// results. Timing and memory (seconds, working_bytes) are not included.
nlohmann::json to_json(const CensusResult& result, bool include_witnesses = false);

/// The census counts under to_json(CensusResult)'s keys, written into `j`: distinct,
/// first_repeat ([earlier, later] or null), largest_class (its size), largest_class_position,
/// overflow_positions, first_overflow, nan_positions, first_nan (each first_* null when
/// none). to_json uses it, and so does every other result that reports a census
/// (proofs::DiagnoseReport's per-path census): one census JSON shape everywhere.
void put_census_counts(nlohmann::json& j, std::uint64_t distinct,
                       const std::optional<FirstRepeat>& first_repeat,
                       const LargestClass& largest_class, const FlagSummary& overflow,
                       const FlagSummary& nan);

namespace detail {

/// Test hook: the function giving block `block`'s term of a position's fingerprint from the
/// block's exact key (a position's fingerprint is the sum of its blocks' terms mod 2^64; bits
/// 0-1 of the sum are ignored). nullptr restores the default (splitmix64 mixing). A
/// deliberately weak one forces fingerprint collisions, which the census must detect and split
/// (tests/attention/test_census_memory.cpp). Not thread-safe against a running census.
using CensusFingerprint = std::uint64_t (*)(std::uint64_t key, std::size_t block);
void set_census_fingerprint_for_testing(CensusFingerprint fingerprint);
/// Test hook: false skips the exact verification of equal fingerprints (results may then be
/// wrong: this only exists to show that the verification is what keeps them exact).
void set_census_verification_for_testing(bool verify);

}  // namespace detail

}  // namespace ropesim::attention
