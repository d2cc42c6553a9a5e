// The Markdown and HTML reports of `ropesim diagnose` (proofs/reports/diagnose.hpp) with their
// figures, built from the tables of diagnose_report.cpp. Printing only.
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

}  // namespace

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
      "table{border-collapse:collapse;font-size:13px;max-width:100%}"
      // long pipeline strings and commands wrap anywhere: nothing runs off the right edge
      "td,th{border:1px solid #ccc;padding:2px 6px;overflow-wrap:anywhere}"
      "code{overflow-wrap:anywhere}"
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

}  // namespace ropesim::cli
