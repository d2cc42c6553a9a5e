// numeric::Binary32Arithmetic and Binary32Dot (NUMERIC §2.1: + − × of elements of F with p ≤ 11
// in binary32, then one rounding into F) against the exact MPFR engine, numeric::mpfr_engine():
//
//  * every pair of elements (specials included) of the 8-bit formats fp8e5m2 and p=4,e=4;
//  * random pairs of bf16 and fp16 elements (random encodings: every binade, subnormals, ±0,
//    ±inf, NaN) and a second random stream of near-ties (a and ulp(a)/2);
//  * bf16 products below 2^-126, where binary32 rounds in its subnormal range before the
//    rounding into bf16: every pair of 8-bit significands and every exponent sum from 2^-176
//    up, against Binary64Rounding (exact double product, one rounding; itself checked against
//    MPFR in test_binary64_rounding.cpp) and the engine on a stride;
//  * the dot product (sequential, pairwise, wide accumulator A = fp32) against numeric::dot on
//    random vectors, and the AVX2 dot8 against its baseline path lane by lane;
//  * the domain: fp32, fp8e4m3 (saturating), directed rounding and p = 12 are refused.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "numeric/binary32_arithmetic.hpp"
#include "numeric/binary64_rounding.hpp"
#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/summation.hpp"
#include "tests/numeric/test_support.hpp"

namespace {

using numeric_test::Format;
using numeric_test::hex;
using numeric_test::Mismatches;
using numeric_test::Rounding;
using numeric_test::Value;
using ropesim::numeric::Binary32Arithmetic;
using ropesim::numeric::Binary32Dot;
using ropesim::numeric::mpfr_engine;

constexpr Rounding rne = Rounding::nearest_even;

/// Every element of an IEEE-style format (p, emin, emax) from its fields: ±0, ±subnormals,
/// ±normals, ±inf and NaN, as floats.
std::vector<float> all_elements(const Format& f) {
  std::vector<float> out{0.0f, std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN()};
  const int p = f.precision;
  for (int k = 1; k < (1 << (p - 1)); ++k) out.push_back(std::ldexp(float(k), f.emin - p + 1));
  for (int e = f.emin; e <= f.emax; ++e)
    for (int m = 1 << (p - 1); m < (1 << p); ++m) out.push_back(std::ldexp(float(m), e - p + 1));
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) out.push_back(-out[i]);
  return out;
}

/// A random element of bf16 or fp16 from a random 16-bit encoding.
float random_element(const Format& f, std::mt19937_64& rng) {
  const auto bits = static_cast<std::uint32_t>(rng() & 0xffff);
  if (f == Format::bf16()) return std::bit_cast<float>(bits << 16);
  // fp16: sign, 5 exponent bits, 10 fraction bits
  const int sign = bits >> 15, e = (bits >> 10) & 31, m = bits & 1023;
  float v;
  if (e == 31) {
    v = m ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else if (e == 0) {
    v = std::ldexp(float(m), -24);
  } else {
    v = std::ldexp(float(1024 + m), e - 25);
  }
  return sign ? -v : v;
}

Value narrow(float x) { return Value::from_double_exact(static_cast<double>(x)); }

void check_ops(Mismatches& m, const Format& f, const Binary32Arithmetic& b, float x, float y) {
  const auto& engine = mpfr_engine();
  const Value vx = narrow(x), vy = narrow(y);
  auto one = [&](const char* op, float fast, const Value& exact) {
    ++m.checked;
    if (!narrow(fast).same_bits(exact))
      m.add(std::string(op) + "(" + hex(x) + ", " + hex(y) + ") in " + f.name + ": binary32 " +
            hex(fast) + ", MPFR " + exact.to_hex());
  };
  one("add", b.add(x, y), engine.add(f, vx, vy, rne));
  one("sub", b.sub(x, y), engine.sub(f, vx, vy, rne));
  one("mul", b.mul(x, y), engine.mul(f, vx, vy, rne));
}

}  // namespace

TEST_CASE("Binary32Arithmetic: every pair of the 8-bit formats agrees with MPFR",
          "[numeric][binary32]") {
  for (const Format& f : {Format::fp8e5m2(), Format::ieee(4, 4)}) {
    INFO(f.name);
    const Binary32Arithmetic b(f, rne);
    REQUIRE(b.applies());
    const auto elements = all_elements(f);
    REQUIRE(elements.size() >= 240);
    Mismatches m;
    for (float x : elements)
      for (float y : elements) check_ops(m, f, b, x, y);
    INFO(m.report());
    CHECK(m.count == 0);
    CHECK(m.checked == static_cast<long>(3 * elements.size() * elements.size()));
  }
}

TEST_CASE("Binary32Arithmetic: sampled bf16 and fp16 pairs agree with MPFR",
          "[numeric][binary32]") {
  for (const Format& f : {Format::bf16(), Format::fp16()}) {
    INFO(f.name);
    const Binary32Arithmetic b(f, rne);
    REQUIRE(b.applies());
    std::mt19937_64 rng(34);
    Mismatches m;
    for (int s = 0; s < 60000; ++s)
      check_ops(m, f, b, random_element(f, rng), random_element(f, rng));
    // near-ties: a + ulp(a)/2·(1 + small) style partners, and cancelling neighbours
    for (int s = 0; s < 20000; ++s) {
      const float x = random_element(f, rng);
      if (!std::isfinite(x) || x == 0) continue;
      const int q = std::max(std::ilogb(x), f.emin) - (f.precision - 1);
      const float half = std::ldexp(1.0f, std::max(q - 1, f.emin - f.precision + 1));
      check_ops(m, f, b, x, half);
      check_ops(m, f, b, x, -x + std::ldexp(1.0f, q) * float(rng() % 5));
    }
    INFO(m.report());
    CHECK(m.count == 0);
  }
}

TEST_CASE("Binary32Arithmetic: bf16 products below 2^-126, every significand pair",
          "[numeric][binary32]") {
  const Format f = Format::bf16();
  const Binary32Arithmetic b(f, rne);
  const ropesim::numeric::Binary64Rounding r64(f, rne);
  REQUIRE(r64.fast_rounding());
  const auto& engine = mpfr_engine();
  Mismatches m;
  long stride = 0;
  for (int E = -176; E <= -126; ++E) {
    for (int m1 = 1; m1 < 256; ++m1) {
      for (int m2 = 1; m2 < 256; ++m2) {
        // a = m1·2^-70 (normal bf16), c = m2·2^(E+70) (bf16: E + 70 ≥ −106)
        const float a = std::ldexp(float(m1), -70), c = std::ldexp(float(m2), E + 70);
        const float fast = b.mul(a, c);
        const double exact_product = static_cast<double>(a) * static_cast<double>(c);  // exact
        ++m.checked;
        if (std::bit_cast<std::uint64_t>(static_cast<double>(fast)) !=
            std::bit_cast<std::uint64_t>(r64.round(exact_product)))
          m.add("mul(" + hex(a) + ", " + hex(c) + "): binary32 " + hex(fast));
        if (++stride % 97 == 0 && !narrow(fast).same_bits(engine.mul(f, narrow(a), narrow(c), rne)))
          m.add("mul(" + hex(a) + ", " + hex(c) + ") against MPFR");
      }
    }
  }
  INFO(m.report());
  CHECK(m.count == 0);
}

TEST_CASE("Binary32Dot = numeric::dot bit for bit; dot8 (AVX2) = its baseline",
          "[numeric][binary32]") {
  std::mt19937_64 rng(3434);
  for (const Format& f : {Format::bf16(), Format::fp16(), Format::fp8e5m2()}) {
    for (auto s : {ropesim::numeric::Summation::sequential, ropesim::numeric::Summation::pairwise,
                   ropesim::numeric::Summation::wide_accumulator}) {
      INFO(f.name << " summation " << static_cast<int>(s));
      ropesim::numeric::EvaluationPolicy policy;
      policy.format = f;
      policy.summation = s;
      policy.accumulator = Format::fp32();
      const auto kernel = Binary32Dot::for_policy(policy);
      REQUIRE(kernel.has_value());
      const ropesim::numeric::Binary64Rounding r64(f, rne);
      Mismatches m;
      for (int trial = 0; trial < 60; ++trial) {
        const std::size_t n = 1 + rng() % 130;
        // elements of moderate size (products and sums stay finite), some exact zeros
        std::vector<float> x(n), yt(8 * n);
        auto element = [&] {
          if (rng() % 9 == 0) return 0.0f;
          const double v = std::ldexp(static_cast<double>(rng() % 20001) / 10000.0 - 1.0,
                                      static_cast<int>(rng() % 7) - 3);
          return static_cast<float>(r64.round(v));
        };
        for (auto& v : x) v = element();
        for (auto& v : yt) v = element();
        float lanes[8], base[8], pairs[8], pairs_base[8];
        kernel->dot8(x.data(), yt.data(), n, lanes);
        kernel->dot8(x.data(), yt.data(), n, base, false);
        // dot8_pairs: eight different x_l (transposed) with the same eight y_l
        std::vector<float> xt(8 * n);
        for (auto& v : xt) v = element();
        kernel->dot8_pairs(xt.data(), yt.data(), n, pairs);
        kernel->dot8_pairs(xt.data(), yt.data(), n, pairs_base, false);
        std::vector<Value> xv(n), yv(n);
        for (std::size_t c = 0; c < n; ++c) xv[c] = narrow(x[c]);
        for (int l = 0; l < 8; ++l) {
          for (std::size_t c = 0; c < n; ++c) yv[c] = narrow(yt[8 * c + l]);
          const Value exact = ropesim::numeric::dot(xv, yv, policy);
          std::vector<Value> xl(n);
          for (std::size_t c = 0; c < n; ++c) xl[c] = narrow(xt[8 * c + l]);
          const Value exact_pair = ropesim::numeric::dot(xl, yv, policy);
          ++m.checked;
          if (!narrow(lanes[l]).same_bits(exact) || !narrow(base[l]).same_bits(exact) ||
              !narrow(pairs[l]).same_bits(exact_pair) ||
              !narrow(pairs_base[l]).same_bits(exact_pair))
            m.add("n = " + std::to_string(n) + " lane " + std::to_string(l) + ": dot8 " +
                  hex(lanes[l]) + ", baseline " + hex(base[l]) + ", dot " + exact.to_hex());
        }
      }
      INFO(m.report());
      CHECK(m.count == 0);
    }
  }
}

TEST_CASE("Binary32Arithmetic: the domain", "[numeric][binary32]") {
  CHECK(Binary32Arithmetic(Format::bf16(), rne).applies());
  CHECK(Binary32Arithmetic(Format::fp16(), rne).applies());
  CHECK(Binary32Arithmetic(Format::fp8e5m2(), rne).applies());
  CHECK_FALSE(Binary32Arithmetic(Format::fp32(), rne).applies());
  CHECK_FALSE(Binary32Arithmetic(Format::fp8e4m3(), rne).applies());  // saturating
  CHECK_FALSE(Binary32Arithmetic(Format::bf16(), Rounding::toward_zero).applies());
  CHECK_FALSE(Binary32Arithmetic(Format::ieee(12, 5), rne).applies());  // p = 12
  // p = 11 with binary32's exponent range: products below 2^-126 are not covered
  CHECK_FALSE(Binary32Arithmetic(Format::custom(11, -126, 127), rne).applies());
  ropesim::numeric::EvaluationPolicy exact;
  exact.format = Format::bf16();
  exact.summation = ropesim::numeric::Summation::exact;
  CHECK_FALSE(Binary32Dot::for_policy(exact).has_value());
}
