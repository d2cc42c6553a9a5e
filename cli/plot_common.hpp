#pragma once
// What every `ropesim plot` subcommand shares (plot_command.cpp registers them; one file per
// figure: plot_horizon_command.cpp, plot_rotations_command.cpp, plot_error_command.cpp,
// plot_length_command.cpp, plot_separation_command.cpp): the output flags and the gnuplot data
// helpers. CLI only.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cli/gnuplot.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "io/files.hpp"

namespace ropesim::cli {

/// The output flags every plot has: --out FIGURE (.svg/.png/.pdf), --data TABLE.csv, the
/// figure's --size, --font and --no-footnote, and --gnuplot-script FILE.
struct PlotOutput {
  std::string out, data, size, font, script;
  bool no_footnote = false;
  PlotKind kind = PlotKind::svg;
  FigureStyle style;

  void add_options(CLI::App* cmd) {
    cmd->add_option("-o,--out", out, "Write the figure to FILE (.svg, .png or .pdf; required)")
        ->required();
    cmd->add_option("--data", data, "Also write the plotted data to FILE.csv");
    cmd->add_option("--size", size,
                    "Figure size W,H: pixels for .svg/.png, inches (or 17cm,10cm) for .pdf");
    cmd->add_option("--font", font,
                    "Font NAME[,SIZE] of every text; SIZE in points (titles and keys scale)");
    cmd->add_flag("--no-footnote", no_footnote,
                  "Leave out the footnote with ropesim's version, commit and command");
    cmd->add_option("--gnuplot-script", script,
                    "Also write the gnuplot script (data inline) that redraws --out");
  }
  /// ` font ',N'` for a text the plot sizes at `nominal` points in a default SVG.
  std::string font_at(double nominal) const {
    return fmt::format(" font ',{:g}'", style.font_points(nominal, kind));
  }
  /// Draws `body` (width × height pixels unless --size) into --out, and the script if asked.
  void draw(const std::string& body, int width, int height) const {
    draw_with_gnuplot(Figure{body, kind, out, width, height, style, script});
  }
  /// Checks every path and figure option before anything is computed, and that gnuplot is
  /// there.
  void check(const CLI::App* cmd) {
    kind = plot_kind_for(out, "--out");
    io::check_output_path(out, "--out");
    if (cmd->count("--size") > 0) style.size = parse_figure_size(size, kind);
    if (cmd->count("--font") > 0)
      std::tie(style.font_family, style.font_size) = parse_figure_font(font);
    style.footnote = !no_footnote;
    if (cmd->count("--gnuplot-script") > 0) {
      if (script.empty())
        throw InvalidArgument("--gnuplot-script: empty file name; accepted: a path such as fig.gp");
      io::check_output_path(script, "--gnuplot-script");
      for (const auto& [other, flag] : {std::pair{&out, "--out"}, std::pair{&data, "--data"}}) {
        if (!other->empty() &&
            std::filesystem::absolute(script) == std::filesystem::absolute(*other)) {
          throw InvalidArgument("--gnuplot-script: '" + script + "' is also the " + flag +
                                " file; give different files");
        }
      }
    }
    if (cmd->count("--data") > 0) {
      if (data.empty()) {
        throw InvalidArgument(
            "--data: empty file name; accepted: a path ending in .csv, a device, FIFO or "
            "descriptor such as /dev/stdout");
      }
      // The data is CSV whatever the name: a regular file must say so (.csv); a device, FIFO
      // or this process's descriptor (/dev/stdout, a pipe) is written through as it is.
      if (io::output_target(data, "--data").mode == io::OutputMode::replace &&
          std::filesystem::path(data).extension() != ".csv") {
        throw InvalidArgument(
            "--data: the plotted data is written as CSV; accepted: a path ending in .csv, a "
            "device, FIFO or descriptor such as /dev/stdout, got '" +
            data + "'");
      }
      io::check_output_path(data, "--data");
      if (std::filesystem::absolute(data) == std::filesystem::absolute(out)) {
        throw InvalidArgument("--data: '" + data + "' is also the --out figure; give two files");
      }
    }
    require_gnuplot();
  }
  void write_data(const Table& table) const {
    if (!data.empty()) io::write_output_file(data, render(table, OutputKind::csv), "--data");
  }
};

/// Rethrows a per-item error of a list flag under the list flag's name.
[[noreturn]] inline void rethrow_as_list(const InvalidArgument& e) {
  std::string what = e.what();
  for (const auto& [single, list] : std::vector<std::pair<std::string, std::string>>{
           {"--format:", "--formats:"}, {"--schedule:", "--schedules:"}}) {
    if (what.rfind(single, 0) == 0) what = list + what.substr(single.size());
  }
  throw InvalidArgument(what);
}

inline std::string rows_block(const std::string& name,
                              const std::vector<std::vector<std::string>>& rows) {
  std::string out = "$" + name + " << EOD\n";
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out += (c ? " " : "") + row[c];
    out += "\n";
  }
  return out + "EOD\n";
}

/// Line colours, one per k (or per model): distinguishable, dark enough on white.
inline const std::vector<std::string> kColours = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                                  "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
                                                  "#7f7f7f", "#bcbd22", "#393b79", "#637939"};

inline std::string colour(std::size_t i) { return kColours[i % kColours.size()]; }

/// The plot subcommands, each registering itself under `plot` and setting `action`.
CLI::App* add_plot_horizon(CLI::App* plot, std::function<int()>& action);
CLI::App* add_plot_rotations(CLI::App* plot, std::function<int()>& action);
CLI::App* add_plot_error(CLI::App* plot, std::function<int()>& action);
CLI::App* add_plot_length(CLI::App* plot, std::function<int()>& action);
CLI::App* add_plot_separation(CLI::App* plot, std::function<int()>& action);

/// gnuplot point types that stay apart in print: filled circle, square, triangle, diamond,
/// pentagon, then their open forms (series i gets the i-th, cyclically).
inline std::string series_marker(std::size_t i) {
  static const int types[] = {7, 5, 9, 13, 15, 6, 4, 8, 12, 14};
  return std::to_string(types[i % 10]);
}

/// The vertical shift of series i of n overlapping series of accuracies: (i − (n − 1)/2)·step
/// (axis units), so the drawn series are centred on the true values (the data files keep them
/// unshifted).
inline double series_offset(std::size_t i, std::size_t n, double step) {
  return (static_cast<double>(i) - (static_cast<double>(n) - 1) / 2) * step;
}

}  // namespace ropesim::cli
