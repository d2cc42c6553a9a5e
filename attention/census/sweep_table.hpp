#pragma once
/// The sweep table: the rotation census (attention/census/census.hpp, THEORY §3) of every schedule
/// × realisation × format of a grid, one row a cell, as `ropesim sweep` prints and writes it and
/// ropesim.sweep returns it (docs/CLI.md, docs/PYTHON.md). The grid is given as the CLI's flags
/// spell it (SweepRequest), parsed and checked here once for both; a shard of the table
/// (io::Shard: rows [floor((I-1)·T/N), floor(I·T/N))) runs only its rows, and the N shards'
/// rows, joined in shard order, are the rows of one run (every cell's result is independent of
/// the other cells: attention::sweep).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention/census/census.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/budget.hpp"
#include "io/shard.hpp"
#include "io/table.hpp"

namespace ropesim::attention {

/// A sweep as spelled by the CLI's flags (`ropesim sweep`) and ropesim.sweep's arguments.
struct SweepRequest {
  /// --models: preset names (comma-separated) or "all"; unset: every preset when `schedules`
  /// is unset too, none otherwise.
  std::optional<std::string> models;
  /// --schedules: schedule specs (numeric::ListKind::schedules: `single:g=1,periodic:m=2,3`).
  std::optional<std::string> schedules;
  std::string formats = "bf16,fp16,fp32,fp64";  ///< --formats (ranges such as p=4..8,e=5 too)
  std::string realisations = "r1,r2,hf";        ///< --realizations
  std::string rounding = "nearest-even";        ///< --rounding, of every step (THEORY §2.1)
  std::string engine = "auto";                  ///< --engine: mpfr fast auto (same bits)
  std::uint64_t positions = 65536;              ///< --positions: N, positions 0..N-1
  std::optional<std::uint64_t> max_period;      ///< --max-period: P_max (default N/2)
};

/// The schedules of a census grid from --models (preset names or "all") and --schedules
/// (specs): every preset when neither is given. Throws InvalidArgument naming the flag for an
/// unknown preset, a bad spec, or an item listed twice.
std::vector<Schedule> grid_schedules(const std::string& models, const std::string& schedules);

/// The grid of `request`, checked as `ropesim sweep` checks it, in this order: --models or
/// --schedules given but empty, the census limits (check_census_limits: N in 2..2^31, P_max in
/// 1..N-1), --rounding, --engine, the schedules (grid_schedules), --formats (each parsed, no
/// format twice under two spellings), --realizations (each parsed), and an empty grid. Throws
/// InvalidArgument with one line naming the flag and the accepted values.
SweepGrid sweep_grid(const SweepRequest& request);

/// The census options of `request` on `threads` worker threads (≥ 1; results do not depend
/// on it).
CensusOptions sweep_options(const SweepRequest& request, unsigned threads);

/// T, the rows of the whole table: |schedules| × |realisations| × |formats|.
std::uint64_t sweep_rows(const SweepGrid& grid);

/// Refuses, with BudgetExceeded naming --positions and the estimate, a shard whose cells'
/// census_work exceeds 30 minutes or 8 GiB (the default sweep, about 3 minutes, always fits),
/// unless `allow_slow`. A shard counts its own rows only (as `--shard` does).
void check_sweep_budget(const SweepGrid& grid, const CensusOptions& options, const io::Shard& shard,
                        bool allow_slow);

/// The warnings of running `grid` up to position N-1 (attention::longrope_factor_warning of
/// each schedule, in grid order; empty when none applies).
std::vector<std::string> sweep_warnings(const SweepGrid& grid, std::uint64_t positions);

/// The rows of the cells (attention::sweep's results, in grid order) as the sweep table:
/// columns schedule, realization, format, rounding, positions, distinct, largest_class,
/// largest_class_position, first_repeat ([earlier, later] or null), periodic, period, witnessed
/// (how many P in 1..P_max have a witness; null when periodic), max_period, max_witness,
/// max_witness_period, blocks, periodic_blocks (blocks with a period ≤ N/2 of their own:
/// component periodicity, THEORY §3 Def 2.1), min_block_distinct, overflow_positions,
/// first_overflow, nan_positions, first_nan, note (why a realisation does not apply; every
/// census column null then). The terminal shows schedule … first_nan's main columns.
io::Table sweep_table(const std::vector<CensusResult>& cells, numeric::Rounding rounding);

/// Shard `shard` of the sweep of `grid` (Shard{1, 1}: the whole table): attention::sweep of
/// the shard's cells, then sweep_table. `progress` counts the shard's cells.
io::Table sweep_shard_table(const SweepGrid& grid, const CensusOptions& options,
                            const io::Shard& shard, const CensusProgress& progress = {});

}  // namespace ropesim::attention
