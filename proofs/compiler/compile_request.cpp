// Reading a compilation's text options (proofs/compiler/compile_request.hpp).
#include "proofs/compiler/compile_request.hpp"

#include <algorithm>

#include "attention/schedules/schedule.hpp"
#include "core/budget.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "core/text.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "proofs/compiler/past_component.hpp"
#include "proofs/range/horizon_spec.hpp"

namespace ropesim::proofs {

std::vector<std::string> parse_alphabet(const std::string& text) {
  if (text.empty())
    throw InvalidArgument("--alphabet: give at least one symbol, e.g. --alphabet ab");
  std::vector<std::string> symbols;
  if (text.find(',') != std::string::npos) {
    symbols = ropesim::split_items(text, ',', "--alphabet", ropesim::Repeats::items);
  } else {
    for (std::size_t i = 0; i < text.size();) {  // one symbol per character (é is one character)
      const std::size_t n = std::max<std::size_t>(utf8_length(text, i), 1);
      symbols.push_back(text.substr(i, n));
      i += n;
    }
  }
  for (const auto& s : symbols) {
    try {
      ltl::Formula f;
      (void)f.symbol(s);
    } catch (const InvalidArgument&) {
      throw InvalidArgument(
          "--alphabet: " + quoted_text(s) +
          " is not a symbol; accepted: a lowercase ASCII letter, then lowercase letters, digits or "
          "'_', e.g. --alphabet ab or --alphabet a,b0");
    }
  }
  return symbols;
}

CompileRequest compile_request(const CompileArguments& a) {
  CompileRequest r;
  CompileOptions& options = r.options;
  options.policy.rounding =
      with_context("--rounding", [&] { return numeric::parse_rounding(a.rounding); });
  options.policy.format = with_context("--format", [&] { return numeric::parse_format(a.format); });
  options.certify_limit = ropesim::parse_integer(a.certify, "--certify", 1, 1000000);
  options.layer_norm = a.layer_norm;
  if (a.schedule) {
    options.offset_schedule =
        with_context("--schedule", [&] { return attention::parse_schedule(*a.schedule); });
    if (options.offset_schedule.is_multi_axis()) {
      throw InvalidArgument("--schedule: '" + *a.schedule +
                            "' has several position axes; accepted: a one-axis schedule "
                            "(ropesim horizon --axis measures one axis of it)");
    }
    if (options.offset_schedule.blocks.empty())
      throw InvalidArgument("--schedule: '" + *a.schedule + "' has no rotary block");
    check_head_blocks(*a.schedule, options.offset_schedule.blocks.size(), a.allow_slow);
    options.mod_schedule = options.offset_schedule;
  }
  r.alphabet = parse_alphabet(a.alphabet);
  r.formula = ltl::parse(a.formula);
  // The budgets, before anything is built: the model's size (a refusal no flag lifts) and the
  // P-head certificate's work (quadratic in --certify while the sums are exact).
  check_compile_budget(r.formula, r.alphabet, options);
  if (estimate_compile(r.formula, r.alphabet, options).past_heads) {
    Budget budget;
    budget.unlimited = a.allow_slow;
    check_budget("--certify", certify_past_head_work(options.policy, options.certify_limit),
                 budget);
  }
  return r;
}

}  // namespace ropesim::proofs
