// `ropesim diagnose`: one report on a model config × dtype × framework preset and the known ways
// that framework goes wrong (proofs/reports/diagnose.hpp). Parsing and printing only.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "attention/realisations/framework_presets.hpp"
#include "attention/schedules/hf_config.hpp"
#include "cli/commands.hpp"
#include "cli/diagnose_report.hpp"
#include "cli/gnuplot.hpp"
#include "cli/jobs.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "numeric/format.hpp"
#include "proofs/reports/diagnose.hpp"

namespace ropesim::cli {

namespace {

struct DiagnoseOptions {
  std::string config, schedule, dtype, framework, out, offsets;
  std::uint64_t context = 0, draws = 8, horizon_limit = 0;
  bool json = false, allow_slow = false;
  unsigned jobs = 0;
  ProgressChoice progress = ProgressChoice::automatic;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_diagnose_options(CLI::App& app, DiagnoseOptions* o) {
  auto* cmd = app.add_subcommand(
      "diagnose",
      "One report on a model config x dtype x framework: errors against exact per position band, "
      "the known framework bugs ranked, collisions, a previous-token head, base-context and "
      "semantic-drift bounds");
  auto* config = cmd->add_option("--config", o->config, "A Hugging Face config.json");
  auto* schedule = cmd->add_option("--schedule", o->schedule, "Schedule spec or model preset");
  config->excludes(schedule);
  schedule->excludes(config);
  cmd->add_option("--dtype", o->dtype, "Activation format A (bf16, bfloat16, fp16, fp32, ...)")
      ->required();
  cmd->add_option("--framework", o->framework,
                  "Framework preset(s), comma list (hf, vllm, flash-attn, llamacpp-cpu, ...): one "
                  "report with a column per framework")
      ->required();
  add_integer_option(cmd, "--context", o->context,
                     "Context N: positions 0..N-1 (default: the context the config serves, "
                     "max(max_position_embeddings, factor x original_max_position_embeddings))",
                     1, attention::kMaxCensusPositions);
  cmd->add_option("--offsets", o->offsets,
                  "Offsets n of the score check, comma list in 1..N-1 (default 1,64,4096,N-1)");
  add_integer_option(cmd, "--draws", o->draws,
                     "Random q, k draws of the score check (seeds 1..K; the upper half by |exact "
                     "score| is scanned at each offset)",
                     1, 64)
      ->capture_default_str();
  add_integer_option(cmd, "--horizon-limit", o->horizon_limit,
                     "Length limit L of the model head's certified range (as horizon "
                     "--max-length L; default: horizon's quick limit; a larger L keeps the quick "
                     "limit)",
                     1, proofs::kMaxScanLength);
  cmd->add_option("--out", o->out, "Write the report to REPORT.md or REPORT.html");
  cmd->add_flag("--json", o->json, "Print the report as JSON");
  cmd->add_flag("--allow-slow", o->allow_slow,
                "Run even when the estimate exceeds the default budget (10 min)");
  add_jobs_option(cmd, o->jobs);
  add_progress_flags(cmd, o->progress);
  return cmd;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_diagnose(const CLI::App& cmd, DiagnoseOptions& o) {
  bool html = false;
  if (cmd.count("--out") > 0) {
    const std::string ext = std::filesystem::path(o.out).extension().string();
    if (ext != ".md" && ext != ".html") {
      throw InvalidArgument("--out: '" + o.out +
                            "' has an unknown extension; accepted: REPORT.md, REPORT.html");
    }
    html = ext == ".html";
    io::check_output_path(o.out, "--out");
    if (html) require_gnuplot();
  }
  if (o.config.empty() && o.schedule.empty())
    throw InvalidArgument("--config: give a config.json (or --schedule S)");
  const auto format = with_context("--dtype", [&] { return numeric::parse_format(o.dtype); });
  std::vector<std::string> frameworks;
  for (const auto& item : split_list(o.framework, "--framework")) {
    (void)with_context("--framework", [&] { return attention::framework_preset(item); });
    frameworks.push_back(item);
  }
  if (frameworks.empty())
    throw InvalidArgument("--framework: empty list; accepted: preset names, e.g. hf,vllm");
  const auto s =
      o.config.empty()
          ? with_context("--schedule", [&] { return attention::parse_schedule(o.schedule); })
          : with_context("--config", [&] { return attention::hf_config_schedule(o.config); });
  std::uint64_t context = o.context;
  if (context == 0) {
    const auto served = proofs::diagnose_default_context(s);
    if (!served) {
      throw InvalidArgument("--context: '" + s.spec +
                            "' has no max_position_embeddings; accepted: --context N (1..2^31)");
    }
    context = *served;
  }
  std::vector<std::uint64_t> offsets;
  if (cmd.count("--offsets") > 0) {
    for (const auto& item : split_list(o.offsets, "--offsets"))
      offsets.push_back(ropesim::parse_integer(item, "--offsets", 1, context - 1));
    if (offsets.empty())
      throw InvalidArgument("--offsets: empty list; accepted: integers in 1.." +
                            std::to_string(context - 1));
  }
  check_budget("--context", proofs::diagnose_work(s, context, frameworks.size()),
               opt_in_budget(o.allow_slow));
  warn_about_schedule(s, context - 1);
  ProgressReporter progress(o.progress, "diagnose");
  proofs::DiagnoseOptions options;
  options.context = context;
  options.offsets = offsets;
  options.draws = o.draws;
  if (cmd.count("--horizon-limit") > 0) options.horizon_limit = o.horizon_limit;
  options.threads = jobs_threads(o.jobs);
  // steps: per measured path one compare per band and one census; then head, bounds
  const std::uint64_t paths = 1 + proofs::diagnose_candidates().size();
  const std::uint64_t steps =
      frameworks.size() * (paths * (proofs::diagnose_bands(context).size() + 2) + 3);
  std::uint64_t step = 0;
  options.progress = [&](const std::string&, std::uint64_t, std::uint64_t) {
    progress.update(std::min(++step, steps), steps, "steps");
  };
  const auto reports = with_context(
      "--framework", [&] { return proofs::diagnose_frameworks(s, format, frameworks, options); });
  progress.finish();
  if (!o.out.empty()) {
    io::write_output_file(o.out, html ? html_report(reports) : markdown_report(reports));
  }
  if (o.json) {
    std::cout << proofs::to_json(std::span<const proofs::DiagnoseReport>(reports)).dump(2) << "\n";
  } else if (reports.size() == 1) {
    const auto& report = reports[0];
    std::cout << summary_text(report) << "\n"
              << band_table(report).for_terminal("").to_text() << "\n"
              << census_table(report).for_terminal("").to_text() << "\n"
              << score_table(report).for_terminal("").to_text();
  } else {
    for (const auto& report : reports) std::cout << summary_text(report) << "\n";
    std::cout << frameworks_table(reports).for_terminal("").to_text() << "\n"
              << ranking_table(reports).for_terminal("").to_text()
              << "(bands, census and score tables per framework: --out REPORT.md or --json)\n";
  }
  return 0;
}

}  // namespace

Action add_diagnose_command(CLI::App& app) {
  auto o = std::make_shared<DiagnoseOptions>();
  CLI::App* cmd = add_diagnose_options(app, o.get());
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_diagnose(*cmd, *o);
  };
}

}  // namespace ropesim::cli
