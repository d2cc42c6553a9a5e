// numeric::Binary64Dot (the batched kernel of the certified-range scan) against numeric::dot()
// (the reference: every step through numeric::Arithmetic) bit for bit, the policy's refusals, and
// Binary64Dot::dots (four rows in lanes) against operator() on every row.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "numeric/arithmetic.hpp"
#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/summation.hpp"

using ropesim::numeric::Arithmetic;
using ropesim::numeric::Binary64Dot;
using ropesim::numeric::EvaluationPolicy;
using ropesim::numeric::Format;
using ropesim::numeric::Rounding;
using ropesim::numeric::Summation;
using ropesim::numeric::Value;

TEST_CASE("Binary64Dot equals dot() bit for bit on random vectors", "[numeric][summation]") {
  std::mt19937_64 rng(20261130);
  struct Case {
    Format f, a;
    Summation s;
  };
  const std::vector<Case> cases = {
      {Format::fp16(), Format::fp16(), Summation::sequential},
      {Format::fp16(), Format::fp16(), Summation::pairwise},
      {Format::bf16(), Format::fp32(), Summation::wide_accumulator},
      {Format::fp16(), Format::fp32(), Summation::wide_accumulator},
      {Format::fp32(), Format::fp32(), Summation::sequential},
      {Format::fp64(), Format::fp64(), Summation::pairwise},
      {Format::custom(20, -100, 100), Format::custom(20, -100, 100), Summation::sequential},
  };
  std::size_t compared = 0;
  for (const Case& c : cases) {
    EvaluationPolicy policy;
    policy.format = c.f;
    policy.accumulator = c.a;
    policy.summation = c.s;
    policy.engine = &ropesim::numeric::mpfr_engine();
    const auto kernel = Binary64Dot::for_policy(policy);
    REQUIRE(kernel.has_value());
    const Arithmetic f(c.f, Rounding::nearest_even, ropesim::numeric::mpfr_engine());
    for (int trial = 0; trial < 200; ++trial) {
      const std::size_t n = 1 + rng() % 90;
      std::vector<Value> x, y;
      std::vector<double> xd, yd;
      for (std::size_t k = 0; k < n; ++k) {
        // magnitudes over ±2^12 so that sums cancel, overflow (fp16) and hit ties
        const double m = std::ldexp(static_cast<double>(rng() % 2048) - 1024.0,
                                    static_cast<int>(rng() % 25) - 12);
        x.push_back(f.convert(Value::from_double_exact(m)));
        const double m2 = std::ldexp(static_cast<double>(rng() % 2048) - 1024.0,
                                     static_cast<int>(rng() % 25) - 12);
        y.push_back(f.convert(Value::from_double_exact(m2)));
        xd.push_back(x.back().narrow());
        yd.push_back(y.back().narrow());
      }
      const Value want = ropesim::numeric::dot(x, y, policy);
      const double got = (*kernel)(xd.data(), yd.data(), n);
      INFO(c.f.name << " " << ropesim::numeric::to_string(c.s) << " n=" << n);
      REQUIRE(want.same_bits(Value::from_double_exact(got)));
      ++compared;
    }
  }
  CHECK(compared == 1400);
}

TEST_CASE("Binary64Dot's binary32 accumulator equals dot() at binary32's extremes",
          "[numeric][summation]") {
  // bf16 shares binary32's exponent range: products overflow binary32 (2^127·2^127), land in
  // its subnormals (2^-70·2^-70) or below them (2^-126·2^-60), and sums cancel; the kernel's
  // native float path must round all of them as dot() does
  std::mt19937_64 rng(35);
  EvaluationPolicy policy;
  policy.format = Format::bf16();
  policy.accumulator = Format::fp32();
  policy.summation = Summation::wide_accumulator;
  policy.engine = &ropesim::numeric::mpfr_engine();
  const auto kernel = Binary64Dot::for_policy(policy);
  REQUIRE(kernel.has_value());
  const Arithmetic f(policy.format, Rounding::nearest_even, ropesim::numeric::mpfr_engine());
  const int exponents[] = {127, 100, 64, 0, -20, -63, -70, -75, -100, -126, -133};
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t n = 1 + rng() % 40;
    std::vector<Value> x, y;
    std::vector<double> xd, yd;
    for (std::size_t k = 0; k < n; ++k) {
      for (auto* v : {&x, &y}) {
        const double m = std::ldexp(static_cast<double>(rng() % 256) - 128.0,
                                    exponents[rng() % std::size(exponents)] - 7);
        v->push_back(f.convert(Value::from_double_exact(m)));
      }
      xd.push_back(x.back().narrow());
      yd.push_back(y.back().narrow());
    }
    const Value want = ropesim::numeric::dot(x, y, policy);
    const double got = (*kernel)(xd.data(), yd.data(), n);
    INFO("n=" << n << " got " << got << " want " << want.to_double());
    REQUIRE(want.same_bits(Value::from_double_exact(got)));
  }
}

TEST_CASE("Binary64Dot refuses the policies it cannot do exactly", "[numeric][summation]") {
  EvaluationPolicy policy;
  policy.format = Format::fp16();
  policy.summation = Summation::exact;
  CHECK_FALSE(Binary64Dot::for_policy(policy).has_value());
  policy.summation = Summation::sequential;
  policy.rounding = Rounding::toward_zero;  // directed: no innocuous double rounding
  CHECK_FALSE(Binary64Dot::for_policy(policy).has_value());
  policy.rounding = Rounding::nearest_even;
  policy.format = Format::custom(30, -100, 100);  // p > 25
  CHECK_FALSE(Binary64Dot::for_policy(policy).has_value());
  policy.format = Format::bf16();
  policy.summation = Summation::wide_accumulator;
  policy.accumulator = Format::fp8e4m3();  // saturating accumulator
  CHECK_FALSE(Binary64Dot::for_policy(policy).has_value());
}

TEST_CASE("Binary64Dot::dots equals operator() on every row (lanes and baseline)",
          "[numeric][summation]") {
  // Rows of mostly comparable magnitudes (sums that round at every step, so the order shows),
  // some across F's range and past it (overflow to inf, then inf − inf = NaN), subnormals, ±0;
  // every summation (sequential in lanes, the others through operator()), row counts that are
  // not multiples of the four lanes.
  std::mt19937_64 rng(1995);
  std::size_t compared = 0, nonfinite = 0;
  for (const Format& f : {Format::bf16(), Format::fp16(), Format::fp32(), Format::fp64()}) {
    const Arithmetic F(f, Rounding::nearest_even, ropesim::numeric::mpfr_engine());
    for (const Summation summation :
         {Summation::sequential, Summation::pairwise, Summation::wide_accumulator}) {
      EvaluationPolicy policy;
      policy.format = f;
      policy.summation = summation;
      policy.accumulator = Format::fp32();
      const auto kernel = Binary64Dot::for_policy(policy);
      if (!kernel) continue;
      const std::size_t n = 11, rows = 23;
      for (int trial = 0; trial < 40; ++trial) {
        std::vector<double> x(n), ys(rows * n), want(rows), got(rows);
        auto element = [&]() {
          const auto pick = rng() % 30;
          if (pick == 0) return (rng() % 2 ? -1 : 1) * 0.0;
          if (pick == 1) return std::ldexp(3.0, f.emin - f.precision + 1);  // subnormal
          const int e = pick < 4 ? f.emax - static_cast<int>(rng() % 3)     // overflowing products
                                 : static_cast<int>(rng() % 7) - 3;
          const double m = std::ldexp(static_cast<double>(rng() % 4096) - 2048.0, e - 11);
          return F.convert(Value::from_double_exact(m)).to_double();
        };
        for (auto& v : x) v = element();
        for (auto& v : ys) v = element();
        for (const bool baseline : {false, true}) {
          kernel->dots(x.data(), ys.data(), n, rows, n, got.data(), baseline);
          for (std::size_t t = 0; t < rows; ++t) {
            want[t] = (*kernel)(x.data(), ys.data() + t * n, n);
            INFO(f.name << " summation " << static_cast<int>(summation) << " row " << t << ": "
                        << got[t] << " against " << want[t]);
            if (std::isnan(want[t])) {
              REQUIRE(std::isnan(got[t]));
            } else {
              REQUIRE(std::bit_cast<std::uint64_t>(got[t]) ==
                      std::bit_cast<std::uint64_t>(want[t]));
            }
            ++compared;
            nonfinite += !std::isfinite(want[t]);
          }
        }
      }
    }
  }
  CHECK(compared > 10000);
  CHECK(nonfinite > 100);  // the inputs reached overflow and NaN
}
