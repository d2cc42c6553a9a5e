// Reading and reporting the accuracy-against-length experiment
// (proofs/experiments/length_study.hpp).
#include "proofs/experiments/length_study.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "attention/schedules/schedule.hpp"
#include "core/budget.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "logic/formula.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/spec_lists.hpp"

namespace ropesim::proofs {

namespace {

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

/// The largest length `--lengths` accepts, and the most lengths.
constexpr std::uint64_t kMaxLength = 1000000;
constexpr std::size_t kMaxLengths = 100000;

}  // namespace

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
  for (const std::string& item : numeric::split_list(text, "--lengths")) {
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

LengthExperimentSpec length_spec(const LengthArguments& a) {
  LengthExperimentSpec spec;
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
  // the ranges of the CLI's --words and --adversarial (integer_in)
  spec.words = static_cast<std::size_t>(
      ropesim::parse_integer(std::to_string(a.words), "--words", 1, 100000));
  spec.seed = a.seed;
  spec.adversarial = static_cast<std::size_t>(
      ropesim::parse_integer(std::to_string(a.adversarial), "--adversarial", 0, 10000));
  (void)with_context("formula", [&] { return ltl::parse(a.formula); });
  check_length_budget(spec, a.allow_slow);
  return spec;
}

void check_length_budget(const LengthExperimentSpec& spec, bool allow_slow) {
  // The work: length_experiment_work (one series per schedule and format).
  const WorkEstimate work = length_experiment_work(spec, spec.schedules.size());
  Budget budget;
  budget.unlimited = allow_slow;
  check_budget("--lengths", work, budget);
}

std::vector<LengthSeries> run_length_spec(
    const LengthExperimentSpec& spec,
    const std::function<void(std::size_t, std::size_t)>& progress) {
  try {
    return length_experiment(spec, progress);
  } catch (const BudgetExceeded& e) {
    // The path-count table of the balanced words: a limit of the lengths asked for.
    throw InvalidArgument(std::string("--lengths: ") + e.what());
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("formula: ") + e.what());
  }
}

const std::vector<std::string>& length_columns() {
  static const std::vector<std::string> columns = {"schedule",
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
  return columns;
}

std::string certified_length_text(const LengthSeries& series) {
  if (!series.certified_length) return "unbounded";
  return std::to_string(*series.certified_length) +
         (series.certified_length_at_limit ? " (the checks' limit: no failure found)" : "");
}

std::vector<std::vector<nlohmann::json>> length_rows(const std::vector<LengthSeries>& series) {
  std::vector<std::vector<nlohmann::json>> rows;
  const auto rounded = [](double v) { return std::round(v * 1e6) / 1e6; };
  const auto optional_rate = [&](const std::optional<double>& v) {
    return v ? nlohmann::json(rounded(*v)) : nlohmann::json();
  };
  for (const auto& s : series) {
    for (const auto& row : s.rows) {
      rows.push_back({s.schedule,
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
  return rows;
}

nlohmann::json length_json(const LengthArguments& a, const LengthExperimentSpec& spec,
                           const std::vector<LengthSeries>& series) {
  nlohmann::json j;
  j["formula"] = a.formula;
  j["alphabet"] = a.alphabet;
  j["words"] = spec.words;
  j["seed"] = spec.seed;
  j["adversarial"] = spec.adversarial;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : series) {
    list.push_back(
        {{"schedule", s.schedule},
         {"format", s.format},
         {"certified_length", optional_number(s.certified_length)},
         {"certified_length_at_limit", s.certified_length_at_limit},
         {"longest_all_right", optional_number(s.longest_all_right)},
         {"mod_atoms", s.mod_atoms.empty() ? nlohmann::json() : nlohmann::json(s.mod_atoms)},
         {"refused", s.refused ? nlohmann::json(*s.refused) : nlohmann::json()}});
  }
  j["series"] = list;
  nlohmann::json rows = nlohmann::json::array();
  const auto& columns = length_columns();
  for (const auto& row : length_rows(series)) {
    nlohmann::json object = nlohmann::json::object();
    for (std::size_t c = 0; c < columns.size(); ++c) object[columns[c]] = row[c];
    rows.push_back(std::move(object));
  }
  j["rows"] = rows;
  return j;
}

}  // namespace ropesim::proofs
