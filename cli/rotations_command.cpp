// `ropesim rotations`: the rotation census of one schedule × realisation × format, or the
// realised rotation at one position next to the exact one (THEORY §3; NUMERIC §4).
#include <fmt/format.h>

#include <iostream>
#include <thread>

#include "attention/census/census.hpp"
#include "attention/realisations/bounded_realisation.hpp"
#include "cli/bounded_rotations.hpp"
#include "cli/commands.hpp"
#include "cli/jobs.hpp"
#include "cli/realisation_options.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "numeric/fast_engine.hpp"
#include "proofs/reports/certificate.hpp"

namespace ropesim::cli {

namespace {

std::string census_text(const attention::CensusResult& r, numeric::Rounding rounding) {
  std::string out;
  const std::uint64_t last = r.start + (r.positions - 1);
  out += fmt::format(
      "schedule      {}\nrealization   {} (table format {})\nformat        {}\nrounding      "
      "{}\npositions     {}..{}\n",
      r.schedule, r.realisation, r.table_format.name, r.format.name, numeric::to_string(rounding),
      r.start, last);
  if (!r.axis.empty()) {
    out += r.axis == "diagonal"
               ? std::string("axis          diagonal (i,...,i)\n")
               : fmt::format("axis          {} (positions are this coordinate; the others at {})\n",
                             r.axis, attention::to_string(r.at));
  }
  out += fmt::format("distinct      {} realised rotations\n", r.distinct_rotations);
  out += fmt::format("largest class {} positions share one rotation (the smallest is {})\n",
                     r.largest_class.size, r.largest_class.position);
  std::string per_block;
  for (std::size_t d = 0; d < r.distinct_per_block.size() && d < 16; ++d) {
    per_block += fmt::format("{}{}", d ? " " : "", r.distinct_per_block[d]);
  }
  if (r.distinct_per_block.size() > 16)
    per_block += fmt::format(" ... ({} blocks)", r.distinct_per_block.size());
  out += fmt::format("per block     {}\n", per_block);
  // each block's own smallest period P ≤ N/2 (component periodicity, THEORY §3 Def 2.1), '-' if
  // none
  std::string block_periods;
  for (std::size_t d = 0; d < r.period_per_block.size() && d < 16; ++d) {
    const auto& p = r.period_per_block[d];
    block_periods += fmt::format("{}{}", d ? " " : "", p ? std::to_string(*p) : std::string("-"));
  }
  if (r.period_per_block.size() > 16)
    block_periods += fmt::format(" ... ({} blocks)", r.period_per_block.size());
  out += fmt::format("block periods {}\n", block_periods);
  out += r.first_repeat ? fmt::format("first repeat  R^_{} = R^_{}\n", r.first_repeat->later,
                                      r.first_repeat->earlier)
                        : std::string("first repeat  none\n");
  if (r.period) {
    out += r.start == 0 ? fmt::format(
                              "verdict       periodic with period {} (smallest P <= N/2 with "
                              "R^_(i+P) = R^_i for all i < N-P)\n",
                              *r.period)
                        : fmt::format(
                              "verdict       periodic with period {} (smallest P <= N/2 with "
                              "R^_(i+P) = R^_i for all S <= i < S+N-P)\n",
                              *r.period);
  } else {
    std::uint64_t witnessed = 0;
    for (auto w : r.witnesses) witnessed += w >= 0 ? 1 : 0;
    out += fmt::format(
        "verdict       non-periodic on {}..{}: a witness i with R^_(i+P) != R^_i for {} of P = "
        "1..{}\n",
        r.start, last, witnessed, r.max_period);
    if (r.largest_witness_position) {
      out += fmt::format("              largest witness i = {} (for P = {})\n",
                         *r.largest_witness_position, *r.largest_witness_period);
    }
  }
  out +=
      fmt::format("overflow      {} positions{}\n", r.overflow.count,
                  r.overflow.first ? fmt::format(" (first {})", *r.overflow.first) : std::string());
  out += fmt::format("NaN           {} positions{}\n", r.nan.count,
                     r.nan.first ? fmt::format(" (first {})", *r.nan.first) : std::string());
  return out;
}

std::string position_text(const attention::PositionReport& report, numeric::Rounding rounding) {
  Table table;
  const bool scaled = report.attention_factor.has_value();
  table.columns = {"block",
                   "exact angle",
                   "steps",
                   scaled ? "s*cos exact" : "cos exact",
                   "cos realised",
                   "cos err ulp",
                   scaled ? "s*sin exact" : "sin exact",
                   "sin realised",
                   "sin err ulp",
                   "flags"};
  for (const auto& b : report.blocks) {
    std::string steps;
    for (const auto& [name, value] : b.steps)
      steps += (steps.empty() ? "" : " ") + name + "=" + value.to_decimal(9);
    table.rows.push_back(
        {b.block, fmt::format("{:.9g}", b.exact_angle), steps.empty() ? "-" : steps,
         fmt::format("{:.9g}", b.reference_cos), b.cos.to_decimal(9),
         fmt::format("{:.3g}", b.cos_error_ulps), fmt::format("{:.9g}", b.reference_sin),
         b.sin.to_decimal(9), fmt::format("{:.3g}", b.sin_error_ulps),
         flags_text(b.flags) +
             (b.constant_flags ? " constants:" + flags_text(b.constant_flags) : "")});
  }
  return fmt::format("schedule {}  realization {}  table format {}  rounding {}  position {}\n",
                     report.schedule, report.realisation, report.table_format.name,
                     numeric::to_string(rounding),
                     report.tuple.empty() ? std::to_string(report.position)
                                          : attention::to_string(report.tuple)) +
         (scaled ? fmt::format("attention factor s = {} = {:.17g} multiplies the realised cos and "
                               "sin (Hugging Face: "
                               "cos = emb.cos() * attention_scaling); the exact columns and the "
                               "errors include it\n",
                               report.attention_factor_text, report.attention_factor->get_d())
                 : std::string()) +
         table.to_text();
}

}  // namespace

namespace {

struct RotationsOptions {
  RealisationArguments realised;
  std::uint64_t positions = 65536, start = 0;
  std::optional<std::uint64_t> max_period;
  std::optional<std::string> position, axis, at;
  bool json = false, witnesses = false, allow_slow = false;
  unsigned threads = 0;
  std::string out, certificate;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_rotations_options(CLI::App& app, RotationsOptions* o) {
  auto* cmd = app.add_subcommand(
      "rotations",
      "Rotation census of one schedule, realization and format (or one position with --position)");
  cmd->add_option("--schedule", o->realised.schedule,
                  "Schedule spec or model preset (see docs/CLI.md)")
      ->required();
  add_realisation_options(cmd, o->realised);
  auto* positions =
      add_integer_option(cmd, "--positions", o->positions, "N: positions 0..N-1",
                         attention::kMinCensusPositions, attention::kMaxCensusPositions)
          ->capture_default_str();
  auto* start = add_integer_option(
      cmd, "--start", o->start,
      "S: the census covers positions S..S+N-1 (periods and witnesses are about that window)", 0,
      INT64_MAX);
  auto* position = cmd->add_option(
      "--position", o->position,
      "Report the realised rotation at position I, or at the tuple (t,h,w) / t,h,w of a "
      "multi-axis schedule (a scalar I there is (I,...,I)), instead of a census");
  auto* axis = cmd->add_option(
      "--axis", o->axis,
      "Multi-axis schedules: run the census along this axis (a name, e.g. x, t, level2, "
      "or its index); default: the diagonal (i,...,i)");
  auto* at = cmd->add_option(
      "--at", o->at,
      "With --axis: the fixed coordinates of the other axes, a tuple (default all 0)");
  at->needs(axis);
  auto* max_period = add_integer_option(cmd, "--max-period", o->max_period,
                                        "P_max for non-periodicity witnesses (default N/2)", 1,
                                        attention::kMaxCensusPositions);
  auto* threads = add_jobs_option(cmd, o->threads);
  cmd->add_flag("--json", o->json, "Print JSON (counts; the witness list with --witnesses)");
  cmd->add_flag("--allow-slow", o->allow_slow,
                "Run even when the estimate exceeds the default budget (10 min, 8 GiB)");
  cmd->add_flag("--witnesses", o->witnesses,
                "Include the witness of every candidate period P in --json (N/2 numbers)");
  cmd->add_option("-o,--out", o->out,
                  "Also write the JSON (with provenance and the full witness list) to FILE.json");
  auto* certificate = cmd->add_option(
      "--certificate", o->certificate,
      "Write the census certificate (the period, or a witness for every candidate period) to "
      "FILE.json, for ropesim-verify");
  certificate->excludes(position);
  certificate->excludes(axis);
  position->excludes(positions);
  position->excludes(start);
  position->excludes(max_period);  // --position reports one position: census options do not apply
  position->excludes(threads);
  position->excludes(axis);
  position->excludes(at);
  return cmd;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_rotations(const CLI::App& cmd, RotationsOptions& o) {
  if (cmd.count("--out") > 0) {
    (void)output_kind_for(o.out, "--out", {OutputKind::json});  // writes JSON only
    io::check_output_path(o.out, "--out");
  }
  if (cmd.count("--certificate") > 0) {
    (void)output_kind_for(o.certificate, "--certificate", {OutputKind::json});
    io::check_output_path(o.certificate, "--certificate");
    io::check_distinct_outputs({{o.out, "--out"}, {o.certificate, "--certificate"}});
  }
  auto write_out = [&](nlohmann::json j) {
    if (o.out.empty()) return;
    j["provenance"] = provenance();
    io::write_output_file(o.out, j.dump(2) + "\n");
  };
  const RealisationPolicy policy = parse_realisation_policy(o.realised);
  const attention::Schedule& schedule = policy.schedule;
  const numeric::FormatBinding& binding = policy.binding;
  const numeric::Rounding mode = binding.rounding;
  // a bounded-error cos_sin step is the census over every implementation
  if (attention::is_bounded_realisation_spec(o.realised.realisation)) {
    return bounded_rotations(cmd, schedule, binding,
                             {o.realised.realisation, o.start, o.positions, o.json, o.out});
  }
  const auto realisation = parse_applicable_realisation(o.realised, policy);
  if (o.position) {
    const attention::PositionTuple tuple =
        with_context("--position", [&] { return attention::parse_position_tuple(*o.position); });
    if (tuple.size() == 1) warn_about_schedule(schedule, tuple.front());
    const auto report = with_context("--position", [&] {
      return tuple.size() == 1 ? attention::query_position(schedule, realisation, tuple.front())
                               : attention::query_position(schedule, realisation, tuple);
    });
    const nlohmann::json j = attention::to_json(report, binding);
    write_out(j);
    if (o.json) {
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << position_text(report, mode);
    }
    return 0;
  }
  attention::check_census_limits(o.positions, o.start, o.max_period);
  attention::CensusOptions options;
  options.positions = o.positions;
  options.start = o.start;
  options.max_period = o.max_period;
  if (o.axis) options.axis = with_context("--axis", [&] { return schedule.axis_index(*o.axis); });
  if (o.at)
    options.at = with_context("--at", [&] { return attention::parse_position_tuple(*o.at); });
  options.threads = jobs_threads(o.threads);
  if (!o.certificate.empty() && !schedule.position_axes.empty()) {
    throw InvalidArgument("--certificate: a certificate covers one-axis schedules; '" +
                          schedule.spec +
                          "' has position axes; accepted: a schedule without position axes");
  }
  // a certificate ropesim-verify cannot check is refused before the census runs
  if (!o.certificate.empty())
    proofs::check_census_certificate_covered(schedule, realisation, options.positions);
  check_budget("--positions", attention::census_work(schedule, options),
               opt_in_budget(o.allow_slow));
  warn_about_schedule(schedule, o.start + (o.positions - 1));
  const auto result = attention::census(schedule, realisation, options);
  // the certificate is built (and may refuse) before any file is written
  const std::string certificate =
      o.certificate.empty()
          ? std::string()
          : proofs::census_certificate(schedule, realisation, result).dump(1) + "\n";
  write_out(attention::to_json(result, true));
  if (!o.certificate.empty()) io::write_output_file(o.certificate, certificate, "--certificate");
  if (o.json) {
    std::cout << attention::to_json(result, o.witnesses).dump(2) << "\n";
  } else {
    std::cout << census_text(result, mode);
  }
  return 0;
}

}  // namespace

Action add_rotations_command(CLI::App& app) {
  auto o = std::make_shared<RotationsOptions>();
  CLI::App* cmd = add_rotations_options(app, o.get());
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_rotations(*cmd, *o);
  };
}

}  // namespace ropesim::cli
