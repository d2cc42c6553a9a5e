#pragma once
/// Construction C3: a partially ordered DFA → an LTL[P] formula of its language (THEORY §7 C3,
/// §5 T2; [LC25] Lemma C.1, used for Thm 4.1).
///
/// For each state q, ψ_{=q} holds at position i (1 ≤ i ≤ N + 1) iff the DFA is in q after
/// reading w_1..w_{i−1} (the strict past: P is strict, and atoms are false at N + 1, but no atom
/// occurs outside a P here). By induction up the state order (a topological order of the graph
/// without self-loops; the DFA is partially ordered, so a run that leaves a state never returns):
///   ψ_{=q0} = ∧_{a: δ(q0,a) ≠ q0} ¬P π_a                 (no letter leaving q0 was read)
///   ψ_{<q}  = ∨_{δ(q',a) = q, q' ≠ q} P(ψ_{=q'} ∧ π_a)    (q was entered at some j < i)
///   ψ_{=q}  = ψ_{<q} ∧ ∧_{a: δ(q,a) ≠ q} ¬P(ψ_{<q} ∧ π_a) (entered, and no letter leaving q was
///                                                          read after entering it)
///   accept  = ∨_{q ∈ F} ψ_{=q}, read at N + 1.
/// (q0 is never re-entered, so its ψ_{<q} is not needed.) Empty conjunctions are `true`, empty
/// disjunctions `false` (= !true). The formula is built as a hash-consed DAG (ltl::Formula's
/// builders): every ψ is one node, shared by all its uses; printed as a tree it can be
/// exponentially longer (ltl::tree_size). The returned DAG holds only the nodes below the root
/// (its size() is the formula's DAG size).
#include "automata/dfa.hpp"
#include "logic/formula.hpp"

namespace ropesim::proofs {

/// The C3 formula of L(dfa) for a partially ordered `dfa` (complete, any state numbering; the
/// minimal DFA of an LTL[P] language is partially ordered, THEORY §5 T2). Atoms are the DFA's
/// symbols, which must be valid atom names (ltl::Formula::symbol). Throws
/// ropesim::InvalidArgument if some cycle goes through two distinct states (naming the two
/// states and the words between them) or a symbol is not a valid atom.
ltl::Formula po_dfa_formula(const automata::Dfa& dfa);

}  // namespace ropesim::proofs
