// numeric::Binary64Rounding (NUMERIC §2: innocuous double rounding through binary64) checked
// bit for bit against the exact MPFR engine, numeric::mpfr_engine():
//
//  * + − × ÷ √ of elements of fp16, bf16, fp32, tf32, fp8e5m2, fp64 and custom formats at the
//    edges of the fast-arithmetic domain (p = 25 or p = 3 with emin = -400, emax = 400): random
//    elements across the whole exponent range, subnormals, values near overflow, specials
//    (±0, ±inf, NaN, ±max, smallest subnormal and normal), cancelling pairs and exact ties
//    (a ± ulp(a)/2, odd subnormals × ½ and ÷ 2, 1.5 × odd significands);
//  * conversion of doubles (random bit patterns, values around F's range, midpoints between
//    neighbouring elements and their binary64 neighbours, the overflow midpoint) into the same
//    formats and into formats that only the single-rounding domain covers (p up to 53, emin
//    down to -1055, emax up to 1023), which exercises both of `round`'s two code paths;
//  * the domain: formats and modes outside it are refused.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "numeric/binary64_rounding.hpp"
#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/format_properties.hpp"
#include "tests/numeric/test_support.hpp"

namespace {

using numeric_test::Format;
using numeric_test::hex;
using numeric_test::Mismatches;
using numeric_test::Rounding;
using numeric_test::Value;
using ropesim::numeric::Binary64Rounding;
using ropesim::numeric::mpfr_engine;

constexpr Rounding rne = Rounding::nearest_even;
constexpr double inf = std::numeric_limits<double>::infinity();

/// Elements of a floating format (p, emin, emax) as doubles, drawn from the format's fields
/// alone (not from the code under test).
class Elements {
 public:
  Elements(const Format& f, std::uint64_t seed)
      : p_(f.precision), emin_(f.emin), emax_(f.emax), rng_(seed) {}

  std::mt19937_64& rng() { return rng_; }
  int precision() const { return p_; }

  double max() const { return std::ldexp(2.0 - std::ldexp(1.0, 1 - p_), emax_); }
  double min_subnormal() const { return std::ldexp(1.0, emin_ - p_ + 1); }
  /// Exponent of the quantum (ulp) of F at the finite non-zero element y.
  int quantum_exponent(double y) const { return std::max(std::ilogb(y), emin_) - (p_ - 1); }

  /// A random element (with a random sign), by category.
  double next() {
    const bool negative = (rng_() & 1) != 0;
    double v = 0;
    switch (rng_() % 8) {
      case 0:
      case 1:  // normal, exponent uniform over the whole range
        v = std::ldexp(significand(), exponent_in(emin_, emax_) - (p_ - 1));
        break;
      case 2:  // subnormal
        v = std::ldexp(static_cast<double>(1 + rng_() % ((std::uint64_t{1} << (p_ - 1)) - 1)),
                       emin_ - p_ + 1);  // k·2^(emin-p+1), 1 ≤ k < 2^(p-1)
        break;
      case 3:  // near overflow: the top two binades, often the largest significands
        v = std::ldexp((rng_() & 1) != 0 ? significand() : top_significand(),
                       emax_ - static_cast<int>(rng_() % 2) - (p_ - 1));
        break;
      case 4:  // half the exponent range: products and quotients of two reach both ends
        v = std::ldexp(significand(), exponent_in(emin_ / 2, emax_ / 2) - (p_ - 1));
        break;
      case 5:  // moderate magnitudes
        v = std::ldexp(significand(),
                       exponent_in(std::max(emin_, -8), std::min(emax_, 8)) - (p_ - 1));
        break;
      case 6:
        v = special();
        break;
      default:  // the smallest normals
        v = std::ldexp(significand(), emin_ + static_cast<int>(rng_() % 3) - (p_ - 1));
        break;
    }
    return negative ? -v : v;
  }

  /// One of the special elements (±0, ±inf and NaN included).
  double special() {
    const double values[] = {0.0,
                             -0.0,
                             inf,
                             std::numeric_limits<double>::quiet_NaN(),
                             max(),
                             min_subnormal(),
                             std::ldexp(1.0, emin_),
                             std::ldexp(1.0, emin_) - min_subnormal(),
                             1.0,
                             0.5,
                             2.0,
                             1.5,
                             std::ldexp(1.0, emax_)};
    const double v = values[rng_() % (sizeof values / sizeof values[0])];
    return (rng_() & 1) != 0 ? -v : v;
  }

  /// b with a ± b an exact tie of F when a is a finite non-zero element: ±ulp(a)/2 if that is
  /// an element (else the smallest subnormal).
  double tie_partner(double a) {
    if (!std::isfinite(a) || a == 0) return next();
    const int q = quantum_exponent(std::fabs(a)) - 1;
    const double b = q >= emin_ - p_ + 1 ? std::ldexp(1.0, q) : min_subnormal();
    return (rng_() & 1) != 0 ? -b : b;
  }

  /// b close to -a (a − b and a + b cancel): a moved by a few of its ulps.
  double cancelling(double a) {
    if (!std::isfinite(a) || a == 0) return next();
    const double ulp = std::ldexp(1.0, quantum_exponent(std::fabs(a)));
    const double b = a + static_cast<double>(static_cast<int>(rng_() % 9) - 4) * ulp;
    if (std::fabs(b) > max()) return a;
    return (rng_() & 1) != 0 ? -b : b;
  }

  /// An element with an odd p-bit significand: times 1.5 it has p + 1 or p + 2 significant
  /// bits, often an exact tie.
  double odd_element() {
    const double m = std::ldexp(significand(), p_ - 1);     // integer in [2^(p-1), 2^p)
    const double odd = std::fmod(m, 2.0) == 0 ? m + 1 : m;  // m even ⇒ m + 1 < 2^p
    return std::ldexp(odd, exponent_in(std::max(emin_, -20), std::min(emax_, 20)) - (p_ - 1));
  }

  /// An odd multiple of the smallest subnormal below 2^emin: halving it gives a tie on the
  /// subnormal grid.
  double odd_subnormal() {
    const std::uint64_t half_count = std::uint64_t{1} << (p_ - 2);  // odd k < 2^(p-1)
    return std::ldexp(static_cast<double>(2 * (rng_() % half_count) + 1), emin_ - p_ + 1);
  }

 private:
  /// A p-bit significand in [1, 2).
  double significand() {
    const std::uint64_t frac = p_ == 1 ? 0 : rng_() & ((std::uint64_t{1} << (p_ - 1)) - 1);
    return 1.0 + std::ldexp(static_cast<double>(frac), 1 - p_);
  }
  /// One of the four largest p-bit significands in [1, 2).
  double top_significand() { return 2.0 - std::ldexp(static_cast<double>(1 + rng_() % 4), 1 - p_); }
  int exponent_in(int lo, int hi) {
    if (hi < lo) return lo;
    return lo + static_cast<int>(rng_() % static_cast<std::uint64_t>(hi - lo + 1));
  }

  int p_, emin_, emax_;
  std::mt19937_64 rng_;
};

Value narrow(double d) { return Value::from_double_exact(d); }

/// The fast result equals the engine's correctly rounded one, by bits (NaN equals NaN).
void check(Mismatches& m, const char* op, const Format& f, double fast, const Value& exact,
           double a, double b) {
  ++m.checked;
  if (!narrow(fast).same_bits(exact)) {
    m.add(std::string(op) + "(" + hex(a) + ", " + hex(b) + ") in " + f.name + ": fast " +
          hex(fast) + ", MPFR " + exact.to_hex());
  }
}

void check_arithmetic(const Format& f, int samples, std::uint64_t seed) {
  const Binary64Rounding fast(f, rne);
  REQUIRE(fast.fast_rounding());
  REQUIRE(fast.fast_arithmetic());
  const auto& engine = mpfr_engine();
  Elements gen(f, seed);
  Mismatches m;
  auto run = [&](double a, double b) {
    const Value va = narrow(a), vb = narrow(b);
    check(m, "add", f, fast.add(a, b), engine.add(f, va, vb, rne), a, b);
    check(m, "sub", f, fast.sub(a, b), engine.sub(f, va, vb, rne), a, b);
    check(m, "mul", f, fast.mul(a, b), engine.mul(f, va, vb, rne), a, b);
    check(m, "div", f, fast.div(a, b), engine.div(f, va, vb, rne), a, b);
    check(m, "sqrt", f, fast.sqrt(a), engine.sqrt(f, va, rne), a, 0);
  };
  for (int i = 0; i < samples; ++i) {
    const double a = gen.next();
    double b = 0;
    switch (gen.rng()() % 6) {
      case 0:
        b = gen.tie_partner(a);
        break;
      case 1:
        b = gen.cancelling(a);
        break;
      case 2:
        b = gen.special();
        break;
      default:
        b = gen.next();
        break;
    }
    run(a, b);
  }
  // Exact ties of × and ÷: odd subnormals times ½ and over 2 (ties on the subnormal grid),
  // 1.5 times odd significands (p + 1 significant bits).
  for (int i = 0; i < samples / 8; ++i) {
    const double odd = gen.odd_subnormal();
    run(odd, 0.5);
    run(odd, 2.0);
    run(-odd, 0.5);
    run(gen.odd_element(), 1.5);
  }
  INFO(m.report());
  CHECK(m.count == 0);
  CHECK(m.checked > 0);
}

void check_conversions(const Format& f, int samples, std::uint64_t seed) {
  const Binary64Rounding fast(f, rne);
  REQUIRE(fast.fast_rounding());
  const auto& engine = mpfr_engine();
  Elements gen(f, seed);
  Mismatches m;
  auto run = [&](double x) {
    check(m, "convert", f, fast.round(x), engine.convert(f, narrow(x), rne), x, 0);
  };
  const bool midpoints_are_doubles =
      f.precision <= 52 && f.emin - f.precision >= -1074;  // p + 1 bits, quantum/2 ≥ 2^-1074
  for (int i = 0; i < samples; ++i) {
    // any double: random bit patterns (NaN, inf, subnormal doubles included)
    run(std::bit_cast<double>(gen.rng()()));
    // doubles around F's range: 53-bit significands, exponents from below the smallest
    // subnormal to above the overflow threshold
    const double sig = 1.0 + std::ldexp(static_cast<double>(gen.rng()() >> 12), -52);
    const int lo = std::max(f.emin - f.precision - 3, -1074);
    const int hi = std::min(f.emax + 2, 1023);
    const int e = lo + static_cast<int>(gen.rng()() % static_cast<std::uint64_t>(hi - lo + 1));
    const double x = std::ldexp(sig, e);
    run((gen.rng()() & 1) != 0 ? -x : x);
    // midpoints between neighbouring elements (exact ties), and their binary64 neighbours
    if (midpoints_are_doubles) {
      const double y = std::fabs(gen.next());
      if (std::isfinite(y) && y != 0) {
        const double mid = y + std::ldexp(1.0, gen.quantum_exponent(y) - 1);
        for (double t : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, inf)}) {
          run(t);
          run(-t);
        }
      }
    }
  }
  // the overflow threshold max + ulp(max)/2 (a tie that rounds to inf) and its neighbours
  if (midpoints_are_doubles && f.emax < 1023) {
    const double threshold = gen.max() + std::ldexp(1.0, f.emax - f.precision);
    for (double t : {threshold, std::nextafter(threshold, 0.0), std::nextafter(threshold, inf)}) {
      run(t);
      run(-t);
    }
  }
  INFO(m.report());
  CHECK(m.count == 0);
  CHECK(m.checked > 0);
}

std::vector<Format> arithmetic_formats() {
  return {Format::fp16(),
          Format::bf16(),
          Format::fp32(),
          Format::tf32(),
          Format::fp8e5m2(),
          Format::fp64(),
          Format::custom(25, -400, 400),
          Format::custom(3, -400, 400)};
}

}  // namespace

TEST_CASE("Binary64Rounding: + - * / sqrt agree with the MPFR engine bit for bit",
          "[numeric][binary64_rounding]") {
  std::uint64_t seed = 20260101;
  for (const Format& f : arithmetic_formats()) {
    SECTION(f.name) { check_arithmetic(f, 6000, seed); }
    ++seed;
  }
}

TEST_CASE("Binary64Rounding: conversions of doubles agree with the MPFR engine bit for bit",
          "[numeric][binary64_rounding]") {
  std::vector<Format> formats = arithmetic_formats();
  // single-rounding domain only: p up to 53, exponents out to binary64's limits; the first
  // three take the 1.5·2^(q+52) path, the last three the nearbyint path
  formats.push_back(Format::ieee(26, 8));
  formats.push_back(Format::custom(40, -1022, 1000));
  formats.push_back(Format::custom(51, -1022, 1020));
  formats.push_back(Format::custom(50, -1000, 1020));
  formats.push_back(Format::custom(53, -1000, 1000));
  formats.push_back(Format::custom(20, -1055, 1023));
  std::uint64_t seed = 20260201;
  for (const Format& f : formats) {
    SECTION(f.name) { check_conversions(f, 6000, seed); }
    ++seed;
  }
}

TEST_CASE("Binary64Rounding: the domain", "[numeric][binary64_rounding]") {
  using ropesim::numeric::parse_format;
  SECTION("inside: presets with subnormals and infinities, under nearest-even") {
    for (const Format& f : arithmetic_formats()) {
      const Binary64Rounding b(f, rne);
      CHECK(b.fast_rounding());
      CHECK(b.fast_arithmetic());
      CHECK(b.is_binary64() == (f.name == "fp64"));
      CHECK(b.max_finite() == ropesim::numeric::max_finite(f).to_double());
    }
  }
  SECTION("rounding only: p > 25 or exponents beyond ±400, but every element a double") {
    for (const Format& f :
         {Format::ieee(26, 8), Format::custom(25, -401, 400), Format::custom(25, -400, 401),
          Format::custom(53, -1000, 1000), Format::custom(20, -1055, 1023), Format::ieee(24, 11)}) {
      INFO(f.name);
      const Binary64Rounding b(f, rne);
      CHECK(b.fast_rounding());
      CHECK_FALSE(b.fast_arithmetic());
      CHECK_FALSE(b.is_binary64());
      CHECK(b.max_finite() == ropesim::numeric::max_finite(f).to_double());
    }
  }
  SECTION(
      "outside: not every element a double, no infinity, reserved codes, no subnormals, "
      "fixed point, wide formats") {
    for (const Format& f :
         {Format::custom(20, -1060, 1000), Format::custom(20, -1000, 1024), Format::fp8e4m3(),
          parse_format("fp16,overflow=saturate"), parse_format("fp32,subnormals=off"),
          Format::fixed(3, 4), Format::ieee(64, 15), Format::ieee(54, 11)}) {
      INFO(f.name);
      const Binary64Rounding b(f, rne);
      CHECK_FALSE(b.fast_rounding());
      CHECK_FALSE(b.fast_arithmetic());
      CHECK_FALSE(b.is_binary64());
    }
  }
  SECTION("outside: every mode but nearest-even") {
    for (const Rounding r :
         {Rounding::nearest_away, Rounding::toward_zero, Rounding::upward, Rounding::downward}) {
      for (const Format& f : {Format::fp64(), Format::fp32(), Format::bf16()}) {
        const Binary64Rounding b(f, r);
        CHECK_FALSE(b.fast_rounding());
        CHECK_FALSE(b.fast_arithmetic());
        CHECK_FALSE(b.is_binary64());
      }
    }
  }
}
