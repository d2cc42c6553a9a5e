// `ropesim sweep`: the rotation census over a grid of schedules × realizations × formats
// (default: every model preset × r1 r2 hf × bf16 fp16 fp32 fp64 at N = 65536), as one table.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "attention/census.hpp"
#include "cli/commands.hpp"
#include "cli/jobs.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "numeric/error.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::cli {

namespace {

nlohmann::json or_null(const std::optional<std::uint64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

Table sweep_table(const std::vector<attention::CensusResult>& cells, const std::string& rounding) {
  Table t;
  t.terminal_columns = {"schedule",      "realization",    "format",   "distinct",
                        "largest_class", "first_repeat",   "period",   "witnessed",
                        "max_witness",   "first_overflow", "first_nan"};
  t.columns = {"schedule",
               "realization",
               "format",
               "rounding",
               "positions",
               "distinct",
               "largest_class",
               "largest_class_position",
               "first_repeat",
               "periodic",
               "period",
               "witnessed",
               "max_period",
               "max_witness",
               "max_witness_period",
               "blocks",
               "periodic_blocks",
               "min_block_distinct",
               "overflow_positions",
               "first_overflow",
               "nan_positions",
               "first_nan",
               "note"};
  t.numeric_columns = {"positions",
                       "distinct",
                       "largest_class",
                       "largest_class_position",
                       "period",
                       "witnessed",
                       "max_period",
                       "max_witness",
                       "max_witness_period",
                       "blocks",
                       "periodic_blocks",
                       "min_block_distinct",
                       "overflow_positions",
                       "first_overflow",
                       "nan_positions",
                       "first_nan"};
  for (const auto& r : cells) {
    if (!r.not_applicable.empty()) {
      t.rows.push_back({r.schedule, r.realisation, r.format.name,   rounding, r.positions,
                        nullptr,    nullptr,       nullptr,         nullptr,  nullptr,
                        nullptr,    nullptr,       nullptr,         nullptr,  nullptr,
                        nullptr,    nullptr,       nullptr,         nullptr,  nullptr,
                        nullptr,    nullptr,       r.not_applicable});
      continue;
    }
    std::uint64_t witnessed = 0;
    for (auto w : r.witnesses) witnessed += w >= 0 ? 1 : 0;
    // Component periodicity (THEORY §3 Def 2.1) observed on 0..N-1: blocks with a period ≤ N/2.
    std::uint64_t periodic_blocks = 0;
    for (const auto& p : r.period_per_block) periodic_blocks += p ? 1 : 0;
    nlohmann::json min_block_distinct = nullptr;
    if (!r.distinct_per_block.empty()) {
      min_block_distinct =
          *std::min_element(r.distinct_per_block.begin(), r.distinct_per_block.end());
    }
    const nlohmann::json repeat =
        r.first_repeat ? nlohmann::json::array({r.first_repeat->earlier, r.first_repeat->later})
                       : nlohmann::json(nullptr);
    t.rows.push_back({r.schedule,
                      r.realisation,
                      r.format.name,
                      rounding,
                      r.positions,
                      r.distinct_rotations,
                      r.largest_class.size,
                      r.largest_class.position,
                      repeat,
                      r.period.has_value(),
                      or_null(r.period),
                      r.period ? nlohmann::json(nullptr) : nlohmann::json(witnessed),
                      r.max_period,
                      or_null(r.largest_witness_position),
                      or_null(r.largest_witness_period),
                      r.distinct_per_block.size(),
                      periodic_blocks,
                      min_block_distinct,
                      r.overflow.count,
                      or_null(r.overflow.first),
                      r.nan.count,
                      or_null(r.nan.first),
                      ""});
  }
  return t;
}

}  // namespace

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
  std::optional<OutputKind> kind;
  if (cmd.count("--out") > 0) {
    kind = output_kind_for(o.out, "--out");
    io::check_output_path(o.out, "--out");
  }
  const bool sharded = cmd.count("--shard") > 0;
  const Shard shard = sharded ? parse_shard(o.shard) : Shard{1, 1};  // 1/1: every row
  if (cmd.count("--models") > 0 && o.models.empty())
    throw InvalidArgument("--models: empty list; accepted: all or preset names");
  if (cmd.count("--schedules") > 0 && o.schedules.empty()) {
    throw InvalidArgument("--schedules: empty list; accepted: " + attention::schedule_spellings());
  }
  attention::check_census_limits(o.positions, 0, o.max_period);

  attention::SweepGrid grid;
  grid.rounding = with_context("--rounding", [&] { return numeric::parse_rounding(o.rounding); });
  grid.engine = with_context("--engine", [&] { return &numeric::engine_by_name(o.engine); });
  grid.schedules = grid_schedules(o.models, o.schedules);
  for (const auto& spec : split_unique(o.formats, "--formats", ListKind::formats)) {
    try {
      grid.formats.push_back(numeric::parse_format(spec));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string("--formats: ") + e.what());
    }
  }
  for (const auto& spec : split_unique(o.realisations, "--realizations", ListKind::realisations)) {
    try {
      (void)attention::parse_realisation(spec, numeric::Format::fp32());
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string("--realizations: ") + e.what());
    }
    grid.realisations.push_back(spec);
  }
  if (grid.schedules.empty() || grid.formats.empty() || grid.realisations.empty()) {
    throw InvalidArgument(
        "sweep: the grid is empty (give --models, --schedules, --formats and --realizations)");
  }

  attention::CensusOptions options;
  options.positions = o.positions;
  options.max_period = o.max_period;
  options.threads = jobs_threads(o.threads);
  for (const auto& s : grid.schedules)
    warn_about_schedule(s, o.positions - 1);  // longrope past L_orig
  // Row i of the table is grid cell i (attention::sweep's order); a shard runs its rows only.
  const std::size_t cells_per_schedule = grid.formats.size() * grid.realisations.size();
  const std::uint64_t total_rows = grid.schedules.size() * cells_per_schedule;
  std::function<bool(std::size_t)> selected;
  if (sharded)
    selected = [shard, total_rows](std::size_t cell) { return shard.owns(cell, total_rows); };
  {
    WorkEstimate total;
    for (std::size_t si = 0; si < grid.schedules.size(); ++si) {
      const auto& s = grid.schedules[si];
      std::size_t cells = 0;
      for (std::size_t c = 0; c < cells_per_schedule; ++c)
        cells += shard.owns(si * cells_per_schedule + c, total_rows) ? 1 : 0;
      const WorkEstimate e = attention::census_work(s, options, cells);
      total.what = e.what;
      total.units += e.units;
      total.units_per_second = e.units_per_second;
      total.bytes = std::max(total.bytes, e.bytes);
    }
    // The default sweep (the README's main job, about 3 minutes) is always within budget.
    Budget budget = opt_in_budget(o.allow_slow);
    budget.seconds = 1800;
    check_budget("--positions", total, budget);
  }
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
  const auto cells = attention::sweep(grid, options, progress, selected);
  reporter.finish();
  const Table table = sweep_table(cells, std::string(numeric::to_string(grid.rounding)));
  std::optional<ShardRecord> record;
  if (sharded) record = ShardRecord{shard, total_rows};
  write_and_print(table, kind, o.out, record, o.json, o.quiet, o.columns);
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
