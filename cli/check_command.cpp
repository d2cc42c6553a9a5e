// `ropesim check`: the theorems of THEORY §5 as RapidCheck properties (properties/check.hpp).
// Parsing and printing only: the properties live in properties/.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "cli/commands.hpp"
#include "numeric/format.hpp"
#include "numeric/json_number.hpp"
#include "numeric/suggest.hpp"
#include "numeric/summation.hpp"
#include "properties/check.hpp"

namespace ropesim::cli {

namespace {

struct CheckFlags {
  std::string property = "all";
  int trials = 100;
  std::uint64_t seed = 20261201;
  std::uint64_t max_length = 1000;
  int max_size = 100;
  std::string format;
  std::string replay;
  std::string summation;
  std::string draw;
  bool json = false;
  bool timings = false;
  bool quiet = false;
};

// log10 of a positive integer, to about 15 digits (mpz_get_d_2exp: n = d·2^e, 0.5 <= d < 1).
double log10_of(const mpz_class& n) {
  signed long exponent = 0;
  const double d = mpz_get_d_2exp(&exponent, n.get_mpz_t());
  return std::log10(d) + static_cast<double>(exponent) * std::log10(2.0);
}

// n* in text: exact below 10^6, else "1.7e+38" (also beyond binary64's range: "3.1e+4931").
std::string n_star_text(const mpz_class& n) {
  if (n < 1000000) return n.get_str();
  const double l = log10_of(n);
  const double whole = std::floor(l);
  double mantissa = std::pow(10.0, l - whole);
  long long power = static_cast<long long>(whole);
  if (mantissa >= 9.95) {
    mantissa /= 10;
    ++power;
  }
  return fmt::format("{:.1f}e+{}", mantissa, power);
}

// The fraction k/total in percent, one decimal (0 when total is 0).
double percent(int k, int total) {
  return total == 0 ? 0.0 : std::round(1000.0 * k / total) / 10.0;
}

void print_thresholds(const properties::ThresholdReport& t) {
  std::cout << "  regime: " << t.regime << "\n  decided by: " << t.decided_by << "\n";
  if (t.n_star.empty()) {
    std::cout << fmt::format("  n*: none over {} passed draws\n", t.draws);
  } else {
    std::cout << fmt::format("  n* over {} passed draws: min {}, median {}, max {}\n",
                             t.n_star.size(), n_star_text(t.n_star.front()),
                             n_star_text(t.median()), n_star_text(t.n_star.back()));
  }
  const std::string all(127, '1'), none(127, '0');
  const auto count = [&](const std::string& pattern) {
    const auto it = t.languages.find(pattern);
    return it == t.languages.end() ? 0 : it->second;
  };
  std::cout << fmt::format(
      "  on the 127 words of length <= 6: {} of {} draws non-trivial ({}%), {} draws accept all, "
      "{} accept none; {} distinct languages (acceptance patterns)\n",
      t.nontrivial, t.draws, percent(t.nontrivial, t.draws), count(all), count(none),
      t.languages.size());
  std::cout << fmt::format("  checked on words actually run{}: {} of {} draws\n",
                           t.n_star.empty() ? " (no n*)" : " at n* <= n < n* + max(period, 4)",
                           t.computed, t.draws);
}

nlohmann::json thresholds_json(const properties::ThresholdReport& t) {
  nlohmann::json out{{"regime", t.regime}, {"decided_by", t.decided_by}, {"draws", t.draws}};
  nlohmann::json n_star{{"count", t.n_star.size()}};
  if (!t.n_star.empty()) {
    // Each as a number (with KEY_exact when binary64 cannot hold it) and its log10.
    const std::pair<const char*, const mpz_class*> points[] = {
        {"min", &t.n_star.front()}, {"median", &t.median()}, {"max", &t.n_star.back()}};
    for (const auto& [key, n] : points) {
      numeric::put_exact(n_star, key, mpq_class(*n));
      n_star[std::string(key) + "_log10"] = std::round(log10_of(*n) * 1000) / 1000;
    }
  }
  out["n_star"] = n_star;
  out["nontrivial"] = t.nontrivial;
  out["nontrivial_fraction"] = t.draws == 0 ? 0.0 : static_cast<double>(t.nontrivial) / t.draws;
  out["accept_all"] =
      t.languages.count(std::string(127, '1')) ? t.languages.at(std::string(127, '1')) : 0;
  out["accept_none"] =
      t.languages.count(std::string(127, '0')) ? t.languages.at(std::string(127, '0')) : 0;
  out["distinct_languages"] = t.languages.size();
  out["checked_by_computation"] = t.computed;
  return out;
}

}  // namespace

namespace {

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_check_options(CLI::App& app, CheckFlags* o) {
  auto* cmd = app.add_subcommand("check",
                                 "Check the theorems (THEORY §5) as RapidCheck properties: exit 0 "
                                 "if all pass, 1 if any fails");
  cmd->add_option("--property", o->property,
                  "Property to run: all (default) or one of: " + properties::property_names());
  add_integer_option(cmd, "--trials", o->trials,
                     "Successful trials required per property (default 100)", 1, 100000000);
  add_integer_option(cmd, "--seed", o->seed,
                     "RapidCheck seed (default 20261201); the same seed gives the same cases", 0,
                     UINT64_MAX);
  add_integer_option(cmd, "--max-length", o->max_length,
                     "Longest generated word / scanned length (default 1000)", 1, 100000000);
  add_integer_option(cmd, "--max-size", o->max_size,
                     "RapidCheck's largest size for formulas and schedules (default 100)", 1,
                     100000);
  cmd->add_option("--format", o->format,
                  "Use only this format in every property that generates formats");
  cmd->add_option(
      "--summation", o->summation,
      "nope-ltlp, rope-p-ltlpmod: the summation of the drawn models: exact (default, the "
      "theorem's regime), sequential, pairwise, wide-accumulator (the last two decided "
      "on words run, no n*)");
  cmd->add_option("--draw", o->draw,
                  "nope-ltlp, rope-p-ltlpmod: standard (default) or reachable (small formats whose "
                  "n* is within --max-length; the identity checked on words run past n*)");
  cmd->add_option("--replay", o->replay,
                  "Replay one failing case: the token of a failure's replay command");
  cmd->add_flag("--json", o->json,
                "Print JSON (one object per property and the totals; the same bytes for the "
                "same command)");
  cmd->add_flag("--timings", o->timings,
                "With --json: add each property's wall time (\"seconds\"), which differs "
                "between runs");
  cmd->add_flag("--quiet", o->quiet, "No progress on stderr");
  return cmd;
}

/// The properties `--property` names (all: every one), each checked to accept the options
/// before any runs (refused up front, before any output).
std::vector<std::string> property_names_to_run(const CheckFlags& o,
                                               const properties::CheckOptions& options) {
  std::vector<std::string> names;
  if (o.property == "all") {
    if (!o.replay.empty())
      throw InvalidArgument("--replay needs --property NAME (the property that failed)");
    for (const auto* option :
         {options.summation ? "--summation" : nullptr, options.draw ? "--draw" : nullptr}) {
      if (option == nullptr) continue;
      throw InvalidArgument(fmt::format(
          "{} applies only to nope-ltlp and rope-p-ltlpmod (the properties that draw models); "
          "with --property all the others would ignore it: give --property nope-ltlp or "
          "rope-p-ltlpmod",
          option));
    }
    for (const auto& info : properties::property_list()) names.push_back(info.name);
  } else {
    bool known = false;
    for (const auto& info : properties::property_list()) known = known || info.name == o.property;
    if (!known) {
      std::vector<std::string> known_names;
      for (const auto& info : properties::property_list()) known_names.push_back(info.name);
      throw InvalidArgument(fmt::format("--property: unknown property '{}'{}; accepted: all, {}",
                                        o.property, numeric::did_you_mean(o.property, known_names),
                                        properties::property_names()));
    }
    names.push_back(o.property);
  }
  // Every property run must be able to use the options: refused up front, before any output.
  for (const auto& info : properties::property_list()) {
    if (std::find(names.begin(), names.end(), info.name) == names.end()) continue;
    if (options.format) properties::check_format_usable(info, *options.format);
    properties::check_hypotheses_usable(info, options);
  }
  return names;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_check(const CLI::App& cmd, CheckFlags& o) {
  if (cmd.count("--replay") > 0 && o.replay.empty()) {
    throw InvalidArgument(
        "--replay: empty token; accepted: the token of a failure's replay command (ropesim "
        "check prints it)");
  }
  if (o.timings && !o.json) {
    throw InvalidArgument(
        "--timings: only with --json (the text output shows each property's time already)");
  }
  properties::CheckOptions options;
  options.trials = o.trials;
  options.seed = o.seed;
  options.max_length = o.max_length;
  options.max_size = o.max_size;
  options.replay = o.replay;
  if (!o.format.empty())
    options.format = with_context("--format", [&] { return numeric::parse_format(o.format); });
  if (!o.summation.empty())
    options.summation =
        with_context("--summation", [&] { return numeric::parse_summation(o.summation); });
  if (!o.draw.empty()) {
    if (o.draw == "standard") {
      options.draw = properties::ConverseDraw::standard;
    } else if (o.draw == "reachable") {
      options.draw = properties::ConverseDraw::reachable;
    } else {
      throw InvalidArgument(
          fmt::format("--draw: unknown draw '{}'; accepted: standard, reachable", o.draw));
    }
  }
  const std::vector<std::string> names = property_names_to_run(o, options);
  const bool show_progress = !o.quiet && stderr_is_tty();
  const auto start = std::chrono::steady_clock::now();
  int passed = 0, failed = 0;
  nlohmann::json report = nlohmann::json::array();
  for (const auto& name : names) {
    properties::CheckProgress progress;
    if (show_progress) {
      progress = [&](const std::string& what, int done, int total) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::cerr << "\r"
                  << progress_line(static_cast<std::size_t>(done), static_cast<std::size_t>(total),
                                   what, elapsed)
                  << std::flush;
      };
    }
    const auto outcome =
        with_context("--replay", [&] { return properties::run_property(name, options, progress); });
    if (show_progress) std::cerr << "\r\033[K" << std::flush;
    const bool ok = !outcome.failed && !outcome.gave_up;
    (ok ? passed : failed) += 1;
    std::string source;
    for (const auto& info : properties::property_list()) {
      if (info.name == name) source = info.source;
    }
    if (o.json) {
      report.push_back({{"property", name},
                        {"source", source},
                        {"passed", outcome.passed},
                        {"discarded", outcome.discarded},
                        {"failed", outcome.failed ? 1 : 0},
                        {"gave_up", outcome.gave_up},
                        {"description", outcome.description},
                        {"counterexample", outcome.counterexample},
                        {"replay", outcome.replay_command}});
      if (o.timings) report.back()["seconds"] = std::round(outcome.seconds * 1000) / 1000;
      if (outcome.thresholds) report.back()["thresholds"] = thresholds_json(*outcome.thresholds);
      continue;
    }
    std::cout << fmt::format("{:<18} {} passed, {} discarded, {} failed{}, {:.1f} s  [{}]\n", name,
                             outcome.passed, outcome.discarded, outcome.failed ? 1 : 0,
                             outcome.gave_up ? " (gave up)" : "", outcome.seconds, source);
    if (!ok) {
      std::cout << "  " << one_line(outcome.description) << "\n";
      for (const auto& line : outcome.counterexample) std::cout << "  " << one_line(line) << "\n";
      if (!outcome.replay_command.empty())
        std::cout << "  replay: " << outcome.replay_command << "\n";
    }
    if (outcome.thresholds) print_thresholds(*outcome.thresholds);
  }
  if (o.json) {
    std::cout
        << nlohmann::json{{"properties", report}, {"passed", passed}, {"failed", failed}}.dump(2)
        << "\n";
  } else {
    std::cout << fmt::format("overall: {} passed, {} failed\n", passed, failed);
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

Action add_check_command(CLI::App& app) {
  auto o = std::make_shared<CheckFlags>();
  CLI::App* cmd = add_check_options(app, o.get());
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_check(*cmd, *o);
  };
}

}  // namespace ropesim::cli
