#pragma once
// Test support for the automata tests: random complete DFAs shaped to hit every class, and
// independent reference implementations (Moore's minimisation by iterated refinement,
// reachability by transitive closure) that share no code with automata/.
#include <rapidcheck.h>

#include <algorithm>
#include <map>
#include <vector>

#include "automata/dfa.hpp"

namespace automata_test {

using namespace ropesim::automata;

/// A random complete DFA with 1..max_states states over 2..3 letters. States are grouped into
/// consecutive blocks; a transition goes to the next state of its block's cycle, to itself, to
/// a later block, or anywhere (in a strict block: only round its cycle or to a later block),
/// so that simple cycles, self-loops, branching components and transients all occur often.
inline Dfa draw_dfa(std::size_t max_states) {
  const auto n = *rc::gen::inRange<std::size_t>(1, max_states + 1);
  const auto letters = *rc::gen::inRange<std::size_t>(2, 4);
  std::vector<std::size_t> block_start(n), block_size(n);
  std::vector<bool> strict(n);  // a strict block is a simple cycle (its letters go round or leave)
  for (std::size_t q = 0; q < n;) {
    const auto size = std::min(n - q, *rc::gen::inRange<std::size_t>(1, 5));
    const bool block_strict = *rc::gen::inRange(0, 2) == 0;
    for (std::size_t i = 0; i < size; ++i) {
      block_start[q + i] = q;
      block_size[q + i] = size;
      strict[q + i] = block_strict;
    }
    q += size;
  }
  std::vector<std::vector<State>> transitions(n, std::vector<State>(letters));
  for (std::size_t q = 0; q < n; ++q) {
    const std::size_t end = block_start[q] + block_size[q];
    for (std::size_t a = 0; a < letters; ++a) {
      const int kind =
          strict[q] ? *rc::gen::elementOf(std::vector<int>{0, 5, 6, 7}) : *rc::gen::inRange(0, 9);
      if (kind < 3 || (kind >= 5 && end >= n && strict[q])) {
        transitions[q][a] = block_start[q] + (q - block_start[q] + 1) % block_size[q];
      } else if (kind < 5) {
        transitions[q][a] = q;
      } else if (kind < 8 && end < n) {
        transitions[q][a] = *rc::gen::inRange<std::size_t>(end, n);
      } else {
        transitions[q][a] = *rc::gen::inRange<std::size_t>(0, n);
      }
    }
  }
  std::vector<bool> accepting(n);
  for (std::size_t q = 0; q < n; ++q) accepting[q] = *rc::gen::arbitrary<bool>();
  std::vector<std::string> alphabet;
  for (std::size_t a = 0; a < letters; ++a) alphabet.emplace_back(1, static_cast<char>('a' + a));
  return Dfa(alphabet, transitions, 0, accepting);
}

/// reach[p][q]: q reachable from p (by a word of length ≥ 0), by Warshall's transitive closure.
inline std::vector<std::vector<bool>> reachability(const Dfa& d) {
  const std::size_t n = d.state_count();
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (std::size_t p = 0; p < n; ++p) {
    reach[p][p] = true;
    for (std::size_t a = 0; a < d.letter_count(); ++a) reach[p][d.transitions()[p][a]] = true;
  }
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (reach[i][k] && reach[k][j]) reach[i][j] = true;
  return reach;
}

/// The number of Myhill–Nerode classes among the reachable states, by Moore's algorithm:
/// refine "same acceptance" by "same class of every successor" until stable.
inline std::size_t moore_state_count(const Dfa& d) {
  const auto reach = reachability(d);
  std::vector<std::size_t> live;
  for (std::size_t q = 0; q < d.state_count(); ++q)
    if (reach[d.initial()][q]) live.push_back(q);
  std::map<std::size_t, std::size_t> cls;
  for (auto q : live) cls[q] = d.accepting_states()[q] ? 1 : 0;
  for (;;) {
    std::map<std::vector<std::size_t>, std::size_t> signature_class;
    std::map<std::size_t, std::size_t> next;
    for (auto q : live) {
      std::vector<std::size_t> signature{cls[q]};
      for (std::size_t a = 0; a < d.letter_count(); ++a)
        signature.push_back(cls[d.transitions()[q][a]]);
      next[q] = signature_class.emplace(signature, signature_class.size()).first->second;
    }
    std::size_t before = 0;
    {
      std::vector<std::size_t> seen;
      for (auto& [q, c] : cls) seen.push_back(c);
      std::sort(seen.begin(), seen.end());
      before = static_cast<std::size_t>(std::unique(seen.begin(), seen.end()) - seen.begin());
    }
    cls = next;
    if (signature_class.size() == before) return before;
  }
}

}  // namespace automata_test
