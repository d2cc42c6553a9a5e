#pragma once
/// `ropesim check` and ropesim.check (Python) as one study: the options' text read into the
/// properties to run (properties/check.hpp), and each property's outcome as JSON.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "properties/check.hpp"

namespace ropesim::properties {

/// The options of a check as the user gives them (the flags of `ropesim check`; an optional
/// is set when its flag is given).
struct CheckArguments {
  std::string property = "all";     ///< --property: all or one name of property_list()
  int trials = 100;                 ///< --trials: 1..10^8
  std::uint64_t seed = 20261201;    ///< --seed
  std::uint64_t max_length = 1000;  ///< --max-length: 1..10^8
  int max_size = 100;               ///< --max-size: 1..10^5
  std::optional<std::string> format, summation, draw, replay;
};

/// The properties to run, in order, and the options they run with.
struct CheckRequest {
  std::vector<std::string> names;
  CheckOptions options;
};

/// `a` validated, every property it names checked to accept the options before any runs:
/// an empty --replay, the ranges of --trials, --max-length and --max-size, --format,
/// --summation, --draw (standard or reachable), --property (all, or a known name, with a
/// did-you-mean), --replay or --summation/--draw with --property all. Throws InvalidArgument
/// with one line naming the option.
CheckRequest check_request(const CheckArguments& a);

/// The property `name`'s outcome as `ropesim check --json` lists it: property, source (the
/// registry's), passed, discarded, failed (0 or 1), gave_up, description, counterexample,
/// replay; "seconds" (rounded to ms) when `timings`; "thresholds" for the properties that draw
/// models (regime, decided_by, draws, n_star {count, min, median, max with KEY_exact beyond
/// binary64 and KEY_log10}, nontrivial, nontrivial_fraction, accept_all, accept_none,
/// distinct_languages, checked_by_computation).
nlohmann::json to_json(const PropertyOutcome& outcome, bool timings);

/// The whole run as `ropesim check --json` prints it: {"properties": [...], "passed": the
/// properties that passed, "failed": the others (a failure or a give-up)}.
nlohmann::json check_json(const std::vector<PropertyOutcome>& outcomes, bool timings);

/// True when the outcome counts as passed (no counterexample, not given up).
bool passed(const PropertyOutcome& outcome);

}  // namespace ropesim::properties
