// `ropesim table horizon`: the bound table users cite (docs/tables/horizon.md): one row per
// format × g × k × C × realization, each row a `ropesim horizon` report (THEORY §6).
// `ropesim table bounds` is in table_bounds_command.cpp, `ropesim table rotations` in
// table_rotations_command.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/horizon_common.hpp"
#include "cli/jobs.hpp"
#include "core/error.hpp"
#include "proofs/range/horizon_rows.hpp"

namespace ropesim::cli {

namespace {

struct TableHorizonOptions {
  std::string formats = "fp8e5m2,bf16,fp16,tf32,fp32", g = "1", k = "1,2,4,8", C = "auto",
              realisations = "r1", schedules, out, columns, shard;
  HeadArguments head;
  unsigned jobs = 0;
  bool quiet = false, json = false;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_table_horizon_options(CLI::App* table, TableHorizonOptions* o) {
  auto* cmd = table->add_subcommand(
      "horizon", "Certified ranges of the Y^k head over formats x g x k x C x realizations");
  cmd->add_option("--formats", o->formats, "Formats")->capture_default_str();
  auto* g = cmd->add_option("--g", o->g, "Frequencies g (exact decimals or fractions P/Q)")
                ->capture_default_str();
  cmd->add_option("--schedules", o->schedules,
                  "Multi-frequency heads over schedules/presets (instead of --g)")
      ->excludes(g);
  cmd->add_option("--k", o->k, "Offsets k")->capture_default_str();
  cmd->add_option("--C", o->C, "Scales C, or 'auto'")->capture_default_str();
  cmd->add_option("--realizations,--realisations", o->realisations, "Realizations")
      ->capture_default_str();
  cmd->add_option("--rounding", o->head.rounding, "Rounding of every operation")
      ->capture_default_str();
  cmd->add_option("--engine", o->head.engine,
                  "Arithmetic engine: mpfr fast auto (same bits, different speed)")
      ->capture_default_str();
  cmd->add_option("--summation", o->head.summation,
                  "Dot products: sequential pairwise wide-accumulator exact")
      ->capture_default_str();
  cmd->add_option("--accumulator", o->head.accumulator, "Accumulator format for wide-accumulator")
      ->capture_default_str();
  cmd->add_option("--algorithm", o->head.algorithm,
                  "Certified range by auto, candidates or scan (see ropesim horizon)")
      ->capture_default_str();
  add_integer_option(cmd, "--max-length", o->head.max_length,
                     "L_max of every scan (default: each head's quick limit)", 1,
                     proofs::kMaxScanLength);
  cmd->add_flag("--allow-slow", o->head.allow_slow,
                "Run a --max-length beyond the quick limit even when its estimate exceeds the "
                "budget (10 min)");
  cmd->add_option("-o,--out", o->out,
                  "Write the table to FILE (.csv .md .json .tex; every column unless --columns)");
  cmd->add_flag(
      "--json", o->json,
      "Print JSON (a list of objects, every column unless --columns) instead of the table");
  cmd->add_option("--columns", o->columns,
                  "Columns of the terminal, --out and --json: all, or a comma list (terminal "
                  "default: the main ones)");
  cmd->add_flag("--quiet", o->quiet, "No progress on stderr; with --out, nothing on stdout");
  add_jobs_option(cmd, o->jobs);
  add_shard_option(cmd, o->shard);
  return cmd;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_table_horizon(const CLI::App& cmd, TableHorizonOptions& o) {
  const TableDestination to =
      table_destination(cmd.count("--out") > 0, o.out, cmd.count("--shard") > 0, o.shard);
  // Validate every cell's arguments before measuring anything (bad input: no output).
  proofs::HorizonTableRequest request;
  request.head = o.head;
  request.formats = o.formats;
  request.g = o.g;
  request.schedules = o.schedules;
  request.k = o.k;
  request.C = o.C;
  request.realisations = o.realisations;
  const proofs::HorizonGrid grid = proofs::horizon_grid(request);
  std::vector<proofs::HorizonSpec> specs = proofs::horizon_grid_specs(grid);
  // Row i is specs[i]; a shard measures its rows only (proofs::horizon_rows: on the --jobs
  // threads, in table order).
  const std::uint64_t total_rows = specs.size();
  specs = proofs::shard_specs(std::move(specs), to.rows());
  const bool progress = !o.quiet && stderr_is_tty();
  const auto start = std::chrono::steady_clock::now();
  const auto reports = proofs::horizon_rows(
      std::move(specs), jobs_threads(o.jobs),
      [&](std::size_t done, std::size_t total, const proofs::HorizonReport& row) {
        if (!progress) return;
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::cerr << "\r"
                  << progress_line(done, total, row.format + " k=" + std::to_string(row.k), elapsed)
                  << "   " << std::flush;
      });
  if (progress) std::cerr << "\n";
  finish_table(horizon_table(reports, !grid.schedules.empty()), to, total_rows, o.json, o.quiet,
               o.columns);
  return 0;
}

}  // namespace

Action add_table_command(CLI::App& app) {
  auto* table = app.add_subcommand("table", "Generated tables (docs/tables/)");
  table->require_subcommand(1);
  auto o = std::make_shared<TableHorizonOptions>();
  CLI::App* cmd = add_table_horizon_options(table, o.get());
  const Action bounds = add_table_bounds_command(table);
  const Action rotations = add_table_rotations_command(table);
  return [cmd, o, bounds, rotations]() -> int {
    if (!cmd->parsed()) {
      const int code = bounds();
      return code >= 0 ? code : rotations();
    }
    return run_table_horizon(*cmd, *o);
  };
}

}  // namespace ropesim::cli
