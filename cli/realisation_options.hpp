#pragma once
// The flags that name one realised rotation table, shared by the commands that realise one
// schedule (`rotations`, `table rotations`, `plot error`): --realization, --format,
// --rounding, --engine with one help text each, and their parsing with one-line errors that
// name the flag. (--schedule is added by each command: its help differs.)
#include <CLI/CLI.hpp>
#include <string>

#include "attention/realisation.hpp"
#include "attention/schedule.hpp"
#include "numeric/format_binding.hpp"

namespace ropesim::cli {

/// The text of the flags; defaults are the commands'.
struct RealisationArguments {
  std::string schedule;                   ///< --schedule: schedule spec or model preset
  std::string realisation = "r1";         ///< --realization
  std::string format = "fp32";            ///< --format: F (r1-r3) or activation format (pipelines)
  std::string rounding = "nearest-even";  ///< --rounding of every step
  std::string engine = "auto";            ///< --engine: mpfr, fast or auto
};

/// Adds --realization (alias --realisation), --format, --rounding and --engine, each with its
/// default shown in --help.
void add_realisation_options(CLI::App* cmd, RealisationArguments& a);

/// The schedule and F's arithmetic that the flags name.
struct RealisationPolicy {
  attention::Schedule schedule;
  numeric::FormatBinding binding;
};

/// Parses, in this order, --rounding, --format, --schedule and --engine; throws
/// InvalidArgument "<flag>: <reason>" for the first that is refused.
RealisationPolicy parse_realisation_policy(const RealisationArguments& a);

/// Parses --realization under `policy`'s binding and checks that it applies to the schedule
/// (attention::check_applicable); throws InvalidArgument "--realization: <reason>".
attention::Realisation parse_applicable_realisation(const RealisationArguments& a,
                                                    const RealisationPolicy& policy);

}  // namespace ropesim::cli
