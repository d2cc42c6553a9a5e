// `ropesim diagnose`: one report on a model config × dtype × framework preset and the known ways
// that framework goes wrong (proofs/diagnose.hpp). Parsing and printing only.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "attention/framework_presets.hpp"
#include "attention/hf_config.hpp"
#include "cli/commands.hpp"
#include "cli/gnuplot.hpp"
#include "cli/jobs.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "io/files.hpp"
#include "numeric/error.hpp"
#include "numeric/format.hpp"
#include "proofs/diagnose.hpp"

namespace ropesim::cli {

namespace {

std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.4g}", v) : "inf"; }

std::string band_text(std::uint64_t a, std::uint64_t b) { return fmt::format("{}..{}", a, b - 1); }

std::string collision_text(const proofs::DiagnoseCensus& c, std::uint64_t context) {
  if (!c.first_repeat)
    return fmt::format("every rotation distinct ({} of {})", c.distinct, context);
  return fmt::format("first collision R^_{} = R^_{}; {} distinct of {}; {} positions share one",
                     c.first_repeat->later, c.first_repeat->earlier, c.distinct, context,
                     c.largest_class.size);
}

std::string flags_line(const proofs::DiagnoseCensus& c) {
  std::string out;
  if (c.overflow.count > 0)
    out +=
        fmt::format("; overflow at {} positions (first {})", c.overflow.count, *c.overflow.first);
  if (c.nan.count > 0)
    out += fmt::format("; NaN at {} positions (first {})", c.nan.count, *c.nan.first);
  return out;
}

std::string angle_text(const proofs::BandError& b) {
  return b.max_angle ? num(b.max_angle->value) + " rad" : std::string("n/a");
}

std::string drift_text(const proofs::DriftResult& d) {
  if (!d.length) return fmt::format("> {}", d.max_length);
  return fmt::format("{}{}", *d.length, d.nan ? " (NaN)" : "");
}

/// "drifts by X (max |error| Y at p = Z)" for a path's fixed-offset score.
std::string score_text(const proofs::DiagnosePath& p) {
  if (!p.score_drift) return "n/a";
  const auto& d = *p.score_drift;
  return fmt::format("drifts by {} (max |error| {} at p = {}{})", num(d.drift), num(d.max_error),
                     d.max_error_position,
                     d.nonfinite ? fmt::format("; {} non-finite", d.nonfinite) : std::string());
}

/// The `ropesim rotate` command that computes `p`'s fixed-offset score along the positions.
std::string rotate_command(const proofs::DiagnoseReport& r, const proofs::DiagnosePath& p) {
  std::string positions;
  for (const auto q : r.score.positions)
    positions += (positions.empty() ? "" : ",") + fmt::format("{}", q);
  std::string out = fmt::format(
      "ropesim rotate --schedule '{}' --realization '{}' --format {} --seed {} --offset {} "
      "--positions {} --summation {}",
      r.schedule, p.realisation, r.format.name, r.score.seed, r.score.offset, positions,
      numeric::to_string(r.score.summation));
  if (r.score.summation == numeric::Summation::wide_accumulator)
    out += " --accumulator " + r.score.accumulator.name;
  return out;
}

/// The band in which `p` first differs from its reference, "a..b".
std::string first_band(const proofs::DiagnoseReport& r, const proofs::DiagnosePath& p) {
  for (const auto& [a, b] : r.bands)
    if (p.first_differing_band && *p.first_differing_band == a) return band_text(a, b);
  return "-";
}

/// The few lines a person reads first.
std::string summary_text(const proofs::DiagnoseReport& r) {
  std::string out;
  out += fmt::format("diagnose     {} in {} with {}, positions 0..{} ({} bands)\n", r.schedule,
                     r.format.name, r.framework, r.context - 1, r.bands.size());
  const auto& c = r.correct;
  out += fmt::format(
      "correct path {}: max |cos/sin error| against exact {} ({} ulps of {}), angle {}; {}{}\n",
      r.framework, num(c.overall.max_absolute.value), num(c.overall.max_ulps.value), r.format.name,
      angle_text(c.overall), collision_text(c.census, r.context), flags_line(c.census));
  if (c.score_drift) {
    out += fmt::format(
        "score        previous-token score <R^_p q, R^_(p-{}) k> (random q, k: seed {}; exact {}) "
        "over {} positions {}..{}: correct path {}\n",
        r.score.offset, r.score.seed, num(r.score.exact), r.score.positions.size(),
        r.score.positions.front(), r.score.positions.back(), score_text(c));
  }
  if (r.ranking.empty()) {
    out += "risks        no candidate differs from the correct path in this setting\n";
  } else {
    out += "risks        ranked by error against the correct path (max |cos/sin error|, angle):\n";
  }
  std::size_t rank = 0;
  for (const auto i : r.ranking) {
    const auto& p = r.candidates[i];
    const auto& o = p.overall;
    ++rank;
    if (o.differing == 0) {
      out += fmt::format("  {}. {:<14} no difference on 0..{}\n", rank, p.name, r.context - 1);
      continue;
    }
    out += fmt::format(
        "  {}. {:<14} max {} (angle {}), first in positions {}; {}{}; previous-token score "
        "{}.\n     {}. Fix: {}. Matches {}.\n",
        rank, p.name, num(o.max_absolute.value), angle_text(o), first_band(r, p),
        collision_text(p.census, r.context), flags_line(p.census), score_text(p),
        p.candidate->means, p.candidate->fix, p.candidate->report);
  }
  for (const auto& p : r.candidates) {
    if (!p.skipped.empty()) out += fmt::format("  -  {:<14} not measured: {}\n", p.name, p.skipped);
  }
  const auto& h = r.horizon.report;
  if (!r.horizon.skipped.empty()) {
    out += fmt::format("head         previous-token head Y^1 on block 0: not measured: {}\n",
                       r.horizon.skipped);
  } else {
    out += fmt::format(
        "head         previous-token head Y^1 on block 0 (theta {}), {} in {}: certified range "
        "N_max = {}{} (C = {})\n",
        r.horizon.theta ? r.horizon.theta->get_str() : "irrational", r.horizon.realisation,
        r.format.name, h.range.n_max, h.range.at_limit ? " (at the scan limit)" : "",
        h.C.to_decimal(9));
  }
  const auto& b = r.bounds;
  if (b.base && b.config_check) {
    out += fmt::format(
        "base-context rope_theta {} with D = {} {} B_m >= 0 for m <= {}{}", b.base->get_str(),
        b.dim,
        b.config_check->verdict == proofs::BaseVerdict::passes ? "satisfies" : "does not satisfy",
        r.context,
        b.config_check->witness ? fmt::format(" (B_{} < 0)", *b.config_check->witness)
                                : std::string());
    if (b.bound && b.bound->base)
      out +=
          fmt::format("; smallest grid base for L = {}: {}", r.context, b.bound->base->get_str());
    out += " [Men et al. 2024; unscaled base]\n";
  }
  out += fmt::format(
      "drift        low-frequency channels {}..{} move q.k by > {}: exact at m = {}, {} at m = {} "
      "[Barbero et al. 2024]\n",
      b.channels.empty() ? 0 : b.channels.front(), b.channels.empty() ? 0 : b.channels.back(),
      b.drift_tolerance.get_str(), drift_text(b.drift_exact), r.framework,
      drift_text(b.drift_realised));
  return out;
}

/// One row per (path, band) and per path overall.
Table band_table(const proofs::DiagnoseReport& r) {
  Table t;
  t.columns = {"path",          "against",     "positions", "max_abs",      "max_abs_position",
               "max_abs_block", "typical_abs", "max_ulps",  "typical_ulps", "max_angle_rad",
               "differing",     "entries",     "nonfinite"};
  auto add = [&](const proofs::DiagnosePath& p) {
    if (!p.skipped.empty()) return;
    auto row = [&](const std::string& label, const proofs::BandError& b) {
      auto finite = [](double v) {
        return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json("inf");
      };
      t.rows.push_back(
          {p.name, p.against, label, finite(b.max_absolute.value),
           b.max_absolute.seen ? nlohmann::json(b.max_absolute.position) : nlohmann::json(nullptr),
           b.max_absolute.seen ? nlohmann::json(b.max_absolute.block) : nlohmann::json(nullptr),
           finite(b.typical_absolute), finite(b.max_ulps.value), finite(b.typical_ulps),
           b.max_angle ? finite(b.max_angle->value) : nlohmann::json(nullptr), b.differing,
           b.entries, b.nonfinite});
    };
    for (const auto& b : p.bands) row(band_text(b.start, b.end), b);
    row("all", p.overall);
  };
  add(r.correct);
  for (const auto i : r.ranking) add(r.candidates[i]);
  return t;
}

Table census_table(const proofs::DiagnoseReport& r) {
  Table t;
  t.columns = {"path",          "realization",   "distinct", "first_collision",
               "collides_with", "largest_class", "overflow", "nan"};
  auto add = [&](const proofs::DiagnosePath& p) {
    if (!p.skipped.empty()) return;
    const auto& c = p.census;
    t.rows.push_back(
        {p.name, p.realisation, c.distinct,
         c.first_repeat ? nlohmann::json(c.first_repeat->later) : nlohmann::json(nullptr),
         c.first_repeat ? nlohmann::json(c.first_repeat->earlier) : nlohmann::json(nullptr),
         c.largest_class.size, c.overflow.count, c.nan.count});
  };
  add(r.correct);
  for (const auto i : r.ranking) add(r.candidates[i]);
  return t;
}

/// The fixed-offset score per path: drift and largest error against exact.
Table score_table(const proofs::DiagnoseReport& r) {
  Table t;
  t.columns = {"path",      "realization",        "exact",    "drift",
               "max_error", "max_error_position", "nonfinite"};
  auto finite = [](double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(std::isnan(v) ? "nan" : "inf");
  };
  auto add = [&](const proofs::DiagnosePath& p) {
    if (!p.skipped.empty() || !p.score_drift) return;
    const auto& d = *p.score_drift;
    t.rows.push_back({p.name, p.realisation, finite(r.score.exact), finite(d.drift),
                      finite(d.max_error), d.max_error_position, d.nonfinite});
  };
  add(r.correct);
  for (const auto i : r.ranking) add(r.candidates[i]);
  return t;
}

/// What the score table is and the command that reproduces the correct path's row.
std::string score_note(const proofs::DiagnoseReport& r) {
  if (!r.correct.score_drift) return "The context has fewer than 2 positions: no score drift.\n";
  return fmt::format(
      "The score <R^_p q, R^_(p-{0}) k> of one random q, k (seed {1}) at {2} positions spread over "
      "{3}..{4}, against the exact q R_(-{0}) k (the same at every p; THEORY §2.1). Each row is "
      "what `ropesim rotate` prints for that path, e.g. for the correct path:\n\n{5}\n",
      r.score.offset, r.score.seed, r.score.positions.size(), r.score.positions.front(),
      r.score.positions.back(), rotate_command(r, r.correct));
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string html_table(const Table& t) {
  std::string out = "<table>\n<tr>";
  for (const auto& c : t.columns) out += "<th>" + html_escape(c) + "</th>";
  out += "</tr>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (const auto& cell : row) out += "<td>" + html_escape(cell_text(cell)) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

/// Draws `script` with gnuplot into a temporary SVG and returns its text (inline figure).
std::string svg_figure(const std::string& script) {
  const auto path = std::filesystem::temp_directory_path() /
                    fmt::format("ropesim-diagnose-{}-{}.svg", ::getpid(), script.size());
  Figure figure;
  figure.body = script;
  figure.kind = PlotKind::svg;
  figure.out_path = path.string();
  figure.width = 1100;
  figure.height = 560;
  draw_with_gnuplot(figure);
  std::string text = io::read_input_file(path.string(), "figure");
  std::filesystem::remove(path);
  if (const auto at = text.find("<svg"); at != std::string::npos) text = text.substr(at);
  return text;
}

/// Error against position per path (band maxima, log scale).
std::string error_figure(const proofs::DiagnoseReport& r) {
  std::string data, plots;
  std::vector<const proofs::DiagnosePath*> paths{&r.correct};
  for (const auto i : r.ranking) paths.push_back(&r.candidates[i]);
  int k = 0;
  for (const auto* p : paths) {
    data += fmt::format("$P{} << EOD\n", k);
    for (const auto& b : p->bands) {
      const double v = b.max_absolute.value;
      data += fmt::format("{} {}\n", gnuplot_number(static_cast<double>(b.end)),
                          gnuplot_number(v > 0 ? v : std::nan("")));
    }
    data += "EOD\n";
    plots += fmt::format("{}$P{} using 1:2 with linespoints lw 2 title {}", k ? ", " : "", k,
                         gnuplot_quote(p->name + " (vs " + p->against + ")"));
    ++k;
  }
  return data + "set title " +
         gnuplot_quote(fmt::format("max |cos/sin error| per position band: {} in {} with {}",
                                   r.schedule, r.format.name, r.framework)) +
         "\nset xlabel " + gnuplot_quote("band end (position)") + "\nset ylabel " +
         gnuplot_quote("max |error| (log scale)") +
         "\nset logscale xy 10\nset format y '1e%L'\nset grid\nset key outside right top\nplot " +
         plots + "\n";
}

/// The collision map: distinct rotations and the first collision per path.
std::string collision_figure(const proofs::DiagnoseReport& r) {
  std::string data = "$C << EOD\n";
  std::vector<const proofs::DiagnosePath*> paths{&r.correct};
  for (const auto i : r.ranking) paths.push_back(&r.candidates[i]);
  int k = 0;
  std::string xtics;
  for (const auto* p : paths) {
    const auto& c = p->census;
    data += fmt::format("{} {} {}\n", k, c.distinct,
                        c.first_repeat ? static_cast<double>(c.first_repeat->later)
                                       : static_cast<double>(r.context));
    xtics += fmt::format("{}{} {}", k ? ", " : "", gnuplot_quote(p->name), k);
    ++k;
  }
  data += "EOD\n";
  return data + "set title " +
         gnuplot_quote(fmt::format("collision map over positions 0..{} (context {})", r.context - 1,
                                   r.context)) +
         "\nset xtics (" + xtics + ") rotate by 30 right\nset bmargin 8\nset ylabel " +
         gnuplot_quote("positions") +
         "\nset style fill solid 0.5\nset boxwidth 0.35\nset yrange [0:*]\nset grid ytics\n"
         "set key outside right top\nplot $C using ($1-0.2):2 with boxes title " +
         gnuplot_quote("distinct rotations") + ", $C using ($1+0.2):3 with boxes title " +
         gnuplot_quote("first collision (context = none)") + "\n";
}

std::string markdown_report(const proofs::DiagnoseReport& r) {
  std::string out = "# ropesim diagnose\n\nMade by " + provenance_line() + "\n\n```\n" +
                    summary_text(r) + "```\n\n## Errors per position band\n\n" +
                    band_table(r).to_markdown() + "\n## Rotation census\n\n" +
                    census_table(r).to_markdown() + "\n## Fixed-offset score drift\n\n" +
                    score_note(r) + "\n" + score_table(r).to_markdown() + "\n## Candidates\n\n";
  for (const auto& p : r.candidates) {
    out += fmt::format("- **{}** (`{}`): {}. Fix: {}. Report: {}.{}\n", p.name, p.realisation,
                       p.candidate->means, p.candidate->fix, p.candidate->report,
                       p.skipped.empty() ? "" : " Not measured: " + p.skipped + ".");
  }
  return out;
}

std::string html_report(const proofs::DiagnoseReport& r) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ropesim diagnose " +
      html_escape(r.schedule) +
      "</title>\n<style>body{font-family:sans-serif;max-width:1200px;margin:auto}"
      "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}"
      "pre{background:#f6f6f6;padding:8px;white-space:pre-wrap}</style></head><body>\n"
      "<h1>ropesim diagnose</h1>\n<p>Made by " +
      html_escape(provenance_line()) + "</p>\n<pre>" + html_escape(summary_text(r)) +
      "</pre>\n<h2>Error against position</h2>\n" + svg_figure(error_figure(r)) +
      "\n<h2>Collision map</h2>\n" + svg_figure(collision_figure(r)) +
      "\n<h2>Errors per position band</h2>\n" + html_table(band_table(r)) +
      "<h2>Rotation census</h2>\n" + html_table(census_table(r)) +
      "<h2>Fixed-offset score drift</h2>\n<p>" + html_escape(score_note(r)) + "</p>\n" +
      html_table(score_table(r)) + "<h2>Candidates</h2>\n<ul>\n";
  for (const auto& p : r.candidates) {
    out += "<li><b>" + html_escape(p.name) + "</b> (<code>" + html_escape(p.realisation) +
           "</code>): " + html_escape(std::string(p.candidate->means)) +
           ". Fix: " + html_escape(std::string(p.candidate->fix)) +
           ". Report: " + html_escape(std::string(p.candidate->report)) + "." +
           (p.skipped.empty() ? "" : " Not measured: " + html_escape(p.skipped) + ".") + "</li>\n";
  }
  return out + "</ul>\n</body></html>\n";
}

}  // namespace

Action add_diagnose_command(CLI::App& app) {
  struct Options {
    std::string config, schedule, dtype, framework, out;
    std::uint64_t context = 0;
    bool json = false, allow_slow = false;
    unsigned jobs = 0;
    ProgressChoice progress = ProgressChoice::automatic;
  };
  auto o = std::make_shared<Options>();
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
  cmd->add_option("--framework", o->framework, "Framework preset (hf, vllm, llamacpp-cpu, ...)")
      ->required();
  add_integer_option(cmd, "--context", o->context,
                     "Context N: positions 0..N-1 (default max_position_embeddings)", 1,
                     attention::kMaxCensusPositions);
  cmd->add_option("--out", o->out, "Write the report to REPORT.md or REPORT.html");
  cmd->add_flag("--json", o->json, "Print the report as JSON");
  cmd->add_flag("--allow-slow", o->allow_slow,
                "Run even when the estimate exceeds the default budget (10 min)");
  add_jobs_option(cmd, o->jobs);
  add_progress_flags(cmd, o->progress);
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    bool html = false;
    if (cmd->count("--out") > 0) {
      const std::string ext = std::filesystem::path(o->out).extension().string();
      if (ext != ".md" && ext != ".html") {
        throw InvalidArgument("--out: '" + o->out +
                              "' has an unknown extension; accepted: REPORT.md, REPORT.html");
      }
      html = ext == ".html";
      io::check_output_path(o->out, "--out");
      if (html) require_gnuplot();
    }
    if (o->config.empty() && o->schedule.empty())
      throw InvalidArgument("--config: give a config.json (or --schedule S)");
    const auto format = with_context("--dtype", [&] { return numeric::parse_format(o->dtype); });
    (void)with_context("--framework", [&] { return attention::framework_preset(o->framework); });
    const auto s =
        o->config.empty()
            ? with_context("--schedule", [&] { return attention::parse_schedule(o->schedule); })
            : with_context("--config", [&] { return attention::hf_config_schedule(o->config); });
    std::uint64_t context = o->context;
    if (context == 0) {
      if (!s.max_position_embeddings) {
        throw InvalidArgument("--context: '" + s.spec +
                              "' has no max_position_embeddings; accepted: --context N (1..2^31)");
      }
      context = *s.max_position_embeddings;
    }
    check_budget("--context", proofs::diagnose_work(s, context), opt_in_budget(o->allow_slow));
    warn_about_schedule(s, context - 1);
    ProgressReporter progress(o->progress, "diagnose");
    proofs::DiagnoseOptions options;
    options.context = context;
    options.threads = jobs_threads(o->jobs);
    // steps: per measured path one compare per band and one census; then head, bounds
    const std::uint64_t paths = 1 + proofs::diagnose_candidates().size();
    const std::uint64_t steps = paths * (proofs::diagnose_bands(context).size() + 1) + 3;
    std::uint64_t step = 0;
    options.progress = [&](const std::string&, std::uint64_t, std::uint64_t) {
      progress.update(std::min(++step, steps), steps, "steps");
    };
    const auto report = with_context(
        "--framework", [&] { return proofs::diagnose(s, format, o->framework, options); });
    progress.finish();
    if (!o->out.empty()) {
      io::write_output_file(o->out, html ? html_report(report) : markdown_report(report));
    }
    if (o->json) {
      std::cout << proofs::to_json(report).dump(2) << "\n";
    } else {
      std::cout << summary_text(report) << "\n"
                << band_table(report).for_terminal("").to_text() << "\n"
                << census_table(report).for_terminal("").to_text() << "\n"
                << score_table(report).for_terminal("").to_text();
    }
    return 0;
  };
}

}  // namespace ropesim::cli
