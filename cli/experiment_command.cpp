// `ropesim experiment length`: accuracy against length per schedule × format
// (proofs/experiments/length_experiment.hpp). Parsing and printing only.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attention/schedules/schedule.hpp"
#include "cli/commands.hpp"
#include "cli/experiment_common.hpp"
#include "cli/table.hpp"
#include "core/budget.hpp"
#include "core/error.hpp"
#include "logic/formula.hpp"
#include "numeric/exact.hpp"
#include "numeric/format.hpp"
#include "proofs/experiments/length_experiment.hpp"
#include "proofs/experiments/length_study.hpp"

namespace ropesim::cli {

Table length_table(const std::vector<proofs::LengthSeries>& series) {
  Table t;
  t.columns = proofs::length_columns();
  t.rows = proofs::length_rows(series);
  return t;
}

void add_length_options(CLI::App* cmd, LengthArguments& a) {
  cmd->add_option("formula", a.formula, "The formula, e.g. 'Y a' or 'mod(2,0) & P a'")->required();
  cmd->add_option("--alphabet", a.alphabet, "Letters of the words (default ab)")
      ->capture_default_str();
  cmd->add_option("--schedule", a.schedules,
                  "Schedule of every rotary head (Y^k heads, MOD atoms: C4' bounded under a "
                  "non-periodic schedule); repeat for several (default: single:g=1 for the Y^k "
                  "heads, each MOD atom's own periodic table)");
  cmd->add_option("--format", a.formats, "Number format F; repeat for several (default fp16)")
      ->capture_default_str();
  cmd->add_option("--rounding", a.rounding, "Rounding of every operation")->capture_default_str();
  cmd->add_option("--lengths", a.lengths, "Word lengths: a list 8,16,32, a range A..B, or both")
      ->capture_default_str();
  add_integer_option(cmd, "--words", a.words,
                     "Members and non-members per length: N of each, drawn uniformly (default 20)",
                     1, 100000);
  add_integer_option(cmd, "--adversarial", a.adversarial,
                     "Offset-aliasing words per length for Y^k heads (default 2; 0: none)", 0,
                     10000);
  add_integer_option(cmd, "--seed", a.seed, "Seed of the random words (default 1)", 0, UINT64_MAX);
  add_progress_flags(cmd, a.progress);
  cmd->add_flag("--allow-slow", a.allow_slow, "Run even when the estimated work is over budget");
}

proofs::LengthExperimentSpec length_spec(const LengthArguments& a) {
  return proofs::length_spec(a);
}

std::vector<proofs::LengthSeries> run_length_experiment(const proofs::LengthExperimentSpec& spec,
                                                        const LengthArguments& a) {
  ProgressReporter progress(a.progress, "experiment length: compiling and running the models");
  std::vector<proofs::LengthSeries> series = proofs::run_length_spec(
      spec, [&](std::size_t done, std::size_t total) { progress.update(done, total, "models"); });
  progress.finish();
  return series;
}

std::string length_side_note(const std::vector<proofs::LengthSeries>& series) {
  // The rows are the same words for every model: the first drawn series says which sides are
  // empty.
  for (const auto& s : series) {
    if (s.refused) continue;
    std::vector<std::string> none_in, none_out;
    for (const auto& row : s.rows) {
      if (row.members_empty) none_in.push_back(std::to_string(row.length));
      if (row.nonmembers_empty) none_out.push_back(std::to_string(row.length));
    }
    const auto list = [](const std::vector<std::string>& v) {
      if (v.size() <= 12) return fmt::format("{}", fmt::join(v, ","));
      return fmt::format("{},... ({} lengths)",
                         fmt::join(std::vector<std::string>(v.begin(), v.begin() + 12), ","),
                         v.size());
    };
    std::string out;
    if (!none_in.empty())
      out += "no member of the language at length " + list(none_in) + " (members side empty)\n";
    if (!none_out.empty()) {
      out += "no non-member of the language at length " + list(none_out) +
             " (non-members side empty)\n";
    }
    return out;
  }
  return "";
}

Action add_experiment_command(CLI::App& app) {
  struct Options {
    LengthArguments args;
    std::string out;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* experiment = app.add_subcommand("experiment", "The papers' experiments as commands");
  experiment->require_subcommand(1);
  auto* cmd = experiment->add_subcommand(
      "length",
      "Accuracy against length of a compiled formula per schedule x format (RoPE-X §5-6): "
      "periodic heads stay exact, conventional Y^k and MOD heads are exact up to their certified "
      "length");
  add_length_options(cmd, o->args);
  cmd->add_option("-o,--out", o->out, "Write the rows to FILE (.csv .md .json .tex)");
  cmd->add_flag("--json", o->json, "Print JSON: the series and the rows");

  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    const proofs::LengthExperimentSpec spec = length_spec(o->args);
    std::optional<OutputKind> kind;
    if (cmd->count("--out") > 0) {
      kind = output_kind_for(o->out, "--out");
      io::check_output_path(o->out, "--out");
    }
    const auto series = run_length_experiment(spec, o->args);
    const Table table = length_table(series);
    if (kind) io::write_output_file(o->out, render(table, *kind));
    if (o->json) {
      const nlohmann::json j = proofs::length_json(o->args, spec, series);
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::string text = fmt::format(
        "experiment length  '{}' over {}, per length {} members and {} non-members drawn "
        "uniformly (seed {}; every word of a side with at most {}), {} offset-aliasing words "
        "per length for Y^k heads\n",
        o->args.formula, o->args.alphabet, spec.words, spec.words, spec.seed, spec.words,
        spec.adversarial);
    text += length_side_note(series);
    for (const auto& s : series) {
      if (s.refused) {
        text += fmt::format("{} in {}: refused: {}\n", s.schedule, s.format, one_line(*s.refused));
        continue;
      }
      text += fmt::format("{} in {}: certified length {}, every word right up to length {}{}\n",
                          s.schedule, s.format, proofs::certified_length_text(s),
                          s.longest_all_right ? std::to_string(*s.longest_all_right)
                                              : std::string("- (the first length failed)"),
                          s.mod_atoms.empty() ? std::string() : "; MOD atoms on " + s.mod_atoms);
    }
    text += table.to_text();
    std::cout << text;
    return 0;
  };
}

}  // namespace ropesim::cli
