// The compiler's budget pass (core/budget.hpp): the model estimated from the formula's DAG
// before anything is built, and the refusal of a model `ropesim run` would not read.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "logic/fragment.hpp"
#include "proofs/compiler/compiler.hpp"

namespace ropesim::proofs {

using ltl::NodeId;
using ltl::Operator;

CompileEstimate estimate_compile(const ltl::Formula& formula,
                                 const std::vector<std::string>& alphabet,
                                 const CompileOptions& options) {
  CompileEstimate e;
  const std::size_t n = formula.size();
  const std::vector<bool> used = ltl::reachable_nodes(formula);
  // layer[i]: the layer that computes node i in the ASAP layer plan (-1: a leaf, no layer). The
  // operands of a node have smaller ids (nodes are interned bottom-up).
  std::vector<double> layer(n, -1);
  std::set<std::string> symbols(alphabet.begin(), alphabet.end());
  double d = 2 + static_cast<double>(alphabet.size());  // bos, top, sym:a
  double heads = 0, head_dims = 0, hidden = 0, largest_k = 0;
  bool has_mod = false;
  // The used chain P^1 true, P^2 true, ... (a prefix: P^j true uses P^(j-1) true): the gates
  // of Y^k nodes reuse it and add the rest.
  std::unordered_map<NodeId, NodeId> past_of;
  std::optional<NodeId> top;
  for (std::size_t i = 0; i < n; ++i) {
    const ltl::Node& node = formula.node(static_cast<NodeId>(i));
    if (node.op == Operator::top) top = static_cast<NodeId>(i);
    if (used[i] && node.op == Operator::past) past_of.emplace(node.left, static_cast<NodeId>(i));
  }
  auto after = [](double a, double b = -1) { return 1 + std::max(a, b); };
  for (std::size_t i = 0; i < n; ++i) {
    if (!used[i]) continue;
    const ltl::Node& node = formula.node(static_cast<NodeId>(i));
    switch (node.op) {
      case Operator::symbol:
        if (symbols.insert(node.symbol).second) d += 1;  // an atom outside the alphabet
        break;
      case Operator::top:
        break;
      case Operator::modulo:
        if (node.m == 1) break;  // mod(1,0) is top
        if (node.m > e.largest_modulus) {
          e.largest_modulus = node.m;
          e.largest_modulus_atom = ltl::to_string(formula, static_cast<NodeId>(i));
        }
        layer[i] = 0;
        d += 2;  // f<id> and raw:<id>
        heads += 1;
        head_dims += 4;
        hidden += mod_formula(node.m, node.r, 1) ? 1 : 2;
        has_mod = true;
        break;
      case Operator::past:
        layer[i] = after(layer[node.left]);
        d += 2;
        heads += 1;
        head_dims += 1;
        hidden += 2;
        break;
      case Operator::yesterday:
        layer[i] = after(layer[node.left], static_cast<double>(node.k) - 1);  // the gate P^k true
        largest_k = std::max(largest_k, static_cast<double>(node.k));
        d += 2;
        heads += 1;
        head_dims += static_cast<double>(attention::single_schedule(1).dimension());
        hidden += 1;
        break;
      case Operator::negation:
        layer[i] = after(layer[node.left]);
        d += 1;
        hidden += 1;
        break;
      case Operator::conjunction:
      case Operator::disjunction:
        layer[i] = after(layer[node.left], layer[node.right]);
        d += 1;
        hidden += node.op == Operator::conjunction ? 1 : 2;
        break;
      case Operator::since:
        break;  // refused by the compiler
    }
  }
  if (largest_k > 0) {  // the gate chain P^1 true .. P^k true beyond the part the formula uses
    double present = 0;
    for (auto it = top ? past_of.find(*top) : past_of.end();
         it != past_of.end() && present < largest_k; it = past_of.find(it->second)) {
      present += 1;
    }
    const double added = largest_k - present;
    d += 2 * added;
    heads += added;
    head_dims += added;
    hidden += 2 * added;
  }
  e.past_heads = largest_k > 0 || !past_of.empty();
  if (has_mod) {  // count, written by the counting head of layer 0
    d += 1;
    heads += 1;
    head_dims += 1;
  }
  const double layers = 1 + layer[formula.root()];
  attention::ModelShape& shape = e.shape;
  shape.symbols = static_cast<double>(alphabet.size());
  shape.layers = layers;
  shape.ffn_layers = layers;  // every node has a hidden unit, and every layer computes a node
  shape.head_dims = head_dims;
  shape.heads = heads;
  shape.value_dims = heads;
  shape.hidden = hidden;
  shape.d_model = d;
  if (options.layer_norm) {  // the mirrors (padding not counted) and a reset unit per head
    shape.d_model = 2 * d;
    shape.hidden += heads;
  }
  e.numbers = attention::spec_number_count(shape);
  e.min_bytes = attention::spec_min_bytes(shape);
  return e;
}

namespace {

/// The formula as a budget refusal names it: its text, or for a formula too large to compile its
/// size (printing recurses once per nesting level: a chain of 10^4 conjunctions overflows the
/// stack of a sanitizer build before the message is made).
std::string formula_for_message(const ltl::Formula& formula) {
  if (formula.size() > 1000) return fmt::format("a formula of {} DAG nodes", formula.size());
  return "'" + ltl::to_string(formula) + "'";
}

}  // namespace

void check_compile_budget(const ltl::Formula& formula, const std::vector<std::string>& alphabet,
                          const CompileOptions& options) {
  const CompileEstimate e = estimate_compile(formula, alphabet, options);
  if (e.largest_modulus > kMaxModulus) {
    throw BudgetExceeded(
        fmt::format("cannot compile {}: the MOD head of {} needs a periodic table and a margin "
                    "check of {:.3g} residues; "
                    "accepted: moduli m <= {} (as construct mod --m)",
                    formula_for_message(formula), e.largest_modulus_atom,
                    static_cast<double>(e.largest_modulus), kMaxModulus));
  }
  // Y^k is one fixed-offset head (a look-back of k positions, head_dim 2) gated by P^k true, a
  // chain of k P heads one layer each (THEORY §7 C5; RoPE-X App D): its cost is k layers.
  std::uint64_t largest_k = 0;
  const std::vector<bool> used = ltl::reachable_nodes(formula);
  for (std::size_t i = 0; i < formula.size(); ++i) {
    const ltl::Node& node = formula.node(static_cast<NodeId>(i));
    if (used[i] && node.op == Operator::yesterday) largest_k = std::max(largest_k, node.k);
  }
  const std::string what = largest_k > 1
                               ? fmt::format(
                                     " (Y^{0} is one offset head gated by a chain of {0} P-head "
                                     "layers, so its model has at least {0} layers)",
                                     largest_k)
                               : std::string();
  attention::check_model_budget("cannot compile " + formula_for_message(formula) + what, e.shape,
                                static_cast<double>(options.max_model_numbers),
                                static_cast<double>(options.max_spec_bytes));
}

}  // namespace ropesim::proofs
