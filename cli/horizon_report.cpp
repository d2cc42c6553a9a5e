// The horizon report's table (docs/tables/horizon.md) and text, shared by `ropesim horizon`,
// `table horizon`, `plot horizon` and `construct offset` (cli/horizon_common.hpp).
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

nlohmann::json number_cell(const std::optional<double>& d, int digits) {
  if (!d || !std::isfinite(*d)) return nullptr;
  return fmt::format("{:.{}g}", *d, digits);
}

/// The name a paper prints for a schedule: an hf-config schedule (`hf-config:PATH`,
/// `hf-config[seq_len=N]:PATH`) by its file's stem, or its directory's name when the file is
/// called config.json as Hugging Face's are; other specs (presets, inline schedules) as given.
std::string schedule_short_name(const std::string& spec) {
  if (spec.rfind("hf-config", 0) != 0) return spec;
  const std::size_t bracket = spec.find(']');
  const std::size_t colon = spec.find(':', bracket == std::string::npos ? 0 : bracket);
  if (colon == std::string::npos) return spec;
  const std::filesystem::path path(spec.substr(colon + 1));
  const std::string stem = path.stem().string();
  const std::string directory = path.parent_path().filename().string();
  if (stem == "config" && !directory.empty() && directory != "." && directory != "..")
    return directory;
  return stem.empty() ? spec : stem;
}

/// The LaTeX cell of a number the other views print with a remark: `number` alone, `note`
/// listed under the table (Table::latex_cells).
nlohmann::json noted(const nlohmann::json& number, const std::string& note) {
  return {{"cell", number}, {"note", note}};
}

/// The `--simulate` line of the readable report.

}  // namespace

Table horizon_table(const std::vector<proofs::HorizonReport>& reports,
                    std::optional<bool> schedule_heads) {
  Table t;
  t.columns = {"format",       "g",          "k",
               "realization",  "C",          "f_large",
               "n_max",        "fail_query", "fail_competitor",
               "offset",       "gap",        "delta_bound",
               "tie_distance", "heuristic",  "tie_cap",
               "pm_ceiling"};
  t.terminal_columns = {
      "format",          "g",   "k",           "realization",  "C",        "f_large", "n_max",
      "fail_competitor", "gap", "delta_bound", "tie_distance", "heuristic"};
  // g holds a frequency, or a schedule's name in the rows of multi-frequency heads (a run
  // has one kind or the other: table horizon's --g and --schedules exclude each other).
  const bool schedules = schedule_heads ? *schedule_heads : !reports.empty() && !reports.front().g;
  t.numeric_columns = {
      "k",   "C",           "f_large",      "n_max",     "fail_query", "fail_competitor", "offset",
      "gap", "delta_bound", "tie_distance", "heuristic", "tie_cap",    "pm_ceiling"};
  if (!schedules) t.numeric_columns.push_back("g");
  for (const auto& r : reports) {
    auto at_limit = [](std::uint64_t v, bool limit) -> nlohmann::json {
      if (limit) return ">=" + std::to_string(v);
      return v;
    };
    nlohmann::json g = r.g ? nlohmann::json(fmt::format("{}", numeric::nearest_double(*r.g)))
                           : nlohmann::json(r.schedule);
    nlohmann::json tie = nullptr;
    if (r.tie_distance)
      tie = r.tie_distance->at_limit ? nlohmann::json(">" + std::to_string(r.tie_distance->value))
                                     : nlohmann::json(r.tie_distance->value);
    const nlohmann::json C = r.auto_C ? nlohmann::json(value_text(r.C) + " (" + r.C_source + ")")
                                      : nlohmann::json(value_text(r.C));
    t.rows.push_back(
        {r.format, g, r.k, r.realisation, C, value_text(r.f_large),
         at_limit(r.range.n_max, r.range.at_limit),
         r.range.fail_query ? nlohmann::json(*r.range.fail_query) : nlohmann::json(nullptr),
         r.range.fail_competitor ? nlohmann::json(*r.range.fail_competitor)
                                 : nlohmann::json(nullptr),
         r.range.fail_offset ? nlohmann::json(*r.range.fail_offset) : nlohmann::json(nullptr),
         r.range.gap ? nlohmann::json(fmt::format("{:.6g}", numeric::nearest_double(*r.range.gap)))
                     : nlohmann::json(nullptr),
         at_limit(static_cast<std::uint64_t>(r.delta_bound.value), r.delta_bound.at_limit), tie,
         number_cell(r.heuristic, 6), number_cell(r.tie_cap, 6), number_cell(r.pm_ceiling, 8)});
    t.json_extra.push_back(proofs::to_json(r));
    // The paper's view (LaTeX): numbers alone, their remarks as notes under the table, the
    // schedule by its short name.
    nlohmann::json paper = nlohmann::json::object();
    if (!r.g) paper["g"] = {{"cell", schedule_short_name(r.schedule)}};
    if (r.auto_C) {
      paper["C"] = noted(
          value_text(r.C),
          r.C_source.rfind("record", 0) == 0
              ? "$C$ chosen by \\texttt{--C auto}: $f_{\\mathrm{large}}/\\delta_n$ rounded up "
                "into the format at a record distance $n$ of the ideal score (the distance is "
                "in the CSV and JSON outputs)"
              : "$C$ chosen by \\texttt{--C auto}: a power of two");
    }
    if (r.range.at_limit) {
      paper["n_max"] = noted(r.range.n_max,
                             "a lower bound: no query fails up to the scan limit $L_{\\max}$ "
                             "(\\texttt{--max-length})");
    }
    if (r.delta_bound.at_limit) {
      paper["delta_bound"] = noted(static_cast<std::uint64_t>(r.delta_bound.value),
                                   "a lower bound: $C\\delta_L \\geq f_{\\mathrm{large}}$ holds "
                                   "up to the end of the search");
    }
    if (r.tie_distance && r.tie_distance->at_limit) {
      paper["tie_distance"] =
          noted(r.tie_distance->value, "more than this: no tie up to the end of the search");
    }
    t.latex_cells.push_back(std::move(paper));
  }
  return t;
}

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
    out += fmt::format(
        "algorithm      candidates: {} offsets within f_large + 2E of the target (E = {:.6g}), "
        "{} of them scored exactly (the rest excluded by per-query bounds), {} scores ({})\n",
        r.range.candidate_offsets,
        r.range.error_bound ? numeric::nearest_double(*r.range.error_bound) : 0.0,
        r.range.offsets_scored, r.range.scores_evaluated,
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
