#pragma once
/// Sums and dot products under a summation policy, and the evaluation policy of a run
/// (THEORY §2.1): which format F, rounding direction, summation order, accumulator format A and
/// engine every arithmetic step of the F-transformer uses.
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "numeric/arithmetic.hpp"
#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/format_binding.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"

namespace ropesim::numeric {

/// How a sum of several terms (dot products, matrix-vector rows, softmax denominators, value
/// aggregation, LayerNorm moments) is evaluated (THEORY §2.1).
enum class Summation {
  /// Left to right, each product rounded into F, each partial sum rounded into F (default).
  sequential,
  /// Each product rounded into F; then a balanced binary tree: sum(t[0..n)) =
  /// sum(t[0..floor(n/2))) + sum(t[floor(n/2)..n)), every addition rounded into F.
  pairwise,
  /// Terms converted into the accumulator format A (exact when A ⊇ F), each product rounded
  /// into A, sequential partial sums rounded into A, the result rounded once into F
  /// (e.g. fp32 accumulate for bf16 storage).
  wide_accumulator,
  /// Every product and the whole sum exact (rational arithmetic), then one rounding into F.
  exact,
};
/// "sequential", "pairwise", "wide-accumulator", "exact".
std::string_view to_string(Summation summation);
/// Parses the spellings of to_string (also "wide_accumulator", "wide"). Throws
/// ropesim::InvalidArgument listing the accepted spellings.
Summation parse_summation(std::string_view text);

/// The numeric choices of a run (THEORY §2.1): F, the rounding direction of every operation and
/// the engine (the FormatBinding base: format, rounding, engine, arithmetic_engine(),
/// arithmetic()), the summation policy and the accumulator format A (used by
/// Summation::wide_accumulator and by the online softmax's running sums). The canonical default
/// is fp32, round-to-nearest-even, sequential sums.
struct EvaluationPolicy : FormatBinding {
  Summation summation = Summation::sequential;
  /// A; used only when summation == wide_accumulator (and by SoftmaxVariant::online then).
  Format accumulator = Format::fp32();

  /// The format the online softmax keeps its running max/sum/output in: A under
  /// wide_accumulator, F otherwise.
  const Format& running_format() const;
};

/// The arithmetic of F under the policy (F, its rounding and engine): policy.arithmetic().
Arithmetic arithmetic(const EvaluationPolicy& policy);

/// Σ_k terms[k] under the policy's summation (the terms are elements of F; with
/// wide_accumulator they are converted into A). An empty sum is +0. IEEE special values
/// propagate as in the chosen arithmetic (inf + -inf = NaN; under `exact`, any NaN gives NaN,
/// infinities of one sign give that infinity, both signs give NaN).
/// Source: THEORY §2.1 (sequential is the canonical default).
Value sum(std::span<const Value> terms, const EvaluationPolicy& policy);

/// The dot product Σ_k x[k]·y[k] under the policy (THEORY §2.1): sequential/pairwise round
/// each product into F then sum; wide_accumulator rounds each product into A, sums in A and
/// rounds once into F; exact computes everything exactly and rounds once into F. No fused
/// multiply-add. x and y are elements of F. An empty dot product is +0.
/// Throws InvalidArgument if the lengths differ.
Value dot(std::span<const Value> x, std::span<const Value> y, const EvaluationPolicy& policy);

/// Like dot(), with one more term `bias` appended after the products (product 1·bias, exact):
/// Σ_k x[k]·y[k] + bias as one sum of n + 1 terms under the policy. Sequential gives
/// rnd(dot(x, y) + bias); exact rounds once. Throws InvalidArgument if the lengths differ.
Value affine(std::span<const Value> x, std::span<const Value> y, const Value& bias,
             const EvaluationPolicy& policy);

/// The batched dot product of the policy on vectors held in doubles, where that is exact and
/// fast: Σ_k x[k]·y[k] evaluated in binary64 with every product and partial sum rounded into F
/// (A for wide_accumulator, then one rounding into F) by Binary64Rounding — bit-identical to
/// dot() on the same elements (innocuous double rounding, NUMERIC §2; tested against dot()).
/// Used by the certified-range scan, which evaluates up to 10^9 scores.
class Binary64Dot {
 public:
  /// The kernel for the policy, or nullopt when it does not apply: summation exact, or
  /// Binary64Rounding::fast_arithmetic() false for F (or for A under wide_accumulator).
  static std::optional<Binary64Dot> for_policy(const EvaluationPolicy& policy);

  /// Σ_{k<n} x[k]·y[k] under the policy, n ≥ 1; x[k], y[k] elements of F held in doubles.
  double operator()(const double* x, const double* y, std::size_t n) const;

  /// out[t] = (*this)(x, ys + t·stride, n) for t < count: under sequential summation four dot
  /// products at a time in lanes of doubles (numeric/lane_rounding.hpp; AVX2 where the
  /// processor has it, else the baseline), the same operations in the same order as
  /// operator(), so every result that is not NaN is operator()'s bit for bit and NaN exactly
  /// where it is NaN (a NaN's payload may differ); other summations, or F outside the lanes'
  /// domain, call operator() for each t. `baseline` forces the baseline form (the tests).
  void dots(const double* x, const double* ys, std::size_t stride, std::size_t count, std::size_t n,
            double* out, bool baseline = false) const;

 private:
  Binary64Dot(Summation summation, const Binary64Rounding& f, const Binary64Rounding& a,
              bool float32)
      : summation_(summation), round_f_(f), round_a_(a), float32_(float32) {}
  struct Lanes {
    double min_binade, max_binade, magic, max_finite;
    bool identity;
  };
  double pairwise(const double* t, std::size_t n) const;

  Summation summation_;
  Binary64Rounding round_f_;
  Binary64Rounding round_a_;
  /// wide_accumulator with A = IEEE binary32 and F ⊆ binary32: the sums in native float
  /// arithmetic (float32_sum), when the FPU is in its default mode.
  bool float32_ = false;
  /// sequential summation: round_F in lanes (numeric::lanes::LaneRounding), when it applies
  std::optional<Lanes> lanes_;
};

}  // namespace ropesim::numeric
