#pragma once
/// The theorems of THEORY §5 as RapidCheck properties, run by name (`ropesim check`, CI).
///
/// Each property generates its inputs (formats, formulas, words, schedules; generators.hpp)
/// from a fixed seed, checks one statement of the papers on the emulated F-transformer or on
/// realised rotations, and on failure returns RapidCheck's shrunk counterexample together with
/// a command line that replays it. The run is deterministic: the same options give the same
/// result bytes, whatever the machine.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "numeric/format.hpp"

namespace ropesim::properties {

/// What a check run may use.
struct CheckOptions {
  /// Successful trials required per property (RapidCheck's max_success). ≥ 1.
  int trials = 100;
  /// RapidCheck's seed; the same seed gives the same inputs.
  std::uint64_t seed = 20261201;
  /// Longest generated word (positions 1..L); properties that scan lengths stop there. ≥ 1.
  std::uint64_t max_length = 1000;
  /// RapidCheck's max size (how large generated formulas/schedules may grow). ≥ 1.
  int max_size = 100;
  /// When set, every property that generates formats uses this one only.
  std::optional<numeric::Format> format;
  /// Replay one failing case: the token printed in a failure's replay command.
  std::string replay;
};

/// One property of the registry.
struct PropertyInfo {
  std::string name;       ///< the `--property` spelling, e.g. "periodic-r3"
  std::string source;     ///< e.g. "RoPE-X Def 2.1 / Prop 2.2 (THEORY §3, §5)"
  std::string statement;  ///< one line: what is checked
  /// The floating formats the property draws, as precisions min..max (bits incl. the hidden
  /// bit); {0, 0} for a property that uses no format. `--format` must be one of them.
  int min_precision = 4, max_precision = 53;
};

/// The outcome of one property.
struct PropertyOutcome {
  std::string name;
  int passed = 0;        ///< successful trials
  int discarded = 0;     ///< generated cases the property discarded (RC_PRE / RC_DISCARD)
  bool failed = false;   ///< a counterexample was found
  bool gave_up = false;  ///< too many generated cases were discarded
  /// For a failure: RapidCheck's description (the failed check) and the shrunk
  /// counterexample as "name: value" lines; for give-up/error: the reason.
  std::string description;
  std::vector<std::string> counterexample;
  /// For a failure: a `ropesim check ...` command line that reproduces exactly this shrunk case.
  std::string replay_command;
  double seconds = 0;  ///< wall-clock time of the run (the one field that varies between runs)
};

/// Progress: (property name, trials done, trials wanted). Called from the calling thread.
using CheckProgress = std::function<void(const std::string&, int, int)>;

/// The registered properties, in the order `--property all` runs them.
std::span<const PropertyInfo> property_list();

/// One line listing the property names (for errors and --help).
std::string property_names();

/// Refuses `format` for the property `info` when the property cannot use it: a fixed-point
/// format, or a floating one whose precision lies outside info's min..max (a theorem failure
/// on a format the property never draws would be a false alarm, not a counterexample).
/// Throws ropesim::InvalidArgument naming the property and the accepted formats.
void check_format_usable(const PropertyInfo& info, const numeric::Format& format);

/// Runs the named property (a name from property_list()). Throws ropesim::InvalidArgument for
/// an unknown name (listing the names), trials/max_length/max_size < 1, a format the property
/// cannot use (check_format_usable), or a malformed replay token.
PropertyOutcome run_property(const std::string& name, const CheckOptions& options,
                             const CheckProgress& progress = {});

}  // namespace ropesim::properties
