#pragma once
// Shared by `ropesim experiment length` and `ropesim plot length`: the options of the
// accuracy-against-length experiment (proofs/length_experiment.hpp) and its table.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "proofs/length_experiment.hpp"

namespace ropesim::cli {

/// The experiment's flags as given.
struct LengthArguments {
  std::string formula, alphabet = "ab", lengths = "1..64", rounding = "nearest-even";
  /// Empty: single:g=1 for the Y^k heads and each MOD atom's own periodic table (as `compile`
  /// without --schedule).
  std::vector<std::string> schedules, formats{"fp16"};
  std::uint64_t words = 40, seed = 1, adversarial = 2;
  bool allow_slow = false;
  ProgressChoice progress = ProgressChoice::automatic;
};

/// Adds FORMULA, --alphabet, --schedule (repeatable), --format (repeatable), --rounding,
/// --lengths, --words, --adversarial, --seed, --progress/--no-progress, --allow-slow.
void add_length_options(CLI::App* cmd, LengthArguments& a);

/// Validates the flags (each error names its flag) and checks the work budget (--lengths,
/// lifted by --allow-slow). Lengths: a list `8,16,32`, a range `A..B`, or both; ascending,
/// each once, in 1..10^6.
proofs::LengthExperimentSpec length_spec(const LengthArguments& a);

/// Runs the experiment with the shared progress display (cli/progress.hpp).
std::vector<proofs::LengthSeries> run_length_experiment(const proofs::LengthExperimentSpec& spec,
                                                        const LengthArguments& a);

/// One row per (schedule, format, length): schedule, format, length, accuracy, correct, words,
/// certified_length (null: exact at every length).
Table length_table(const std::vector<proofs::LengthSeries>& series);

}  // namespace ropesim::cli
