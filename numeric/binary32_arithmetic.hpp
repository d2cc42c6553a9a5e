#pragma once
/// + − × of elements of a small floating format F evaluated in binary32 and rounded once into
/// F (NUMERIC §2.1): the correctly rounded results for p ≤ 11 (innocuous double rounding,
/// Figueroa 1995; Roux 2014), and the policy's dot product built from them, eight scores at a
/// time with AVX2 where the CPU has it (bit for bit the baseline path and numeric::dot).
#include <cstddef>
#include <cstdint>
#include <optional>

#include "numeric/binary64_rounding.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/summation.hpp"

namespace ropesim::numeric {

/// round_F of binary32 values and the binary32 arithmetic of F (NUMERIC §2.1).
///
/// Domain (`applies()`), decided at construction: round-to-nearest-even; F an IEEE-style
/// floating format (Binary64Rounding::fast_rounding(): subnormals on, overflow to ±inf) with
/// p ≤ 11, emin ≥ −126 and emax ≤ 127 (every element of F is a binary32); and either every
/// product of two elements of F is exact in binary32 (2·(emin − p + 1) ≥ −149: fp16, fp8e5m2,
/// p ≤ 11 with 5 exponent bits …) or F is bf16 (p = 8, emin = −126, emax = 127), whose products
/// below 2^-126 are rounded in binary32's subnormal range first: that double rounding is
/// checked exhaustively over every pair of significands and exponent sum
/// (tests/numeric/test_binary32_arithmetic.cpp). Outside the domain `applies()` is false and
/// callers keep the exact path.
class Binary32Arithmetic {
 public:
  Binary32Arithmetic(const Format& format, Rounding rounding);

  bool applies() const { return applies_; }
  /// F is bf16 / fp16 (the AVX2 kernels round these with bit operations / F16C).
  bool is_bf16() const { return kind_ == Kind::bf16; }
  bool is_fp16() const { return kind_ == Kind::fp16; }

  /// round_F(x) for a binary32 x (exact), nearest-even, overflow to ±inf. Precondition:
  /// applies().
  float round(float x) const {
    if (kind_ == Kind::bf16) return round_bf16(x);
    return static_cast<float>(r64_.round(static_cast<double>(x)));
  }
  float add(float a, float b) const { return round(a + b); }
  float sub(float a, float b) const { return round(a - b); }
  float mul(float a, float b) const { return round(a * b); }

  /// round to bf16 of a binary32 by its bits: add 0x7FFF plus the last kept bit, clear the low
  /// 16 bits (nearest-even; bf16's subnormals are binary32's with the low bits cleared, and a
  /// carry out of the largest finite value gives the bits of +inf). NaN is kept a NaN.
  static float round_bf16(float x);

 private:
  enum class Kind { other, bf16, fp16 };
  Binary64Rounding r64_;
  Kind kind_ = Kind::other;
  bool applies_ = false;
};

/// The policy's dot product of elements of F through Binary32Arithmetic: sequential and
/// pairwise sums with every product and partial sum rounded into F, or the wide accumulator
/// with A = binary32 (products and sums in binary32, one rounding into F at the end) —
/// bit-identical to numeric::dot (NUMERIC §2.1; tested against dot() and Binary64Dot).
class Binary32Dot {
 public:
  /// The kernel, or nullopt outside Binary32Arithmetic's domain, for exact summation, or for a
  /// wide accumulator other than binary32 under nearest-even.
  static std::optional<Binary32Dot> for_policy(const EvaluationPolicy& policy);

  /// Σ_{c<n} x[c]·y[c], n ≥ 1 (elements of F as floats).
  float operator()(const float* x, const float* y, std::size_t n) const;

  /// Eight dot products of one x with eight vectors y_l stored transposed: y_l[c] =
  /// yt[8·c + l]. out[l] = (*this)(x, y_l, n). With AVX2 (bf16 or fp16 with F16C, sequential
  /// or wide sums) the eight run in the lanes of one register; elsewhere, or when
  /// `allow_avx2` is false, lane by lane through operator().
  void dot8(const float* x, const float* yt, std::size_t n, float* out,
            bool allow_avx2 = true) const;

  /// Eight dot products of eight x_l with eight y_l, both stored transposed (x_l[c] =
  /// xt[8·c + l]): out[l] = (*this)(x_l, y_l, n); AVX2 as dot8.
  void dot8_pairs(const float* xt, const float* yt, std::size_t n, float* out,
                  bool allow_avx2 = true) const;

  /// True when dot8 runs the AVX2 kernel on this CPU for this policy.
  bool vectorised() const;

 private:
  Binary32Dot(Summation s, const Binary32Arithmetic& f) : summation_(s), f_(f) {}
  float pairwise(const float* t, std::size_t n) const;
  Summation summation_;
  Binary32Arithmetic f_;
};

}  // namespace ropesim::numeric
