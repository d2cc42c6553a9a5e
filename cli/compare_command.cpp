// `ropesim compare`: two realizations of one schedule, or one against the exact rotation,
// entry by entry over positions × blocks (attention/fidelity/compare.hpp). Parsing and printing
// only.
#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "attention/fidelity/compare.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::cli {

namespace {

std::string number_text(double v) {
  return std::isfinite(v) ? fmt::format("{:.4g}", v) : std::string("inf");
}

nlohmann::json number_cell(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json("inf");
}

/// Per block and overall rows. `text`: short decimal strings for the terminal; otherwise
/// full-precision numbers and the (position, block) of every maximum (CSV, Markdown, LaTeX).
Table compare_table(const attention::CompareResult& r, bool text) {
  Table t;
  if (text) {
    t.columns = {"block",     "cos abs",   "cos rel",  "sin abs",  "sin rel",
                 "angle abs", "angle rel", "max ulps", "differing"};
  } else {
    t.columns = {"block", "entries", "differing", "nonfinite"};
    for (const char* q : {"cos", "sin", "angle"}) {
      for (const char* kind : {"abs", "rel"}) {
        for (const char* suffix : {"", "_position", "_block"})
          t.columns.push_back(fmt::format("{}_{}{}", q, kind, suffix));
      }
    }
    for (const char* suffix : {"ulps", "ulps_position", "ulps_block"})
      t.columns.emplace_back(suffix);
  }
  auto row = [&](const nlohmann::json& label, const attention::CompareStats& st) {
    std::vector<nlohmann::json> cells{label};
    if (text) {
      auto both = [&](const std::optional<attention::ErrorPair>& p) {
        cells.push_back(p ? number_text(p->absolute.value) : "n/a");
        cells.push_back(p ? number_text(p->relative.value) : "n/a");
      };
      both(st.cos);
      both(st.sin);
      both(st.angle);
      cells.push_back(number_text(st.ulps.value));
      cells.push_back(fmt::format("{} of {}", st.differing, st.entries));
    } else {
      cells.push_back(st.entries);
      cells.push_back(st.differing);
      cells.push_back(st.nonfinite);
      auto maximum = [&](const attention::ErrorMaximum* m) {
        if (m == nullptr) {
          cells.insert(cells.end(), {"n/a", "n/a", "n/a"});
          return;
        }
        cells.push_back(number_cell(m->value));
        cells.push_back(m->seen ? nlohmann::json(m->position) : nlohmann::json(nullptr));
        cells.push_back(m->seen ? nlohmann::json(m->block) : nlohmann::json(nullptr));
      };
      for (const auto* p : {&st.cos, &st.sin}) {
        maximum(&p->absolute);
        maximum(&p->relative);
      }
      maximum(st.angle ? &st.angle->absolute : nullptr);
      maximum(st.angle ? &st.angle->relative : nullptr);
      maximum(&st.ulps);
    }
    t.rows.push_back(std::move(cells));
  };
  for (const auto& b : r.blocks) row(b.block, b.stats);
  row("all", r.overall);
  return t;
}

std::string at(const attention::ErrorMaximum& m) {
  return m.seen ? fmt::format("{} at (position {}, block {})", number_text(m.value), m.position,
                              m.block)
                : "0";
}

std::string compare_text(const attention::CompareResult& r, const std::string& rounding) {
  std::string out;
  out += fmt::format("schedule     {}\n", r.schedule);
  out += fmt::format("realization  {} (table format {}, rounding {})\n", r.realisation,
                     r.table_format.name, rounding);
  out += r.against_table_format
             ? fmt::format("against      {} (table format {})\n", r.against,
                           r.against_table_format->name)
             : std::string("against      the exact rotation (cos, sin of θ_d·i within 2^-150)\n");
  if (const auto& f = r.attention_factor) {
    // the schedule's attention factor on its own line; the reference carries it as A does
    const std::string value = fmt::format("{:.17g}", f->value.get_d());
    const std::string expression =
        f->expression.empty() ? value : fmt::format("{} = {}", f->expression, value);
    if (f->realisation && (f->against || r.against_table_format)) {
      out += fmt::format(
          "attention    factor s = {} multiplies cos and sin of {}{}; the reference is {}\n",
          expression, r.realisation, f->against ? " and of " + r.against : "",
          f->against ? "B as realised" : "B's (cos, sin) times s");
    } else if (f->realisation) {
      out += fmt::format(
          "attention    factor s = {} multiplies {}'s cos and sin (Hugging Face: cos = emb.cos() * "
          "attention_scaling); the reference is s·(cos θ_d·i, sin θ_d·i), so errors are rounding "
          "only\n",
          expression, r.realisation);
    } else {
      out += fmt::format(
          "attention    factor s = {} multiplies {}'s cos and sin, not {}'s; the reference is B's "
          "(cos, sin) "
          "divided by s\n",
          expression, r.against, r.realisation);
    }
  }
  out += fmt::format("positions    {}..{}, {} blocks\n", r.start, r.start + (r.positions - 1),
                     r.blocks.size());
  Table t = compare_table(r, true);
  constexpr std::size_t kShownBlocks = 64;  // the terminal shows at most 64 block rows, then "all"
  if (t.rows.size() > kShownBlocks + 1) {
    const std::size_t hidden = t.rows.size() - kShownBlocks - 1;
    t.rows.erase(t.rows.begin() + kShownBlocks, t.rows.end() - 1);
    out += t.to_text();
    out += fmt::format("({} more blocks: --csv or -o FILE.csv lists every block)\n", hidden);
  } else {
    out += t.to_text();
  }
  const auto& o = r.overall;
  out += fmt::format("summary      max |cos error| {}; max |sin error| {}; ", at(o.cos.absolute),
                     at(o.sin.absolute));
  out += o.angle ? fmt::format("max |angle error| {}; ", at(o.angle->absolute))
                 : std::string("angle n/a; ");
  out += fmt::format("max error in ulps of {} {}; {} of {} entries differ", r.table_format.name,
                     at(o.ulps), o.differing, o.entries);
  if (o.nonfinite > 0)
    out += fmt::format("; {} non-finite (first at position {})", o.nonfinite, *o.first_nonfinite);
  out += "\n";
  return out;
}

std::vector<std::size_t> parse_blocks(const std::string& text) {
  std::vector<std::size_t> out;
  for (const auto& item : split_list(text, "--blocks")) {  // no empty item, each once
    out.push_back(static_cast<std::size_t>(ropesim::parse_integer(item, "--blocks", 0, 999999999)));
  }
  if (out.empty())
    throw InvalidArgument("--blocks: empty list; accepted: 0-based block indices, e.g. 0,1,31");
  return out;
}

}  // namespace

Action add_compare_command(CLI::App& app) {
  struct Options {
    std::string schedule, realisation, against = "exact", format = "fp32", against_format,
                                       rounding = "nearest-even", engine = "auto", blocks, out;
    std::uint64_t positions = 0, start = 0;
    bool json = false, csv = false, allow_slow = false;
    ProgressChoice progress = ProgressChoice::automatic;
  };
  auto o = std::make_shared<Options>();
  auto* cmd =
      app.add_subcommand("compare",
                         "Errors of a realization against another or against the exact rotation, "
                         "over positions x blocks");
  cmd->add_option("--schedule", o->schedule, "Schedule spec or model preset")->required();
  cmd->add_option("--realization,--realisation", o->realisation,
                  "Realization A (r1 r2 r3 hf llamacpp-cpu llamacpp-cuda pipeline:...)")
      ->required();
  cmd->add_option("--against", o->against, "Realization B, or 'exact' (the exact rotation)")
      ->capture_default_str();
  cmd->add_option("--format", o->format,
                  "Number format F (r1-r3) or activation format (pipelines) of A (and of B)")
      ->capture_default_str();
  cmd->add_option("--against-format", o->against_format, "Format of B (default: --format)");
  cmd->add_option("--rounding", o->rounding, "Rounding of every step")->capture_default_str();
  cmd->add_option("--engine", o->engine,
                  "Arithmetic engine: mpfr fast auto (same bits, different speed)")
      ->capture_default_str();
  add_integer_option(cmd, "--positions", o->positions, "N: positions S..S+N-1", 1,
                     attention::kMaxComparePositions)
      ->required();
  add_integer_option(cmd, "--start", o->start, "S: the first position (default 0)", 0, INT64_MAX);
  cmd->add_option("--blocks", o->blocks, "0-based block indices (comma list; default all)");
  auto* json = cmd->add_flag("--json", o->json, "Print JSON");
  auto* csv = cmd->add_flag("--csv", o->csv, "Print CSV (every block, where every maximum is)");
  json->excludes(csv);
  cmd->add_option("-o,--out", o->out, "Also write FILE (.json .csv .md .tex)");
  cmd->add_flag("--allow-slow", o->allow_slow,
                "Run even when the estimate exceeds the default budget (10 min)");
  add_progress_flags(cmd, o->progress);
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    std::optional<OutputKind> kind;
    if (cmd->count("--out") > 0) {
      kind = output_kind_for(o->out, "--out");
      io::check_output_path(o->out, "--out");
    }
    const auto mode =
        with_context("--rounding", [&] { return numeric::parse_rounding(o->rounding); });
    const auto format = with_context("--format", [&] { return numeric::parse_format(o->format); });
    const auto against_format =
        o->against_format.empty() ? format : with_context("--against-format", [&] {
          return numeric::parse_format(o->against_format);
        });
    const auto schedule =
        with_context("--schedule", [&] { return attention::parse_schedule(o->schedule); });
    const numeric::Engine* engine =
        with_context("--engine", [&] { return &numeric::engine_by_name(o->engine); });
    const numeric::FormatBinding binding{format, mode, engine};
    auto a = with_context("--realization",
                          [&] { return attention::parse_realisation(o->realisation, binding); });
    with_context("--realization", [&] {
      attention::check_applicable(schedule, a);
      return 0;
    });
    std::optional<attention::Realisation> b;
    if (o->against != "exact") {
      const numeric::FormatBinding against{against_format, mode, engine};
      b = with_context("--against",
                       [&] { return attention::parse_realisation(o->against, against); });
      with_context("--against", [&] {
        attention::check_applicable(schedule, *b);
        return 0;
      });
    } else if (!o->against_format.empty()) {
      throw InvalidArgument(
          "--against-format: the exact rotation has no format; accepted: --against-format with "
          "--against B");
    }
    attention::CompareOptions options;
    options.positions = o->positions;
    options.start = o->start;
    if (o->start > attention::kMaxCompareLastPosition - (o->positions - 1)) {
      throw InvalidArgument(
          "--start: the last position S + N - 1 = " + std::to_string(o->start) + " + " +
          std::to_string(o->positions - 1) + " exceeds 2^63 - 1; accepted: S <= " +
          std::to_string(attention::kMaxCompareLastPosition - (o->positions - 1)));
    }
    if (cmd->count("--blocks") > 0) options.blocks = parse_blocks(o->blocks);
    check_budget("--positions", attention::compare_work(schedule, options, !b),
                 opt_in_budget(o->allow_slow));
    warn_about_schedule(schedule, o->start + (o->positions - 1));
    ProgressReporter progress(o->progress, "compare " + a.name());
    const auto result = with_context("--blocks", [&] {
      return attention::compare(schedule, a, b, options,
                                [&](std::uint64_t done, std::uint64_t total) {
                                  progress.update(done, total, "entries");
                                });
    });
    progress.finish();
    nlohmann::json j = attention::to_json(result);
    j["rounding"] = std::string(numeric::to_string(mode));
    if (kind) {
      if (*kind == OutputKind::json) {
        nlohmann::json file = j;
        file["provenance"] = provenance();
        io::write_output_file(o->out, file.dump(2) + "\n");
      } else {
        io::write_output_file(o->out, render(compare_table(result, false), *kind));
      }
    }
    if (o->json) {
      std::cout << j.dump(2) << "\n";
    } else if (o->csv) {
      std::cout << compare_table(result, false).to_csv();
    } else {
      std::cout << compare_text(result, std::string(numeric::to_string(mode)));
    }
    return 0;
  };
}

}  // namespace ropesim::cli
