// `ropesim experiment length`: accuracy against length per schedule × format
// (proofs/length_experiment.hpp). Parsing and printing only.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attention/schedule.hpp"
#include "cli/commands.hpp"
#include "cli/experiment_common.hpp"
#include "cli/table.hpp"
#include "logic/formula.hpp"
#include "numeric/budget.hpp"
#include "numeric/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/format.hpp"
#include "proofs/length_experiment.hpp"

namespace ropesim::cli {

namespace {

/// The largest length `--lengths` accepts, and the most lengths.
constexpr std::uint64_t kMaxLength = 1000000;
constexpr std::size_t kMaxLengths = 100000;

/// "8,16,32" or "1..100" or a mix ("1..20,40,80"): ascending, no repeats, each in 1..10^6.
std::vector<std::uint64_t> parse_lengths(const std::string& text) {
  const auto number = [&](const std::string& item) {
    if (item.empty() || item.size() > 7 ||
        item.find_first_not_of("0123456789") != std::string::npos) {
      throw InvalidArgument(
          fmt::format("--lengths: '{}' is not a length; accepted: integers in 1..{}, "
                      "lists 8,16,32 and ranges A..B",
                      item, kMaxLength));
    }
    const std::uint64_t v = std::stoull(item);
    if (v < 1 || v > kMaxLength) {
      throw InvalidArgument(fmt::format("--lengths: {} is outside 1..{}", item, kMaxLength));
    }
    return v;
  };
  std::vector<std::uint64_t> out;
  for (const std::string& item : split_list(text, "--lengths")) {
    const std::size_t dots = item.find("..");
    if (dots == std::string::npos) {
      out.push_back(number(item));
      continue;
    }
    const std::uint64_t a = number(item.substr(0, dots)), b = number(item.substr(dots + 2));
    if (b < a)
      throw InvalidArgument("--lengths: range '" + item + "' is empty; accepted: A..B with A <= B");
    if (b - a + 1 > kMaxLengths)
      throw InvalidArgument(fmt::format("--lengths: more than {} lengths", kMaxLengths));
    for (std::uint64_t v = a; v <= b; ++v) out.push_back(v);
  }
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (out[i] <= out[i - 1]) {
      throw InvalidArgument(fmt::format(
          "--lengths: {} after {}; accepted: ascending lengths, each once", out[i], out[i - 1]));
    }
  }
  if (out.empty()) throw InvalidArgument("--lengths: no length given");
  if (out.size() > kMaxLengths)
    throw InvalidArgument(fmt::format("--lengths: more than {} lengths", kMaxLengths));
  return out;
}

std::vector<std::string> parse_letters(const std::string& text) {
  std::vector<std::string> out;
  for (const char c : text) {
    if (c < 'a' || c > 'z') {
      throw InvalidArgument("--alphabet: '" + text +
                            "' is not a string of lowercase letters; accepted: e.g. ab");
    }
    const std::string s(1, c);
    for (const auto& seen : out) {
      if (seen == s) throw InvalidArgument("--alphabet: '" + s + "' is listed twice");
    }
    out.push_back(s);
  }
  if (out.empty()) throw InvalidArgument("--alphabet: give at least one letter, e.g. ab");
  return out;
}

nlohmann::json optional_number(const std::optional<std::uint64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

Table length_table(const std::vector<proofs::LengthSeries>& series) {
  Table t;
  t.columns = {"schedule",
               "format",
               "length",
               "balanced_accuracy",
               "accuracy_members",
               "accuracy_nonmembers",
               "accuracy",
               "members_right",
               "members",
               "nonmembers_right",
               "nonmembers",
               "aliasing_right",
               "aliasing_words",
               "correct",
               "words",
               "members_empty",
               "nonmembers_empty",
               "members_exhaustive",
               "nonmembers_exhaustive",
               "certified_length"};
  const auto rounded = [](double v) { return std::round(v * 1e6) / 1e6; };
  const auto optional_rate = [&](const std::optional<double>& v) {
    return v ? nlohmann::json(rounded(*v)) : nlohmann::json();
  };
  for (const auto& s : series) {
    for (const auto& row : s.rows) {
      t.rows.push_back({s.schedule,
                        s.format,
                        row.length,
                        rounded(row.balanced_accuracy()),
                        optional_rate(row.accuracy_members()),
                        optional_rate(row.accuracy_nonmembers()),
                        rounded(row.accuracy()),
                        row.members_correct,
                        row.members,
                        row.nonmembers_correct,
                        row.nonmembers,
                        row.adversarial_correct,
                        row.adversarial_words,
                        row.correct(),
                        row.words(),
                        row.members_empty,
                        row.nonmembers_empty,
                        row.members_exhaustive,
                        row.nonmembers_exhaustive,
                        optional_number(s.certified_length)});
    }
  }
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
  proofs::LengthExperimentSpec spec;
  spec.formula = a.formula;
  spec.alphabet = parse_letters(a.alphabet);
  // No --schedule: single:g=1 for the Y^k heads, periodic tables for the MOD atoms (C4).
  spec.schedule_for_mod = !a.schedules.empty();
  const std::vector<std::string> schedules =
      a.schedules.empty() ? std::vector<std::string>{"single:g=1"} : a.schedules;
  for (const auto& text : schedules) {
    for (const auto& earlier : spec.schedules) {
      if (earlier.spec == text) throw InvalidArgument("--schedule: '" + text + "' is given twice");
    }
    attention::Schedule s =
        with_context("--schedule", [&] { return attention::parse_schedule(text); });
    if (s.is_multi_axis())
      throw InvalidArgument("--schedule: '" + text +
                            "' has several position axes; accepted: a one-axis schedule");
    if (s.blocks.empty()) throw InvalidArgument("--schedule: '" + text + "' has no rotary block");
    spec.schedules.push_back(std::move(s));
  }
  for (const auto& text : a.formats) {
    numeric::Format f = with_context("--format", [&] { return numeric::parse_format(text); });
    for (const auto& earlier : spec.formats) {
      if (earlier.name == f.name) throw InvalidArgument("--format: '" + text + "' is given twice");
    }
    spec.formats.push_back(std::move(f));
  }
  spec.rounding = with_context("--rounding", [&] { return numeric::parse_rounding(a.rounding); });
  spec.lengths = parse_lengths(a.lengths);
  spec.words = static_cast<std::size_t>(a.words);
  spec.seed = a.seed;
  spec.adversarial = static_cast<std::size_t>(a.adversarial);
  (void)with_context("formula", [&] { return ltl::parse(a.formula); });
  // The work: proofs::length_experiment_work (one series per schedule and format).
  const WorkEstimate work = proofs::length_experiment_work(spec, spec.schedules.size());
  check_budget("--lengths", work, opt_in_budget(a.allow_slow));
  return spec;
}

std::vector<proofs::LengthSeries> run_length_experiment(const proofs::LengthExperimentSpec& spec,
                                                        const LengthArguments& a) {
  ProgressReporter progress(a.progress, "experiment length: compiling and running the models");
  std::vector<proofs::LengthSeries> series;
  try {
    series = proofs::length_experiment(
        spec, [&](std::size_t done, std::size_t total) { progress.update(done, total, "models"); });
  } catch (const BudgetExceeded& e) {
    // The path-count table of the balanced words: a limit of the lengths asked for.
    throw InvalidArgument(std::string("--lengths: ") + e.what());
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("formula: ") + e.what());
  }
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
      nlohmann::json j;
      j["formula"] = o->args.formula;
      j["alphabet"] = o->args.alphabet;
      j["words"] = spec.words;
      j["seed"] = spec.seed;
      j["adversarial"] = spec.adversarial;
      nlohmann::json list = nlohmann::json::array();
      for (const auto& s : series) {
        list.push_back(
            {{"schedule", s.schedule},
             {"format", s.format},
             {"certified_length", optional_number(s.certified_length)},
             {"longest_all_right", optional_number(s.longest_all_right)},
             {"mod_atoms", s.mod_atoms.empty() ? nlohmann::json() : nlohmann::json(s.mod_atoms)},
             {"refused", s.refused ? nlohmann::json(*s.refused) : nlohmann::json()}});
      }
      j["series"] = list;
      j["rows"] = table.to_json();
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
      text += fmt::format(
          "{} in {}: certified length {}, every word right up to length {}{}\n", s.schedule,
          s.format,
          s.certified_length ? std::to_string(*s.certified_length) : std::string("unbounded"),
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
