#include "automata/monoid.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <map>
#include <queue>

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
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> parent(m.elements.size(), kNone);
  std::vector<Letter> via(m.elements.size(), 0);
  std::queue<std::size_t> pending;
  parent[s] = s;
  pending.push(s);
  while (!pending.empty() && parent[t] == kNone) {
    const std::size_t u = pending.front();
    pending.pop();
    for (Letter a = 0; a < m.right[u].size(); ++a) {
      const std::size_t v = m.right[u][a];
      if (parent[v] == kNone) {
        parent[v] = u;
        via[v] = a;
        pending.push(v);
      }
    }
  }
  Word w;
  for (std::size_t at = t; at != s; at = parent[at]) w.push_back(via[at]);
  return Word(w.rbegin(), w.rend());
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

}  // namespace ropesim::automata
