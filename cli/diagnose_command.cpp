// `ropesim diagnose`: one report on a model config × dtype × framework preset and the known ways
// that framework goes wrong (proofs/diagnose.hpp). Parsing and printing only.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
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

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  return std::isfinite(v) ? fmt::format("{:.4g}", v) : (v > 0 ? "inf" : "-inf");
}

/// A relative error as a percentage, 3 significant digits ("nan", "inf" kept).
std::string percent(double v) {
  if (!std::isfinite(v)) return num(v);
  return fmt::format("{:.3g}%", 100 * v);
}

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

/// "n=1 0.21% · n=64 0.3% · …": a path's largest relative score error per offset.
std::string score_text(const proofs::DiagnosePath& p) {
  if (p.scores.empty()) return "n/a";
  std::string out;
  for (const auto& x : p.scores) {
    out += fmt::format("{}n={} {}", out.empty() ? "" : ", ", x.offset, percent(x.max_rel_error));
    if (x.nonfinite) out += fmt::format(" ({} non-finite)", x.nonfinite);
  }
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
      "correct path {}: max |cos/sin error| against exact {} ({} ulp(1) of {}), angle {}; {}{}\n",
      r.framework, num(c.overall.max_absolute.value),
      num(std::ldexp(c.overall.max_absolute.value, r.format.precision - 1)), r.format.name,
      angle_text(c.overall), collision_text(c.census, r.context), flags_line(c.census));
  if (!c.scores.empty()) {
    out += fmt::format(
        "score        <R^_p q, R^_(p-n) k> of {} random q, k draws against the exact score{}, "
        "largest relative error over every p = n..{} (and the upper half of the draws by "
        "|exact|): correct path {}\n",
        r.score.seeds.size(),
        r.attention_factor ? fmt::format(" (both sides times s^2, s = {:.6g} the attention factor)",
                                         r.attention_factor->get_d())
                           : std::string(),
        r.context - 1, score_text(c));
  }
  if (r.ranking.empty()) {
    out += "risks        no candidate differs from the correct path in this setting\n";
  } else {
    out +=
        "risks        ranked by the largest relative score error over the offsets, then the "
        "angle error against the correct path, then collisions (decided by: the metric that "
        "separates a place from the next):\n";
  }
  for (std::size_t place = 0; place < r.ranking.size(); ++place) {
    const auto& p = r.candidates[r.ranking[place]];
    const auto& o = p.overall;
    const std::size_t rank = place + 1;
    if (o.differing == 0) {
      out += fmt::format("  {}. {:<14} no difference on 0..{} (decided by {})\n", rank, p.name,
                         r.context - 1, r.decided_by[place]);
      continue;
    }
    out += fmt::format(
        "  {}. {:<14} score error {} (decided by {}); cos/sin max {} (angle {}), first in "
        "positions {}; {}{}.\n     {}. Fix: {}. Matches {}.\n",
        rank, p.name, score_text(p), r.decided_by[place], num(o.max_absolute.value), angle_text(o),
        first_band(r, p), collision_text(p.census, r.context), flags_line(p.census),
        p.candidate->means, p.candidate->fix, p.candidate->report);
  }
  for (const auto& p : r.candidates) {
    if (!p.skipped.empty()) out += fmt::format("  -  {:<14} not measured: {}\n", p.name, p.skipped);
  }
  const auto& h = r.horizon.report;
  if (!r.horizon.skipped.empty()) {
    out += fmt::format("head         the model's previous-token head Y^1: not measured: {}\n",
                       r.horizon.skipped);
  } else {
    out += fmt::format(
        "head         the model's previous-token head Y^1 ({} blocks, equal weights), {} in {}: "
        "certified range N_max {} (C = {}, chosen automatically; `ropesim horizon --schedule "
        "'{}' --realization {} --format {} --k 1 --C auto{}`)\n",
        r.horizon.blocks, r.horizon.realisation, r.format.name,
        h.range.at_limit ? fmt::format(">= {} (the scan limit: no failure up to it)", h.range.n_max)
                         : fmt::format("= {}", h.range.n_max),
        h.C.to_decimal(6), r.schedule, r.horizon.realisation, r.format.name,
        r.horizon.limit ? fmt::format(" --max-length {}", *r.horizon.limit) : std::string());
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
    out += b.scaled ? " [Men et al. 2024; B_m over the config's scaled frequencies, the grid "
                      "search over unscaled bases]\n"
                    : " [Men et al. 2024]\n";
  }
  out += fmt::format(
      "drift        low-frequency channels {}..{} move q.k by > {}: exact at m = {}, {} at m = {} "
      "[Barbero et al. 2024]\n",
      b.channels.empty() ? 0 : b.channels.front(), b.channels.empty() ? 0 : b.channels.back(),
      b.drift_tolerance.get_str(), drift_text(b.drift_exact), r.framework,
      drift_text(b.drift_realised));
  return out;
}

/// One row per (path, band) and per path overall. A band with non-finite entries shows
/// "nan" in its maximum columns (the maxima are over the finite entries; JSON keeps both).
Table band_table(const proofs::DiagnoseReport& r) {
  Table t;
  // no max_ulps column: near a zero of cos or sin one ulp of the reference is tiny, so the
  // largest error in ulps says nothing there (it stays in the JSON)
  t.columns = {"path",  "against",     "positions",    "nonfinite",     "max_abs",   "position",
               "block", "typical_abs", "typical_ulps", "max_angle_rad", "differing", "entries"};
  auto add = [&](const proofs::DiagnosePath& p) {
    if (!p.skipped.empty()) return;
    auto row = [&](const std::string& label, const proofs::BandError& b) {
      auto hidden = [&](double v) { return b.nonfinite > 0 ? std::string("nan") : num(v); };
      t.rows.push_back(
          {p.name, p.against, label, b.nonfinite, hidden(b.max_absolute.value),
           b.max_absolute.seen ? nlohmann::json(b.max_absolute.position) : nlohmann::json(nullptr),
           b.max_absolute.seen ? nlohmann::json(b.max_absolute.block) : nlohmann::json(nullptr),
           num(b.typical_absolute), num(b.typical_ulps),
           b.max_angle ? nlohmann::json(hidden(b.max_angle->value)) : nlohmann::json(nullptr),
           b.differing, b.entries});
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

/// The score check per path and offset: the largest error over every query position, where,
/// and the command that recomputes it.
Table score_table(const proofs::DiagnoseReport& r) {
  Table t;
  t.columns = {"path",     "offset", "exact",     "max_abs_error", "max_rel_error",
               "position", "seed",   "nonfinite", "command"};
  auto add = [&](const proofs::DiagnosePath& p) {
    if (!p.skipped.empty()) return;
    for (const auto& x : p.scores) {
      t.rows.push_back({p.name, x.offset, num(x.exact), num(x.max_abs_error),
                        percent(x.max_rel_error), x.position, x.seed, x.nonfinite,
                        proofs::diagnose_rotate_command(r, p, x)});
    }
  };
  add(r.correct);
  for (const auto i : r.ranking) add(r.candidates[i]);
  return t;
}

/// What the score table is.
std::string score_note(const proofs::DiagnoseReport& r) {
  if (r.correct.scores.empty()) return "The context has fewer than 2 positions: no score check.\n";
  const auto& x = r.correct.scores.front();
  return fmt::format(
      "The score <R^_p q, R^_(p-n) k> of random q, k (seeds 1..{}) against the exact score, the "
      "same at every p (THEORY §2.1){}, at each offset n, maximised over every query position "
      "p = n..{} and over the draws whose |exact score| at n is at least the median (a relative "
      "error near a zero of the score says nothing about rounding); {} fast path, each maximum "
      "recomputed by the engine. Each row's command prints that score with `ropesim rotate`; "
      "e.g. the correct path at n = {}:\n\n{}\n",
      r.score.seeds.size(),
      r.attention_factor ? fmt::format("; {} multiplies cos and sin by the attention factor s = "
                                       "{:.6g}, so the exact score is taken times s^2",
                                       r.framework, r.attention_factor->get_d())
                         : std::string(),
      r.context - 1, r.correct.score_method, x.offset,
      proofs::diagnose_rotate_command(r, r.correct, x));
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

/// Error against position per path (band maxima at each band's end, log scale). The x range
/// runs from just below the first band's end to just above the context, so that every band's
/// point is inside it whatever the context (one band, ending at N, for N <= 1024); a path with
/// no error (every band 0: nothing to draw on a log scale) is left out, and when no path has
/// one the figure says so instead of drawing nothing (gnuplot refuses a plot without a point).
std::string error_figure(const proofs::DiagnoseReport& r) {
  std::string data, plots;
  std::vector<const proofs::DiagnosePath*> paths{&r.correct};
  for (const auto i : r.ranking) paths.push_back(&r.candidates[i]);
  int k = 0;
  for (const auto* p : paths) {
    std::string points;
    for (const auto& b : p->bands) {
      const double v = b.max_absolute.value;
      points += fmt::format("{} {}\n", gnuplot_number(static_cast<double>(b.end)),
                            gnuplot_number(v > 0 ? v : std::nan("")));
    }
    const bool drawn = std::any_of(p->bands.begin(), p->bands.end(), [](const auto& b) {
      return b.max_absolute.value > 0 && std::isfinite(b.max_absolute.value);
    });
    if (!drawn) continue;
    data += fmt::format("$P{} << EOD\n", k) + points + "EOD\n";
    plots += fmt::format("{}$P{} using 1:2 with linespoints lw 2 title {}", k ? ", " : "", k,
                         gnuplot_quote(p->name + " (vs " + p->against + ")"));
    ++k;
  }
  const double first_end = r.bands.empty() ? 1.0 : static_cast<double>(r.bands.front().second);
  const std::string title = fmt::format("max |cos/sin error| per position band: {} in {} with {}",
                                        r.schedule, r.format.name, r.framework);
  std::string settings =
      "set title " + gnuplot_quote(title) + "\nset xlabel " + gnuplot_quote("band end (position)") +
      "\nset ylabel " + gnuplot_quote("max |error| (log scale)") +
      fmt::format(
          "\nset logscale xy 10\nset xrange [{}:{}]\nset format y '1e%L'\nset grid\n"
          "set key outside right top\n",
          gnuplot_number(0.9 * first_end), gnuplot_number(1.1 * static_cast<double>(r.context)));
  if (k == 0) {
    // no path has an error to draw: an empty frame that says so
    return settings + "set yrange [1e-10:1]\nset label 1 " +
           gnuplot_quote("no path differs from its reference in any band") +
           " at graph 0.5, graph 0.5 center\nplot 1/0 notitle\n";
  }
  return data + settings + "plot " + plots + "\n";
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
         gnuplot_quote("first collision (at the top: none in the context)") + "\n";
}

/// Several frameworks side by side: per path and offset the largest relative score error,
/// one column per framework ("-" where the path was not measured there).
Table frameworks_table(std::span<const proofs::DiagnoseReport> reports) {
  Table t;
  t.columns = {"path", "offset"};
  for (const auto& r : reports) t.columns.push_back(r.framework + " max_rel_error");
  std::vector<std::string> names{"correct"};
  for (const auto& c : reports[0].candidates) names.push_back(c.name);
  auto path_of = [](const proofs::DiagnoseReport& r,
                    const std::string& name) -> const proofs::DiagnosePath* {
    if (name == "correct") return &r.correct;
    for (const auto& c : r.candidates)
      if (c.name == name) return c.skipped.empty() ? &c : nullptr;
    return nullptr;
  };
  for (const auto& name : names) {
    for (const auto n : reports[0].score.offsets) {
      std::vector<nlohmann::json> row{name, n};
      for (const auto& r : reports) {
        const auto* p = path_of(r, name);
        std::string cell = "-";
        if (p) {
          for (const auto& x : p->scores)
            if (x.offset == n) cell = percent(x.max_rel_error);
        }
        row.push_back(cell);
      }
      t.rows.push_back(row);
    }
  }
  return t;
}

/// The ranking of each framework side by side: per place the path and what decided it.
Table ranking_table(std::span<const proofs::DiagnoseReport> reports) {
  Table t;
  t.columns = {"place"};
  std::size_t places = 0;
  for (const auto& r : reports) {
    t.columns.push_back(r.framework);
    places = std::max(places, r.ranking.size());
  }
  for (std::size_t i = 0; i < places; ++i) {
    std::vector<nlohmann::json> row{i + 1};
    for (const auto& r : reports) {
      row.push_back(i < r.ranking.size()
                        ? r.candidates[r.ranking[i]].name + " (" + r.decided_by[i] + ")"
                        : std::string("-"));
    }
    t.rows.push_back(row);
  }
  return t;
}

/// A code fence longer than every run of backticks in `text` (CommonMark: the fence closes only
/// on a run at least as long), so a config path or value cannot end the block early.
std::string fence_for(const std::string& text) {
  std::size_t longest = 0, run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<std::size_t>(3, longest + 1), '`');
}

/// `t` with every text cell in HTML's entities: Markdown renders raw HTML inside table cells,
/// and the score table's commands carry the config path.
Table markdown_safe(Table t) {
  for (auto& row : t.rows) {
    for (auto& cell : row) {
      if (cell.is_string()) cell = html_escape(cell.get<std::string>());
    }
  }
  return t;
}

std::string markdown_report(std::span<const proofs::DiagnoseReport> reports) {
  // Text outside code is written with HTML's entities for < > & " (which Markdown renders as
  // the characters), so a config path such as '<img src=x onerror=...>.json' stays text, as
  // in the HTML report.
  std::string out = "# ropesim diagnose\n\nMade by " + html_escape(provenance_line()) + "\n\n";
  if (reports.size() > 1) {
    out +=
        "## Frameworks side by side\n\nLargest relative score error over every query "
        "position, per offset:\n\n" +
        markdown_safe(frameworks_table(reports)).to_markdown() +
        "\nRanking per framework (worst first; the metric that decided each place):\n\n" +
        markdown_safe(ranking_table(reports)).to_markdown() + "\n";
  }
  for (const auto& r : reports) {
    const std::string framework = html_escape(r.framework);
    const std::string h = reports.size() > 1 ? "## " + framework + ": " : "## ";
    const std::string summary = summary_text(r), fence = fence_for(summary);
    out += (reports.size() > 1 ? "# " + framework + "\n\n" : std::string()) + fence + "\n" +
           summary + fence + "\n\n" + h + "Errors per position band\n\n" +
           markdown_safe(band_table(r)).to_markdown() + "\n" + h + "Rotation census\n\n" +
           markdown_safe(census_table(r)).to_markdown() + "\n" + h +
           "Scores at the offsets that matter\n\n" + html_escape(score_note(r)) + "\n" +
           markdown_safe(score_table(r)).to_markdown() + "\n" + h + "Candidates\n\n";
    for (const auto& p : r.candidates) {
      out += fmt::format("- **{}** (`{}`): {}. Fix: {}. Report: {}.{}\n", p.name, p.realisation,
                         p.candidate->means, p.candidate->fix, p.candidate->report,
                         p.skipped.empty() ? "" : " Not measured: " + html_escape(p.skipped) + ".");
    }
    out += "\n";
  }
  return out;
}

std::string html_report(std::span<const proofs::DiagnoseReport> reports) {
  const auto& first = reports[0];
  std::string names;
  for (const auto& r : reports) names += (names.empty() ? "" : ", ") + r.framework;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ropesim diagnose " +
      html_escape(first.schedule) + " (" + html_escape(names) +
      ")</title>\n<style>body{font-family:sans-serif;max-width:1400px;margin:auto}"
      "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}"
      "pre{background:#f6f6f6;padding:8px;white-space:pre-wrap}"
      ".side{display:flex;gap:12px;flex-wrap:wrap}.side>div{flex:1;min-width:420px}"
      ".side svg{width:100%;height:auto}</style></head><body>\n"
      "<h1>ropesim diagnose</h1>\n<p>Made by " +
      html_escape(provenance_line()) + "</p>\n";
  out +=
      "<h2>Frameworks side by side</h2>\n<p>Largest relative score error over every query "
      "position, per offset (one column per framework):</p>\n" +
      html_table(frameworks_table(reports)) +
      "<p>Ranking per framework (worst first; the metric that decided each place):</p>\n" +
      html_table(ranking_table(reports));
  out += "<h2>Error against position</h2>\n<div class=\"side\">\n";
  for (const auto& r : reports)
    out += "<div class=\"figure error\"><h3>" + html_escape(r.framework) + "</h3>\n" +
           svg_figure(error_figure(r)) + "</div>\n";
  out += "</div>\n<h2>Collision map</h2>\n<div class=\"side\">\n";
  for (const auto& r : reports)
    out += "<div class=\"figure collision\"><h3>" + html_escape(r.framework) + "</h3>\n" +
           svg_figure(collision_figure(r)) + "</div>\n";
  out += "</div>\n";
  for (const auto& r : reports) {
    out += "<h2>" + html_escape(r.framework) + "</h2>\n<pre>" + html_escape(summary_text(r)) +
           "</pre>\n<h3>Errors per position band</h3>\n" + html_table(band_table(r)) +
           "<h3>Rotation census</h3>\n" + html_table(census_table(r)) +
           "<h3>Scores at the offsets that matter</h3>\n<p>" + html_escape(score_note(r)) +
           "</p>\n" + html_table(score_table(r)) + "<h3>Candidates</h3>\n<ul>\n";
    for (const auto& p : r.candidates) {
      out += "<li><b>" + html_escape(p.name) + "</b> (<code>" + html_escape(p.realisation) +
             "</code>): " + html_escape(std::string(p.candidate->means)) +
             ". Fix: " + html_escape(std::string(p.candidate->fix)) +
             ". Report: " + html_escape(std::string(p.candidate->report)) + "." +
             (p.skipped.empty() ? "" : " Not measured: " + html_escape(p.skipped) + ".") +
             "</li>\n";
    }
    out += "</ul>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace

Action add_diagnose_command(CLI::App& app) {
  struct Options {
    std::string config, schedule, dtype, framework, out, offsets;
    std::uint64_t context = 0, draws = 8, horizon_limit = 0;
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
    std::vector<std::string> frameworks;
    for (const auto& item : split_list(o->framework, "--framework")) {
      (void)with_context("--framework", [&] { return attention::framework_preset(item); });
      frameworks.push_back(item);
    }
    if (frameworks.empty())
      throw InvalidArgument("--framework: empty list; accepted: preset names, e.g. hf,vllm");
    const auto s =
        o->config.empty()
            ? with_context("--schedule", [&] { return attention::parse_schedule(o->schedule); })
            : with_context("--config", [&] { return attention::hf_config_schedule(o->config); });
    std::uint64_t context = o->context;
    if (context == 0) {
      const auto served = proofs::diagnose_default_context(s);
      if (!served) {
        throw InvalidArgument("--context: '" + s.spec +
                              "' has no max_position_embeddings; accepted: --context N (1..2^31)");
      }
      context = *served;
    }
    std::vector<std::uint64_t> offsets;
    if (cmd->count("--offsets") > 0) {
      for (const auto& item : split_list(o->offsets, "--offsets"))
        offsets.push_back(numeric::parse_integer(item, "--offsets", 1, context - 1));
      if (offsets.empty())
        throw InvalidArgument("--offsets: empty list; accepted: integers in 1.." +
                              std::to_string(context - 1));
    }
    WorkEstimate work = proofs::diagnose_work(s, context);
    work.units *= static_cast<double>(frameworks.size());
    check_budget("--context", work, opt_in_budget(o->allow_slow));
    warn_about_schedule(s, context - 1);
    ProgressReporter progress(o->progress, "diagnose");
    proofs::DiagnoseOptions options;
    options.context = context;
    options.offsets = offsets;
    options.draws = o->draws;
    if (cmd->count("--horizon-limit") > 0) options.horizon_limit = o->horizon_limit;
    options.threads = jobs_threads(o->jobs);
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
    if (!o->out.empty()) {
      io::write_output_file(o->out, html ? html_report(reports) : markdown_report(reports));
    }
    if (o->json) {
      std::cout << proofs::to_json(std::span<const proofs::DiagnoseReport>(reports)).dump(2)
                << "\n";
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
  };
}

}  // namespace ropesim::cli
