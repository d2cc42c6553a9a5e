// numeric::accumulate_dot (accumulator models: narrow, truncating, promoted every K products)
// against hand-computed values and against tests/derivations/accumulator_values.py (exact
// fractions, no ropesim code), and the spelling of AccumulatorModel.
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "numeric/accumulator.hpp"
#include "numeric/arithmetic.hpp"
#include "numeric/format.hpp"
#include "numeric/summation.hpp"

using ropesim::InvalidArgument;
using ropesim::numeric::accumulate_dot;
using ropesim::numeric::AccumulatorModel;
using ropesim::numeric::Flag;
using ropesim::numeric::Flags;
using ropesim::numeric::Format;
using ropesim::numeric::parse_accumulator_model;
using ropesim::numeric::Promotion;
using ropesim::numeric::Rounding;
using ropesim::numeric::Value;

namespace {

Value v(double d) { return Value::from_double_exact(d); }

AccumulatorModel model(const Format& a, Rounding r, std::size_t k = 0, Format w = Format::fp32()) {
  AccumulatorModel m;
  m.format = a;
  m.rounding = r;
  if (k) m.promotion = Promotion{k, w, Rounding::nearest_even};
  return m;
}

/// The LCG of tests/derivations/accumulator_values.py: exact bf16 values ±m·2^(e-7).
struct Lcg {
  std::uint64_t x;
  std::uint64_t next() { return x = 6364136223846793005ULL * x + 1442695040888963407ULL; }
  double bf16(int spread) {
    const std::uint64_t r = next();
    const double m = 128.0 + static_cast<double>(r >> 57);
    const int e = static_cast<int>((r >> 40) % static_cast<std::uint64_t>(spread)) - spread / 2;
    const double s = ((r >> 39) & 1) ? -1.0 : 1.0;
    return s * std::ldexp(m, e - 7);
  }
};

}  // namespace

TEST_CASE("accumulate_dot: fp16 stops at 2048, promotion every 128 into fp32 does not",
          "[numeric][accumulator]") {
  // THEORY §1: a sequential sum of 1.0 in fp16 stops growing at 2048 (2048 + 1 is a tie between
  // 2048 and 2050; nearest-even keeps 2048). Chunks of 128 ones are exact in fp16 (128 < 2048)
  // and 32 chunks of 128 add exactly in fp32: 4096.
  const std::vector<Value> ones(4096, v(1.0));
  CHECK(accumulate_dot(ones, ones, model(Format::fp16(), Rounding::nearest_even)).to_double() ==
        2048);
  CHECK(
      accumulate_dot(ones, ones, model(Format::fp16(), Rounding::nearest_even, 128)).to_double() ==
      4096);
  // K = 2048: each chunk reaches 2048 exactly (the 2048th one makes 2047 + 1, exact), so 4096.
  CHECK(
      accumulate_dot(ones, ones, model(Format::fp16(), Rounding::nearest_even, 2048)).to_double() ==
      4096);
  // K = 4096 is one chunk: the narrow result, converted exactly into fp32.
  CHECK(
      accumulate_dot(ones, ones, model(Format::fp16(), Rounding::nearest_even, 4096)).to_double() ==
      2048);
  // Python second implementation agrees (accumulator_values.py: 0x1p+11 and 0x1p+12).
}

TEST_CASE("accumulate_dot: a truncating accumulator drops what nearest-even rounds up",
          "[numeric][accumulator]") {
  // Hand: 2048 + 1.5 in fp16 (ulp 2 above 2048): exact 2049.5 lies between 2048 and 2050;
  // nearest-even gives 2050 (distance 0.5 vs 1.5), toward-zero gives 2048.
  const std::vector<Value> a = {v(2048), v(1.5)}, b = {v(1), v(1)};
  CHECK(accumulate_dot(a, b, model(Format::fp16(), Rounding::nearest_even)).to_double() == 2050);
  CHECK(accumulate_dot(a, b, model(Format::fp16(), Rounding::toward_zero)).to_double() == 2048);
  // The product is rounded once from the exact value: (1 + 2^-10)² = 1 + 2^-9 + 2^-20, and
  // 2^-20 is below half an ulp (2^-11) of fp16 at 1, so both modes give 1 + 2^-9.
  const std::vector<Value> c = {v(1 + std::ldexp(1, -10))};
  CHECK(accumulate_dot(c, c, model(Format::fp16(), Rounding::nearest_even)).to_double() ==
        1 + std::ldexp(1, -9));
  // Toward-zero on a negative product truncates toward zero: -(1 + 2^-9 + 2^-20) → -(1 + 2^-9).
  const std::vector<Value> d = {v(-(1 + std::ldexp(1, -10)))};
  CHECK(accumulate_dot(c, d, model(Format::fp16(), Rounding::toward_zero)).to_double() ==
        -(1 + std::ldexp(1, -9)));
}

TEST_CASE("accumulate_dot: a product is rounded once from the exact value (fused multiplier)",
          "[numeric][accumulator]") {
  // Hand: a = b = 1 + 2^-12 (an fp32 value, not in fp16). The exact product
  // 1 + 2^-11 + 2^-24 lies just above the midpoint 1 + 2^-11 of fp16's neighbours 1 and
  // 1 + 2^-10, so it rounds to 1 + 2^-10. Converting the inputs into fp16 first would give
  // 1 · 1 = 1 (1 + 2^-12 is below half an ulp of 1).
  const std::vector<Value> a = {v(1 + std::ldexp(1, -12))};
  CHECK(accumulate_dot(a, a, model(Format::fp16(), Rounding::nearest_even)).to_double() ==
        1 + std::ldexp(1, -10));
  CHECK(accumulate_dot(a, a, model(Format::fp16(), Rounding::toward_zero)).to_double() == 1);
}

TEST_CASE("accumulate_dot: one chunk of promotion is the narrow sum converted into W",
          "[numeric][accumulator]") {
  // Property: with K ≥ n there is one chunk, so the promoted result is rnd_W(narrow result);
  // with A = fp16 ⊆ W = fp32 the conversion is exact and the two are equal as numbers.
  rc::prop("K >= n: promoted = narrow", [] {
    const auto n = *rc::gen::inRange<std::size_t>(1, 60);
    const auto k = *rc::gen::inRange<std::size_t>(n, 200);
    const auto ints = *rc::gen::container<std::vector<int>>(2 * n, rc::gen::inRange(-2048, 2048));
    std::vector<Value> x, y;
    for (std::size_t i = 0; i < n; ++i) {
      x.push_back(v(std::ldexp(ints[i], -4)));
      y.push_back(v(std::ldexp(ints[n + i], -6)));
    }
    const Value narrow = accumulate_dot(x, y, model(Format::fp16(), Rounding::toward_zero));
    const Value promoted = accumulate_dot(x, y, model(Format::fp16(), Rounding::toward_zero, k));
    RC_ASSERT(promoted.same_bits(narrow));
  });
}

TEST_CASE("accumulate_dot matches the exact-fraction second implementation",
          "[numeric][accumulator]") {
  // tests/derivations/accumulator_values.py, LCG seed 20261201, 300 bf16 terms per vector,
  // exponent spread 8. Exact sum 0x1.128e50b8p+8.
  Lcg g{20261201};
  std::vector<Value> a, b;
  for (int k = 0; k < 300; ++k) a.push_back(v(g.bf16(8)));
  for (int k = 0; k < 300; ++k) b.push_back(v(g.bf16(8)));
  const Format p11 = Format::custom(11, -126, 127);  // p=11,e=8
  REQUIRE(p11 == ropesim::numeric::parse_format("p=11,e=8"));
  struct Case {
    Format a;
    Rounding r;
    std::size_t k;
    double want;
  };
  const std::vector<Case> cases = {
      {p11, Rounding::nearest_even, 0, 0x1.134p+8},
      {p11, Rounding::nearest_even, 1, 0x1.127a9p+8},
      {p11, Rounding::nearest_even, 7, 0x1.127a4p+8},
      {p11, Rounding::nearest_even, 128, 0x1.1389p+8},
      {p11, Rounding::toward_zero, 0, 0x1.f58p+7},
      {p11, Rounding::toward_zero, 1, 0x1.1298dcp+8},
      {p11, Rounding::toward_zero, 7, 0x1.124ccp+8},
      {p11, Rounding::toward_zero, 128, 0x1.08bep+8},
      {Format::fp16(), Rounding::toward_zero, 0, 0x1.f58p+7},
      {Format::fp16(), Rounding::toward_zero, 128, 0x1.08bep+8},
      {Format::bf16(), Rounding::nearest_even, 0, 0x1.14p+8},
      {Format::bf16(), Rounding::nearest_even, 1, 0x1.1368ap+8},
      {Format::bf16(), Rounding::nearest_even, 7, 0x1.13acp+8},
      {Format::bf16(), Rounding::nearest_even, 128, 0x1.105cp+8},
  };
  for (const Case& c : cases) {
    const AccumulatorModel m = model(c.a, c.r, c.k);
    INFO(to_string(m));
    CHECK(accumulate_dot(a, b, m).same_bits(v(c.want)));
    // both engines, bit for bit
    CHECK(accumulate_dot(a, b, m, ropesim::numeric::mpfr_engine()).same_bits(v(c.want)));
  }
}

TEST_CASE("accumulate_dot: overflow in the accumulator is flagged; saturation under toward-zero",
          "[numeric][accumulator]") {
  // 3 · 200·200 = 120000 > 65504: fp16 nearest-even reaches 80000 → inf at the second sum;
  // toward-zero clamps to the largest finite 65504 (accumulator_values.py: inf, 0x1.ffcp+15).
  const std::vector<Value> big(3, v(200));
  Flags flags;
  const Value rne = accumulate_dot(big, big, model(Format::fp16(), Rounding::nearest_even),
                                   ropesim::numeric::default_engine(), &flags);
  CHECK(rne.is_inf());
  CHECK(flags.test(Flag::overflow));
  Flags rz_flags;
  const Value rz = accumulate_dot(big, big, model(Format::fp16(), Rounding::toward_zero),
                                  ropesim::numeric::default_engine(), &rz_flags);
  CHECK(rz.to_double() == 65504);
  CHECK(rz_flags.test(Flag::overflow));
  // inf − inf in the accumulator: invalid, NaN.
  const std::vector<Value> x = {v(HUGE_VAL), v(-HUGE_VAL)}, one = {v(1), v(1)};
  Flags inv;
  CHECK(accumulate_dot(x, one, model(Format::fp16(), Rounding::nearest_even),
                       ropesim::numeric::default_engine(), &inv)
            .is_nan());
  CHECK(inv.test(Flag::invalid));
  // 0·inf: invalid at the product.
  const std::vector<Value> z = {v(0)}, inf = {v(HUGE_VAL)};
  Flags inv2;
  CHECK(accumulate_dot(z, inf, model(Format::fp32(), Rounding::nearest_even),
                       ropesim::numeric::default_engine(), &inv2)
            .is_nan());
  CHECK(inv2.test(Flag::invalid));
  // Signs of special products (IEEE 754): (-0)·3 = -0, (-2)·inf = -inf.
  const std::vector<Value> m0 = {v(-0.0)}, three = {v(3)}, m2 = {v(-2)};
  const Value zero = accumulate_dot(m0, three, model(Format::fp16(), Rounding::nearest_even));
  CHECK((zero.is_zero() && zero.sign_bit()));
  const Value minus_inf = accumulate_dot(m2, inf, model(Format::fp16(), Rounding::nearest_even));
  CHECK((minus_inf.is_inf() && minus_inf.sign_bit()));
  // A finite value beyond a double's range times 0 is 0, not NaN: 2^5000 in p=11 with a wide
  // exponent range (a wide Value), times +0.
  const Format wide = Format::custom(11, -20000, 20000);
  const ropesim::numeric::Arithmetic w(wide, Rounding::nearest_even);
  mpz_class two_5000 = 1;
  two_5000 <<= 5000;
  const std::vector<Value> huge = {w.from_integer(two_5000)};
  REQUIRE(huge[0].is_wide());
  Flags wide_flags;
  const Value product = accumulate_dot(huge, z, model(wide, Rounding::nearest_even),
                                       ropesim::numeric::default_engine(), &wide_flags);
  CHECK((product.is_zero() && !product.sign_bit()));
  CHECK_FALSE(wide_flags.test(Flag::invalid));
  // No flags on an exact small sum.
  Flags none;
  accumulate_dot(one, one, model(Format::fp16(), Rounding::nearest_even),
                 ropesim::numeric::default_engine(), &none);
  CHECK_FALSE(none.any());
}

TEST_CASE("accumulate_dot narrow in F with nearest-even equals dot() under sequential summation",
          "[numeric][accumulator]") {
  // Property (RapidCheck, fixed seed from tests/main.cpp): with A = F and no promotion the model
  // is THEORY §2.1's canonical sequential dot product; numeric::dot is the independent
  // implementation (Arithmetic::mul then Arithmetic::add).
  rc::prop("narrow fp16 accumulate = sequential dot", [] {
    const auto n = *rc::gen::inRange<std::size_t>(1, 40);
    const auto ints = *rc::gen::container<std::vector<int>>(2 * n, rc::gen::inRange(-2048, 2048));
    // |ints| < 2^11 and exponents keep every coordinate an element of fp16 (|x| ≤ 2047·2^4,
    // |y| ≤ 2047·2^2, both multiples of 2^-18)
    const auto shift = *rc::gen::inRange(-12, 5);
    std::vector<Value> x, y;
    for (std::size_t k = 0; k < n; ++k) {
      x.push_back(v(std::ldexp(ints[k], shift)));
      y.push_back(v(std::ldexp(ints[n + k], -shift / 2 - 4)));
    }
    ropesim::numeric::EvaluationPolicy policy;
    policy.format = Format::fp16();
    const Value want = ropesim::numeric::dot(x, y, policy);
    const Value got = accumulate_dot(x, y, model(Format::fp16(), Rounding::nearest_even));
    RC_ASSERT(got.same_bits(want));
  });
}

TEST_CASE("AccumulatorModel spellings", "[numeric][accumulator]") {
  const AccumulatorModel m = parse_accumulator_model("p=11,e=8@toward-zero/128>fp32");
  CHECK(m.format == Format::custom(11, -126, 127));
  CHECK(m.rounding == Rounding::toward_zero);
  REQUIRE(m.promotion);
  CHECK(m.promotion->interval == 128);
  CHECK(m.promotion->format == Format::fp32());
  CHECK(to_string(parse_accumulator_model("fp16")) == "fp16");
  CHECK(to_string(parse_accumulator_model("fp16@rz/4>fp32@rd")) ==
        "fp16@toward-zero/4>fp32@downward");
  CHECK_THROWS_AS(parse_accumulator_model("fp16/0>fp32"), InvalidArgument);
  CHECK_THROWS_AS(parse_accumulator_model("fp16/x>fp32"), InvalidArgument);
  CHECK_THROWS_AS(parse_accumulator_model("fp16/128"), InvalidArgument);
  CHECK_THROWS_AS(parse_accumulator_model("fp99"), InvalidArgument);
  CHECK_THROWS_AS(parse_accumulator_model("fp16@sideways"), InvalidArgument);
  const std::vector<Value> one = {v(1)}, two = {v(1), v(2)};
  CHECK_THROWS_AS(accumulate_dot(one, two, m), InvalidArgument);
}
