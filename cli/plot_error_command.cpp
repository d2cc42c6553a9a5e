// `ropesim plot error`: the realised-rotation error over positions × blocks
// (attention::query_position; NUMERIC §4, GPT-NeoX #1003).
// Output only (STYLE): this file gathers library results into tables and gnuplot scripts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "attention/census/census.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "cli/commands.hpp"
#include "cli/experiment_common.hpp"
#include "cli/gnuplot.hpp"
#include "cli/horizon_common.hpp"
#include "cli/jobs.hpp"
#include "cli/plot_common.hpp"
#include "cli/progress.hpp"
#include "cli/realisation_options.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::cli {

namespace {

/// The largest grid the heat map draws (positions × blocks): gnuplot reads every cell from the
/// script, and the CSV has a row per cell.
constexpr std::uint64_t kMaxErrorCells = std::uint64_t{1} << 20;

}  // namespace

namespace {

struct PlotErrorOptions {
  RealisationArguments realised;
  std::uint64_t positions = 2048;
  PlotOutput output;
  ProgressChoice progress = ProgressChoice::automatic;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_plot_error_options(CLI::App* plot, PlotErrorOptions* o) {
  auto* cmd = plot->add_subcommand("error",
                                   "Heat map of the realised-rotation error max(|cos^ - cos|, "
                                   "|sin^ - sin|) over positions x blocks");
  cmd->add_option("--schedule", o->realised.schedule, "Schedule spec or model preset")->required();
  add_realisation_options(cmd, o->realised);
  add_integer_option(cmd, "--positions", o->positions, "N: positions 0..N-1", 1, 1048576)
      ->capture_default_str();
  o->output.add_options(cmd);
  add_progress_flags(cmd, o->progress);
  return cmd;
}

/// Per cell (position, block) the absolute difference of the realised (table-format) cos and
/// sin from the exact ones, and what the figure and the summary need of them.
struct ErrorMap {
  Table data;                              ///< one row per cell
  std::string cells = "$E << EOD\n";       ///< the gnuplot data block
  double worst = -1, smallest = INFINITY;  ///< largest error, smallest positive error
  std::uint64_t worst_position = 0, worst_block = 0, not_finite = 0;
  std::optional<std::uint64_t> first_not_finite;
  std::string worst_cos, worst_sin;
  double worst_exact_cos = 0, worst_exact_sin = 0;
  std::string table_format;
};

/// The error map over positions 0..positions-1 (attention::query_position per position).
ErrorMap gather_errors(const attention::Schedule& schedule,
                       const attention::Realisation& realisation, std::uint64_t positions,
                       ProgressChoice choice) {
  // Gather: per cell the absolute differences of the realised (table-format) values from the
  // exact cos and sin that query_position reports (doubles accurate far below an ulp of F).
  ErrorMap m;
  m.data.columns = {"position",  "block",        "cos_exact", "cos_realised",
                    "sin_exact", "sin_realised", "error"};
  ProgressReporter progress(choice, "plot error " + realisation.name());
  for (std::uint64_t i = 0; i < positions; ++i) {
    progress.update(i, positions, "positions");
    const auto report = attention::query_position(schedule, realisation, i);
    m.table_format = report.table_format.name;
    for (const auto& b : report.blocks) {
      // against s·(cos, sin) when the realisation carries the attention factor s
      const double cos_error = std::abs(b.cos.to_double() - b.reference_cos);
      const double sin_error = std::abs(b.sin.to_double() - b.reference_sin);
      const bool finite = std::isfinite(cos_error) && std::isfinite(sin_error);
      const double error = finite ? std::max(cos_error, sin_error) : std::nan("");
      if (!finite) {
        ++m.not_finite;
        if (!m.first_not_finite) m.first_not_finite = i;
      }
      if (finite && error > 0) m.smallest = std::min(m.smallest, error);
      if (finite && error > m.worst) {
        m.worst = error;
        m.worst_position = i;
        m.worst_block = b.block;
        m.worst_cos = b.cos.to_decimal(9);
        m.worst_sin = b.sin.to_decimal(9);
        m.worst_exact_cos = b.reference_cos;
        m.worst_exact_sin = b.reference_sin;
      }
      m.data.rows.push_back(
          {i, b.block, fmt::format("{:.17g}", b.reference_cos), b.cos.to_decimal(17),
           fmt::format("{:.17g}", b.reference_sin), b.sin.to_decimal(17),
           finite ? nlohmann::json(fmt::format("{:.17g}", error)) : nlohmann::json(nullptr)});
      m.cells += fmt::format("{} {} {}\n", i, b.block, finite ? gnuplot_number(error) : "NaN");
    }
  }
  progress.update(positions, positions, "positions");
  progress.finish();
  m.cells += "EOD\n";
  return m;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_plot_error(const CLI::App& cmd, PlotErrorOptions& o) {
  o.output.check(&cmd);
  const RealisationPolicy policy = parse_realisation_policy(o.realised);
  const attention::Schedule& schedule = policy.schedule;
  const numeric::Rounding mode = policy.binding.rounding;
  auto realisation = parse_applicable_realisation(o.realised, policy);
  const std::uint64_t blocks = schedule.blocks.size();
  if (blocks == 0)
    throw InvalidArgument("--schedule: '" + o.realised.schedule + "' has no rotary block to draw");
  if (o.positions * blocks > kMaxErrorCells) {
    throw InvalidArgument(fmt::format(
        "--positions: {} positions × {} blocks = {} cells; the heat map draws at most {} "
        "(use at most {} positions)",
        o.positions, blocks, o.positions * blocks, kMaxErrorCells, kMaxErrorCells / blocks));
  }
  warn_about_schedule(schedule, o.positions - 1);
  ErrorMap m = gather_errors(schedule, realisation, o.positions, o.progress);
  Table& data = m.data;
  const std::string& cells = m.cells;
  const double worst = m.worst, smallest = m.smallest;
  const std::uint64_t worst_position = m.worst_position, worst_block = m.worst_block,
                      not_finite = m.not_finite;
  const std::optional<std::uint64_t>& first_not_finite = m.first_not_finite;
  const std::string &worst_cos = m.worst_cos, &worst_sin = m.worst_sin;
  const double worst_exact_cos = m.worst_exact_cos, worst_exact_sin = m.worst_exact_sin;
  const std::string& table_format = m.table_format;
  // On the log colour scale a zero error has no colour: drawn white (the background).
  std::string script = cells;
  script +=
      "set title " +
      gnuplot_lines({"Realised-rotation error max(|cos realised − cos exact|, |sin realised − "
                     "sin exact|) per "
                     "position and block",
                     fmt::format("{}, realisation {} in {} ({})", schedule.spec, realisation.name(),
                                 table_format, numeric::to_string(mode))}) +
      o.output.font_at(13) + "\n";
  script += "set xlabel " + gnuplot_quote("position i (tokens, BOS = 0)") + "\n";
  script +=
      "set ylabel " + gnuplot_quote("block d (0-based frequency index; θ_d decreasing)") + "\n";
  if (worst > 0) {
    script += "set cblabel " +
              gnuplot_quote(not_finite ? "absolute error (log scale; white: exact or not finite)"
                                       : "absolute error (log scale; white: exact)") +
              "\n";
    script += "set logscale cb 10\nset format cb '1e%L'\n";
    // Whole decades around the errors (gnuplot draws nothing when the range is one value).
    const double lo = std::pow(10.0, std::floor(std::log10(smallest)));
    double hi = std::pow(10.0, std::ceil(std::log10(worst)));
    if (hi <= lo) hi = lo * 10;
    script += fmt::format("set cbrange [{}:{}]\n", gnuplot_number(lo), gnuplot_number(hi));
  } else {  // every finite cell is exact: nothing to put on a log scale
    script += "set cblabel " + gnuplot_quote("absolute error (every finite cell is exact)") + "\n";
    script += "set cbrange [0:1]\n";
  }
  script +=
      "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')\n";
  script +=
      fmt::format("set xrange [-0.5:{}]\nset yrange [-0.5:{}]\n", o.positions - 0.5, blocks - 0.5);
  if (blocks <= 32) script += "set ytics 1\n";
  script +=
      "set tics out\nset bmargin 6\nunset key\nset style textbox opaque fillcolor rgb '#ffffff' "
      "noborder\n";
  if (worst > 0) {
    script += fmt::format(
        "set object 1 circle at {},{} size screen 0.012 front fs empty border lc rgb '#ff0000' "
        "lw 2\n",
        worst_position, worst_block);
    script +=
        "set label 1 " +
        gnuplot_quote(
            fmt::format("max {:.4g} at i = {}, block {}", worst, worst_position, worst_block)) +
        fmt::format(" at {},{} offset 1,{} {} front boxed textcolor rgb '#ff0000'{}\n",
                    worst_position, worst_block, worst_block + 1 < blocks ? 1 : -1,
                    static_cast<double>(worst_position) > 0.7 * static_cast<double>(o.positions)
                        ? "right"
                        : "left",
                    o.output.font_at(11));
  }
  // 1/0 (undefined) leaves a cell white; NaN would make gnuplot drop the whole image.
  script += worst > 0 ? "plot $E using 1:2:($3 > 0 ? $3 : 1/0) with image\n"
                      : "plot $E using 1:2:($3 == $3 ? $3 : 1/0) with image\n";
  o.output.draw(script, 1400, 700);
  o.output.write_data(data);
  std::cout << fmt::format(
      "schedule {}  realization {}  table format {}  rounding {}  positions 0..{}  blocks {}\n",
      schedule.spec, realisation.name(), table_format, numeric::to_string(mode), o.positions - 1,
      blocks);
  if (worst >= 0) {
    std::cout << fmt::format(
        "max error     {:.9g} at position {}, block {} (cos exact {:.9g}, realised {}; sin exact "
        "{:.9g}, realised "
        "{})\n",
        worst, worst_position, worst_block, worst_exact_cos, worst_cos, worst_exact_sin, worst_sin);
  }
  std::cout << fmt::format(
      "not finite    {} cells{}\n", not_finite,
      first_not_finite ? fmt::format(" (first at position {})", *first_not_finite) : "");
  std::cout << "figure: " << o.output.out
            << (o.output.data.empty() ? "" : ", data: " + o.output.data) << "\n";
  return 0;
}

}  // namespace

CLI::App* add_plot_error(CLI::App* plot, std::function<int()>& action) {
  auto o = std::make_shared<PlotErrorOptions>();
  CLI::App* cmd = add_plot_error_options(plot, o.get());
  action = [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_plot_error(*cmd, *o);
  };
  return cmd;
}

}  // namespace ropesim::cli
