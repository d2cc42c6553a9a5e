// `ropesim plot`: figures drawn with gnuplot from numbers the library computes (docs/CLI.md).
//   plot horizon    N_max^(k) of the fixed-offset head against the precision p (THEORY §6), with
//                   the exact-arithmetic bound, the tie distance and the heuristic caps of the same
//                   horizon reports (proofs::horizon);
//   plot rotations  distinct realised rotations per format for each model preset (the census,
//                   attention::sweep; THEORY §3);
//   plot error      the realised-rotation error over positions × blocks (attention::query_position;
//                   NUMERIC §4, GPT-NeoX #1003);
//   plot length     accuracy against word length per schedule × format, certified lengths marked
//                   (proofs::length_experiment; RoPE-X §5-6).
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
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "numeric/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::cli {

namespace {

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
      if (data.empty() || std::filesystem::path(data).extension() != ".csv") {
        throw InvalidArgument(
            "--data: the plotted data is written as CSV; accepted: a path ending in .csv, got '" +
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
[[noreturn]] void rethrow_as_list(const InvalidArgument& e) {
  std::string what = e.what();
  for (const auto& [single, list] : std::vector<std::pair<std::string, std::string>>{
           {"--format:", "--formats:"}, {"--schedule:", "--schedules:"}}) {
    if (what.rfind(single, 0) == 0) what = list + what.substr(single.size());
  }
  throw InvalidArgument(what);
}

std::string rows_block(const std::string& name, const std::vector<std::vector<std::string>>& rows) {
  std::string out = "$" + name + " << EOD\n";
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out += (c ? " " : "") + row[c];
    out += "\n";
  }
  return out + "EOD\n";
}

/// Line colours, one per k (or per model): distinguishable, dark enough on white.
const std::vector<std::string> kColours = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                           "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
                                           "#7f7f7f", "#bcbd22", "#393b79", "#637939"};

std::string colour(std::size_t i) { return kColours[i % kColours.size()]; }

// ---------------------------------------------------------------------------------------------
// plot horizon

struct HorizonPoint {
  int p = 0;
  proofs::HorizonReport report;
};

CLI::App* add_plot_horizon(CLI::App* plot, std::function<int()>& action) {
  struct Options {
    std::string formats = "p=4..24,e=8", k = "1", C = "auto";
    HeadArguments head;
    PlotOutput output;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = plot->add_subcommand(
      "horizon",
      "N_max^(k) of the fixed-offset head against the precision p, with the bounds of THEORY §6");
  cmd->add_option("--formats", o->formats, "Formats (binary floating point), e.g. p=4..24,e=8")
      ->capture_default_str();
  cmd->add_option("--g", o->head.g, "Frequency g in radians per position (exact decimal)")
      ->capture_default_str();
  cmd->add_option("--k", o->k, "Offsets k (one curve each)")->capture_default_str();
  cmd->add_option("--C", o->head.C, "Scale C (exact decimal) or 'auto'")->capture_default_str();
  cmd->add_option("--realization,--realisation", o->head.realisation,
                  "r1 r2 hf llamacpp-cpu llamacpp-cuda pipeline:...")
      ->capture_default_str();
  cmd->add_option("--rounding", o->head.rounding, "Rounding of every operation")
      ->capture_default_str();
  add_integer_option(cmd, "--max-length", o->head.max_length,
                     "L_max of every scan (default: each head's quick limit)", 1,
                     proofs::kMaxScanLength);
  cmd->add_flag("--allow-slow", o->head.allow_slow, "Allow --max-length beyond the quick limit");
  o->output.add_options(cmd);
  action = [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    o->output.check(cmd);
    const auto formats = split_unique(o->formats, "--formats", ListKind::formats);
    const auto ks = split_unique(o->k, "--k");
    if (formats.empty())
      throw InvalidArgument("--formats: empty list; give formats such as p=4..24,e=8");
    if (ks.empty()) throw InvalidArgument("--k: empty list; give offsets such as 1,2");
    if (o->head.C.find(',') != std::string::npos) {
      throw InvalidArgument("--C: plot horizon takes one C (or 'auto'), got '" + o->head.C + "'");
    }
    // Validate every cell before measuring anything (bad input: no output).
    std::vector<proofs::HorizonSpec> specs;
    std::vector<int> precisions;
    for (const auto& k : ks) {
      for (const auto& format : formats) {
        HeadArguments a = o->head;
        a.format = format;
        a.k = k;
        try {
          specs.push_back(horizon_spec(a));
        } catch (const InvalidArgument& e) {
          rethrow_as_list(e);
        }
        const auto& f = specs.back().head.policy.format;
        if (f.is_fixed_point()) {
          throw InvalidArgument(
              "--formats: plot horizon draws against the precision p of a floating-point format; "
              "'" +
              format + "' is fixed point");
        }
        precisions.push_back(f.precision);
      }
    }
    const auto start = std::chrono::steady_clock::now();
    const bool progress = stderr_is_tty();
    std::vector<proofs::HorizonReport> reports;
    for (std::size_t c = 0; c < specs.size(); ++c) {
      reports.push_back(proofs::horizon(specs[c]));
      if (progress) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::cerr << fmt::format("\r[{}/{}] {} k={}  {:.0f}s   ", c + 1, specs.size(),
                                 reports.back().format, reports.back().k, elapsed)
                  << std::flush;
      }
    }
    if (progress) std::cerr << "\n";

    // The plotted data: one row per (k, format).
    Table data;
    data.columns = {"format",
                    "p",
                    "k",
                    "C",
                    "n_max",
                    "n_max_at_limit",
                    "delta_bound",
                    "delta_bound_at_limit",
                    "tie_distance",
                    "tie_distance_at_limit",
                    "heuristic",
                    "tie_cap"};
    std::map<std::uint64_t, std::vector<std::vector<std::string>>> per_k;  // gnuplot rows by k
    std::vector<std::vector<std::string>> shared;                          // k-independent columns
    bool any_n_limit = false, any_delta_limit = false, any_tie_limit = false, any_zero = false;
    const std::string nan = "NaN";
    // The y axis shows what was measured: its top is the decade at or above 3× the largest
    // N_max, tie distance and tie cap. The exact-arithmetic bound and the heuristic reach 10^12
    // and more where C auto picks a far record distance; a value beyond the top is drawn as an
    // arrow at the top edge (its line breaks there), and the largest such values are named in a
    // note (the CSV and the table keep every value).
    double tallest = 1;
    for (const auto& r : reports) {
      tallest = std::max({tallest, static_cast<double>(r.range.n_max), r.tie_cap,
                          r.tie_distance ? static_cast<double>(r.tie_distance->value) : 0.0});
    }
    const double top = std::pow(10.0, std::ceil(std::log10(3 * tallest)));
    struct Beyond {
      int p;
      std::uint64_t k;
      bool heuristic;
      double value;
    };
    std::vector<Beyond> beyond;
    for (std::size_t c = 0; c < reports.size(); ++c) {
      const auto& r = reports[c];
      const int p = precisions[c];
      const nlohmann::json tie =
          r.tie_distance ? nlohmann::json(r.tie_distance->value) : nlohmann::json(nullptr);
      const nlohmann::json tie_limit =
          r.tie_distance ? nlohmann::json(r.tie_distance->at_limit) : nlohmann::json(nullptr);
      data.rows.push_back({r.format, p, r.k, r.C.to_decimal(9), r.range.n_max, r.range.at_limit,
                           r.delta_bound.value, r.delta_bound.at_limit, tie, tie_limit,
                           r.heuristic ? nlohmann::json(fmt::format("{:.6g}", *r.heuristic))
                                       : nlohmann::json(nullptr),
                           fmt::format("{:.6g}", r.tie_cap)});
      const std::string n = std::to_string(r.range.n_max);
      const bool d_beyond = static_cast<double>(r.delta_bound.value) > top;
      const bool h_beyond = r.heuristic && *r.heuristic > top;
      if (d_beyond) beyond.push_back({p, r.k, false, static_cast<double>(r.delta_bound.value)});
      if (h_beyond) beyond.push_back({p, r.k, true, *r.heuristic});
      // A value beyond the axis: no point on its line (the line breaks), the arrow marks it.
      const std::string d = d_beyond ? nan : std::to_string(r.delta_bound.value);
      const std::string d_marker = d;
      any_n_limit = any_n_limit || r.range.at_limit;
      any_delta_limit = any_delta_limit || r.delta_bound.at_limit;
      any_zero = any_zero || r.range.n_max == 0;
      // p, n_max (line), n_max exact, n_max lower bound, delta (line), delta exact, delta lower,
      // heuristic
      per_k[r.k].push_back({std::to_string(p), n, r.range.at_limit ? nan : n,
                            r.range.at_limit ? n : nan, d, r.delta_bound.at_limit ? nan : d_marker,
                            r.delta_bound.at_limit ? d_marker : nan,
                            r.heuristic && !h_beyond ? gnuplot_number(*r.heuristic) : nan});
      if (r.k == reports.front().k) {
        std::string t = nan, t_exact = nan, t_lower = nan;
        if (r.tie_distance) {
          t = std::to_string(r.tie_distance->value);
          (r.tie_distance->at_limit ? t_lower : t_exact) = t;
          any_tie_limit = any_tie_limit || r.tie_distance->at_limit;
        }
        // p, tie (line), tie exact, tie lower bound, tie cap
        shared.push_back({std::to_string(p), t, t_exact, t_lower, gnuplot_number(r.tie_cap)});
      }
    }
    const auto by_p = [](const std::vector<std::string>& a, const std::vector<std::string>& b) {
      return std::stoi(a[0]) < std::stoi(b[0]);
    };
    std::string script;
    std::vector<std::string> plots, keys;
    std::size_t index = 0;
    for (auto& [k, rows] : per_k) {
      std::stable_sort(rows.begin(), rows.end(), by_p);
      const std::string block = "K" + std::to_string(k);
      script += rows_block(block, rows);
      const std::string c = colour(index++);
      const std::string kk = fmt::format("k={}", k);
      // Curves are drawn untitled; the key is built from keyentry lines (line and marker together).
      keys.push_back(fmt::format("keyentry with linespoints lw 2 pt 7 ps 1.2 lc rgb '{}' title {}",
                                 c, gnuplot_quote("N_max measured (" + kk + ")")));
      plots.push_back(fmt::format("${} using 1:2 with lines lw 2 lc rgb '{}' notitle", block, c));
      plots.push_back(
          fmt::format("${} using 1:3 with points pt 7 ps 1.2 lc rgb '{}' notitle", block, c));
      if (any_n_limit) {
        keys.push_back(fmt::format("keyentry with points pt 6 ps 1.6 lw 2 lc rgb '{}' title {}", c,
                                   gnuplot_quote("N_max ≥ (scan limit) (" + kk + ")")));
        plots.push_back(fmt::format(
            "${} using 1:4 with points pt 6 ps 1.6 lw 2 lc rgb '{}' notitle", block, c));
      }
      keys.push_back(
          fmt::format("keyentry with linespoints dt 2 lw 1.5 pt 5 ps 0.9 lc rgb '{}' title {}", c,
                      gnuplot_quote("exact bound C·δ_L ≥ f_large (" + kk + ")")));
      plots.push_back(
          fmt::format("${} using 1:($5) with lines dt 2 lw 1.5 lc rgb '{}' notitle", block, c));
      plots.push_back(
          fmt::format("${} using 1:6 with points pt 5 ps 0.9 lc rgb '{}' notitle", block, c));
      if (any_delta_limit) {
        keys.push_back(fmt::format("keyentry with points pt 4 ps 1.3 lw 2 lc rgb '{}' title {}", c,
                                   gnuplot_quote("exact bound ≥ (search limit) (" + kk + ")")));
        plots.push_back(fmt::format(
            "${} using 1:7 with points pt 4 ps 1.3 lw 2 lc rgb '{}' notitle", block, c));
      }
      keys.push_back(fmt::format("keyentry with lines dt 3 lw 2 lc rgb '{}' title {}", c,
                                 gnuplot_quote("heuristic π·√(2C/f_large) − 1 (" + kk + ")")));
      plots.push_back(
          fmt::format("${} using 1:($8) with lines dt 3 lw 2 lc rgb '{}' notitle", block, c));
    }
    // The values beyond the axis: an arrow up to the top edge per (p, k, quantity), side by side
    // within p ± 0.4.
    const std::size_t series = 2 * per_k.size();
    const double step = std::min(0.16, 0.8 / static_cast<double>(series));
    int arrow_tag = 100;
    std::set<std::pair<std::uint64_t, bool>> beyond_keys;
    double largest_bound = 0, largest_heuristic = 0;
    for (const auto& b : beyond) {
      const auto k_index = static_cast<std::size_t>(std::distance(per_k.begin(), per_k.find(b.k)));
      const std::size_t j = 2 * k_index + (b.heuristic ? 1 : 0);
      const double x = b.p + (static_cast<double>(j) - static_cast<double>(series - 1) / 2) * step;
      const std::string c = colour(k_index);
      script += fmt::format(
          "set arrow {} from first {}, first {} to first {}, first {} {} size screen 0.008,25 "
          "{}lw 1.5 lc rgb '{}' front\n",
          arrow_tag++, gnuplot_number(x), gnuplot_number(top / std::sqrt(10.0)), gnuplot_number(x),
          gnuplot_number(top), b.heuristic ? "head empty" : "head filled",
          b.heuristic ? "dt 3 " : "", c);
      (b.heuristic ? largest_heuristic : largest_bound) =
          std::max(b.heuristic ? largest_heuristic : largest_bound, b.value);
      if (beyond_keys.insert({b.k, b.heuristic}).second) {
        keys.push_back(fmt::format(
            "keyentry with vectors {} lw 1.5 lc rgb '{}' title {}",
            b.heuristic ? "head empty dt 3" : "head filled", c,
            gnuplot_quote(fmt::format("{} beyond the axis (k={})",
                                      b.heuristic ? "heuristic" : "exact bound", b.k))));
      }
    }
    if (!beyond.empty()) {
      std::vector<std::string> parts;
      if (largest_bound > 0)
        parts.push_back(fmt::format("exact bound up to {:.2g}", largest_bound));
      if (largest_heuristic > 0)
        parts.push_back(fmt::format("heuristic up to {:.2g}", largest_heuristic));
      script +=
          "set label 3 " +
          gnuplot_quote("arrows: beyond the axis (" + fmt::format("{}", fmt::join(parts, ", ")) +
                        "; every value in the table and --data)") +
          " at graph 0.99, graph 0.03 right front" + o->output.font_at(10) + "\n";
    }
    std::stable_sort(shared.begin(), shared.end(), by_p);
    script += rows_block("T", shared);
    keys.push_back("keyentry with linespoints dt 4 lw 1.5 pt 9 ps 1.1 lc rgb '#000000' title " +
                   gnuplot_quote("tie distance: round_F(cos gn) = 1"));
    plots.push_back("$T using 1:2 with lines dt 4 lw 1.5 lc rgb '#000000' notitle");
    plots.push_back("$T using 1:3 with points pt 9 ps 1.1 lc rgb '#000000' notitle");
    if (any_tie_limit) {
      keys.push_back("keyentry with points pt 8 ps 1.4 lw 2 lc rgb '#000000' title " +
                     gnuplot_quote("tie distance > (search limit)"));
      plots.push_back("$T using 1:4 with points pt 8 ps 1.4 lw 2 lc rgb '#000000' notitle");
    }
    keys.push_back("keyentry with lines dt 3 lw 1.5 lc rgb '#808080' title " +
                   gnuplot_quote("tie cap π·√(2/u)"));
    plots.push_back("$T using 1:5 with lines dt 3 lw 1.5 lc rgb '#808080' notitle");
    plots.insert(plots.end(), keys.begin(), keys.end());

    const auto& first = reports.front();
    script +=
        "set title " +
        gnuplot_lines(
            {"Certified range N_max^(k) of the fixed-offset head Y^k against the precision of F",
             fmt::format("g = {} rad/position, C {}, realisation {}, {}", o->head.g,
                         o->head.C == "auto" ? "auto (chosen per point)" : "= " + o->head.C,
                         first.realisation, first.rounding)}) +
        o->output.font_at(13) + "\n";
    script +=
        "set xlabel " + gnuplot_quote("precision p of F (bits, including the hidden bit)") + "\n";
    script += "set ylabel " + gnuplot_quote("length L (positions), log scale") + "\n";
    script += "set logscale y 10\n";
    script += "set format y '1e%L'\nset grid xtics ytics lt 1 lw 1 lc rgb '#e4e4e4'\n";
    script +=
        "set xtics 1\nset mxtics 1\nset key outside right top vertical Left reverse spacing 1.1" +
        o->output.font_at(10) + "\n";
    script += "set bmargin 6\n";
    const int p_lo = *std::min_element(precisions.begin(), precisions.end());
    const int p_hi = *std::max_element(precisions.begin(), precisions.end());
    script += fmt::format("set xrange [{}:{}]\nset yrange [*:{}]\n", p_lo - 0.5, p_hi + 0.5,
                          gnuplot_number(top));
    if (p_hi - p_lo > 30) script += "set xtics autofreq\n";
    if (any_zero)
      script += "set label 2 " +
                gnuplot_quote("N_max = 0 (nothing certified) is not drawn on the log scale") +
                " at graph 0.01, graph 0.03 left" + o->output.font_at(10) + "\n";
    script += "plot ";
    for (std::size_t i = 0; i < plots.size(); ++i) script += (i ? ", \\\n     " : "") + plots[i];
    script += "\n";

    o->output.draw(script, 1400, 800);
    o->output.write_data(data);
    std::cout << horizon_table(reports).for_terminal("").to_text();
    std::cout << "figure: " << o->output.out
              << (o->output.data.empty() ? "" : ", data: " + o->output.data) << "\n";
    return 0;
  };
  return cmd;
}

// ---------------------------------------------------------------------------------------------
// plot rotations

CLI::App* add_plot_rotations(CLI::App* plot, std::function<int()>& action) {
  struct Options {
    std::string models, schedules, formats = "bf16,fp16,fp32,fp64", realisation = "r1",
                                   rounding = "nearest-even";
    std::uint64_t positions = 65536;
    unsigned threads = 0;
    PlotOutput output;
  };
  auto o = std::make_shared<Options>();
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
  action = [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    o->output.check(cmd);
    if (cmd->count("--models") > 0 && o->models.empty())
      throw InvalidArgument("--models: empty list; accepted: all or preset names");
    attention::SweepGrid grid;
    grid.rounding = with_flag("--rounding", [&] { return numeric::parse_rounding(o->rounding); });
    grid.schedules = grid_schedules(o->models, o->schedules);
    for (const auto& spec : split_unique(o->formats, "--formats", ListKind::formats)) {
      grid.formats.push_back(with_flag("--formats", [&] { return numeric::parse_format(spec); }));
    }
    if (o->realisation.find(',') != std::string::npos &&
        o->realisation.rfind("pipeline:", 0) != 0) {
      throw InvalidArgument("--realization: plot rotations takes one realization, got '" +
                            o->realisation + "'");
    }
    with_flag("--realization", [&] {
      return attention::parse_realisation(o->realisation, numeric::Format::fp32());
    });
    grid.realisations.push_back(o->realisation);
    if (grid.schedules.empty() || grid.formats.empty()) {
      throw InvalidArgument(
          "plot rotations: nothing to draw (give --models or --schedules, and --formats)");
    }
    attention::CensusOptions options;
    options.positions = o->positions;
    options.threads = jobs_threads(o->threads);
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
    const std::string realisation = cells.empty() ? o->realisation : cells.front().realisation;
    script += "set title " +
              gnuplot_lines({"Distinct realised rotations among R̂_0 … R̂_(N−1) (rotation census)",
                             fmt::format("N = {} positions, realisation {}, {}", o->positions,
                                         realisation, numeric::to_string(grid.rounding))}) +
              o->output.font_at(13) + "\n";
    script += "set xlabel " + gnuplot_quote("number format F") + "\n";
    script +=
        "set ylabel " + gnuplot_quote("distinct realised rotations (count), log scale") + "\n";
    script += "set logscale y 10\nset yrange [1:" +
              gnuplot_number(static_cast<double>(o->positions) * 3) + "]\n";
    script +=
        "set grid ytics lt 1 lw 1 lc rgb '#e4e4e4'\nset style data histogram\nset style histogram "
        "clustered gap 1\n";
    script += "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset xtics nomirror\n";
    script += "set key outside right top vertical Left reverse" + o->output.font_at(10) +
              "\nset bmargin 6\n";
    script += fmt::format("set xrange [-0.6:{}]\n", static_cast<double>(F) - 0.4);
    script += fmt::format(
        "set arrow 1 from graph 0, first {0} to graph 1, first {0} nohead dt 2 lw 1.5 lc rgb "
        "'#000000'\n",
        o->positions);
    script += "set label 1 " +
              gnuplot_quote(fmt::format("N = {} (every position distinct)", o->positions)) +
              fmt::format(" at graph 0.01, first {} offset 0,0.7 left", o->positions) +
              o->output.font_at(10) + "\n";
    script += "plot ";
    for (std::size_t s = 0; s < S; ++s) {
      const std::string name = cells[s * F].schedule;
      script += (s ? ", \\\n     " : "") + fmt::format("$D using {}{} title {} lc rgb '{}'", s + 2,
                                                       s == 0 ? ":xtic(1)" : "",
                                                       gnuplot_quote(name), colour(s));
    }
    script += "\n";
    o->output.draw(script, 1400, 750);
    o->output.write_data(data);
    std::cout << data.select({"schedule", "realization", "format", "positions", "distinct",
                              "periodic", "period", "note"})
                     .to_text();
    std::cout << "figure: " << o->output.out
              << (o->output.data.empty() ? "" : ", data: " + o->output.data) << "\n";
    return 0;
  };
  return cmd;
}

// ---------------------------------------------------------------------------------------------
// plot error

/// The largest grid the heat map draws (positions × blocks): gnuplot reads every cell from the
/// script, and the CSV has a row per cell.
constexpr std::uint64_t kMaxErrorCells = std::uint64_t{1} << 20;

CLI::App* add_plot_error(CLI::App* plot, std::function<int()>& action) {
  struct Options {
    std::string schedule, realisation = "r1", format = "fp32", rounding = "nearest-even",
                          engine = "auto";
    std::uint64_t positions = 2048;
    PlotOutput output;
    ProgressChoice progress = ProgressChoice::automatic;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = plot->add_subcommand("error",
                                   "Heat map of the realised-rotation error max(|cos^ - cos|, "
                                   "|sin^ - sin|) over positions x blocks");
  cmd->add_option("--schedule", o->schedule, "Schedule spec or model preset")->required();
  cmd->add_option("--realization,--realisation", o->realisation,
                  "r1 r2 r3 hf llamacpp-cpu llamacpp-cuda pipeline:...")
      ->capture_default_str();
  cmd->add_option("--format", o->format, "Number format F (r1-r3) or activation format (pipelines)")
      ->capture_default_str();
  cmd->add_option("--rounding", o->rounding, "Rounding of every step")->capture_default_str();
  cmd->add_option("--engine", o->engine,
                  "Arithmetic engine: mpfr fast auto (same bits, different speed)")
      ->capture_default_str();
  add_integer_option(cmd, "--positions", o->positions, "N: positions 0..N-1", 1, 1048576)
      ->capture_default_str();
  o->output.add_options(cmd);
  add_progress_flags(cmd, o->progress);
  action = [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    o->output.check(cmd);
    const auto mode = with_flag("--rounding", [&] { return numeric::parse_rounding(o->rounding); });
    const auto format = with_flag("--format", [&] { return numeric::parse_format(o->format); });
    const auto schedule =
        with_flag("--schedule", [&] { return attention::parse_schedule(o->schedule); });
    const numeric::Engine* engine =
        with_flag("--engine", [&] { return &numeric::engine_by_name(o->engine); });
    auto realisation = with_flag("--realization", [&] {
      return attention::parse_realisation(o->realisation,
                                          numeric::FormatBinding{format, mode, engine});
    });
    with_flag("--realization", [&] {
      attention::check_applicable(schedule, realisation);
      return 0;
    });
    const std::uint64_t blocks = schedule.blocks.size();
    if (blocks == 0)
      throw InvalidArgument("--schedule: '" + o->schedule + "' has no rotary block to draw");
    if (o->positions * blocks > kMaxErrorCells) {
      throw InvalidArgument(fmt::format(
          "--positions: {} positions × {} blocks = {} cells; the heat map draws at most {} "
          "(use at most {} positions)",
          o->positions, blocks, o->positions * blocks, kMaxErrorCells, kMaxErrorCells / blocks));
    }
    // Gather: per cell the absolute differences of the realised (table-format) values from the
    // exact cos and sin that query_position reports (doubles accurate far below an ulp of F).
    Table data;
    data.columns = {"position",  "block",        "cos_exact", "cos_realised",
                    "sin_exact", "sin_realised", "error"};
    std::string cells = "$E << EOD\n";
    double worst = -1, smallest = INFINITY;  // largest error, smallest positive error
    std::uint64_t worst_position = 0, worst_block = 0, not_finite = 0;
    std::optional<std::uint64_t> first_not_finite;
    std::string worst_cos, worst_sin;
    double worst_exact_cos = 0, worst_exact_sin = 0;
    std::string table_format;
    warn_about_schedule(schedule, o->positions - 1);
    ProgressReporter progress(o->progress, "plot error " + realisation.name());
    for (std::uint64_t i = 0; i < o->positions; ++i) {
      progress.update(i, o->positions, "positions");
      const auto report = attention::query_position(schedule, realisation, i);
      table_format = report.table_format.name;
      for (const auto& b : report.blocks) {
        // against s·(cos, sin) when the realisation carries the attention factor s
        const double cos_error = std::abs(b.cos.to_double() - b.reference_cos);
        const double sin_error = std::abs(b.sin.to_double() - b.reference_sin);
        const bool finite = std::isfinite(cos_error) && std::isfinite(sin_error);
        const double error = finite ? std::max(cos_error, sin_error) : std::nan("");
        if (!finite) {
          ++not_finite;
          if (!first_not_finite) first_not_finite = i;
        }
        if (finite && error > 0) smallest = std::min(smallest, error);
        if (finite && error > worst) {
          worst = error;
          worst_position = i;
          worst_block = b.block;
          worst_cos = b.cos.to_decimal(9);
          worst_sin = b.sin.to_decimal(9);
          worst_exact_cos = b.reference_cos;
          worst_exact_sin = b.reference_sin;
        }
        data.rows.push_back(
            {i, b.block, fmt::format("{:.17g}", b.reference_cos), b.cos.to_decimal(17),
             fmt::format("{:.17g}", b.reference_sin), b.sin.to_decimal(17),
             finite ? nlohmann::json(fmt::format("{:.17g}", error)) : nlohmann::json(nullptr)});
        cells += fmt::format("{} {} {}\n", i, b.block, finite ? gnuplot_number(error) : "NaN");
      }
    }
    progress.update(o->positions, o->positions, "positions");
    progress.finish();
    cells += "EOD\n";
    // On the log colour scale a zero error has no colour: drawn white (the background).
    std::string script = cells;
    script +=
        "set title " +
        gnuplot_lines({"Realised-rotation error max(|cos realised − cos exact|, |sin realised − "
                       "sin exact|) per "
                       "position and block",
                       fmt::format("{}, realisation {} in {} ({})", schedule.spec,
                                   realisation.name(), table_format, numeric::to_string(mode))}) +
        o->output.font_at(13) + "\n";
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
      script +=
          "set cblabel " + gnuplot_quote("absolute error (every finite cell is exact)") + "\n";
      script += "set cbrange [0:1]\n";
    }
    script +=
        "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')\n";
    script += fmt::format("set xrange [-0.5:{}]\nset yrange [-0.5:{}]\n", o->positions - 0.5,
                          blocks - 0.5);
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
                      static_cast<double>(worst_position) > 0.7 * static_cast<double>(o->positions)
                          ? "right"
                          : "left",
                      o->output.font_at(11));
    }
    // 1/0 (undefined) leaves a cell white; NaN would make gnuplot drop the whole image.
    script += worst > 0 ? "plot $E using 1:2:($3 > 0 ? $3 : 1/0) with image\n"
                        : "plot $E using 1:2:($3 == $3 ? $3 : 1/0) with image\n";
    o->output.draw(script, 1400, 700);
    o->output.write_data(data);
    std::cout << fmt::format(
        "schedule {}  realization {}  table format {}  rounding {}  positions 0..{}  blocks {}\n",
        schedule.spec, realisation.name(), table_format, numeric::to_string(mode), o->positions - 1,
        blocks);
    if (worst >= 0) {
      std::cout << fmt::format(
          "max error     {:.9g} at position {}, block {} (cos exact {:.9g}, realised {}; sin exact "
          "{:.9g}, realised "
          "{})\n",
          worst, worst_position, worst_block, worst_exact_cos, worst_cos, worst_exact_sin,
          worst_sin);
    }
    std::cout << fmt::format(
        "not finite    {} cells{}\n", not_finite,
        first_not_finite ? fmt::format(" (first at position {})", *first_not_finite) : "");
    std::cout << "figure: " << o->output.out
              << (o->output.data.empty() ? "" : ", data: " + o->output.data) << "\n";
    return 0;
  };
  return cmd;
}

// ---------------------------------------------------------------------------------------------
// plot length

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

}  // namespace

Action add_plot_command(CLI::App& app) {
  auto* plot =
      app.add_subcommand("plot", "Figures drawn with gnuplot (--out FILE.svg|FILE.png|FILE.pdf)");
  plot->require_subcommand(1);
  auto actions = std::make_shared<std::vector<Action>>(4);
  add_plot_horizon(plot, (*actions)[0]);
  add_plot_rotations(plot, (*actions)[1]);
  add_plot_error(plot, (*actions)[2]);
  add_plot_length(plot, (*actions)[3]);
  return [actions]() -> int {
    for (const auto& action : *actions) {
      const int code = action();
      if (code >= 0) return code;
    }
    return -1;
  };
}

}  // namespace ropesim::cli
