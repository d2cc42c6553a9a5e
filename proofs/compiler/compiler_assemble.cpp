#include "proofs/compiler/compiler_assemble.hpp"

namespace ropesim::proofs {

attention::Model assemble_model(const LayerPlan& plan, const std::vector<LayerComponents>& layers,
                                const std::vector<std::string>& alphabet,
                                const attention::EvaluationPolicy& policy,
                                const std::string& formula_text) {
  const numeric::Arithmetic a = numeric::arithmetic(policy);
  const ResidualSpace& space = plan.space;
  attention::Model model;
  model.policy = policy;
  model.d_model = space.size();
  model.name = "compiled: " + formula_text;
  model.description =
      "formula -> transformer (THEORY §7 C1, C4, C5) by ropesim compile; the residual "
      "coordinates are named in `coordinates`";
  model.coordinates = space.names();
  model.embedding.alphabet = alphabet;
  for (const auto& s : alphabet) {
    ExactVector e = space.unit("top") + space.unit("sym:" + s);
    model.embedding.symbols.push_back(round_once(e, a));
  }
  model.embedding.bos = round_once(space.unit("bos"), a);
  model.embedding.eos = round_once(space.unit("top"), a);
  for (const LayerComponents& components : layers) {
    attention::Layer layer;
    std::vector<HiddenUnit> units;
    for (const Component& c : components) {
      if (c.sublayer == Sublayer::attention) {
        layer.heads.push_back(*c.head);
      } else {
        units.insert(units.end(), c.units.begin(), c.units.end());
      }
    }
    if (!units.empty()) layer.ffn = assemble_feed_forward(units, space, a);
    model.layers.push_back(std::move(layer));
  }
  // The root may be a leaf (an atom, true, mod(1,0)): no layer computes it.
  model.classifier.weights = round_once(space.unit(plan.root), a);
  model.classifier.bias = a.from_rational(mpq_class(-1, 2));
  return model;
}

std::vector<RawOutputRange> raw_output_ranges(const std::vector<LayerComponents>& layers) {
  std::vector<RawOutputRange> ranges;
  for (const LayerComponents& components : layers) {
    for (const Component& c : components) {
      ranges.insert(ranges.end(), c.raw_outputs.begin(), c.raw_outputs.end());
    }
  }
  return ranges;
}

}  // namespace ropesim::proofs
