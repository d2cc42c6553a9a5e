// The prefix-sharing membership oracle (see prefix_oracle.hpp).
#include "attention/transformer/prefix_oracle.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace ropesim::attention {

PrefixOracle::PrefixOracle(Model model) : model_(std::move(model)) {
  model_.validate();
  for (std::size_t l = 0; l < model_.layers.size(); ++l) {
    for (std::size_t h = 0; h < model_.layers[l].heads.size(); ++h) {
      if (model_.layers[l].heads[h].formats) {
        throw InvalidArgument(
            "layers[" + std::to_string(l) + "].heads[" + std::to_string(h) +
            "].formats: per-tensor formats are simulated by run() only; the prefix "
            "oracle needs heads without a formats block");
      }
    }
  }
  rotations_.resize(model_.layers.size());
  for (std::size_t l = 0; l < model_.layers.size(); ++l) {
    stacked_.push_back(stacked_output_matrix(model_.layers[l], model_.d_model));
    rotations_[l].resize(model_.layers[l].heads.size());
  }
}

const HeadRotations& PrefixOracle::rotations(std::size_t layer, std::size_t head,
                                             std::uint64_t positions) const {
  HeadRotations& cached = rotations_[layer][head];
  if (cached.positions < positions) {
    // Grow geometrically so that a run of ever longer queries realises O(log N) times.
    const std::uint64_t wanted = std::max<std::uint64_t>(positions, 2 * cached.positions);
    cached = realise_head(model_.layers[layer].heads[head], wanted, model_.policy);
  }
  return cached;
}

PrefixRun PrefixOracle::run(std::string_view word) const { return run(indices(word)); }

PrefixRun PrefixOracle::run(std::span<const std::size_t> letters) const {
  return run_from(letters, 0);
}

Value PrefixOracle::output(std::span<const std::size_t> letters) const {
  return run_from(letters, letters.size()).outputs.back();
}

Value PrefixOracle::output(std::string_view word) const { return output(indices(word)); }

std::vector<std::size_t> PrefixOracle::indices(std::string_view word) const {
  const std::vector<std::string> symbols = tokenize(model_, word);
  const auto& alphabet = model_.embedding.alphabet;
  std::vector<std::size_t> letters;
  letters.reserve(symbols.size());
  for (const auto& s : symbols) {
    letters.push_back(static_cast<std::size_t>(std::find(alphabet.begin(), alphabet.end(), s) -
                                               alphabet.begin()));
  }
  return letters;
}

PrefixRun PrefixOracle::run_from(std::span<const std::size_t> letters, std::size_t shortest) const {
  const Model& model = model_;
  const EvaluationPolicy& policy = model.policy;
  const std::size_t alphabet_size = model.embedding.alphabet.size();
  for (std::size_t a : letters) {
    if (a >= alphabet_size) {
      throw InvalidArgument("prefix oracle: letter index " + std::to_string(a) +
                            " is not below the alphabet size " + std::to_string(alphabet_size));
    }
  }
  const std::size_t n_symbols = letters.size();
  const std::size_t bos = model.options.bos ? 1 : 0;
  const std::uint64_t first_position = model.options.bos ? 0 : 1;
  const std::uint64_t n_positions = n_symbols + 2;  // positions 0..N+1 (EOS of the whole word)
  const bool strict = model.options.masking == Masking::strict;

  // The prefix tokens (BOS, w_1..w_N): their states in every layer, and the keys and values of
  // every head, as run() computes them (they do not depend on the EOS that follows).
  std::vector<std::vector<Value>> x;
  if (bos) x.push_back(model.embedding.bos);
  for (std::size_t a : letters) x.push_back(model.embedding.symbols[a]);
  const std::size_t n_tokens = x.size();
  // keys[l][h][t], values[l][h][t]: one spare slot at the end (index n_tokens) lets a
  // non-strict EOS query see itself right after the visible prefix without copying.
  std::vector<std::vector<std::vector<std::vector<Value>>>> keys(model.layers.size()),
      values(model.layers.size());
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const Layer& layer = model.layers[l];
    keys[l].resize(layer.heads.size());
    values[l].resize(layer.heads.size());
    std::vector<std::vector<Value>> h = x;
    if (!layer.heads.empty()) {
      std::vector<std::vector<Value>> in(n_tokens), concat(n_tokens);
      for (std::size_t t = 0; t < n_tokens; ++t) in[t] = attention_input(model, layer, x[t]);
      for (std::size_t hi = 0; hi < layer.heads.size(); ++hi) {
        const AttentionHead& head = layer.heads[hi];
        const HeadRotations& rot = rotations(l, hi, n_positions);
        auto& k = keys[l][hi];
        auto& v = values[l][hi];
        k.resize(n_tokens + 1);
        v.resize(n_tokens + 1);
        std::vector<std::vector<Value>> q(n_tokens);
        for (std::size_t t = 0; t < n_tokens; ++t) {
          q[t] = head_query(head, rot, first_position + t, in[t], policy);
          k[t] = head_key(head, rot, first_position + t, in[t], policy);
          v[t] = head_value(head, in[t], policy);
        }
        for (std::size_t t = 0; t < n_tokens; ++t) {
          const std::size_t visible = strict ? t : t + 1;
          const HeadStep step =
              head_step(head, q[t], std::span<const std::vector<Value>>(k.data(), visible),
                        std::span<const std::vector<Value>>(v.data(), visible), policy,
                        model.options.softmax);
          concat[t].insert(concat[t].end(), step.attention.output.begin(),
                           step.attention.output.end());
        }
      }
      for (std::size_t t = 0; t < n_tokens; ++t) {
        h[t] = attention_sublayer(model, layer, stacked_[l], x[t], concat[t]).residual;
      }
    }
    if (layer.ffn) {
      for (std::size_t t = 0; t < n_tokens; ++t) h[t] = ffn_sublayer(model, layer, h[t]).residual;
    }
    x = std::move(h);
  }

  // One EOS query per prefix from `shortest` on: the prefix of length n has EOS at position
  // n + 1 and the visible prefix tokens 0..bos+n-1 (plus EOS itself under non-strict masking).
  PrefixRun result;
  result.outputs.reserve(n_symbols + 1 - shortest);
  result.accept.reserve(n_symbols + 1 - shortest);
  for (std::size_t n = shortest; n <= n_symbols; ++n) {
    const std::uint64_t eos_position = n + 1;
    const std::size_t prefix_tokens = bos + n;
    std::vector<Value> e = model.embedding.eos;
    for (std::size_t l = 0; l < model.layers.size(); ++l) {
      const Layer& layer = model.layers[l];
      std::vector<Value> h = e;
      if (!layer.heads.empty()) {
        const std::vector<Value> in = attention_input(model, layer, e);
        std::vector<Value> concat;
        for (std::size_t hi = 0; hi < layer.heads.size(); ++hi) {
          const AttentionHead& head = layer.heads[hi];
          const HeadRotations& rot = rotations(l, hi, n_positions);
          const std::vector<Value> q = head_query(head, rot, eos_position, in, policy);
          auto& k = keys[l][hi];
          auto& v = values[l][hi];
          std::size_t visible = prefix_tokens;
          std::vector<Value> k_eos, v_eos;
          if (!strict) {
            // EOS sees itself: put its key and value in slot prefix_tokens, restored below.
            k_eos = head_key(head, rot, eos_position, in, policy);
            v_eos = head_value(head, in, policy);
            std::swap(k[prefix_tokens], k_eos);
            std::swap(v[prefix_tokens], v_eos);
            visible = prefix_tokens + 1;
          }
          const HeadStep step =
              head_step(head, q, std::span<const std::vector<Value>>(k.data(), visible),
                        std::span<const std::vector<Value>>(v.data(), visible), policy,
                        model.options.softmax);
          if (!strict) {
            std::swap(k[prefix_tokens], k_eos);
            std::swap(v[prefix_tokens], v_eos);
          }
          concat.insert(concat.end(), step.attention.output.begin(), step.attention.output.end());
        }
        h = attention_sublayer(model, layer, stacked_[l], e, concat).residual;
      }
      if (layer.ffn) h = ffn_sublayer(model, layer, h).residual;
      e = std::move(h);
    }
    const Value y = classifier_output(model, readout(model, e));
    result.accept.push_back(accepts_output(y));
    result.outputs.push_back(y);
  }
  return result;
}

std::vector<bool> accepts_prefixes(const Model& model, std::string_view word) {
  return PrefixOracle(model).run(word).accept;
}

}  // namespace ropesim::attention
