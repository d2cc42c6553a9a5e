#pragma once
/// What `ropesim compile` and ropesim.compile (Python) are asked, as text, turned into a
/// validated compilation request (THEORY §7): the alphabet, the formula, the CompileOptions,
/// and the budgets checked before anything is built. One reading of the text for both.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "logic/formula.hpp"
#include "proofs/compiler/compiler.hpp"

namespace ropesim::proofs {

/// The options of a compilation as the user spells them (the flags of `ropesim compile`).
struct CompileArguments {
  std::string formula;                    ///< FORMULA: LTL[P,MOD] (docs/LOGIC.md)
  std::string alphabet = "ab";            ///< --alphabet: letters ("ab") or a comma list
  std::string format = "fp32";            ///< --format: F (numeric::parse_format)
  std::string rounding = "nearest-even";  ///< --rounding
  std::string certify = "10000";          ///< --certify: counts the P-head certificate checks
  /// --schedule: every rotary head's schedule (unset: single:g=1 for Y^k, periodic MOD tables)
  std::optional<std::string> schedule;
  bool layer_norm = false;  ///< --layer-norm: post-LN with the LayerNorm mirror
  bool allow_slow = false;  ///< --allow-slow: lift the P-head certificate's time budget
};

/// A validated compilation: what proofs::compile takes.
struct CompileRequest {
  ltl::Formula formula;
  std::vector<std::string> alphabet;
  CompileOptions options;
};

/// The alphabet `text` spells: single characters ("ab", "é" is one) or symbols separated by
/// commas ("a,b0,c"), each a formula symbol (a lowercase ASCII letter, then lowercase letters,
/// digits or '_'). Throws InvalidArgument naming --alphabet (empty, a repeat, a bad symbol).
std::vector<std::string> parse_alphabet(const std::string& text);

/// `a` validated, in this order: --rounding, --format, --certify (1..10^6), --schedule (one
/// position axis, at least one rotary block, at most kHorizonQuickBlocks unless allow_slow),
/// --alphabet, the formula (ltl::parse), the model's size (check_compile_budget, no flag lifts
/// it) and, when the formula has P heads, their certificate's work against the budget
/// (--certify; lifted by allow_slow). Throws InvalidArgument with one line naming the option.
CompileRequest compile_request(const CompileArguments& a);

}  // namespace ropesim::proofs
