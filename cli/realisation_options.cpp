// The flags that name one realised rotation table (see realisation_options.hpp).
#include "cli/realisation_options.hpp"

#include "cli/commands.hpp"
#include "numeric/engine.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/format.hpp"

namespace ropesim::cli {

void add_realisation_options(CLI::App* cmd, RealisationArguments& a) {
  cmd->add_option("--realization,--realisation", a.realisation,
                  "r1 r2 r3 hf llamacpp-cpu llamacpp-cuda pipeline:...")
      ->capture_default_str();
  cmd->add_option("--format", a.format, "Number format F (r1-r3) or activation format (pipelines)")
      ->capture_default_str();
  cmd->add_option("--rounding", a.rounding, "Rounding of every step")->capture_default_str();
  cmd->add_option("--engine", a.engine,
                  "Arithmetic engine: mpfr fast auto (same bits, different speed)")
      ->capture_default_str();
}

RealisationPolicy parse_realisation_policy(const RealisationArguments& a) {
  const auto mode = with_context("--rounding", [&] { return numeric::parse_rounding(a.rounding); });
  const auto format = with_context("--format", [&] { return numeric::parse_format(a.format); });
  auto schedule = with_context("--schedule", [&] { return attention::parse_schedule(a.schedule); });
  const numeric::Engine* engine =
      with_context("--engine", [&] { return &numeric::engine_by_name(a.engine); });
  return {std::move(schedule), numeric::FormatBinding{format, mode, engine}};
}

attention::Realisation parse_applicable_realisation(const RealisationArguments& a,
                                                    const RealisationPolicy& policy) {
  auto realisation = with_context(
      "--realization", [&] { return attention::parse_realisation(a.realisation, policy.binding); });
  with_context("--realization", [&] {
    attention::check_applicable(policy.schedule, realisation);
    return 0;
  });
  return realisation;
}

}  // namespace ropesim::cli
