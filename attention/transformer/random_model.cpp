// Random small F-transformers (see random_model.hpp).
#include "attention/transformer/random_model.hpp"

#include <random>
#include <string>

#include "core/error.hpp"

namespace ropesim::attention {

namespace {

void check_range(std::string_view name, std::size_t value, std::size_t low, std::size_t high) {
  if (value < low || value > high) {
    throw InvalidArgument("random model: " + std::string(name) + " = " + std::to_string(value) +
                          " is out of range; accepted: " + std::to_string(low) + ".." +
                          std::to_string(high));
  }
}

struct Draw {
  std::mt19937_64 rng;
  /// k/4 for k uniform in [-8, 8].
  Value weight() {
    return Value::from_double_exact(static_cast<double>(static_cast<int>(rng() % 17) - 8) / 4);
  }
  std::vector<Value> vector(std::size_t n) {
    std::vector<Value> out(n);
    for (auto& x : out) x = weight();
    return out;
  }
  Matrix matrix(std::size_t rows, std::size_t cols) {
    Matrix m = Matrix::zeros(rows, cols);
    for (auto& x : m.entries) x = weight();
    return m;
  }
};

}  // namespace

Model random_model(const RandomModelOptions& options, std::uint64_t seed) {
  check_range("alphabet_size", options.alphabet_size, 1, 26);
  check_range("layers", options.layers, 1, 8);
  check_range("heads", options.heads, 1, 8);
  check_range("d_model", options.d_model, 1, 64);
  check_range("head_dim", options.head_dim, 2, 64);
  if (options.head_dim % 2 != 0) {
    throw InvalidArgument("random model: head_dim = " + std::to_string(options.head_dim) +
                          " is odd; accepted: an even number 2..64");
  }
  if (options.rotary == RandomRotary::periodic && options.max_period < 2) {
    throw InvalidArgument("random model: max_period = " + std::to_string(options.max_period) +
                          " is too small; accepted: 2 or more");
  }
  Draw draw{std::mt19937_64(seed)};
  const std::size_t d = options.d_model;
  Model m;
  m.name = "random";
  m.policy.format = options.format;
  m.options = options.options;
  if (options.norms) m.options.norm_placement = *options.norms;
  m.d_model = d;
  for (std::size_t a = 0; a < options.alphabet_size; ++a) {
    m.embedding.alphabet.push_back(std::string(1, static_cast<char>('a' + a)));
    m.embedding.symbols.push_back(draw.vector(d));
  }
  if (m.options.bos) m.embedding.bos = draw.vector(d);
  m.embedding.eos = draw.vector(d);
  const numeric::Format& f = options.format;
  auto norm = [&]() {
    LayerNormParams p;
    p.gain = draw.vector(d);
    p.bias = draw.vector(d);
    p.epsilon = Value::from_double_exact(0.25);
    return p;
  };
  for (std::size_t l = 0; l < options.layers; ++l) {
    Layer layer;
    for (std::size_t h = 0; h < options.heads; ++h) {
      AttentionHead head;
      head.name = "L" + std::to_string(l) + "H" + std::to_string(h);
      head.head_dim = options.head_dim;
      head.value_dim = options.head_dim;
      head.query = draw.matrix(options.head_dim, d);
      head.key = draw.matrix(options.head_dim, d);
      head.value = draw.matrix(options.head_dim, d);
      head.output = draw.matrix(d, options.head_dim);
      head.query_bias = draw.vector(options.head_dim);
      head.key_bias = draw.vector(options.head_dim);
      head.value_bias = draw.vector(options.head_dim);
      const std::size_t blocks = options.head_dim / 2;
      if (options.rotary == RandomRotary::periodic) {
        std::string spec = "periodic:m=";
        for (std::size_t b = 0; b < blocks; ++b) {
          const std::uint64_t period = 2 + draw.rng() % (options.max_period - 1);
          spec += (b == 0 ? "" : ",") + std::to_string(period);
        }
        RotarySegment segment;
        segment.schedule = parse_schedule(spec);
        segment.realisations.assign(blocks, parse_realisation("r3", f));
        head.rotary.push_back(std::move(segment));
      } else if (options.rotary == RandomRotary::conventional) {
        RotarySegment segment;
        segment.schedule =
            parse_schedule("conventional:base=10000,dim=" + std::to_string(options.head_dim));
        segment.realisations.assign(blocks, parse_realisation("r1", f));
        head.rotary.push_back(std::move(segment));
      }
      layer.heads.push_back(std::move(head));
    }
    layer.attention_bias = draw.vector(d);
    if (options.ffn) {
      FeedForward ffn;
      ffn.w1 = draw.matrix(d, d);
      ffn.b1 = draw.vector(d);
      ffn.w2 = draw.matrix(d, d);
      ffn.b2 = draw.vector(d);
      layer.ffn = std::move(ffn);
    }
    if (options.norms) {
      layer.attention_norm = norm();
      if (options.ffn) layer.ffn_norm = norm();
    }
    m.layers.push_back(std::move(layer));
  }
  m.classifier.weights = draw.vector(d);
  m.classifier.bias = draw.weight();
  m.validate();
  return m;
}

}  // namespace ropesim::attention
