#pragma once
/// The rows of `ropesim table horizon` (docs/tables/horizon.md) and ropesim.table_horizon: one
/// horizon report (proofs/range/horizon.hpp, THEORY §6) per cell of the grid formats × heads (g or
/// schedules) × k × C × realisations, validated cell by cell before any is measured, then
/// measured on threads, and laid out as the table (horizon_table). A shard of the table
/// (io::Shard) measures only its rows: a report depends on its cell alone.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/shard.hpp"
#include "io/table.hpp"
#include "proofs/range/horizon.hpp"
#include "proofs/range/horizon_spec.hpp"

namespace ropesim::proofs {

/// The grid: every list non-empty (heads: `gs`, or `schedules` when it is not empty).
struct HorizonGrid {
  HorizonArguments head;  ///< the arguments shared by every cell (rounding, engine, ...)
  std::vector<std::string> formats, gs, schedules, ks, Cs, realisations;
};

/// A grid as `ropesim table horizon`'s flags spell it (and ropesim.table_horizon's arguments):
/// comma lists, each item once. The defaults are the CLI's.
struct HorizonTableRequest {
  std::string formats = "fp8e5m2,bf16,fp16,tf32,fp32";  ///< --formats (ranges such as p=4..8,e=5)
  std::string g = "1";        ///< --g: frequencies (exact decimals or P/Q); unused with `schedules`
  std::string schedules;      ///< --schedules: multi-frequency heads instead of --g ("": none)
  std::string k = "1,2,4,8";  ///< --k: offsets
  std::string C = "auto";     ///< --C: scales, or "auto"
  std::string realisations = "r1";  ///< --realizations
  HorizonArguments head;  ///< --rounding --engine --summation --accumulator --algorithm ...
};

/// The grid of `request`: each list split (numeric::split_unique, an item given twice refused
/// naming its flag; formats expanded, schedules split as --schedules splits them), `gs` empty
/// when `schedules` is given. Throws InvalidArgument naming the flag.
HorizonGrid horizon_grid(const HorizonTableRequest& request);

/// The specs of shard `shard`'s rows, in order: specs[i] for the i it owns (io::Shard: the
/// rows [floor((I-1)·T/N), floor(I·T/N)) of the T = specs.size()); Shard{1, 1}: every spec.
std::vector<HorizonSpec> shard_specs(std::vector<HorizonSpec> specs, const io::Shard& shard);

/// The HorizonSpec of every cell in table order (format, head, k, C, realisation; the last
/// varying fastest), each validated by horizon_spec. Throws InvalidArgument for an empty grid
/// ("table horizon: the grid is empty (...)") and for a bad cell, with horizon_spec's line
/// naming the list flag ("--formats: ...", "--realizations: ...", "--schedules: ...").
std::vector<HorizonSpec> horizon_grid_specs(const HorizonGrid& grid);

/// Progress of horizon_rows: (rows done, rows total, the row just measured). Called from the
/// calling thread only (numeric::parallel_for).
using HorizonRowsProgress =
    std::function<void(std::size_t done, std::size_t total, const HorizonReport& row)>;

/// horizon(specs[i]) for every i, in order, on `threads` threads (≥ 1): the rows run in
/// parallel, each row's position chunks (HorizonSpec::threads) on the threads left over when
/// there are fewer rows than threads. The reports do not depend on `threads`.
std::vector<HorizonReport> horizon_rows(std::vector<HorizonSpec> specs, unsigned threads,
                                        const HorizonRowsProgress& progress = {});

/// The horizon table (one row per report) with the columns of docs/tables/horizon.md: format,
/// g, k, realization, C, f_large, n_max, fail_query, fail_competitor, offset, gap, delta_bound,
/// tie_distance, heuristic, tie_cap, pm_ceiling (the JSON view adds every key of to_json(report)
/// per row; the LaTeX view prints the paper's numbers with notes). `schedule_heads`: the rows
/// are multi-frequency heads (the g column holds schedule names, left-aligned in LaTeX); unset,
/// read from the first report (a run that may have no rows, a shard, says it, so that its
/// alignment matches the other shards'). Used by `ropesim horizon`, `table horizon`, `plot
/// horizon` and ropesim.table_horizon.
io::Table horizon_table(const std::vector<HorizonReport>& reports,
                        std::optional<bool> schedule_heads = std::nullopt);

}  // namespace ropesim::proofs
