// The horizon report's text, shared by `ropesim horizon`, `plot horizon` and `construct offset`
// (cli/horizon_common.hpp); its table is proofs::horizon_table (proofs/range/horizon_rows.hpp).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "attention/realisations/bounded_realisation.hpp"
#include "attention/transformer/transformer.hpp"
#include "cli/commands.hpp"
#include "cli/horizon_common.hpp"
#include "cli/jobs.hpp"
#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/experiments/offset_simulation.hpp"
#include "proofs/reports/certificate.hpp"

namespace ropesim::cli {

namespace {

std::string value_text(const numeric::Value& v) { return v.to_decimal(9); }

}  // namespace

std::string horizon_text(const proofs::HorizonReport& r) {
  std::string out;
  const std::string head =
      r.g ? fmt::format("Y^{} head, g = {}", r.k, numeric::nearest_double(*r.g))
          : fmt::format("multi-frequency Y^{} head, {} blocks of {} (equal weights)", r.k, r.blocks,
                        r.schedule);
  out += fmt::format("head           {}; realization {} in {} ({}, {} sums)\n", head, r.realisation,
                     r.format, r.rounding, r.summation);
  out += fmt::format(
      "C              {}{}\n", value_text(r.C),
      r.auto_C ? fmt::format("  (auto: {}; {} candidates tried)", r.C_source, r.candidates.size())
               : std::string());
  out += fmt::format("f_large        {}\n", value_text(r.f_large));
  if (r.saturating)
    out += fmt::format(
        "note           {} has no infinities and saturates: an extension of THEORY §1's F\n",
        r.format);
  if (r.range.at_limit) {
    out +=
        fmt::format("N_max          >= {}  (no failing query up to i = {}; raise --max-length)\n",
                    r.range.n_max, r.range.max_length + 1);
  } else {
    std::string gap = r.range.gap
                          ? fmt::format("gap {} < f_large", numeric::exact_decimal(*r.range.gap))
                          : std::string("a score is not finite");
    out += fmt::format(
        "N_max          {}  (query i = {} fails: competitor j = {}, offset i-k-j = {}, {})\n",
        r.range.n_max, *r.range.fail_query, *r.range.fail_competitor, *r.range.fail_offset, gap);
  }
  out += fmt::format(
      "delta bound    {}{}  (largest L with C*delta_L(g) >= f_large, exact arithmetic)\n",
      r.delta_bound.at_limit ? ">= " : "", r.delta_bound.value);
  if (r.tie_distance) {
    out += fmt::format("tie distance   {}{}  (first n with round_F(cos g*n) = 1)\n",
                       r.tie_distance->at_limit ? "> " : "", r.tie_distance->value);
  } else {
    out += "tie distance   -  (1 is not in F)\n";
  }
  if (r.heuristic)
    out += fmt::format("heuristic      L <~ {:.1f}  (pi*sqrt(2C/f_large) - 1)\n", *r.heuristic);
  out += fmt::format("tie cap        L <~ {:.0f}  (pi*sqrt(2/u))\n", r.tie_cap);
  if (r.pm_ceiling)
    out += fmt::format("PM ceiling     {:.8g}  (1/eps_mach of the angle format)\n", *r.pm_ceiling);
  if (r.range.algorithm == "candidates") {
    // pipelines have no global E (THEORY §6 "Pipelines": measured key deviations)
    const std::string within =
        r.range.error_bound
            ? fmt::format("within f_large + 2E of the target (E = {:.6g})",
                          numeric::nearest_double(*r.range.error_bound))
            : std::string("(every offset: no global E, the keys' deviations measured)");
    out += fmt::format(
        "algorithm      candidates: {} offsets {}, "
        "{} of them scored exactly (the rest excluded by per-query bounds), {} scores ({})\n",
        r.range.candidate_offsets, within, r.range.offsets_scored, r.range.scores_evaluated,
        r.range.binary32_kernel ? "binary32 kernel"
        : r.range.fast_kernel   ? "binary64 kernel"
                                : "reference path");
  } else {
    out += fmt::format("scan           {} scores ({})\n", r.range.scores_evaluated,
                       r.range.fast_kernel ? "binary64 kernel" : "reference path");
  }
  return out;
}

}  // namespace ropesim::cli
