// `ropesim horizon`: the certified range N_max^(k) of the fixed-offset head Y^k next to the
// comparison columns (THEORY §6; RoPE-X eq. 10), for one head; and the shared flag handling of
// `ropesim table horizon`.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "attention/realisations/bounded_realisation.hpp"
#include "attention/transformer/transformer.hpp"
#include "cli/bounded_rotations.hpp"
#include "cli/commands.hpp"
#include "cli/horizon_common.hpp"
#include "cli/jobs.hpp"
#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/experiments/offset_simulation.hpp"
#include "proofs/reports/certificate.hpp"

namespace ropesim::cli {

namespace {

std::string simulation_text(const proofs::SimulationVerdict& v,
                            const proofs::SimulationOptions& options) {
  const std::uint64_t L = v.L;
  if (v.outcome == proofs::SimulationOutcome::not_run) {
    return fmt::format("simulation     not run: L = {} < k = {} (Cor 4.1 needs k <= L <= N_max)\n",
                       L, v.k);
  }
  const auto& r = *v.report;
  if (r.first) {
    return fmt::format(
        "simulation     L = {}: DISAGREEMENT on '{}' at position {}: Y^k pi_a is {}, the "
        "transformer gives {}{}\n",
        L, r.first->word.size() > 60 ? r.first->word.substr(0, 60) + "..." : r.first->word,
        r.first->position, r.first->expected ? 1 : 0, r.first->got,
        v.outcome == proofs::SimulationOutcome::bug ? " (within the certified range: a bug)"
                                                    : " (beyond N_max: allowed)");
  }
  return fmt::format(
      "simulation     L = {}: agrees on {} words, {} positions (all words up to length {}, {} "
      "random up to {})\n",
      L, r.words, r.positions, r.exhaustive_length, options.random_words,
      std::min(L, options.random_max_length));
}

}  // namespace

void add_head_shape_options(CLI::App* cmd, HeadArguments& a) {
  cmd->add_option("--g", a.g, "Frequency g in radians per position (exact decimal or fraction P/Q)")
      ->capture_default_str();
  cmd->add_option("--schedule", a.schedule,
                  "Multi-frequency head over a schedule or model preset (equal weights)");
  cmd->add_option(
      "--axis", a.axis,
      "Multi-axis schedules: the head along this axis (name or index), the other coordinates 0");
  cmd->add_option("--k", a.k, "Offset k >= 1")->capture_default_str();
  cmd->add_option("--C", a.C, "Scale C (exact decimal) or 'auto'")->capture_default_str();
}

void add_head_options(CLI::App* cmd, HeadArguments& a) {
  cmd->add_option("--format", a.format, "Number format F")->capture_default_str();
  cmd->add_option("--realization,--realisation", a.realisation,
                  "r1 r2 r3 hf llamacpp-cpu llamacpp-cuda pipeline:...")
      ->capture_default_str();
  cmd->add_option("--rounding", a.rounding, "Rounding of every operation")->capture_default_str();
  cmd->add_option("--engine", a.engine,
                  "Arithmetic engine: mpfr fast auto (same bits, different speed)")
      ->capture_default_str();
  cmd->add_option("--summation", a.summation,
                  "Dot products: sequential pairwise wide-accumulator exact")
      ->capture_default_str();
  cmd->add_option("--accumulator", a.accumulator,
                  "Accumulator format for --summation wide-accumulator")
      ->capture_default_str();
  cmd->add_option("--algorithm", a.algorithm,
                  "Certified range by auto, candidates (offsets whose ideal score comes within "
                  "an error bound of the target's; any schedule, r1/r3 and pipelines such as hf) "
                  "or scan (quadratic; r2, other pipelines, cross-checks)")
      ->capture_default_str();
  add_integer_option(cmd, "--max-length", a.max_length,
                     "L_max (default: the algorithm's quick limit: candidates 2*10^7/head_dim, "
                     "scan about 2*10^4/sqrt(pairs))",
                     1, proofs::kMaxScanLength);
  cmd->add_flag("--allow-slow", a.allow_slow,
                "Run a --max-length beyond the quick limit even when its estimate exceeds the "
                "budget (10 min)");
}

namespace {

struct HorizonOptions {
  HeadArguments head;
  bool json = false;
  bool simulate = false;
  bool quiet = false;
  unsigned jobs = 0;
  std::string out, certificate;
  std::optional<std::uint64_t> simulate_length;
  proofs::SimulationOptions simulation;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_horizon_options(CLI::App& app, HorizonOptions* o) {
  auto* cmd = app.add_subcommand(
      "horizon",
      "Certified range N_max^(k) of the fixed-offset head Y^k (THEORY §6) and comparison columns");
  add_head_shape_options(cmd, o->head);
  add_head_options(cmd, o->head);
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--quiet", o->quiet, "No progress on stderr");
  add_jobs_option(cmd, o->jobs);
  cmd->add_option("-o,--out", o->out,
                  "Also write the report as a one-row table to FILE (.csv .md .json .tex)");
  cmd->add_option("--certificate", o->certificate,
                  "Write the certificate (every certified query's target and largest competitor "
                  "score, the failing query and its gap) to FILE.json, for ropesim-verify");
  cmd->add_flag(
      "--simulate", o->simulate,
      "Also run the Y^k transformer on words over {a,b} and compare with Y^k pi_a (Cor 4.1)");
  add_integer_option(cmd, "--simulate-length", o->simulate_length,
                     "L of the simulation check (default N_max)", 1, proofs::kMaxScanLength);
  add_integer_option(cmd, "--exhaustive-length", o->simulation.exhaustive_length,
                     "Every word up to this length", 0, 40)
      ->capture_default_str();
  add_integer_option(cmd, "--random-words", o->simulation.random_words, "Random words", 0,
                     UINT32_MAX)
      ->capture_default_str();
  add_integer_option(cmd, "--random-max-length", o->simulation.random_max_length,
                     "Longest random word", 1, proofs::kMaxScanLength)
      ->capture_default_str();
  add_integer_option(cmd, "--seed", o->simulation.seed, "Seed of the random words", 0, UINT64_MAX)
      ->capture_default_str();
  return cmd;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_horizon(const CLI::App& cmd, HorizonOptions& o) {
  proofs::check_head_source(cmd.count("--g") > 0, cmd.count("--schedule") > 0
                                                      ? std::optional(o.head.schedule)
                                                      : std::nullopt);
  if (o.simulate_length && *o.simulate_length < 1)
    throw InvalidArgument("--simulate-length: L must be at least 1");
  std::optional<OutputKind> kind;
  if (cmd.count("--out") > 0) {
    kind = output_kind_for(o.out, "--out");
    io::check_output_path(o.out, "--out");
  }
  if (cmd.count("--certificate") > 0) {
    (void)output_kind_for(o.certificate, "--certificate", {OutputKind::json});
    io::check_output_path(o.certificate, "--certificate");
    io::check_distinct_outputs({{o.out, "--out"}, {o.certificate, "--certificate"}});
  }
  if (attention::is_bounded_realisation_spec(o.head.realisation))  // cli/bounded_rotations
    return bounded_horizon(cmd, o.head, o.json, o.out);
  o.head.threads = jobs_threads(o.jobs);
  auto spec = proofs::horizon_spec(o.head);
  // a certificate the verifier could not check is refused before anything is measured
  if (!o.certificate.empty()) proofs::check_horizon_certificate_covered(spec.head);
  spec.threads = o.head.threads;  // the position chunks of each C measured
  const auto start = std::chrono::steady_clock::now();
  const bool show_progress = !o.quiet && stderr_is_tty();
  if (show_progress) {
    spec.progress = [start](std::size_t done, std::size_t total) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cerr << "\r" << progress_line(done, total, "candidates C", elapsed) << "   "
                << std::flush;
    };
  }
  if (o.simulate || o.simulate_length) {
    // The simulation's cost at its longest possible L, checked before the scan runs.
    const std::uint64_t L = proofs::simulation_length(o.simulate_length, spec.max_length);
    check_budget(cmd.count("--random-words") ? "--random-words" : "--simulate",
                 proofs::offset_simulation_work(spec.head, L, o.simulation),
                 opt_in_budget(o.head.allow_slow));
  }
  if (!o.quiet && spec.estimate && spec.estimate->seconds > 10) {
    // the estimate of a --max-length beyond the quick limit, computed when it was checked
    // (stderr: stdout unchanged); the quick default is quick by construction
    const auto& e = *spec.estimate;
    std::cerr << fmt::format(
        "horizon: estimate up to {} and {:.3g} GB for L = {} on {} thread{} (less if a "
        "query fails earlier)\n",
        proofs::duration_text(e.seconds), e.bytes / 1e9, spec.max_length, spec.threads,
        spec.threads == 1 ? "" : "s");
  }
  const auto report = proofs::horizon(spec);
  if (show_progress && report.auto_C) std::cerr << "\n";
  nlohmann::json json = proofs::to_json(report);
  std::string text = horizon_text(report);
  if (o.simulate || o.simulate_length) {
    proofs::FixedOffsetSpec head = spec.head;
    head.C = attention::exact_rational(report.C);
    const auto v =
        proofs::simulate_certified_range(head, report.range.n_max, o.simulate_length, o.simulation);
    json["simulation"] = proofs::to_json(v);
    text += simulation_text(v, o.simulation);
  }
  // built (and possibly refused) before any file is written
  const std::string certificate =
      o.certificate.empty() ? std::string()
                            : proofs::horizon_certificate(spec.head, report).dump(1) + "\n";
  if (!o.certificate.empty()) io::write_output_file(o.certificate, certificate, "--certificate");
  if (kind) {
    Table t = horizon_table({report});
    if (json.contains("simulation")) t.json_extra[0]["simulation"] = json["simulation"];
    io::write_output_file(o.out, render(t, *kind));
  }
  if (o.json) {
    std::cout << json.dump(2) << "\n";
  } else {
    std::cout << text;
  }
  return 0;
}

}  // namespace

Action add_horizon_command(CLI::App& app) {
  auto o = std::make_shared<HorizonOptions>();
  CLI::App* cmd = add_horizon_options(app, o.get());
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_horizon(*cmd, *o);
  };
}

}  // namespace ropesim::cli
