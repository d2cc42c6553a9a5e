// `ropesim plot separation`: the seed's separation in one figure — balanced accuracy against
// length of (aa)*, (ab)*, MOD_3 and Σ*a, one panel each, per schedule × format
// (proofs::separation_experiment; THEORY §5, §7 C4', §8; RoPE-X §5-6).
// Output only (STYLE): this file gathers library results into a table and a gnuplot script.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/experiment_common.hpp"
#include "cli/gnuplot.hpp"
#include "cli/plot_common.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "core/budget.hpp"
#include "core/error.hpp"
#include "proofs/experiments/separation.hpp"

namespace ropesim::cli {

namespace {

/// The vertical distance between two neighbouring series of a panel (axis units).
constexpr double kSeparationOffset = 0.015;

}  // namespace

namespace {

struct PlotSeparationOptions {
  std::vector<std::string> schedules{"periodic", "llama2-7b", "single:g=1"};
  std::vector<std::string> formats{"bf16", "fp32"};
  std::string lengths = "1..100", rounding = "nearest-even";
  std::uint64_t words = 4, seed = 1, adversarial = 2;
  bool allow_slow = false;
  ProgressChoice progress = ProgressChoice::automatic;
  PlotOutput output;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_plot_separation_options(CLI::App* plot, PlotSeparationOptions* o) {
  auto* cmd = plot->add_subcommand(
      "separation",
      "The seed's separation: balanced accuracy against length of (aa)*, (ab)*, MOD_3 and "
      "Sigma*a per schedule x format, one panel per language (THEORY §5, §7 C4')");
  cmd->add_option("--schedule", o->schedules,
                  "Schedule of every rotary head; repeat for several; 'periodic' is each "
                  "language's own periodic schedule (default: periodic, llama2-7b, single:g=1)");
  cmd->add_option("--format", o->formats,
                  "Number format F; repeat for several (default bf16, fp32)");
  cmd->add_option("--rounding", o->rounding, "Rounding of every operation")->capture_default_str();
  cmd->add_option("--lengths", o->lengths, "Word lengths: a list 8,16,32, a range A..B, or both")
      ->capture_default_str();
  add_integer_option(cmd, "--words", o->words,
                     "Members and non-members per length, each (default 4)", 1, 100000);
  add_integer_option(cmd, "--adversarial", o->adversarial,
                     "Offset-aliasing words per length for Y^k heads (default 2; 0: none)", 0,
                     10000);
  add_integer_option(cmd, "--seed", o->seed, "Seed of the words (default 1)", 0, UINT64_MAX);
  add_progress_flags(cmd, o->progress);
  cmd->add_flag("--allow-slow", o->allow_slow, "Run even when the estimated work is over budget");
  o->output.add_options(cmd);
  return cmd;
}

/// The experiment `plot separation` runs: the shared length flags validated as `experiment
/// length` validates them, and the schedules (each once; "periodic" or a one-axis schedule).
proofs::SeparationSpec separation_spec(const PlotSeparationOptions& o) {
  // The shared length flags, validated as `experiment length` validates them (its formula and
  // schedule are placeholders: each language brings its own).
  LengthArguments a;
  a.formula = "true";
  a.formats = o.formats;
  a.rounding = o.rounding;
  a.lengths = o.lengths;
  a.words = o.words;
  a.seed = o.seed;
  a.adversarial = o.adversarial;
  a.allow_slow = o.allow_slow;
  a.progress = o.progress;
  proofs::SeparationSpec spec;
  spec.experiment = length_spec(a);
  spec.schedules = o.schedules;
  for (std::size_t i = 0; i < spec.schedules.size(); ++i) {
    const std::string& text = spec.schedules[i];
    for (std::size_t j = 0; j < i; ++j) {
      if (spec.schedules[j] == text)
        throw InvalidArgument("--schedule: '" + text + "' is given twice");
    }
    if (text == "periodic") continue;
    const attention::Schedule s =
        with_context("--schedule", [&] { return attention::parse_schedule(text); });
    if (s.is_multi_axis() || s.blocks.empty()) {
      throw InvalidArgument("--schedule: '" + text +
                            "' is not a one-axis schedule with a rotary block; accepted: "
                            "periodic, a model preset, conventional:base=B,dim=D, single:g=G, "
                            "...");
    }
  }
  return spec;
}

/// The data file: experiment length's columns per language with the language first, and the
/// refusals.
Table separation_data(const std::vector<proofs::SeparationSeries>& series) {
  Table data;
  for (const auto& language : proofs::separation_languages()) {
    std::vector<proofs::LengthSeries> of_language;
    for (const auto& s : series)
      if (s.language == language.name) of_language.push_back(s.series);
    Table t = length_table(of_language);
    if (data.columns.empty()) {
      data.columns = {"language"};
      for (const auto& c : t.columns) data.columns.push_back(c);
      data.columns.push_back("refused");
    }
    for (auto& row : t.rows) {
      row.insert(row.begin(), language.name);
      row.push_back(nullptr);
      data.rows.push_back(std::move(row));
    }
    for (const auto& s : of_language) {
      if (!s.refused) continue;
      std::vector<nlohmann::json> row(data.columns.size(), nullptr);
      row[0] = language.name;
      row[1] = s.schedule;
      row[2] = s.format;
      row.back() = one_line(*s.refused);
      data.rows.push_back(std::move(row));
    }
  }
  return data;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_plot_separation(const CLI::App& cmd, PlotSeparationOptions& o) {
  const proofs::SeparationSpec spec = separation_spec(o);
  // The work: `experiment length`'s estimate for every language and schedule.
  const WorkEstimate work = proofs::length_experiment_work(
      spec.experiment, proofs::separation_languages().size() * spec.schedules.size());
  check_budget("--lengths", work, opt_in_budget(o.allow_slow));
  o.output.check(&cmd);

  ProgressReporter progress(o.progress, "plot separation: compiling and running the models");
  const auto series = proofs::separation_experiment(
      spec, [&](std::size_t done, std::size_t total) { progress.update(done, total, "models"); });
  progress.finish();

  // Screen margins leave the bottom row's x label clear of the provenance footnote.
  std::string script =
      "set multiplot layout 2,2 columnsfirst margins screen 0.06,0.985,0.085,0.95 spacing "
      "screen 0.065,0.12\n";
  script += "set yrange [-0.06:1.08]\nset grid xtics ytics lt 1 lw 1 lc rgb '#e4e4e4'\n";
  script += fmt::format("set xrange [0:{}]\n", spec.experiment.lengths.back() + 1);
  script += "set xlabel " + gnuplot_quote("word length N") + o.output.font_at(9) + "\n";
  script += "set ylabel " + gnuplot_quote("balanced accuracy") + o.output.font_at(9) + "\n";
  script +=
      "set key bottom left Left reverse spacing 1.0 samplen 2" + o.output.font_at(7) + " opaque\n";
  std::string text;
  std::size_t block = 0;
  for (const auto& language : proofs::separation_languages()) {
    std::vector<std::string> plots;
    std::vector<std::string> refused;
    std::vector<const proofs::SeparationSeries*> drawn_series;
    for (const auto& s : series)
      if (s.language == language.name && !s.series.refused) drawn_series.push_back(&s);
    std::size_t drawn = 0;
    script += "unset arrow\n";
    for (const auto& s : series) {
      if (s.language != language.name) continue;
      if (s.series.refused) {
        refused.push_back(s.series.schedule + " " + s.series.format);
        text += fmt::format("{}: {} in {}: refused: {}\n", language.name, s.series.schedule,
                            s.series.format, one_line(*s.series.refused));
        continue;
      }
      const double offset = series_offset(drawn, drawn_series.size(), kSeparationOffset);
      std::vector<std::vector<std::string>> rows;
      for (const auto& row : s.series.rows) {
        rows.push_back(
            {std::to_string(row.length), gnuplot_number(row.balanced_accuracy() + offset)});
      }
      const std::string name = fmt::format("S{}", block++);
      script += rows_block(name, rows);
      const std::string title =
          s.series.schedule + " " + s.series.format + " (" +
          (s.series.certified_length ? "certified " + std::to_string(*s.series.certified_length)
                                     : std::string("every length")) +
          ")";
      plots.push_back(fmt::format(
          "${} using 1:2 with linespoints lw 1.3 dt {} pt {} ps 0.5 pi {} lc rgb '{}' title {}",
          name, drawn % 5 + 1, series_marker(drawn),
          std::max<std::size_t>(1, s.series.rows.size() / 25), colour(drawn),
          gnuplot_quote(title)));
      if (s.series.certified_length &&
          *s.series.certified_length <= spec.experiment.lengths.back()) {
        script += fmt::format(
            "set arrow from {0},graph 0 to {0},graph 1 nohead dt 2 lw 1.2 lc rgb '{1}' front\n",
            *s.series.certified_length, colour(drawn));
      }
      text += fmt::format("{}: {} in {}: certified length {}, every word right up to length {}\n",
                          language.name, s.series.schedule, s.series.format,
                          s.series.certified_length ? std::to_string(*s.series.certified_length)
                                                    : std::string("unbounded"),
                          s.series.longest_all_right ? std::to_string(*s.series.longest_all_right)
                                                     : std::string("-"));
      ++drawn;
    }
    std::vector<std::string> title_lines = {language.name + "   " + language.formula};
    if (!refused.empty()) {
      std::string line = "refused (no construction):";
      for (const auto& r : refused) line += " " + r + ";";
      line.pop_back();
      title_lines.push_back(line);
    }
    script += "set title " + gnuplot_lines(title_lines) + o.output.font_at(9) + "\n";
    if (plots.empty()) {
      // Every series refused: an empty panel that says so.
      script += "plot NaN notitle\n";
    } else {
      script += "plot ";
      for (std::size_t i = 0; i < plots.size(); ++i) script += (i ? ", \\\n     " : "") + plots[i];
      script += "\n";
    }
  }
  script += "unset multiplot\n";

  const Table data = separation_data(series);
  o.output.draw(script, 1600, 1100);
  o.output.write_data(data);
  std::cout << text;
  std::cout << "figure: " << o.output.out
            << (o.output.data.empty() ? "" : ", data: " + o.output.data) << "\n";
  return 0;
}

}  // namespace

CLI::App* add_plot_separation(CLI::App* plot, std::function<int()>& action) {
  auto o = std::make_shared<PlotSeparationOptions>();
  CLI::App* cmd = add_plot_separation_options(plot, o.get());
  action = [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_plot_separation(*cmd, *o);
  };
  return cmd;
}

}  // namespace ropesim::cli
