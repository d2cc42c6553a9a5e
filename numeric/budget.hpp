#pragma once
/// Resource budgets: what a computation is estimated to cost before it starts, and the
/// default limit beyond which ropesim refuses to start it without the user's opt-in.
///
/// Every command that can run for long or allocate much (the certified-range scan, the
/// offset-simulation check, model runs, censuses) estimates its work from the arguments and
/// calls `check_budget` first, so that an impossible request gets one line with the estimate
/// (exit 2 in the CLI) instead of hours without a word, a bad_alloc or an OOM kill.
#include <cstdint>
#include <string>

#include "numeric/error.hpp"

namespace ropesim {

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

/// Throws InvalidArgument, with `flag` in front and the estimate in the message, when the
/// estimate exceeds the budget (unless budget.unlimited; memory beyond 2^50 bytes is refused
/// even then). `opt_in` names what lifts the limit (e.g. "--allow-slow").
void check_budget(const std::string& flag, const WorkEstimate& estimate, const Budget& budget,
                  const std::string& opt_in = "--allow-slow");

/// "3.2 s", "4.1 min", "2.5 h", "3.1 days", "1.2e+03 years": a duration for messages.
std::string duration_text(double seconds);

}  // namespace ropesim
