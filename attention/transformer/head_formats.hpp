#pragma once
/// Per-tensor formats of one attention head: mixed-format attention as real kernels compute it
/// (Q, K, V stored in bf16 or fp8 with per-tensor scale factors, scores accumulated in fp32 or
/// by a narrow/promoted accumulator, softmax in fp32, the weighted sum of values accumulated
/// and stored back; an additive mask). The model spec's `heads[k].formats` block
/// (docs/MODEL_SPEC.md, "Mixed-format heads"); the computation is
/// attention/transformer/mixed_attention.hpp.
///
/// Every field is optional and keeps what the spec said, so that saving writes back exactly
/// the fields given; the *_format(policy) accessors fill in the defaults.
#include <optional>

#include "numeric/accumulator.hpp"
#include "numeric/format.hpp"
#include "numeric/summation.hpp"
#include "numeric/value.hpp"

namespace ropesim::attention {

/// The storage of one projected tensor (q, k or v of a head). With a scale s (fp8 style,
/// per tensor): x_stored = rnd_X(x / s), the exact quotient rounded once into X; the stored
/// value stands for x ≈ x_stored · s, and the scale is applied once to the accumulated result
/// (see HeadFormats). Without a scale: x_stored = rnd_X(x).
struct TensorFormat {
  std::optional<numeric::Format> format;  ///< X; default F (the policy's format)
  /// s > 0 and finite, an element of fp32 (frameworks keep per-tensor scales in fp32).
  std::optional<numeric::Value> scale;
};

/// The formats of every step of one head (THEORY §2 soft attention, each step rounded into the
/// format named here instead of F; rounding direction: the policy's, except inside the
/// accumulator models, which carry their own). With q, k, v the head's projected (and rotated)
/// vectors in F:
///
///  1. store      q̃ = rnd_Q(q / s_q), k̃ = rnd_K(k / s_k), ṽ = rnd_V(v / s_v) (TensorFormat);
///  2. scores     a = accumulate_dot(q̃, k̃, score_accumulator) (numeric/accumulator.hpp),
///                S = rnd_S(a); with scales S = rnd_S(S · rnd_S(s_q · s_k)) (a missing scale
///                is 1); with the head's `scale` S = rnd_S(S · scale) (as without formats);
///  3. mask       keys the causal masking hides get S = rnd_S(S + mask) and stay in the softmax
///                (every query then sees every position, as a framework's full score matrix
///                with an additive mask does); without a mask they are left out (THEORY §2);
///  4. softmax    in Σ: s_j = rnd_Σ(S_j); stable: M = max s, e_j = rnd_Σ(exp(rnd_Σ(s_j − M)));
///                no-max-subtraction: e_j = rnd_Σ(exp(s_j)); Z = sequential sum of e in Σ;
///                α_j = rnd_Σ(e_j / Z);
///  5. probabilities  α̃_j = rnd_P(α_j) when `probabilities` is given (FlashAttention casts P to
///                the value dtype before the P·V product), else α̃ = α;
///  6. values     o_d = accumulate_dot(α̃, ṽ_{·,d}, value_accumulator); with s_v:
///                o_d = rnd_W(o_d · s_v) in the accumulator's result format W;
///  7. output     o_d = rnd_F(rnd_O(o_d)): stored into O, then into F for the output matrix.
///
/// Defaults: Q = K = V = O = F; S = F; score_accumulator = S with the policy's rounding, no
/// promotion; Σ = S; value_accumulator = Σ with the policy's rounding, no promotion; no scales,
/// no mask, no probabilities cast. So an empty block under sequential summation computes what a
/// head without the block computes (tested bit for bit).
struct HeadFormats {
  TensorFormat query, key, value;
  std::optional<numeric::Format> scores;                       ///< S
  std::optional<numeric::AccumulatorModel> score_accumulator;  ///< the q·k accumulation
  std::optional<numeric::Value> mask;                          ///< additive mask, element of S
  std::optional<numeric::Format> softmax;                      ///< Σ
  std::optional<numeric::Format> probabilities;                ///< P
  std::optional<numeric::AccumulatorModel> value_accumulator;  ///< the α·v accumulation
  std::optional<numeric::Format> output;                       ///< O

  const numeric::Format& query_format(const numeric::EvaluationPolicy& p) const {
    return query.format ? *query.format : p.format;
  }
  const numeric::Format& key_format(const numeric::EvaluationPolicy& p) const {
    return key.format ? *key.format : p.format;
  }
  const numeric::Format& value_format(const numeric::EvaluationPolicy& p) const {
    return value.format ? *value.format : p.format;
  }
  const numeric::Format& scores_format(const numeric::EvaluationPolicy& p) const {
    return scores ? *scores : p.format;
  }
  const numeric::Format& softmax_format(const numeric::EvaluationPolicy& p) const {
    return softmax ? *softmax : scores_format(p);
  }
  const numeric::Format& output_format(const numeric::EvaluationPolicy& p) const {
    return output ? *output : p.format;
  }
  numeric::AccumulatorModel score_accumulator_model(const numeric::EvaluationPolicy& p) const;
  numeric::AccumulatorModel value_accumulator_model(const numeric::EvaluationPolicy& p) const;
};

}  // namespace ropesim::attention
