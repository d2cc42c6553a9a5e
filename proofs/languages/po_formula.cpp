#include "proofs/languages/po_formula.hpp"

#include <string>
#include <utility>
#include <vector>

#include "automata/classes.hpp"
#include "core/error.hpp"

namespace ropesim::proofs {

namespace {

/// The nodes of `f` below its root, copied into a fresh DAG (same structure, same root
/// formula): the construction builds ψ_{=q} for every state, the formula keeps the ones used.
ltl::Formula reachable_copy(const ltl::Formula& f) {
  std::vector<bool> needed(f.size(), false);
  needed[f.root()] = true;
  for (std::size_t id = f.size(); id-- > 0;) {
    if (!needed[id]) continue;
    const ltl::Node& n = f.node(static_cast<ltl::NodeId>(id));
    if (n.op == ltl::Operator::negation || n.op == ltl::Operator::past ||
        n.op == ltl::Operator::yesterday) {
      needed[n.left] = true;
    } else if (n.op == ltl::Operator::conjunction || n.op == ltl::Operator::disjunction ||
               n.op == ltl::Operator::since) {
      needed[n.left] = needed[n.right] = true;
    }
  }
  ltl::Formula out;
  std::vector<ltl::NodeId> copy(f.size(), 0);
  for (std::size_t id = 0; id < f.size(); ++id) {
    if (!needed[id]) continue;
    const ltl::Node& n = f.node(static_cast<ltl::NodeId>(id));
    switch (n.op) {
      case ltl::Operator::symbol:
        copy[id] = out.symbol(n.symbol);
        break;
      case ltl::Operator::top:
        copy[id] = out.top();
        break;
      case ltl::Operator::negation:
        copy[id] = out.negation(copy[n.left]);
        break;
      case ltl::Operator::conjunction:
        copy[id] = out.conjunction(copy[n.left], copy[n.right]);
        break;
      case ltl::Operator::disjunction:
        copy[id] = out.disjunction(copy[n.left], copy[n.right]);
        break;
      case ltl::Operator::past:
        copy[id] = out.past(copy[n.left]);
        break;
      case ltl::Operator::yesterday:
        copy[id] = out.yesterday(copy[n.left], n.k);
        break;
      case ltl::Operator::since:
        copy[id] = out.since(copy[n.left], copy[n.right]);
        break;
      case ltl::Operator::modulo:
        copy[id] = out.modulo(n.m, n.r);
        break;
    }
  }
  out.set_root(copy[f.root()]);
  return out;
}

}  // namespace

ltl::Formula po_dfa_formula(const automata::Dfa& dfa) {
  using automata::Letter;
  using automata::State;
  const automata::PartialOrder order = automata::partial_order(dfa);
  if (!order.partially_ordered) {
    const automata::TwoStateCycle& c = *order.witness;
    throw InvalidArgument(
        "C3: the DFA is not partially ordered: states " + std::to_string(c.p) + " and " +
        std::to_string(c.q) + " reach each other ('" + dfa.text(c.to) + "' and '" +
        dfa.text(c.back) +
        "'); accepted: a partially ordered DFA (minimal DFA of an LTL[P] language)");
  }
  const std::size_t n = dfa.state_count();
  // A topological order of the transition graph without self-loops (Kahn's algorithm; it is
  // acyclic because the DFA is partially ordered).
  std::vector<std::size_t> indegree(n, 0);
  for (State q = 0; q < n; ++q)
    for (Letter a = 0; a < dfa.letter_count(); ++a)
      if (dfa.next(q, a) != q) ++indegree[dfa.next(q, a)];
  // The transitions into each state from another one, by source state and then letter
  // (O(|Q|·|Σ|) in all, so large DFAs cost linear time).
  std::vector<std::vector<std::pair<State, Letter>>> predecessors(n);
  for (State p = 0; p < n; ++p)
    for (Letter a = 0; a < dfa.letter_count(); ++a)
      if (dfa.next(p, a) != p) predecessors[dfa.next(p, a)].emplace_back(p, a);
  std::vector<State> topological;
  for (State q = 0; q < n; ++q)
    if (indegree[q] == 0) topological.push_back(q);
  for (std::size_t head = 0; head < topological.size(); ++head) {
    const State q = topological[head];
    for (Letter a = 0; a < dfa.letter_count(); ++a) {
      const State r = dfa.next(q, a);
      if (r != q && --indegree[r] == 0) topological.push_back(r);
    }
  }

  ltl::Formula f;
  std::vector<ltl::NodeId> atom(dfa.letter_count());
  for (Letter a = 0; a < dfa.letter_count(); ++a) atom[a] = f.symbol(dfa.alphabet()[a]);
  const ltl::NodeId top = f.top();
  const ltl::NodeId bottom = f.negation(top);
  auto conjoin = [&](ltl::NodeId acc, ltl::NodeId x) {
    return acc == top ? x : f.conjunction(acc, x);
  };
  auto disjoin = [&](ltl::NodeId acc, ltl::NodeId x) {
    return acc == bottom ? x : f.disjunction(acc, x);
  };

  std::vector<ltl::NodeId> equal(n, bottom);  // ψ_{=q}
  for (const State q : topological) {
    if (q == dfa.initial()) {
      ltl::NodeId psi = top;
      for (Letter a = 0; a < dfa.letter_count(); ++a)
        if (dfa.next(q, a) != q) psi = conjoin(psi, f.negation(f.past(atom[a])));
      equal[q] = psi;
      continue;
    }
    // Every predecessor q' ≠ q comes earlier in the topological order, so ψ_{=q'} is built.
    ltl::NodeId entered = bottom;  // ψ_{<q}
    for (const auto& [p, a] : predecessors[q]) {
      if (equal[p] == bottom) continue;  // p is never the current state (unreachable)
      entered = disjoin(entered, f.past(conjoin(equal[p], atom[a])));
    }
    ltl::NodeId psi = entered;
    if (entered != bottom) {
      for (Letter a = 0; a < dfa.letter_count(); ++a)
        if (dfa.next(q, a) != q)
          psi = conjoin(psi, f.negation(f.past(f.conjunction(entered, atom[a]))));
    }
    equal[q] = psi;
  }
  ltl::NodeId accept = bottom;
  for (State q = 0; q < n; ++q)
    if (dfa.accepting(q)) accept = disjoin(accept, equal[q]);
  f.set_root(accept);
  return reachable_copy(f);
}

}  // namespace ropesim::proofs
