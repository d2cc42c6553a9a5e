#pragma once
/// Internal: the kernels of `ropesim diagnose`'s score check (proofs/reports/diagnose.cpp): the
/// rotation of the q, k draws at every position (ScoreRotation, scalar and in lanes) and the
/// binary32 dot products (Float32Dots), in a header so that the tests can compare them with
/// their references (numeric::Binary64Rounding step by step, numeric::Binary64Dot).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "numeric/binary64_rounding.hpp"
#include "numeric/format.hpp"
#include "numeric/lane_rounding.hpp"
#include "numeric/summation.hpp"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace ropesim::proofs {

/// The compiled form of ScoreRotation's lane kernel: the x86-64 baseline (SSE2: each 4-lane
/// operation as two 2-lane ones; the only form elsewhere) or AVX2.
enum class ScoreIsa { baseline, avx2 };

/// True when the processor runs AVX2 and the lane kernel was compiled for it. Never throws.
bool score_avx2_available();

/// R̂_p x of the score check: a realised rotation applied to one q or k draw x (elements of F)
/// at one position p, as attention::apply_rotation and the store into F compute it (THEORY
/// §2.1; hf's convention q·cos + rotate_half(q)·sin unless `theory`), on the binary64 fast
/// path: every product and sum of elements of the rotation format R evaluated in binary64 and
/// rounded once into R (numeric::Binary64Rounding::fast_arithmetic, NUMERIC §2), then into the
/// output format and into F. Pair d is (x[d], x[d + nb]) (rotate_half) or (x[2d], x[2d + 1])
/// (adjacent); elements past the 2·nb rotated ones are copied (then rounded into F).
struct ScoreRotation {
  numeric::Format rotation, output, format;  ///< R, the output format, F
  numeric::Binary64Rounding rf, rout, rF;    ///< their roundings (fast_arithmetic() for R)
  bool to_out = false;                       ///< round into the output format (it is not R)
  bool to_f = false;                         ///< round into F (the output format is not F)
  bool theory = false;          ///< THEORY §2.1's (c·x0 − s·x1, s·x0 + c·x1), else hf's
  bool adjacent = false;        ///< pairs (2d, 2d + 1) rather than (d, d + nb)
  bool round_table = false;     ///< round the table's cos and sin into R (the table is not in R)
  std::size_t nb = 0, dim = 0;  ///< blocks, vector length (dim ≥ 2·nb)

  /// The steps for these formats (round-to-nearest-even). Never throws.
  ScoreRotation(const numeric::Format& rotation, const numeric::Format& output,
                const numeric::Format& format);

  /// xr[j] = round_R(x[j]): the draw's operands in R (the same at every position).
  void operands(const double* x, double* xr) const;

  /// y = R̂_p x from one position's table row (cos_row[d], sin_row[d], d < nb), element by
  /// element with Binary64Rounding: the reference of rotate_lanes. x: the draw, xr: operands().
  void rotate_scalar(const double* x, const double* xr, const double* cos_row,
                     const double* sin_row, double* y) const;

  /// Whether rotate_lanes applies: every rounding is the identity or has the branch-free form
  /// (p ≤ 51, emax ≤ 969 + p: Binary64Rounding's add-magic domain).
  bool lanes() const { return lanes_; }

  /// rotate_scalar's y, four blocks per vector operation (GCC vectors of 4 doubles), rounding
  /// branch-free (numeric/lane_rounding.hpp: Binary64Rounding::round's add-magic branch with a
  /// clamped exponent), so every result that is not NaN equals rotate_scalar's bit for bit,
  /// and it is NaN exactly where rotate_scalar's is (the same IEEE operations in the same
  /// order; only a NaN's payload may differ, which no caller reads). `isa` selects the compiled
  /// form (AVX2 only when score_avx2_available(); else the baseline). Precondition: lanes().
  void rotate_lanes(const double* x, const double* xr, const double* cos_row, const double* sin_row,
                    double* y, ScoreIsa isa) const;

  /// rotate_lanes in the best form available, else rotate_scalar.
  void rotate(const double* x, const double* xr, const double* cos_row, const double* sin_row,
              double* y) const {
    if (lanes_)
      rotate_lanes(x, xr, cos_row, sin_row, y,
                   score_avx2_available() ? ScoreIsa::avx2 : ScoreIsa::baseline);
    else
      rotate_scalar(x, xr, cos_row, sin_row, y);
  }

  /// The lanes' roundings into R, the output format and F (set when lanes()).
  numeric::lanes::LaneRounding lane_rf, lane_rout, lane_rF;

 private:
  bool lanes_ = false;
};

/// The score check's dot products when the policy accumulates in binary32 (Summation::
/// wide_accumulator, A = fp32: the frameworks' GEMM accumulation) and every rotated element is
/// a binary32 value: native float arithmetic, eight query positions at a time. IEEE binary32's
/// product and sum are the correctly rounded ones, which is what numeric::Binary64Dot computes
/// for A = binary32 (round_A of the exact product of two elements of F ⊆ binary32, then round_A
/// of each sum: innocuous double rounding, NUMERIC §2), in the same order (k = 0..D-1, no
/// fused multiply-add: -ffp-contract=off), so each score is Binary64Dot's bit for bit after the
/// one rounding into F. Needs the FPU's default mode (no flush-to-zero, no denormals-are-zero),
/// checked before use; tests/proofs/test_score_kernels.cpp compares the two kernels.
class Float32Dots {
 public:
  /// Whether the kernel gives Binary64Dot's results for `policy` in this thread's FPU mode.
  static bool applies(const numeric::EvaluationPolicy& policy) {
#if defined(__SSE__) || defined(__x86_64__)
    if ((_mm_getcsr() & 0x8040) != 0) return false;  // FTZ (bit 15) or DAZ (bit 6) set
#else
    return false;
#endif
    return policy.summation == numeric::Summation::wide_accumulator &&
           policy.rounding == numeric::Rounding::nearest_even &&
           policy.accumulator == numeric::Format::fp32() &&
           numeric::Binary64Rounding(policy.format, policy.rounding).fast_rounding();
  }

  /// acc[j] = Σ_k q[k·N + p0 + j]·kk[k·N + p0 - offset + j] for j < len, in binary32, k in order.
  static void dots(const float* q, const float* kk, std::uint64_t n, std::size_t dim,
                   std::uint64_t offset, std::uint64_t p0, std::size_t len, float* acc) {
    typedef float v8 __attribute__((vector_size(32)));
    const std::size_t whole = len / 8 * 8;
    for (std::size_t k = 0; k < dim; ++k) {
      const float* qk = q + k * n + p0;
      const float* kk_ = kk + k * n + (p0 - offset);
      std::size_t j = 0;
      for (; j < whole; j += 8) {
        v8 a, b, s;
        std::memcpy(&a, qk + j, sizeof a);
        std::memcpy(&b, kk_ + j, sizeof b);
        if (k == 0) {
          s = a * b;
        } else {
          std::memcpy(&s, acc + j, sizeof s);
          s = s + a * b;
        }
        std::memcpy(acc + j, &s, sizeof s);
      }
      for (; j < len; ++j) acc[j] = k == 0 ? qk[j] * kk_[j] : acc[j] + qk[j] * kk_[j];
    }
  }
};

}  // namespace ropesim::proofs
