// `ropesim run MODEL.json --input WORD`: runs an F-transformer spec on one word and prints
// accept/reject, the classifier value and, with --trace, the scores, attention weights and the
// residual stream per layer at chosen positions (THEORY §2; docs/MODEL_SPEC.md).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention/transformer/model_spec.hpp"
#include "attention/transformer/run.hpp"
#include "attention/transformer/transformer.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::cli {

namespace {

/// At most this many entries of a vector are printed in text mode (JSON has them all).
constexpr std::size_t max_shown = 16;

std::string number(const numeric::Value& v) { return v.to_decimal(9); }

std::string vector_text(const std::vector<numeric::Value>& v) {
  if (v.empty()) return "-";
  std::string s = "[";
  for (std::size_t k = 0; k < v.size() && k < max_shown; ++k) s += (k ? ", " : "") + number(v[k]);
  if (v.size() > max_shown) s += fmt::format(", ... ({} more)", v.size() - max_shown);
  return s + "]";
}

/// A residual-stream vector: by name when the model names its coordinates (the non-zero ones,
/// `name=value`; a compiled model's Boolean coordinates read as the subformulas that hold),
/// else by index (vector_text).
std::string residual_text(const attention::Model& model, const std::vector<numeric::Value>& v) {
  if (model.coordinates.size() != v.size() || v.empty()) return vector_text(v);
  std::string s;
  std::size_t shown = 0, nonzero = 0;
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (v[k].is_zero()) continue;
    ++nonzero;
    if (shown == 2 * max_shown) continue;
    s += (shown++ ? ", " : "") + model.coordinates[k] + "=" + number(v[k]);
  }
  if (nonzero == 0) return "{} (all 0)";
  if (nonzero > shown) s += fmt::format(", ... ({} more)", nonzero - shown);
  return "{" + s + "} (others 0)";
}

template <class T, class F>
std::string row_text(const std::vector<T>& v, F&& show) {
  if (v.empty()) return "(none)";
  std::string s;
  for (std::size_t k = 0; k < v.size() && k < 2 * max_shown; ++k) s += (k ? " " : "") + show(v[k]);
  if (v.size() > 2 * max_shown) s += fmt::format(" ... ({} more)", v.size() - 2 * max_shown);
  return s;
}

std::string model_line(const attention::Model& m) {
  const auto& p = m.policy;
  std::string sums(attention::to_string(p.summation));
  if (p.summation == attention::Summation::wide_accumulator)
    sums += " (" + p.accumulator.name + ")";
  return fmt::format("{}{}{}, {}, {} sums; {}, {} masking, {} softmax, {} layer(s)",
                     m.name.empty() ? "" : m.name, m.name.empty() ? "" : ": ", p.format.name,
                     numeric::to_string(p.rounding), sums, m.options.bos ? "BOS" : "no BOS",
                     attention::to_string(m.options.masking),
                     attention::to_string(m.options.softmax), m.layers.size());
}

std::string run_text(const attention::Model& m, const attention::RunResult& r,
                     const std::string& word) {
  std::string out;
  out += fmt::format("model    {}\n", model_line(m));
  std::string tokens;
  for (std::size_t k = 0; k < r.tokens.size() && k < 2 * max_shown; ++k)
    tokens += (k ? " " : "") + r.tokens[k];
  if (r.tokens.size() > 2 * max_shown)
    tokens += fmt::format(" ... ({} more)", r.tokens.size() - 2 * max_shown);
  // a long word is shown by its first characters and its length (the tokens follow)
  constexpr std::size_t max_word = 80;
  const std::string shown_word =
      word.size() <= max_word
          ? "\"" + word + "\""
          : fmt::format("\"{}...\" ({} characters)", word.substr(0, max_word), word.size());
  out += fmt::format("input    {} -> {} at positions {}..{}\n", shown_word, tokens,
                     r.positions.front(), r.positions.back());
  out +=
      fmt::format("output   {} (exact {})\n", number(r.output), numeric::exact_decimal(r.output));
  if (r.first_non_finite) out += fmt::format("nonfinite first at {}\n", r.first_non_finite->where);
  if (r.step_flags) {  // a model with mixed-format heads: which step raised the flag
    auto step = [](const std::optional<attention::StepException>& e) {
      return e ? fmt::format("first at {}: {} ({})", e->where, e->step, e->format)
               : std::string("none");
    };
    out += fmt::format("overflow {}\n", step(r.first_overflow));
    out += fmt::format("invalid  {}\n", step(r.first_invalid));
  }
  out += fmt::format("verdict  {}\n", r.accept ? "accept" : "reject");
  if (r.traced.empty()) return out;

  auto token_at = [&](std::uint64_t position) {
    return r.tokens.at(static_cast<std::size_t>(position - r.positions.front()));
  };
  out += "\ntrace    positions " +
         row_text(r.traced, [](std::uint64_t p) { return std::to_string(p); }) + "\n";
  out += "embedding\n";
  for (std::size_t k = 0; k < r.traced.size(); ++k) {
    out += fmt::format("  position {} {}  {}\n", r.traced[k], token_at(r.traced[k]),
                       residual_text(m, r.traced_embeddings[k]));
  }
  for (std::size_t l = 0; l < r.layers.size(); ++l) {
    out += fmt::format("layer {}\n", l);
    for (const auto& pt : r.layers[l]) {
      out += fmt::format("  position {} {}\n", pt.position, pt.token);
      out += fmt::format("    input            {}\n", residual_text(m, pt.input));
      for (std::size_t h = 0; h < pt.heads.size(); ++h) {
        const auto& ht = pt.heads[h];
        out += fmt::format("    head {}{}\n", h, ht.name.empty() ? "" : " (" + ht.name + ")");
        out += fmt::format("      query          {}\n", vector_text(ht.query));
        out += fmt::format("      keys           {}\n",
                           row_text(ht.keys, [](std::uint64_t p) { return std::to_string(p); }));
        out += fmt::format("      scores         {}\n", row_text(ht.scores, number));
        out += fmt::format("      weights        {}\n", row_text(ht.weights, number));
        out += fmt::format("      output         {}{}\n", vector_text(ht.output),
                           ht.keys.empty() ? "  (no visible key: zero output)" : "");
      }
      if (!pt.heads.empty())
        out += fmt::format("    attention        {}\n", residual_text(m, pt.attention));
      out += fmt::format("    after attention  {}\n", residual_text(m, pt.after_attention));
      out += fmt::format("    ffn              {}\n", residual_text(m, pt.ffn));
      out += fmt::format("    output           {}\n", residual_text(m, pt.output));
    }
  }
  out += fmt::format("readout  {}\n", residual_text(m, r.readout));
  return out;
}

/// "all", or a comma/space separated list of non-negative integers ("eos" = the EOS position).
std::optional<std::vector<std::uint64_t>> parse_positions(const std::string& text,
                                                          std::uint64_t eos, bool& all) {
  all = false;
  std::vector<std::uint64_t> out;
  if (text.find_first_not_of(" \t,") == std::string::npos) {
    throw InvalidArgument(
        "--positions: empty list; accepted: a comma list of positions (BOS = 0), eos, or all");
  }
  for (const auto& item : split_list(text, "--positions")) {
    if (item == "all") {
      all = true;
      continue;
    }
    if (item == "eos" || item == "EOS") {
      out.push_back(eos);
      continue;
    }
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 18) {
      throw InvalidArgument("--positions: '" + item +
                            "' is not a position; accepted: non-negative integers, eos, "
                            "or all (comma-separated, each once)");
    }
    out.push_back(std::stoull(item));
  }
  return out;
}

}  // namespace

Action add_run_command(CLI::App& app) {
  struct Options {
    std::string model, input, positions, format, rounding, engine = "auto";
    bool have_input = false, trace = false, json = false, allow_slow = false, allow_large = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "run", "Run a model spec (docs/MODEL_SPEC.md) on one word: accept/reject, output, trace");
  cmd->add_option("model", o->model, "Model spec file (JSON, schema v1)")->required();
  auto* input = cmd->add_option(
      "--input", o->input,
      "The word: read character by character, or as whitespace-separated symbols (may be empty)");
  input->required();
  cmd->add_flag("--trace", o->trace,
                "Print scores, attention weights and the residual stream per layer (at EOS unless "
                "--positions)");
  cmd->add_option(
      "--positions", o->positions,
      "Positions to trace (implies --trace): comma list of integers, eos, or all (BOS = 0)");
  cmd->add_flag("--json", o->json,
                "Print JSON: accept (bool), output (the classifier value), output_exact, trace");
  cmd->add_option(
      "--format", o->format,
      "Override the spec's format F (weights are re-rounded from the exact spec numbers)");
  cmd->add_option("--rounding", o->rounding, "Override the spec's rounding direction");
  cmd->add_option("--engine", o->engine,
                  "Arithmetic engine: mpfr fast auto (same bits, different speed)")
      ->capture_default_str();
  cmd->add_flag("--allow-slow", o->allow_slow,
                "Run even when the estimated time exceeds the default budget (10 min)");
  cmd->add_flag("--allow-large", o->allow_large, "Load models with more than 2^24 numbers");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    attention::ModelLoadOptions load;
    if (!o->format.empty())
      load.format = with_context("--format", [&] { return numeric::parse_format(o->format); });
    if (!o->rounding.empty())
      load.rounding =
          with_context("--rounding", [&] { return numeric::parse_rounding(o->rounding); });
    if (o->allow_large) load.max_parameters = SIZE_MAX;
    load.engine = with_context("--engine", [&] { return &numeric::engine_by_name(o->engine); });
    attention::Model model = attention::load_model(o->model, load);  // messages name the file
    // Tokenise first so that a bad word is reported as --input.
    const auto symbols =
        with_context("--input", [&] { return attention::tokenize(model, o->input); });
    const std::uint64_t eos = symbols.size() + 1;
    check_budget("--input", attention::run_work(model, symbols.size()),
                 opt_in_budget(o->allow_slow));
    attention::RunOptions options;
    if (cmd->count("--positions") > 0) {  // '' is a bad list, not "no --positions"
      bool all = false;
      options.trace_positions = *parse_positions(o->positions, eos, all);
      options.trace_all = all;
      const std::uint64_t first = model.options.bos ? 0 : 1;
      for (std::uint64_t p : options.trace_positions) {
        if (p < first || p > eos) {
          throw InvalidArgument(fmt::format(
              "--positions: position {} does not exist; this input has positions {}..{} ({})", p,
              first, eos, model.options.bos ? "BOS at 0, EOS at N+1" : "no BOS, EOS at N+1"));
        }
      }
    } else if (o->trace) {
      options.trace_positions = {eos};
    }
    const attention::RunResult result = attention::run(model, o->input, options);
    // Past the construction's certificate the output may be wrong: say so (stderr only, so
    // stdout and the exit code are those of any run).
    if (model.certified_length && symbols.size() > *model.certified_length) {
      std::cerr << fmt::format(
          "ropesim: warning: the input has {} symbols, more than the certified length {} "
          "recorded in {}; past it the output is not certified (THEORY §6)\n",
          symbols.size(), *model.certified_length, o->model);
    }
    if (o->json) {
      std::cout << attention::to_json(model, result, o->input).dump(2) << "\n";
    } else {
      std::cout << run_text(model, result, o->input);
    }
    return 0;
  };
}

}  // namespace ropesim::cli
