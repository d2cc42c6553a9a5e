// `ropesim plot length`: accuracy against word length per schedule × format, certified lengths
// marked (proofs::length_experiment; RoPE-X §5-6).
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
#include "cli/table.hpp"
#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::cli {

namespace {

/// What `plot length --metric` draws.
enum class Metric { balanced, members, nonmembers, accuracy };

Metric parse_metric(const std::string& text) {
  if (text == "balanced") return Metric::balanced;
  if (text == "members") return Metric::members;
  if (text == "nonmembers") return Metric::nonmembers;
  if (text == "accuracy") return Metric::accuracy;
  throw InvalidArgument("--metric: '" + text +
                        "' is not a metric; accepted: balanced, members, nonmembers, accuracy");
}

/// The row's value of `metric`; nullopt where that side is empty (not drawn).
std::optional<double> metric_value(const proofs::LengthRow& row, Metric metric) {
  switch (metric) {
    case Metric::balanced:
      return row.balanced_accuracy();
    case Metric::members:
      return row.accuracy_members();
    case Metric::nonmembers:
      return row.accuracy_nonmembers();
    case Metric::accuracy:
      return row.accuracy();
  }
  return std::nullopt;
}

std::string metric_title(Metric metric) {
  switch (metric) {
    case Metric::balanced:
      return "Balanced accuracy";
    case Metric::members:
      return "Accuracy on members";
    case Metric::nonmembers:
      return "Accuracy on non-members";
    case Metric::accuracy:
      return "Accuracy on every word";
  }
  return "";
}

std::string metric_label(Metric metric) {
  switch (metric) {
    case Metric::balanced:
      return "balanced accuracy";
    case Metric::members:
      return "accuracy on members";
    case Metric::nonmembers:
      return "accuracy on non-members";
    case Metric::accuracy:
      return "accuracy (every word)";
  }
  return "";
}

/// The vertical distance between two neighbouring series (axis units).
constexpr double kOffsetStep = 0.012;

/// Every how many points a marker is drawn: about 40 markers per series.
std::string marker_interval(std::size_t points) {
  return std::to_string(std::max<std::size_t>(1, points / 40));
}

}  // namespace

CLI::App* add_plot_length(CLI::App* plot, std::function<int()>& action) {
  struct Options {
    LengthArguments args;
    PlotOutput output;
    std::string metric = "balanced";
  };
  auto o = std::make_shared<Options>();
  auto* cmd = plot->add_subcommand(
      "length",
      "Balanced accuracy (or --metric) against length per schedule x format, certified "
      "lengths marked (experiment length)");
  add_length_options(cmd, o->args);
  o->output.add_options(cmd);
  cmd->add_option("--metric", o->metric,
                  "What the y axis shows: balanced (default; mean of the members' and "
                  "non-members' accuracy), members, nonmembers or accuracy (every word tried)")
      ->capture_default_str();
  action = [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    const Metric metric = parse_metric(o->metric);
    const proofs::LengthExperimentSpec spec = length_spec(o->args);
    o->output.check(cmd);
    const auto series = run_length_experiment(spec, o->args);
    const Table data = length_table(series);

    std::string script;
    std::vector<std::string> plots;
    std::size_t drawn = 0;
    std::size_t to_draw = 0;
    for (const auto& s : series) to_draw += s.refused ? 0 : 1;
    for (std::size_t i = 0; i < series.size(); ++i) {
      const auto& s = series[i];
      if (s.refused) continue;
      // Series that agree (all at 1, say) would hide each other: each is drawn shifted by its
      // own small vertical offset, with its own marker and dash pattern (the data file keeps
      // the values).
      const double offset = series_offset(drawn, to_draw, kOffsetStep);
      std::vector<std::vector<std::string>> rows;
      for (const auto& row : s.rows) {
        const std::optional<double> v = metric_value(row, metric);
        rows.push_back(
            {std::to_string(row.length), v ? gnuplot_number(*v + offset) : std::string("NaN")});
      }
      const std::string name = fmt::format("S{}", i);
      script += rows_block(name, rows);
      const std::string title = s.schedule + " in " + s.format + " (certified " +
                                (s.certified_length ? std::to_string(*s.certified_length)
                                                    : std::string("at every length")) +
                                ")";
      plots.push_back(fmt::format(
          "${} using 1:2 with linespoints lw 1.5 dt {} pt {} ps 0.7 pi {} lc rgb '{}' title {}",
          name, drawn % 5 + 1, series_marker(drawn), marker_interval(s.rows.size()), colour(drawn),
          gnuplot_quote(title)));
      // The certified length: a dashed vertical line in the series' colour.
      if (s.certified_length && *s.certified_length <= spec.lengths.back()) {
        script += fmt::format(
            "set arrow from {0},graph 0 to {0},graph 1 nohead dt 2 lw 1.5 lc rgb '{1}' front\n",
            *s.certified_length, colour(drawn));
      }
      ++drawn;
    }
    if (drawn == 0) {
      throw InvalidArgument(
          "plot length: the compiler refused every schedule x format; nothing to draw (" +
          one_line(*series.front().refused) + ")");
    }
    // Three short title lines, so that the figure reads at --size 12cm,7cm.
    script += "set title " +
              gnuplot_lines(
                  {metric_title(metric) + " against word length: " + o->args.formula,
                   fmt::format("{} members + {} non-members per length over {}, drawn uniformly "
                               "(seed {})",
                               spec.words, spec.words, o->args.alphabet, spec.seed),
                   fmt::format("dashed: certified length; series shifted by {:g} each to stay "
                               "visible",
                               kOffsetStep)}) +
              o->output.font_at(11) + "\n";
    script += "set xlabel " + gnuplot_quote("word length N") + "\n";
    script += "set ylabel " + gnuplot_quote(metric_label(metric)) + "\n";
    script += "set yrange [-0.04:1.06]\nset grid xtics ytics lt 1 lw 1 lc rgb '#e4e4e4'\n";
    script +=
        fmt::format("set xrange [{}:{}]\n", spec.lengths.front() > 1 ? spec.lengths.front() - 1 : 0,
                    spec.lengths.back() + 1);
    // The key above the plot in two columns (below it would collide with the provenance
    // footnote at small sizes); the bottom margin (character heights) holds the tick labels, the
    // x label and the footnote.
    script += "set key above left Left reverse horizontal maxcols 2 spacing 1.1 samplen 3" +
              o->output.font_at(10) + "\n";
    script += "set bmargin 5\n";
    script += "plot ";
    for (std::size_t i = 0; i < plots.size(); ++i) script += (i ? ", \\\n     " : "") + plots[i];
    script += "\n";
    o->output.draw(script, 1400, 800);
    o->output.write_data(data);
    std::cout << length_side_note(series);
    for (const auto& s : series) {
      if (s.refused) {
        std::cout << fmt::format("{} in {}: refused: {}\n", s.schedule, s.format,
                                 one_line(*s.refused));
        continue;
      }
      std::cout << fmt::format(
          "{} in {}: certified length {}, every word right up to length {}\n", s.schedule, s.format,
          proofs::certified_length_text(s),
          s.longest_all_right ? std::to_string(*s.longest_all_right) : std::string("-"));
    }
    std::cout << "figure: " << o->output.out
              << (o->output.data.empty() ? "" : ", data: " + o->output.data) << "\n";
    return 0;
  };
  return cmd;
}

}  // namespace ropesim::cli
