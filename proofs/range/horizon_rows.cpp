#include "proofs/range/horizon_rows.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "numeric/parallel.hpp"

namespace ropesim::proofs {

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
