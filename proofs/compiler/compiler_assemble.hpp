#pragma once
/// The assembly pass of the compiler (THEORY §7 C1; STYLE: Tracr's assemble): the components of
/// every layer, over the plan's named residual space, become one attention::Model.
#include <string>
#include <vector>

#include "attention/transformer/transformer.hpp"
#include "proofs/compiler/component.hpp"
#include "proofs/compiler/layer_plan.hpp"

namespace ropesim::proofs {

/// The model of `layers` (one LayerComponents per layer of `plan`) under `policy`: d_model and
/// `coordinates` from plan.space; embeddings BOS = e_bos, symbol a = e_top + e_sym:a, EOS =
/// e_top (rounded once into F); per layer the heads of its attention components in order and
/// one FFN of its feed-forward components' hidden units in order (none when it has none); the
/// classifier reads the root's coordinate with bias −1/2 (accept iff root − 1/2 > 0 at EOS).
/// `formula_text` names the model. Throws InvalidArgument when a component names a coordinate
/// the space lacks.
attention::Model assemble_model(const LayerPlan& plan, const std::vector<LayerComponents>& layers,
                                const std::vector<std::string>& alphabet,
                                const attention::EvaluationPolicy& policy,
                                const std::string& formula_text);

/// Every head component's raw output ranges, in layer and component order (the LayerNorm
/// mirror checks each; proofs/compiler/layer_norm_mirror.hpp).
std::vector<RawOutputRange> raw_output_ranges(const std::vector<LayerComponents>& layers);

}  // namespace ropesim::proofs
