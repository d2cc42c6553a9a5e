#pragma once
/// Building a horizon spec from the text of its options: the validation that `ropesim horizon`,
/// `table horizon`, `plot horizon` and `construct offset` share, reachable without the CLI.
#include <cstdint>
#include <optional>
#include <string>

#include "proofs/range/horizon.hpp"

namespace ropesim::proofs {

/// The text of the options that describe one fixed-offset head Y^k (THEORY §6) and how its
/// certified range is measured, as a user spells them; defaults are the CLI's.
struct HorizonArguments {
  std::string g = "1";   ///< --g: the frequency g as an exact decimal; ignored when schedule is set
  std::string schedule;  ///< --schedule: a multi-frequency head (attention::parse_schedule)
  /// --axis: a multi-axis schedule's head along this axis, the others at 0
  /// (attention::along_axis); required for a multi-axis schedule.
  std::string axis;
  std::string k = "1";                    ///< --k: the offset k, an integer in [1, 10^6]
  std::string C = "auto";                 ///< --C: the scale C as an exact decimal, or "auto"
  std::string format = "fp32";            ///< --format: F (numeric::parse_format)
  std::string realisation = "r1";         ///< --realization: attention::parse_realisation
  std::string rounding = "nearest-even";  ///< --rounding
  std::string summation = "sequential";   ///< --summation
  std::string accumulator = "fp32";       ///< --accumulator
  std::string algorithm = "auto";         ///< --algorithm: auto, candidates or scan
  std::string engine = "auto";  ///< --engine: mpfr, fast or auto (same results, different speed)
  std::optional<std::uint64_t> max_length;  ///< --max-length: L_max; none: the quick default
  bool allow_slow = false;                  ///< --allow-slow: L_max beyond the quick limit
  /// Threads the range scan will use: only the estimate in a refusal of max_length depends on it.
  unsigned threads = 1;
};

/// Refuses a head named twice or by nothing: an empty `schedule` (a bad spec, refused as
/// attention::parse_schedule refuses it: "--schedule: ..."), or a schedule given with
/// `g_given` ("--g: give either --g (one frequency) or --schedule (several), not both").
/// `schedule`: the --schedule text when given. Used by `ropesim horizon` and ropesim.horizon.
void check_head_source(bool g_given, const std::optional<std::string>& schedule);

/// The HorizonSpec that `a` describes, validated. Checks, in order: engine, rounding,
/// summation, accumulator, format, g / schedule (g > 0; a schedule with rotary blocks, and
/// axis exactly when it has tuple positions), k ∈ [1, 10^6], the realisation (known and
/// applicable to the schedule), f_large(F) defined under the rounding (THEORY §1), C (auto
/// or a positive decimal finite in F), the algorithm (auto|candidates|scan; candidates only
/// where it applies), max_length within the algorithm's quick limit unless allow_slow
/// (fast_range_length_limit for the candidate algorithm, scan_length_limit for the scan;
/// horizon_max_length; its estimate kept in HorizonSpec::estimate), a schedule of at most
/// kHorizonQuickBlocks rotary blocks unless allow_slow. Throws InvalidArgument with one line that
/// starts with the option's name as the CLI spells it ("--format: ...", "--C: C must be positive
/// (or 'auto'), got 0").
HorizonSpec horizon_spec(const HorizonArguments& a);

/// Refuses a schedule (spelled `schedule`) of more than kHorizonQuickBlocks rotary blocks unless
/// `allow_slow`: the certified range's setup (exact angles, error analysis, one probe per C) is
/// linear in the blocks and takes minutes beyond them. Throws InvalidArgument with one line:
/// "--schedule: '…' has B rotary blocks, beyond the quick limit of 4096 (…); pass --allow-slow
/// to run it anyway". Used by horizon (horizon_spec) and compile (its Y^k heads' ranges).
void check_head_blocks(const std::string& schedule, std::size_t blocks, bool allow_slow);

}  // namespace ropesim::proofs
