#pragma once
/// The DFA of a formula's language (THEORY §4 semantics; every operator: ⊤, atoms, ¬ ∧ ∨, P,
/// Y^k, S, MOD): the bridge from logic/ to automata/ that `ropesim classify --formula` and the
/// C3 check (po_formula.hpp) use.
///
/// A state is the memory a left-to-right reader of w_1..w_i (i ≥ 0) needs to know every
/// subformula at every later position:
///   - i mod M, M = lcm of the moduli of the mod(m, r) nodes (M = 1 without them): mod(m, r)
///     holds at position i + 1 iff (i + 1) mod m = r, and m | M;
///   - for each P f node: whether f held at some 1 ≤ j ≤ i (that is P f at position i + 1);
///   - for each f S g node: its value at position i + 1, by the recurrence (f S g)(1) = false,
///     (f S g)(j + 1) = g(j) ∨ (f(j) ∧ (f S g)(j));
///   - for each Y^k f node: the values of f at positions i, i − 1, …, i − k + 1, false for
///     positions ≤ 0 (BOS is not a position of the logic, so Y^k f at i + 1 ≤ k is false).
/// Reading the symbol a evaluates every node at position i + 1 bottom-up (atoms compare with a)
/// and updates the memory; the state accepts iff the root holds at position i + 1 read as EOS
/// (every atom false there; THEORY §4: a formula accepts w iff it holds at N + 1).
/// The reachable states are explored breadth first, letters in alphabet order, so state 0 is
/// the empty word's.
#include <cstddef>
#include <string>
#include <vector>

#include "automata/dfa.hpp"
#include "logic/formula.hpp"

namespace ropesim::proofs {

/// The most states formula_dfa builds by default.
inline constexpr std::size_t kFormulaDfaStateCap = 1000000;

/// The reachable DFA (not minimised: automata::minimise gives the minimal one) accepting
/// exactly the words w over `alphabet` with ltl::accepts(formula, w), built as described above.
/// `alphabet`: the symbols, each a valid atom name or any non-empty string (automata::Dfa's
/// rules). Throws ropesim::InvalidArgument when an atom of the formula is not a symbol of the
/// alphabet (naming it and the alphabet), when the alphabet is invalid for automata::Dfa, or
/// when the automaton would have more than `state_cap` states (or M, the lcm of the moduli,
/// exceeds the cap: every residue of i mod M is reached).
automata::Dfa formula_dfa(const ltl::Formula& formula, const std::vector<std::string>& alphabet,
                          std::size_t state_cap = kFormulaDfaStateCap);

}  // namespace ropesim::proofs
