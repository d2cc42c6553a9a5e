#pragma once
// The flags that name one realised rotation table, shared by the commands that realise one
// schedule (`rotations`, `table rotations`, `plot error`): --realization, --format,
// --rounding, --engine with one help text each; their parsing is
// attention/realisations/realisation_policy.hpp (one-line errors that name the flag). (--schedule
// is added by each command: its help differs.)
#include <CLI/CLI.hpp>

#include "attention/realisations/realisation_policy.hpp"

namespace ropesim::cli {

using attention::parse_applicable_realisation;
using attention::parse_realisation_policy;
using attention::RealisationArguments;
using attention::RealisationPolicy;

/// Adds --realization (alias --realisation), --format, --rounding and --engine, each with its
/// default shown in --help.
void add_realisation_options(CLI::App* cmd, RealisationArguments& a);

}  // namespace ropesim::cli
