#include "proofs/range/horizon_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/parallel.hpp"
#include "numeric/spec_lists.hpp"

namespace ropesim::proofs {

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

}  // namespace

io::Table horizon_table(const std::vector<HorizonReport>& reports,
                        std::optional<bool> schedule_heads) {
  io::Table t;
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
    t.json_extra.push_back(to_json(r));
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

namespace {

/// horizon_spec(a), its error naming the list flag rather than the single-head one.
HorizonSpec cell_spec(const HorizonArguments& a) {
  try {
    return horizon_spec(a);
  } catch (const InvalidArgument& e) {
    std::string what = e.what();
    for (const auto& [single, list] :
         std::vector<std::pair<std::string, std::string>>{{"--format:", "--formats:"},
                                                          {"--realization:", "--realizations:"},
                                                          {"--schedule:", "--schedules:"}}) {
      if (what.rfind(single, 0) == 0) what = list + what.substr(single.size());
    }
    throw InvalidArgument(what);
  }
}

}  // namespace

HorizonGrid horizon_grid(const HorizonTableRequest& request) {
  using numeric::ListKind;
  using numeric::split_unique;
  HorizonGrid grid;
  grid.head = request.head;
  grid.formats = split_unique(request.formats, "--formats", ListKind::formats);
  if (request.schedules.empty()) grid.gs = split_unique(request.g, "--g");
  grid.schedules = split_unique(request.schedules, "--schedules", ListKind::schedules);
  grid.ks = split_unique(request.k, "--k");
  grid.Cs = split_unique(request.C, "--C");
  grid.realisations = split_unique(request.realisations, "--realizations", ListKind::realisations);
  return grid;
}

std::vector<HorizonSpec> shard_specs(std::vector<HorizonSpec> specs, const io::Shard& shard) {
  const std::uint64_t total = specs.size();
  std::vector<HorizonSpec> mine;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (shard.owns(i, total)) mine.push_back(std::move(specs[i]));
  }
  return mine;
}

std::vector<HorizonSpec> horizon_grid_specs(const HorizonGrid& grid) {
  const bool by_schedule = !grid.schedules.empty();
  if (grid.formats.empty() || (grid.gs.empty() && !by_schedule) || grid.ks.empty() ||
      grid.Cs.empty() || grid.realisations.empty()) {
    throw InvalidArgument(
        "table horizon: the grid is empty (give --formats, --g or --schedules, --k, --C, "
        "--realizations)");
  }
  const std::size_t heads = by_schedule ? grid.schedules.size() : grid.gs.size();
  std::vector<HorizonSpec> specs;
  for (const auto& format : grid.formats) {
    for (std::size_t h = 0; h < heads; ++h) {
      for (const auto& k : grid.ks) {
        for (const auto& C : grid.Cs) {
          for (const auto& r : grid.realisations) {
            HorizonArguments a = grid.head;
            a.format = format;
            if (by_schedule) {
              a.schedule = grid.schedules[h];
            } else {
              a.g = grid.gs[h];
            }
            a.k = k;
            a.C = C;
            a.realisation = r;
            specs.push_back(cell_spec(a));
          }
        }
      }
    }
  }
  return specs;
}

std::vector<HorizonReport> horizon_rows(std::vector<HorizonSpec> specs, unsigned threads,
                                        const HorizonRowsProgress& progress) {
  if (threads == 0) throw InvalidArgument("horizon rows: threads must be at least 1, got 0");
  const unsigned row_threads =
      specs.empty()
          ? 1
          : std::max<unsigned>(
                1, threads / static_cast<unsigned>(std::min<std::size_t>(threads, specs.size())));
  for (auto& spec : specs) spec.threads = row_threads;
  std::vector<HorizonReport> reports(specs.size());
  numeric::parallel_for(
      threads, specs.size(), [&](std::size_t c) { reports[c] = horizon(specs[c]); },
      [&](std::size_t done, std::size_t c) {
        if (progress) progress(done, specs.size(), reports[c]);
      });
  return reports;
}

}  // namespace ropesim::proofs
