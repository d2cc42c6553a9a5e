// Hand-derived unit tests of the engines' arithmetic: signed zeros (IEEE 754-2019 §6.3),
// overflow to infinity vs saturation, special values, the oracle interface round_real,
// from_mpfr, Value's own contract, and a few transcendental values computed by hand.
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/value.hpp"
#include "tests/numeric/reference_rounding.hpp"
#include "tests/numeric/test_support.hpp"

namespace {

using namespace numeric_test;
using ropesim::numeric::parse_format;

constexpr double inf = std::numeric_limits<double>::infinity();
const double nan_value = std::numeric_limits<double>::quiet_NaN();

Value v(double d) { return Value::from_double_exact(d); }

#define CHECK_SAME(value_expr, expected_double)                                               \
  do {                                                                                        \
    const Value check_same_v_ = (value_expr);                                                 \
    const double check_same_e_ = (expected_double);                                           \
    INFO(#value_expr << " = " << show(check_same_v_) << ", expected " << hex(check_same_e_)); \
    CHECK((!check_same_v_.is_wide() && same_double(check_same_v_.narrow(), check_same_e_)));  \
  } while (false)

}  // namespace

TEST_CASE("signed zeros follow IEEE 754 §6.3", "[numeric][engine][zero]") {
  const Format formats[] = {Format::fp32(), Format::fp16(), Format::fp8e4m3(), Format::bf16()};
  for (const Engine* e : engines()) {
    for (const Format& f : formats) {
      for (Rounding r : all_modes) {
        INFO(e->name() << " " << f.name << " " << mode_name(r));
        const bool down = r == Rounding::downward;
        const double exact_zero = down ? -0.0 : 0.0;  // x + (-x): +0, -0 under downward
        CHECK_SAME(e->add(f, v(0.0), v(-0.0), r), exact_zero);
        CHECK_SAME(e->add(f, v(-0.0), v(0.0), r), exact_zero);
        CHECK_SAME(e->add(f, v(-0.0), v(-0.0), r), -0.0);  // x + x has the sign of x
        CHECK_SAME(e->add(f, v(0.0), v(0.0), r), 0.0);
        CHECK_SAME(e->add(f, v(1.5), v(-1.5), r), exact_zero);
        CHECK_SAME(e->sub(f, v(1.5), v(1.5), r), exact_zero);
        CHECK_SAME(e->sub(f, v(0.0), v(0.0), r), exact_zero);  // +0 + (-0)
        CHECK_SAME(e->sub(f, v(-0.0), v(0.0), r), -0.0);       // -0 + (-0)
        CHECK_SAME(e->sub(f, v(0.0), v(-0.0), r), 0.0);        // +0 + (+0)
        CHECK_SAME(e->add(f, v(-2.0), v(0.0), r), -2.0);
        CHECK_SAME(e->mul(f, v(-0.0), v(3.0), r), -0.0);  // sign = xor of signs
        CHECK_SAME(e->mul(f, v(-2.0), v(0.0), r), -0.0);
        CHECK_SAME(e->mul(f, v(-0.0), v(-0.0), r), 0.0);
        CHECK_SAME(e->div(f, v(-0.0), v(5.0), r), -0.0);
        CHECK_SAME(e->div(f, v(0.0), v(-5.0), r), -0.0);
        CHECK_SAME(e->sqrt(f, v(-0.0), r), -0.0);  // √(-0) = -0
        CHECK_SAME(e->sqrt(f, v(0.0), r), 0.0);
        CHECK_SAME(e->convert(f, v(-0.0), r), -0.0);
        CHECK_SAME(e->from_rational(f, mpq_class(0), r), 0.0);
        CHECK_SAME(e->from_integer(f, mpz_class(0), r), 0.0);
        // fma: (+0)(-1) = -0, then -0 + (+0) = +0 (-0 downward); -0 + (-0) = -0;
        // 2·3 - 6 = exact zero of opposite-signed terms: +0 (-0 downward).
        CHECK_SAME(e->fma(f, v(0.0), v(-1.0), v(0.0), r), exact_zero);
        CHECK_SAME(e->fma(f, v(0.0), v(-1.0), v(-0.0), r), -0.0);
        CHECK_SAME(e->fma(f, v(-0.0), v(-1.0), v(0.0), r), 0.0);
        CHECK_SAME(e->fma(f, v(2.0), v(3.0), v(-6.0), r), exact_zero);
        CHECK_SAME(e->fma(f, v(1.0), v(-0.0), v(-0.0), r), -0.0);
        // functions: log(1) = +0 in every mode; sin(±0) = ±0; exp(-inf) = +0
        CHECK_SAME(e->log(f, v(1.0), r), 0.0);
        CHECK_SAME(e->sin(f, v(-0.0), r), -0.0);
        CHECK_SAME(e->sin(f, v(0.0), r), 0.0);
        CHECK_SAME(e->cos(f, v(-0.0), r), 1.0);
        CHECK_SAME(e->exp(f, v(0.0), r), 1.0);
        CHECK_SAME(e->exp(f, v(-0.0), r), 1.0);
        const auto cs = e->cos_sin(f, v(-0.0), r);
        CHECK_SAME(cs.first, 1.0);
        CHECK_SAME(cs.second, -0.0);
      }
    }
    // a non-zero result that underflows keeps its sign (fp16: 2^-24 · 2^-2 = 2^-26 < 2^-25)
    const Format h = Format::fp16();
    const double tiny = std::ldexp(1, -24);
    CHECK_SAME(e->mul(h, v(-tiny), v(0.25), Rounding::nearest_even), -0.0);
    CHECK_SAME(e->mul(h, v(-tiny), v(0.25), Rounding::upward), -0.0);
    CHECK_SAME(e->mul(h, v(-tiny), v(0.25), Rounding::downward), -tiny);
    CHECK_SAME(e->mul(h, v(tiny), v(0.25), Rounding::upward), tiny);
    CHECK_SAME(e->mul(h, v(tiny), v(0.25), Rounding::toward_zero), 0.0);
    CHECK_SAME(e->div(h, v(-tiny), v(1024), Rounding::nearest_even), -0.0);
    CHECK_SAME(e->from_rational(h, mpq_class(-1, 1 << 30), Rounding::nearest_even), -0.0);
    // exp of a large negative argument underflows to +0 (RNE), to the smallest subnormal (RU)
    CHECK_SAME(e->exp(h, v(-20), Rounding::nearest_even), 0.0);  // e^-20 ≈ 2.06e-9 < 2^-25
    CHECK_SAME(e->exp(h, v(-20), Rounding::upward), tiny);
    CHECK_SAME(e->exp(h, v(-inf), Rounding::nearest_even), 0.0);
  }
}

TEST_CASE("special values: infinities and NaN", "[numeric][engine][special]") {
  const Format h = Format::fp16();
  for (const Engine* e : engines()) {
    INFO(e->name());
    const Rounding r = Rounding::nearest_even;
    CHECK_SAME(e->add(h, v(inf), v(1), r), inf);
    CHECK(e->add(h, v(inf), v(-inf), r).is_nan());
    CHECK(e->mul(h, v(0), v(inf), r).is_nan());
    CHECK_SAME(e->mul(h, v(-2), v(inf), r), -inf);
    CHECK_SAME(e->div(h, v(1), v(-inf), r), -0.0);  // f/inf = 0 (THEORY §1)
    CHECK_SAME(e->div(h, v(1), v(-0.0), r), -inf);
    CHECK_SAME(e->div(h, v(-1), v(0.0), r), -inf);
    CHECK(e->div(h, v(0), v(0), r).is_nan());
    CHECK(e->div(h, v(inf), v(inf), r).is_nan());
    CHECK(e->sqrt(h, v(-1), r).is_nan());
    CHECK(e->sqrt(h, v(-inf), r).is_nan());
    CHECK_SAME(e->sqrt(h, v(inf), r), inf);
    CHECK(e->fma(h, v(inf), v(0), v(1), r).is_nan());
    CHECK(e->fma(h, v(inf), v(1), v(-inf), r).is_nan());
    CHECK_SAME(e->fma(h, v(inf), v(1), v(inf), r), inf);
    CHECK_SAME(e->fma(h, v(1), v(1), v(-inf), r), -inf);
    CHECK(e->add(h, v(nan_value), v(1), r).is_nan());
    CHECK_SAME(e->exp(h, v(inf), r), inf);
    CHECK_SAME(e->exp(h, v(-inf), r), 0.0);  // exp(-inf) = 0 (THEORY §1)
    CHECK_SAME(e->log(h, v(0.0), r), -inf);
    CHECK_SAME(e->log(h, v(-0.0), r), -inf);
    CHECK(e->log(h, v(-1), r).is_nan());
    CHECK_SAME(e->log(h, v(inf), r), inf);
    CHECK(e->cos(h, v(inf), r).is_nan());  // THEORY §3 R2: cos(inf) = NaN
    CHECK(e->sin(h, v(-inf), r).is_nan());
    CHECK(e->exp(h, v(nan_value), r).is_nan());
    CHECK_SAME(e->convert(h, v(inf), r), inf);
    CHECK(e->convert(h, v(nan_value), r).is_nan());
    // fixed point: no real result → NaN (outside the format, format.hpp)
    const Format fx = Format::fixed(4, 4);
    CHECK(e->div(fx, v(0), v(0), r).is_nan());
    CHECK(e->sqrt(fx, v(-1), r).is_nan());
    CHECK(e->log(fx, v(-1), r).is_nan());
  }
}

TEST_CASE("overflow: infinity or saturation (THEORY §3 R2)", "[numeric][engine][overflow]") {
  const Format h = Format::fp16();
  const Format e4m3 = Format::fp8e4m3();
  const Format e5m2 = Format::fp8e5m2();
  const Format h_sat = parse_format("fp16,overflow=saturate");
  for (const Engine* e : engines()) {
    INFO(e->name());
    // fp16: max 65504 = 2047·32; the next step would be 65536 (m 1024·64, even), so the
    // midpoint 65520 goes up → overflow → +inf under RNE (position 65520 in R2); RNA too.
    CHECK_SAME(e->from_integer(h, mpz_class(65520), Rounding::nearest_even), inf);
    CHECK_SAME(e->convert(h, v(65520), Rounding::nearest_even), inf);
    CHECK_SAME(e->from_rational(h, mpq_class(65520), Rounding::nearest_away), inf);
    CHECK_SAME(e->from_integer(h, mpz_class(65519), Rounding::nearest_even), 65504);
    CHECK_SAME(e->from_integer(h, mpz_class(-65520), Rounding::nearest_even), -inf);
    CHECK_SAME(e->add(h, v(65504), v(16), Rounding::nearest_even), inf);
    CHECK_SAME(e->add(h, v(65504), v(8), Rounding::nearest_even), 65504);
    // directed: toward zero never overflows to inf; RU sends + to inf, - to -max; RD mirrors
    CHECK_SAME(e->from_integer(h, mpz_class(1000000), Rounding::toward_zero), 65504);
    CHECK_SAME(e->from_integer(h, mpz_class(1000000), Rounding::downward), 65504);
    CHECK_SAME(e->from_integer(h, mpz_class(65505), Rounding::upward), inf);
    CHECK_SAME(e->from_integer(h, mpz_class(-1000000), Rounding::upward), -65504);
    CHECK_SAME(e->from_integer(h, mpz_class(-65505), Rounding::downward), -inf);
    CHECK_SAME(e->mul(h, v(256), v(256), Rounding::toward_zero), 65504);
    CHECK_SAME(e->mul(h, v(256), v(256), Rounding::nearest_even), inf);
    // overflow=saturate: ±max in every mode
    for (Rounding r : all_modes) {
      CHECK_SAME(e->from_integer(h_sat, mpz_class(65520), r), 65504);
      CHECK_SAME(e->mul(h_sat, v(-256), v(256), r), -65504);
    }
    // E4M3: the top binade [256, 512) steps by 32 and 480 is reserved (NaN code), max 448.
    // 464 is the midpoint of 448 (m 14, even) and 480: RNE → 448. RNA → 480 > max → saturate
    // to 448. 480 and anything larger saturate to 448 in every mode.
    CHECK_SAME(e->from_integer(e4m3, mpz_class(464), Rounding::nearest_even), 448);
    CHECK_SAME(e->from_integer(e4m3, mpz_class(464), Rounding::nearest_away), 448);
    CHECK_SAME(e->from_integer(e4m3, mpz_class(449), Rounding::upward), 448);
    for (Rounding r : all_modes) {
      CHECK_SAME(e->from_integer(e4m3, mpz_class(480), r), 448);
      CHECK_SAME(e->from_integer(e4m3, mpz_class(1000000000), r), 448);
      CHECK_SAME(e->from_integer(e4m3, mpz_class(-1000000000), r), -448);
      CHECK_SAME(e->mul(e4m3, v(448), v(2), r), 448);
      CHECK_SAME(e->exp(e4m3, v(10), r), 448);  // e^10 ≈ 22026
    }
    // 432 is the midpoint of 416 (m 13) and 448 (m 14): RNE 448, RZ 416.
    CHECK_SAME(e->from_integer(e4m3, mpz_class(432), Rounding::nearest_even), 448);
    CHECK_SAME(e->from_integer(e4m3, mpz_class(432), Rounding::toward_zero), 416);
    // E5M2: max 57344 = 7·2^13; next step 65536; midpoint 61440 → up (7 is odd) → +inf.
    CHECK_SAME(e->from_integer(e5m2, mpz_class(61440), Rounding::nearest_even), inf);
    CHECK_SAME(e->from_integer(e5m2, mpz_class(61439), Rounding::nearest_even), 57344);
    CHECK_SAME(e->from_integer(e5m2, mpz_class(1000000), Rounding::toward_zero), 57344);
    // fixed:4.4 saturates at ±15.9375 in every mode
    for (Rounding r : all_modes) {
      CHECK_SAME(e->from_integer(Format::fixed(4, 4), mpz_class(100), r), 15.9375);
      CHECK_SAME(e->from_integer(Format::fixed(4, 4), mpz_class(-100), r), -15.9375);
      CHECK_SAME(e->add(Format::fixed(4, 4), v(15), v(15), r), 15.9375);
    }
    // fp64: 10^400 → inf (RNE), DBL_MAX (RZ)
    const mpz_class huge("1" + std::string(400, '0'));
    CHECK_SAME(e->from_integer(Format::fp64(), huge, Rounding::nearest_even), inf);
    CHECK_SAME(e->from_integer(Format::fp64(), huge, Rounding::toward_zero), DBL_MAX);
    CHECK_SAME(e->exp(Format::fp64(), v(710), Rounding::nearest_even), inf);  // e^710 > DBL_MAX
  }
}

TEST_CASE("sequential sums stop growing where THEORY §1 says", "[numeric][engine]") {
  for (const Engine* e : engines()) {
    // fp32: 2^24 + 1 is a tie between 2^24 (even) and 2^24 + 2 → 2^24.
    CHECK_SAME(e->add(Format::fp32(), v(16777216), v(1), Rounding::nearest_even), 16777216);
    CHECK_SAME(e->add(Format::fp32(), v(16777215), v(1), Rounding::nearest_even), 16777216);
    // fp16: 2049 ties between 2048 and 2050 → 2048.
    CHECK_SAME(e->add(Format::fp16(), v(2048), v(1), Rounding::nearest_even), 2048);
    CHECK_SAME(e->add(Format::fp16(), v(2047), v(1), Rounding::nearest_even), 2048);
  }
}

TEST_CASE("transcendental values by hand", "[numeric][engine][transcendental]") {
  const Format h = Format::fp16();
  for (const Engine* e : engines()) {
    INFO(e->name());
    // e = 2.718281828...; fp16 spacing in [2, 4) is 2^-9: e·512 = 1391.76 → RNE 1392/512,
    // RD/RZ 1391/512.
    CHECK_SAME(e->exp(h, v(1), Rounding::nearest_even), 1392.0 / 512);
    CHECK_SAME(e->exp(h, v(1), Rounding::downward), 1391.0 / 512);
    CHECK_SAME(e->exp(h, v(1), Rounding::upward), 1392.0 / 512);
    // ln 2 = 0.693147...; spacing 2^-11 in [1/2, 1): ·2048 = 1419.57 → RNE 1420, RD 1419.
    CHECK_SAME(e->log(h, v(2), Rounding::nearest_even), 1420.0 / 2048);
    CHECK_SAME(e->log(h, v(2), Rounding::toward_zero), 1419.0 / 2048);
    // cos 1 = 0.5403023...: ·2048 = 1106.54 → 1107; sin 1 = 0.8414709...: ·2048 = 1723.33
    // → 1723 (RNE), 1724 (RU).
    CHECK_SAME(e->cos(h, v(1), Rounding::nearest_even), 1107.0 / 2048);
    CHECK_SAME(e->sin(h, v(1), Rounding::nearest_even), 1723.0 / 2048);
    CHECK_SAME(e->sin(h, v(1), Rounding::upward), 1724.0 / 2048);
    const auto cs = e->cos_sin(h, v(1), Rounding::nearest_even);
    CHECK_SAME(cs.first, 1107.0 / 2048);
    CHECK_SAME(cs.second, 1723.0 / 2048);
    // -sin 1 downward is -(1724/2048)
    CHECK_SAME(e->sin(h, v(-1), Rounding::downward), -1724.0 / 2048);
    // exp(-f) at fp16's f_large 17.34375: e^-17.34375 = 2.94e-8 < 2^-25 = 2.98e-8 → +0,
    // while at 17.328125 (the element below): 2.99e-8 > 2^-25 → 2^-24.
    CHECK_SAME(e->exp(h, v(-17.34375), Rounding::nearest_even), 0.0);
    CHECK_SAME(e->exp(h, v(-17.328125), Rounding::nearest_even), std::ldexp(1, -24));
  }
}

TEST_CASE("round_real with oracles (Ziv's strategy)", "[numeric][engine][round_real]") {
  const Format h = Format::fp16();
  for (const Engine* e : engines()) {
    INFO(e->name());
    // π = 3.14159265...; spacing 2^-9 in [2, 4): π·512 = 1608.4954 → RNE 1608/512 = 3.140625,
    // RU 1609/512 = 3.142578125.
    const ropesim::numeric::RealApproximation pi = [](mpfr_ptr y, mpfr_prec_t) {
      mpfr_const_pi(y, MPFR_RNDN);
      return std::uint64_t{1};  // |y - π| ≤ 1/2 ulp ≤ 1 ulp
    };
    CHECK_SAME(e->round_real(h, pi, Rounding::nearest_even), 3.140625);
    CHECK_SAME(e->round_real(h, pi, Rounding::upward), 3.142578125);
    CHECK_SAME(e->round_real(h, pi, Rounding::downward), 3.140625);
    // an exact oracle: 3 (returns 0), rounded exactly
    const ropesim::numeric::RealApproximation three = [](mpfr_ptr y, mpfr_prec_t) {
      mpfr_set_ui(y, 3, MPFR_RNDN);
      return std::uint64_t{0};
    };
    CHECK_SAME(e->round_real(h, three, Rounding::upward), 3.0);
    // an oracle that never resolves a midpoint (1 + 2^-11 is the fp16 midpoint of 1 and
    // 1 + 2^-10, reported inexact): the engine must give up with std::runtime_error.
    const ropesim::numeric::RealApproximation stuck = [](mpfr_ptr y, mpfr_prec_t) {
      mpfr_set_ui(y, 1, MPFR_RNDN);
      mpfr_add_d(y, y, std::ldexp(1.0, -11), MPFR_RNDN);
      return std::uint64_t{1};
    };
    CHECK_THROWS_AS(e->round_real(h, stuck, Rounding::nearest_even, 200), std::runtime_error);
  }
}

TEST_CASE("round_real agrees with the reference on square roots, every mode and format kind",
          "[numeric][engine][round_real][reference]") {
  // The oracle is MPFR's √ rounded to nearest at the requested precision (error ≤ 1/2 ulp,
  // reported as 1); √a of a non-square is irrational, so never a rounding boundary. The
  // expected value is the reference's exact integer-square-root rounding.
  const Format formats[] = {
      Format::fp16(),      Format::fp8e4m3(),    parse_format("bf16,subnormals=off"),
      Format::fixed(4, 4), Format::fixed(2, 10), Format::custom(113, -16382, 16383)};
  for (const Engine* e : engines()) {
    for (const Format& f : formats) {
      Mismatches m;
      for (int n = 2; n < 400; ++n) {
        if (n == 4 || n == 9 || n == 16 || n == 25 || n == 36 || n == 49 || n == 64 || n == 81 ||
            n == 100 || n == 121 || n == 144 || n == 169 || n == 196 || n == 225 || n == 256 ||
            n == 289 || n == 324 || n == 361) {
          continue;
        }
        // a = n / 64 (and its negation for the sign): √a = √n / 8
        for (int sign : {1, -1}) {
          const ropesim::numeric::RealApproximation oracle = [&](mpfr_ptr y, mpfr_prec_t) {
            mpfr_sqrt_ui(y, static_cast<unsigned long>(n), MPFR_RNDN);
            mpfr_div_2ui(y, y, 3, MPFR_RNDN);
            if (sign < 0) mpfr_neg(y, y, MPFR_RNDN);
            return std::uint64_t{1};
          };
          mpq_class a(n, 64);
          a.canonicalize();  // mpq_class(n, d) is not canonical by itself
          for (Rounding r : all_modes) {
            ++m.checked;
            reference::Number expected = reference::sqrt(f, reference::Number::of(a), r);
            if (sign < 0) {
              // -√a rounds like √a in the mirrored direction
              const Rounding mirrored = r == Rounding::upward     ? Rounding::downward
                                        : r == Rounding::downward ? Rounding::upward
                                                                  : r;
              expected = reference::sqrt(f, reference::Number::of(a), mirrored);
              expected.negative = !expected.negative;
            }
            const Value got = e->round_real(f, oracle, r);
            const bool ok = (f.is_fixed_point() && expected.is_zero()) ? to_number(got).is_zero()
                                                                       : agrees(got, expected);
            if (!ok) {
              m.add(f.name + " " + mode_name(r) + " " + (sign < 0 ? "-" : "") + "sqrt(" +
                    std::to_string(n) + "/64): engine " + show(got) + ", reference " +
                    expected.to_string());
            }
          }
        }
      }
      INFO(e->name() << " " << f.name << ": " << m.report());
      CHECK(m.count == 0);
    }
  }
  // π in fixed:4.4: π·16 = 50.27 → RNE 50/16 = 3.125, RU 51/16; tiny π·2^-30 in fp16 is below
  // half the smallest subnormal 2^-25 → RNE +0, RU 2^-24.
  for (const Engine* e : engines()) {
    const ropesim::numeric::RealApproximation pi = [](mpfr_ptr y, mpfr_prec_t) {
      mpfr_const_pi(y, MPFR_RNDN);
      return std::uint64_t{1};
    };
    const ropesim::numeric::RealApproximation tiny_pi = [](mpfr_ptr y, mpfr_prec_t) {
      mpfr_const_pi(y, MPFR_RNDN);
      mpfr_div_2ui(y, y, 30, MPFR_RNDN);
      return std::uint64_t{1};
    };
    CHECK_SAME(e->round_real(Format::fixed(4, 4), pi, Rounding::nearest_even), 3.125);
    CHECK_SAME(e->round_real(Format::fixed(4, 4), pi, Rounding::upward), 3.1875);
    CHECK_SAME(e->round_real(Format::fp16(), tiny_pi, Rounding::nearest_even), 0.0);
    CHECK_SAME(e->round_real(Format::fp16(), tiny_pi, Rounding::upward), std::ldexp(1, -24));
  }
}

TEST_CASE("from_mpfr rounds an exact MPFR number once", "[numeric][engine]") {
  mpfr_t x;
  mpfr_init2(x, 200);
  // x = 1 + 2^-11 + 2^-150: just above the fp16 midpoint of 1 and 1 + 2^-10 → RNE goes up
  // (a double-rounding trap: rounded to 53 bits first it would be the midpoint → 1).
  mpfr_set_ui(x, 1, MPFR_RNDN);
  mpfr_t t;
  mpfr_init2(t, 200);
  mpfr_set_ui_2exp(t, 1, -11, MPFR_RNDN);
  mpfr_add(x, x, t, MPFR_RNDN);
  mpfr_set_ui_2exp(t, 1, -150, MPFR_RNDN);
  mpfr_add(x, x, t, MPFR_RNDN);
  for (const Engine* e : engines()) {
    INFO(e->name());
    CHECK_SAME(e->from_mpfr(Format::fp16(), x, Rounding::nearest_even), 1 + std::ldexp(1, -10));
    CHECK_SAME(e->from_mpfr(Format::fp16(), x, Rounding::toward_zero), 1.0);
    // the same exact value as a rational
    mpq_class q = 1 + mpq_class(1, 2048) + mpq_class(1, mpz_class(1) << 150);
    CHECK_SAME(e->from_rational(Format::fp16(), q, Rounding::nearest_even), 1 + std::ldexp(1, -10));
    // a wide Value converted into fp16
    const Value wide = Value::from_mpfr_exact(x);
    CHECK(wide.is_wide());
    CHECK_SAME(e->convert(Format::fp16(), wide, Rounding::nearest_even), 1 + std::ldexp(1, -10));
  }
  mpfr_clear(t);
  mpfr_clear(x);
}

TEST_CASE("Value: storage, comparison, bit identity", "[numeric][value]") {
  using ropesim::numeric::compare;
  const Value zero, pos(v(0.0)), neg(v(-0.0)), one(v(1.0)), two(v(2.0)), nan1(v(nan_value));
  CHECK(!zero.is_wide());
  CHECK(same_double(zero.narrow(), 0.0));  // default: +0
  CHECK(zero.is_zero());
  CHECK_FALSE(zero.sign_bit());
  CHECK(neg.sign_bit());
  CHECK(neg.is_zero());
  CHECK(nan1.is_nan());
  CHECK_FALSE(nan1.is_finite());
  CHECK(v(inf).is_inf());
  CHECK_FALSE(v(inf).is_finite());
  CHECK(one.is_finite());
  CHECK(compare(pos, neg) == 0);
  CHECK(compare(one, two) == -1);
  CHECK(compare(two, one) == 1);
  CHECK(compare(nan1, one) == 2);
  CHECK(compare(one, nan1) == 2);
  CHECK(compare(v(-inf), v(-DBL_MAX)) == -1);
  CHECK_FALSE(pos.same_bits(neg));
  CHECK(nan1.same_bits(v(-nan_value)));  // NaN equals NaN
  CHECK(one.same_bits(v(1.0)));
  CHECK(pos.bits_key() != neg.bits_key());
  CHECK(nan1.bits_key() == v(nan_value).bits_key());
  CHECK(one.bits_key() == v(1.0).bits_key());
  CHECK(one.to_hex() == "0x1p+0");
  CHECK(v(0.75).to_double() == 0.75);
  CHECK(v(65504).to_decimal() == "65504");
  CHECK(v(0.75).to_decimal() == "0.75");
  // value.hpp: "Shortest decimal that reads back to the same double": the double nearest
  // 0.1 reads back from "0.1" (17 digits would print 0.10000000000000001).
  CHECK(v(0.1).to_decimal() == "0.1");
  CHECK(v(1.1).to_decimal() == "1.1");
  for (double d : {0.1, 1.0 / 3, 2.0 / 3, 1e-300, 6.02214076e23, 103.97208404541015625}) {
    CHECK(std::strtod(v(d).to_decimal().c_str(), nullptr) == d);  // reads back
  }
  // wide values
  mpfr_t x;
  mpfr_init2(x, 113);
  mpfr_set_ui(x, 1, MPFR_RNDN);
  mpfr_div_2ui(x, x, 100, MPFR_RNDN);
  mpfr_add_ui(x, x, 1, MPFR_RNDN);  // 1 + 2^-100, exact at 113 bits
  const Value w = Value::from_mpfr_exact(x);
  const Value w2 = Value::from_mpfr_exact(x);
  CHECK(w.is_wide());
  CHECK(w.same_bits(w2));
  CHECK_FALSE(w.same_bits(one));
  CHECK(w.to_double() == 1.0);  // nearest double
  CHECK(compare(w, one) == 1);
  CHECK(w.bits_key() == w2.bits_key());
  mpfr_t y;
  mpfr_init2(y, 200);
  w.to_mpfr(y);
  CHECK(mpfr_cmp(x, y) == 0);
  // the same number held at another precision is the same element: same bits, same key
  const Value w200 = Value::from_mpfr_exact(y);
  CHECK(w200.same_bits(w));
  CHECK(w200.bits_key() == w.bits_key());
  mpfr_clear(y);
  mpfr_clear(x);
}

TEST_CASE("bits_key agrees with same_bits for the elements of a wide format",
          "[numeric][value][wide]") {
  // value.hpp: key(a) == key(b) iff a.same_bits(b) for narrow values; wide values hash their
  // bits. Elements of one wide format must hash alike whichever function produced them
  // (engine results, max_finite, min_positive, next_up), or a hash set of realised values
  // would keep duplicates.
  const Format f = Format::custom(64, -16382, 16383);
  const Engine& e = ropesim::numeric::default_engine();
  const Rounding rne = Rounding::nearest_even;
  const Value one = e.from_integer(f, 1, rne);
  // p 64: max (2^64 - 1)·2^(16383-63); min subnormal 2^(-16382-63); ulp(1) = 2^-63.
  const mpq_class max = reference::max_finite(f);
  const mpq_class min = reference::min_positive(f);
  const mpq_class normal = reference::min_normal(f);
  const mpq_class above_one = 1 + reference::min_positive(Format::custom(64, 0, 0));
  const std::pair<Value, Value> pairs[] = {
      {ropesim::numeric::max_finite(f), e.from_rational(f, max, rne)},
      {ropesim::numeric::min_positive(f), e.from_rational(f, min, rne)},
      {ropesim::numeric::min_normal(f), e.from_rational(f, normal, rne)},
      {ropesim::numeric::next_up(f, one), e.from_rational(f, above_one, rne)},
  };
  int i = 0;
  for (const auto& [a, b] : pairs) {
    INFO("pair " << i++ << ": " << show(a) << " vs " << show(b));
    REQUIRE(a.is_wide());
    REQUIRE(b.is_wide());
    CHECK(a.same_bits(b));
    CHECK(a.bits_key() == b.bits_key());
  }
}

TEST_CASE("the engine is usable from two threads at once", "[numeric][engine][threads]") {
  // engine.hpp: thread-safe (MPFR's exponent range is thread-local and restored). Two threads
  // round into formats with different exponent ranges; results must match a serial run.
  const Format fa = Format::fp16(), fb = Format::bf16();
  std::vector<double> inputs;
  OperandGenerator gen(53, 11, 0x7);
  for (int i = 0; i < 20000; ++i) inputs.push_back(gen.next());
  auto run = [&](const Format& f, std::vector<std::uint64_t>& out) {
    const Engine& e = ropesim::numeric::mpfr_engine();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const Value x = e.convert(f, Value::from_double_exact(inputs[i]), Rounding::nearest_even);
      const Value y = e.mul(f, x, x, all_modes[i % 5]);
      out.push_back(double_bits(y.narrow()) ^ (double_bits(x.narrow()) << 1));
    }
  };
  std::vector<std::uint64_t> serial_a, serial_b, parallel_a, parallel_b;
  run(fa, serial_a);
  run(fb, serial_b);
  std::thread ta([&] { run(fa, parallel_a); });
  std::thread tb([&] { run(fb, parallel_b); });
  ta.join();
  tb.join();
  CHECK(parallel_a == serial_a);
  CHECK(parallel_b == serial_b);
}
