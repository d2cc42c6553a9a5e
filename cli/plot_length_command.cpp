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

#include "attention/census.hpp"
#include "attention/realisation.hpp"
#include "attention/schedule.hpp"
#include "cli/commands.hpp"
#include "cli/experiment_common.hpp"
#include "cli/gnuplot.hpp"
#include "cli/horizon_common.hpp"
#include "cli/jobs.hpp"
#include "cli/plot_common.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "numeric/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::cli {

CLI::App* add_plot_length(CLI::App* plot, std::function<int()>& action) {
  struct Options {
    LengthArguments args;
    PlotOutput output;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = plot->add_subcommand(
      "length",
      "Accuracy against length per schedule x format, certified lengths marked (experiment "
      "length)");
  add_length_options(cmd, o->args);
  o->output.add_options(cmd);
  action = [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    const proofs::LengthExperimentSpec spec = length_spec(o->args);
    o->output.check(cmd);
    const auto series = run_length_experiment(spec, o->args);
    const Table data = length_table(series);

    std::string script;
    std::vector<std::string> plots;
    std::size_t drawn = 0;
    for (std::size_t i = 0; i < series.size(); ++i) {
      const auto& s = series[i];
      if (s.refused) continue;
      std::vector<std::vector<std::string>> rows;
      for (const auto& row : s.rows)
        rows.push_back({std::to_string(row.length), gnuplot_number(row.accuracy())});
      const std::string name = fmt::format("S{}", i);
      script += rows_block(name, rows);
      const std::string title = s.schedule + " in " + s.format + " (certified " +
                                (s.certified_length ? std::to_string(*s.certified_length)
                                                    : std::string("at every length")) +
                                ")";
      plots.push_back(
          fmt::format("${} using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '{}' title {}", name,
                      colour(drawn), gnuplot_quote(title)));
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
    script +=
        "set title " +
        gnuplot_lines({"Accuracy against word length of the compiled formula " + o->args.formula,
                       fmt::format("{} random words over {} per length (seed {}); dashed: the "
                                   "certified length N_max of each model",
                                   spec.words, o->args.alphabet, spec.seed)}) +
        o->output.font_at(13) + "\n";
    script += "set xlabel " + gnuplot_quote("word length N") + "\n";
    script += "set ylabel " + gnuplot_quote("accuracy (fraction of words classified right)") + "\n";
    script += "set yrange [-0.02:1.02]\nset grid xtics ytics lt 1 lw 1 lc rgb '#e4e4e4'\n";
    script +=
        fmt::format("set xrange [{}:{}]\n", spec.lengths.front() > 1 ? spec.lengths.front() - 1 : 0,
                    spec.lengths.back() + 1);
    script += "set key outside right top vertical Left reverse spacing 1.1" +
              o->output.font_at(10) + "\n";
    script += "set bmargin 6\n";  // room for the provenance footnote under the x label
    script += "plot ";
    for (std::size_t i = 0; i < plots.size(); ++i) script += (i ? ", \\\n     " : "") + plots[i];
    script += "\n";
    o->output.draw(script, 1400, 750);
    o->output.write_data(data);
    for (const auto& s : series) {
      if (s.refused) {
        std::cout << fmt::format("{} in {}: refused: {}\n", s.schedule, s.format,
                                 one_line(*s.refused));
        continue;
      }
      std::cout << fmt::format(
          "{} in {}: certified length {}, every word right up to length {}\n", s.schedule, s.format,
          s.certified_length ? std::to_string(*s.certified_length) : std::string("unbounded"),
          s.longest_all_right ? std::to_string(*s.longest_all_right) : std::string("-"));
    }
    std::cout << "figure: " << o->output.out
              << (o->output.data.empty() ? "" : ", data: " + o->output.data) << "\n";
    return 0;
  };
  return cmd;
}

}  // namespace ropesim::cli
