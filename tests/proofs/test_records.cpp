// Record distances, the δ bound, the tie distance and f_large (THEORY §1, §6), each checked
// against values derived independently: the paper's list, brute force in long double, MPFR
// directly, and hand computation.
#include <mpfr.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "numeric/format.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/common/exact_trig.hpp"
#include "proofs/range/records.hpp"

using namespace ropesim;
using numeric::Format;

namespace {

proofs::CosineSum single(const mpq_class& g) {
  proofs::CosineSum s;
  s.blocks.emplace_back(attention::single_schedule(g).blocks[0]);
  s.weights.push_back(1);
  return s;
}

std::vector<std::int64_t> ns(const std::vector<proofs::RecordDistance>& r) {
  std::vector<std::int64_t> out;
  for (const auto& x : r) out.push_back(x.n);
  return out;
}

/// Brute force in long double: n where 1 - cos(g n) reaches a new strict minimum.
std::vector<std::int64_t> brute_records(long double g, std::int64_t limit) {
  std::vector<std::int64_t> out;
  long double best = 3;
  for (std::int64_t n = 1; n <= limit; ++n) {
    const long double d = 1 - std::cos(g * static_cast<long double>(n));
    if (d < best) {
      best = d;
      out.push_back(n);
    }
  }
  return out;
}

/// The smallest element of F (p bits, normal exponents ≥ emin) that is ≥ x, x > 0 irrational
/// and in the normal range: mpfr at precision p with RNDU.
double round_up(int p, mpfr_t x) {
  mpfr_t y;
  mpfr_init2(y, p);
  mpfr_set(y, x, MPFR_RNDU);
  const double d = mpfr_get_d(y, MPFR_RNDN);
  mpfr_clear(y);
  return d;
}

}  // namespace

TEST_CASE("record distances of g = 1 are the convergent denominators of 1/2π (THEORY §6)",
          "[proofs][records]") {
  const auto r = proofs::record_distances(single(1), 400000);
  CHECK(ns(r) == std::vector<std::int64_t>{1, 6, 19, 25, 44, 333, 710, 103993, 312689});
  // δ_44 = 1 - cos 44 ≈ (44 - 14π)²/2
  CHECK(r[4].delta == Approx(1 - std::cos(44.0L)).epsilon(1e-9));
}

TEST_CASE("record distances agree with a brute-force scan for other g", "[proofs][records]") {
  for (const auto& [g, gd] :
       std::vector<std::pair<mpq_class, long double>>{{mpq_class(1, 2), 0.5L},
                                                      {mpq_class(3), 3.0L},
                                                      {mpq_class(29, 10), 2.9L},
                                                      {mpq_class(7, 100), 0.07L}}) {
    INFO("g = " << g.get_str());
    CHECK(ns(proofs::record_distances(single(g), 20000)) == brute_records(gd, 20000));
  }
}

TEST_CASE("rational turns: records end at the period, cos values exact (Niven)",
          "[proofs][records]") {
  proofs::CosineSum s;
  s.blocks.emplace_back(attention::parse_schedule("periodic:m=12").blocks[0]);
  s.weights.push_back(1);
  CHECK(ns(proofs::record_distances(s, 1000)) == std::vector<std::int64_t>{1, 12});
  CHECK(s.exact(2) == mpq_class(1, 2));                // cos(2π·2/12) = 1/2
  CHECK(s.exact(3) == mpq_class(0));                   // cos(π/2)
  CHECK_FALSE(s.exact(1).has_value());                 // cos(π/6) = √3/2
  CHECK(s.blocks[0].exact_sin(1) == mpq_class(1, 2));  // sin(π/6)
}

TEST_CASE("delta bound: C·δ_L ≥ f_large, hand-checked", "[proofs][records]") {
  // f = 17.34375, C = 1000: threshold 1 - f/C = 0.98265625. cos 1 = 0.5403, cos 6 = 0.96017,
  // cos 19 = 0.98870 > threshold, so the largest L is 18.
  const mpq_class f(1734375, 100000);  // 17.34375, f_large(fp16)
  const auto b = proofs::delta_bound(single(1), 1000, f, 1'000'000);
  CHECK(b.value == 18);
  CHECK_FALSE(b.at_limit);
  // C = 10: C·(1 - cos 1) = 4.6 < f: nothing certified.
  CHECK(proofs::delta_bound(single(1), 10, f, 1'000'000).value == 0);
  // C = 2^23, f = 745.13 (fp64): C·δ_44 = 1315 ≥ f, C·δ_333 = 326 < f → 332.
  CHECK(
      proofs::delta_bound(single(1), mpq_class(8388608), mpq_class(74513, 100), 1'000'000).value ==
      332);
  // the search limit
  const auto limited = proofs::delta_bound(single(1), mpq_class(1) << 200, f, 1000);
  CHECK(limited.at_limit);
  CHECK(limited.value == 1000);
}

TEST_CASE("tie distance: round_F(cos n) = 1 first at 44 (fp16, bf16) and 710 (fp32)",
          "[proofs][records]") {
  // THEORY §6; independently: brute force in long double against 1 - 2^-(p+1).
  for (const auto& [f, expected] :
       std::vector<std::pair<Format, std::int64_t>>{{Format::fp16(), 44},
                                                    {Format::bf16(), 44},
                                                    {Format::fp32(), 710},
                                                    {Format::tf32(), 44}}) {
    INFO(f.name);
    const auto t = proofs::tie_distance(single(1), f, numeric::Rounding::nearest_even, 1'000'000);
    REQUIRE(t.has_value());
    CHECK(t->value == expected);
    std::int64_t brute = 0;
    for (std::int64_t n = 1; n <= 2000 && !brute; ++n) {
      if (std::cos(static_cast<long double>(n)) >= 1 - std::ldexp(1.0L, -(f.precision + 1)))
        brute = n;
    }
    CHECK(brute == expected);
  }
  // fp8e5m2 (p = 3): 1 - 2^-4 = 0.9375; cos 6 = 0.96017 ≥ 0.9375, cos 1 is not.
  CHECK(proofs::tie_distance(single(1), Format::fp8e5m2(), numeric::Rounding::nearest_even, 1000)
            ->value == 6);
  // round-down: cos(n) < 1 never rounds to 1 → none within the limit.
  const auto down =
      proofs::tie_distance(single(1), Format::fp16(), numeric::Rounding::downward, 100000);
  REQUIRE(down.has_value());
  CHECK(down->at_limit);
}

TEST_CASE("tie distance for fp64 lies on a record and matches MPFR", "[proofs][records]") {
  const auto t = proofs::tie_distance(single(1), Format::fp64(), numeric::Rounding::nearest_even,
                                      4'000'000'000'000'000'000LL);
  REQUIRE(t.has_value());
  REQUIRE_FALSE(t->at_limit);
  // MPFR directly: cos(n) ≥ 1 - 2^-54 holds at t and at no smaller record.
  auto ties = [](std::int64_t n) {
    mpfr_t x;
    mpfr_init2(x, 256);
    mpfr_set_si(x, n, MPFR_RNDN);
    mpfr_cos(x, x, MPFR_RNDN);
    mpfr_ui_sub(x, 1, x, MPFR_RNDN);
    const bool r = mpfr_cmp_ui_2exp(x, 1, -54) <= 0;
    mpfr_clear(x);
    return r;
  };
  CHECK(ties(t->value));
  for (auto n :
       std::vector<std::int64_t>{44, 333, 710, 103993, 312689, 833719, 1146408, 4272943, 5419351}) {
    if (n < t->value) CHECK_FALSE(ties(n));
  }
}

TEST_CASE("f_large per preset equals the smallest element above m·ln2 (THEORY §1)",
          "[proofs][records]") {
  // exp(-f) rounds to 0 (RNE) iff exp(-f) ≤ min_positive/2 = 2^-m, i.e. f ≥ m·ln2; m·ln2 is
  // irrational, so f_large = round_up_F(m·ln2) with m = -log2(min positive) + 1.
  struct Case {
    Format f;
    int m;
    double expected;  // hand-derived where THEORY gives it
  };
  for (const Case& c : std::vector<Case>{{Format::fp16(), 25, 17.34375},
                                         {Format::bf16(), 134, 93.0},
                                         {Format::fp32(), 150, 103.97208404541016},
                                         {Format::tf32(), 137, 95.0},
                                         {Format::fp8e5m2(), 17, 12.0},
                                         {Format::fp8e4m3(), 10, 7.0},
                                         {Format::fp64(), 1075, 0.0}}) {
    INFO(c.f.name);
    mpfr_t x;
    mpfr_init2(x, 256);
    mpfr_const_log2(x, MPFR_RNDN);
    mpfr_mul_ui(x, x, static_cast<unsigned long>(c.m), MPFR_RNDN);
    const double independent = round_up(c.f.precision, x);
    mpfr_clear(x);
    const auto fl = numeric::f_large(c.f);
    REQUIRE(fl.has_value());
    CHECK(fl->to_double() == independent);
    if (c.expected != 0) CHECK(fl->to_double() == c.expected);
  }
  CHECK_FALSE(numeric::f_large(Format::fp32(), numeric::Rounding::upward).has_value());
}

TEST_CASE("query bias: C·cos kg rounded once from the exact real", "[proofs][records]") {
  const auto& engine = numeric::default_engine();
  const proofs::BlockAngle one(attention::single_schedule(1).blocks[0]);
  // fp32: round(cos 1), round(-3·sin 2) by MPFR directly at 24 bits (normal range).
  auto mpfr_ref = [](long n, bool sine, long K) {
    mpfr_t x, y;
    mpfr_init2(x, 512);
    mpfr_init2(y, 24);
    mpfr_set_si(x, n, MPFR_RNDN);
    if (sine) {
      mpfr_sin(x, x, MPFR_RNDN);
    } else {
      mpfr_cos(x, x, MPFR_RNDN);
    }
    mpfr_mul_si(x, x, K, MPFR_RNDN);
    mpfr_set(y, x, MPFR_RNDN);
    const double d = mpfr_get_d(y, MPFR_RNDN);
    mpfr_clear(x);
    mpfr_clear(y);
    return d;
  };
  CHECK(proofs::round_scaled_trig(Format::fp32(), numeric::Rounding::nearest_even, one, 1, false, 1,
                                  engine)
            .to_double() == mpfr_ref(1, false, 1));
  CHECK(proofs::round_scaled_trig(Format::fp32(), numeric::Rounding::nearest_even, one, 2, true, -3,
                                  engine)
            .to_double() == mpfr_ref(2, true, -3));
  // θ = π/2 (periodic:m=4), k = 1: cos = 0 and -C·sin = -C exactly.
  const proofs::BlockAngle quarter(attention::parse_schedule("periodic:m=4").blocks[0]);
  CHECK(proofs::round_scaled_trig(Format::fp16(), numeric::Rounding::nearest_even, quarter, 1,
                                  false, 64, engine)
            .is_zero());
  CHECK(proofs::round_scaled_trig(Format::fp16(), numeric::Rounding::nearest_even, quarter, 1, true,
                                  -64, engine)
            .to_double() == -64.0);
}
