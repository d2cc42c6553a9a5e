#pragma once
// Shared by `ropesim horizon`, `table horizon`, `plot horizon` and `construct offset`: the flags
// of one head (proofs::horizon_spec turns their text into a validated proofs::HorizonSpec with
// one-line errors that name the flag) and the horizon report's table and text.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/table.hpp"
#include "proofs/range/horizon.hpp"
#include "proofs/range/horizon_spec.hpp"

namespace ropesim::cli {

/// The text of the flags that describe one head; proofs::horizon_spec validates it and builds
/// the spec.
using HeadArguments = proofs::HorizonArguments;

/// Adds the options that name one head: --g, --schedule, --axis, --k, --C (horizon and
/// construct offset).
void add_head_shape_options(CLI::App* cmd, HeadArguments& a);

/// Adds the options of its arithmetic and range scan: --format, --realization, --rounding,
/// --engine, --summation, --accumulator, --algorithm, --max-length, --allow-slow.
void add_head_options(CLI::App* cmd, HeadArguments& a);

/// The horizon table (one row per report) with the columns of docs/tables/horizon.md.
/// `schedule_heads`: the rows are multi-frequency heads (the g column holds schedule names,
/// left-aligned in LaTeX); unset, read from the first report (a run that may have no rows,
/// a shard, says it, so that its alignment matches the other shards').
Table horizon_table(const std::vector<proofs::HorizonReport>& reports,
                    std::optional<bool> schedule_heads = std::nullopt);

/// A multi-line readable report.
std::string horizon_text(const proofs::HorizonReport& report);

}  // namespace ropesim::cli
