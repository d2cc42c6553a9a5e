#include "cli/bounded_rotations.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "attention/census/bounded_census.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/fast_engine.hpp"
#include "proofs/range/bounded_horizon.hpp"
#include "proofs/range/bounded_range.hpp"

namespace ropesim::cli {

int bounded_rotations(const CLI::App& cmd, const attention::Schedule& schedule,
                      const numeric::FormatBinding& binding,
                      const BoundedRotationsRequest& request) {
  for (const char* flag :
       {"--position", "--certificate", "--axis", "--at", "--max-period", "--witnesses"}) {
    if (cmd.count(flag) > 0) attention::refuse_bounded_census_option(flag);
  }
  const auto realisation = with_context("--realization", [&] {
    auto r = attention::parse_bounded_realisation(request.realisation, binding);
    attention::check_bounded_applicable(schedule, r);
    return r;
  });
  const auto census = with_context("--positions", [&] {
    return attention::bounded_census(schedule, realisation, request.start, request.positions);
  });
  nlohmann::json j = attention::to_json(census);
  if (!request.out.empty()) {
    nlohmann::json file = j;
    file["provenance"] = provenance();
    io::write_output_file(request.out, file.dump(2) + "\n");
  }
  if (request.json)
    std::cout << j.dump(2) << "\n";
  else
    std::cout << attention::to_text(census);
  return 0;
}

int bounded_horizon(const CLI::App& cmd, const HeadArguments& arguments, bool json,
                    const std::string& out) {
  for (const char* flag : {"--certificate", "--simulate", "--simulate-length"}) {
    if (cmd.count(flag) > 0) {
      throw InvalidArgument(std::string(flag) +
                            ": not available with a bounded-error cos_sin step (the range over "
                            "every implementation has no certificate or simulation yet)");
    }
  }
  if (!out.empty()) (void)output_kind_for(out, "--out", {OutputKind::json});
  const proofs::BoundedHorizonReport report = proofs::bounded_horizon(arguments);
  const nlohmann::json j = proofs::to_json(report);
  if (!out.empty()) {
    nlohmann::json file = j;
    file["provenance"] = provenance();
    io::write_output_file(out, file.dump(2) + "\n");
  }
  if (json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << bounded_horizon_text(report);
  return 0;
}

std::string bounded_horizon_text(const proofs::BoundedHorizonReport& report) {
  const auto& cr = report.correctly_rounded;
  const auto& range = report.every_implementation;
  const auto& head = report.head;
  std::string text;
  text += fmt::format("head           Y^{} on {} in {} (C = {}, {})\n", head.k, cr.schedule,
                      cr.format, cr.C.to_decimal(9), cr.C_source);
  text += fmt::format("realization    {}\n", range.realisation);
  text += fmt::format("trig model     {}{}\n", range.model,
                      report.model_source.empty() ? "" : " (" + report.model_source + ")");
  text += fmt::format("N_max :cr      {}{}\n", cr.range.n_max,
                      cr.range.at_limit ? " (at the scan limit)" : "");
  text += fmt::format(
      "N_max all      {}{}  (certified for every implementation within the model; a lower bound, "
      "exact for ulp-0)\n",
      range.n_max, range.at_limit ? " (at the scan limit)" : "");
  if (range.fail_query) {
    text += fmt::format(
        "first doubt    query i = {}: lo(S_i,{}) = {:.9g} vs hi(S_i,{}) = {:.9g} (competitor j = "
        "{}); gap {} < f_large\n",
        *range.fail_query, *range.fail_query - head.k, range.target_lo.value_or(NAN),
        range.fail_competitor.value_or(0), range.competitor_hi.value_or(NAN),
        range.fail_competitor.value_or(0),
        range.gap ? numeric::exact_decimal(*range.gap) : std::string("not finite"));
  }
  text += fmt::format("entries        {} uncertain (box of more than one value), {} undocumented\n",
                      range.uncertain_entries, range.undocumented_entries);
  return text;
}

}  // namespace ropesim::cli
