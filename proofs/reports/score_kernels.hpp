#pragma once
/// Internal: the score kernel of `ropesim diagnose`'s score check (proofs/reports/diagnose.cpp),
/// in a header so that the tests can compare it with numeric::Binary64Dot.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "numeric/binary64_rounding.hpp"
#include "numeric/format.hpp"
#include "numeric/summation.hpp"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace ropesim::proofs {

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
