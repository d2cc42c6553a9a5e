#include "attention/realisations/realisation_policy.hpp"

#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"

namespace ropesim::attention {

RealisationPolicy parse_realisation_policy(const RealisationArguments& a) {
  const auto mode = with_context("--rounding", [&] { return numeric::parse_rounding(a.rounding); });
  const auto format = with_context("--format", [&] { return numeric::parse_format(a.format); });
  auto schedule = with_context("--schedule", [&] { return parse_schedule(a.schedule); });
  const numeric::Engine* engine =
      with_context("--engine", [&] { return &numeric::engine_by_name(a.engine); });
  return {std::move(schedule), numeric::FormatBinding{format, mode, engine}};
}

Realisation parse_applicable_realisation(const RealisationArguments& a,
                                         const RealisationPolicy& policy) {
  auto realisation = with_context("--realization",
                                  [&] { return parse_realisation(a.realisation, policy.binding); });
  with_context("--realization", [&] {
    check_applicable(policy.schedule, realisation);
    return 0;
  });
  return realisation;
}

}  // namespace ropesim::attention
