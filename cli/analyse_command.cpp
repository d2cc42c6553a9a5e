// `ropesim analyse heads MODEL`: per head the rotary blocks it uses, whether it is a positional
// (fixed-offset) head and its certified range, and the words whose decision in the model's
// format differs from fp32 (proofs/reports/head_analysis.hpp; THEORY §6, "Looking inside a model").
// Parsing and printing only.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "numeric/exact_decimal.hpp"
#include "proofs/reports/head_analysis.hpp"

namespace ropesim::cli {

namespace {

struct AnalyseOptions {
  proofs::HeadAnalysisArguments args;
  std::string format, words, lengths;
  std::uint64_t max_length = 0;
  std::string out;
  bool json = false;
  ProgressChoice progress = ProgressChoice::automatic;
};

/// Blocks and flips the text report lists (--json has them all).
constexpr std::size_t kShownBlocks = 16;
constexpr std::size_t kShownFlips = 20;

std::string percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? fmt::format("{:.1f}%",
                             100.0 * static_cast<double>(part) / static_cast<double>(whole))
               : "-";
}

std::string range_text(const proofs::HeadReport& h, const std::string& format) {
  if (!h.range) return h.range_note.empty() ? "" : "  no certified range: " + h.range_note + "\n";
  const auto& p = *h.range;
  const auto& r = p.range;
  std::string s = fmt::format("  certified range N_max^({}) = {}{} in {}", p.k, r.n_max,
                              r.at_limit      ? " or more (the scan's limit)"
                              : r.n_max < p.k ? ": no length certified"
                                              : "",
                              format);
  if (r.fail_query) {
    s += fmt::format(" (first failing query {} against key {}, gap {})", *r.fail_query,
                     *r.fail_competitor,
                     r.gap ? numeric::exact_decimal(*r.gap) : std::string("not finite"));
  }
  s += p.content_independent
           ? "; q and k do not depend on the word (Q = K = 0)\n"
           : "; of its positional component (mean q, k over the words, THEORY §6)\n";
  return s;
}

std::string head_text(const proofs::HeadReport& h, const std::string& format) {
  const auto& t = h.test;
  std::string s =
      fmt::format("head {}.{}{}  ", h.layer, h.head, h.name.empty() ? "" : " (" + h.name + ")");
  s += t.positional ? fmt::format("positional, k = {}", *t.offset) : std::string("not positional");
  if (t.offset) {
    s += fmt::format(": largest weight at offset {} for {} of {} eligible queries", *t.offset,
                     percent(t.at_offset, t.eligible), t.eligible);
  }
  s += fmt::format(" ({} queries with 2+ keys, {} tied)\n", t.queries, t.tied);
  s += range_text(h, format);
  if (h.blocks.empty()) return s + "  NoPE: no rotary block\n";
  s +=
      "  block  theta         realisation  |[Q b_q]|     |[K b_k]|     mean |q|      mean |k|      "
      "score share\n";
  for (std::size_t b = 0; b < h.blocks.size() && b < kShownBlocks; ++b) {
    const auto& u = h.blocks[b];
    s += fmt::format("  {:<6} {:<13.6g} {:<12} {:<13.6g} {:<13.6g} {:<13.6g} {:<13.6g} {}\n",
                     u.index, u.theta, u.realisation, u.query_weight_norm, u.key_weight_norm,
                     u.query_norm, u.key_norm,
                     u.score_share ? fmt::format("{:.2f}%", 100 * *u.score_share) : "-");
  }
  if (h.blocks.size() > kShownBlocks)
    s += fmt::format("  ... ({} more blocks; --json lists them all)\n",
                     h.blocks.size() - kShownBlocks);
  return s;
}

std::string flips_text(const proofs::HeadAnalysis& a) {
  std::string s = fmt::format("decisions  {} words compared: {} decided differently in {} and {}\n",
                              a.decisions_compared, a.flips.size(), a.format, a.reference_format);
  if (a.flips.empty()) return s;
  s += "  word (n: symbols of the first prefix that flips)  " + a.format + " / " +
       a.reference_format + "  first attention difference\n";
  const auto verdict = [](bool accept) { return accept ? "accept" : "reject"; };
  for (std::size_t i = 0; i < a.flips.size() && i < kShownFlips; ++i) {
    const auto& f = a.flips[i];
    std::string where = "none (every head's largest weight on the same key)";
    if (const auto& d = f.first_attention_difference) {
      const auto key = [](const std::optional<std::uint64_t>& k) {
        return k ? std::to_string(*k) : std::string("-");
      };
      where = fmt::format("position {}, head {}.{}: key {} / {}", d->position, d->layer, d->head,
                          key(d->key), key(d->reference_key));
    }
    s += fmt::format("  \"{}\" (n = {})  {} y={} / {} y={}  {}\n", f.word, f.first_prefix,
                     verdict(f.accept), f.output.to_decimal(6), verdict(f.reference_accept),
                     f.reference_output.to_decimal(6), where);
  }
  if (a.flips.size() > kShownFlips)
    s += fmt::format("  ... ({} more; --json lists them all)\n", a.flips.size() - kShownFlips);
  return s;
}

std::string analysis_text(const proofs::HeadAnalysis& a) {
  std::string s = fmt::format("model      {}{}: {} ({}); reference {}\n", a.model_file,
                              a.model_name.empty() ? "" : " (" + a.model_name + ")", a.format,
                              a.rounding, a.reference_format);
  s += a.word_source == "given"
           ? fmt::format("words      {} given\n", a.words.size())
           : fmt::format(
                 "words      {} of lengths {}..{} (each length: every word, or {} drawn, "
                 "seed {})\n",
                 a.words.size(), a.lengths.front(), a.lengths.back(), a.per_length, a.seed);
  for (const auto& h : a.heads) s += head_text(h, a.format);
  return s + flips_text(a);
}

void add_analyse_options(CLI::App* cmd, AnalyseOptions& o) {
  cmd->add_option("model", o.args.model_file, "The model spec (docs/MODEL_SPEC.md)")->required();
  cmd->add_option("--format", o.format, "F of the exact run (default: the spec's format)");
  cmd->add_option("--reference-format", o.args.reference_format,
                  "The format whose decisions are compared with F's (default fp32)")
      ->capture_default_str();
  cmd->add_option("--words", o.words, "The words, separated by commas (instead of --lengths)");
  cmd->add_option("--lengths", o.lengths,
                  "Word lengths: a list 8,16,32, a range A..B, or both "
                  "(default 1..16)");
  add_integer_option(cmd, "--per-length", o.args.per_length,
                     "Words per length: all of them when at most this many, else this many drawn "
                     "(default 16)",
                     1, 100000);
  add_integer_option(cmd, "--seed", o.args.seed, "Seed of the drawn words (default 1)", 0,
                     UINT64_MAX);
  cmd->add_option("--positional-share", o.args.positional_share,
                  "Least share of a head's eligible queries attending at one offset for it to be "
                  "positional (default 0.9)");
  add_integer_option(cmd, "--max-length", o.max_length,
                     "L_max of the certified-range scan (default: the scan's quick limit)", 1,
                     0xFFFFFFFFu);
  cmd->add_flag("--allow-slow", o.args.allow_slow,
                "Run even when the estimated work is over budget");
  add_progress_flags(cmd, o.progress);
  cmd->add_flag("--json", o.json, "Print JSON instead of text");
  cmd->add_option("-o,--out", o.out, "Also write the JSON report (with provenance) to FILE");
}

int run_analyse_heads(const CLI::App* cmd, AnalyseOptions& o) {
  if (cmd->count("--out") > 0) io::check_output_path(o.out, "--out");
  if (cmd->count("--format") > 0) o.args.format = o.format;
  if (cmd->count("--words") > 0) o.args.words = o.words;
  if (cmd->count("--lengths") > 0) o.args.lengths = o.lengths;
  if (cmd->count("--max-length") > 0) o.args.max_length = o.max_length;
  const proofs::HeadAnalysisOptions options = proofs::head_analysis_options(o.args);
  ProgressReporter progress(o.progress, "analyse heads: running the words");
  const proofs::HeadAnalysis analysis = proofs::analyse_heads(
      options, [&](std::size_t done, std::size_t total) { progress.update(done, total, "words"); });
  progress.finish();
  const nlohmann::json report = proofs::to_json(analysis);
  if (cmd->count("--out") > 0) {
    nlohmann::json file = report;
    file["provenance"] = provenance();
    io::write_output_file(o.out, file.dump(2) + "\n");
  }
  std::cout << (o.json ? report.dump(2) + "\n" : analysis_text(analysis));
  return 0;
}

}  // namespace

Action add_analyse_command(CLI::App& app) {
  auto* analyse = app.add_subcommand("analyse", "Look inside a model (alias: analyze)");
  analyse->alias("analyze");
  analyse->require_subcommand(1);
  auto* cmd = analyse->add_subcommand(
      "heads",
      "Per head: the rotary blocks it uses, whether it is a fixed-offset head and its certified "
      "range; the words F and fp32 decide differently (THEORY §6)");
  auto o = std::make_shared<AnalyseOptions>();
  add_analyse_options(cmd, *o);
  return [cmd, o]() -> int { return cmd->parsed() ? run_analyse_heads(cmd, *o) : -1; };
}

}  // namespace ropesim::cli
