// IEEE 754 exception flags of numeric::Arithmetic (IEEE 754-2019 §7; numeric/flags.hpp).
//
// Two kinds of evidence:
//  * hand-derived cases at the thresholds (fp16, saturating fp16, fp8e4m3), each with its
//    derivation in the comment;
//  * an independent reference for every pair of finite fp8 values (e4m3, e5m2) in every rounding
//    mode: the exact rational result rounded to p bits with an unbounded exponent range by
//    integer arithmetic written here (not the engine), from which overflow, tininess and
//    inexactness follow by IEEE's definitions.
#include <gmpxx.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <optional>
#include <vector>

#include "numeric/arithmetic.hpp"
#include "numeric/engine.hpp"
#include "numeric/flags.hpp"
#include "numeric/format.hpp"
#include "numeric/format_properties.hpp"

namespace {

using ropesim::numeric::Arithmetic;
using ropesim::numeric::Flag;
using ropesim::numeric::Flags;
using ropesim::numeric::Format;
using ropesim::numeric::Rounding;
using ropesim::numeric::Value;

Value v(double d) { return Value::from_double_exact(d); }

Flags converted(const Format& f, Rounding r, double x, double* result = nullptr) {
  const Arithmetic a(f, r, ropesim::numeric::mpfr_engine());
  Flags flags;
  const Value out = a.convert(v(x), flags);
  if (result) *result = out.to_double();
  return flags;
}

const Flags kInexact = Flag::inexact;
const Flags kOverflow = Flags(Flag::overflow) | Flag::inexact;
const Flags kUnderflow = Flags(Flag::underflow) | Flag::inexact;

}  // namespace

TEST_CASE("overflow after rounding at fp16's threshold max + ulp/2 = 65520", "[numeric][flags]") {
  // fp16: max = 65504 = 2047·32, ulp(max) = 32. With an unbounded exponent, x in (65504, 65520)
  // rounds to 65504 (no overflow) and 65520 is the tie 65504 | 65536, which goes to the even
  // significand 65536 (2047 is odd): overflow.
  const Format fp16 = Format::fp16();
  const Format sat = ropesim::numeric::parse_format("p=11,e=5,overflow=saturate");
  double r = 0;
  CHECK(converted(fp16, Rounding::nearest_even, 65504) == Flags());
  CHECK(converted(fp16, Rounding::nearest_even, 65505, &r) == kInexact);
  CHECK(r == 65504);
  CHECK(converted(fp16, Rounding::nearest_even, 65519.5, &r) == kInexact);
  CHECK(converted(fp16, Rounding::nearest_even, 65520, &r) == kOverflow);
  CHECK(std::isinf(r));
  // Saturating fp16 delivers max but flags the same way (it used to flag from 65505).
  CHECK(converted(sat, Rounding::nearest_even, 65505, &r) == kInexact);
  CHECK(r == 65504);
  CHECK(converted(sat, Rounding::nearest_even, 65519.5) == kInexact);
  CHECK(converted(sat, Rounding::nearest_even, 65520, &r) == kOverflow);
  CHECK(r == 65504);
  CHECK(converted(sat, Rounding::nearest_even, 1e9) == kOverflow);
}

TEST_CASE("overflow after rounding in the directed modes", "[numeric][flags]") {
  // Toward zero, x in (max, 2^16) rounds to max even with an unbounded exponent: no overflow;
  // from 2^16 = max + ulp on it rounds beyond max. Away from zero, anything above max does.
  const Format fp16 = Format::fp16();
  double r = 0;
  CHECK(converted(fp16, Rounding::toward_zero, 65535, &r) == kInexact);
  CHECK(r == 65504);
  CHECK(converted(fp16, Rounding::toward_zero, 65536, &r) == kOverflow);
  CHECK(r == 65504);
  CHECK(converted(fp16, Rounding::downward, 65535) == kInexact);
  CHECK(converted(fp16, Rounding::downward, -65535, &r) == kOverflow);
  CHECK(r == -HUGE_VAL);
  CHECK(converted(fp16, Rounding::upward, 65504.5, &r) == kOverflow);
  CHECK(r == HUGE_VAL);
  CHECK(converted(fp16, Rounding::upward, -65535, &r) == kInexact);
  CHECK(r == -65504);
  CHECK(converted(fp16, Rounding::nearest_away, 65519.5) == kInexact);
  CHECK(converted(fp16, Rounding::nearest_away, 65520) == kOverflow);
}

TEST_CASE("fp8e4m3: 449 rounds to 448 and does not overflow; the tie 464 goes to even 448",
          "[numeric][flags]") {
  // E4M3 (p = 4): max = 448 = 1.110b·2^8 = 14·32, the next 4-bit number is 480 = 15·32. The tie
  // 464 goes to the even significand 14, i.e. 448: no overflow under nearest-even; under
  // nearest-away it goes to 480: overflow. 465 > 464 overflows in both.
  const Format e4m3 = Format::fp8e4m3();
  double r = 0;
  CHECK(converted(e4m3, Rounding::nearest_even, 449, &r) == kInexact);
  CHECK(r == 448);
  CHECK(converted(e4m3, Rounding::nearest_even, 464, &r) == kInexact);
  CHECK(r == 448);
  CHECK(converted(e4m3, Rounding::nearest_even, 465, &r) == kOverflow);
  CHECK(r == 448);
  CHECK(converted(e4m3, Rounding::nearest_away, 464) == kOverflow);
  CHECK(converted(e4m3, Rounding::toward_zero, 479) == kInexact);
  CHECK(converted(e4m3, Rounding::toward_zero, 480) == kOverflow);
}

TEST_CASE("underflow is tininess after rounding, and needs inexactness", "[numeric][flags]") {
  // fp16: 2^emin = 2^-14, subnormal quantum 2^-24, the largest 11-bit number below 2^-14 is
  // P = 2^-14 − 2^-25 and the midpoint between P and 2^-14 is 2^-14 − 2^-26.
  const Format fp16 = Format::fp16();
  double r = 0;
  // exact subnormal: no flag
  CHECK(converted(fp16, Rounding::nearest_even, std::ldexp(3, -24)) == Flags());
  // 3·2^-26 is not on the subnormal grid: tiny and inexact
  CHECK(converted(fp16, Rounding::nearest_even, std::ldexp(3, -26), &r) == kUnderflow);
  CHECK(r == std::ldexp(1, -24));
  // P itself is an 11-bit number below 2^-14 (tiny after rounding), but F delivers 2^-14
  // (P is the tie 1023.5·2^-24, which goes to the even 1024·2^-24): underflow although the
  // delivered result is normal.
  CHECK(converted(fp16, Rounding::nearest_even, std::ldexp(1, -14) - std::ldexp(1, -25), &r) ==
        kUnderflow);
  CHECK(r == std::ldexp(1, -14));
  // the midpoint between P and 2^-14 rounds up to 2^-14 with an unbounded exponent: not tiny
  CHECK(converted(fp16, Rounding::nearest_even, std::ldexp(1, -14) - std::ldexp(1, -26), &r) ==
        kInexact);
  CHECK(r == std::ldexp(1, -14));
  // toward zero it is tiny
  CHECK(converted(fp16, Rounding::toward_zero, std::ldexp(1, -14) - std::ldexp(1, -26)) ==
        kUnderflow);
  // a product that underflows to zero
  const Arithmetic a(fp16, Rounding::nearest_even, ropesim::numeric::mpfr_engine());
  Flags flags;
  const Value z = a.mul(v(std::ldexp(1, -14)), v(std::ldexp(1, -14)), flags);
  CHECK(z.is_zero());
  CHECK(flags == kUnderflow);
}

TEST_CASE("invalid, division by zero and inexact of each operation", "[numeric][flags]") {
  const Arithmetic a(Format::fp16(), Rounding::nearest_even, ropesim::numeric::mpfr_engine());
  const Value inf = v(HUGE_VAL), nan = v(std::nan(""));
  auto flags_of = [](auto&& op) {
    Flags f;
    op(f);
    return f;
  };
  CHECK(flags_of([&](Flags& f) { a.sub(inf, inf, f); }) == Flag::invalid);
  CHECK(flags_of([&](Flags& f) { a.mul(v(0), inf, f); }) == Flag::invalid);
  CHECK(flags_of([&](Flags& f) { a.div(v(0), v(0), f); }) == Flag::invalid);
  CHECK(flags_of([&](Flags& f) { a.div(inf, inf, f); }) == Flag::invalid);
  CHECK(flags_of([&](Flags& f) { a.sqrt(v(-1), f); }) == Flag::invalid);
  CHECK(flags_of([&](Flags& f) { a.log(v(-1), f); }) == Flag::invalid);
  CHECK(flags_of([&](Flags& f) { a.cos(inf, f); }) == Flag::invalid);
  CHECK(flags_of([&](Flags& f) { a.add(nan, v(1), f); }) == Flags());  // quiet NaN
  CHECK(flags_of([&](Flags& f) { a.div(v(1), v(0), f); }) == Flag::division_by_zero);
  CHECK(flags_of([&](Flags& f) { a.log(v(0), f); }) == Flag::division_by_zero);
  CHECK(flags_of([&](Flags& f) { a.div(inf, v(0), f); }) == Flags());  // ∞/0 = ∞ exactly
  // 1 + 2^-11 is the tie between 1 and 1 + 2^-10 in fp16; 1 + 2^-10 is exact
  CHECK(flags_of([&](Flags& f) { a.add(v(1), v(std::ldexp(1, -11)), f); }) == kInexact);
  CHECK(flags_of([&](Flags& f) { a.add(v(1), v(std::ldexp(1, -10)), f); }) == Flags());
  CHECK(flags_of([&](Flags& f) { a.div(v(1), v(3), f); }) == kInexact);
  CHECK(flags_of([&](Flags& f) { a.div(v(1), v(4), f); }) == Flags());
  CHECK(flags_of([&](Flags& f) { a.sqrt(v(4), f); }) == Flags());
  CHECK(flags_of([&](Flags& f) { a.sqrt(v(2), f); }) == kInexact);
  CHECK(flags_of([&](Flags& f) { a.exp(v(0), f); }) == Flags());
  CHECK(flags_of([&](Flags& f) { a.exp(v(1), f); }) == kInexact);
  CHECK(flags_of([&](Flags& f) { a.log(v(1), f); }) == Flags());
  CHECK(flags_of([&](Flags& f) { a.cos(v(0), f); }) == Flags());
  CHECK(flags_of([&](Flags& f) { a.sin(v(-0.0), f); }) == Flags());
  CHECK(flags_of([&](Flags& f) { a.fma(v(3), v(5), v(-15), f); }) == Flags());
  CHECK(flags_of([&](Flags& f) {
          a.fma(v(1 + std::ldexp(1, -10)), v(1 + std::ldexp(1, -10)), v(0), f);
        }) == kInexact);  // 1 + 2^-9 + 2^-20
  // exp near fp16's overflow threshold ln 65520 = 11.0901…: e^11.0859375 = 65247.1 (no
  // overflow), e^11.09375 = 65758.9 (overflow; Python's math.exp)
  CHECK(flags_of([&](Flags& f) { a.exp(v(11.0859375), f); }) == kInexact);
  CHECK(flags_of([&](Flags& f) { a.exp(v(11.09375), f); }) == kOverflow);
  // e^-17.5 = 2.5e-8 lies below the smallest subnormal 2^-24 = 6.0e-8 (rounds to 0 or 2^-24)
  CHECK(flags_of([&](Flags& f) { a.exp(v(-17.5), f); }) == kUnderflow);
  // pow: 2^3 exact, 2^0.5 not
  CHECK(flags_of([&](Flags& f) { a.pow(v(2), v(3), f); }) == Flags());
  CHECK(flags_of([&](Flags& f) { a.pow(v(2), v(0.5), f); }) == kInexact);
  CHECK(ropesim::numeric::to_string(kOverflow) == "overflow,inexact");
}

namespace {

/// |q| rounded to p significant bits with an unbounded exponent range, in mode r (q ≠ 0),
/// by integer arithmetic: q = m·2^s with 2^(p-1) ≤ |m| < 2^p for the integer part m.
mpq_class round_unbounded(const mpq_class& q, int p, Rounding r) {
  const bool negative = q < 0;
  mpq_class a = abs(q);
  long s = 0;
  while (a >= mpq_class(mpz_class(1) << p)) {
    a /= 2;
    ++s;
  }
  while (a < mpq_class(mpz_class(1) << (p - 1))) {
    a *= 2;
    --s;
  }
  mpz_class m = a.get_num() / a.get_den();  // floor
  const mpq_class frac = a - mpq_class(m);
  bool up = false;
  if (frac != 0) {
    switch (r) {
      case Rounding::nearest_even:
        up = frac > mpq_class(1, 2) || (frac == mpq_class(1, 2) && mpz_odd_p(m.get_mpz_t()));
        break;
      case Rounding::nearest_away:
        up = frac >= mpq_class(1, 2);
        break;
      case Rounding::toward_zero:
        up = false;
        break;
      case Rounding::upward:
        up = !negative;
        break;
      case Rounding::downward:
        up = negative;
        break;
    }
  }
  if (up) m += 1;
  mpq_class out(m);
  if (s >= 0) {
    out *= mpq_class(mpz_class(1) << s);
  } else {
    out /= mpq_class(mpz_class(1) << -s);
  }
  return negative ? mpq_class(-out) : out;
}

/// The IEEE flags of delivering `result` for the exact rational x, from the definitions.
Flags reference_flags(const Format& f, Rounding r, const mpq_class& x, const Value& result) {
  if (result.is_finite() && ropesim::numeric::exact_rational(result) == x) return Flags();
  Flags flags = Flag::inexact;
  if (x == 0) return flags;
  const mpq_class y = abs(round_unbounded(x, f.precision, r));
  const mpq_class max = ropesim::numeric::exact_rational(ropesim::numeric::max_finite(f));
  if (y > max) flags |= Flag::overflow;
  mpq_class min_normal(1);
  for (int k = 0; k < -f.emin; ++k) min_normal /= 2;
  if (y < min_normal) flags |= Flag::underflow;
  return flags;
}

}  // namespace

TEST_CASE("flags of + − × ÷ on every pair of fp8 values agree with IEEE's definitions",
          "[numeric][flags][bulk]") {
  for (const Format& f : {Format::fp8e4m3(), Format::fp8e5m2()}) {
    std::vector<Value> values;
    ropesim::numeric::for_each_finite_value(f, [&](const Value& x) { values.push_back(x); });
    for (Rounding r : {Rounding::nearest_even, Rounding::nearest_away, Rounding::toward_zero,
                       Rounding::upward, Rounding::downward}) {
      const Arithmetic a(f, r, ropesim::numeric::mpfr_engine());
      std::size_t mismatches = 0, overflows = 0, underflows = 0;
      for (const Value& x : values) {
        const mpq_class qx = ropesim::numeric::exact_rational(x);
        for (const Value& y : values) {
          const mpq_class qy = ropesim::numeric::exact_rational(y);
          for (int op = 0; op < 4; ++op) {
            if (op == 3 && y.is_zero()) continue;
            Flags got;
            Value out;
            mpq_class exact;
            switch (op) {
              case 0:
                out = a.add(x, y, got);
                exact = qx + qy;
                break;
              case 1:
                out = a.sub(x, y, got);
                exact = qx - qy;
                break;
              case 2:
                out = a.mul(x, y, got);
                exact = qx * qy;
                break;
              default:
                out = a.div(x, y, got);
                exact = qx / qy;
                break;
            }
            const Flags want = reference_flags(f, r, exact, out);
            if (want.test(Flag::overflow)) ++overflows;
            if (want.test(Flag::underflow)) ++underflows;
            if (got != want && ++mismatches <= 5) {
              UNSCOPED_INFO(f.name << " " << ropesim::numeric::to_string(r) << " op " << op << " "
                                   << x.to_double() << ", " << y.to_double() << ": got '"
                                   << ropesim::numeric::to_string(got) << "' want '"
                                   << ropesim::numeric::to_string(want) << "'");
            }
          }
        }
      }
      CHECK(mismatches == 0);
      // the sweep reaches both thresholds in every mode
      CHECK(overflows > 0);
      CHECK(underflows > 0);
    }
  }
}

TEST_CASE("flag bytes: overflow is 1 and invalid (NaN) is 2, as Python's rotation_table documents",
          "[flags]") {
  // docs/PYTHON.md: rotation_table(..., flags=True) returns "a (positions,) uint8 array
  // (1 overflow, 2 NaN)"; the realisations store Flags::bits() there.
  CHECK(Flags(Flag::overflow).bits() == 1);
  CHECK(Flags(Flag::invalid).bits() == 2);
  CHECK((Flags(Flag::overflow) | Flag::invalid).bits() == 3);
  // the other three flags take the remaining bits, each its own
  CHECK((Flags(Flag::division_by_zero) | Flag::underflow | Flag::inexact).bits() == 4 + 8 + 16);
  // from_bits reads a stored byte back; bits above the five flags are dropped
  CHECK(Flags::from_bits(3) == (Flags(Flag::overflow) | Flag::invalid));
  CHECK(Flags::from_bits(2).test(Flag::invalid));
  CHECK_FALSE(Flags::from_bits(2).test(Flag::overflow));
  CHECK(Flags::from_bits(0xe0) == Flags());
  // a NaN from fp16's cos(+inf) raises invalid: the realisations' "NaN" bit
  const Arithmetic a(Format::fp16(), Rounding::nearest_even, ropesim::numeric::mpfr_engine());
  Flags raised;
  CHECK(a.cos(v(INFINITY), raised).is_nan());
  CHECK(raised.bits() == 2);
}
