// `ropesim check`: the theorems of THEORY §5 as RapidCheck properties (properties/check.hpp).
// Parsing and printing only: the properties live in properties/.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "numeric/format.hpp"
#include "numeric/suggest.hpp"
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
  bool json = false;
  bool quiet = false;
};

}  // namespace

Action add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("check",
                                 "Check the theorems (THEORY §5) as RapidCheck properties: exit 0 "
                                 "if all pass, 1 if any fails");
  auto o = std::make_shared<CheckFlags>();
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
  cmd->add_option("--replay", o->replay,
                  "Replay one failing case: the token of a failure's replay command");
  cmd->add_flag("--json", o->json, "Print JSON (one object per property and the totals)");
  cmd->add_flag("--quiet", o->quiet, "No progress on stderr");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    properties::CheckOptions options;
    options.trials = o->trials;
    options.seed = o->seed;
    options.max_length = o->max_length;
    options.max_size = o->max_size;
    options.replay = o->replay;
    if (!o->format.empty())
      options.format = with_context("--format", [&] { return numeric::parse_format(o->format); });
    std::vector<std::string> names;
    if (o->property == "all") {
      if (!o->replay.empty())
        throw InvalidArgument("--replay needs --property NAME (the property that failed)");
      for (const auto& info : properties::property_list()) names.push_back(info.name);
    } else {
      bool known = false;
      for (const auto& info : properties::property_list())
        known = known || info.name == o->property;
      if (!known) {
        std::vector<std::string> known_names;
        for (const auto& info : properties::property_list()) known_names.push_back(info.name);
        throw InvalidArgument(fmt::format(
            "--property: unknown property '{}'{}; accepted: all, {}", o->property,
            numeric::did_you_mean(o->property, known_names), properties::property_names()));
      }
      names.push_back(o->property);
    }
    if (options.format) {  // every property run must be able to use it: refused up front, before
                           // any output
      for (const auto& info : properties::property_list()) {
        if (std::find(names.begin(), names.end(), info.name) != names.end()) {
          properties::check_format_usable(info, *options.format);
        }
      }
    }
    const bool show_progress = !o->quiet && stderr_is_tty();
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
                    << progress_line(static_cast<std::size_t>(done),
                                     static_cast<std::size_t>(total), what, elapsed)
                    << std::flush;
        };
      }
      const auto outcome = with_context(
          "--replay", [&] { return properties::run_property(name, options, progress); });
      if (show_progress) std::cerr << "\r\033[K" << std::flush;
      const bool ok = !outcome.failed && !outcome.gave_up;
      (ok ? passed : failed) += 1;
      std::string source;
      for (const auto& info : properties::property_list()) {
        if (info.name == name) source = info.source;
      }
      if (o->json) {
        report.push_back({{"property", name},
                          {"source", source},
                          {"passed", outcome.passed},
                          {"discarded", outcome.discarded},
                          {"seconds", std::round(outcome.seconds * 1000) / 1000},
                          {"failed", outcome.failed ? 1 : 0},
                          {"gave_up", outcome.gave_up},
                          {"description", outcome.description},
                          {"counterexample", outcome.counterexample},
                          {"replay", outcome.replay_command}});
        continue;
      }
      std::cout << fmt::format("{:<18} {} passed, {} discarded, {} failed{}, {:.1f} s  [{}]\n",
                               name, outcome.passed, outcome.discarded, outcome.failed ? 1 : 0,
                               outcome.gave_up ? " (gave up)" : "", outcome.seconds, source);
      if (!ok) {
        std::cout << "  " << one_line(outcome.description) << "\n";
        for (const auto& line : outcome.counterexample) std::cout << "  " << one_line(line) << "\n";
        if (!outcome.replay_command.empty())
          std::cout << "  replay: " << outcome.replay_command << "\n";
      }
    }
    if (o->json) {
      std::cout
          << nlohmann::json{{"properties", report}, {"passed", passed}, {"failed", failed}}.dump(2)
          << "\n";
    } else {
      std::cout << fmt::format("overall: {} passed, {} failed\n", passed, failed);
    }
    return failed == 0 ? 0 : 1;
  };
}

}  // namespace ropesim::cli
