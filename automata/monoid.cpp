#include "automata/monoid.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <map>
#include <stdexcept>

#include "automata/shortest_word.hpp"

namespace ropesim::automata {

std::optional<TransitionMonoid> transition_monoid(const Dfa& dfa, std::size_t cap) {
  TransitionMonoid m;
  cap = std::min(cap, std::max<std::size_t>(1, kMaxMonoidEntries / dfa.state_count()));
  std::map<std::vector<State>, std::size_t> index;
  std::vector<State> identity(dfa.state_count());
  for (State q = 0; q < dfa.state_count(); ++q) identity[q] = q;
  index.emplace(identity, 0);
  m.elements.push_back(identity);
  m.words.emplace_back();
  for (std::size_t s = 0; s < m.elements.size(); ++s) {  // the list grows: breadth first
    std::vector<std::size_t> row(dfa.letter_count());
    for (Letter a = 0; a < dfa.letter_count(); ++a) {
      std::vector<State> next(dfa.state_count());
      for (State q = 0; q < dfa.state_count(); ++q) next[q] = dfa.next(m.elements[s][q], a);
      const auto [it, inserted] = index.emplace(next, m.elements.size());
      if (inserted) {
        if (m.elements.size() >= cap) return std::nullopt;
        m.elements.push_back(std::move(next));
        Word w = m.words[s];
        w.push_back(a);
        m.words.push_back(std::move(w));
      }
      row[a] = it->second;
    }
    m.right.push_back(std::move(row));
  }
  return m;
}

namespace {

/// A shortest word x with s·x = t in the right Cayley graph (t reachable from s).
Word cayley_path(const TransitionMonoid& m, std::size_t s, std::size_t t) {
  return shortest_word(
             m.elements.size(), m.right.at(s).size(), s,
             [&](std::size_t u, Letter a) { return m.right[u][a]; },
             [&](std::size_t u) { return u == t; })
      .value()
      .first;
}

}  // namespace

RTriviality r_triviality(const Dfa& dfa, std::size_t cap) {
  RTriviality result;
  const auto m = transition_monoid(dfa, cap);
  if (!m) return result;  // inconclusive
  result.size = m->elements.size();
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph g(m->elements.size());
  for (std::size_t s = 0; s < m->elements.size(); ++s) {
    for (std::size_t t : m->right[s]) boost::add_edge(s, t, g);
  }
  std::vector<std::size_t> component(m->elements.size());
  boost::strong_components(
      g, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, g)));
  std::map<std::size_t, std::size_t> first_in;  // component → its first element
  for (std::size_t s = 0; s < m->elements.size(); ++s) {
    const auto [it, inserted] = first_in.emplace(component[s], s);
    if (!inserted) {
      const std::size_t t = it->second;
      result.r_trivial = Verdict::no;
      result.witness =
          std::vector<Word>{m->words[t], m->words[s], cayley_path(*m, t, s), cayley_path(*m, s, t)};
      return result;
    }
  }
  result.r_trivial = Verdict::yes;
  return result;
}

QuasiRTriviality quasi_r_triviality(const Dfa& dfa, std::size_t cap) {
  QuasiRTriviality result;
  const auto m = transition_monoid(dfa, cap);
  if (!m) return result;  // inconclusive
  // E_n as a sorted set of element indices, each with a word of length n representing it.
  using Level = std::map<std::size_t, Word>;
  Level level;
  for (Letter a = 0; a < dfa.letter_count(); ++a) level.emplace(m->right[0][a], Word{a});
  std::map<std::vector<std::size_t>, std::size_t> seen;  // E_n's elements → n
  std::vector<Level> levels{Level{}};                    // levels[n] = E_n (levels[0] unused)
  const auto key = [](const Level& l) {
    std::vector<std::size_t> k;
    for (const auto& [e, w] : l) k.push_back(e);
    return k;
  };
  std::size_t preperiod = 0, period = 0;
  for (std::size_t n = 1;; ++n) {
    if (n > cap) return result;  // inconclusive
    const auto [it, inserted] = seen.emplace(key(level), n);
    if (!inserted) {
      preperiod = it->second;
      period = n - it->second;
      break;
    }
    levels.push_back(level);
    Level next;
    for (const auto& [e, w] : level) {
      for (Letter a = 0; a < dfa.letter_count(); ++a) {
        Word longer = w;
        longer.push_back(a);
        next.emplace(m->right[e][a], std::move(longer));
      }
    }
    level = std::move(next);
  }
  // E_s = E_{2s} iff s ≥ preperiod and period | s (the sequence from `preperiod` on repeats with
  // `period`; before it, no set recurs): the least such s ≥ 1.
  const std::size_t s = (preperiod + period - 1) / period * period;
  // levels[] holds E_1 … E_{preperiod + period - 1}; E_s is one of them (s < preperiod + period).
  const Level& stable = levels.at(s);
  std::vector<std::size_t> elements;
  std::vector<Word> words;
  for (const auto& [e, w] : stable) {
    elements.push_back(e);
    words.push_back(w);
  }
  const std::size_t size = elements.size();
  const std::size_t states = dfa.state_count();
  if (size * size * states > kMaxMonoidEntries * 16) return result;  // inconclusive
  std::map<std::vector<State>, std::size_t> index;  // transformation → position in S
  for (std::size_t i = 0; i < size; ++i) index.emplace(m->elements[elements[i]], i);
  // product[i][j] = the position in S of s_i · s_j (apply s_i, then s_j).
  std::vector<std::vector<std::size_t>> product(size, std::vector<std::size_t>(size));
  std::vector<State> composed(states);
  for (std::size_t i = 0; i < size; ++i) {
    for (std::size_t j = 0; j < size; ++j) {
      for (State q = 0; q < states; ++q)
        composed[q] = m->elements[elements[j]][m->elements[elements[i]][q]];
      const auto it = index.find(composed);
      if (it == index.end()) throw std::logic_error("the stable semigroup is not closed");
      product[i][j] = it->second;
    }
  }
  result.stability_index = s;
  result.size = size;
  // t ∈ sS¹ iff t = s or t = s·x for some x ∈ S (S is closed, so one step reaches all of sS):
  // via[i][t] = such an x + 1 (0: t ∉ s_i·S).
  std::vector<std::vector<std::size_t>> via(size, std::vector<std::size_t>(size, 0));
  for (std::size_t i = 0; i < size; ++i)
    for (std::size_t x = 0; x < size; ++x)
      if (via[i][product[i][x]] == 0) via[i][product[i][x]] = x + 1;
  for (std::size_t i = 0; i < size; ++i) {
    for (std::size_t t = 0; t < size; ++t) {
      if (t != i && via[i][t] != 0 && via[t][i] != 0) {
        result.quasi_r_trivial = Verdict::no;
        result.witness =
            std::vector<Word>{words[i], words[t], words[via[i][t] - 1], words[via[t][i] - 1]};
        return result;
      }
    }
  }
  result.quasi_r_trivial = Verdict::yes;
  return result;
}

}  // namespace ropesim::automata
