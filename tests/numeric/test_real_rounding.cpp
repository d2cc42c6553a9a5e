// numeric/real_rounding.hpp: the one rounding of exact reals into F. The cos/sin fast path
// (double-double, numeric/trig/double_double.hpp) is checked bit for bit against the MPFR Ziv path
// (a second implementation) and both against the reference engine's cos_sin (a third), on
// random inputs (fixed seeds) and hard cases; the rest against values derived by hand.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "numeric/exact.hpp"
#include "numeric/mpfr_util.hpp"
#include "numeric/real_rounding.hpp"

using namespace ropesim::numeric;

namespace {

bool same(const Value& a, const Value& b) { return a.same_bits(b); }
Value dbl(double d) { return Value::from_double_exact(d); }

/// The five fast-path formats under round-to-nearest-even, with the reference engine.
struct Targets {
  std::vector<std::unique_ptr<RealRounding>> owned;
  std::vector<const RealRounding*> list;
  explicit Targets(const std::vector<Format>& formats, Rounding r = Rounding::nearest_even) {
    for (const Format& f : formats) {
      owned.push_back(std::make_unique<RealRounding>(f, r, mpfr_engine()));
      list.push_back(owned.back().get());
    }
  }
};

const std::vector<Format>& fast_formats() {
  static const std::vector<Format> f = {Format::fp64(), Format::fp32(), Format::tf32(),
                                        Format::fp16(), Format::bf16()};
  return f;
}

/// fast vs slow (and flags) for every target.
void check_same(const Targets& t, const std::vector<RoundedCosSin>& a,
                const std::vector<RoundedCosSin>& b) {
  for (std::size_t k = 0; k < t.list.size(); ++k) {
    INFO(t.list[k]->format().name);
    REQUIRE(same(a[k].cos, b[k].cos));
    REQUIRE(same(a[k].sin, b[k].sin));
    REQUIRE(a[k].flags.bits() == b[k].flags.bits());
  }
}

}  // namespace

TEST_CASE("double-double cos/sin step equals the MPFR Ziv path bit for bit",
          "[real_rounding][fast]") {
  const Targets t(fast_formats());
  CosSinRounder fast(t.list, true), slow(t.list, false);
  REQUIRE(fast.uses_fast_path());
  REQUIRE_FALSE(slow.uses_fast_path());
  std::vector<RoundedCosSin> a(t.list.size()), b(t.list.size());
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> mant(-2.0, 2.0);
  std::uniform_int_distribution<int> ex(-30, 26);
  for (int n = 0; n < 60000; ++n) {
    const double x = std::ldexp(mant(rng), ex(rng));
    if (x == 0) continue;
    INFO(x);
    fast.of_value(dbl(x), a.data());
    slow.of_value(dbl(x), b.data());
    check_same(t, a, b);
    if (n % 64 == 0) {  // a third implementation: the reference engine's cos_sin
      for (std::size_t k = 0; k < t.list.size(); ++k) {
        const auto [c, s] =
            mpfr_engine().cos_sin(t.list[k]->format(), dbl(x), Rounding::nearest_even);
        REQUIRE(same(b[k].cos, c));
        REQUIRE(same(b[k].sin, s));
      }
    }
  }
  // products θ·i with θ = 10000^(-k/64) (llama2-7b's schedule) and 500000^(-k/64)/8
  for (int k : {0, 1, 13, 40, 63}) {
    AngleEnclosure th(ExactReal::power(10000, mpq_class(-k, 64)));
    AngleEnclosure tl(ExactReal::power(500000, mpq_class(-k, 64), mpq_class(1, 8)));
    for (std::uint64_t i = 1; i < 200000; i += 1 + i / 50) {
      INFO("k = " << k << " i = " << i);
      fast.of_product(th, i, a.data());
      slow.of_product(th, i, b.data());
      check_same(t, a, b);
      fast.of_product(tl, i, a.data());
      slow.of_product(tl, i, b.data());
      check_same(t, a, b);
    }
  }
  REQUIRE(slow.fallbacks() > fast.fallbacks());
}

TEST_CASE("cos/sin hard cases: angles near multiples of pi/2", "[real_rounding][fast]") {
  // Near kπ/2 one of cos, sin is tiny (|cos| ~ |x − kπ/2|): the double-double result has a
  // large relative error there, so the fast path must either decide right or fall back.
  const Targets t(fast_formats());
  CosSinRounder fast(t.list, true), slow(t.list, false);
  std::vector<RoundedCosSin> a(t.list.size()), b(t.list.size());
  Mpfr half_pi(400), x(400);
  mpfr_const_pi(half_pi, MPFR_RNDN);
  mpfr_div_2ui(half_pi, half_pi, 1, MPFR_RNDN);
  for (long k = 1; k <= 2000; k += (k < 64 ? 1 : 37)) {
    mpfr_mul_si(x, half_pi, k, MPFR_RNDN);
    double d = mpfr_get_d(x, MPFR_RNDN);  // the double nearest to kπ/2
    for (int step = 0; step < 9; ++step) d = std::nextafter(d, -HUGE_VAL);
    for (int step = 0; step < 18; ++step, d = std::nextafter(d, HUGE_VAL)) {
      INFO("k = " << k << " x = " << d);
      fast.of_value(dbl(d), a.data());
      slow.of_value(dbl(d), b.data());
      check_same(t, a, b);
      for (std::size_t j = 0; j < t.list.size(); ++j) {
        const auto [c, s] =
            mpfr_engine().cos_sin(t.list[j]->format(), dbl(d), Rounding::nearest_even);
        REQUIRE(same(b[j].cos, c));
        REQUIRE(same(b[j].sin, s));
      }
    }
  }
  // θ·i within 2^-40·i of iπ/2: θ = π·(1/2 + 2^-41), i = 1..4000 (irrational for every i)
  AngleEnclosure th(ExactReal::pi_times(mpq_class(1, 2) + mpq_class(1, mpz_class(1) << 41)));
  for (std::uint64_t i = 1; i <= 4000; ++i) {
    INFO("i = " << i);
    fast.of_product(th, i, a.data());
    slow.of_product(th, i, b.data());
    check_same(t, a, b);
  }
  // the hard cases did reach the fallback (the fast path cannot decide every one of them)
  REQUIRE(fast.fallbacks() > 0);
}

TEST_CASE(
    "cos/sin under directed rounding and outside the fast domain: MPFR path equals the engine",
    "[real_rounding]") {
  for (Rounding r : {Rounding::upward, Rounding::toward_zero, Rounding::nearest_away}) {
    const Targets t({Format::fp16(), Format::bf16(), Format::fp32()}, r);
    CosSinRounder rounder(t.list);
    REQUIRE_FALSE(rounder.uses_fast_path());  // fast_rounding needs nearest-even
    std::vector<RoundedCosSin> a(t.list.size());
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> angle(-1000.0, 1000.0);
    for (int n = 0; n < 300; ++n) {
      const double x = angle(rng);
      rounder.of_value(dbl(x), a.data());
      for (std::size_t k = 0; k < t.list.size(); ++k) {
        INFO(t.list[k]->format().name << " x = " << x);
        const auto [c, s] = mpfr_engine().cos_sin(t.list[k]->format(), dbl(x), r);
        REQUIRE(same(a[k].cos, c));
        REQUIRE(same(a[k].sin, s));
      }
    }
  }
}

TEST_CASE("RealRounding::rational: ties and overflow after rounding (by hand)", "[real_rounding]") {
  const mpq_class one(1);
  const mpq_class u(1, 2048);  // 2^-11: half an ulp of fp16 at 1 (p = 11, ulp 2^-10)
  {
    const RealRounding h(Format::fp16(), Rounding::nearest_even, mpfr_engine());
    Flags f;
    REQUIRE(h.rational(one + u, f).to_double() == 1.0);               // tie → even (1)
    REQUIRE(h.rational(one + 3 * u, f).to_double() == 1.0 + 0x1p-9);  // tie → even (1 + 2^-9)
    REQUIRE(h.rational(mpq_class(65519), f).to_double() == 65504.0);  // below 65520: max
    REQUIRE_FALSE(f.test(Flag::overflow));
    REQUIRE(h.rational(mpq_class(65520), f).is_inf());  // the midpoint to 2^16
    REQUIRE(f.test(Flag::overflow));
  }
  {
    const RealRounding h(Format::fp16(), Rounding::nearest_away, mpfr_engine());
    Flags f;
    REQUIRE(h.rational(one + u, f).to_double() == 1.0 + 0x1p-10);  // tie → away
  }
  {
    // toward zero: 70000 rounds (unbounded exponent, p = 11) to 69632 > 65504: overflow is
    // raised although the delivered result is the finite max.
    const RealRounding h(Format::fp16(), Rounding::toward_zero, mpfr_engine());
    Flags f;
    REQUIRE(h.rational(mpq_class(65535), f).to_double() == 65504.0);  // 65535 → 65504, no overflow
    REQUIRE_FALSE(f.test(Flag::overflow));
    REQUIRE(h.rational(mpq_class(70000), f).to_double() == 65504.0);
    REQUIRE(f.test(Flag::overflow));
  }
  {
    // an exact real that is rational goes through rational(): 10000^(-1/2) = 1/100
    const RealRounding h(Format::fp16(), Rounding::nearest_even, mpfr_engine());
    Flags f;
    // 1/100 = 0.01 in [2^-7, 2^-6): ulp 2^-17; 0.01·2^17 = 1310.72 → 1311·2^-17
    REQUIRE(h.real(ExactReal::power(10000, mpq_class(-1, 2)), f).to_double() == 1311 * 0x1p-17);
  }
}

TEST_CASE("RealRounding::interval decides only what every point agrees on (by hand)",
          "[real_rounding]") {
  const RealRounding h(Format::fp16(), Rounding::nearest_even, mpfr_engine());
  Mpfr lo(64), hi(64);
  Flags f;
  mpfr_set_d(lo, 1.0, MPFR_RNDN);
  mpfr_set_d(hi, 1.0 + 0x1p-12, MPFR_RNDN);  // below the tie 1 + 2^-11: all round to 1
  REQUIRE(h.interval(lo, hi, f)->to_double() == 1.0);
  mpfr_set_d(hi, 1.0 + 0x1p-11, MPFR_RNDN);  // the tie itself rounds to the even 1
  REQUIRE(h.interval(lo, hi, f)->to_double() == 1.0);
  mpfr_set_d(hi, 1.0 + 0x1p-11 + 0x1p-20, MPFR_RNDN);  // past the tie: 1 + 2^-10 too
  REQUIRE_FALSE(h.interval(lo, hi, f).has_value());
  REQUIRE_FALSE(f.any());
}

TEST_CASE("RealRounding::double_double honours the error bound e (by hand)", "[real_rounding]") {
  Flags f;
  const RealRounding d(Format::fp64(), Rounding::nearest_even, mpfr_engine());
  REQUIRE(d.fast_double_double());
  // [1 − 2^-60, 1 + 2^-60] rounds to 1 everywhere (half-gaps 2^-54 below, 2^-53 above)
  REQUIRE(d.double_double({1.0, 0.0}, 0x1p-60, f)->to_double() == 1.0);
  // [1 − 2^-40, 1 + 2^-40] holds thousands of doubles: undecided
  REQUIRE_FALSE(d.double_double({1.0, 0.0}, 0x1p-40, f).has_value());
  // y = 1 + 2^-54 (lo a quarter ulp) with e = 2^-54: reaches the midpoint 1 + 2^-53 — undecided
  REQUIRE_FALSE(d.double_double({1.0, 0x1p-54}, 0x1p-54, f).has_value());
  const RealRounding h(Format::fp16(), Rounding::nearest_even, mpfr_engine());
  REQUIRE(h.fast_double_double());
  // fp16: 1.25 ± 2^-30 → 1.25; the tie 1 + 2^-11 ± 2^-30 straddles it (→ 1 and 1 + 2^-10)
  REQUIRE(h.double_double({1.25, 0.0}, 0x1p-30, f)->to_double() == 1.25);
  REQUIRE_FALSE(h.double_double({1.0 + 0x1p-11, 0.0}, 0x1p-30, f).has_value());
  REQUIRE_FALSE(h.double_double({1.0 + 0x1p-12, 0.0}, 0x1p-10, f).has_value());
  REQUIRE_FALSE(f.any());
}

TEST_CASE("round_scaled: K times an exact or enclosed real (by hand)", "[real_rounding]") {
  const Arithmetic F(Format::fp16(), Rounding::nearest_even, mpfr_engine());
  const Enclosure sqrt2 = [](mpfr_ptr lo, mpfr_ptr hi) {
    mpfr_sqrt_ui(lo, 2, MPFR_RNDD);
    mpfr_sqrt_ui(hi, 2, MPFR_RNDU);
  };
  // 3·√2 = 4.24264068…; fp16's ulp on [4, 8) is 2^-8: 4.24264068·256 = 1086.116 → 1086·2^-8
  REQUIRE(round_scaled(F, 3, std::nullopt, sqrt2, "3*sqrt2").to_double() == 1086 * 0x1p-8);
  // -3·√2 → -1086·2^-8
  REQUIRE(round_scaled(F, -3, std::nullopt, sqrt2, "-3*sqrt2").to_double() == -1086 * 0x1p-8);
  // exact x = 1/3, K = 2: 2/3 on [1/2, 1) with ulp 2^-11: 1365.33 → 1365·2^-11
  REQUIRE(round_scaled(F, 2, mpq_class(1, 3), sqrt2, "2/3").to_double() == 1365 * 0x1p-11);
  // K = 0: +0 whatever x
  const Value z = round_scaled(F, 0, std::nullopt, sqrt2, "0");
  REQUIRE(z.is_zero());
  REQUIRE_FALSE(std::signbit(z.to_double()));
}

TEST_CASE("round_by_comparison: a real known by exact comparisons (by hand)", "[real_rounding]") {
  // x = √2: sign(x − t) = sign(2 − t²) for t > 0, +1 for t ≤ 0
  const auto sign_minus = [](const mpq_class& t) {
    if (sgn(t) <= 0) return 1;
    const int c = cmp(mpq_class(2), t * t);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  };
  // fp16 on [1, 2): ulp 2^-10; √2·1024 = 1448.15: lo = 1448/1024, hi = 1449/1024, nearer lo
  REQUIRE(
      round_by_comparison(Format::fp16(), Rounding::nearest_even, 1.0, sign_minus)->to_double() ==
      1448 * 0x1p-10);
  REQUIRE(round_by_comparison(Format::fp16(), Rounding::upward, 1.9, sign_minus)->to_double() ==
          1449 * 0x1p-10);
  REQUIRE(round_by_comparison(Format::fp16(), Rounding::downward, 1e9, sign_minus)->to_double() ==
          1448 * 0x1p-10);
  // x above max finite (every comparison says "greater"): nullopt
  REQUIRE_FALSE(round_by_comparison(Format::fp16(), Rounding::upward, 1.0, [](const mpq_class&) {
                  return 1;
                }).has_value());
}

TEST_CASE("python_float: a config number as Python's float (by hand)", "[real_rounding]") {
  REQUIRE(python_float(mpq_class(1, 10)) == 0.1);        // gmp's get_d would truncate
  REQUIRE(python_float(mpq_class(500000)) == 500000.0);  // exact
  const mpz_class two53 = mpz_class(1) << 53;
  REQUIRE(python_float(mpq_class(two53 + 1)) == 0x1p53);      // tie → even
  REQUIRE(python_float(mpq_class(two53 + 3)) == 0x1p53 + 4);  // tie → even (…+4)
}

TEST_CASE("dd_cos_sin stays within its proven error bound (against MPFR)", "[real_rounding]") {
  // |dd_cos_sin(x) − (cos x, sin x)| < kDoubleDoubleTrigProvenError (2^-95, the argument in
  // numeric/trig/double_double.hpp), measured at 400 bits on the exact input x = hi + lo:
  // random arguments of every scale up to 2^28, and the worst cancellations of the reduction,
  // x = q·π/2 to 106 bits for large q (r = x − q·π/2 below 2^-100). The callers' bound
  // (kDoubleDoubleTrigError) keeps 7 bits of margin over it.
  STATIC_REQUIRE(kDoubleDoubleTrigError == 0x1p-88);
  STATIC_REQUIRE(kDoubleDoubleTrigProvenError == 0x1p-95);
  std::mt19937_64 rng(95);
  Mpfr x(400), c(400), s(400), d(400), half_pi(400), q(400);
  mpfr_const_pi(half_pi, MPFR_RNDN);
  mpfr_div_2ui(half_pi, half_pi, 1, MPFR_RNDN);
  double worst = 0;
  int cases = 0;
  auto check = [&](DoubleDouble a) {
    DoubleDouble dc, ds;
    REQUIRE(dd_cos_sin(a, dc, ds));
    mpfr_set_d(x, a.hi, MPFR_RNDN);
    mpfr_add_d(x, x, a.lo, MPFR_RNDN);  // exact: |lo| ≤ ulp(hi), 400 bits
    mpfr_sin_cos(s, c, x, MPFR_RNDN);
    for (const auto& [got, want] : {std::pair{dc, &c}, std::pair{ds, &s}}) {
      mpfr_sub_d(d, *want, got.hi, MPFR_RNDN);
      mpfr_sub_d(d, d, got.lo, MPFR_RNDN);
      const double e = std::fabs(mpfr_get_d(d, MPFR_RNDU));
      INFO("x = " << a.hi << " + " << a.lo << ": error 2^" << std::log2(e));
      REQUIRE(e < kDoubleDoubleTrigProvenError);
      worst = std::max(worst, e);
    }
    ++cases;
  };
  for (int k = 0; k < 3000; ++k) {
    const int scale = static_cast<int>(rng() % 58) - 30;  // |x| up to 2^28
    const double hi = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), scale);
    if (std::fabs(hi) >= kDoubleDoubleTrigMaxArgument || hi == 0) continue;
    const double lo =
        std::ldexp(std::uniform_real_distribution<double>(-0.5, 0.5)(rng), std::ilogb(hi) - 52);
    check({hi + lo, (hi - (hi + lo)) + lo});
  }
  for (int k = 0; k < 1000; ++k) {
    // the multiples of π/2 nearest 2^k·u, to 106 bits: the reduction's worst cancellation
    const double m = std::ldexp(static_cast<double>(rng() % (std::uint64_t{1} << 20)) + 1,
                                static_cast<int>(rng() % 8));
    mpfr_mul_d(q, half_pi, std::nearbyint(m), MPFR_RNDN);
    const double hi = mpfr_get_d(q, MPFR_RNDN);
    if (std::fabs(hi) >= kDoubleDoubleTrigMaxArgument) continue;
    mpfr_sub_d(q, q, hi, MPFR_RNDN);
    check({hi, mpfr_get_d(q, MPFR_RNDN)});
  }
  CHECK(cases > 3500);
  // the bound is not vacuous either: the measured error is within 2^12 of it
  CHECK(worst > 0x1p-107);
}
