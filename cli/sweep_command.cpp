// `ropesim sweep`: the rotation census over a grid of schedules × realizations × formats
// (default: every model preset × r1 r2 hf × bf16 fp16 fp32 fp64 at N = 65536), as one table.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "attention/census/census.hpp"
#include "attention/census/sweep_table.hpp"
#include "cli/commands.hpp"
#include "cli/jobs.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::cli {

namespace {

struct SweepOptions {
  std::string models, schedules, formats = "bf16,fp16,fp32,fp64", realisations = "r1,r2,hf", out,
                                 rounding = "nearest-even", columns, shard, engine = "auto";
  std::uint64_t positions = 65536;
  std::optional<std::uint64_t> max_period;
  unsigned threads = 0;
  bool quiet = false, json = false, allow_slow = false;
  ProgressChoice progress = ProgressChoice::automatic;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_sweep_options(CLI::App& app, SweepOptions* o) {
  auto* cmd = app.add_subcommand(
      "sweep", "Rotation census over a grid: schedules/models x realizations x formats, one table");
  cmd->add_option(
      "--models", o->models,
      "Model presets (comma-separated) or 'all'; default all when --schedules is not given");
  cmd->add_option("--schedules", o->schedules,
                  "Schedule specs (e.g. single:g=1,periodic:m=2,3,12; ';' also separates)");
  cmd->add_option("--formats", o->formats, "Formats")->capture_default_str();
  cmd->add_option("--realizations,--realisations", o->realisations, "Realizations")
      ->capture_default_str();
  add_integer_option(cmd, "--positions", o->positions, "N: positions 0..N-1",
                     attention::kMinCensusPositions, attention::kMaxCensusPositions)
      ->capture_default_str();
  add_integer_option(cmd, "--max-period", o->max_period, "P_max for witnesses (default N/2)", 1,
                     attention::kMaxCensusPositions);
  cmd->add_option("--rounding", o->rounding,
                  "Rounding of every step: nearest-even nearest-away toward-zero upward downward")
      ->capture_default_str();
  cmd->add_option("--engine", o->engine,
                  "Arithmetic engine: mpfr fast auto (same bits, different speed)")
      ->capture_default_str();
  cmd->add_option("-o,--out", o->out,
                  "Write the table to FILE (.csv .md .json .tex; every column unless --columns)");
  cmd->add_flag(
      "--json", o->json,
      "Print JSON (a list of objects, every column unless --columns) instead of the table");
  cmd->add_option("--columns", o->columns,
                  "Columns of the terminal, --out and --json: all, or a comma list (terminal "
                  "default: the main ones)");
  add_jobs_option(cmd, o->threads);
  add_shard_option(cmd, o->shard);
  cmd->add_flag("--quiet", o->quiet,
                "No progress on stderr (the same as --no-progress); with --out, nothing on stdout");
  add_progress_flags(cmd, o->progress);
  cmd->add_flag("--allow-slow", o->allow_slow,
                "Run even when the estimate exceeds the default budget (10 min, 8 GiB)");
  return cmd;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_sweep(const CLI::App& cmd, SweepOptions& o) {
  const TableDestination to =
      table_destination(cmd.count("--out") > 0, o.out, cmd.count("--shard") > 0, o.shard);
  attention::SweepRequest request;
  if (cmd.count("--models") > 0) request.models = o.models;
  if (cmd.count("--schedules") > 0) request.schedules = o.schedules;
  request.formats = o.formats;
  request.realisations = o.realisations;
  request.rounding = o.rounding;
  request.engine = o.engine;
  request.positions = o.positions;
  request.max_period = o.max_period;
  const attention::SweepGrid grid = attention::sweep_grid(request);
  const attention::CensusOptions options =
      attention::sweep_options(request, jobs_threads(o.threads));
  for (const auto& warning : attention::sweep_warnings(grid, o.positions))
    std::cerr << "ropesim: warning: " << one_line(warning) << "\n";
  attention::check_sweep_budget(grid, options, to.rows(), o.allow_slow);
  if (o.quiet && o.progress == ProgressChoice::on) {
    throw InvalidArgument("--quiet: excludes --progress; accepted: one of them");
  }
  ProgressReporter reporter(o.quiet ? ProgressChoice::off : o.progress, "sweep");
  attention::CensusProgress progress;
  if (reporter.enabled()) {
    progress = [&reporter](std::size_t done, std::size_t total, const attention::CensusResult&) {
      reporter.update(done, total, "cells");
    };
  }
  const Table table = attention::sweep_shard_table(grid, options, to.rows(), progress);
  reporter.finish();
  finish_table(table, to, attention::sweep_rows(grid), o.json, o.quiet, o.columns);
  return 0;
}

}  // namespace

Action add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* cmd = add_sweep_options(app, o.get());
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_sweep(*cmd, *o);
  };
}

}  // namespace ropesim::cli
