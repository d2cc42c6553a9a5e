#pragma once
/// Pass 1 of the formula → transformer compiler (THEORY §7 C1, C5): the formula becomes a layer
/// plan over named subformulas. Every used node gets a residual coordinate (`sym:a` for atoms,
/// `top` for ⊤ and mod(1,0), `f<id>:<text>` otherwise, and `raw:<id>` for a head's output before
/// re-binarisation or correction); the nodes are placed in layers as soon as their operands are
/// ready (ASAP over the DAG): P, Y^k and MOD nodes in the attention sublayer of their layer,
/// ¬ ∧ ∨ nodes in its FFN (one ReLU level).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "logic/formula.hpp"
#include "proofs/common/residual_space.hpp"

namespace ropesim::proofs {

/// A node of the plan with everything its construction needs, by name (THEORY §7 C1, C4, C5):
/// no pass after the plan reads the formula.
struct PlannedNode {
  ltl::Operator op = ltl::Operator::top;  ///< past, yesterday, modulo, negation, conjunction,
                                          ///< disjunction
  std::string text;                       ///< the subformula's text (names its head and gadgets)
  std::string out;                        ///< the coordinate holding the subformula
  std::string operand;  ///< the left (or only) operand's coordinate; empty for modulo
  std::string right;    ///< the right operand's coordinate (conjunction, disjunction)
  std::string raw;      ///< the head's output before re-binarisation / correction (heads)
  std::string gate;     ///< the gate P^k⊤'s coordinate (yesterday)
  std::uint64_t k = 0;  ///< yesterday: the offset
  std::uint64_t m = 0;  ///< modulo: m ≥ 2
  std::uint64_t r = 0;  ///< modulo: the residue
};

/// One layer of the plan: the nodes whose heads its attention sublayer holds (P, Y^k, MOD with
/// m ≥ 2) and the Boolean nodes its FFN computes, each in id order.
struct PlannedLayer {
  std::vector<PlannedNode> heads;
  std::vector<PlannedNode> boolean;
};

/// The compiler's plan for one formula.
struct LayerPlan {
  /// The input formula's text (ltl::to_string).
  std::string text;
  /// The input formula with the gate P^k⊤ of every Y^k node appended (RoPE-X App D); the
  /// input's node ids are unchanged.
  ltl::Formula formula;
  /// Per NodeId of `formula`: reached from the root, or part of a gate.
  std::vector<bool> used;
  /// Y^k node → its gate P^k⊤.
  std::map<ltl::NodeId, ltl::NodeId> gates;
  /// Per NodeId: the coordinate holding the subformula (empty for unused nodes).
  std::vector<std::string> node_coordinates;
  /// Per NodeId: the subformula's text for used nodes that a layer computes (empty otherwise).
  std::vector<std::string> node_text;
  /// The named residual space: `bos`, `top`, `sym:a` per alphabet symbol, then per used node in
  /// id order its `f<id>:<text>` (and `raw:<id>` for P, Y^k, MOD), then `count` when a MOD
  /// atom with m ≥ 2 is used.
  ResidualSpace space;
  /// Per layer: the nodes with a head (P, Y^k, MOD with m ≥ 2) and the Boolean nodes, each in
  /// id order.
  std::vector<std::vector<ltl::NodeId>> heads;
  std::vector<std::vector<ltl::NodeId>> boolean;
  /// The same layers with each node's construction inputs (planned_layer of each layer).
  std::vector<PlannedLayer> planned;
  /// The root's coordinate (the classifier reads it; a leaf's when no layer computes the root).
  std::string root;
  bool has_past = false;  ///< some layer has a P head (then the P-head certificate is needed)

  /// The raw coordinate of a head node: `raw:<id>`.
  static std::string raw(ltl::NodeId id);
  /// The number of layers.
  std::size_t layers() const { return heads.size(); }
};

/// Refusals of the input that no format can fix (Refusal with RefusalReason::input): an empty
/// alphabet, a repeated symbol, an atom outside the alphabet (a typo, as classify --formula
/// refuses it), or S (not in LTL[P,MOD]; THEORY §5 T5). Source: THEORY §7.
void check_compilable(const ltl::Formula& formula, const std::vector<std::string>& alphabet);

/// The plan of `formula` over `alphabet` (see the file comment). Throws std::logic_error if a
/// used node kind has no construction (S: check_compilable refuses it first).
LayerPlan plan_layers(const ltl::Formula& formula, const std::vector<std::string>& alphabet);

}  // namespace ropesim::proofs
