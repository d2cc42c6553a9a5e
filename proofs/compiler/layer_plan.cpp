#include "proofs/compiler/layer_plan.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "automata/dfa.hpp"
#include "logic/fragment.hpp"
#include "proofs/compiler/refusal.hpp"

namespace ropesim::proofs {

using ltl::NodeId;
using ltl::Operator;

namespace {

/// Nodes that no layer computes: atoms, ⊤ and mod(1,0) (= ⊤).
bool is_leaf(const ltl::Node& n) {
  return n.op == Operator::symbol || n.op == Operator::top ||
         (n.op == Operator::modulo && n.m == 1);
}

/// The ASAP placement: a node is placed in the first layer that begins with its operands ready
/// (a Y^k node also waits for its gate).
void place_nodes(LayerPlan& plan) {
  const ltl::Formula& f = plan.formula;
  const std::size_t n = f.size();
  std::vector<bool> ready(n, false), placed(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (plan.used[i] && is_leaf(f.node(static_cast<NodeId>(i)))) ready[i] = placed[i] = true;
  }
  while (!ready[f.root()]) {
    std::vector<NodeId> heads, boolean;
    for (std::size_t i = 0; i < n; ++i) {
      if (!plan.used[i] || placed[i]) continue;
      const ltl::Node& node = f.node(static_cast<NodeId>(i));
      const auto id = static_cast<NodeId>(i);
      switch (node.op) {
        case Operator::modulo:
          heads.push_back(id);
          break;
        case Operator::past:
          if (ready[node.left]) heads.push_back(id);
          break;
        case Operator::yesterday:
          if (ready[node.left] && ready[plan.gates.at(id)]) heads.push_back(id);
          break;
        case Operator::negation:
          if (ready[node.left]) boolean.push_back(id);
          break;
        case Operator::conjunction:
        case Operator::disjunction:
          if (ready[node.left] && ready[node.right]) boolean.push_back(id);
          break;
        default:
          break;
      }
    }
    if (heads.empty() && boolean.empty()) {
      throw std::logic_error(
          "compiler: the layer plan made no progress (a node kind is not compiled)");
    }
    for (NodeId id : heads) placed[id] = ready[id] = true;
    for (NodeId id : boolean) placed[id] = ready[id] = true;
    for (NodeId id : heads) plan.has_past = plan.has_past || f.node(id).op == Operator::past;
    plan.heads.push_back(std::move(heads));
    plan.boolean.push_back(std::move(boolean));
  }
}

/// The residual space and the coordinate of every used node.
void name_coordinates(LayerPlan& plan, const std::vector<std::string>& alphabet) {
  const ltl::Formula& f = plan.formula;
  ResidualSpace& space = plan.space;
  space.add("bos");
  space.add("top");
  for (const auto& s : alphabet) space.add("sym:" + s);
  plan.node_coordinates.assign(f.size(), "");
  plan.node_text.assign(f.size(), "");
  bool has_mod = false;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (!plan.used[i]) continue;
    const auto id = static_cast<NodeId>(i);
    const ltl::Node& n = f.node(id);
    std::string name;
    if (n.op == Operator::symbol) {
      name = "sym:" + n.symbol;
      if (!space.contains(name)) space.add(name);  // an atom outside the alphabet: 0 everywhere
    } else if (is_leaf(n)) {
      name = "top";
    } else {
      plan.node_text[i] = ltl::to_string(f, id);
      name = "f" + std::to_string(i) + ":" + plan.node_text[i];
      space.add(name);
      if (n.op == Operator::past || n.op == Operator::modulo || n.op == Operator::yesterday) {
        space.add(LayerPlan::raw(id));
      }
      if (n.op == Operator::modulo) has_mod = true;
    }
    plan.node_coordinates[i] = name;
  }
  if (has_mod) space.add("count");
}

/// The construction inputs of node `id` (placed in some layer).
PlannedNode planned_node(const LayerPlan& plan, NodeId id) {
  const ltl::Node& n = plan.formula.node(id);
  PlannedNode p;
  p.op = n.op;
  p.text = plan.node_text[id];
  p.out = plan.node_coordinates[id];
  if (n.op != Operator::modulo) p.operand = plan.node_coordinates[n.left];
  if (n.op == Operator::conjunction || n.op == Operator::disjunction)
    p.right = plan.node_coordinates[n.right];
  if (n.op == Operator::past || n.op == Operator::yesterday || n.op == Operator::modulo)
    p.raw = LayerPlan::raw(id);
  if (n.op == Operator::yesterday) {
    p.gate = plan.node_coordinates[plan.gates.at(id)];
    p.k = n.k;
  }
  if (n.op == Operator::modulo) {
    p.m = n.m;
    p.r = n.r;
  }
  return p;
}

}  // namespace

std::string LayerPlan::raw(NodeId id) { return "raw:" + std::to_string(id); }

void check_compilable(const ltl::Formula& formula, const std::vector<std::string>& alphabet) {
  if (alphabet.empty())
    throw Refusal(RefusalReason::input,
                  "the alphabet is empty; give at least one symbol, e.g. --alphabet ab");
  {
    std::set<std::string> seen;
    for (const auto& s : alphabet) {
      if (!seen.insert(s).second)
        throw Refusal(RefusalReason::input, "the alphabet lists '" + s + "' twice");
    }
  }
  const std::vector<bool> used = ltl::reachable_nodes(formula);
  for (std::size_t i = 0; i < formula.size(); ++i) {
    if (!used[i]) continue;
    const ltl::Node& n = formula.node(static_cast<NodeId>(i));
    if (n.op == Operator::symbol &&
        std::find(alphabet.begin(), alphabet.end(), n.symbol) == alphabet.end()) {
      // As classify --formula (proofs::formula_dfa): an atom outside the alphabet is a typo
      // (it would be false at every position), not a formula over that alphabet.
      throw Refusal(RefusalReason::input,
                    "cannot compile '" + ltl::to_string(formula) + "': atom '" + n.symbol +
                        "' is not a letter of the alphabet " + automata::alphabet_text(alphabet) +
                        "; accepted: atoms among the alphabet's letters");
    }
    if (n.op == Operator::since) {  // the text only here: printing every subformula is quadratic
      throw Refusal(RefusalReason::input,
                    "cannot compile '" + ltl::to_string(formula, static_cast<NodeId>(i)) +
                        "': S (since) is not in LTL[P,MOD], which RoPE_P transformers recognise "
                        "(THEORY §5 T5); the compiler accepts atoms, true, mod(m,r), !, &, |, P");
    }
  }
}

LayerPlan plan_layers(const ltl::Formula& input, const std::vector<std::string>& alphabet) {
  LayerPlan plan;
  plan.used = ltl::reachable_nodes(input);
  // The gate P^k⊤ of every Y^k node (RoPE-X App D), appended to a copy of the DAG.
  plan.formula = input;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const ltl::Node n = input.node(static_cast<NodeId>(i));
    if (!plan.used[i] || n.op != Operator::yesterday) continue;
    NodeId g = plan.formula.top();
    for (std::uint64_t l = 0; l < n.k; ++l) g = plan.formula.past(g);
    plan.gates[static_cast<NodeId>(i)] = g;
  }
  plan.used.resize(plan.formula.size(), false);
  for (const auto& [y, g] : plan.gates) {
    for (NodeId x = g;; x = plan.formula.node(x).left) {
      plan.used[x] = true;
      if (plan.formula.node(x).op != Operator::past) break;
    }
  }
  plan.text = ltl::to_string(input);
  place_nodes(plan);
  name_coordinates(plan, alphabet);
  for (std::size_t l = 0; l < plan.layers(); ++l) {
    PlannedLayer layer;
    for (NodeId id : plan.heads[l]) layer.heads.push_back(planned_node(plan, id));
    for (NodeId id : plan.boolean[l]) layer.boolean.push_back(planned_node(plan, id));
    plan.planned.push_back(std::move(layer));
  }
  plan.root = plan.node_coordinates[plan.formula.root()];
  return plan;
}

}  // namespace ropesim::proofs
