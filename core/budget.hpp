#pragma once
/// Resource budgets: what a computation is estimated to cost before it starts, and the
/// default limit beyond which ropesim refuses to start it without the user's opt-in.
///
/// Every command that can run for long or allocate much (the certified-range scan, the
/// offset-simulation check, model runs, censuses) estimates its work from the arguments and
/// calls `check_budget` first, so that an impossible request gets one line with the estimate
/// (exit 2 in the CLI) instead of hours without a word, a bad_alloc or an OOM kill.
///
/// This file is the one home of the limits that are about resources rather than meaning: the
/// default time and memory budget, the largest input file, the largest MOD modulus built. A
/// command that needs a new limit adds it here (named, documented, with its reason) and refuses
/// with BudgetExceeded, so the limits can be found and compared in one place.
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace ropesim {

/// A refusal because of the estimated cost (time, memory, size of a file), not because of what
/// the input means. An InvalidArgument (one line, exit 2 in the CLI) that callers can tell
/// apart: e.g. the formula compiler does not retry a budget refusal in other formats.
class BudgetExceeded : public InvalidArgument {
 public:
  explicit BudgetExceeded(const std::string& message) : InvalidArgument(message) {}
};

/// The largest file ropesim reads as input (model specs, DFA files, tables to merge): 64 MiB.
/// A command that writes a file which another command reads back (compile, construct) refuses
/// to write a larger one, so that it never writes a file `ropesim run` would refuse. 64 MiB is
/// far above every model ropesim constructs for a practical formula (tens of kB) and well below
/// what a 2-core reference machine parses in a few seconds (a parsed spec takes about 10× its
/// size in memory).
/// io::read_input_file's default budget (io/files.hpp) is this constant.
inline constexpr std::uint64_t kMaxInputFileBytes = std::uint64_t{64} << 20;

/// The most numbers (matrix and vector entries) a model spec may hold when `ropesim run` loads
/// it without --allow-large (attention::ModelLoadOptions::max_parameters): 2^24, a few hundred
/// MiB once parsed. `compile` refuses to build a model beyond it.
inline constexpr std::uint64_t kMaxModelNumbers = std::uint64_t{1} << 24;

/// The largest modulus m of a MOD_m^r atom that ropesim builds (`construct mod --m`, `compile
/// 'mod(m,r)'`): the head's periodic table and its margin check hold one entry per residue
/// (0..m-1), and C = auto repeats the check for every candidate C. 10^4 residues take well
/// under a second; mod(2^64-1, 0) would need 1.8e19 table entries.
inline constexpr std::uint64_t kMaxModulus = 10000;

/// The most memory the exact path-count table of automata::WordCounts may take (the balanced
/// words of `experiment length`): 1 GiB, about 10 states × lengths 0..39000 over two letters.
/// The lengths `experiment length` runs in practice (≤ 10^3) take under 10 MiB for the small
/// minimal DFAs of the zoo; the experiment's attention work is refused long before this.
inline constexpr double kMaxWordCountBytes = 1024.0 * 1024 * 1024;

/// An estimate of the work a computation will do.
struct WorkEstimate {
  std::string what;  ///< what is counted, e.g. "transformer positions", "realised scores"
  double units = 0;  ///< how many of them (a double: estimates may exceed 2^64)
  double units_per_second = 1e7;  ///< the measured rate on the reference machine (2 cores)
  double bytes = 0;               ///< peak memory beyond the inputs
};

/// The limits a computation may use without an explicit opt-in.
struct Budget {
  double seconds = 600;                     ///< estimated wall time on one core
  double bytes = 8.0 * 1024 * 1024 * 1024;  ///< estimated peak memory (8 GiB)
  bool unlimited = false;                   ///< the user opted in (e.g. --allow-slow)
};

/// Throws BudgetExceeded, with `flag` in front and the estimate in the message, when the
/// estimate exceeds the budget (unless budget.unlimited; memory beyond 2^50 bytes is refused
/// even then). `opt_in` names what lifts the limit (e.g. "--allow-slow").
void check_budget(const std::string& flag, const WorkEstimate& estimate, const Budget& budget,
                  const std::string& opt_in = "--allow-slow");

/// "512 bytes", "3.5 KiB", "64 MiB", "2.1 GiB", "1.8e+19 bytes": a size for messages.
std::string size_text(double bytes);

/// "3.2 s", "4.1 min", "2.5 h", "3.1 days", "1.2e+03 years": a duration for messages.
std::string duration_text(double seconds);

}  // namespace ropesim
