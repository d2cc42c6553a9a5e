#pragma once
// Shared by `ropesim experiment length` and `ropesim plot length`: the options of the
// accuracy-against-length experiment (proofs/experiments/length_experiment.hpp) and its table.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "proofs/experiments/length_experiment.hpp"
#include "proofs/experiments/length_study.hpp"

namespace ropesim::cli {

/// The experiment's flags as given (proofs::LengthArguments) and the progress choice.
struct LengthArguments : proofs::LengthArguments {
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

/// One row per (schedule, format, length): schedule, format, length, balanced_accuracy,
/// accuracy_members, accuracy_nonmembers (null: that side is empty at this length), accuracy
/// (every word tried), members_right, members, nonmembers_right, nonmembers, aliasing_right,
/// aliasing_words, correct, words (all words tried), members_empty, nonmembers_empty,
/// members_exhaustive, nonmembers_exhaustive, certified_length (null: exact at every length).
Table length_table(const std::vector<proofs::LengthSeries>& series);

/// The lines saying at which lengths a side is empty ("no member of the language at length
/// 1,3,5 ..."), or "" when both sides have words at every length.
std::string length_side_note(const std::vector<proofs::LengthSeries>& series);

}  // namespace ropesim::cli
