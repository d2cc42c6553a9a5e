// Binary32 arithmetic of small formats and its dot product (numeric/binary32_arithmetic.hpp,
// NUMERIC §2.1). The AVX2 kernel keeps eight dot products in the lanes of one register: the same
// operations in the same order as the scalar loop, lane by lane.
#include "numeric/binary32_arithmetic.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define ROPESIM_B32_AVX2 1
#else
#define ROPESIM_B32_AVX2 0
#endif

namespace ropesim::numeric {

Binary32Arithmetic::Binary32Arithmetic(const Format& f, Rounding rounding) : r64_(f, rounding) {
  if (rounding != Rounding::nearest_even || f.is_fixed_point() || !r64_.fast_rounding()) return;
  if (f.precision > 11 || f.emin < -126 || f.emax > 127) return;
  const bool bf16 = f.precision == 8 && f.emin == -126 && f.emax == 127;
  const bool products_exact = 2 * (f.emin - f.precision + 1) >= -149;
  if (!bf16 && !products_exact) return;
  applies_ = true;
  if (bf16) kind_ = Kind::bf16;
  if (f.precision == 11 && f.emin == -14 && f.emax == 15) kind_ = Kind::fp16;
}

float Binary32Arithmetic::round_bf16(float x) {
  if (x != x) return x;
  std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  u += 0x7fffu + ((u >> 16) & 1u);
  return std::bit_cast<float>(u & 0xffff0000u);
}

std::optional<Binary32Dot> Binary32Dot::for_policy(const EvaluationPolicy& policy) {
  if (policy.summation == Summation::exact) return std::nullopt;
  const Binary32Arithmetic f(policy.format, policy.rounding);
  if (!f.applies()) return std::nullopt;
  if (policy.summation == Summation::wide_accumulator && !(policy.accumulator == Format::fp32()))
    return std::nullopt;
  return Binary32Dot(policy.summation, f);
}

float Binary32Dot::operator()(const float* x, const float* y, std::size_t n) const {
  switch (summation_) {
    case Summation::sequential: {
      float acc = f_.mul(x[0], y[0]);
      for (std::size_t c = 1; c < n; ++c) acc = f_.add(acc, f_.mul(x[c], y[c]));
      return acc;
    }
    case Summation::pairwise: {
      float small[64] = {};
      std::vector<float> big;
      float* t = small;
      if (n > 64) {
        big.resize(n);
        t = big.data();
      }
      for (std::size_t c = 0; c < n; ++c) t[c] = f_.mul(x[c], y[c]);
      return pairwise(t, n);
    }
    case Summation::wide_accumulator: {
      // A = binary32: the products of elements of F (⊂ binary32) and the sums are binary32's
      // own correctly rounded operations; one rounding into F at the end
      float acc = x[0] * y[0];
      for (std::size_t c = 1; c < n; ++c) acc = acc + x[c] * y[c];
      return f_.round(acc);
    }
    case Summation::exact:
      break;
  }
  return 0;  // unreachable: for_policy refuses exact summation
}

float Binary32Dot::pairwise(const float* t, std::size_t n) const {
  if (n == 1) return t[0];
  const std::size_t m = n / 2;
  return f_.add(pairwise(t, m), pairwise(t + m, n - m));
}

namespace {

#if ROPESIM_B32_AVX2
/// AVX2 (with the operating system's support for the AVX state, which __builtin_cpu_supports
/// checks) and F16C (CPUID leaf 1, ECX bit 29: clang 14's __builtin_cpu_supports has no "f16c").
bool avx2_available() {
  static const bool ok = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
    return f16c && __builtin_cpu_supports("avx2");
  }();
  return ok;
}

/// round_F lane by lane: bf16 by its bits (as round_bf16, NaN lanes kept), fp16 through F16C's
/// correctly rounded conversion (nearest-even, subnormals, overflow to inf) and back (exact).
template <bool BF16>
__attribute__((target("avx2,f16c"))) inline __m256 round_lanes(__m256 v) {
  if constexpr (BF16) {
    __m256i u = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    u = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
    u = _mm256_and_si256(u, _mm256_set1_epi32(static_cast<int>(0xffff0000u)));
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    return _mm256_blendv_ps(_mm256_castsi256_ps(u), v, nan);
  } else {
    return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
}

/// x_c: x[c] in every lane (PAIRS false) or the eight lanes xt[8c .. 8c+8) (PAIRS true).
template <bool PAIRS>
__attribute__((target("avx2,f16c"))) inline __m256 x_lanes(const float* x, std::size_t c) {
  if constexpr (PAIRS) {
    return _mm256_loadu_ps(x + 8 * c);
  } else {
    return _mm256_set1_ps(x[c]);
  }
}

template <bool BF16, bool PAIRS>
__attribute__((target("avx2,f16c"))) void dot8_avx2(bool wide, const float* x, const float* yt,
                                                    std::size_t n, float* out) {
  if (wide) {
    __m256 acc = _mm256_mul_ps(x_lanes<PAIRS>(x, 0), _mm256_loadu_ps(yt));
    for (std::size_t c = 1; c < n; ++c)
      acc = _mm256_add_ps(acc, _mm256_mul_ps(x_lanes<PAIRS>(x, c), _mm256_loadu_ps(yt + 8 * c)));
    _mm256_storeu_ps(out, round_lanes<BF16>(acc));
    return;
  }
  __m256 acc = round_lanes<BF16>(_mm256_mul_ps(x_lanes<PAIRS>(x, 0), _mm256_loadu_ps(yt)));
  for (std::size_t c = 1; c < n; ++c) {
    const __m256 p =
        round_lanes<BF16>(_mm256_mul_ps(x_lanes<PAIRS>(x, c), _mm256_loadu_ps(yt + 8 * c)));
    acc = round_lanes<BF16>(_mm256_add_ps(acc, p));
  }
  _mm256_storeu_ps(out, acc);
}
#else
bool avx2_available() { return false; }
#endif

}  // namespace

bool Binary32Dot::vectorised() const {
  return avx2_available() && (f_.is_bf16() || f_.is_fp16()) &&
         (summation_ == Summation::sequential || summation_ == Summation::wide_accumulator);
}

void Binary32Dot::dot8(const float* x, const float* yt, std::size_t n, float* out,
                       bool allow_avx2) const {
#if ROPESIM_B32_AVX2
  if (allow_avx2 && vectorised()) {
    const bool wide = summation_ == Summation::wide_accumulator;
    if (f_.is_bf16()) {
      dot8_avx2<true, false>(wide, x, yt, n, out);
    } else {
      dot8_avx2<false, false>(wide, x, yt, n, out);
    }
    return;
  }
#endif
  std::vector<float> y(n);
  for (std::size_t l = 0; l < 8; ++l) {
    for (std::size_t c = 0; c < n; ++c) y[c] = yt[8 * c + l];
    out[l] = (*this)(x, y.data(), n);
  }
}

void Binary32Dot::dot8_pairs(const float* xt, const float* yt, std::size_t n, float* out,
                             bool allow_avx2) const {
#if ROPESIM_B32_AVX2
  if (allow_avx2 && vectorised()) {
    const bool wide = summation_ == Summation::wide_accumulator;
    if (f_.is_bf16()) {
      dot8_avx2<true, true>(wide, xt, yt, n, out);
    } else {
      dot8_avx2<false, true>(wide, xt, yt, n, out);
    }
    return;
  }
#endif
  std::vector<float> x(n), y(n);
  for (std::size_t l = 0; l < 8; ++l) {
    for (std::size_t c = 0; c < n; ++c) {
      x[c] = xt[8 * c + l];
      y[c] = yt[8 * c + l];
    }
    out[l] = (*this)(x.data(), y.data(), n);
  }
}

}  // namespace ropesim::numeric
