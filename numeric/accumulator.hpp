#pragma once
/// Accumulator models of a dot product Σ_k a_k·b_k, as GEMM hardware computes it (THEORY §2.1
/// lists the alternatives to the canonical sequential sum; NUMERIC §4, "the fp8 accumulator lost
/// the needle"): products and partial sums rounded into an accumulator format A with its own
/// rounding direction (toward-zero models a truncating accumulator), optionally promoted into a
/// wider format W every K products.
///
/// These models sit beside EvaluationPolicy's summation policies (numeric/summation.hpp), which
/// are unchanged; the mixed-format attention heads (attention/transformer/mixed_attention.hpp) use
/// them for the q·k and the weighted-value accumulations.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "numeric/engine.hpp"
#include "numeric/flags.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"

namespace ropesim::numeric {

/// Promotion of a narrow accumulator (DeepSeek-V3 Technical Report, arXiv:2412.19437, §3.3.2
/// "Increasing Accumulation Precision": the tensor core accumulates N_C = 128 products with its
/// limited bit width, then the partial result is copied to an FP32 register on the CUDA cores
/// and added there in full FP32 precision; the tensor-core accumulator starts again from zero).
struct Promotion {
  /// K ≥ 1: the number of products accumulated in A before each promotion.
  std::size_t interval = 128;
  /// W: the format the promoted partial sums are added in.
  Format format = Format::fp32();
  /// The rounding of W's additions (and of the conversion A → W, exact when A ⊆ W).
  Rounding rounding = Rounding::nearest_even;
};

/// An accumulator model for Σ_{k<n} a_k·b_k. Exactly where each rounding happens:
///
///   products   p_k = rnd_A(a_k · b_k): the exact product rounded once into A with `rounding`
///              (a fused multiplier: the inputs are not first converted into A; when they are
///              elements of A this is rnd_A(a_k ⊗ b_k), the same as Arithmetic(A).mul);
///   narrow     (no promotion) s_0 = p_0, s_k = rnd_A(s_{k-1} + p_k), left to right;
///              the result is s_{n-1}, an element of A;
///   promoted   (promotion with interval K into W) the products are cut into chunks
///              [cK, min((c+1)K, n)); chunk c is accumulated in A as above, starting afresh
///              from its first product: t_c = rnd_A(…rnd_A(p_{cK} + p_{cK+1})…); then
///              T_0 = rnd_W(t_0), T_c = rnd_W(T_{c-1} + rnd_W(t_c)) with W's rounding; the
///              result is T_last, an element of W.
///
/// An empty sum is +0. IEEE special values propagate as in A and W (∞ − ∞ = NaN, 0·∞ = NaN;
/// saturating formats clamp). Formats: any floating or fixed-point format (A = fp16 with
/// rounding toward-zero is a truncating fp16 accumulator; A = `p=11,e=8` has 11 significant
/// bits and fp32's exponent range).
struct AccumulatorModel {
  Format format = Format::fp32();              ///< A
  Rounding rounding = Rounding::nearest_even;  ///< A's rounding (toward-zero: truncating)
  std::optional<Promotion> promotion;          ///< none: narrow accumulation in A

  /// The format the result lies in: W with promotion, else A.
  const Format& result_format() const { return promotion ? promotion->format : format; }
};

/// "A" (round-to-nearest-even, no promotion), "A@MODE", "A/K>W" or "A@MODE/K>W@MODE2",
/// e.g. "p=11,e=8@toward-zero/128>fp32". parse_accumulator_model reads it back.
std::string to_string(const AccumulatorModel& model);

/// Parses the spelling of to_string: a format (numeric::parse_format), optionally `@ROUNDING`
/// (numeric::parse_rounding), optionally `/K>W[@ROUNDING]` with an integer K ≥ 1. Throws
/// ropesim::InvalidArgument naming the bad part and the accepted form.
AccumulatorModel parse_accumulator_model(std::string_view text);

/// Σ_{k<n} a[k]·b[k] under `model` (see AccumulatorModel for every rounding). a and b are
/// values of any formats (elements of the formats that produced them). When `flags` is given,
/// the IEEE exceptions of every rounding are raised into it (overflow when a product or a
/// partial sum overflows A or W; invalid for ∞ − ∞ or 0·∞). The result is an element of
/// model.result_format(). Throws InvalidArgument if the lengths differ or the interval is 0.
Value accumulate_dot(std::span<const Value> a, std::span<const Value> b,
                     const AccumulatorModel& model, const Engine& engine = default_engine(),
                     Flags* flags = nullptr);

}  // namespace ropesim::numeric
