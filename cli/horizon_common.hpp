#pragma once
// Shared by `ropesim horizon` and `ropesim table horizon`: turning flags into a
// proofs::HorizonSpec with one-line errors that name the flag (STYLE "Errors").
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/table.hpp"
#include "proofs/horizon.hpp"

namespace ropesim::cli {

/// The flags that describe one head.
struct HeadArguments {
  std::string g = "1";   ///< --g (exact decimal); ignored when schedule is set
  std::string schedule;  ///< --schedule (multi-frequency head)
  /// --axis: a multi-axis schedule's head along this axis, the others at 0
  /// (attention::along_axis); required for a multi-axis --schedule.
  std::string axis;
  std::string k = "1";             ///< --k
  std::string C = "auto";          ///< --C: exact decimal or "auto"
  std::string format = "fp32";     ///< --format
  std::string realisation = "r1";  ///< --realization
  std::string rounding = "nearest-even";
  std::string summation = "sequential";
  std::string accumulator = "fp32";
  std::string algorithm = "auto";  ///< --algorithm auto|candidates|scan
  std::string engine = "auto";     ///< --engine: mpfr, fast or auto (same results, different speed)
  std::optional<std::uint64_t> max_length;  ///< --max-length
  bool allow_slow = false;                  ///< --allow-slow
  /// --jobs resolved: only the estimate in a refusal of --max-length depends on it
  unsigned threads = 1;
};

/// Adds the options that name one head: --g, --schedule, --axis, --k, --C (horizon and
/// construct offset).
void add_head_shape_options(CLI::App* cmd, HeadArguments& a);

/// Adds the options of its arithmetic and range scan: --format, --realization, --rounding,
/// --engine, --summation, --accumulator, --algorithm, --max-length, --allow-slow.
void add_head_options(CLI::App* cmd, HeadArguments& a);

/// Validates the arguments (each error names its flag) and returns the spec. Checks, in
/// order: --engine, --rounding, --summation, --accumulator, --format, --g/--schedule, --k ≥ 1,
/// --realization (known and applicable), f_large(F) defined (--rounding), --C (auto or a
/// positive decimal finite in F), --algorithm (auto|candidates|scan; candidates only where it
/// applies), --max-length within the algorithm's quick limit unless --allow-slow
/// (fast_range_length_limit for the candidate algorithm, scan_length_limit for the scan).
proofs::HorizonSpec horizon_spec(const HeadArguments& a);

/// The horizon table (one row per report) with the columns of docs/tables/horizon.md.
Table horizon_table(const std::vector<proofs::HorizonReport>& reports);

/// A multi-line readable report.
std::string horizon_text(const proofs::HorizonReport& report);

}  // namespace ropesim::cli
