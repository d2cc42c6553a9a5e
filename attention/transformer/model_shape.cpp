// The shape of a model and the work of a run (check_budget's estimate). See transformer.hpp.
#include "attention/transformer/transformer.hpp"

namespace ropesim::attention {

ModelShape shape_of(const Model& model) {
  ModelShape shape;
  shape.d_model = static_cast<double>(model.d_model);
  shape.symbols = static_cast<double>(model.embedding.alphabet.size());
  for (const auto& layer : model.layers) {
    shape.layers += 1;
    for (const auto& h : layer.heads) {
      shape.heads += 1;
      shape.head_dims += static_cast<double>(h.head_dim);
      shape.value_dims += static_cast<double>(h.value_dim);
    }
    if (layer.ffn) {
      shape.ffn_layers += 1;
      shape.hidden += static_cast<double>(layer.ffn->w1.rows);
    }
  }
  return shape;
}

WorkEstimate run_work(const ModelShape& shape, std::uint64_t symbols) {
  const double n = static_cast<double>(symbols) + 2;  // BOS w EOS
  const double d = shape.d_model;
  // Per head and (query, key): scores, exp and weighted values; per position: the projections
  // and outputs of every head and the FFN.
  const double per_layer_quadratic = (shape.head_dims + shape.value_dims + 2 * shape.heads) / 2;
  const double per_position =
      d * 2 + 2 * d * (shape.head_dims + shape.value_dims) + 2 * shape.hidden * d;
  WorkEstimate e;
  e.what = "multiply-adds in F";
  e.units = per_layer_quadratic * n * n + per_position * n;
  e.units_per_second = 5e6;  // measured: 5.6e6/s on a 2000-symbol word, 1e7/s over short words
  e.bytes = n * d * 64 * (shape.layers + 1);
  return e;
}

WorkEstimate run_work(const Model& model, std::uint64_t symbols) {
  return run_work(shape_of(model), symbols);
}

}  // namespace ropesim::attention
