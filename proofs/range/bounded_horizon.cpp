#include "proofs/range/bounded_horizon.hpp"

#include <algorithm>

#include "attention/realisations/bounded_realisation.hpp"
#include "core/error.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"

namespace ropesim::proofs {

BoundedHorizonReport bounded_horizon(const HorizonArguments& arguments) {
  const numeric::FormatBinding binding{
      with_context("--format", [&] { return numeric::parse_format(arguments.format); }),
      with_context("--rounding", [&] { return numeric::parse_rounding(arguments.rounding); }),
      with_context("--engine", [&] { return &numeric::engine_by_name(arguments.engine); })};
  const auto bounded = with_context("--realization", [&] {
    return attention::parse_bounded_realisation(arguments.realisation, binding);
  });
  HorizonArguments base = arguments;
  base.realisation = bounded.base.name();
  const HorizonSpec spec = horizon_spec(base);
  BoundedHorizonReport report;
  report.correctly_rounded = horizon(spec);
  const HorizonReport& cr = report.correctly_rounded;
  report.head = spec.head;
  report.head.realisation = arguments.realisation;
  report.head.C = numeric::exact_rational(cr.C);  // the C measured, an element of F, exactly
  const std::uint64_t length = std::clamp<std::uint64_t>(
      cr.range.n_max + (cr.range.at_limit ? 0 : 1), 1, kMaxBoundedRangeLength);
  report.every_implementation =
      with_context("--realization", [&] { return bounded_certified_range(report.head, length); });
  report.model_source = bounded.model.source;
  return report;
}

nlohmann::json to_json(const BoundedHorizonReport& report) {
  nlohmann::json j;
  j["correctly_rounded"] = to_json(report.correctly_rounded);
  j["every_implementation"] = to_json(report.every_implementation);
  j["model_source"] = report.model_source;
  return j;
}

}  // namespace ropesim::proofs
