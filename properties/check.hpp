#pragma once
/// The theorems of THEORY §5 as RapidCheck properties, run by name (`ropesim check`, CI).
///
/// Each property generates its inputs (formats, formulas, words, schedules; generators.hpp)
/// from a fixed seed, checks one statement of the papers on the emulated F-transformer or on
/// realised rotations, and on failure returns RapidCheck's shrunk counterexample together with
/// a command line that replays it. The run is deterministic: the same options give the same
/// result bytes, whatever the machine.
#include <gmpxx.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "numeric/format.hpp"
#include "numeric/summation.hpp"

namespace ropesim::properties {

/// How the converse properties draw their formats (converse.hpp, ConverseSettings::draw).
enum class ConverseDraw {
  standard,   ///< the regime's formats (presets and random p, exponent widths)
  reachable,  ///< small formats (p 3–8, 3–4 exponent bits) whose n* lies within reach
};

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
  /// The hypotheses of the properties that draw models (PropertyInfo::draws_models; refused
  /// for the others): the summation of every sum (unset: exact, the theorem's regime) and the
  /// draw of formats (unset: standard). See properties/converse.hpp, ConverseSettings.
  std::optional<numeric::Summation> summation;
  std::optional<ConverseDraw> draw;
};

/// One property of the registry.
struct PropertyInfo {
  std::string name;       ///< the `--property` spelling, e.g. "periodic-r3"
  std::string source;     ///< e.g. "RoPE-X Def 2.1 / Prop 2.2 (THEORY §3, §5)"
  std::string statement;  ///< one line: what is checked
  /// The floating formats the property draws, as precisions min..max (bits incl. the hidden
  /// bit); {0, 0} for a property that uses no format. `--format` must be one of them.
  int min_precision = 4, max_precision = 53;
  /// True for the properties that draw whole models (nope-ltlp, rope-p-ltlpmod): the only ones
  /// that take CheckOptions::summation and ::draw.
  bool draws_models = false;
};

/// The distribution of n* and of the languages over a converse property's passed trials
/// (THEORY §5 "The converse as identities"; properties/converse.hpp).
struct ThresholdReport {
  std::string regime;      ///< the hypotheses the models were drawn under
  std::string decided_by;  ///< how each case was decided (analysis, or words run)
  int draws = 0;           ///< passed trials
  /// n* of every passed trial the analysis decided, ascending (none under pairwise/wide).
  std::vector<mpz_class> n_star;
  /// Accept/reject pattern on the 127 words of length ≤ 6 over {a, b} → number of draws.
  std::map<std::string, int> languages;
  int nontrivial = 0;  ///< draws that accept some and reject some of those words
  int computed = 0;    ///< draws checked on words actually run past n*
  /// n*'s lower median (the element at index (count − 1) / 2); requires n_star non-empty.
  [[nodiscard]] const mpz_class& median() const { return n_star[(n_star.size() - 1) / 2]; }
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
  /// For the properties that draw models: what their passed trials measured.
  std::optional<ThresholdReport> thresholds;
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

/// Refuses CheckOptions::summation / ::draw for a property that does not draw models, and the
/// combinations the converse properties cannot honour (`--draw reachable` with `--format`, or
/// with pairwise / wide-accumulator summation, which have no n*). Throws
/// ropesim::InvalidArgument with one line naming the option and what is accepted.
void check_hypotheses_usable(const PropertyInfo& info, const CheckOptions& options);

/// Runs the named property (a name from property_list()). Throws ropesim::InvalidArgument for
/// an unknown name (listing the names), trials/max_length/max_size < 1, a format the property
/// cannot use (check_format_usable), hypotheses it does not take (check_hypotheses_usable), or
/// a malformed replay token.
PropertyOutcome run_property(const std::string& name, const CheckOptions& options,
                             const CheckProgress& progress = {});

}  // namespace ropesim::properties
