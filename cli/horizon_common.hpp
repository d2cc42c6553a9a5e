#pragma once
// Shared by `ropesim horizon`, `table horizon`, `plot horizon` and `construct offset`: the flags
// of one head (proofs::horizon_spec turns their text into a validated proofs::HorizonSpec with
// one-line errors that name the flag) and the horizon report's text (its table:
// proofs::horizon_table).
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/table.hpp"
#include "proofs/range/horizon.hpp"
#include "proofs/range/horizon_rows.hpp"
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

/// The horizon table (proofs/range/horizon_rows.hpp).
using proofs::horizon_table;

/// A multi-line readable report.
std::string horizon_text(const proofs::HorizonReport& report);

}  // namespace ropesim::cli
