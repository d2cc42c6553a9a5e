// The fast engine against the MPFR engine, bit for bit (numeric/fast_engine.cpp,
// numeric/fast_engine_scalar.hpp).
//
// The MPFR engine is the independent implementation here (its own tests check it against
// GMP rationals and Boost, tests/numeric/test_exhaustive.cpp). Compared:
//  * fp8 E4M3, E5M2 and variants (subnormals=off, overflow=saturate): + − × ÷ over all pairs
//    of values (with −0, ±inf, NaN), fma over all pairs with a fixed set of addends; 5 modes;
//  * fp16 and bf16 (and fp8): √ exp log cos sin and cos_sin of every value, 5 modes;
//  * fp32: 10^6 random operands per operation (10^7 under the hidden tag [.long]), modes
//    cycled; exp/log/cos/sin on 2·10^5 (2·10^6) random inputs;
//  * RapidCheck formats p ∈ [2, 25] with random exponent ranges inside ±400 (the fast domain)
//    and near binary64's limits (delegation), subnormals on/off, saturation, reserved codes;
//  * hard cases: cos/sin at the fp32 values nearest k·π/2, exp at the overflow and underflow
//    thresholds, exact ties of + and ×, tiny arguments; the fallback counter.
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/format.hpp"
#include "tests/numeric/test_support.hpp"

namespace {

using namespace numeric_test;
using ropesim::numeric::fast_engine;
using ropesim::numeric::mpfr_engine;
using ropesim::numeric::parse_format;

/// Bit-identical: narrow values by their double's bits (NaN's bits included), wide by value.
bool identical(const Value& a, const Value& b) {
  if (!a.is_wide() && !b.is_wide())
    return std::bit_cast<std::uint64_t>(a.narrow()) == std::bit_cast<std::uint64_t>(b.narrow());
  return a.same_bits(b);
}

std::string show(const Value& v) { return v.is_wide() ? v.to_hex() : hex(v.narrow()); }

/// Every finite value of f, −0, ±inf and NaN.
std::vector<Value> inputs_of(const Format& f) {
  std::vector<Value> out;
  ropesim::numeric::for_each_finite_value(f, [&](const Value& v) { out.push_back(v); });
  out.push_back(Value::from_double_exact(-0.0));
  out.push_back(Value::from_double_exact(HUGE_VAL));
  out.push_back(Value::from_double_exact(-HUGE_VAL));
  out.push_back(Value::from_double_exact(std::nan("")));
  return out;
}

/// Counts and records the first few disagreements.
struct Disagreements {
  std::size_t count = 0;
  std::vector<std::string> first;
  void check(const Value& fast, const Value& exact, const std::string& what) {
    if (identical(fast, exact)) return;
    ++count;
    if (first.size() < 8) first.push_back(what + ": fast " + show(fast) + ", mpfr " + show(exact));
  }
  void report() const {
    for (const auto& line : first) UNSCOPED_INFO(line);
    CHECK(count == 0);
  }
};

std::string describe(const char* op, const Format& f, double a, double b, Rounding r) {
  return std::string(op) + "(" + hex(a) + ", " + hex(b) + ") " + mode_name(r) + " in " + f.name;
}

enum class Op { add, sub, mul, div };
constexpr Op binary_ops[] = {Op::add, Op::sub, Op::mul, Op::div};
const char* op_name(Op op) {
  switch (op) {
    case Op::add:
      return "add";
    case Op::sub:
      return "sub";
    case Op::mul:
      return "mul";
    case Op::div:
      return "div";
  }
  return "?";
}
Value apply(const Engine& e, Op op, const Format& f, const Value& a, const Value& b, Rounding r) {
  switch (op) {
    case Op::add:
      return e.add(f, a, b, r);
    case Op::sub:
      return e.sub(f, a, b, r);
    case Op::mul:
      return e.mul(f, a, b, r);
    case Op::div:
      return e.div(f, a, b, r);
  }
  return {};
}

enum class Unary { sqrt, exp, log, cos, sin };
constexpr Unary unary_ops[] = {Unary::sqrt, Unary::exp, Unary::log, Unary::cos, Unary::sin};
const char* unary_name(Unary op) {
  switch (op) {
    case Unary::sqrt:
      return "sqrt";
    case Unary::exp:
      return "exp";
    case Unary::log:
      return "log";
    case Unary::cos:
      return "cos";
    case Unary::sin:
      return "sin";
  }
  return "?";
}
Value apply(const Engine& e, Unary op, const Format& f, const Value& a, Rounding r) {
  switch (op) {
    case Unary::sqrt:
      return e.sqrt(f, a, r);
    case Unary::exp:
      return e.exp(f, a, r);
    case Unary::log:
      return e.log(f, a, r);
    case Unary::cos:
      return e.cos(f, a, r);
    case Unary::sin:
      return e.sin(f, a, r);
  }
  return {};
}

void compare_unary_all(const Format& f, const std::vector<Value>& xs, Disagreements& m) {
  for (Unary op : unary_ops) {
    for (Rounding r : all_modes) {
      for (const Value& x : xs) {
        m.check(apply(fast_engine(), op, f, x, r), apply(mpfr_engine(), op, f, x, r),
                std::string(unary_name(op)) + "(" + hex(x.narrow()) + ") " + mode_name(r) + " in " +
                    f.name);
      }
    }
  }
}

/// A random element of the fast-domain format f (finite, either sign; zero now and then).
double random_element(const Format& f, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> exponent(f.subnormals ? f.emin - 1 : f.emin, f.emax);
  const int e = exponent(rng);
  const std::uint64_t half = std::uint64_t{1} << (f.precision - 1);
  std::uint64_t m;
  if (e < f.emin) {  // subnormal: m < half, quantum 2^(emin-p+1)
    m = std::uniform_int_distribution<std::uint64_t>(0, half - 1)(rng);
  } else {
    const std::uint64_t top =
        e == f.emax ? 2 * half - static_cast<std::uint64_t>(f.reserved_top_codes) : 2 * half;
    m = std::uniform_int_distribution<std::uint64_t>(half, top - 1)(rng);
  }
  const int quantum = (e < f.emin ? f.emin : e) - f.precision + 1;
  const double v = std::ldexp(static_cast<double>(m), quantum);
  return (rng() & 1) ? -v : v;
}

/// Random operands of fp32-like f: ops on 10^6 (or `count`) operand pairs, modes cycled.
void random_binary(const Format& f, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Disagreements m;
  for (std::size_t i = 0; i < count; ++i) {
    const Value a = Value::from_double_exact(random_element(f, rng));
    Value b = Value::from_double_exact(random_element(f, rng));
    if (i % 3 == 0) {  // nearby operands: cancellation in − and quotients near 1
      const double close =
          a.narrow() *
          (1 + std::ldexp(static_cast<double>(static_cast<int>(rng() % 64) - 32), -20));
      b = mpfr_engine().convert(f, Value::from_double_exact(close), Rounding::nearest_even);
    }
    const Rounding r = all_modes[i % 5];
    for (Op op : binary_ops) {
      m.check(apply(fast_engine(), op, f, a, b, r), apply(mpfr_engine(), op, f, a, b, r),
              describe(op_name(op), f, a.narrow(), b.narrow(), r));
    }
    const Value c = Value::from_double_exact(
        i % 2 ? random_element(f, rng) : -(a.narrow() * b.narrow()) * (1 + std::ldexp(1.0, -30)));
    const Value cf = mpfr_engine().convert(f, c, Rounding::toward_zero);
    m.check(fast_engine().fma(f, a, b, cf, r), mpfr_engine().fma(f, a, b, cf, r),
            describe("fma", f, a.narrow(), b.narrow(), r) + " + " + hex(cf.narrow()));
    m.check(fast_engine().sqrt(f, a, r), mpfr_engine().sqrt(f, a, r),
            describe("sqrt", f, a.narrow(), 0, r));
  }
  m.report();
}

void random_unary(const Format& f, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Disagreements m;
  std::uniform_real_distribution<double> angle(-1000.0, 1000.0), logarithm(-100.0, 90.0);
  for (std::size_t i = 0; i < count; ++i) {
    const Rounding r = all_modes[i % 5];
    // half the inputs anywhere in F, half where the functions are used (angles, exponents)
    const bool anywhere = i % 2 == 0;
    const Value x = anywhere ? Value::from_double_exact(random_element(f, rng))
                             : mpfr_engine().convert(f, Value::from_double_exact(angle(rng)),
                                                     Rounding::nearest_even);
    const Value y = anywhere ? x
                             : mpfr_engine().convert(f, Value::from_double_exact(logarithm(rng)),
                                                     Rounding::nearest_even);
    const Value z = Value::from_double_exact(std::fabs(x.narrow()));
    for (Unary op : {Unary::cos, Unary::sin}) {
      m.check(apply(fast_engine(), op, f, x, r), apply(mpfr_engine(), op, f, x, r),
              std::string(unary_name(op)) + "(" + hex(x.narrow()) + ") " + mode_name(r) + " in " +
                  f.name);
    }
    m.check(fast_engine().exp(f, y, r), mpfr_engine().exp(f, y, r),
            "exp(" + hex(y.narrow()) + ") " + mode_name(r));
    m.check(fast_engine().log(f, z, r), mpfr_engine().log(f, z, r),
            "log(" + hex(z.narrow()) + ") " + mode_name(r));
  }
  m.report();
}

}  // namespace

TEST_CASE("fast engine: + − × ÷ of all fp8 pairs equal the MPFR engine's, five modes",
          "[fast_engine][exhaustive]") {
  for (const Format& f :
       {Format::fp8e4m3(), Format::fp8e5m2(), parse_format("fp8e5m2,overflow=saturate"),
        parse_format("fp8e4m3,subnormals=off"), parse_format("fp8e5m2,subnormals=off")}) {
    const std::vector<Value> xs = inputs_of(f);
    Disagreements m;
    for (Op op : binary_ops) {
      for (Rounding r : all_modes) {
        for (const Value& a : xs) {
          for (const Value& b : xs) {
            m.check(apply(fast_engine(), op, f, a, b, r), apply(mpfr_engine(), op, f, a, b, r),
                    describe(op_name(op), f, a.narrow(), b.narrow(), r));
          }
        }
      }
    }
    INFO(f.name);
    m.report();
  }
}

TEST_CASE("fast engine: fma of all fp8 pairs with fixed addends equals the MPFR engine's",
          "[fast_engine][exhaustive]") {
  for (const Format& f :
       {Format::fp8e4m3(), Format::fp8e5m2(), parse_format("fp8e4m3,subnormals=off")}) {
    const std::vector<Value> xs = inputs_of(f);
    // zeros of both signs (the sign rules of exact zeros), the smallest subnormal (ties and
    // cancellation near zero), 1, a large value and infinities
    std::vector<double> addends{0.0,
                                -0.0,
                                std::ldexp(1.0, f.emin - f.precision + 1),
                                -1.0,
                                1.5,
                                3.0,
                                -std::ldexp(1.0, f.emax),
                                HUGE_VAL,
                                -HUGE_VAL};
    Disagreements m;
    for (double c : addends) {
      const Value cv = Value::from_double_exact(c);
      for (Rounding r : all_modes) {
        for (const Value& a : xs) {
          for (const Value& b : xs) {
            m.check(fast_engine().fma(f, a, b, cv, r), mpfr_engine().fma(f, a, b, cv, r),
                    describe("fma", f, a.narrow(), b.narrow(), r) + " + " + hex(c));
          }
        }
      }
    }
    INFO(f.name);
    m.report();
  }
}

TEST_CASE("fast engine: sqrt exp log cos sin of every fp16, bf16 and fp8 value, five modes",
          "[fast_engine][exhaustive]") {
  for (const Format& f :
       {Format::fp16(), Format::bf16(), Format::fp8e4m3(), Format::fp8e5m2(),
        parse_format("fp16,subnormals=off"), parse_format("bf16,overflow=saturate")}) {
    Disagreements m;
    compare_unary_all(f, inputs_of(f), m);
    INFO(f.name);
    m.report();
  }
  {
    const Format f = Format::fp16();
    Disagreements m;
    for (const Value& x : inputs_of(f)) {
      for (Rounding r : all_modes) {
        const auto [c, s] = fast_engine().cos_sin(f, x, r);
        const auto [ce, se] = mpfr_engine().cos_sin(f, x, r);
        m.check(c, ce, "cos_sin.cos(" + hex(x.narrow()) + ") " + mode_name(r));
        m.check(s, se, "cos_sin.sin(" + hex(x.narrow()) + ") " + mode_name(r));
      }
    }
    m.report();
  }
}

TEST_CASE("fast engine: 10^6 random fp32 operands per operation", "[fast_engine][bulk]") {
  random_binary(Format::fp32(), 1000000, 8);
}

TEST_CASE("fast engine: 10^7 random fp32 operands per operation", "[fast_engine][.long]") {
  random_binary(Format::fp32(), 10000000, 9);
}

TEST_CASE("fast engine: exp log cos sin of 2·10^5 random fp32 inputs", "[fast_engine]") {
  random_unary(Format::fp32(), 200000, 10);
  random_unary(Format::tf32(), 50000, 11);
}

TEST_CASE("fast engine: exp log cos sin of 2·10^6 random fp32 inputs", "[fast_engine][.long]") {
  random_unary(Format::fp32(), 2000000, 12);
}

TEST_CASE("fast engine: conversions of doubles into fast formats", "[fast_engine]") {
  std::mt19937_64 rng(13);
  Disagreements m;
  for (const Format& f :
       {Format::fp32(), Format::bf16(), Format::fp8e4m3(), parse_format("fp16,subnormals=off")}) {
    for (int i = 0; i < 100000; ++i) {
      // random bit patterns: every double, subnormal doubles and huge ones included
      const Value x = Value::from_double_exact(std::bit_cast<double>(rng()));
      const Rounding r = all_modes[i % 5];
      m.check(fast_engine().convert(f, x, r), mpfr_engine().convert(f, x, r),
              "convert(" + hex(x.narrow()) + ") into " + f.name + " " + mode_name(r));
    }
  }
  m.report();
}

TEST_CASE("fast engine: hard cases", "[fast_engine]") {
  Disagreements m;
  const Format fp32 = Format::fp32();
  auto neighbours = [&](const Format& f, double centre, int radius) {
    std::vector<Value> out;
    Value v = mpfr_engine().convert(f, Value::from_double_exact(centre), Rounding::nearest_even);
    for (int i = 0; i < radius; ++i) v = ropesim::numeric::next_down(f, v);
    for (int i = 0; i <= 2 * radius; ++i) {
      out.push_back(v);
      v = ropesim::numeric::next_up(f, v);
    }
    return out;
  };
  SECTION("cos and sin near multiples of pi/2") {
    for (const Format& f : {fp32, Format::bf16(), Format::fp16()}) {
      for (int k = 1; k < 2000; k += 1) {
        for (const Value& x : neighbours(f, k * M_PI_2, 2)) {
          for (Rounding r : all_modes) {
            m.check(fast_engine().cos(f, x, r), mpfr_engine().cos(f, x, r),
                    "cos(" + hex(x.narrow()) + ") " + mode_name(r) + " in " + f.name);
            m.check(fast_engine().sin(f, x, r), mpfr_engine().sin(f, x, r),
                    "sin(" + hex(x.narrow()) + ") " + mode_name(r) + " in " + f.name);
          }
        }
      }
    }
  }
  SECTION("exp at the overflow and underflow thresholds, tiny arguments") {
    for (const Format& f : {fp32, Format::bf16(), Format::fp16(), Format::fp8e4m3(),
                            parse_format("fp16,overflow=saturate")}) {
      const double largest = (2 - std::ldexp(1.0, 1 - f.precision)) * std::ldexp(1.0, f.emax);
      const double smallest = std::ldexp(1.0, f.emin - f.precision + 1);
      std::vector<double> centres{
          std::log(largest),    std::log(2 * largest), std::log(smallest),   std::log(smallest / 2),
          std::ldexp(1.0, -20), std::ldexp(1.0, -30),  std::ldexp(1.0, -60), -std::ldexp(1.0, -60)};
      for (double c : centres) {
        for (const Value& x : neighbours(f, c, 4)) {
          for (Rounding r : all_modes) {
            for (Unary op : unary_ops) {
              m.check(apply(fast_engine(), op, f, x, r), apply(mpfr_engine(), op, f, x, r),
                      std::string(unary_name(op)) + "(" + hex(x.narrow()) + ") " + mode_name(r) +
                          " in " + f.name);
            }
          }
        }
      }
    }
  }
  SECTION("exact ties of + and ×") {
    // 1 + 2^-24 is the midpoint of 1 and 1 + 2^-23 in fp32; (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24
    // is a midpoint too; both are decided differently by each nearest mode.
    const Value one = Value::from_double_exact(1.0),
                tiny = Value::from_double_exact(std::ldexp(1.0, -24));
    const Value s = Value::from_double_exact(1 + std::ldexp(1.0, -12));
    const Value t = Value::from_double_exact(1 + std::ldexp(1.0, -22));
    for (Rounding r : all_modes) {
      for (const Value& x : {one, t}) {
        m.check(fast_engine().add(fp32, x, tiny, r), mpfr_engine().add(fp32, x, tiny, r),
                "tie add " + std::string(mode_name(r)));
        m.check(fast_engine().sub(fp32, negate(x), tiny, r),
                mpfr_engine().sub(fp32, negate(x), tiny, r),
                "tie sub " + std::string(mode_name(r)));
      }
      m.check(fast_engine().mul(fp32, s, s, r), mpfr_engine().mul(fp32, s, s, r),
              "tie mul " + std::string(mode_name(r)));
    }
    // and the tie is really decided: RNE and RNA differ on 1 + 2^-22 + 2^-24
    CHECK(fast_engine().add(fp32, t, tiny, Rounding::nearest_even).narrow() !=
          fast_engine().add(fp32, t, tiny, Rounding::nearest_away).narrow());
  }
  m.report();
}

TEST_CASE("fast engine: formats generated by RapidCheck agree with the MPFR engine",
          "[fast_engine]") {
  rc::prop("p in [2, 25], random exponent ranges, all operations", [] {
    const int p = *rc::gen::inRange(2, 26);
    const bool near_limits = *rc::gen::inRange(0, 4) == 0;
    int emin, emax;
    if (near_limits) {  // outside the fast domain or at its edge: delegation and binary64's limits
      emin = *rc::gen::inRange(-1022 + p, -380);
      emax = *rc::gen::inRange(380, 1024);
    } else {
      emin = *rc::gen::inRange(-400, 10);
      emax = *rc::gen::inRange(std::max(emin, 0), 401);
    }
    Format f = Format::custom(p, emin, emax);
    f.subnormals = *rc::gen::inRange(0, 3) != 0;
    const int overflow = *rc::gen::inRange(0, 4);
    if (overflow == 1) f.has_infinity = false;  // saturating
    if (overflow == 2 && p >= 3) f.reserved_top_codes = 1;
    if (overflow == 3 && p >= 3) {  // E4M3-like: saturating with a reserved top code
      f.has_infinity = false;
      f.reserved_top_codes = 1;
    }
    RC_TAG(near_limits ? "near binary64 limits" : "inside the fast domain");
    std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
    for (int i = 0; i < 100; ++i) {
      const Rounding r = all_modes[i % 5];
      const Value a = Value::from_double_exact(random_element(f, rng));
      const Value b = Value::from_double_exact(random_element(f, rng));
      const Value c = Value::from_double_exact(random_element(f, rng));
      for (Op op : binary_ops) {
        const Value x = apply(fast_engine(), op, f, a, b, r),
                    y = apply(mpfr_engine(), op, f, a, b, r);
        RC_ASSERT_FALSE(!identical(x, y));
      }
      RC_ASSERT(identical(fast_engine().fma(f, a, b, c, r), mpfr_engine().fma(f, a, b, c, r)));
      // a·b + c with c ≈ −a·b: cancellation
      const Value d = mpfr_engine().convert(f, Value::from_double_exact(-(a.narrow() * b.narrow())),
                                            Rounding::upward);
      RC_ASSERT(identical(fast_engine().fma(f, a, b, d, r), mpfr_engine().fma(f, a, b, d, r)));
      for (Unary op : unary_ops) {
        RC_ASSERT(identical(apply(fast_engine(), op, f, a, r), apply(mpfr_engine(), op, f, a, r)));
      }
      // operands that are not elements of F (26-bit doubles, the engine's contract allows any
      // value): no false ties on the nearest-even shortcut
      const auto wide_operand = [&] {
        const double m =
            static_cast<double>((rng() % (std::uint64_t{1} << 25)) | (std::uint64_t{1} << 25));
        const int shift = static_cast<int>(rng() % 200) - 100 + (emin + emax) / 2;
        return Value::from_double_exact((rng() & 1 ? -1 : 1) * std::ldexp(m, shift - 25));
      };
      const Value wa = wide_operand(), wb = i % 2 ? wide_operand() : a;
      for (Op op : binary_ops) {
        RC_ASSERT(identical(apply(fast_engine(), op, f, wa, wb, r),
                            apply(mpfr_engine(), op, f, wa, wb, r)));
      }
      RC_ASSERT(identical(fast_engine().sqrt(f, wa, r), mpfr_engine().sqrt(f, wa, r)));
      RC_ASSERT(identical(fast_engine().fma(f, wa, wb, c, r), mpfr_engine().fma(f, wa, wb, c, r)));
      const Value u =
          Value::from_double_exact(std::ldexp(static_cast<double>(rng() % 4096) - 2048, -8));
      const Value uf = mpfr_engine().convert(f, u, r);
      RC_ASSERT(identical(fast_engine().convert(f, u, r), uf));
      RC_ASSERT(identical(fast_engine().exp(f, uf, r), mpfr_engine().exp(f, uf, r)));
      RC_ASSERT(identical(fast_engine().cos(f, uf, r), mpfr_engine().cos(f, uf, r)));
    }
  });
}

TEST_CASE("fast engine: the fallback counter counts undecided rounding tests", "[fast_engine]") {
  const Format f = Format::fp32();
  // exp(2^-60) = 1 + 2^-60 + …: glibc's result is 1 and its ±8 ulp interval straddles 1, an
  // element of F, so the upward rounding (1 + 2^-23) needs MPFR.
  const auto before = ropesim::numeric::fast_engine_counters();
  const Value x = Value::from_double_exact(std::ldexp(1.0, -60));
  const Value up = fast_engine().exp(f, x, Rounding::upward);
  CHECK(up.narrow() == 1 + std::ldexp(1.0, -23));
  const auto after = ropesim::numeric::fast_engine_counters();
  CHECK(after.fallbacks == before.fallbacks + 1);
  CHECK(after.evaluations == before.evaluations + 1);
  // exp(1) is decided by the fast path: no fallback
  const Value e = fast_engine().exp(f, Value::from_double_exact(1.0), Rounding::nearest_even);
  CHECK(e.narrow() == static_cast<double>(2.71828182845904523536f));
  CHECK(ropesim::numeric::fast_engine_counters().fallbacks == after.fallbacks);
}

TEST_CASE("engine_by_name: mpfr, fast, auto; anything else names the accepted values",
          "[fast_engine]") {
  CHECK(&ropesim::numeric::engine_by_name("mpfr") == &mpfr_engine());
  CHECK(&ropesim::numeric::engine_by_name("fast") == &fast_engine());
  CHECK(&ropesim::numeric::engine_by_name("auto") == &fast_engine());
  CHECK(ropesim::numeric::engine_by_name("fast").name() == "fast");
  CHECK_THROWS_AS(ropesim::numeric::engine_by_name("gpu"), ropesim::InvalidArgument);
  CHECK_THROWS_WITH(ropesim::numeric::engine_by_name("gpu"),
                    Catch::Contains("gpu") && Catch::Contains("mpfr, fast, auto"));
}

TEST_CASE("round_elementwise: arrays give the MPFR engine's bits element by element",
          "[fast_engine][bulk]") {
  using ropesim::numeric::ElementwiseOperation;
  const std::pair<ElementwiseOperation, Op> ops[] = {{ElementwiseOperation::add, Op::add},
                                                     {ElementwiseOperation::sub, Op::sub},
                                                     {ElementwiseOperation::mul, Op::mul},
                                                     {ElementwiseOperation::div, Op::div}};
  std::mt19937_64 rng(14);
  for (const Format& f :
       {Format::fp8e4m3(), Format::fp8e5m2(), Format::fp32(), Format::fixed(3, 4)}) {
    std::vector<double> a, b;
    if (f.precision <= 7) {  // every pair of values
      const std::vector<Value> xs = inputs_of(f);
      for (const Value& x : xs) {
        for (const Value& y : xs) {
          a.push_back(x.narrow());
          b.push_back(y.narrow());
        }
      }
    } else {
      for (int i = 0; i < 100000; ++i) {
        a.push_back(random_element(f, rng));
        b.push_back(random_element(f, rng));
      }
    }
    std::vector<double> out(a.size());
    Disagreements m;
    for (const auto& [op, name] : ops) {
      for (Rounding r : all_modes) {
        ropesim::numeric::round_elementwise(f, op, a, b, out, r);
        for (std::size_t i = 0; i < a.size(); ++i) {
          const Value exact = apply(mpfr_engine(), name, f, Value::from_double_exact(a[i]),
                                    Value::from_double_exact(b[i]), r);
          m.check(Value::from_double_exact(out[i]), exact,
                  describe(op_name(name), f, a[i], b[i], r));
        }
      }
    }
    INFO(f.name);
    m.report();
  }
  std::vector<double> two(2), three(3);
  CHECK_THROWS_AS(ropesim::numeric::round_elementwise(Format::fp32(), ElementwiseOperation::add,
                                                      two, two, three, Rounding::nearest_even),
                  ropesim::InvalidArgument);
}
