#pragma once
// Test support for formula_dfa and C3: enumerate every word up to a length and compare a DFA's
// verdict with the logic's reference evaluator (ltl::accepts, logic/evaluate.cpp), which shares
// no code with proofs/languages/formula_automaton.cpp.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "automata/dfa.hpp"
#include "logic/evaluate.hpp"
#include "logic/formula.hpp"

namespace language_test {

/// Every word over {a, b} of length 0..length, shortest first (2^(length+1) − 1 words).
inline std::vector<std::string> ab_words_up_to(std::size_t length) {
  std::vector<std::string> out;
  for (std::size_t n = 0; n <= length; ++n) {
    for (std::size_t bits = 0; bits < (std::size_t{1} << n); ++bits) {
      std::string w;
      for (std::size_t k = 0; k < n; ++k) w += ((bits >> k) & 1) ? 'b' : 'a';
      out.push_back(w);
    }
  }
  return out;
}

// Membership by hand-written predicates, independent of the logic and the compiler.
inline bool in_aa_star(const std::string& w) {
  return w.size() % 2 == 0 && w.find('b') == std::string::npos;
}
inline bool in_ab_star(const std::string& w) {
  if (w.size() % 2 != 0) return false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] != (i % 2 == 0 ? 'a' : 'b')) return false;
  }
  return true;
}
inline bool in_a_sigma_star(const std::string& w) { return !w.empty() && w[0] == 'a'; }
inline bool mod3_and_some_b(const std::string& w) {
  return w.size() % 3 == 0 && w.find('b') != std::string::npos;
}
inline bool contains_ab(const std::string& w) { return w.find("ab") != std::string::npos; }

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
