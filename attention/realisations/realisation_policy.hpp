#pragma once
/// The text that names one realised rotation table (a schedule, a realisation, F, its rounding
/// and engine) parsed with one-line errors that name the option as the CLI spells it. Shared
/// by the CLI (`rotations`, `table rotations`, `plot error`) and the Python module
/// (rotation_table, census), so both refuse the same input with the same line.
#include <string>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "numeric/format_binding.hpp"

namespace ropesim::attention {

/// The text of the options; defaults are the CLI's.
struct RealisationArguments {
  std::string schedule;                   ///< --schedule: schedule spec or model preset
  std::string realisation = "r1";         ///< --realization
  std::string format = "fp32";            ///< --format: F (r1-r3) or activation format (pipelines)
  std::string rounding = "nearest-even";  ///< --rounding of every step
  std::string engine = "auto";            ///< --engine: mpfr, fast or auto
};

/// The schedule and F's arithmetic that the options name.
struct RealisationPolicy {
  Schedule schedule;
  numeric::FormatBinding binding;
};

/// Parses, in this order, --rounding, --format, --schedule and --engine; throws
/// InvalidArgument "<flag>: <reason>" for the first that is refused.
RealisationPolicy parse_realisation_policy(const RealisationArguments& a);

/// Parses --realization under `policy`'s binding and checks that it applies to the schedule
/// (check_applicable); throws InvalidArgument "--realization: <reason>".
Realisation parse_applicable_realisation(const RealisationArguments& a,
                                         const RealisationPolicy& policy);

}  // namespace ropesim::attention
