// The views of a `ropesim diagnose` report (proofs/reports/diagnose.hpp): the terminal summary, its
// tables (diagnose_html.cpp: the Markdown and HTML reports). Printing only.
#include "cli/diagnose_report.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "attention/realisations/framework_presets.hpp"
#include "attention/schedules/hf_config.hpp"
#include "cli/commands.hpp"
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

}  // namespace

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

}  // namespace ropesim::cli
