#pragma once
/// The syntactic fragment of a formula and its depth (THEORY §4, §5).
///
/// The fragment is *syntactic*: the narrowest of the logics below whose operators the formula
/// uses. It is not the semantic class of the language: a formula using S may still define a
/// language in LTL[P] (e.g. `true S a` is equivalent to `P a`), and one using MOD may define a
/// language in LTL[P] (e.g. `mod(1,0)`). Deciding the semantic class of a regular language is the
/// automata module's job (THEORY §5, T2 and T6).
#include <cstddef>
#include <string_view>
#include <vector>

#include "logic/formula.hpp"

namespace ropesim::ltl {

/// live[id] for every node of `formula`: whether the root reaches it (the nodes a compiler or
/// an evaluator of the root needs). One backward sweep, O(|DAG|), since children have smaller
/// ids than their parents. Empty for an empty formula. Throws nothing.
std::vector<bool> reachable_nodes(const Formula& formula);

/// LTL[P] ⊂ LTL[P,MOD]; LTL[P] ⊂ LTL[P,Y] ⊂ LTL[P,Y,MOD]; LTL[P,Y] ⊂ LTL (= LTL[S], full
/// past LTL: S expresses P and Y) ⊂ LTL[S,MOD]. `ltl_s` is LTL[S] (its text is "LTL"), `ltl_s_mod`
/// LTL[S,MOD].
enum class Fragment { ltl_p, ltl_p_mod, ltl_p_y, ltl_p_y_mod, ltl_s, ltl_s_mod };

/// The narrowest fragment by the operators used (Y^k counts as Y; a formula with no temporal
/// operator at all is in LTL[P]): only P -> LTL[P]; P and mod -> LTL[P,MOD]; P and Y -> LTL[P,Y];
/// P, Y and mod -> LTL[P,Y,MOD]; any S without mod -> LTL; S and mod -> LTL[S,MOD].
/// Only nodes reachable from the root count.
Fragment fragment(const Formula& formula);

/// "LTL[P]", "LTL[P,MOD]", "LTL[P,Y]", "LTL[P,Y,MOD]", "LTL", "LTL[S,MOD]".
std::string_view to_string(Fragment fragment);

/// Whether every formula of fragment `inner` is a formula of fragment `outer` (syntactically).
bool within(Fragment inner, Fragment outer);

/// The maximum nesting of temporal operators (P, Y^k, S; each counts 1) from the root: the
/// number of attention layers a direct compilation needs. Atoms, true and mod(m,r) have 0.
std::size_t temporal_depth(const Formula& formula);

/// The maximum nesting of all operators (! & | P Y^k S each count 1) from the root; atoms, true and
/// mod(m,r) have depth 0.
std::size_t depth(const Formula& formula);

}  // namespace ropesim::ltl
