#include "automata/classes.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <map>
#include <numeric>
#include <queue>
#include <stdexcept>

#include "automata/export.hpp"
#include "automata/minimise.hpp"
#include "automata/shortest_word.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"

namespace ropesim::automata {

namespace {

/// Parallel edges merged (setS): the graph of "q has a transition to q'".
using Graph = boost::adjacency_list<boost::setS, boost::vecS, boost::directedS>;
/// The product Q × Z_k: parallel edges kept (vecS, a vector per vertex instead of a set; they
/// change no component), so a million vertices cost tens of megabytes.
using ProductGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

/// component[v] for every vertex of `g` (Boost.Graph strong_components).
template <class G>
std::vector<std::size_t> component_numbers(const G& g) {
  std::vector<std::size_t> component(boost::num_vertices(g));
  boost::strong_components(
      g, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, g)));
  return component;
}

/// The period of the component `states` (sorted): gcd over internal edges q → q' of
/// level(q) + 1 − level(q'), levels by breadth-first search inside the component.
std::size_t component_period(const Dfa& dfa, const std::vector<State>& states) {
  auto inside = [&](State q) { return std::binary_search(states.begin(), states.end(), q); };
  std::map<State, std::size_t> level;
  std::queue<State> pending;
  level[states.front()] = 0;
  pending.push(states.front());
  while (!pending.empty()) {
    const State q = pending.front();
    pending.pop();
    for (Letter a = 0; a < dfa.letter_count(); ++a) {
      const State r = dfa.next(q, a);
      if (inside(r) && level.emplace(r, level[q] + 1).second) pending.push(r);
    }
  }
  std::size_t period = 0;
  for (State q : states) {
    for (Letter a = 0; a < dfa.letter_count(); ++a) {
      const State r = dfa.next(q, a);
      if (!inside(r)) continue;
      const long difference = static_cast<long>(level.at(q)) + 1 - static_cast<long>(level.at(r));
      period =
          std::gcd(period, static_cast<std::size_t>(difference < 0 ? -difference : difference));
    }
  }
  return period;
}

std::string word_text(const Dfa& dfa, const Word& w) { return w.empty() ? "ε" : dfa.text(w); }

}  // namespace

std::vector<Component> strongly_connected_components(const Dfa& dfa) {
  Graph g(dfa.state_count());
  for (State q = 0; q < dfa.state_count(); ++q) {
    for (Letter a = 0; a < dfa.letter_count(); ++a) boost::add_edge(q, dfa.next(q, a), g);
  }
  const std::vector<std::size_t> number = component_numbers(g);
  std::map<std::size_t, std::size_t> position;  // Boost's component number → index in the result
  std::vector<Component> out;
  for (State q = 0; q < dfa.state_count();
       ++q) {  // ascending q: components ordered by smallest state
    const auto [it, inserted] = position.emplace(number[q], out.size());
    if (inserted) out.emplace_back();
    out[it->second].states.push_back(q);
  }
  for (auto& c : out) {
    for (State q : c.states) {
      for (Letter a = 0; a < dfa.letter_count(); ++a) {
        c.has_internal_edge = c.has_internal_edge || number[dfa.next(q, a)] == number[q];
      }
    }
    c.period = c.has_internal_edge ? component_period(dfa, c.states) : 0;
  }
  return out;
}

std::optional<Word> shortest_path(const Dfa& dfa, State from, State to) {
  (void)std::vector<State>(dfa.state_count()).at(to);  // std::out_of_range, as for `from`
  auto path = shortest_word(
      dfa.state_count(), dfa.letter_count(), from,
      [&](std::size_t q, Letter a) { return dfa.next(q, a); },
      [&](std::size_t q) { return q == to; });
  if (!path) return std::nullopt;
  return std::move(path->first);
}

PartialOrder partial_order(const Dfa& dfa) {
  for (const auto& c : strongly_connected_components(dfa)) {
    if (c.states.size() >= 2) {
      const State p = c.states[0], q = c.states[1];
      return {false, TwoStateCycle{p, q, *shortest_path(dfa, p, q), *shortest_path(dfa, q, p)}};
    }
  }
  return {true, std::nullopt};
}

ComponentTest decide_ltl_p_mod_by_components(const Dfa& dfa) {
  ComponentTest result;
  result.k = 1;
  for (const auto& c : strongly_connected_components(dfa)) {
    if (!c.has_internal_edge) continue;
    auto inside = [&](State q) { return std::binary_search(c.states.begin(), c.states.end(), q); };
    for (State q : c.states) {
      std::optional<Letter> first;  // the first letter leading to a successor inside c
      for (Letter a = 0; a < dfa.letter_count(); ++a) {
        const State r = dfa.next(q, a);
        if (!inside(r)) continue;
        if (!first) {
          first = a;
        } else if (r != dfa.next(q, *first)) {  // a second, different successor inside c
          BranchingComponent w{c.states, q, {*first}, {a}};
          const Word back1 = *shortest_path(dfa, dfa.next(q, *first), q);
          const Word back2 = *shortest_path(dfa, r, q);
          w.first_loop.insert(w.first_loop.end(), back1.begin(), back1.end());
          w.second_loop.insert(w.second_loop.end(), back2.begin(), back2.end());
          return {false, 0, std::move(w)};
        }
      }
    }
    // Every state has one successor inside c: c is a simple cycle of length |c|.
    result.k = std::lcm(result.k, c.states.size());
  }
  return result;
}

PartialOrder k_automaton_partial_order(const Dfa& dfa, std::size_t k) {
  const std::size_t n = dfa.state_count();
  if (k == 0) throw InvalidArgument("k-automaton: k = 0; accepted: k ≥ 1");
  if (k > kMaxProductStates / n) {
    throw InvalidArgument("k-automaton: |Q| · k = " + std::to_string(n) + " · " +
                          std::to_string(k) + " exceeds " + std::to_string(kMaxProductStates) +
                          " product states; accepted: smaller DFAs or k");
  }
  // Vertex q·k + i stands for (q, i mod k).
  ProductGraph g(n * k);
  for (State q = 0; q < n; ++q) {
    for (std::size_t i = 0; i < k; ++i) {
      for (Letter a = 0; a < dfa.letter_count(); ++a)
        boost::add_edge(q * k + i, dfa.next(q, a) * k + (i + 1) % k, g);
    }
  }
  const std::vector<std::size_t> number = component_numbers(g);
  std::map<std::size_t, State> first_at;  // component of (q, 0) → the first such q
  for (State q = 0; q < n; ++q) {
    const auto [it, inserted] = first_at.emplace(number[q * k], q);
    if (inserted) continue;
    const State p = it->second;
    // Words from (p, 0) to (q, 0) and back, by breadth first search in the product.
    auto path = [&](std::size_t from, std::size_t to) {
      return shortest_word(
                 n * k, dfa.letter_count(), from,
                 [&](std::size_t v, Letter a) { return dfa.next(v / k, a) * k + (v % k + 1) % k; },
                 [&](std::size_t v) { return v == to; })
          .value()  // (q, 0) and (p, 0) share a component: each reaches the other
          .first;
    };
    return {false, TwoStateCycle{p, q, path(p * k, q * k), path(q * k, p * k)}};
  }
  return {true, std::nullopt};
}

DefinitionTest decide_ltl_p_mod_by_definition(const Dfa& dfa) {
  DefinitionTest result;
  for (const auto& c : strongly_connected_components(dfa)) {
    if (!c.has_internal_edge) continue;
    // A cycle inside c has length ≤ |c| ≤ n, so the period divides a number ≤ n and k divides
    // lcm(1..n).
    if (c.period < 1 || c.period > c.states.size()) {
      throw std::logic_error("component period " + std::to_string(c.period) + " outside 1.." +
                             std::to_string(c.states.size()));
    }
    result.k = std::lcm(result.k, c.period);
    if (result.k > kMaxProductStates) {
      throw InvalidArgument("k-automaton: k = lcm of the periods exceeds " +
                            std::to_string(kMaxProductStates) + "; accepted: smaller DFAs");
    }
  }
  PartialOrder po = k_automaton_partial_order(dfa, result.k);
  result.ltl_p_mod = po.partially_ordered;
  result.witness = std::move(po.witness);
  return result;
}

namespace {

constexpr ropesim::Spelling<LanguageClass> language_class_names[] = {
    {LanguageClass::ltl_p, "LTL[P]"},
    {LanguageClass::ltl_p_mod, "LTL[P,MOD]"},
    {LanguageClass::none, "none"}};
constexpr ropesim::EnumNames<LanguageClass> language_class_table{.what = "language class",
                                                                 .names = language_class_names};

}  // namespace

std::string_view to_string(LanguageClass c) { return ropesim::name_of(language_class_table, c); }

Classification classify(const Dfa& dfa, std::size_t monoid_cap) {
  Classification c{minimise(dfa), LanguageClass::none, std::nullopt, std::nullopt, std::nullopt, {},
                   false};
  const PartialOrder po = partial_order(c.minimal);
  ComponentTest components = decide_ltl_p_mod_by_components(c.minimal);
  if (po.partially_ordered) {
    c.language_class = LanguageClass::ltl_p;
    c.k = 1;
  } else {
    c.not_ltl_p = po.witness;
    if (components.ltl_p_mod) {
      c.language_class = LanguageClass::ltl_p_mod;
      c.k = components.k;
    } else {
      c.not_ltl_p_mod = std::move(components.witness);
    }
  }
  if (po.partially_ordered && !components.ltl_p_mod) {
    throw std::logic_error(
        "classify: a partially ordered DFA failed the LTL[P,MOD] component test");
  }
  try {
    const DefinitionTest definition = decide_ltl_p_mod_by_definition(c.minimal);
    if (definition.ltl_p_mod != components.ltl_p_mod) {
      throw std::logic_error("classify: the A_k definition (k = " + std::to_string(definition.k) +
                             ") and the component test disagree on LTL[P,MOD]");
    }
    c.definition_checked = true;
  } catch (const InvalidArgument&) {
    c.definition_checked = false;  // |Q| · k too large for the product; the component test stands
  }
  c.monoid = r_triviality(c.minimal, monoid_cap);
  if (c.monoid.r_trivial != Verdict::inconclusive &&
      (c.monoid.r_trivial == Verdict::yes) != po.partially_ordered) {
    throw std::logic_error(
        "classify: R-triviality of the transition monoid disagrees with partial order (T2)");
  }
  const QuasiRTriviality stable = quasi_r_triviality(c.minimal, monoid_cap);
  if (stable.quasi_r_trivial != Verdict::inconclusive &&
      (stable.quasi_r_trivial == Verdict::yes) != components.ltl_p_mod) {
    throw std::logic_error(
        "classify: R-triviality of the stable semigroup disagrees with the component test (T6)");
  }
  return c;
}

std::string witness_description(const Classification& c) {
  const Dfa& d = c.minimal;
  if (c.not_ltl_p_mod) {
    const auto& w = *c.not_ltl_p_mod;
    std::string states;
    for (std::size_t i = 0; i < w.component.size() && i < 16; ++i) {  // the JSON lists them all
      states += (i ? ", " : "") + std::to_string(w.component[i]);
    }
    if (w.component.size() > 16)
      states += ", … (" + std::to_string(w.component.size()) + " states)";
    return "the strongly connected component {" + states +
           "} of the minimal DFA is not a simple cycle: from state " + std::to_string(w.state) +
           " the loops '" + word_text(d, w.first_loop) + "' and '" + word_text(d, w.second_loop) +
           "' go around it by two different routes, so no A_k is partially ordered";
  }
  if (c.not_ltl_p) {
    const auto& w = *c.not_ltl_p;
    return "states " + std::to_string(w.p) + " and " + std::to_string(w.q) +
           " of the minimal DFA lie on one cycle ('" + word_text(d, w.to) + "' leads from " +
           std::to_string(w.p) + " to " + std::to_string(w.q) + ", '" + word_text(d, w.back) +
           "' back), so it is not partially ordered";
  }
  return "";
}

nlohmann::json to_json(const Classification& c) {
  const Dfa& d = c.minimal;
  nlohmann::json witness = nullptr;
  if (c.not_ltl_p_mod) {
    const auto& w = *c.not_ltl_p_mod;
    witness = {{"kind", "branching component"},
               {"component", w.component},
               {"state", w.state},
               {"loops", {d.text(w.first_loop), d.text(w.second_loop)}},
               {"description", witness_description(c)}};
  } else if (c.not_ltl_p) {
    const auto& w = *c.not_ltl_p;
    witness = {{"kind", "two-state cycle"},
               {"states", {w.p, w.q}},
               {"words", {d.text(w.to), d.text(w.back)}},
               {"description", witness_description(c)}};
  }
  nlohmann::json r_trivial = "inconclusive";
  if (c.monoid.r_trivial != Verdict::inconclusive) r_trivial = c.monoid.r_trivial == Verdict::yes;
  return {{"states", d.state_count()},
          {"class", std::string(to_string(c.language_class))},
          {"k", c.k ? nlohmann::json(*c.k) : nlohmann::json(nullptr)},
          {"witness", witness},
          {"formula", nullptr},
          {"transition_monoid",
           {{"size", c.monoid.r_trivial == Verdict::inconclusive ? nlohmann::json(nullptr)
                                                                 : nlohmann::json(c.monoid.size)},
            {"r_trivial", r_trivial}}},
          {"definition_checked", c.definition_checked},
          {"minimal_dfa", automata::to_json(d)}};
}

}  // namespace ropesim::automata
