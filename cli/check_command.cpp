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
#include "core/suggest.hpp"
#include "numeric/format.hpp"
#include "numeric/json_number.hpp"
#include "numeric/summation.hpp"
#include "properties/check.hpp"
#include "properties/check_study.hpp"

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

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_check(const CLI::App& cmd, CheckFlags& o) {
  if (o.timings && !o.json) {
    throw InvalidArgument(
        "--timings: only with --json (the text output shows each property's time already)");
  }
  properties::CheckArguments arguments;
  arguments.property = o.property;
  arguments.trials = o.trials;
  arguments.seed = o.seed;
  arguments.max_length = o.max_length;
  arguments.max_size = o.max_size;
  arguments.format = o.format;
  arguments.summation = o.summation;
  arguments.draw = o.draw;
  if (cmd.count("--replay") > 0) arguments.replay = o.replay;
  const properties::CheckRequest request = properties::check_request(arguments);
  const properties::CheckOptions& options = request.options;
  const std::vector<std::string>& names = request.names;
  const bool show_progress = !o.quiet && stderr_is_tty();
  const auto start = std::chrono::steady_clock::now();
  int passed = 0, failed = 0;
  std::vector<properties::PropertyOutcome> outcomes;  // --json: printed at the end
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
    const bool ok = properties::passed(outcome);
    (ok ? passed : failed) += 1;
    if (o.json) {
      outcomes.push_back(outcome);
      continue;
    }
    std::string source;
    for (const auto& info : properties::property_list()) {
      if (info.name == name) source = info.source;
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
    std::cout << properties::check_json(outcomes, o.timings).dump(2) << "\n";
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
