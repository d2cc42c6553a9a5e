// `ropesim plot rotations`: distinct realised rotations per format for each model preset (the
// census, attention::sweep; THEORY §3).
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

struct PlotRotationsOptions {
  std::string models, schedules, formats = "bf16,fp16,fp32,fp64", realisation = "r1",
                                 rounding = "nearest-even";
  std::uint64_t positions = 65536;
  unsigned threads = 0;
  PlotOutput output;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_plot_rotations_options(CLI::App* plot, PlotRotationsOptions* o) {
  auto* cmd = plot->add_subcommand(
      "rotations", "Distinct realised rotations against the format, per model preset");
  cmd->add_option("--models", o->models,
                  "Model presets (comma-separated) or 'all'; default all unless --schedules");
  cmd->add_option("--schedules", o->schedules, "Schedule specs instead of (or besides) presets");
  cmd->add_option("--formats", o->formats, "Formats (one group of bars each)")
      ->capture_default_str();
  cmd->add_option("--realization,--realisation", o->realisation, "One realization")
      ->capture_default_str();
  cmd->add_option("--rounding", o->rounding, "Rounding of every step")->capture_default_str();
  add_integer_option(cmd, "--positions", o->positions, "N: positions 0..N-1", 2,
                     attention::kMaxCensusPositions)
      ->capture_default_str();
  add_jobs_option(cmd, o->threads);
  o->output.add_options(cmd);
  return cmd;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_plot_rotations(const CLI::App& cmd, PlotRotationsOptions& o) {
  o.output.check(&cmd);
  if (cmd.count("--models") > 0 && o.models.empty())
    throw InvalidArgument("--models: empty list; accepted: all or preset names");
  attention::SweepGrid grid;
  grid.rounding = with_context("--rounding", [&] { return numeric::parse_rounding(o.rounding); });
  grid.schedules = grid_schedules(o.models, o.schedules);
  for (const auto& spec : split_unique(o.formats, "--formats", ListKind::formats)) {
    grid.formats.push_back(with_context("--formats", [&] { return numeric::parse_format(spec); }));
  }
  if (o.realisation.find(',') != std::string::npos && o.realisation.rfind("pipeline:", 0) != 0) {
    throw InvalidArgument("--realization: plot rotations takes one realization, got '" +
                          o.realisation + "'");
  }
  with_context("--realization", [&] {
    return attention::parse_realisation(o.realisation, numeric::Format::fp32());
  });
  grid.realisations.push_back(o.realisation);
  if (grid.schedules.empty() || grid.formats.empty()) {
    throw InvalidArgument(
        "plot rotations: nothing to draw (give --models or --schedules, and --formats)");
  }
  attention::CensusOptions options;
  options.positions = o.positions;
  options.threads = jobs_threads(o.threads);
  const auto start = std::chrono::steady_clock::now();
  attention::CensusProgress progress;
  if (stderr_is_tty()) {
    progress = [start](std::size_t done, std::size_t total, const attention::CensusResult& last) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cerr << "\r"
                << progress_line(done, total, last.schedule + " " + last.format.name, elapsed)
                << "   " << std::flush;
    };
  }
  const auto cells = attention::sweep(grid, options, progress);
  if (progress) std::cerr << "\n";

  // Cells are schedule-major, then format (one realization).
  Table data;
  data.columns = {"schedule", "realization", "format", "rounding", "positions",
                  "distinct", "periodic",    "period", "note"};
  const std::size_t S = grid.schedules.size(), F = grid.formats.size();
  std::vector<std::vector<std::string>> rows(F);
  for (std::size_t f = 0; f < F; ++f) rows[f].push_back("\"" + grid.formats[f].name + "\"");
  for (std::size_t s = 0; s < S; ++s) {
    for (std::size_t f = 0; f < F; ++f) {
      const auto& r = cells[s * F + f];
      if (!r.not_applicable.empty()) {
        data.rows.push_back({r.schedule, r.realisation, r.format.name,
                             std::string(numeric::to_string(grid.rounding)), r.positions, nullptr,
                             nullptr, nullptr, r.not_applicable});
        rows[f].push_back("NaN");
        continue;
      }
      data.rows.push_back({r.schedule, r.realisation, r.format.name,
                           std::string(numeric::to_string(grid.rounding)), r.positions,
                           r.distinct_rotations, r.period.has_value(),
                           r.period ? nlohmann::json(*r.period) : nlohmann::json(nullptr), ""});
      rows[f].push_back(std::to_string(r.distinct_rotations));
    }
  }
  std::string script = rows_block("D", rows);
  const std::string realisation = cells.empty() ? o.realisation : cells.front().realisation;
  script += "set title " +
            gnuplot_lines({"Distinct realised rotations among R̂_0 … R̂_(N−1) (rotation census)",
                           fmt::format("N = {} positions, realisation {}, {}", o.positions,
                                       realisation, numeric::to_string(grid.rounding))}) +
            o.output.font_at(13) + "\n";
  script += "set xlabel " + gnuplot_quote("number format F") + "\n";
  script += "set ylabel " + gnuplot_quote("distinct realised rotations (count), log scale") + "\n";
  script +=
      "set logscale y 10\nset yrange [1:" + gnuplot_number(static_cast<double>(o.positions) * 3) +
      "]\n";
  script +=
      "set grid ytics lt 1 lw 1 lc rgb '#e4e4e4'\nset style data histogram\nset style histogram "
      "clustered gap 1\n";
  script += "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset xtics nomirror\n";
  script += "set key outside right top vertical Left reverse" + o.output.font_at(10) +
            "\nset bmargin 6\n";
  script += fmt::format("set xrange [-0.6:{}]\n", static_cast<double>(F) - 0.4);
  script += fmt::format(
      "set arrow 1 from graph 0, first {0} to graph 1, first {0} nohead dt 2 lw 1.5 lc rgb "
      "'#000000'\n",
      o.positions);
  script += "set label 1 " +
            gnuplot_quote(fmt::format("N = {} (every position distinct)", o.positions)) +
            fmt::format(" at graph 0.01, first {} offset 0,0.7 left", o.positions) +
            o.output.font_at(10) + "\n";
  script += "plot ";
  for (std::size_t s = 0; s < S; ++s) {
    const std::string name = cells[s * F].schedule;
    script += (s ? ", \\\n     " : "") + fmt::format("$D using {}{} title {} lc rgb '{}'", s + 2,
                                                     s == 0 ? ":xtic(1)" : "", gnuplot_quote(name),
                                                     colour(s));
  }
  script += "\n";
  o.output.draw(script, 1400, 750);
  o.output.write_data(data);
  std::cout << data.select({"schedule", "realization", "format", "positions", "distinct",
                            "periodic", "period", "note"})
                   .to_text();
  std::cout << "figure: " << o.output.out
            << (o.output.data.empty() ? "" : ", data: " + o.output.data) << "\n";
  return 0;
}

}  // namespace

CLI::App* add_plot_rotations(CLI::App* plot, std::function<int()>& action) {
  auto o = std::make_shared<PlotRotationsOptions>();
  CLI::App* cmd = add_plot_rotations_options(plot, o.get());
  action = [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_plot_rotations(*cmd, *o);
  };
  return cmd;
}

}  // namespace ropesim::cli
