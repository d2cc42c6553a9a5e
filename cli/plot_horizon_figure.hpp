#pragma once
// The figure of `ropesim plot horizon` (cli/plot_horizon_command.cpp): its --data table and
// gnuplot script built from the horizon reports (proofs::horizon). Output only.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/horizon_common.hpp"
#include "cli/plot_common.hpp"
#include "cli/table.hpp"
#include "proofs/range/horizon.hpp"

namespace ropesim::cli {

/// A value beyond the y axis (drawn as an arrow at the top edge).
struct HorizonBeyond {
  int p;
  std::uint64_t k;
  bool heuristic;
  double value;
};

/// The plotted data of the reports: the --data table (one row per (k, format)), the gnuplot
/// rows per k and the k-independent rows, the flags of what is drawn, and the values beyond
/// the axis top.
struct HorizonPlotData {
  Table data;
  std::map<std::uint64_t, std::vector<std::vector<std::string>>> per_k;  // gnuplot rows by k
  std::vector<std::vector<std::string>> shared;                          // k-independent columns
  bool any_n_limit = false, any_delta_limit = false, any_tie_limit = false, any_zero = false;
  double top = 1;
  std::vector<HorizonBeyond> beyond;
};

/// The plotted data of `reports` (one per (k, format), `precisions[i]` the p of reports[i]).
HorizonPlotData horizon_plot_data(const std::vector<proofs::HorizonReport>& reports,
                                  const std::vector<int>& precisions);

/// The gnuplot script of the figure (data inline): per k N_max, the exact bound and the
/// heuristic, values beyond the axis as arrows, the tie distance and tie cap, title and axes.
/// Sorts the rows of `d` by p.
std::string horizon_plot_script(HorizonPlotData& d,
                                const std::vector<proofs::HorizonReport>& reports,
                                const std::vector<int>& precisions, const HeadArguments& head,
                                const PlotOutput& output);

}  // namespace ropesim::cli
