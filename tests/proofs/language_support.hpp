#pragma once
// Test support for formula_dfa and C3: enumerate every word up to a length and compare a DFA's
// verdict with the logic's reference evaluator (ltl::accepts, logic/evaluate.cpp), which shares
// no code with proofs/formula_automaton.cpp.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "automata/dfa.hpp"
#include "logic/evaluate.hpp"
#include "logic/formula.hpp"

namespace language_test {

/// The longest length L ≤ max_length with |Σ|^0 + … + |Σ|^L ≤ max_words.
inline std::size_t affordable_length(std::size_t letters, std::size_t max_length,
                                     std::size_t max_words) {
  std::size_t total = 1, layer = 1, length = 0;
  while (length < max_length) {
    layer *= letters;
    if (total + layer > max_words) break;
    total += layer;
    ++length;
  }
  return length;
}

/// The first word (shortest, then in letter order) of length ≤ max_length on which the formula
/// and the DFA disagree, as text with spaces between symbols; nullopt if they agree on all.
inline std::optional<std::string> first_disagreement(const ropesim::ltl::Formula& formula,
                                                     const ropesim::automata::Dfa& dfa,
                                                     std::size_t max_length) {
  std::vector<ropesim::automata::Word> layer{{}};
  for (std::size_t length = 0; length <= max_length; ++length) {
    std::vector<ropesim::automata::Word> next;
    for (const auto& w : layer) {
      ropesim::ltl::Word symbols;
      for (auto a : w) symbols.push_back(dfa.alphabet()[a]);
      if (ropesim::ltl::accepts(formula, symbols) != dfa.accepts(w)) return "'" + dfa.text(w) + "'";
      if (length < max_length) {
        for (std::size_t a = 0; a < dfa.letter_count(); ++a) {
          next.push_back(w);
          next.back().push_back(a);
        }
      }
    }
    layer = std::move(next);
  }
  return std::nullopt;
}

}  // namespace language_test
