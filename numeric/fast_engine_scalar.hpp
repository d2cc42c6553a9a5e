#pragma once
// The fast exact engine's scalar path (NUMERIC §2), shared by the Engine (fast_engine.cpp) and
// the array forms (fast_engine_arrays.cpp). Bit-identical to mpfr_engine() by construction
// (argued below) and by test (tests/numeric/test_fast_engine.cpp). Internal: include it only
// from those two files; the public interface is numeric/fast_engine.hpp.
//
// Domain. A format F is *fast* when it is floating point with p ≤ 25 and -400 ≤ emin ≤ emax ≤
// 400 (every element then is a double, and non-zero elements have magnitudes in
// [2^(emin-p+1), 2^(emax+1)) ⊆ [2^-424, 2^401)). An operand is *small* when it is ±0, ±inf,
// NaN, or a double with at most 26 significant bits and magnitude in [2^-450, 2^410). Every
// element of a fast F is small. Anything else goes to mpfr_engine().
//
// + − × ÷ √ fma. For small operands the exact result x is known in binary64 as a round-to-odd
// value o with 53 bits (RO53(x): x itself when it is a double, else the one of its two 53-bit
// neighbours whose last bit is 1):
//  * a·b is exact: 26 + 26 ≤ 53 bits, and |a·b| ∈ [2^-900, 2^820) is normal;
//  * a ± b: s = RN(a ± b) and TwoSum's error e = (a ± b) − s, exact in binary64 without
//    overflow (Knuth TAOCP 2 §4.2.2 Thm B; Muller et al., Handbook of FP Arithmetic, 2nd ed.,
//    §4.3.2); a and b are multiples of 2^-475, so a non-zero s is too and is normal;
//  * a / b: q = RN(a/b), r = fma(−q, b, a) = a − q·b exactly (the remainder of a correctly
//    rounded quotient is a double when it does not underflow — Handbook §4.7.2 / Boldo–Daumas;
//    here r is a multiple of ulp(q)·quantum(b) ≥ 2^(e_a − e_b − 53)·2^(e_b − 25) ≥ 2^-528, far
//    above 2^-1074, and |q| ∈ (2^-861, 2^861) is normal); sign(x − q) = sign(r)·sign(b);
//  * √a: s = RN(√a), r = fma(−s, s, a) = a − s² exactly (same argument, Handbook §4.7.3);
//    sign(√a − s) = sign(r);
//  * fma(a, b, c): P = a·b is exact (above), then P + c as for a sum (P is a multiple of
//    2^-950 and c of 2^-475: TwoSum is exact, a non-zero sum is ≥ 2^-950 and normal).
// From s and the sign of x − s, o = s if exact or s is odd, else the neighbour of s toward x.
// Shortcut: under round-to-nearest-even with both operands elements of F, + − × ÷ √ skip the
// error term — one binary64 rounding then one into F is exact (innocuous double rounding,
// 53 ≥ 2p + 2; see `in_format` and numeric/binary64_rounding.hpp).
// Rounding o into F in any direction gives the rounding of x (round-to-odd at 53 ≥ p + 2 bits
// is innocuous for every coarser rounding, subnormal and overflow boundaries included, because
// all of F's boundaries — midpoints and elements — are numbers of at most p + 1 ≤ 26 bits;
// Boldo & Melquiond, IEEE TC 57(4) 2008, Thm 1). `round_exact` rounds a double into F exactly
// as mpfr_engine()'s round_into does (same overflow, saturation, reserved-code and underflow
// conventions), with integer operations on the significand.
//
// exp, log, cos, sin. y = glibc's binary64 result; [lo, hi] = y ± 16 steps of binary64's grid
// at y (at least 8 ulps of the exact result, whose binade is y's or an adjacent one). Assumed
// bound: |y − f(x)| ≤ 1 ulp, the x86_64 double entries for exp, log, sin and cos in the glibc
// manual's table "Known Maximum Errors in Math Functions" (§19.7; Debian 12 ships glibc 2.36;
// the entries were not re-read against the 2.36 edition when this was written — check them
// when upgrading). exp and log are the ARM optimized-routines code since glibc 2.28, whose
// source states about 0.52 ulp; sin and cos are IBM's Accurate Mathematical Library with an
// exact Payne–Hanek reduction for large arguments. We allow 8 ulps, a safety factor of 8,
// because glibc's table is measured, not proved; the exhaustive fp16/bf16 and 2·10^6 random
// fp32 comparisons with MPFR in the tests found no disagreement. Rounding test: first from
// y's bits (rounding_test_from_bits: when y lies in F's normal range and [lo, hi] holds no
// element — directed modes — or midpoint — nearest modes — of F, the result is round_F(y));
// otherwise, if round_F(lo) and round_F(hi) are the same element, every real in [lo, hi] — the
// exact result among them — rounds to it (rounding is monotone). Else MPFR decides (Ziv's
// second step) and the fallback is counted.
// Exact cases never reach the test: exp(0) = 1, log(1) = +0, cos(0) = 1, sin(±0) = ±0, and
// the infinities, NaN, log of zero and negatives. For other x the values are transcendental
// (Lindemann), so never a rounding boundary. Tiny arguments are decided by Taylor bounds: for
// 0 < |x| < 2^-26, sin x lies strictly between x·(1 − 2^-54) and x, so RO53(sin x) is the
// predecessor of x in binary64 (x has ≤ 26 bits: its 53-bit neighbour toward 0 is odd), and
// cos x lies in (1 − 2^-53, 1), so RO53(cos x) = 1 − 2^-53. exp far outside F's range
// (|x| > 600) is replaced by a double in the same rounding cell ((0, 2^-865) or
// (2^865, ∞) contain no boundary of F).
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>

#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::numeric::fast_detail {

inline std::atomic<std::uint64_t> transcendental_evaluations{0};
inline std::atomic<std::uint64_t> transcendental_fallbacks{0};

inline constexpr std::uint64_t kSignMask = std::uint64_t{1} << 63;
inline constexpr std::uint64_t kFractionMask = (std::uint64_t{1} << 52) - 1;
inline constexpr std::uint64_t kHiddenBit = std::uint64_t{1} << 52;

/// 2^k as a double, for -1022 ≤ k ≤ 1023.
inline double power_of_two(int k) {
  return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
}

/// The NaN that mpfr_engine() returns (mpfr_get_d of NaN), so that even NaN's bits agree.
inline double mpfr_nan() {
  static const double nan = [] {
    Mpfr y(2);
    mpfr_set_nan(y);
    return mpfr_get_d(y, MPFR_RNDN);
  }();
  return nan;
}

/// True when d is ±0, ±inf, NaN or has ≤ 26 significant bits and |d| ∈ [2^-450, 2^410).
inline bool small_operand(double d) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(d);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  if (biased == 0x7ff || (bits & ~kSignMask) == 0) return true;
  return biased >= 1023 - 450 && biased < 1023 + 410 &&
         (bits & ((std::uint64_t{1} << 27) - 1)) == 0;
}

/// F's parameters for the fast path, or `fast == false` when F is outside the domain.
struct Target {
  bool fast = false;
  int precision = 0;
  int emin = 0;
  int emax = 0;
  bool subnormals = true;
  bool has_infinity = true;
  bool clamp = false;             // saturation or reserved codes: the max_finite check below
  double max_finite = 0;          // largest element of F
  double max_precision = 0;       // largest p-bit number below 2^(emax+1) (all codes)
  double overflow_threshold = 0;  // 2^(emax+1)
  int low_quantum =
      0;  // exponent of the quantum below 2^emin: emin-p+1, or emin without subnormals
  double min_normal = 0;  // 2^emin
  std::uint64_t low_mask =
      0;  // 2^(53-p) - 1: the significand bits of a double below F's quantum in its binade
};

inline Target target_of(const Format& f) {
  Target t;
  if (f.is_fixed_point() || f.precision > 25 || f.emin < -400 || f.emax > 400 || f.emin > f.emax)
    return t;
  if (!f.has_nan) return t;  // NaN results would have no element to go to: let MPFR decide
  t.fast = true;
  t.precision = f.precision;
  t.emin = f.emin;
  t.emax = f.emax;
  t.subnormals = f.subnormals;
  t.has_infinity = f.has_infinity;
  t.clamp = !f.has_infinity || f.reserved_top_codes > 0;
  t.overflow_threshold = 2.0 * power_of_two(f.emax);
  t.low_quantum = f.subnormals ? f.emin - f.precision + 1 : f.emin;
  t.max_precision = (2.0 - power_of_two(1 - f.precision)) * power_of_two(f.emax);
  t.max_finite =
      (2.0 - static_cast<double>(1 + f.reserved_top_codes) * power_of_two(1 - f.precision)) *
      power_of_two(f.emax);
  t.min_normal = power_of_two(f.emin);
  t.low_mask = (std::uint64_t{1} << (53 - f.precision)) - 1;
  return t;
}

/// target_of(f) through a one-entry cache per thread keyed by every field of F that target_of
/// reads (the Engine interface is called once per element with the same F; thread_local, so
/// no shared mutable state).
inline const Target& cached_target(const Format& f) {
  struct Entry {
    bool valid = false;
    Format::Kind kind = Format::Kind::floating;
    int precision = 0, emin = 0, emax = 0, reserved_top_codes = 0;
    bool subnormals = false, has_infinity = false, has_nan = false;
    Target target;
  };
  thread_local Entry entry;
  if (!entry.valid || entry.kind != f.kind || entry.precision != f.precision ||
      entry.emin != f.emin || entry.emax != f.emax ||
      entry.reserved_top_codes != f.reserved_top_codes || entry.subnormals != f.subnormals ||
      entry.has_infinity != f.has_infinity || entry.has_nan != f.has_nan) {
    entry =
        Entry{true,         f.kind,         f.precision, f.emin,      f.emax, f.reserved_top_codes,
              f.subnormals, f.has_infinity, f.has_nan,   target_of(f)};
  }
  return entry.target;
}

/// round_F(x) for an exact double x in direction `mode`, as mpfr_engine()'s round_into does it:
/// correct rounding onto F's grid (quantum 2^(max(e, emin) - p + 1); without subnormals the
/// grid below 2^emin is {0, 2^emin}); a result ≥ 2^(emax+1) overflows to ±inf or to the
/// largest p-bit number by direction; then, for saturating formats or reserved codes, anything
/// beyond max_finite becomes ±inf (if F has infinities) or ±max_finite. Zero results keep x's
/// sign. Also right for a round-to-odd double of at least p + 2 bits (file comment).
inline double round_exact(const Target& t, double x, Rounding mode) {
  if (std::isnan(x)) return mpfr_nan();
  if (std::isinf(x)) return t.has_infinity ? x : std::copysign(t.max_finite, x);
  if (x == 0.0) return x;
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const bool negative = (bits & kSignMask) != 0;
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  std::uint64_t significand;  // |x| = significand · 2^(e - 52), significand ∈ [2^52, 2^53)
  int e;
  if (biased == 0) {
    significand = bits & kFractionMask;
    const int shift = std::countl_zero(significand) - 11;
    significand <<= shift;
    e = -1022 - shift;
  } else {
    significand = (bits & kFractionMask) | kHiddenBit;
    e = biased - 1023;
  }
  double magnitude = 0;  // every path below assigns it
  bool overflow = e > t.emax;
  if (!overflow && mode == Rounding::nearest_even) {
    // M = 1.5·2^(q+52): |x| < 2^(q+p) ≤ 2^(q+51), so |x| + M lies in (2^(q+52), 2^(q+53)) where
    // binary64's spacing is 2^q: RN(|x| + M) − M is |x| rounded to a multiple of 2^q, ties to
    // even (M/2^q = 3·2^51 is even), and the subtraction is exact (Binary64Rounding::round).
    const int q =
        e >= t.emin ? e - t.precision + 1 : (t.subnormals ? t.emin - t.precision + 1 : t.emin);
    const double m = std::bit_cast<double>((static_cast<std::uint64_t>(q + 52 + 1023) << 52) |
                                           (std::uint64_t{1} << 51));
    magnitude = (std::fabs(x) + m) - m;
    overflow = magnitude >= 2.0 * power_of_two(t.emax);
  } else if (!overflow) {
    const int q =
        e >= t.emin ? e - t.precision + 1 : (t.subnormals ? t.emin - t.precision + 1 : t.emin);
    const int shift = q - (e - 52);  // ≥ 53 - p ≥ 28: bits of the significand below the quantum
    std::uint64_t kept = 0;
    bool up = false;
    if (shift >= 64) {
      // |x| < 2^(q - 11): below half a quantum, inexact
      up = (mode == Rounding::upward && !negative) || (mode == Rounding::downward && negative);
    } else {
      kept = significand >> shift;
      const std::uint64_t rest = significand & ((std::uint64_t{1} << shift) - 1);
      const std::uint64_t half = std::uint64_t{1} << (shift - 1);
      switch (mode) {
        case Rounding::nearest_even:
          up = rest > half || (rest == half && (kept & 1) != 0);
          break;
        case Rounding::nearest_away:
          up = rest >= half;
          break;
        case Rounding::toward_zero:
          up = false;
          break;
        case Rounding::upward:
          up = rest != 0 && !negative;
          break;
        case Rounding::downward:
          up = rest != 0 && negative;
          break;
      }
    }
    kept += up ? 1 : 0;
    magnitude = static_cast<double>(kept) * power_of_two(q);  // exact: kept ≤ 2^p, q ∈ [-424, 400]
    overflow = magnitude >= 2.0 * power_of_two(t.emax);
  }
  if (overflow) {
    bool to_infinity = true;
    switch (mode) {
      case Rounding::nearest_even:
      case Rounding::nearest_away:
        to_infinity = true;
        break;
      case Rounding::toward_zero:
        to_infinity = false;
        break;
      case Rounding::upward:
        to_infinity = !negative;
        break;
      case Rounding::downward:
        to_infinity = negative;
        break;
    }
    magnitude = to_infinity ? HUGE_VAL : t.max_precision;
  }
  if (t.clamp && magnitude > t.max_finite) magnitude = t.has_infinity ? HUGE_VAL : t.max_finite;
  return negative ? -magnitude : magnitude;
}

/// True when d is ±0, ±inf, NaN or an element of F. For elements a, b of F, one binary64
/// operation (+ − × ÷ √) followed by round-to-nearest-even into F is the correctly rounded
/// result (innocuous double rounding, 53 ≥ 2p + 2; Figueroa 1995, Roux 2014; the argument and
/// its exponent conditions are in numeric/binary64_rounding.hpp), so the nearest-even path
/// needs no error term. (Operands that are not elements of F — e.g. 26-bit doubles given to a
/// bf16 operation — can create false ties and take the round-to-odd path.)
inline bool in_format(const Target& t, double d) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(d);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  if (biased == 0x7ff || (bits & ~kSignMask) == 0) return true;
  const int e = biased - 1023;
  if (e > t.emax || std::fabs(d) > t.max_finite) return false;
  int low_bits = 53 - t.precision;  // bits below the quantum, counted in d's 53-bit significand
  if (e < t.emin) {
    if (!t.subnormals) return false;
    low_bits += t.emin - e;           // the quantum stays 2^(emin-p+1)
    if (low_bits > 52) return false;  // below the smallest subnormal
  }
  return (bits & ((std::uint64_t{1} << low_bits) - 1)) == 0;
}

/// round_exact(t, x, nearest_even), inlined for the common case (x finite, non-zero, no
/// overflow and no clamping: the magic-constant rounding of round_exact); the rest goes to
/// round_exact.
[[gnu::always_inline]] inline double round_nearest_even(const Target& t, double x) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const int e =
      static_cast<int>((bits >> 52) & 0x7ff) - 1023;  // -1023 for zeros and subnormal doubles
  if (e > t.emax || x == 0)
    return round_exact(t, x, Rounding::nearest_even);  // inf, NaN, overflow, ±0
  const int q = e >= t.emin ? e - t.precision + 1 : t.low_quantum;
  const double m = std::bit_cast<double>((static_cast<std::uint64_t>(q + 52 + 1023) << 52) |
                                         (std::uint64_t{1} << 51));
  const double magnitude = (std::fabs(x) + m) - m;
  if (magnitude >= t.overflow_threshold || (t.clamp && magnitude > t.max_finite)) {
    return round_exact(t, x, Rounding::nearest_even);
  }
  return std::copysign(magnitude, x);
}

/// RO53 of the exact s + error where s is a non-zero normal double and `error_sign` the sign of
/// (exact − s): s when exact or odd, else s's binary64 neighbour toward the exact value.
inline double round_to_odd(double s, int error_sign) {
  std::uint64_t bits = std::bit_cast<std::uint64_t>(s);
  if (error_sign == 0 || (bits & 1) != 0) return s;
  const bool away_from_zero = (error_sign > 0) == (s > 0);
  bits = away_from_zero ? bits + 1 : bits - 1;
  return std::bit_cast<double>(bits);
}

inline int sign_of(double d) { return d > 0 ? 1 : (d < 0 ? -1 : 0); }

/// The IEEE 754 §6.3 sign of an exact zero sum x + y (x + y == 0): −0 under downward unless
/// both are +0; otherwise −0 only when both are −0.
inline double zero_sum(double x, double y, Rounding mode) {
  if (mode == Rounding::downward)
    return (x == 0 && y == 0 && !std::signbit(x) && !std::signbit(y)) ? 0.0 : -0.0;
  return (std::signbit(x) && std::signbit(y) && x == 0 && y == 0) ? -0.0 : 0.0;
}

/// round_F(a + b) for small operands.
[[gnu::always_inline]] inline double add_small(const Target& t, double a, double b, Rounding mode) {
  const double s = a + b;
  if (mode == Rounding::nearest_even && in_format(t, a) && in_format(t, b))
    return round_nearest_even(t, s);
  if (!std::isfinite(s)) return round_exact(t, s, mode);
  if (s == 0) return zero_sum(a, b, mode);  // exact: non-zero sums are ≥ 2^-475
  const double bv = s - a;                  // TwoSum (Knuth): s + e == a + b exactly
  const double e = (a - (s - bv)) + (b - bv);
  return round_exact(t, round_to_odd(s, sign_of(e)), mode);
}

/// Steps k places along binary64's grid from y (ordered by value; y finite non-zero).
/// Returns NaN if the step leaves y's sign or reaches ±0 or ±inf.
inline double step(double y, std::int64_t k) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(y);
  const std::int64_t magnitude = static_cast<std::int64_t>(bits & ~kSignMask);
  const std::int64_t moved = magnitude + ((bits & kSignMask) ? -k : k);
  if (moved <= 0 || moved >= static_cast<std::int64_t>(0x7ffULL << 52)) return std::nan("");
  return std::bit_cast<double>(static_cast<std::uint64_t>(moved) | (bits & kSignMask));
}

/// The rounding test of the file comment: round_F of y's ±16-step interval, or NaN when the
/// ends round differently (or y is not a normal double).
inline double rounding_test(const Target& t, double y, Rounding mode) {
  if (!std::isnormal(y)) return std::nan("");
  const double lo = step(y, -16), hi = step(y, 16);
  if (std::isnan(lo) || std::isnan(hi)) return std::nan("");
  const double a = round_exact(t, lo, mode), b = round_exact(t, hi, mode);
  if (std::bit_cast<std::uint64_t>(a) != std::bit_cast<std::uint64_t>(b)) return std::nan("");
  return a;
}

/// The rounding test of the file comment decided from y's bits, without rounding lo and hi
/// (NaN when it cannot decide; then rounding_test is tried). When y's binade [2^e, 2^(e+1)) has
/// e ∈ [emin, emax], F's rounding boundaries in it are the multiples of F's quantum 2^(e-p+1)
/// (elements: the boundaries of directed rounding) and the odd multiples of half of it
/// (midpoints: the boundaries of nearest rounding; the overflow threshold max + quantum/2 and,
/// for reserved codes and saturation, the clamp thresholds are among these). Measured in
/// binary64 steps of y's binade, y lies `low` = (y's significand mod 2^(53-p)) steps above the
/// element below it. If 17 ≤ low ≤ 2^(53-p) − 17, then lo = y − 16 steps and hi = y + 16 steps
/// stay in y's binade and strictly between two consecutive elements of F; for nearest modes we
/// also need |low − 2^(52-p)| > 16 (the midpoint outside [lo, hi]). Then [lo, hi] holds no
/// boundary, every real in it (the exact f(x) among them) rounds like y, and the result is
/// round_F(y) — one rounding instead of two.
inline double rounding_test_from_bits(const Target& t, double y, Rounding mode) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(y);
  const int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  if (e < t.emin || e > t.emax)
    return rounding_test(t, y, mode);  // also ±0, subnormal doubles, inf, NaN
  const std::uint64_t low = bits & t.low_mask;
  if (low < 17 || low > t.low_mask - 16) return rounding_test(t, y, mode);
  if (mode == Rounding::nearest_even || mode == Rounding::nearest_away) {
    const std::uint64_t half = (t.low_mask + 1) >> 1;
    if (low + 16 >= half && low <= half + 16) return rounding_test(t, y, mode);
  }
  return mode == Rounding::nearest_even ? round_nearest_even(t, y) : round_exact(t, y, mode);
}

/// Which binary64 function a transcendental call evaluates.
enum class Function { exp, log, cos, sin };

inline double evaluate(Function fn, double x) {
  switch (fn) {
    case Function::exp:
      return std::exp(x);
    case Function::log:
      return std::log(x);
    case Function::cos:
      return std::cos(x);
    case Function::sin:
      return std::sin(x);
  }
  return 0;
}

/// Tallies of the transcendental path, added to the global counters by the caller.
struct Tally {
  std::uint64_t evaluations = 0;
  std::uint64_t fallbacks = 0;
};

/// fn(x) rounded into the fast format t (file comment): the exact cases, the tiny-argument
/// cases, the binary64 evaluation and its rounding test. Returns false (and leaves `result`)
/// when MPFR must decide (counted in `tally.fallbacks`). x must be a small operand.
[[gnu::always_inline]] inline bool transcendental_small(const Target& t, Function fn, double x,
                                                        Rounding r, double& result, Tally& tally) {
  if (std::isnan(x)) {
    result = mpfr_nan();
    return true;
  }
  switch (fn) {
    case Function::exp:
      if (x == 0) return result = 1.0, true;
      if (std::isinf(x)) return result = round_exact(t, x > 0 ? x : 0.0, r), true;
      // exp(x) ∈ (0, 2^-865) or (2^865, ∞): no boundary of F inside, so any double there
      // rounds like the exact value (F's elements are ≥ 2^-424 and < 2^401).
      if (x < -600) return result = round_exact(t, power_of_two(-1000), r), true;
      if (x > 600) return result = round_exact(t, power_of_two(1000), r), true;
      break;
    case Function::log:
      if (x == 0) return result = round_exact(t, -HUGE_VAL, r), true;
      if (x < 0) return result = mpfr_nan(), true;
      if (std::isinf(x)) return result = round_exact(t, x, r), true;
      if (x == 1) return result = 0.0, true;
      break;
    case Function::cos:
      if (std::isinf(x)) return result = mpfr_nan(), true;
      if (x == 0) return result = round_exact(t, 1.0, r), true;
      if (std::fabs(x) < power_of_two(-26))
        return result = round_exact(t, 1.0 - power_of_two(-53), r), true;
      break;
    case Function::sin:
      if (std::isinf(x)) return result = mpfr_nan(), true;
      if (x == 0) return result = x, true;
      if (std::fabs(x) < power_of_two(-26))
        return result = round_exact(t, round_to_odd(x, -sign_of(x)), r), true;
      break;
  }
  ++tally.evaluations;
  const double decided = rounding_test_from_bits(t, evaluate(fn, x), r);
  if (!std::isnan(decided)) return result = decided, true;
  ++tally.fallbacks;
  return false;
}

/// One element of round_elementwise: the fast path when F and the operands allow it, else the
/// MPFR engine.
template <ElementwiseOperation op>
double elementwise(const Target& t, const Format& f, double x, double y, Rounding r) {
  if (t.fast && small_operand(x) && small_operand(y)) {
    if constexpr (op == ElementwiseOperation::add) return add_small(t, x, y, r);
    if constexpr (op == ElementwiseOperation::sub) return add_small(t, x, -y, r);
    if constexpr (op == ElementwiseOperation::mul) {
      return r == Rounding::nearest_even ? round_nearest_even(t, x * y) : round_exact(t, x * y, r);
    }
    if constexpr (op == ElementwiseOperation::div) {
      const double q = x / y;
      if (!std::isfinite(q) || q == 0 || !std::isfinite(x) || !std::isfinite(y))
        return round_exact(t, q, r);
      if (r == Rounding::nearest_even && in_format(t, x) && in_format(t, y))
        return round_nearest_even(t, q);
      return round_exact(t, round_to_odd(q, sign_of(std::fma(-q, y, x)) * sign_of(y)), r);
    }
  }
  const Value a = Value::from_double_exact(x), b = Value::from_double_exact(y);
  const Engine& e = mpfr_engine();
  switch (op) {
    case ElementwiseOperation::add:
      return e.add(f, a, b, r).narrow();
    case ElementwiseOperation::sub:
      return e.sub(f, a, b, r).narrow();
    case ElementwiseOperation::mul:
      return e.mul(f, a, b, r).narrow();
    case ElementwiseOperation::div:
      return e.div(f, a, b, r).narrow();
  }
  return 0;
}

/// Blocks of round_elementwise computed by the branch-free kernels and by the scalar path
/// (fast_engine_counters).
inline std::atomic<std::uint64_t> kernel_blocks{0};
inline std::atomic<std::uint64_t> scalar_blocks{0};

}  // namespace ropesim::numeric::fast_detail
