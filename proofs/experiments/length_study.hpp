#pragma once
/// The accuracy-against-length experiment as the user asks for it (`ropesim experiment
/// length`, `plot length`, ropesim.experiment_length in Python): its text options read into a
/// LengthExperimentSpec, the run with the CLI's error messages, and the rows and JSON report
/// (proofs/experiments/length_experiment.hpp computes; this reads and reports).
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proofs/experiments/length_experiment.hpp"

namespace ropesim::proofs {

/// The experiment's options as the user spells them (the flags of `experiment length`).
struct LengthArguments {
  std::string formula, alphabet = "ab", lengths = "1..64", rounding = "nearest-even";
  /// Empty: single:g=1 for the Y^k heads and each MOD atom's own periodic table (as `compile`
  /// without --schedule).
  std::vector<std::string> schedules, formats{"fp16"};
  std::uint64_t words = 20, seed = 1, adversarial = 2;
  bool allow_slow = false;
};

/// Word lengths as `--lengths` spells them: a list "8,16,32", a range "A..B", or both
/// ("1..20,40,80"); ascending, each once, each in 1..10^6, at most 10^5 of them. Throws
/// InvalidArgument with one line starting "--lengths: ". Shared with `analyse heads`.
std::vector<std::uint64_t> parse_lengths(const std::string& text);

/// Validates `a` (each error one line naming its flag) and checks the work budget (--lengths,
/// lifted by allow_slow). Alphabet: lowercase letters, each once. Schedules: one position
/// axis, a rotary block, each once; formats each once. Lengths: a list `8,16,32`, a range
/// `A..B`, or both; ascending, each once, in 1..10^6, at most 10^5 of them. --words in
/// 1..100000, --adversarial in 0..10000.
LengthExperimentSpec length_spec(const LengthArguments& a);

/// Refuses, with BudgetExceeded naming --lengths and the estimate, a run of `spec` whose
/// length_experiment_work exceeds the budget (10 min, 8 GiB), unless `allow_slow`: the last
/// check of length_spec, and the budget of one shard of the lengths (ropesim.dask, which counts
/// each shard's lengths alone, as --shard counts a sweep's rows).
void check_length_budget(const LengthExperimentSpec& spec, bool allow_slow);

/// length_experiment(spec, progress) with its refusals named as the CLI names them: the
/// path-count table's limit as "--lengths: ...", a formula that does not compile as
/// "formula: ...".
std::vector<LengthSeries> run_length_spec(
    const LengthExperimentSpec& spec,
    const std::function<void(std::size_t, std::size_t)>& progress = {});

/// The columns of the rows, in order: schedule, format, length, balanced_accuracy,
/// accuracy_members, accuracy_nonmembers (null: that side is empty at this length), accuracy
/// (every word tried), members_right, members, nonmembers_right, nonmembers, aliasing_right,
/// aliasing_words, correct, words (all words tried), members_empty, nonmembers_empty,
/// members_exhaustive, nonmembers_exhaustive, certified_length (null: exact at every length).
/// Rates are rounded to 6 decimals.
const std::vector<std::string>& length_columns();

/// A series' certified length as the text views print it: "unbounded" (exact at every length),
/// "N", or "N (the checks' limit: no failure found)" when certified_length_at_limit.
std::string certified_length_text(const LengthSeries& series);

/// One row of cells (length_columns() order) per (schedule, format, length).
std::vector<std::vector<nlohmann::json>> length_rows(const std::vector<LengthSeries>& series);

/// What `ropesim experiment length --json` prints: formula, alphabet (as `a` spells them),
/// words, seed, adversarial, series (schedule, format, certified_length, longest_all_right,
/// mod_atoms, refused) and rows (objects keyed by length_columns()).
nlohmann::json length_json(const LengthArguments& a, const LengthExperimentSpec& spec,
                           const std::vector<LengthSeries>& series);

}  // namespace ropesim::proofs
