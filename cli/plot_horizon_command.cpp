// `ropesim plot horizon`: N_max^(k) of the fixed-offset head against the precision p (THEORY §6),
// with the exact-arithmetic bound, the tie distance and the heuristic caps of the same
// horizon reports (proofs::horizon).
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

namespace {

struct PlotHorizonOptions {
  std::string formats = "p=4..24,e=8", k = "1", C = "auto";
  HeadArguments head;
  PlotOutput output;
};

void add_plot_horizon_options(CLI::App* cmd, PlotHorizonOptions& o) {
  cmd->add_option("--formats", o.formats, "Formats (binary floating point), e.g. p=4..24,e=8")
      ->capture_default_str();
  auto* g = cmd->add_option("--g", o.head.g, "Frequency g in radians per position (exact decimal)")
                ->capture_default_str();
  cmd->add_option("--schedule", o.head.schedule,
                  "Multi-frequency head over a schedule or model preset (equal weights; instead "
                  "of --g), e.g. llama3-8b")
      ->excludes(g);
  cmd->add_option("--k", o.k, "Offsets k (one curve each)")->capture_default_str();
  cmd->add_option("--C", o.head.C, "Scale C (exact decimal) or 'auto'")->capture_default_str();
  cmd->add_option("--realization,--realisation", o.head.realisation,
                  "r1 r2 hf llamacpp-cpu llamacpp-cuda pipeline:...")
      ->capture_default_str();
  cmd->add_option("--rounding", o.head.rounding, "Rounding of every operation")
      ->capture_default_str();
  cmd->add_option("--algorithm", o.head.algorithm,
                  "Certified range by auto, candidates or scan (see ropesim horizon)")
      ->capture_default_str();
  add_integer_option(cmd, "--max-length", o.head.max_length,
                     "L_max of every scan (default: each head's quick limit)", 1,
                     proofs::kMaxScanLength);
  cmd->add_flag("--allow-slow", o.head.allow_slow,
                "Run a --max-length beyond the quick limit even when its estimate exceeds the "
                "budget (10 min)");
  o.output.add_options(cmd);
}

/// One horizon spec per (k, format), every cell validated before anything is measured (bad
/// input: no output); `precisions` receives each format's p.
std::vector<proofs::HorizonSpec> plot_horizon_specs(const CLI::App* cmd,
                                                    const PlotHorizonOptions& o,
                                                    std::vector<int>& precisions) {
  const auto formats = split_unique(o.formats, "--formats", ListKind::formats);
  const auto ks = split_unique(o.k, "--k");
  if (formats.empty())
    throw InvalidArgument("--formats: empty list; give formats such as p=4..24,e=8");
  if (ks.empty()) throw InvalidArgument("--k: empty list; give offsets such as 1,2");
  if (cmd->count("--schedule") > 0 && o.head.schedule.empty()) {
    // an empty --schedule is a bad spec (refused as by the other commands), not "no schedule"
    with_context("--schedule", [] { return attention::parse_schedule(""); });
  }
  if (o.head.C.find(',') != std::string::npos) {
    throw InvalidArgument("--C: plot horizon takes one C (or 'auto'), got '" + o.head.C + "'");
  }
  std::vector<proofs::HorizonSpec> specs;
  for (const auto& k : ks) {
    for (const auto& format : formats) {
      HeadArguments a = o.head;
      a.format = format;
      a.k = k;
      try {
        specs.push_back(proofs::horizon_spec(a));
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
  return specs;
}

/// The reports of every spec in order, with progress on a terminal.
std::vector<proofs::HorizonReport> measure_horizons(const std::vector<proofs::HorizonSpec>& specs) {
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
  return reports;
}

/// A value beyond the y axis (drawn as an arrow at the top edge).
struct Beyond {
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
  std::vector<Beyond> beyond;
};

HorizonPlotData horizon_plot_data(const std::vector<proofs::HorizonReport>& reports,
                                  const std::vector<int>& precisions) {
  HorizonPlotData out;
  out.data.columns = {"format",
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
  out.top = std::pow(10.0, std::ceil(std::log10(3 * tallest)));
  const double top = out.top;
  for (std::size_t c = 0; c < reports.size(); ++c) {
    const auto& r = reports[c];
    const int p = precisions[c];
    const nlohmann::json tie =
        r.tie_distance ? nlohmann::json(r.tie_distance->value) : nlohmann::json(nullptr);
    const nlohmann::json tie_limit =
        r.tie_distance ? nlohmann::json(r.tie_distance->at_limit) : nlohmann::json(nullptr);
    out.data.rows.push_back({r.format, p, r.k, r.C.to_decimal(9), r.range.n_max, r.range.at_limit,
                             r.delta_bound.value, r.delta_bound.at_limit, tie, tie_limit,
                             r.heuristic ? nlohmann::json(fmt::format("{:.6g}", *r.heuristic))
                                         : nlohmann::json(nullptr),
                             fmt::format("{:.6g}", r.tie_cap)});
    const std::string n = std::to_string(r.range.n_max);
    const bool d_beyond = static_cast<double>(r.delta_bound.value) > top;
    const bool h_beyond = r.heuristic && *r.heuristic > top;
    if (d_beyond) out.beyond.push_back({p, r.k, false, static_cast<double>(r.delta_bound.value)});
    if (h_beyond) out.beyond.push_back({p, r.k, true, *r.heuristic});
    // A value beyond the axis: no point on its line (the line breaks), the arrow marks it.
    const std::string d = d_beyond ? nan : std::to_string(r.delta_bound.value);
    const std::string d_marker = d;
    out.any_n_limit = out.any_n_limit || r.range.at_limit;
    out.any_delta_limit = out.any_delta_limit || r.delta_bound.at_limit;
    out.any_zero = out.any_zero || r.range.n_max == 0;
    // p, n_max (line), n_max exact, n_max lower bound, delta (line), delta exact, delta lower,
    // heuristic
    out.per_k[r.k].push_back(
        {std::to_string(p), n, r.range.at_limit ? nan : n, r.range.at_limit ? n : nan, d,
         r.delta_bound.at_limit ? nan : d_marker, r.delta_bound.at_limit ? d_marker : nan,
         r.heuristic && !h_beyond ? gnuplot_number(*r.heuristic) : nan});
    if (r.k == reports.front().k) {
      std::string t = nan, t_exact = nan, t_lower = nan;
      if (r.tie_distance) {
        t = std::to_string(r.tie_distance->value);
        (r.tie_distance->at_limit ? t_lower : t_exact) = t;
        out.any_tie_limit = out.any_tie_limit || r.tie_distance->at_limit;
      }
      // p, tie (line), tie exact, tie lower bound, tie cap
      out.shared.push_back({std::to_string(p), t, t_exact, t_lower, gnuplot_number(r.tie_cap)});
    }
  }
  return out;
}

/// The script being built: data blocks and settings (`script`), the plot clauses (`plots`) and
/// the key entries drawn after them (`keys`).
struct HorizonScript {
  std::string script;
  std::vector<std::string> plots, keys;
};

bool by_p(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::stoi(a[0]) < std::stoi(b[0]);
}

/// Per k: N_max (exact and lower-bound markers), the exact-arithmetic bound and the heuristic.
void add_k_series(HorizonPlotData& d, HorizonScript& out) {
  auto& [script, plots, keys] = out;
  const bool any_n_limit = d.any_n_limit, any_delta_limit = d.any_delta_limit;
  std::size_t index = 0;
  for (auto& [k, rows] : d.per_k) {
    std::stable_sort(rows.begin(), rows.end(), by_p);
    const std::string block = "K" + std::to_string(k);
    script += rows_block(block, rows);
    const std::string c = colour(index++);
    const std::string kk = fmt::format("k={}", k);
    // Curves are drawn untitled; the key is built from keyentry lines (line and marker together).
    keys.push_back(fmt::format("keyentry with linespoints lw 2 pt 7 ps 1.2 lc rgb '{}' title {}", c,
                               gnuplot_quote("N_max measured (" + kk + ")")));
    plots.push_back(fmt::format("${} using 1:2 with lines lw 2 lc rgb '{}' notitle", block, c));
    plots.push_back(
        fmt::format("${} using 1:3 with points pt 7 ps 1.2 lc rgb '{}' notitle", block, c));
    if (any_n_limit) {
      keys.push_back(fmt::format("keyentry with points pt 6 ps 1.6 lw 2 lc rgb '{}' title {}", c,
                                 gnuplot_quote("N_max ≥ (scan limit) (" + kk + ")")));
      plots.push_back(
          fmt::format("${} using 1:4 with points pt 6 ps 1.6 lw 2 lc rgb '{}' notitle", block, c));
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
      plots.push_back(
          fmt::format("${} using 1:7 with points pt 4 ps 1.3 lw 2 lc rgb '{}' notitle", block, c));
    }
    keys.push_back(fmt::format("keyentry with lines dt 3 lw 2 lc rgb '{}' title {}", c,
                               gnuplot_quote("heuristic π·√(2C/f_large) − 1 (" + kk + ")")));
    plots.push_back(
        fmt::format("${} using 1:($8) with lines dt 3 lw 2 lc rgb '{}' notitle", block, c));
  }
}

/// The values beyond the axis: an arrow up to the top edge per (p, k, quantity), side by side
/// within p ± 0.4, with their key entries and a note naming the largest values.
void add_beyond_arrows(const HorizonPlotData& d, const PlotHorizonOptions& opts,
                       HorizonScript& out) {
  auto& [script, plots, keys] = out;
  const auto& per_k = d.per_k;
  const auto& beyond = d.beyond;
  const PlotHorizonOptions* o = &opts;
  const double top = d.top;
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
        gnuplot_number(top), b.heuristic ? "head empty" : "head filled", b.heuristic ? "dt 3 " : "",
        c);
    (b.heuristic ? largest_heuristic : largest_bound) =
        std::max(b.heuristic ? largest_heuristic : largest_bound, b.value);
    if (beyond_keys.insert({b.k, b.heuristic}).second) {
      keys.push_back(
          fmt::format("keyentry with vectors {} lw 1.5 lc rgb '{}' title {}",
                      b.heuristic ? "head empty dt 3" : "head filled", c,
                      gnuplot_quote(fmt::format("{} beyond the axis (k={})",
                                                b.heuristic ? "heuristic" : "exact bound", b.k))));
    }
  }
  if (!beyond.empty()) {
    std::vector<std::string> parts;
    if (largest_bound > 0) parts.push_back(fmt::format("exact bound up to {:.2g}", largest_bound));
    if (largest_heuristic > 0)
      parts.push_back(fmt::format("heuristic up to {:.2g}", largest_heuristic));
    script +=
        "set label 3 " +
        gnuplot_quote("arrows: beyond the axis (" + fmt::format("{}", fmt::join(parts, ", ")) +
                      "; every value in the table and --data)") +
        " at graph 0.99, graph 0.03 right front" + o->output.font_at(10) + "\n";
  }
}

/// The gnuplot script of the figure (data inline): the k series, the arrows, the
/// k-independent tie distance and tie cap, then title, axes and the plot command.
std::string horizon_plot_script(HorizonPlotData& d,
                                const std::vector<proofs::HorizonReport>& reports,
                                const std::vector<int>& precisions,
                                const PlotHorizonOptions& opts) {
  HorizonScript out;
  add_k_series(d, out);
  add_beyond_arrows(d, opts, out);
  auto& [script, plots, keys] = out;
  const PlotHorizonOptions* o = &opts;
  auto& shared = d.shared;
  const bool any_tie_limit = d.any_tie_limit, any_zero = d.any_zero;
  const double top = d.top;
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
           fmt::format("{}, C {}, realisation {}, {}",
                       o->head.schedule.empty()
                           ? "g = " + o->head.g + " rad/position"
                           : "head over " + first.schedule + " (equal weights)",
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

  return script;
}

}  // namespace

CLI::App* add_plot_horizon(CLI::App* plot, std::function<int()>& action) {
  auto o = std::make_shared<PlotHorizonOptions>();
  auto* cmd = plot->add_subcommand(
      "horizon",
      "N_max^(k) of the fixed-offset head against the precision p, with the bounds of THEORY §6");
  add_plot_horizon_options(cmd, *o);
  action = [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    o->output.check(cmd);
    std::vector<int> precisions;
    const auto specs = plot_horizon_specs(cmd, *o, precisions);
    const auto reports = measure_horizons(specs);
    HorizonPlotData d = horizon_plot_data(reports, precisions);
    const std::string script = horizon_plot_script(d, reports, precisions, *o);
    o->output.draw(script, 1400, 800);
    o->output.write_data(d.data);
    std::cout << horizon_table(reports).for_terminal("").to_text();
    std::cout << "figure: " << o->output.out
              << (o->output.data.empty() ? "" : ", data: " + o->output.data) << "\n";
    return 0;
  };
  return cmd;
}

}  // namespace ropesim::cli
