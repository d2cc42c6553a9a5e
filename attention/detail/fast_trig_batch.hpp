#pragma once
/// Internal: the realisation fast path (fast_trig.hpp) over a run of consecutive positions at
/// once, branch-free, in lanes of binary64 (THEORY §3; NUMERIC §2). Every lane performs the
/// same IEEE 754 binary64 operations, in the same order, as the scalar functions of
/// fast_trig.hpp on that lane's position (the error-free transformations are shared:
/// eft.hpp), so a decided lane holds the bit pattern the scalar path gives; the scalar tests
/// (rounding, argument checks) become masks. Lanes whose rounding test cannot decide, or whose
/// argument is outside the scalar path's domain, come back undecided and the caller computes
/// them by the exact path (numeric::CosSinRounder / MPFR), as for the scalar fast path.
///
/// The lanes are GCC/Clang vectors of 4 doubles: baseline x86-64 (SSE2) runs them as pairs of
/// 2-lane operations; on x86-64 the kernels are also compiled for AVX2 and that form is chosen
/// at first use when the processor has it (batch_isa). No FMA (the build has -ffp-contract=off
/// and "avx2" does not enable it), no reassociation: the results do not depend on the
/// instruction set chosen (the tests run both forms and compare them bit for bit).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "attention/detail/format_ops.hpp"
#include "numeric/trig/fast_trig.hpp"

namespace ropesim::attention::detail {

/// Positions per batch; the arrays below hold kBatch lanes (a multiple of kBatchLanes).
inline constexpr std::size_t kBatch = 256;
/// Lanes per vector operation.
inline constexpr std::size_t kBatchLanes = 4;

/// The compiled form the kernels run: the x86-64 baseline (SSE2; the only one elsewhere) or AVX2.
enum class BatchIsa { baseline, avx2 };
/// True when the processor runs AVX2 and the kernels were compiled for it. Never throws.
bool batch_avx2_available();
/// The form in use (AVX2 when available, until set_batch_isa). Never throws.
BatchIsa batch_isa();
/// Selects the form (AVX2 only when available; else the baseline) and returns the previous one.
/// For the tests and benchmarks; not thread-safe: call it before starting evaluations.
BatchIsa set_batch_isa(BatchIsa isa);

/// round_F of exact doubles without branches: the same result as
/// numeric::Binary64Rounding::round for every finite double and ±0 (nearest-even, overflow to
/// ±inf); a non-finite input gives a non-finite result (the callers treat it as undecided).
///
/// For F ≠ binary64: with 2^e the binade of x (the exponent bits of x; 0 for ±0 and subnormal
/// doubles), s = min(max(2^e, 2^emin), 2^(emax+1)) and M = s·1.5·2^(53−p) = 1.5·2^(q+52), where
/// 2^q is F's quantum at |x| (Binary64Rounding's q), r = RN(RN(x + M) − M) is x rounded to a
/// multiple of 2^q, ties to even; |r| > max finite gives ±inf; the sign is x's. The clamp to
/// 2^(emax+1) keeps M finite for large x, whose r then still exceeds max finite (rounding is
/// monotone and 2^(emax+1) + M is a double). This is Binary64Rounding's add-magic branch
/// computed with a clamped exponent instead of a branch on e > emax.
struct BatchRounding {
  bool identity = true;  ///< binary64, or a step that does not round (a missing store)
  double min_binade = 0, max_binade = 0;  ///< 2^emin, 2^(emax+1)
  double magic = 0;                       ///< 1.5·2^(53−p)
  double max_finite = 0;
  /// The rounding of `ops` when it has one the batch can compute — ops.fast_round(), and F is
  /// binary64 or p ≤ 51, emin ≥ −1022 and emax ≤ 969 + p (Binary64Rounding's add-magic domain)
  /// — else nullopt (the caller keeps the scalar path). Null `ops`: the identity. Never throws.
  static std::optional<BatchRounding> of(const FormatOps* ops);
  /// round_F(x) for one double (the lane computation; for the tests).
  double round(double x) const;
};

/// The angles of an r1/r3 block in a batch: θ·i (τ = θ/2π, turns_of_product) or the rational
/// turn r/m (turns_of_ratio), and the targets' roundings.
struct R1Kernel {
  bool ratio = false;       ///< r/m (m below) rather than τ·i
  numeric::trig::Turn tau;  ///< the θ·i case; valid
  double m = 0;             ///< the ratio case: m < 2^53
  std::vector<BatchRounding> targets;
};

/// For lanes k < n (n ≤ kBatch): x[k] = the position i (τ·i, i < 2^53) or the residue r
/// (r/m, 0 < r < m); cos[t·kBatch + k], sin[t·kBatch + k] = target t's rounded cos and sin of
/// the angle, decided[k] = 1 when every target's rounding test decided both (the values are
/// then the scalar fast path's), else 0 (cos/sin unspecified). Lanes n.. of the arrays are
/// read and written (x must hold finite values there). Never throws.
void r1_batch(const R1Kernel& k, const double* x, std::size_t n, double* cos, double* sin,
              std::uint8_t* decided);

/// A correctly rounded framework pipeline's per-position steps (PipelineGroup::compute_fast):
/// t = pos_store(pos(i)); x = x_round(t); the angle by the recipe in `ang`, then ang_store and
/// cs_arg (identity when the angle is already in cos_sin's format); cos/sin by the turns of the
/// angle and the rounding test in `cs`; cs_store; optionally the attention scaling
/// (scaling_store(scaling(scaling(v)·scale))); one rounding per table.
struct PipelineKernel {
  enum class Recipe { product, quotient, chained };
  BatchRounding pos, pos_store, x_round, ang, ang_store, cs_arg, cs, cs_store, scaling,
      scaling_store;
  Recipe recipe = Recipe::product;
  std::size_t chain = 0;  ///< chained: the number of products
  double factor = 0;      ///< inv_freq / power / theta_scale as a double
  bool scale = false;
  double scale_value = 0;
  std::vector<BatchRounding> tables;
};

/// For lanes k < n: t[k] = the position index as an exact double (< 2^53); outputs as r1_batch
/// (cos/sin per table); decided[k] = 1 when every step stayed finite and the rounding test
/// decided (else 0: the exact path recomputes it and raises the flags); angle[k], when `angle`
/// is not null, = the stored angle (after ang_store, before cs_arg: the pipeline's "angle"
/// step), meaningful where decided. Never throws.
void pipeline_batch(const PipelineKernel& k, const double* t, std::size_t n, double* cos,
                    double* sin, std::uint8_t* decided, double* angle = nullptr);

}  // namespace ropesim::attention::detail
