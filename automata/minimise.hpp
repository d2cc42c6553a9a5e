#pragma once
/// Minimisation and equivalence of DFAs (THEORY §5 T2/T6 work on "the minimal DFA").
#include <optional>

#include "automata/dfa.hpp"

namespace ropesim::automata {

/// The minimal complete DFA of L(dfa): unreachable states dropped, then Hopcroft's partition
/// refinement (O(|Σ| n log n)), then the states renumbered canonically — breadth first from
/// the initial state (state 0), successors visited in alphabet order. Two DFAs over the same
/// alphabet accept the same language iff their minimised DFAs are equal (operator==).
Dfa minimise(const Dfa& dfa);

/// The states reachable from the initial state, renumbered breadth first (as minimise does)
/// without merging any: the trim of `dfa` (same language).
Dfa reachable_part(const Dfa& dfa);

/// Compares L(a) and L(b) by breadth-first search of the product automaton (independent of
/// minimise): nullopt if they are equal, else a shortest word in exactly one of them (the
/// first in length-lexicographic order of letter indices). Throws ropesim::InvalidArgument
/// if the alphabets differ (same symbols in the same order are required).
std::optional<Word> counterexample(const Dfa& a, const Dfa& b);

/// True iff L(a) = L(b) (counterexample(a, b) is nullopt).
inline bool equivalent(const Dfa& a, const Dfa& b) { return !counterexample(a, b).has_value(); }

}  // namespace ropesim::automata
