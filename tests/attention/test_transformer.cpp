// The F-transformer (THEORY §2, §2.1): arithmetic, summation policies, softmax variants,
// rotations, heads, masking and BOS, FFN, LayerNorm, runs. Every expected value is derived
// independently: by hand (derivation in the comment, checked with exact rational arithmetic in
// Python's fractions/decimal), from THEORY/the papers, or by a second implementation
// (hardware binary32 with -ffp-contract=off, GMP rationals, the MPFR engine, apply_rotation).
#include <rapidcheck.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attention/transformer/run.hpp"
#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"
#include "numeric/format_properties.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;
using ropesim::numeric::Format;
using ropesim::numeric::Rounding;
using ropesim::numeric::Value;

namespace {

Value v(double d) { return Value::from_double_exact(d); }

std::vector<Value> values(std::initializer_list<double> ds) {
  std::vector<Value> out;
  for (double d : ds) out.push_back(v(d));
  return out;
}

EvaluationPolicy policy_of(const Format& f, Summation s = Summation::sequential) {
  EvaluationPolicy p;
  p.format = f;
  p.summation = s;
  return p;
}

bool same(const Value& a, const Value& b) { return a.same_bits(b); }

std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

/// A random finite binary32 value (all bit patterns but inf/NaN, so subnormals appear).
rc::Gen<float> any_finite_float() {
  return rc::gen::map(rc::gen::arbitrary<std::uint32_t>(), [](std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    if (!std::isfinite(f)) f = 1.5f;
    return f;
  });
}

/// Floats of moderate magnitude (products and sums stay finite), including tiny ones.
rc::Gen<float> moderate_float() {
  return rc::gen::map(
      rc::gen::pair(rc::gen::inRange(-(1 << 20), 1 << 20), rc::gen::inRange(-40, 20)),
      [](std::pair<int, int> p) { return std::ldexp(static_cast<float>(p.first), p.second); });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Arithmetic: the binary64 fast path against the MPFR engine (second implementation)
// ---------------------------------------------------------------------------------------------

TEST_CASE("Arithmetic fast path agrees with the MPFR engine bit for bit",
          "[transformer][arithmetic]") {
  const auto& mpfr = ropesim::numeric::mpfr_engine();
  for (const Format& f : {Format::fp16(), Format::bf16(), Format::fp32(), Format::tf32(),
                          Format::fp8e5m2(), Format::fp64()}) {
    const Arithmetic fast(f, Rounding::nearest_even, mpfr);
    REQUIRE(fast.fast());
    INFO(f.name);
    const bool ok = rc::check(f.name + " + - * / sqrt", [&] {
      const float a0 = *any_finite_float();
      const float b0 = *any_finite_float();
      const int shift = *rc::gen::inRange(-30, 30);
      // Values of F: round the (scaled) binary32 inputs into F with the engine.
      const Value a =
          mpfr.convert(f, v(std::ldexp(static_cast<double>(a0), shift)), Rounding::nearest_even);
      const Value b = mpfr.convert(f, v(static_cast<double>(b0)), Rounding::nearest_even);
      RC_ASSERT(same(fast.add(a, b), mpfr.add(f, a, b, Rounding::nearest_even)));
      RC_ASSERT(same(fast.sub(a, b), mpfr.sub(f, a, b, Rounding::nearest_even)));
      RC_ASSERT(same(fast.mul(a, b), mpfr.mul(f, a, b, Rounding::nearest_even)));
      RC_ASSERT(same(fast.div(a, b), mpfr.div(f, a, b, Rounding::nearest_even)));
      RC_ASSERT(same(fast.sqrt(a), mpfr.sqrt(f, a, Rounding::nearest_even)));
      RC_ASSERT(same(fast.convert(v(static_cast<double>(a0) * 3.0)),
                     mpfr.convert(f, v(static_cast<double>(a0) * 3.0), Rounding::nearest_even)));
    });
    CHECK(ok);
    // Operands spread over F's own exponent range: subnormals, ties, the overflow boundary.
    const bool ok2 = rc::check(f.name + " in-range operands", [&] {
      auto operand = [&] {
        const int m = *rc::gen::inRange(-(1 << 13), 1 << 13);
        const int e = *rc::gen::inRange(f.emin - f.precision - 2, f.emax - 10);
        return mpfr.convert(f, v(std::ldexp(static_cast<double>(m), e)), Rounding::nearest_even);
      };
      const Value a = operand(), b = operand();
      RC_ASSERT(same(fast.add(a, b), mpfr.add(f, a, b, Rounding::nearest_even)));
      RC_ASSERT(same(fast.sub(a, b), mpfr.sub(f, a, b, Rounding::nearest_even)));
      RC_ASSERT(same(fast.mul(a, b), mpfr.mul(f, a, b, Rounding::nearest_even)));
      RC_ASSERT(same(fast.div(a, b), mpfr.div(f, a, b, Rounding::nearest_even)));
      RC_ASSERT(
          same(fast.sqrt(fast.mul(a, a)),
               mpfr.sqrt(f, mpfr.mul(f, a, a, Rounding::nearest_even), Rounding::nearest_even)));
    });
    CHECK(ok2);
  }
  // Formats outside the fast path take the engine.
  CHECK_FALSE(Arithmetic(Format::fp8e4m3(), Rounding::nearest_even).fast());
  CHECK_FALSE(Arithmetic(Format::fp32(), Rounding::upward).fast());
  CHECK_FALSE(Arithmetic(Format::ieee(30, 8), Rounding::nearest_even).fast());
}

TEST_CASE("fp16 overflow threshold and subnormal rounding by hand", "[transformer][arithmetic]") {
  const Arithmetic f(Format::fp16(), Rounding::nearest_even);
  // fp16 max 65504, ulp 32 there: 65504 + 16 is the tie to the (even) overflow value → inf;
  // 65504 + 15.99... stays 65504. 65519 = 65504 + 15 is not in F; use products:
  // 256 · 256 = 65536 > 65520 → +inf. 255.875·256 = 65504 exactly.
  CHECK(f.mul(v(256), v(256)).is_inf());
  CHECK(f.mul(v(255.875), v(256)).to_double() == 65504.0);
  // Smallest subnormal 2^-24; 2^-24 · 0.5 = 2^-25 is a tie between 0 and 2^-24 → 0 (even).
  CHECK(f.mul(v(std::ldexp(1.0, -24)), v(0.5)).is_zero());
  // 2^-24 · 0.75 = 1.5·2^-25 > half → 2^-24.
  CHECK(f.mul(v(std::ldexp(1.0, -24)), v(0.75)).to_double() == std::ldexp(1.0, -24));
}

TEST_CASE("exact_decimal is exact and reads back", "[transformer][arithmetic]") {
  CHECK(exact_decimal(v(0.5)) == "0.5");
  CHECK(exact_decimal(v(-17.34375)) == "-17.34375");
  CHECK(exact_decimal(v(3)) == "3");
  CHECK(exact_decimal(v(-0.0)) == "-0");
  CHECK(exact_decimal(v(0.0)) == "0");
  CHECK(exact_decimal(v(HUGE_VAL)) == "inf");
  // 2^-24 = 5.9604644775390625e-8 exactly.
  CHECK(exact_decimal(v(std::ldexp(1.0, -24))) == "5.9604644775390625e-8");
  // fp32(0.1) = 13421773·2^-27 = 0.100000001490116119384765625 exactly.
  CHECK(exact_decimal(v(static_cast<double>(0.1f))) == "0.100000001490116119384765625");
  CHECK(exact_decimal(v(1e6)) == "1e6");
  CHECK(exact_rational(v(0.375)) == mpq_class(3, 8));
}

// ---------------------------------------------------------------------------------------------
// Summation policies (THEORY §1, §2.1)
// ---------------------------------------------------------------------------------------------

TEST_CASE("fp16 sum of ones: sequential stops at 2048, the others reach the count",
          "[transformer][summation]") {
  // THEORY §1: in fp16 (p = 11) the spacing at 2048 is 2, so 2048 + 1 is a tie that rounds to
  // the even 2048: a sequential sum of 1.0 stops there. Pairwise sums of 4096 ones add equal
  // powers of two at every level (1+1, 2+2, ..., 2048+2048), all exact. fp32 accumulation is
  // exact up to 2^24, and 4096 is in fp16. Exact accumulation gives 4096.
  const std::vector<Value> ones(4096, v(1));
  CHECK(sum(ones, policy_of(Format::fp16())).to_double() == 2048);
  CHECK(sum(ones, policy_of(Format::fp16(), Summation::pairwise)).to_double() == 4096);
  EvaluationPolicy wide = policy_of(Format::fp16(), Summation::wide_accumulator);
  wide.accumulator = Format::fp32();
  CHECK(sum(ones, wide).to_double() == 4096);
  CHECK(sum(ones, policy_of(Format::fp16(), Summation::exact)).to_double() == 4096);
  // The same through dot products (products 1·1 = 1 are exact).
  CHECK(dot(ones, ones, policy_of(Format::fp16())).to_double() == 2048);
  CHECK(dot(ones, ones, policy_of(Format::fp16(), Summation::pairwise)).to_double() == 4096);
}

TEST_CASE("summation policies on [2048, 1, 1] in fp16 and bf16 with an fp32 accumulator",
          "[transformer][summation]") {
  // Sequential: 2048 + 1 → 2048 (tie to even), + 1 → 2048. Pairwise splits [2048] | [1, 1]:
  // 2048 + 2 = 2050 (representable: even multiple of the spacing 2). Exact: 2050.
  const auto t = values({2048, 1, 1});
  CHECK(sum(t, policy_of(Format::fp16())).to_double() == 2048);
  CHECK(sum(t, policy_of(Format::fp16(), Summation::pairwise)).to_double() == 2050);
  CHECK(sum(t, policy_of(Format::fp16(), Summation::exact)).to_double() == 2050);
  // bf16 (p = 8): the spacing at 256 is 2, so sequential sums of ones stop at 256; with fp32
  // accumulation 300 ones give 300 = 150·2, which is in bf16.
  const std::vector<Value> ones(300, v(1));
  CHECK(sum(ones, policy_of(Format::bf16())).to_double() == 256);
  EvaluationPolicy wide = policy_of(Format::bf16(), Summation::wide_accumulator);
  wide.accumulator = Format::fp32();
  CHECK(sum(ones, wide).to_double() == 300);
  // An empty sum is +0; affine appends the bias as the last term.
  CHECK(same(sum({}, policy_of(Format::fp16())), v(0)));
  CHECK(affine(values({2048}), values({1}), v(1), policy_of(Format::fp16())).to_double() == 2048);
  CHECK(affine(values({2048}), values({1}), v(1), policy_of(Format::fp16(), Summation::exact))
            .to_double() == 2048);
  CHECK_THROWS_AS(dot(values({1, 2}), values({1}), policy_of(Format::fp32())), InvalidArgument);
}

TEST_CASE("fp32 sequential dot product equals the hardware binary32 loop",
          "[transformer][summation]") {
  // Second implementation: IEEE binary32 with round-to-nearest-even and -ffp-contract=off
  // computes exactly rnd(rnd(x0·y0) + rnd(x1·y1)) + ... left to right.
  const EvaluationPolicy p = policy_of(Format::fp32());
  const bool ok = rc::check("dot fp32 == hardware", [&] {
    const int n = *rc::gen::inRange(1, 24);
    std::vector<float> x(n), y(n);
    std::vector<Value> xv, yv;
    for (int k = 0; k < n; ++k) {
      x[k] = *moderate_float();
      y[k] = *moderate_float();
      xv.push_back(v(x[k]));
      yv.push_back(v(y[k]));
    }
    float s = x[0] * y[0];
    for (int k = 1; k < n; ++k) s += x[k] * y[k];
    RC_ASSERT(float_bits(static_cast<float>(dot(xv, yv, p).to_double())) == float_bits(s));
  });
  CHECK(ok);
}

TEST_CASE("exact accumulation is the correctly rounded exact sum", "[transformer][summation]") {
  // Second implementation: the exact sum in GMP rationals, and the neighbours of the result
  // from the hardware (nextafterf): the result must be the nearest float, ties to even.
  const EvaluationPolicy p = policy_of(Format::fp32(), Summation::exact);
  const bool ok = rc::check("exact dot fp32", [&] {
    const int n = *rc::gen::inRange(1, 16);
    std::vector<Value> xv, yv;
    mpq_class q = 0;
    for (int k = 0; k < n; ++k) {
      const float a = *moderate_float(), b = *moderate_float();
      xv.push_back(v(a));
      yv.push_back(v(b));
      q += mpq_class(static_cast<double>(a)) * mpq_class(static_cast<double>(b));
    }
    const float r = static_cast<float>(dot(xv, yv, p).to_double());
    RC_ASSERT(std::isfinite(r));
    const mpq_class err = abs(q - mpq_class(static_cast<double>(r)));
    for (float nb : {std::nextafter(r, HUGE_VALF), std::nextafter(r, -HUGE_VALF)}) {
      const mpq_class e2 = abs(q - mpq_class(static_cast<double>(nb)));
      RC_ASSERT(err <= e2);
      if (err == e2) RC_ASSERT((float_bits(r) & 1u) == 0u);  // tie → even significand
    }
  });
  CHECK(ok);
  // Special values under exact accumulation: inf·0 = NaN; +inf and -inf = NaN; one sign = inf.
  CHECK(dot(values({HUGE_VAL}), values({0}), p).is_nan());
  CHECK(dot(values({HUGE_VAL, -HUGE_VAL}), values({1, 1}), p).is_nan());
  CHECK(dot(values({HUGE_VAL, 5}), values({1, 1}), p).to_double() == HUGE_VAL);
}

// ---------------------------------------------------------------------------------------------
// Softmax (THEORY §2; RoPE-X eq. 2)
// ---------------------------------------------------------------------------------------------

TEST_CASE("stable softmax selects exactly with a lead of f_large (fp16 by hand)",
          "[transformer][softmax]") {
  const EvaluationPolicy p = policy_of(Format::fp16());
  // THEORY §1: f_large(fp16) = 17.34375 (≈ 25·ln2 = 17.3287 snapped up into F).
  const auto fl = ropesim::numeric::f_large(Format::fp16());
  REQUIRE(fl);
  REQUIRE(fl->to_double() == 17.34375);
  // Lead f_large: e = [exp(0), exp(-17.34375)] = [1, 0] since e^-17.34375 = 2^-25·e^-0.0151
  // is below half the smallest subnormal 2^-24; Z = 1, α = [1, 0].
  auto a = stable_softmax(values({17.34375, 0}), p);
  CHECK(a[0].to_double() == 1.0);
  CHECK(a[1].is_zero());
  // The predecessor of f_large in fp16 (spacing 2^-6 in [16, 32)) is 17.328125. Checked by
  // hand: e^-17.328125 = 2^-25·e^(25 ln2 - 17.328125) = 2^-25·e^0.00055 > 2^-25, so it rounds
  // to the smallest subnormal 2^-24. Z = rnd(1 + 2^-24) = 1 (spacing at 1 is 2^-10), so the
  // winner's weight is STILL exactly 1 — what fails is the loser's weight, 2^-24 ≠ 0, and so
  // the selection: with values (0, 1) the output is 2^-24, not 0.
  a = stable_softmax(values({17.328125, 0}), p);
  CHECK(a[0].to_double() == 1.0);
  CHECK(a[1].to_double() == std::ldexp(1.0, -24));
  const std::vector<std::vector<Value>> vals{values({0}), values({1})};
  CHECK(attend(values({17.34375, 0}), vals, 1, p, SoftmaxVariant::stable).output[0].is_zero());
  CHECK(attend(values({17.328125, 0}), vals, 1, p, SoftmaxVariant::stable).output[0].to_double() ==
        std::ldexp(1.0, -24));
  // Same statement for fp32 with f_large from numeric (THEORY §1: ≈ 103.97).
  const auto fl32 = ropesim::numeric::f_large(Format::fp32());
  REQUIRE(fl32);
  const EvaluationPolicy p32 = policy_of(Format::fp32());
  a = stable_softmax(std::vector<Value>{*fl32, v(0)}, p32);
  CHECK(a[0].to_double() == 1.0);
  CHECK(a[1].is_zero());
  const Value pred = ropesim::numeric::next_down(Format::fp32(), *fl32);
  a = stable_softmax(std::vector<Value>{pred, v(0)}, p32);
  CHECK(a[0].to_double() == 1.0);
  CHECK(a[1].to_double() > 0.0);
}

TEST_CASE("ties at the max each get exp(0) = 1", "[transformer][softmax]") {
  const EvaluationPolicy p = policy_of(Format::fp32());
  // e = [1, 1], Z = 2: α = 1/2 each.
  auto a = stable_softmax(values({5, 5}), p);
  CHECK(a[0].to_double() == 0.5);
  CHECK(a[1].to_double() == 0.5);
  // Three-way tie: Z = 3, α = rnd(1/3): hardware binary32 division is correctly rounded.
  a = stable_softmax(values({-2.5, -2.5, -2.5}), p);
  for (const auto& x : a) CHECK(x.to_double() == static_cast<double>(1.0f / 3.0f));
  // Two tied winners ahead of a loser by f_large: exactly 1/2 each, the loser 0.
  a = stable_softmax(values({104, 104, 0}), p);
  CHECK(a[0].to_double() == 0.5);
  CHECK(a[1].to_double() == 0.5);
  CHECK(a[2].is_zero());
}

TEST_CASE("fp16 without max subtraction overflows to NaN; stable and online do not",
          "[transformer][softmax]") {
  const EvaluationPolicy p = policy_of(Format::fp16());
  // e^12 ≈ 162754.79 > 65520 (the fp16 overflow threshold max + ulp/2 = 65504 + 16) → +inf;
  // Z = inf + 1 = inf; α_0 = inf/inf = NaN, α_1 = 1/inf = 0.
  auto a = softmax(values({12, 0}), p, SoftmaxVariant::no_max_subtraction);
  CHECK(a[0].is_nan());
  CHECK(a[1].is_zero());
  const std::vector<std::vector<Value>> vals{values({1}), values({1})};
  CHECK(attend(values({12, 0}), vals, 1, p, SoftmaxVariant::no_max_subtraction).output[0].is_nan());
  // Stable: e = [1, rnd(e^-12)]; e^-12·2^24 = 103.08, so rnd(e^-12) = 103·2^-24 (subnormal);
  // Z = rnd(1 + 103·2^-24) = 1; α = [1, 103·2^-24].
  a = stable_softmax(values({12, 0}), p);
  CHECK(a[0].to_double() == 1.0);
  CHECK(a[1].to_double() == 103 * std::ldexp(1.0, -24));
  // Online (running format F = fp16 here): m = 12, l = 1; then c = e^0 = 1,
  // p = 103·2^-24, l = rnd(1 + 103·2^-24) = 1: the same weights, no overflow.
  a = softmax(values({12, 0}), p, SoftmaxVariant::online);
  CHECK(a[0].to_double() == 1.0);
  CHECK(a[1].to_double() == 103 * std::ldexp(1.0, -24));
  // Increasing scores [0, 12]: m = 0, l = 1; then m = 12, c = rnd(e^-12) = 103·2^-24,
  // l = rnd(1·c + 1) = 1; α = [e^-12 → 103·2^-24, 1]. Output with values (1, 1):
  // o = rnd(rnd(1·c) + 1·1) = 1, divided by l = 1.
  const auto out = attend(values({0, 12}), vals, 1, p, SoftmaxVariant::online);
  CHECK(out.weights[0].to_double() == 103 * std::ldexp(1.0, -24));
  CHECK(out.weights[1].to_double() == 1.0);
  CHECK(out.output[0].to_double() == 1.0);
  // online refuses pairwise/exact summation (its running sum is sequential).
  CHECK_THROWS_AS(
      softmax(values({1}), policy_of(Format::fp16(), Summation::pairwise), SoftmaxVariant::online),
      InvalidArgument);
}

TEST_CASE("no visible key gives the zero output, never 0/0", "[transformer][softmax]") {
  const auto out = attend({}, {}, 3, policy_of(Format::fp16()), SoftmaxVariant::stable);
  CHECK(out.weights.empty());
  REQUIRE(out.output.size() == 3);
  for (const auto& x : out.output) CHECK(same(x, v(0)));
  CHECK(parse_softmax_variant("flash") == SoftmaxVariant::online);
  CHECK_THROWS_AS(parse_softmax_variant("sparsemax"), InvalidArgument);
  CHECK_THROWS_AS(parse_summation("kahan"), InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Rotations and heads (THEORY §2.1, §3)
// ---------------------------------------------------------------------------------------------

namespace {

RotarySegment segment(const std::string& schedule, const std::vector<std::string>& realisations,
                      const Format& f) {
  RotarySegment s;
  s.schedule = parse_schedule(schedule);
  for (const auto& r : realisations) {
    if (r == "none") {
      s.realisations.emplace_back(std::nullopt);
    } else {
      s.realisations.emplace_back(parse_realisation(r, f));
    }
  }
  s.layout = PairLayout::adjacent;
  return s;
}

}  // namespace

TEST_CASE("a head mixes a periodic-table block, an irrational block and unrotated pairs",
          "[transformer][rope]") {
  const Format f = Format::fp32();
  const EvaluationPolicy p = policy_of(f);
  AttentionHead head;
  head.head_dim = 8;
  head.rotary = {segment("periodic:m=4", {"r3"}, f), segment("single:g=1", {"r1"}, f),
                 segment("single:g=1", {"none"}, f)};
  head.rotary.push_back(RotarySegment{unrotated_schedule(1), {}, PairLayout::adjacent});
  const HeadRotations rot = realise_head(head, 6, p);
  const auto x = values({1.5, -2, 0.25, 3, 7, 9, -4, 5});
  // Position 5: r3 table of m = 4 at 5 mod 4 = 1: (cos π/2, sin π/2) = (0, 1) exactly, so the
  // pair (1.5, -2) becomes (0·1.5 - 1·(-2), 1·1.5 + 0·(-2)) = (2, 1.5).
  // r1 with g = 1 at position 1: c = round_fp32(cos 1) = 0.540302276611328125,
  // s = round_fp32(sin 1) = 0.8414709568023682 (correctly rounded, checked with 60-digit
  // Taylor sums; equal to (float)cos(1.0), (float)sin(1.0)). The rotation arithmetic is
  // binary32 hardware arithmetic.
  auto y = rotate(head, rot, 5, x, p);
  CHECK(y[0].to_double() == 2.0);
  CHECK(y[1].to_double() == 1.5);
  CHECK(y[4].to_double() == 7.0);  // realisation none: identity
  CHECK(y[5].to_double() == 9.0);
  CHECK(y[6].to_double() == -4.0);  // unrotated pair
  CHECK(y[7].to_double() == 5.0);
  y = rotate(head, rot, 1, x, p);
  const float c = 0.540302276611328125f, s = 0.8414709568023682f;
  CHECK(static_cast<float>(y[2].to_double()) == (c * 0.25f) - (s * 3.0f));
  CHECK(static_cast<float>(y[3].to_double()) == (s * 0.25f) + (c * 3.0f));
  // Position 0: cos 0 = 1, sin 0 = 0: every pair unchanged.
  y = rotate(head, rot, 0, x, p);
  for (std::size_t k = 0; k < 8; ++k) CHECK(same(y[k], x[k]));
  CHECK_THROWS_AS(rotate(head, rot, 6, x, p), InvalidArgument);
}

TEST_CASE("rotate agrees with realisation's apply_rotation (second implementation)",
          "[transformer][rope]") {
  // apply_rotation is the census engineer's implementation of the same arithmetic.
  for (const std::string rname : {"r1", "r2", "hf", "llamacpp-cpu"}) {
    const Format f = rname == "r1" || rname == "r2" ? Format::fp16() : Format::bf16();
    const EvaluationPolicy p = policy_of(f);
    const Schedule sched = parse_schedule("conventional:base=10000,dim=8");
    const Realisation r = parse_realisation(rname, f);
    AttentionHead head;
    head.head_dim = 8;
    head.rotary = {RotarySegment{sched, std::vector<std::optional<Realisation>>(4, r), r.layout}};
    const HeadRotations rot = realise_head(head, 40, p);
    const Arithmetic a = ropesim::numeric::arithmetic(p);
    std::vector<Value> x;
    for (int k = 0; k < 8; ++k) x.push_back(a.convert(v(0.37 * (k + 1) - 1.1)));
    for (std::uint64_t pos : {0u, 1u, 7u, 39u}) {
      INFO(rname << " position " << pos);
      const auto mine = rotate(head, rot, pos, x, p);
      const auto theirs = apply_rotation(realise(sched, r, pos), x, r.layout);
      REQUIRE(mine.size() == theirs.size());
      for (std::size_t k = 0; k < mine.size(); ++k) CHECK(same(mine[k], theirs[k]));
    }
  }
}

TEST_CASE("FFN with ReLU and LayerNorm by hand", "[transformer][ffn]") {
  const EvaluationPolicy p = policy_of(Format::fp32());
  FeedForward ffn;
  ffn.w1 = Matrix{2, 2, values({1, -1, -1, 1})};
  ffn.w2 = Matrix{2, 2, values({1, 1, 0, 2})};
  ffn.b2 = values({0.5, 0});
  // W1·(2, 5) = (-3, 3), ReLU → (0, 3); W2·(0, 3) + (0.5, 0) = (3.5, 6).
  const auto y = feed_forward(ffn, values({2, 5}), p);
  CHECK(y[0].to_double() == 3.5);
  CHECK(y[1].to_double() == 6.0);
  // LayerNorm of (0, 0, 0, 4), ε = 0: μ = 1; centred (-1, -1, -1, 3); squares sum 12; σ² = 3;
  // σ = rnd(√3) (hardware sqrtf is correctly rounded); y = (-1/σ, ..., 3/σ) rounded.
  LayerNormParams ln;
  ln.epsilon = v(0);
  const auto z = layer_norm(ln, values({0, 0, 0, 4}), p);
  const float sigma = std::sqrt(3.0f);
  CHECK(static_cast<float>(z[0].to_double()) == -1.0f / sigma);
  CHECK(static_cast<float>(z[3].to_double()) == 3.0f / sigma);
  // With gain 2 and bias 1 on (1, 3): μ = 2, σ = 1, y = (-1·2 + 1, 1·2 + 1) = (-1, 3).
  ln.gain = values({2, 2});
  ln.bias = values({1, 1});
  const auto w = layer_norm(ln, values({1, 3}), p);
  CHECK(w[0].to_double() == -1.0);
  CHECK(w[1].to_double() == 3.0);
}

// ---------------------------------------------------------------------------------------------
// Whole models: BOS, masking, readout (THEORY §2)
// ---------------------------------------------------------------------------------------------

namespace {

/// "Some earlier position holds a" (LTL P π_a, LC25 App B.3 in miniature). Residual
/// coordinates: [bias (1 on symbols and EOS), is_a, is_BOS, attention]. One NoPE head with
/// Q = 0, query bias C, key = is_a: score C·is_a(j); value = is_a; output into coordinate 3.
/// Classifier y = x_3 - 0.5·x_0: at EOS, y = (attention output) - 0.5.
Model contains_a_model(const Format& f, double c, bool bos = true,
                       Masking masking = Masking::strict) {
  Model m;
  m.name = "contains-a";
  m.policy = policy_of(f);
  m.options.bos = bos;
  m.options.masking = masking;
  m.d_model = 4;
  m.embedding.alphabet = {"a", "b"};
  m.embedding.symbols = {values({1, 1, 0, 0}), values({1, 0, 0, 0})};
  if (bos) m.embedding.bos = values({0, 0, 1, 0});
  m.embedding.eos = values({1, 0, 0, 0});
  AttentionHead h;
  h.name = "P a";
  h.head_dim = 1;
  h.value_dim = 1;
  h.query = Matrix::zeros(1, 4);
  h.query_bias = values({c});
  h.key = Matrix{1, 4, values({0, 1, 0, 0})};
  h.value = Matrix{1, 4, values({0, 1, 0, 0})};
  h.output = Matrix{4, 1, values({0, 0, 0, 1})};
  Layer layer;
  layer.heads.push_back(h);
  m.layers.push_back(layer);
  m.classifier.weights = values({-0.5, 0, 0, 1});
  return m;
}

}  // namespace

TEST_CASE("contains-a: accept/reject and the EOS readout", "[transformer][model]") {
  const Model m = contains_a_model(Format::fp16(), 20);
  // "bab": EOS (position 4) sees BOS, b, a, b with scores 0, 0, 20, 0; 20 > f_large(fp16) =
  // 17.34375 so α = (0, 0, 1, 0) and the output is 1: y = 1 - 0.5 = 0.5 > 0.
  RunResult r = run(m, "bab");
  CHECK(r.accept);
  CHECK(r.output.to_double() == 0.5);
  CHECK(r.eos_position == 4);
  CHECK(r.tokens == std::vector<std::string>{"BOS", "b", "a", "b", "EOS"});
  // "bbb": all scores 0, output Σ α·0 = 0, y = -0.5.
  r = run(m, "bbb");
  CHECK_FALSE(r.accept);
  CHECK(r.output.to_double() == -0.5);
  // Empty word: EOS at 1 sees only BOS.
  r = run(m, "");
  CHECK_FALSE(r.accept);
  CHECK(r.eos_position == 1);
  CHECK_FALSE(r.first_non_finite);
  CHECK_THROWS_AS(run(m, "abc"), InvalidArgument);
  // Whitespace-separated symbols.
  CHECK(run(m, "b a").accept);
}

TEST_CASE("BOS query gets a zero attention output; strict vs non-strict visible keys",
          "[transformer][model]") {
  RunOptions all;
  all.trace_all = true;
  {
    const Model m = contains_a_model(Format::fp32(), 200);
    const RunResult r = run(m, "ab", all);
    REQUIRE(r.traced == std::vector<std::uint64_t>{0, 1, 2, 3});
    const auto& layer = r.layers.at(0);
    // Strict with BOS: the query at p sees keys 0..p-1; BOS sees none → zero output.
    CHECK(layer[0].heads[0].keys.empty());
    CHECK(same(layer[0].heads[0].output[0], v(0)));
    CHECK(layer[1].heads[0].keys == std::vector<std::uint64_t>{0});
    CHECK(layer[3].heads[0].keys == std::vector<std::uint64_t>{0, 1, 2});
    // EOS: scores (0, 200, 0) → α = (0, 1, 0) (lead 200 ≥ f_large(fp32) ≈ 103.97).
    CHECK(layer[3].heads[0].weights[1].to_double() == 1.0);
  }
  {
    const Model m = contains_a_model(Format::fp32(), 200, true, Masking::non_strict);
    const RunResult r = run(m, "ab", all);
    // Non-strict: keys 0..p; BOS sees itself.
    CHECK(r.layers[0][0].heads[0].keys == std::vector<std::uint64_t>{0});
    CHECK(r.layers[0][2].heads[0].keys == std::vector<std::uint64_t>{0, 1, 2});
  }
  {
    const Model m = contains_a_model(Format::fp32(), 200, false);
    const RunResult r = run(m, "ab", all);
    // No BOS (LC25 `w EOS`): tokens at 1..N+1; the first symbol sees no key under strict
    // masking → zero output.
    CHECK(r.positions == std::vector<std::uint64_t>{1, 2, 3});
    CHECK(r.layers[0][0].heads[0].keys.empty());
    CHECK(same(r.layers[0][0].heads[0].output[0], v(0)));
    CHECK(r.layers[0][2].heads[0].keys == std::vector<std::uint64_t>{1, 2});
    CHECK(r.accept);
    RunOptions bad;
    bad.trace_positions = {0};
    CHECK_THROWS_AS(run(m, "ab", bad), InvalidArgument);
  }
}

TEST_CASE("the no-max-subtraction NaN reaches the classifier and is located",
          "[transformer][model]") {
  // Score 12 at the a key in fp16 without max subtraction: e^12 → inf, weight inf/inf = NaN
  // (see the softmax test), so the head output at EOS is NaN and NaN rejects.
  Model m = contains_a_model(Format::fp16(), 12);
  m.options.softmax = SoftmaxVariant::no_max_subtraction;
  const RunResult r = run(m, "a");
  CHECK(r.output.is_nan());
  CHECK_FALSE(r.accept);
  REQUIRE(r.first_non_finite);
  // The first query that sees the a (position 1) is EOS at position 2.
  CHECK(r.first_non_finite->layer == 0u);
  CHECK(r.first_non_finite->position == 2u);
  CHECK(r.first_non_finite->stage == "weights");
  // Stable softmax: weight 1 on a (lead 12 < f_large: the BOS weight is 103·2^-24, but the
  // BOS value is 0), output 1, accept.
  m.options.softmax = SoftmaxVariant::stable;
  const RunResult s = run(m, "a");
  CHECK(s.accept);
  CHECK(s.output.to_double() == 0.5);
  CHECK_FALSE(s.first_non_finite);
}

TEST_CASE("two layers, two heads, post-LN and pre-LN run; validate names the path",
          "[transformer][model]") {
  Model m = contains_a_model(Format::fp32(), 200);
  // Second head in layer 0 copying is_BOS; a second layer with an FFN that doubles x_3.
  AttentionHead h2 = m.layers[0].heads[0];
  h2.name = "second";
  h2.output = Matrix::zeros(4, 1);
  m.layers[0].heads.push_back(h2);
  Layer l2;
  FeedForward ffn;
  ffn.w1 = Matrix{1, 4, values({0, 0, 0, 1})};
  ffn.w2 = Matrix{4, 1, values({0, 0, 0, 1})};
  l2.ffn = ffn;
  m.layers.push_back(l2);
  // "ab": layer 0 puts 1 in x_3 at EOS; layer 1 adds ReLU(x_3) = 1: x_3 = 2; y = 2 - 0.5.
  RunResult r = run(m, "ab");
  CHECK(r.output.to_double() == 1.5);
  CHECK(r.layers.size() == 2);
  Model broken = m;
  broken.layers[0].heads[1].key = Matrix::zeros(1, 3);
  try {
    run(broken, "ab");
    FAIL("expected InvalidArgument");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()) == "layers[0].heads[1].key: expected 1 x 4, got 1 x 3");
  }
  // LayerNorm with ε = 1 as LN1, hardware binary32 as the second implementation.
  Model ln = contains_a_model(Format::fp32(), 200);
  LayerNormParams params;
  params.epsilon = v(1);
  ln.layers[0].attention_norm = params;
  // Post-LN: at EOS of "ab" the residual after attention is (1, 0, 0, 1); μ = 1/2, centred
  // (±1/2), σ² = 1/4, σ = rnd(√(1/4 + 1)); LN = (a, -a, -a, a) with a = rnd(0.5/σ). The
  // classifier sums -0.5·a, -0, -0, a sequentially: 0.5·a exactly.
  ln.options.norm_placement = NormPlacement::post;
  r = run(ln, "ab");
  const float a = 0.5f / std::sqrt(1.25f);
  CHECK(static_cast<float>(r.output.to_double()) == 0.5f * a);
  // Pre-LN: keys and values read LN1 of each input. LN(a) = (1, 1, 0, 0) normalised: its is_a
  // coordinate is a (as above); LN(BOS) and LN(b) have is_a coordinate -0.25/rnd(√1.1875) <
  // 0. Scores 200·key: the a key leads by ≈ 135 > f_large(fp32), so the head outputs the a
  // value, a; the residual x_3 = 0 + a and y = rnd(a - 0.5) = a - 0.5 (Sterbenz: exact).
  ln.options.norm_placement = NormPlacement::pre;
  r = run(ln, "ab");
  CHECK(static_cast<float>(r.output.to_double()) == a - 0.5f);
  CHECK_FALSE(r.accept);
}
