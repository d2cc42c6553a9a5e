#pragma once
// The verifier's own reading of an LTL[P,MOD] formula (docs/LOGIC.md "Text syntax"): a deliberate
// second implementation of logic/formula.cpp's grammar, so that ropesim-verify does not trust
// ropesim's parser. It yields the formula's canonical text (below), which the compile check
// compares with the meaning it derives from a model's weights (verify/compile_check.inc).
//
//   formula     := disjunction
//   disjunction := conjunction ('|' conjunction)*
//   conjunction := since ('&' since)*
//   since       := unary ('S' unary)*
//   unary       := '!' unary | 'P' unary | 'Y' ['^' k] unary | primary
//   primary     := atom | 'true' | 'false' | 'mod' '(' m ',' r ')' | '(' formula ')'
//
// CANONICAL TEXT (the same constructors build the model's side): "T" (true at every token but
// BOS), "F" (false), an atom of the alphabet by its name (an atom outside the alphabet is F, as
// the compiler makes it), "mod(m,r)" for m >= 2 (mod(1,0) is T), "!(x)", "&(x,y)" and "|(x,y)"
// with the operands in sorted order (& and | commute), "P(x)", "Y^k(x)"; constants folded:
// !T = F, !F = T, x & T = x, x & F = F, x | F = x, x | T = T.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace verify {

/// The formula uses S (not in LTL[P,MOD]: no compile certificate covers it).
struct SinceInFormula : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The text is not a formula (one line naming the column).
struct FormulaSyntax : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string canon_not(const std::string& x);
std::string canon_and(const std::string& x, const std::string& y);
std::string canon_or(const std::string& x, const std::string& y);
std::string canon_past(const std::string& x);
std::string canon_yesterday(std::uint64_t k, const std::string& x);
std::string canon_mod(std::uint64_t m, std::uint64_t r);

/// The canonical text of `text` over `alphabet`. Throws SinceInFormula when it uses S,
/// FormulaSyntax when it is not a formula (or nests deeper than 1000).
std::string canonical_formula(const std::string& text, const std::vector<std::string>& alphabet);

}  // namespace verify
