#pragma once
/// The F-transformer (THEORY §2, §2.1): embedding, attention heads with RoPE, scores, causal
/// masking, softmax (stable and the variants users meet), value aggregation, FFN with ReLU,
/// residuals, optional LayerNorm, several heads and layers, BOS and the EOS readout, and a
/// linear classifier — every arithmetic step rounded into a finite format F under an
/// EvaluationPolicy.
///
/// Positions (0-based, as everywhere in ropesim):
///   with BOS (default, RoPE-X):  BOS at 0, the word w_1..w_N at 1..N, EOS at N+1.
///   without BOS (LC25's `w EOS`): no token at 0, w_1..w_N at 1..N, EOS at N+1.
/// The rotation applied at a token is R̂_p for its position p, so the two conventions give the
/// same rotations to the same symbols. Strict causal masking (default): the query at p sees the
/// keys at positions q < p; non-strict: q ≤ p. A query that sees no key (BOS under strict
/// masking; w_1 under strict masking without BOS) gets the zero vector as attention output,
/// never 0/0 = NaN (THEORY §2).
///
/// Running a model on a word (run, RunResult and its JSON) is in attention/transformer/run.hpp,
/// which sits above this header and the mixed-format heads (mixed_attention.hpp) it dispatches to.
/// The definitions live one concept per file: transformer.cpp (enum spellings, Matrix),
/// softmax.cpp, head.cpp, layer.cpp, model_validation.cpp, tokenize.cpp, model_shape.cpp.
///
/// Nothing here prints; the CLI (`ropesim run`) prints.
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "attention/transformer/head_formats.hpp"
#include "core/budget.hpp"
#include "numeric/binary64_rounding.hpp"
#include "numeric/engine.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/summation.hpp"
#include "numeric/value.hpp"

namespace ropesim::attention {

// ---------------------------------------------------------------------------------------------
// Evaluation policy and arithmetic (THEORY §2.1): owned by numeric (numeric/summation.hpp,
// numeric/arithmetic.hpp); the names are used here unqualified.
// ---------------------------------------------------------------------------------------------

using numeric::affine;
using numeric::Arithmetic;
using numeric::dot;
using numeric::EvaluationPolicy;
using numeric::exact_decimal;
using numeric::exact_rational;
using numeric::parse_summation;
using numeric::sum;
using numeric::Summation;
using numeric::to_string;

/// A dense row-major matrix of values of F: rows × cols.
struct Matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<Value> entries;  ///< row-major, size rows·cols

  /// The all-(+0) matrix. Throws InvalidArgument if rows·cols exceeds what a vector can hold
  /// (std::bad_alloc if memory runs out).
  static Matrix zeros(std::size_t rows, std::size_t cols);
  /// Row r (r < rows).
  std::span<const Value> row(std::size_t r) const;
  const Value& at(std::size_t r, std::size_t c) const { return entries[r * cols + c]; }
  Value& at(std::size_t r, std::size_t c) { return entries[r * cols + c]; }
};

/// y = W x + b, y[r] = affine(W.row(r), x, b[r]) (b empty means no bias: y[r] = dot(W.row(r),
/// x)). Shapes: W rows × cols, x cols, b rows or empty; result rows.
/// Throws InvalidArgument on a shape mismatch.
std::vector<Value> matvec(const Matrix& w, std::span<const Value> x, std::span<const Value> b,
                          const EvaluationPolicy& policy);

// ---------------------------------------------------------------------------------------------
// Softmax (THEORY §2; RoPE-X eq. 2)
// ---------------------------------------------------------------------------------------------

/// The softmax recipes a user meets.
enum class SoftmaxVariant {
  /// Stable softmax [RoPE-X eq. 2; THEORY §2]: M = max_j S_j; e_j = rnd(exp(rnd(S_j - M)));
  /// Z = sum(e) under the policy; α_j = rnd(e_j / Z). Keys tied at the max each get
  /// exp(0) = 1; a lead of ≥ f_large(F) gives the others e_j = 0.
  stable,
  /// No max subtraction: e_j = rnd(exp(S_j)); Z = sum(e); α_j = rnd(e_j / Z). In fp16 a score
  /// of 12 overflows (e^12 ≈ 162755 > 65504): e = inf, Z = inf, α = inf/inf = NaN
  /// (transformers #17437, pytorch #60939; NUMERIC §4).
  no_max_subtraction,
  /// Online / flash-style running max (FlashAttention, one key per step), kept in the
  /// running format R (policy.running_format()): m_0 = -inf, l_0 = 0; for each key in order
  /// m_j = max(m_{j-1}, S_j), c_j = rnd(exp(rnd(m_{j-1} - m_j))),
  /// p_j = rnd(exp(rnd(S_j - m_j))), l_j = rnd(rnd(l_{j-1}·c_j) + p_j); then
  /// α_j = rnd_F(rnd_R(rnd(exp(rnd(S_j - m_n))) / l_n)). In the attention head the output is
  /// accumulated the same way, o_j = rnd(rnd(o_{j-1}·c_j) + rnd(p_j·v_j)), and divided by
  /// l_n at the end (rounded in R, then stored into F). Only sequential and
  /// wide_accumulator summation apply (the running sum is sequential by nature).
  online,
};
/// "stable", "no-max-subtraction", "online".
std::string_view to_string(SoftmaxVariant variant);
/// Parses the spellings of to_string (also "no_max_subtraction", "no-max", "flash").
/// Throws InvalidArgument listing the accepted spellings.
SoftmaxVariant parse_softmax_variant(std::string_view text);

/// The attention weights α_j for one query from its visible scores (elements of F), with
/// every step rounded into F (see SoftmaxVariant). NaN scores propagate (the max is NaN).
/// An empty score list gives an empty result (the caller defines the output as zero).
/// Throws InvalidArgument for `online` with pairwise or exact summation.
/// Source: THEORY §2, RoPE-X eq. 2.
std::vector<Value> softmax(std::span<const Value> scores, const EvaluationPolicy& policy,
                           SoftmaxVariant variant = SoftmaxVariant::stable);
/// softmax(scores, policy, SoftmaxVariant::stable).
std::vector<Value> stable_softmax(std::span<const Value> scores, const EvaluationPolicy& policy);

// ---------------------------------------------------------------------------------------------
// Model components
// ---------------------------------------------------------------------------------------------

/// A contiguous run of a head's coordinates with one RoPE schedule: the schedule's rotary
/// blocks (each with its own realisation, or none = identity) then its unrotated pairs.
/// Coordinates of the segment: 2·schedule.blocks.size() rotary ones first, then
/// 2·schedule.unrotated_pairs unrotated ones (the Schedule convention). Within the rotary
/// part, `layout` pairs them (adjacent: (2d, 2d+1); rotate_half: (d, d + R/2)).
struct RotarySegment {
  Schedule schedule;
  /// One entry per schedule block: the realisation of that block, or nullopt for an
  /// unrotated block (identity). The realisation's format is F (r1-r3) or the activation
  /// format A = F (pipelines); its rounding is the policy's.
  std::vector<std::optional<Realisation>> realisations;
  PairLayout layout = PairLayout::adjacent;

  /// 2·(blocks + unrotated pairs).
  std::size_t dimension() const { return schedule.dimension(); }
};

/// A schedule with no rotary block and `pairs` unrotated pairs (spec "unrotated:pairs=N").
Schedule unrotated_schedule(std::size_t pairs);

/// One attention head (THEORY §2, §3): q_p = R̂_p(Q x_p + b_q), k_p = R̂_p(K x_p + b_k),
/// v_p = V x_p + b_v, score S_{p,q} = q_p · k_q (times `scale` when set: one more rounding),
/// output o_p = Σ_q α_{p,q} v_q over the visible keys, projected by `output` into the model
/// dimension by the layer. Shapes: query, key head_dim × d_model; value value_dim × d_model;
/// output d_model × value_dim; biases head_dim / value_dim (empty = no bias).
/// `rotary` segments cover the head_dim coordinates in order (empty = NoPE: no rotation).
struct AttentionHead {
  std::string name;  ///< for traces; may be empty
  std::size_t head_dim = 0;
  std::size_t value_dim = 0;
  Matrix query, key, value, output;
  std::vector<Value> query_bias, key_bias, value_bias;
  std::vector<RotarySegment> rotary;
  /// Score scale (e.g. round_F(1/sqrt(head_dim))); unset = folded into the weights (THEORY §2.1).
  std::optional<Value> scale;
  /// Per-tensor formats (mixed-format attention, attention/transformer/head_formats.hpp); unset =
  /// every step in F under the policy, exactly as before. run() evaluates a head with formats by
  /// attention/transformer/mixed_attention.hpp and reports which step raised overflow or invalid.
  std::optional<HeadFormats> formats;
};

/// FFN(h) = W2·ReLU(W1·h + b1) + b2 (THEORY §2). Shapes: w1 hidden × d_model, b1 hidden,
/// w2 d_model × hidden, b2 d_model (biases may be empty = none).
struct FeedForward {
  Matrix w1;
  std::vector<Value> b1;
  Matrix w2;
  std::vector<Value> b2;
};

/// LayerNorm with gain γ, bias β, and ε (all in F): μ = rnd(sum(x)/d̂), σ² = rnd(sum(rnd(
/// rnd(x_k - μ)²))/d̂), σ = rnd(√rnd(σ² + ε)), y_k = rnd(rnd(rnd(rnd(x_k - μ)/σ)·γ_k) + β_k),
/// with d̂ = round_F(d) and the sums under the policy. Empty gain = all 1, empty bias = all 0.
struct LayerNormParams {
  std::vector<Value> gain;
  std::vector<Value> bias;
  Value epsilon;
};

/// Where a layer's LayerNorms sit (THEORY §2): post-LN (LC25, default): H' = LN1(A(H) + H),
/// out = LN2(FFN(H') + H'); pre-LN: H' = H + A(LN1(H)), out = H' + FFN(LN2(H')). A norm is
/// applied only where the layer has its parameters.
enum class NormPlacement { post, pre };
std::string_view to_string(NormPlacement placement);
/// "post" / "pre". Throws InvalidArgument.
NormPlacement parse_norm_placement(std::string_view text);

/// One layer: attention sublayer (all heads, their outputs summed through their output
/// matrices plus `attention_bias`, then the residual) and FFN sublayer (with residual).
/// A layer with no heads has no attention sublayer; without `ffn` no FFN sublayer.
struct Layer {
  std::vector<AttentionHead> heads;
  std::vector<Value> attention_bias;  ///< d_model or empty
  std::optional<FeedForward> ffn;
  std::optional<LayerNormParams> attention_norm;  ///< LN1
  std::optional<LayerNormParams> ffn_norm;        ///< LN2
};

/// Causal masking (THEORY §2): strict (default) sees keys q < p, non-strict q ≤ p.
enum class Masking { strict, non_strict };
std::string_view to_string(Masking masking);
/// "strict" / "non-strict" (also "non_strict"). Throws InvalidArgument.
Masking parse_masking(std::string_view text);

/// Token embeddings: one vector of length d_model per alphabet symbol, and BOS/EOS vectors
/// (bos is unused and may be empty when the model has no BOS).
struct Embedding {
  std::vector<std::string> alphabet;
  std::vector<std::vector<Value>> symbols;  ///< symbols[k] embeds alphabet[k]
  std::vector<Value> bos;
  std::vector<Value> eos;
};

/// The linear classifier on the EOS representation: y = affine(weights, x_EOS, bias);
/// accept iff y > 0 (NaN rejects) (THEORY §2).
struct Classifier {
  std::vector<Value> weights;
  Value bias;
};

/// Architecture switches of a model (THEORY §2).
struct ModelOptions {
  bool bos = true;  ///< false: LC25's `w EOS` convention (see the file comment)
  Masking masking = Masking::strict;
  SoftmaxVariant softmax = SoftmaxVariant::stable;
  NormPlacement norm_placement = NormPlacement::post;
};

/// A complete F-transformer. Every Value is an element of policy.format.
struct Model {
  std::string name;
  std::string description;
  EvaluationPolicy policy;
  ModelOptions options;
  std::size_t d_model = 0;
  Embedding embedding;
  std::vector<Layer> layers;
  std::optional<LayerNormParams> final_norm;  ///< applied to the residual stream at the end
  Classifier classifier;
  /// Optional names of the residual coordinates (empty, or d_model distinct non-empty names),
  /// e.g. `bos`, `top`, `f3:P(a & !P true)` from the compiler (proofs/compiler/compiler.hpp);
  /// traces print coordinates by these names.
  std::vector<std::string> coordinates;
  /// The certified length recorded by the construction that wrote the spec (its
  /// "_construction" report: `certified_length` from `compile`, `n_max` from `construct
  /// offset`; THEORY §6): every input of at most this many symbols is certified exact. Not
  /// set when the file records none (periodic constructions are exact at every length) or
  /// when the format or rounding was overridden at load time (the certificate was for F).
  /// Runners warn past it; nothing else reads it.
  std::optional<std::uint64_t> certified_length;

  /// Checks every shape, realisation applicability (r3 needs rational blocks) and option
  /// combination. Throws InvalidArgument with one line naming the path, e.g.
  /// "layers[0].heads[1].query: expected 2 x 4, got 2 x 3".
  void validate() const;
};

// ---------------------------------------------------------------------------------------------
// Heads and rotations (reusable by proofs/: realised scores Ŝ_{i,j} under the policy)
// ---------------------------------------------------------------------------------------------

/// The realised rotations of one head at positions [0, positions): per rotary block (in
/// head order over the segments) the realised (cos, sin) pair at every position.
struct HeadRotations {
  std::uint64_t positions = 0;
  /// blocks[b][p]: rotary block b (head order over all segments) at position p; empty for
  /// blocks whose realisation is none (identity).
  std::vector<std::vector<RealisedPair>> blocks;
};

/// Realises every rotary block of `head` at positions [0, positions) with
/// realise_block (THEORY §3), one block at a time (a block's realisation need only apply to
/// that block, so r3 may sit next to irrational blocks). The rotations are the realisations'
/// own: each carries its format, rounding and engine, so `policy` is not read (it keeps the
/// signature of the other head functions). Throws InvalidArgument if a realisation does not
/// apply to its block.
HeadRotations realise_head(const AttentionHead& head, std::uint64_t positions,
                           const EvaluationPolicy& policy);

/// R̂_p x for a head vector x (length head_dim, elements of F) at position p < rotations
/// .positions. Each realised pair is applied with the realisation's arithmetic: r1-r3 use
/// THEORY §2.1, (rnd(rnd(c·x0) - rnd(s·x1)), rnd(rnd(s·x0) + rnd(c·x1))) in F; pipelines use
/// their rotation format/arithmetic (NUMERIC §3) and store into F. Unrotated coordinates are
/// copied. Throws InvalidArgument on a length or position mismatch.
std::vector<Value> rotate(const AttentionHead& head, const HeadRotations& rotations,
                          std::uint64_t position, std::span<const Value> x,
                          const EvaluationPolicy& policy);

/// q_p = R̂_p(Q x + b_q) (length head_dim).
std::vector<Value> head_query(const AttentionHead& head, const HeadRotations& rotations,
                              std::uint64_t position, std::span<const Value> x,
                              const EvaluationPolicy& policy);
/// k_p = R̂_p(K x + b_k) (length head_dim).
std::vector<Value> head_key(const AttentionHead& head, const HeadRotations& rotations,
                            std::uint64_t position, std::span<const Value> x,
                            const EvaluationPolicy& policy);
/// v_p = V x + b_v (length value_dim).
std::vector<Value> head_value(const AttentionHead& head, std::span<const Value> x,
                              const EvaluationPolicy& policy);
/// Ŝ = dot(q, k) under the policy, times head.scale when set (one more rounding).
Value head_score(const AttentionHead& head, std::span<const Value> q, std::span<const Value> k,
                 const EvaluationPolicy& policy);

/// One query's attention: weights over `scores` (visible keys, in key order) and the output
/// Σ_j α_j v_j per value coordinate (dot under the policy), or the online recurrence for
/// SoftmaxVariant::online. No visible key → empty weights and the zero vector of length
/// `value_dim` (THEORY §2). values[j] has length value_dim.
struct AttentionOutput {
  std::vector<Value> weights;
  std::vector<Value> output;
};
AttentionOutput attend(std::span<const Value> scores, std::span<const std::vector<Value>> values,
                       std::size_t value_dim, const EvaluationPolicy& policy,
                       SoftmaxVariant variant);

/// FFN(x) (THEORY §2).
std::vector<Value> feed_forward(const FeedForward& ffn, std::span<const Value> x,
                                const EvaluationPolicy& policy);
/// LayerNorm(x) (see LayerNormParams).
std::vector<Value> layer_norm(const LayerNormParams& params, std::span<const Value> x,
                              const EvaluationPolicy& policy);

// ---------------------------------------------------------------------------------------------
// One token through one layer (THEORY §2): the steps run() applies at every position, shared
// with the prefix oracle (attention/transformer/prefix_oracle.hpp) so that both round identically.
// ---------------------------------------------------------------------------------------------

/// One query of one head: the scores Ŝ against the visible keys (head_score, in key order)
/// and attend() over them. keys[j] has length head_dim, values[j] value_dim; keys and values
/// have the same length (the visible keys). Throws InvalidArgument on a length mismatch.
struct HeadStep {
  std::vector<Value> scores;
  AttentionOutput attention;
};
HeadStep head_step(const AttentionHead& head, std::span<const Value> query,
                   std::span<const std::vector<Value>> keys,
                   std::span<const std::vector<Value>> values, const EvaluationPolicy& policy,
                   SoftmaxVariant variant);

/// The attention sublayer's input at one token: LN1(x) under pre-LN when the layer has LN1,
/// else x (THEORY §2).
std::vector<Value> attention_input(const Model& model, const Layer& layer,
                                   std::span<const Value> x);

/// The layer's heads' output matrices side by side: d_model × Σ value_dim (head order).
Matrix stacked_output_matrix(const Layer& layer, std::size_t d_model);

/// A sublayer at one token: its output before the residual, and the residual stream after it
/// (post-LN: normalised by the sublayer's LayerNorm when the layer has it).
struct SublayerStep {
  std::vector<Value> sublayer;
  std::vector<Value> residual;
};
/// The attention sublayer at one token from the heads' outputs concatenated (head order):
/// a = stacked·concat + attention_bias; residual = x + a, then LN1 under post-LN.
/// `stacked` is stacked_output_matrix(layer, model.d_model).
SublayerStep attention_sublayer(const Model& model, const Layer& layer, const Matrix& stacked,
                                std::span<const Value> x, std::span<const Value> concat);
/// The FFN sublayer at one token (layer.ffn must be set): y = FFN(h) (of LN2(h) under pre-LN);
/// residual = h + y, then LN2 under post-LN.
SublayerStep ffn_sublayer(const Model& model, const Layer& layer, std::span<const Value> h);

/// The EOS representation fed to the classifier: final_norm(x) when the model has one, else x.
std::vector<Value> readout(const Model& model, std::span<const Value> x_eos);
/// The classifier value y = affine(weights, readout, bias) (THEORY §2).
Value classifier_output(const Model& model, std::span<const Value> readout);
/// y > 0 (NaN rejects).
bool accepts_output(const Value& y);

// ---------------------------------------------------------------------------------------------
// Running a model
// ---------------------------------------------------------------------------------------------

/// Splits WORD into alphabet symbols: on whitespace if it contains any, else character by
/// character (UTF-8 bytes; single-character symbols). Throws InvalidArgument naming the first
/// symbol not in the alphabet and listing the alphabet.
std::vector<std::string> tokenize(const Model& model, std::string_view word);

/// The shape of a model as far as its size goes: sums over all layers and heads, as doubles so
/// that the shape of a model too large to build (an estimate) can be held without overflow.
struct ModelShape {
  double d_model = 0;
  double symbols = 0;  ///< alphabet size
  double layers = 0;
  double ffn_layers = 0;  ///< layers with a feed-forward sublayer
  double heads = 0;       ///< attention heads over all layers
  double head_dims = 0;   ///< sum of head_dim over every head of every layer
  double value_dims = 0;  ///< sum of value_dim over every head of every layer
  double hidden = 0;      ///< sum of ffn.hidden over every layer
};

/// The shape of a built model.
ModelShape shape_of(const Model& model);

/// The work of run(model, w) for a word of `symbols` symbols, in multiply-adds: per layer,
/// every head scores each query against its visible keys ((N+2)²/2 · head_dim) and mixes the
/// values, plus the projections and the FFN at every position. The rate is the one measured
/// for the reference path on this project's 2-core reference machine (an estimate for
/// check_budget, not a promise).
WorkEstimate run_work(const Model& model, std::uint64_t symbols);

/// run_work for a model of this shape (the same estimate, from the sums alone), so that the
/// work of a model too large to build can be estimated without building it.
WorkEstimate run_work(const ModelShape& shape, std::uint64_t symbols);

}  // namespace ropesim::attention
