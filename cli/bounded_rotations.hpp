#pragma once
/// `ropesim rotations` and `ropesim horizon` with a bounded-error cos_sin step (
/// attention/census/bounded_census.hpp, proofs/range/bounded_range.hpp): the census interval and
/// the certified range over every implementation within the model. Kept apart from
/// rotations_command.cpp and horizon_command.cpp, which only dispatch here.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "attention/schedules/schedule.hpp"
#include "cli/horizon_common.hpp"
#include "numeric/format_binding.hpp"
#include "proofs/range/bounded_horizon.hpp"

namespace ropesim::cli {

/// What the rotations command passes on.
struct BoundedRotationsRequest {
  std::string realisation;
  std::uint64_t start = 0, positions = 0;
  bool json = false;
  std::string out;  ///< also write the JSON (with provenance) here when not empty
};

/// Runs the bounded census and prints it (text or --json); returns the exit code 0. Refuses
/// (InvalidArgument, one line naming the flag) the options a bounded census does not take:
/// --position, --certificate, --axis, --at, --max-period, --witnesses.
int bounded_rotations(const CLI::App& cmd, const attention::Schedule& schedule,
                      const numeric::FormatBinding& binding,
                      const BoundedRotationsRequest& request);

/// `ropesim horizon --realization pipeline:...;cos_sin=fp32:MODEL`: runs proofs::bounded_horizon
/// (the :cr horizon, then the range every implementation certifies at its C). Prints both (text or
/// --json; --out FILE.json also writes the JSON with provenance). Refuses --certificate,
/// --simulate, --simulate-length (one line naming the flag). Returns 0.
int bounded_horizon(const CLI::App& cmd, const HeadArguments& arguments, bool json,
                    const std::string& out);

/// The readable report of proofs::bounded_horizon: both ranges, the first doubtful query.
std::string bounded_horizon_text(const proofs::BoundedHorizonReport& report);

}  // namespace ropesim::cli
