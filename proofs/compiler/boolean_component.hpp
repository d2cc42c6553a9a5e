#pragma once
/// The Boolean FFN components of the compiler (THEORY §7 C1; proofs/compiler/gadgets.hpp): one ReLU
/// level per node, exact on {0,1} inputs in every binary format with p ≥ 2 (integer sums):
///   ¬x = ReLU(⊤ − x),  x ∧ y = ReLU(x + y − ⊤),  x ∨ y = ReLU(x + y) − ReLU(x + y − ⊤).
#include <string>

#include "logic/formula.hpp"
#include "proofs/compiler/component.hpp"

namespace ropesim::proofs {

/// The FFN component of the Boolean node `op` (negation: reads `top`, `left`; conjunction and
/// disjunction: read `left`, `right`, `top`) writing `out`, named `node`. `right` is ignored for
/// negation. Throws InvalidArgument if `op` is not ¬, ∧ or ∨.
Component boolean_component(ltl::Operator op, const std::string& left, const std::string& right,
                            const std::string& out, const std::string& node);

}  // namespace ropesim::proofs
