#pragma once
/// Breadth-first search for a shortest word: the one search behind shortest_path, the
/// k-automaton's cycle words (classes.cpp), the monoid's Cayley paths (monoid.cpp) and the
/// DFA counterexample (minimise.cpp).
#include <algorithm>
#include <cstddef>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "automata/dfa.hpp"

namespace ropesim::automata {

/// In the graph on vertices 0..vertices-1 with an edge v --a--> next(v, a) for every letter
/// a < letters, a shortest word from `from` to the first vertex v (in breadth-first order,
/// letters in increasing order, `from` first) with found(v), and that v; nullopt if no such
/// vertex is reachable. Throws std::out_of_range if from >= vertices. O(vertices · letters).
template <class Next, class Found>
std::optional<std::pair<Word, std::size_t>> shortest_word(std::size_t vertices, std::size_t letters,
                                                          std::size_t from, const Next& next,
                                                          const Found& found) {
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> parent(vertices, kNone);
  std::vector<Letter> via(vertices, 0);
  std::queue<std::size_t> pending;
  parent.at(from) = from;
  pending.push(from);
  while (!pending.empty()) {
    const std::size_t v = pending.front();
    pending.pop();
    if (found(v)) {
      Word w;
      for (std::size_t at = v; at != from; at = parent[at]) w.push_back(via[at]);
      std::reverse(w.begin(), w.end());
      return std::pair<Word, std::size_t>{std::move(w), v};
    }
    for (Letter a = 0; a < letters; ++a) {
      const std::size_t u = next(v, a);
      if (parent[u] == kNone) {
        parent[u] = v;
        via[u] = a;
        pending.push(u);
      }
    }
  }
  return std::nullopt;
}

}  // namespace ropesim::automata
