#pragma once
/// The report pass of the compiler (THEORY §7): what the compiled model's report says, derived
/// from its component list, and the report as JSON (compiler.hpp to_json).
#include <vector>

#include "proofs/compiler/compiler.hpp"

namespace ropesim::proofs {

/// Fills the parts of `compiled` that the components determine: `layers` (per layer the heads'
/// and FFN gadgets' descriptions, in component order), `mod_heads` and `bounded_heads` (in
/// layer order) and `certified_length`: the smallest of the P-head certificate's certified
/// count (when `compiled.past` is set) and every Y^k head's N_max^(k) (nullopt = every length).
/// Source: THEORY §7 C1 (exactness), §6 (certified range).
void describe_components(CompiledModel& compiled, const std::vector<LayerComponents>& layers);

}  // namespace ropesim::proofs
