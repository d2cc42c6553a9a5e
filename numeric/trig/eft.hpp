#pragma once
/// Internal: the error-free transformations of the realisation fast path, written once for a
/// binary64 scalar and for GCC/Clang vectors of binary64 lanes (fast_trig_batch.cpp), so the
/// scalar path (fast_trig.cpp) and the batched one compute the same values operation by
/// operation. Every operation is one IEEE 754 binary64 operation, round-to-nearest-even
/// (-ffp-contract=off keeps the compiler from fusing them), lane by lane for vectors.
///
/// TwoSum (Knuth, TAOCP 2 §4.2.2 Thm B): hi + lo = a + b exactly. FastTwoSum (Dekker): the same
/// when |a| ≥ |b| or a = 0. Dekker's TwoProd with Veltkamp's splitting (Muller et al., Handbook
/// of Floating-Point Arithmetic 2nd ed. §4.4.2, Algorithms 4.9 and 4.10): a·b − RN(a·b)
/// exactly, when no intermediate overflows (|a|, |b| < 2^995) and the error term does not
/// underflow (|a·b| ≥ 2^-969 or 0) — the callers keep both. Without -mfma std::fma is a library
/// call; these stay inline.

namespace ropesim::numeric::trig {

/// hi + lo of a sum, exactly (T: double, or a vector of doubles).
template <class T>
struct SumOf {
  T hi, lo;
};

/// TwoSum: hi = RN(a + b), lo = a + b − hi exactly.
template <class T>
inline SumOf<T> two_sum(T a, T b) {
  const T s = a + b;
  const T bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

/// FastTwoSum: as two_sum when |a| ≥ |b| or a = 0.
template <class T>
inline SumOf<T> fast_two_sum(T a, T b) {
  const T s = a + b;
  return {s, b - (s - a)};
}

/// Veltkamp's split: the high 26 bits of a (a − split_hi(a) is exact and fits 26 bits).
template <class T>
inline T split_hi(T a) {
  const T c = 134217729.0 * a;  // 2^27 + 1
  return c - (c - a);
}

/// a·b − p exactly for p = RN(a·b) (Dekker's TwoProd; conditions above).
template <class T>
inline T two_prod_error(T a, T b, T p) {
  const T ah = split_hi(a), al = a - ah;
  const T bh = split_hi(b), bl = b - bh;
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

}  // namespace ropesim::numeric::trig
