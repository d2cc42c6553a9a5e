// Running a model on a word (THEORY §2): every layer at every position, the traces, the first
// non-finite value and, for mixed-format heads (mixed_attention.hpp), the first flagged step.
// See run.hpp for the contract.
#include "attention/transformer/run.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "attention/transformer/mixed_attention.hpp"
#include "core/error.hpp"

namespace ropesim::attention {

namespace {

bool all_finite(const std::vector<Value>& v) {
  return std::all_of(v.begin(), v.end(), [](const Value& x) { return x.is_finite(); });
}

/// Records the first non-finite event in evaluation order.
struct NonFiniteTracker {
  std::optional<NonFinite> first;
  // Within the current layer: the lexicographically smallest (position index, stage, head).
  std::optional<std::tuple<std::size_t, int, std::size_t>> key;
  std::optional<NonFinite> candidate;

  void note(std::size_t t, int stage, std::size_t head, NonFinite nf) {
    if (first) return;
    const auto k = std::make_tuple(t, stage, head);
    if (!key || k < *key) {
      key = k;
      candidate = std::move(nf);
    }
  }
  void end_stage_group() {
    if (!first && candidate) first = candidate;
    key.reset();
    candidate.reset();
  }
};

NonFinite make_nf(std::string stage, std::optional<std::size_t> layer,
                  std::optional<std::uint64_t> position, std::optional<std::size_t> head) {
  NonFinite nf;
  nf.stage = stage;
  nf.layer = layer;
  nf.position = position;
  nf.head = head;
  std::string w;
  if (layer) w += "layer " + std::to_string(*layer);
  if (position) w += (w.empty() ? "" : ", ") + std::string("position ") + std::to_string(*position);
  if (head) w += (w.empty() ? "" : ", ") + std::string("head ") + std::to_string(*head);
  w += (w.empty() ? "" : " ") + stage;
  nf.where = w;
  return nf;
}

/// The first step of a mixed-format head that raised overflow / invalid, in the order
/// (layer, head, position, step) of StepException.
struct StepFlagTracker {
  std::optional<StepException> first_overflow, first_invalid;
  std::optional<std::tuple<std::size_t, std::size_t, std::size_t, std::size_t>> overflow_key,
      invalid_key;

  void note(std::size_t layer, std::size_t head, std::size_t t, std::uint64_t position,
            std::size_t step, const std::string& name, const std::string& format,
            numeric::Flags flags) {
    const auto key = std::make_tuple(layer, head, t, step);
    auto keep = [&](std::optional<StepException>& slot, auto& slot_key) {
      if (slot_key && !(key < *slot_key)) return;
      slot_key = key;
      slot = StepException{"layer " + std::to_string(layer) + ", position " +
                               std::to_string(position) + ", head " + std::to_string(head),
                           name,
                           format,
                           layer,
                           position,
                           head};
    };
    if (flags.test(numeric::Flag::overflow)) keep(first_overflow, overflow_key);
    if (flags.test(numeric::Flag::invalid)) keep(first_invalid, invalid_key);
  }
};

}  // namespace

RunResult run(const Model& model, std::string_view word, const RunOptions& options) {
  model.validate();
  const EvaluationPolicy& policy = model.policy;
  const std::vector<std::string> symbols = tokenize(model, word);
  RunResult result;
  const std::uint64_t first_position = model.options.bos ? 0 : 1;
  std::vector<std::vector<Value>> x;  // residual stream per token
  if (model.options.bos) {
    result.tokens.push_back("BOS");
    x.push_back(model.embedding.bos);
  }
  for (const auto& s : symbols) {
    result.tokens.push_back(s);
    const auto it = std::find(model.embedding.alphabet.begin(), model.embedding.alphabet.end(), s);
    x.push_back(
        model.embedding.symbols[static_cast<std::size_t>(it - model.embedding.alphabet.begin())]);
  }
  result.tokens.push_back("EOS");
  x.push_back(model.embedding.eos);
  const std::size_t n_tokens = x.size();
  for (std::size_t t = 0; t < n_tokens; ++t) result.positions.push_back(first_position + t);
  result.eos_position = result.positions.back();
  const std::uint64_t n_positions = result.eos_position + 1;

  // Traced token indices.
  std::vector<bool> traced(n_tokens, options.trace_all);
  for (std::uint64_t p : options.trace_positions) {
    if (p < first_position || p > result.eos_position) {
      throw InvalidArgument(
          "trace position " + std::to_string(p) + " does not exist; positions are " +
          std::to_string(first_position) + ".." + std::to_string(result.eos_position) +
          (model.options.bos ? " (BOS at 0, EOS at N+1)" : " (no BOS; EOS at N+1)"));
    }
    traced[static_cast<std::size_t>(p - first_position)] = true;
  }
  for (std::size_t t = 0; t < n_tokens; ++t) {
    if (traced[t]) {
      result.traced.push_back(result.positions[t]);
      result.traced_embeddings.push_back(x[t]);
    }
  }

  NonFiniteTracker tracker;
  StepFlagTracker steps;
  for (const Layer& layer : model.layers) {
    for (const AttentionHead& head : layer.heads)
      result.step_flags = result.step_flags || head.formats.has_value();
  }
  for (std::size_t t = 0; t < n_tokens; ++t) {
    if (!all_finite(x[t]))
      tracker.note(t, 0, 0, make_nf("embedding", std::nullopt, result.positions[t], std::nullopt));
  }
  tracker.end_stage_group();

  const bool strict = model.options.masking == Masking::strict;
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const Layer& layer = model.layers[l];
    std::vector<PositionTrace> traces;
    std::vector<std::size_t> trace_index(n_tokens, SIZE_MAX);
    for (std::size_t t = 0; t < n_tokens; ++t) {
      if (traced[t]) {
        trace_index[t] = traces.size();
        PositionTrace pt;
        pt.position = result.positions[t];
        pt.token = result.tokens[t];
        pt.input = x[t];
        traces.push_back(std::move(pt));
      }
    }
    std::vector<std::vector<Value>> h = x;
    if (!layer.heads.empty()) {
      std::vector<std::vector<Value>> in(n_tokens);
      for (std::size_t t = 0; t < n_tokens; ++t) in[t] = attention_input(model, layer, x[t]);
      // Head outputs per token, concatenated over heads.
      std::vector<std::vector<Value>> concat(n_tokens);
      for (std::size_t hi = 0; hi < layer.heads.size(); ++hi) {
        const AttentionHead& head = layer.heads[hi];
        const HeadRotations rot = realise_head(head, n_positions, policy);
        std::vector<std::vector<Value>> q(n_tokens), k(n_tokens), v(n_tokens);
        for (std::size_t t = 0; t < n_tokens; ++t) {
          q[t] = head_query(head, rot, result.positions[t], in[t], policy);
          k[t] = head_key(head, rot, result.positions[t], in[t], policy);
          v[t] = head_value(head, in[t], policy);
          if (head.formats) {  // 1. the stores of the mixed-format head (head_formats.hpp)
            const HeadFormats& hf = *head.formats;
            numeric::Flags fq, fk, fv;
            q[t] = store_tensor(q[t], hf.query_format(policy), hf.query.scale, policy, fq);
            k[t] = store_tensor(k[t], hf.key_format(policy), hf.key.scale, policy, fk);
            v[t] = store_tensor(v[t], hf.value_format(policy), hf.value.scale, policy, fv);
            steps.note(l, hi, t, result.positions[t], 0, "query store",
                       hf.query_format(policy).name, fq);
            steps.note(l, hi, t, result.positions[t], 1, "key store", hf.key_format(policy).name,
                       fk);
            steps.note(l, hi, t, result.positions[t], 2, "value store",
                       hf.value_format(policy).name, fv);
          }
        }
        for (std::size_t t = 0; t < n_tokens; ++t) {
          const std::size_t visible = strict ? t : t + 1;
          HeadStep step;
          std::size_t included = visible;
          if (head.formats) {
            // With an additive mask every key stays in the softmax (the masked ones shifted by it).
            included = head.formats->mask ? n_tokens : visible;
            MixedHeadStep mixed = mixed_head_step(
                head, *head.formats, q[t], std::span<const std::vector<Value>>(k.data(), included),
                std::span<const std::vector<Value>>(v.data(), included), visible, policy,
                model.options.softmax);
            for (std::size_t s = 0; s < mixed.steps.size(); ++s) {
              steps.note(l, hi, t, result.positions[t], 3 + s, mixed.steps[s].step,
                         mixed.steps[s].format, mixed.steps[s].flags);
            }
            step.scores = std::move(mixed.scores);
            step.attention.weights = std::move(mixed.weights);
            step.attention.output = std::move(mixed.output);
          } else {
            step = head_step(head, q[t], std::span<const std::vector<Value>>(k.data(), visible),
                             std::span<const std::vector<Value>>(v.data(), visible), policy,
                             model.options.softmax);
          }
          std::vector<Value>& scores = step.scores;
          const AttentionOutput& a = step.attention;
          // the masked scores of a mixed-format head are -inf by design: only the visible ones
          // count
          const std::span<const Value> checked(scores.data(), std::min(scores.size(), visible));
          if (!std::all_of(checked.begin(), checked.end(),
                           [](const Value& x) { return x.is_finite(); })) {
            tracker.note(t, 1, hi, make_nf("scores", l, result.positions[t], hi));
          }
          if (!all_finite(a.weights))
            tracker.note(t, 2, hi, make_nf("weights", l, result.positions[t], hi));
          if (!all_finite(a.output))
            tracker.note(t, 3, hi, make_nf("head output", l, result.positions[t], hi));
          concat[t].insert(concat[t].end(), a.output.begin(), a.output.end());
          if (trace_index[t] != SIZE_MAX) {
            HeadTrace ht;
            ht.name = head.name;
            ht.query = q[t];
            for (std::size_t u = 0; u < included; ++u) ht.keys.push_back(result.positions[u]);
            ht.scores = std::move(scores);
            ht.weights = a.weights;
            ht.output = a.output;
            traces[trace_index[t]].heads.push_back(std::move(ht));
          }
        }
      }
      // Attention sublayer output: one sum per coordinate over all heads' output matrices.
      const Matrix out = stacked_output_matrix(layer, model.d_model);
      for (std::size_t t = 0; t < n_tokens; ++t) {
        SublayerStep step = attention_sublayer(model, layer, out, x[t], concat[t]);
        const std::vector<Value>& a = step.sublayer;
        std::vector<Value>& sum_v = step.residual;
        if (!all_finite(a))
          tracker.note(t, 4, 0, make_nf("attention", l, result.positions[t], std::nullopt));
        if (!all_finite(sum_v))
          tracker.note(t, 5, 0, make_nf("after attention", l, result.positions[t], std::nullopt));
        if (trace_index[t] != SIZE_MAX) {
          traces[trace_index[t]].attention = a;
          traces[trace_index[t]].after_attention = sum_v;
        }
        h[t] = std::move(sum_v);
      }
    } else {
      for (std::size_t t = 0; t < n_tokens; ++t) {
        if (trace_index[t] != SIZE_MAX) traces[trace_index[t]].after_attention = h[t];
      }
    }
    std::vector<std::vector<Value>> next = h;
    if (layer.ffn) {
      for (std::size_t t = 0; t < n_tokens; ++t) {
        SublayerStep step = ffn_sublayer(model, layer, h[t]);
        const std::vector<Value>& y = step.sublayer;
        std::vector<Value>& o = step.residual;
        if (!all_finite(y))
          tracker.note(t, 6, 0, make_nf("ffn", l, result.positions[t], std::nullopt));
        if (trace_index[t] != SIZE_MAX) traces[trace_index[t]].ffn = y;
        next[t] = std::move(o);
      }
    }
    for (std::size_t t = 0; t < n_tokens; ++t) {
      if (!all_finite(next[t]))
        tracker.note(t, 7, 0, make_nf("output", l, result.positions[t], std::nullopt));
      if (trace_index[t] != SIZE_MAX) traces[trace_index[t]].output = next[t];
    }
    tracker.end_stage_group();
    x = std::move(next);
    result.layers.push_back(std::move(traces));
  }
  result.readout = readout(model, x.back());
  if (!all_finite(result.readout)) {
    tracker.note(0, 0, 0, make_nf("readout", std::nullopt, result.eos_position, std::nullopt));
  }
  tracker.end_stage_group();
  result.output = classifier_output(model, result.readout);
  if (!result.output.is_finite()) {
    tracker.note(0, 0, 0, make_nf("classifier", std::nullopt, std::nullopt, std::nullopt));
  }
  tracker.end_stage_group();
  result.first_non_finite = tracker.first;
  result.first_overflow = steps.first_overflow;
  result.first_invalid = steps.first_invalid;
  result.accept = accepts_output(result.output);
  return result;
}

}  // namespace ropesim::attention
