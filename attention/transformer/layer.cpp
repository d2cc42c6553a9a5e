// One layer's sublayers (THEORY §2): the feed-forward network, LayerNorm, the attention and FFN
// sublayers with their residuals, the readout and the classifier. See transformer.hpp.
#include <cstdint>
#include <utility>

#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"

namespace ropesim::attention {

std::vector<Value> feed_forward(const FeedForward& ffn, std::span<const Value> x,
                                const EvaluationPolicy& policy) {
  const Arithmetic f = numeric::arithmetic(policy);
  std::vector<Value> h = matvec(ffn.w1, x, ffn.b1, policy);
  for (auto& v : h) v = f.relu(v);
  return matvec(ffn.w2, h, ffn.b2, policy);
}

std::vector<Value> layer_norm(const LayerNormParams& params, std::span<const Value> x,
                              const EvaluationPolicy& policy) {
  const std::size_t d = x.size();
  if ((!params.gain.empty() && params.gain.size() != d) ||
      (!params.bias.empty() && params.bias.size() != d)) {
    throw InvalidArgument("layer_norm: gain/bias lengths " + std::to_string(params.gain.size()) +
                          "/" + std::to_string(params.bias.size()) + " for a vector of length " +
                          std::to_string(d));
  }
  if (d == 0) return {};
  const Arithmetic f = numeric::arithmetic(policy);
  const Value d_hat = f.from_rational(mpq_class(static_cast<unsigned long>(d)));
  const Value mean = f.div(sum(x, policy), d_hat);
  std::vector<Value> centred(d), squares(d);
  for (std::size_t k = 0; k < d; ++k) {
    centred[k] = f.sub(x[k], mean);
    squares[k] = f.mul(centred[k], centred[k]);
  }
  const Value variance = f.div(sum(squares, policy), d_hat);
  const Value sigma = f.sqrt(f.add(variance, params.epsilon));
  std::vector<Value> y(d);
  for (std::size_t k = 0; k < d; ++k) {
    Value v = f.div(centred[k], sigma);
    if (!params.gain.empty()) v = f.mul(v, params.gain[k]);
    if (!params.bias.empty()) v = f.add(v, params.bias[k]);
    y[k] = v;
  }
  return y;
}

std::vector<Value> attention_input(const Model& model, const Layer& layer,
                                   std::span<const Value> x) {
  if (model.options.norm_placement == NormPlacement::pre && layer.attention_norm) {
    return layer_norm(*layer.attention_norm, x, model.policy);
  }
  return {x.begin(), x.end()};
}

Matrix stacked_output_matrix(const Layer& layer, std::size_t d_model) {
  std::size_t total_value = 0;
  for (const auto& head : layer.heads) total_value += head.value_dim;
  Matrix out = Matrix::zeros(d_model, total_value);
  std::size_t c0 = 0;
  for (const auto& head : layer.heads) {
    for (std::size_t r = 0; r < d_model; ++r) {
      for (std::size_t c = 0; c < head.value_dim; ++c) out.at(r, c0 + c) = head.output.at(r, c);
    }
    c0 += head.value_dim;
  }
  return out;
}

SublayerStep attention_sublayer(const Model& model, const Layer& layer, const Matrix& stacked,
                                std::span<const Value> x, std::span<const Value> concat) {
  const Arithmetic f = numeric::arithmetic(model.policy);
  SublayerStep step;
  step.sublayer = matvec(stacked, concat, layer.attention_bias, model.policy);
  step.residual.resize(model.d_model);
  for (std::size_t r = 0; r < model.d_model; ++r) step.residual[r] = f.add(x[r], step.sublayer[r]);
  if (model.options.norm_placement == NormPlacement::post && layer.attention_norm) {
    step.residual = layer_norm(*layer.attention_norm, step.residual, model.policy);
  }
  return step;
}

SublayerStep ffn_sublayer(const Model& model, const Layer& layer, std::span<const Value> h) {
  const Arithmetic f = numeric::arithmetic(model.policy);
  const bool pre = model.options.norm_placement == NormPlacement::pre;
  std::vector<Value> in(h.begin(), h.end());
  if (pre && layer.ffn_norm) in = layer_norm(*layer.ffn_norm, in, model.policy);
  SublayerStep step;
  step.sublayer = feed_forward(*layer.ffn, in, model.policy);
  step.residual.resize(model.d_model);
  for (std::size_t r = 0; r < model.d_model; ++r) step.residual[r] = f.add(h[r], step.sublayer[r]);
  if (!pre && layer.ffn_norm)
    step.residual = layer_norm(*layer.ffn_norm, step.residual, model.policy);
  return step;
}

std::vector<Value> readout(const Model& model, std::span<const Value> x_eos) {
  if (model.final_norm) return layer_norm(*model.final_norm, x_eos, model.policy);
  return {x_eos.begin(), x_eos.end()};
}

Value classifier_output(const Model& model, std::span<const Value> readout) {
  return affine(model.classifier.weights, readout, model.classifier.bias, model.policy);
}

bool accepts_output(const Value& y) { return numeric::compare(y, Value()) == 1; }

}  // namespace ropesim::attention
