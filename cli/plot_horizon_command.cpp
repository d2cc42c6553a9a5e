// `ropesim plot horizon`: N_max^(k) of the fixed-offset head against the precision p (THEORY §6),
// with the exact-arithmetic bound, the tie distance and the heuristic caps of the same
// horizon reports (proofs::horizon).
// Output only (STYLE): this file gathers library results into tables and gnuplot scripts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include "attention/schedules/schedule.hpp"
#include "cli/commands.hpp"
#include "cli/gnuplot.hpp"
#include "cli/horizon_common.hpp"
#include "cli/plot_common.hpp"
#include "cli/plot_horizon_figure.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "proofs/range/horizon_rows.hpp"

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

/// The reports of every spec in order (proofs::horizon_rows, one row at a time), with progress
/// on a terminal.
std::vector<proofs::HorizonReport> measure_horizons(std::vector<proofs::HorizonSpec> specs) {
  const auto start = std::chrono::steady_clock::now();
  proofs::HorizonRowsProgress progress;
  if (stderr_is_tty()) {
    progress = [start](std::size_t done, std::size_t total, const proofs::HorizonReport& row) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cerr << fmt::format("\r[{}/{}] {} k={}  {:.0f}s   ", done, total, row.format, row.k,
                               elapsed)
                << (done == total ? "\n" : "") << std::flush;
    };
  }
  return proofs::horizon_rows(std::move(specs), 1, progress);
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
    const std::string script = horizon_plot_script(d, reports, precisions, o->head, o->output);
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
