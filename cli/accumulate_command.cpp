// `ropesim accumulate`: the long accumulation — one query against keys of 4096 bf16 terms, the q·k
// scores accumulated by several accumulator models (an 11-bit accumulator, the same promoted
// into fp32 every 128 products, fp32), and the fp32 softmax weights each gives
// (attention/transformer/mixed_attention.hpp run_accumulation_case; docs/CLI.md "accumulate").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "attention/transformer/mixed_attention.hpp"
#include "cli/commands.hpp"
#include "numeric/accumulator.hpp"
#include "numeric/engine.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::cli {

namespace {

/// At most this many keys are printed in text mode (JSON has them all).
constexpr std::size_t max_shown_keys = 32;

std::string number(const numeric::Value& v) { return v.to_decimal(9); }

double max_weight_difference(const attention::AccumulationRow& a,
                             const attention::AccumulationRow& b) {
  double d = 0;
  for (std::size_t j = 0; j < a.weights.size(); ++j) {
    d = std::max(d, std::fabs(a.weights[j].to_double() - b.weights[j].to_double()));
  }
  return d;
}

}  // namespace

Action add_accumulate_command(CLI::App& app) {
  struct Options {
    std::size_t terms = 4096, keys = 8;
    std::uint64_t seed = 20261201;
    std::vector<std::string> accumulators;
    std::string engine = "auto";
    bool json = false;
    bool allow_slow = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("accumulate",
                                 "Softmax weights of one query over keys whose q·k scores are "
                                 "accumulated by different accumulator models");
  add_integer_option(cmd, "--terms", o->terms, "Terms per dot product (head dimension)", 1,
                     1'000'000)
      ->capture_default_str();
  add_integer_option(cmd, "--keys", o->keys, "Keys (key 0 is the needle, k_0 = q)", 1, 4096)
      ->capture_default_str();
  add_integer_option(cmd, "--seed", o->seed, "Seed of the LCG that draws the bf16 coordinates", 0,
                     UINT64_MAX)
      ->capture_default_str();
  cmd->add_option("--accumulator", o->accumulators,
                  "An accumulator model, repeatable: FORMAT[@ROUNDING][/K>WIDE[@ROUNDING]] "
                  "(default: p=11,e=8; p=11,e=8/128>fp32; fp32)");
  cmd->add_option("--engine", o->engine,
                  "Arithmetic engine: mpfr fast auto (same bits, different speed)")
      ->capture_default_str();
  cmd->add_flag("--json", o->json,
                "Print JSON: exact dot products, and per accumulator the scores and weights");
  cmd->add_flag(
      "--allow-slow", o->allow_slow,
      "Run even when the estimated time or memory exceeds the default budget (10 min, 8 GiB)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    attention::AccumulationCase c;
    c.terms = o->terms;
    c.keys = o->keys;
    c.seed = o->seed;
    const std::vector<std::string> spellings =
        o->accumulators.empty() ? std::vector<std::string>{"p=11,e=8", "p=11,e=8/128>fp32", "fp32"}
                                : o->accumulators;
    for (std::size_t i = 0; i < spellings.size(); ++i) {
      c.accumulators.push_back(with_context(
          "--accumulator", [&] { return numeric::parse_accumulator_model(spellings[i]); }));
      for (std::size_t j = 0; j < i; ++j) {  // CLI.md: no list repeats an item, not even respelt
        const numeric::AccumulatorModel &x = c.accumulators[j], &y = c.accumulators[i];
        const bool same_promotion =
            x.promotion.has_value() == y.promotion.has_value() &&
            (!x.promotion || (x.promotion->interval == y.promotion->interval &&
                              x.promotion->format == y.promotion->format &&
                              x.promotion->rounding == y.promotion->rounding));
        if (x.format == y.format && x.rounding == y.rounding &&
            same_promotion) {  // fp32 = p=24,e=8
          throw InvalidArgument("--accumulator: '" + spellings[i] + "' is given twice ('" +
                                spellings[j] + "' and '" + spellings[i] +
                                "' are the same accumulator); accepted: each accumulator once");
        }
      }
    }
    const numeric::Engine* engine =
        with_context("--engine", [&] { return &numeric::engine_by_name(o->engine); });
    check_budget("--terms x --keys", attention::accumulation_work(c), opt_in_budget(o->allow_slow));
    const attention::AccumulationResult r = attention::run_accumulation_case(c, *engine);
    if (o->json) {
      nlohmann::json j;
      j["terms"] = c.terms;
      j["keys"] = c.keys;
      j["seed"] = c.seed;
      nlohmann::json exact = nlohmann::json::array();
      for (const auto& q : r.exact_dots) exact.push_back(q.get_d());
      j["exact_dots"] = exact;
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& row : r.rows) {
        nlohmann::json scores = nlohmann::json::array(), weights = nlohmann::json::array();
        for (const auto& v : row.scores) scores.push_back(numeric::exact_decimal(v));
        for (const auto& v : row.weights) weights.push_back(numeric::exact_decimal(v));
        rows.push_back(
            {{"accumulator", numeric::to_string(row.accumulator)},
             {"scores", scores},
             {"weights", weights},
             {"max_weight_difference_from_first", max_weight_difference(row, r.rows.front())}});
      }
      j["rows"] = rows;
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::string out = fmt::format(
        "accumulate  q·k_j over {} bf16 terms (LCG seed {}), {} keys, key 0 the needle (k_0 = q);\n"
        "            scores in fp32 times rnd(1/rnd(sqrt({}))), stable softmax in fp32\n",
        c.terms, c.seed, c.keys, c.terms);
    for (const auto& row : r.rows) {
      out += fmt::format("\naccumulator {}\n", numeric::to_string(row.accumulator));
      out +=
          fmt::format("  {:>4}  {:>18}  {:>16}  {:>16}\n", "key", "exact q·k", "score", "weight");
      for (std::size_t j = 0; j < row.scores.size() && j < max_shown_keys; ++j) {
        out += fmt::format("  {:>4}  {:>18.10g}  {:>16}  {:>16}\n", j, r.exact_dots[j].get_d(),
                           number(row.scores[j]), number(row.weights[j]));
      }
      if (row.scores.size() > max_shown_keys)
        out += fmt::format("  ... ({} more keys)\n", row.scores.size() - max_shown_keys);
    }
    out += "\n";
    for (std::size_t k = 1; k < r.rows.size(); ++k) {
      out += fmt::format(
          "max |weight difference| {} vs {}: {:.6g}\n", numeric::to_string(r.rows[k].accumulator),
          numeric::to_string(r.rows[0].accumulator), max_weight_difference(r.rows[k], r.rows[0]));
    }
    std::cout << out;
    return 0;
  };
}

}  // namespace ropesim::cli
