// The fast exact engine's array forms (NUMERIC §2): round_elementwise (+ − × ÷ in blocks
// through branch-free kernels, argued at "Array kernels" below, any refused block redone by
// the scalar path) and round_elementwise_unary (the transcendental path of
// numeric/fast_engine_scalar.hpp per element, its counters summed locally and added once per
// call).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/error.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/fast_engine_scalar.hpp"

namespace ropesim::numeric {

using namespace fast_detail;

namespace {

// ---- Array kernels (round_elementwise) ----------------------------------------------------
//
// Blocks of kBlock elements go through a loop without branches written with GCC/Clang vector
// extensions over two doubles (one SSE2 register: baseline x86-64, no -march flag; other
// targets get the compiler's generic lowering). Only operations SSE2 has are used: double
// arithmetic and compares (which give all-ones/zero lane masks), 64-bit integer add, and, or.
// (GCC 12 does not auto-vectorise this loop for SSE2: converting a double compare into a
// 64-bit integer flag needs SSE4.1 there.) Each element computes its result and ORs a flag
// into `bad` when it is outside the kernel's domain; a block whose flag is set is recomputed
// by the scalar path (`elementwise`, fast_engine_scalar.hpp), which is the reference and handles
// everything. In the domain the kernel's result equals the scalar path's:
//
// Domain (all modes): both operands are ±0 or elements of F in [2^emin, max_finite] (low
// 53 − p significand bits zero, checked by OR-ing the bits; magnitude by double compares:
// NaN and ±inf fail them), so they are small operands and, for nearest-even, the innocuous
// double rounding applies (fast_engine_scalar.hpp). Results beyond max finite after rounding
// (overflow, saturation, reserved codes) and, except for nearest-even with subnormals, non-zero
// results below 2^emin are flagged.
//
// Round-to-nearest-even, + − × ÷: r = RN53(a ∘ b); q = max(e_r, emin) − p + 1 taken from the
// exponent field of max(|r|, 2^emin) by an integer add; M = 1.5·2^(q+52) and (|r| + M) − M is
// |r| rounded to a multiple of 2^q, ties to even (round_exact's argument: |r| < 2^(q+p) ≤
// 2^(q+51)); the sign is OR-ed back. r = ±0 gives ±0 (r's sign is IEEE's). This is
// round_nearest_even without its branches.
//
// Nearest-away and directed modes, + − × ÷: o = RO53(a ∘ b) (fast_engine_scalar.hpp): the product
// is exact; for ± with s = RN53(a ± b) and TwoSum's exact error e, RZ53 is s − 1 step (in magnitude
// bits) when e ≠ 0 has the sign opposite to s, else s, and o = RZ53 | (e ≠ 0) (the odd one of the
// two neighbours, or s when exact). Exact zero sums get IEEE 754 §6.3's sign (zero_sum): +0 unless
// both operands are −0 — what RN hardware gives — except under downward, where it is −0 unless both
// are +0; there s is computed as −((−a) + (−b)), the same value for non-zero sums and the downward
// sign for zero ones. For ÷, q = RN53(a/b) and the sign of the remainder r = a − q·b (exact and a
// double, fast_engine_scalar.hpp) without an fma (baseline x86-64 has it only as a slow libm call):
// q = q_hi + q_lo with q_hi = q cut to its top 26 bits and q_lo = q − q_hi (exact, ≤ 27 bits);
// q_hi·b (26 + 25 bits) and q_lo·b (27 + 25 bits) are exact (Dekker's splitting, Handbook of FP
// Arithmetic §4.4.2; no underflow: |q_lo·b| ≥ ulp(q)·quantum(b) ≥ |a|·2^-78 ≥ 2^-502); a − q_hi·b
// is exact by Sterbenz's lemma (q_hi·b = a·(1 + δ), |δ| < 2^-24), and RN of (a − q_hi·b) − q_lo·b
// is the exact remainder (a double) — in any case of its sign. a/b − q = r/b, so q is above the
// exact quotient in magnitude iff r ≠ 0 has the sign opposite to a. With |o| ≥ 2^emin, F's quantum
// is 2^(53−p) steps of o's significand: toward zero clears the low 53 − p bits; away from zero
// (upward for o > 0, downward for o < 0) adds one quantum when those bits were not all zero (a
// carry into the exponent field gives the next binade's power of two, as it should); nearest-away
// adds half a quantum and clears them.

constexpr std::size_t kBlock = 256;
constexpr std::uint64_t kExponentMask = std::uint64_t{0x7ff} << 52;

using Doubles = double __attribute__((vector_size(16)));
using Bits = std::uint64_t __attribute__((vector_size(16)));
constexpr std::size_t kLanes = 2;

[[gnu::always_inline]] inline Doubles splat(double d) { return Doubles{d, d}; }
[[gnu::always_inline]] inline Bits splat_bits(std::uint64_t b) { return Bits{b, b}; }
[[gnu::always_inline]] inline Bits bits_of(Doubles d) { return std::bit_cast<Bits>(d); }
[[gnu::always_inline]] inline Doubles doubles_of(Bits b) { return std::bit_cast<Doubles>(b); }
/// A lane mask (all ones where true) from a comparison of Doubles.
template <class Mask>
[[gnu::always_inline]] inline Bits mask_of(Mask m) {
  return std::bit_cast<Bits>(m);
}
/// Lane-wise a < b ? a : b, and b where either is NaN (x86 MINPD; one instruction with SSE2).
[[gnu::always_inline]] inline Doubles minimum(Doubles a, Doubles b) {
#if defined(__SSE2__)
  return _mm_min_pd(a, b);
#else
  const Bits less = mask_of(a < b);
  return doubles_of((less & bits_of(a)) | (~less & bits_of(b)));
#endif
}
/// Lane-wise a > b ? a : b, and b where either is NaN (x86 MAXPD).
[[gnu::always_inline]] inline Doubles maximum(Doubles a, Doubles b) {
#if defined(__SSE2__)
  return _mm_max_pd(a, b);
#else
  const Bits greater = mask_of(a > b);
  return doubles_of((greater & bits_of(a)) | (~greater & bits_of(b)));
#endif
}

/// F's constants for the array kernels, one per lane.
struct KernelConstants {
  Doubles max_finite{};
  Doubles below_min_normal{};  // the double just below 2^emin
  Doubles zero{};
  Bits low_mask{};   // 2^(53−p) − 1
  Bits high_mask{};  // ~low_mask
  Bits unit{};       // 2^(53−p): one quantum of F in significand steps
  Bits half{};       // 2^(52−p)
  Bits magic_offset{};  // (53 − p) << 52 | 2^51: exponent field of 2^e ↦ bits of 1.5·2^(e−p+1+52)
  Bits sign{};          // the sign bit
  Bits magnitude{};      // all bits but the sign
  Bits exponent{};       // the exponent field
  Bits minus_one{};      // all ones: adding it subtracts 1
  Doubles min_normal{};  // 2^emin
  Bits split_mask{};     // clears the low 27 bits of a double's significand
};

KernelConstants kernel_constants(const Target& t) {
  KernelConstants c;
  c.max_finite = splat(t.max_finite);
  c.below_min_normal = splat(std::bit_cast<double>(std::bit_cast<std::uint64_t>(t.min_normal) - 1));
  c.zero = splat(0.0);
  c.low_mask = splat_bits(t.low_mask);
  c.high_mask = splat_bits(~t.low_mask);
  c.unit = splat_bits(t.low_mask + 1);
  c.half = splat_bits((t.low_mask + 1) >> 1);
  c.magic_offset =
      splat_bits((static_cast<std::uint64_t>(53 - t.precision) << 52) | (std::uint64_t{1} << 51));
  c.sign = splat_bits(kSignMask);
  c.magnitude = splat_bits(~kSignMask);
  c.exponent = splat_bits(kExponentMask);
  c.minus_one = splat_bits(~std::uint64_t{0});
  c.min_normal = splat(t.min_normal);
  c.split_mask = splat_bits(~((std::uint64_t{1} << 27) - 1));
  return c;
}

template <ElementwiseOperation op>
[[gnu::always_inline]] inline Doubles apply_binary64(Doubles x, Doubles y) {
  if constexpr (op == ElementwiseOperation::add) return x + y;
  if constexpr (op == ElementwiseOperation::sub) return x - y;
  if constexpr (op == ElementwiseOperation::mul) return x * y;
  return x / y;
}

[[gnu::always_inline]] inline Doubles load(const double* p) {
  Doubles v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(double* p, Doubles v) { std::memcpy(p, &v, sizeof v); }

/// The range checks of a block, accumulated lane-wise with few instructions:
///  * `low_bits`: OR of the operands' bits, masked at the end with low_mask (not in F when set);
///  * `smallest`: min over non-zero magnitudes m of pred(m) (the double just below m, from its
///    bits minus one; m = 0 gives a NaN, which minimum() ignores): every such m ≥ 2^emin iff
///    smallest > pred(2^emin), i.e. smallest ≥ below_min_normal... strictly: m ≥ 2^emin ⇔
///    pred(m) ≥ pred(2^emin);
///  * `largest`: max of the operands' magnitudes (NaN ignored: a NaN operand gives a NaN
///    result, which `ok` catches);
///  * `ok`: AND of per-lane conditions on the results (magnitude ≤ max_finite, false for NaN).
struct BlockChecks {
  Bits low_bits{};
  Doubles smallest{HUGE_VAL, HUGE_VAL};
  Doubles largest{};
  Bits ok{~std::uint64_t{0}, ~std::uint64_t{0}};

  /// Operand lanes x: ±0 or in [2^emin, max_finite] with zero bits below F's quantum.
  [[gnu::always_inline]] void operand(const KernelConstants& c, Doubles x) {
    const Bits xb = bits_of(x);
    low_bits |= xb;
    const Bits m = xb & c.magnitude;
    nonzero_at_least_min_normal(c, m);
    largest = maximum(doubles_of(m), largest);
  }
  /// Non-zero magnitude bits m must be ≥ 2^emin.
  [[gnu::always_inline]] void nonzero_at_least_min_normal(const KernelConstants& c, Bits m) {
    smallest = minimum(doubles_of(m + c.minus_one), smallest);
  }
  [[gnu::always_inline]] bool passed(const KernelConstants& c) const {
    const Bits good =
        ok & mask_of(smallest >= c.below_min_normal) & mask_of(largest <= c.max_finite);
    const Bits bad = ~good | (low_bits & c.low_mask);
    std::uint64_t folded = 0;
    for (std::size_t k = 0; k < kLanes; ++k) folded |= bad[k];
    return folded == 0;
  }
};

/// Nearest-even kernel over n ≤ kBlock elements, n a multiple of kLanes; false when the block
/// must be recomputed. `subnormals`: F has subnormals (non-zero results below 2^emin are then
/// rounded here, with the quantum 2^(emin−p+1); otherwise they are flagged).
template <ElementwiseOperation op, bool subnormals>
bool nearest_even_block(const KernelConstants& constants, const double* a, const double* b,
                        double* out, std::size_t n) {
  const KernelConstants c =
      constants;  // local copies: `out` could alias memory the compiler must reload
  BlockChecks checks;
  for (std::size_t i = 0; i < n; i += kLanes) {
    const Doubles x = load(a + i), y = load(b + i);
    const Doubles r = apply_binary64<op>(x, y);
    checks.operand(c, x);
    checks.operand(c, y);
    const Bits rb = bits_of(r);
    const Bits magnitude_bits = rb & c.magnitude;
    const Doubles ar = doubles_of(magnitude_bits);
    if constexpr (!subnormals) checks.nonzero_at_least_min_normal(c, magnitude_bits);
    // 2^max(e, emin) (NaN: 2^emin, flagged below)
    const Doubles clamped = maximum(ar, c.min_normal);
    const Doubles m = doubles_of((bits_of(clamped) & c.exponent) + c.magic_offset);
    const Doubles magnitude = (ar + m) - m;
    checks.ok &= mask_of(magnitude <= c.max_finite);
    store(out + i, doubles_of(bits_of(magnitude) | (rb & c.sign)));
  }
  return checks.passed(c);
}

/// Nearest-away and directed kernel for + − × ÷ over n ≤ kBlock elements, n a multiple of
/// kLanes; false when the block must be recomputed.
template <ElementwiseOperation op, Rounding mode>
bool directed_block(const KernelConstants& constants, const double* a, const double* b, double* out,
                    std::size_t n) {
  static_assert(mode != Rounding::nearest_even);
  constexpr bool sum = op == ElementwiseOperation::add || op == ElementwiseOperation::sub;
  const KernelConstants c = constants;
  BlockChecks checks;
  for (std::size_t i = 0; i < n; i += kLanes) {
    const Doubles x = load(a + i);
    const Doubles y = op == ElementwiseOperation::sub ? -load(b + i) : load(b + i);
    checks.operand(c, x);
    checks.operand(c, y);
    Doubles s;  // RN53 of the exact result (with IEEE's sign for exact zero sums in `mode`)
    if constexpr (op == ElementwiseOperation::mul) {
      s = x * y;
    } else if constexpr (op == ElementwiseOperation::div) {
      s = x / y;
    } else if constexpr (mode == Rounding::downward) {
      s = -((-x) + (-y));
    } else {
      s = x + y;
    }
    Bits odd = bits_of(s);  // RO53 of the exact result
    if constexpr (sum) {
      const Doubles bv = s - x;  // TwoSum (Knuth): s + e == x + y exactly
      const Doubles e = (x - (s - bv)) + (y - bv);
      const Bits inexact = mask_of(e != c.zero);
      const Bits toward_zero =
          (mask_of(s > c.zero) ^ mask_of(e > c.zero)) & inexact;  // e ≠ 0 opposite to s
      odd = (odd + toward_zero) | (inexact & splat_bits(1));      // + all-ones = − 1
    } else if constexpr (op == ElementwiseOperation::div) {
      const Doubles high = doubles_of(bits_of(s) & c.split_mask);  // s's top 26 bits
      const Doubles low = s - high;
      const Doubles remainder = (x - high * y) - low * y;  // x − s·y (sign exact; see above)
      const Bits inexact = mask_of(remainder != c.zero);
      const Bits toward_zero = (mask_of(remainder > c.zero) ^ mask_of(x > c.zero)) & inexact;
      odd = (odd + toward_zero) | (inexact & splat_bits(1));
    }
    const Bits sign = odd & c.sign;
    const Bits magnitude_bits = odd & c.magnitude;
    checks.nonzero_at_least_min_normal(c, magnitude_bits);
    Bits rounded;
    if constexpr (mode == Rounding::nearest_away) {
      rounded = (magnitude_bits + c.half) & c.high_mask;
    } else {
      rounded = magnitude_bits & c.high_mask;
      if constexpr (mode != Rounding::toward_zero) {
        const Bits away = mode == Rounding::upward ? mask_of(s > c.zero) : mask_of(s < c.zero);
        const Bits inexact_in_f = mask_of(doubles_of(rounded) != doubles_of(magnitude_bits));
        rounded += c.unit & away & inexact_in_f;
      }
    }
    checks.ok &= mask_of(doubles_of(rounded) <= c.max_finite);
    store(out + i, doubles_of(rounded | sign));
  }
  return checks.passed(c);
}

template <ElementwiseOperation op>
using BlockKernel = bool (*)(const KernelConstants&, const double*, const double*, double*,
                             std::size_t);

/// The kernel for (op, r), or nullptr when the scalar path does everything.
template <ElementwiseOperation op>
BlockKernel<op> kernel_for(Rounding r, bool subnormals) {
  switch (r) {
    case Rounding::nearest_even:
      return subnormals ? &nearest_even_block<op, true> : &nearest_even_block<op, false>;
    case Rounding::nearest_away:
      return &directed_block<op, Rounding::nearest_away>;
    case Rounding::toward_zero:
      return &directed_block<op, Rounding::toward_zero>;
    case Rounding::upward:
      return &directed_block<op, Rounding::upward>;
    case Rounding::downward:
      return &directed_block<op, Rounding::downward>;
  }
  return nullptr;
}

template <ElementwiseOperation op>
void elementwise_loop(const Format& f, std::span<const double> a, std::span<const double> b,
                      std::span<double> out, Rounding r) {
  const Target t = target_of(f);
  const std::size_t n = out.size();
  const BlockKernel<op> kernel = t.fast ? kernel_for<op>(r, t.subnormals) : nullptr;
  const KernelConstants c = kernel_constants(t);
  // out may be a or b: the kernel then writes to `buffer` and the block is copied once decided
  const bool aliased = out.data() == a.data() || out.data() == b.data();
  double buffer[kBlock];
  std::uint64_t by_kernel = 0, by_scalar = 0;
  for (std::size_t start = 0; start < n; start += kBlock) {
    const std::size_t length = std::min(kBlock, n - start);
    const double* pa = a.data() + start;
    const double* pb = b.data() + start;
    double* po = out.data() + start;
    const std::size_t vectors =
        length - length % kLanes;  // the last < kLanes elements: scalar path
    if (kernel != nullptr && vectors != 0 && kernel(c, pa, pb, aliased ? buffer : po, vectors)) {
      if (aliased) std::copy(buffer, buffer + vectors, po);
      for (std::size_t i = vectors; i < length; ++i) po[i] = elementwise<op>(t, f, pa[i], pb[i], r);
      ++by_kernel;
      continue;
    }
    for (std::size_t i = 0; i < length; ++i) po[i] = elementwise<op>(t, f, pa[i], pb[i], r);
    ++by_scalar;
  }
  if (by_kernel != 0) kernel_blocks.fetch_add(by_kernel, std::memory_order_relaxed);
  if (by_scalar != 0) scalar_blocks.fetch_add(by_scalar, std::memory_order_relaxed);
}

/// True when the memory of x and y overlaps without being the same array.
bool partial_overlap(std::span<const double> x, std::span<const double> y) {
  if (x.empty() || y.empty() || x.data() == y.data()) return false;
  const auto x0 = reinterpret_cast<std::uintptr_t>(x.data()),
             y0 = reinterpret_cast<std::uintptr_t>(y.data());
  return x0 < y0 + y.size_bytes() && y0 < x0 + x.size_bytes();
}

}  // namespace

void round_elementwise(const Format& f, ElementwiseOperation op, std::span<const double> a,
                       std::span<const double> b, std::span<double> out, Rounding r) {
  if (a.size() != b.size() || a.size() != out.size()) {
    throw InvalidArgument("round_elementwise: the arrays have lengths " + std::to_string(a.size()) +
                          ", " + std::to_string(b.size()) + " and " + std::to_string(out.size()) +
                          "; they must be equal");
  }
  if (!f.fits_double()) {
    throw InvalidArgument("round_elementwise: format " + f.name +
                          " does not fit in a double (accepted: p <= 53 "
                          "and binary64's exponent range)");
  }
  if (partial_overlap(out, a) || partial_overlap(out, b)) {
    throw InvalidArgument(
        "round_elementwise: out overlaps a or b without being the same array (accepted: "
        "separate arrays, or out equal to a or b)");
  }
  switch (op) {
    case ElementwiseOperation::add:
      elementwise_loop<ElementwiseOperation::add>(f, a, b, out, r);
      break;
    case ElementwiseOperation::sub:
      elementwise_loop<ElementwiseOperation::sub>(f, a, b, out, r);
      break;
    case ElementwiseOperation::mul:
      elementwise_loop<ElementwiseOperation::mul>(f, a, b, out, r);
      break;
    case ElementwiseOperation::div:
      elementwise_loop<ElementwiseOperation::div>(f, a, b, out, r);
      break;
  }
}

namespace {

Function function_of(UnaryFunction fn) {
  switch (fn) {
    case UnaryFunction::exp:
      return Function::exp;
    case UnaryFunction::log:
      return Function::log;
    case UnaryFunction::cos:
      return Function::cos;
    case UnaryFunction::sin:
      return Function::sin;
  }
  return Function::exp;
}

double reference_unary(Function fn, const Format& f, double x, Rounding r) {
  const Value v = Value::from_double_exact(x);
  const Engine& e = mpfr_engine();
  switch (fn) {
    case Function::exp:
      return e.exp(f, v, r).narrow();
    case Function::log:
      return e.log(f, v, r).narrow();
    case Function::cos:
      return e.cos(f, v, r).narrow();
    case Function::sin:
      return e.sin(f, v, r).narrow();
  }
  return 0;
}

template <Function fn>
void unary_loop(const Target& t, const Format& f, std::span<const double> x, std::span<double> out,
                Rounding r, Tally& tally) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double xi = x[i];
    double result = 0;
    if (!t.fast || !small_operand(xi) || !transcendental_small(t, fn, xi, r, result, tally)) {
      result = reference_unary(fn, f, xi, r);
    }
    out[i] = result;
  }
}

}  // namespace

void round_elementwise_unary(const Format& f, UnaryFunction fn, std::span<const double> x,
                             std::span<double> out, Rounding r) {
  if (x.size() != out.size()) {
    throw InvalidArgument("round_elementwise_unary: the arrays have lengths " +
                          std::to_string(x.size()) + " and " + std::to_string(out.size()) +
                          "; they must be equal");
  }
  if (!f.fits_double()) {
    throw InvalidArgument("round_elementwise_unary: format " + f.name +
                          " does not fit in a double (accepted: p <= "
                          "53 and binary64's exponent range)");
  }
  if (partial_overlap(out, x)) {
    throw InvalidArgument(
        "round_elementwise_unary: out overlaps x without being the same array (accepted: "
        "separate arrays, or out equal to x)");
  }
  const Target t = cached_target(f);
  Tally tally;
  switch (function_of(fn)) {
    case Function::exp:
      unary_loop<Function::exp>(t, f, x, out, r, tally);
      break;
    case Function::log:
      unary_loop<Function::log>(t, f, x, out, r, tally);
      break;
    case Function::cos:
      unary_loop<Function::cos>(t, f, x, out, r, tally);
      break;
    case Function::sin:
      unary_loop<Function::sin>(t, f, x, out, r, tally);
      break;
  }
  if (tally.evaluations != 0)
    transcendental_evaluations.fetch_add(tally.evaluations, std::memory_order_relaxed);
  if (tally.fallbacks != 0)
    transcendental_fallbacks.fetch_add(tally.fallbacks, std::memory_order_relaxed);
}

}  // namespace ropesim::numeric
