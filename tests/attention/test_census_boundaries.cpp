// Census boundary cases (THEORY §3 Def 2.1, Prop 4.1): a period of exactly N/2, odd N, the
// witness values and the largest witness, and a census under a directed rounding mode. Every
// expected value is derived by hand in the comments (the realised tables are exact or follow
// from one comparison of cos/sin with a rounding boundary).
#include <catch2/catch.hpp>

#include "attention/census/census.hpp"

using namespace ropesim::attention;
using ropesim::numeric::Rounding;

namespace {

CensusOptions opts(std::uint64_t n) {
  CensusOptions o;
  o.positions = n;
  o.threads = 1;
  return o;
}

using Opt = std::optional<std::uint64_t>;

}  // namespace

TEST_CASE("period exactly N/2 is found; one position fewer and it is not (periodic:m=4, m=5)",
          "[census][boundary]") {
  // r3 on periodic:m=M: R̂_i = T(i mod M) with M distinct table entries (Rot(2πr/M), r < M,
  // are distinct at fp32: their (cos, sin) differ by ≥ sin(2π/M) ≫ 2^-24). The smallest P with
  // R̂_{i+P} = R̂_i for all i < N - P is M whenever M ≤ N/2 (P < M moves 0 to P ≢ 0).
  // The census looks for P ≤ floor(N/2) (census.hpp).
  const Realisation r3 = parse_realisation("r3", Format::fp32());
  struct Case {
    std::string schedule;
    std::uint64_t n;
    Opt period;
  };
  const std::vector<Case> cases{
      {"periodic:m=4", 8, 4},             // P = 4 = N/2 exactly (r3, 8 positions)
      {"periodic:m=4", 9, 4},             // odd N: floor(9/2) = 4
      {"periodic:m=4", 7, std::nullopt},  // floor(7/2) = 3 < 4
      {"periodic:m=5", 10, 5},            // P = N/2 exactly
      {"periodic:m=5", 11, 5},            // odd N, floor(11/2) = 5
      {"periodic:m=5", 9, std::nullopt},  // floor(9/2) = 4 < 5
      {"periodic:m=1", 2, 1},             // θ = 2π: every R̂ = I; N = 2, P = 1 = N/2
      {"periodic:m=2", 3, std::nullopt},  // floor(3/2) = 1 < 2
  };
  for (const auto& c : cases) {
    INFO(c.schedule << " N = " << c.n);
    const auto res = census(parse_schedule(c.schedule), r3, opts(c.n));
    CHECK(res.period == c.period);
    REQUIRE(res.period_per_block.size() == 1);
    CHECK(res.period_per_block[0] == c.period);
    CHECK(res.max_period == c.n / 2);
    // witnesses: P = 1..period-1 when periodic, 1..N/2 otherwise; every P < M has the
    // witness i = 0 (R̂_P = T(P) ≠ T(0) = R̂_0), and P ≥ M (only P > N/2 here) is not asked.
    const std::uint64_t upto = c.period ? *c.period - 1 : c.n / 2;
    CHECK(res.witnesses == std::vector<std::int64_t>(upto, 0));
  }
}

TEST_CASE("odd N: the first repeat and the distinct count of periodic:m=3 at N = 5",
          "[census][boundary]") {
  // R̂ = T0 T1 T2 T0 T1: three distinct, R̂_3 = R̂_0 is the first repeat, floor(5/2) = 2 < 3 so
  // no period; witnesses for P = 1, 2 at i = 0; the largest witness position is 0, first
  // reached at P = 1.
  const auto res =
      census(parse_schedule("periodic:m=3"), parse_realisation("r1", Format::bf16()), opts(5));
  CHECK(res.distinct_rotations == 3);
  REQUIRE(res.first_repeat.has_value());
  CHECK(res.first_repeat->earlier == 0);
  CHECK(res.first_repeat->later == 3);
  CHECK_FALSE(res.period.has_value());
  CHECK(res.witnesses == std::vector<std::int64_t>{0, 0});
  CHECK(res.largest_witness_period == Opt(1));
  CHECK(res.largest_witness_position == Opt(0));
}

TEST_CASE("witness values and the largest witness: single:g=1/64 (0.015625) in fixed:1.2 under r1",
          "[census][boundary][rounding]") {
  // fixed:1.2 holds k/4, |k| ≤ 7. R̂_i = (round(cos(i/64)), round(sin(i/64))).
  // Nearest: sin(i/64) rounds to 0 while it is < 1/8: asin(1/8) = 0.125328, and
  //   8/64 = 0.125 < 0.125328 < 9/64, so i ≤ 8 gives 0 and 9 ≤ i ≤ 24 gives 1/4 (sin(24/64) =
  //   0.36627 < 3/8, sin(25/64) = 0.38076 > 3/8); cos(i/64) rounds to 1 while cos > 7/8,
  //   i.e. i/64 < acos(7/8) = 0.5054 (i ≤ 32). So on 0..19: R̂ = A (9 times), then B (11 times).
  //   Non-periodic (P ≤ 10): witness of P = the smallest i with R̂_{i+P} ≠ R̂_i = 9 - P for
  //   P ≤ 9 (i + P = 9 is the first B), and 0 for P = 10. Largest witness: P = 1, i = 8.
  //   Distinct 2; first repeat (0, 1).
  // Toward zero: cos(i/64) < 1 for i ≥ 1 rounds down to 3/4 (cos > 3/4 up to i = 46); sin
  //   rounds down to 0 while < 1/4: asin(1/4) = 0.25268, 16/64 = 0.25 < 0.25268 < 17/64. So
  //   R̂_0 = (1, 0), R̂_1..16 = (3/4, 0), R̂_17..19 = (3/4, 1/4): distinct 3, first repeat (1, 2);
  //   R̂_0 occurs once, so every P has witness 0; largest witness P = 1, i = 0.
  // (tests/derivations/directed_values.py prints both tables.)
  const Schedule s = parse_schedule("single:g=0.015625");
  const auto fixed = ropesim::numeric::parse_format("fixed:1.2");
  const auto rne = census(s, parse_realisation("r1", fixed), opts(20));
  CHECK(rne.distinct_rotations == 2);
  REQUIRE(rne.first_repeat.has_value());
  CHECK(rne.first_repeat->earlier == 0);
  CHECK(rne.first_repeat->later == 1);
  CHECK_FALSE(rne.period.has_value());
  CHECK(rne.max_period == 10);
  CHECK(rne.witnesses == std::vector<std::int64_t>{8, 7, 6, 5, 4, 3, 2, 1, 0, 0});
  CHECK(rne.largest_witness_period == Opt(1));
  CHECK(rne.largest_witness_position == Opt(8));

  const auto rz = census(s, parse_realisation("r1", fixed, Rounding::toward_zero), opts(20));
  CHECK(rz.distinct_rotations == 3);
  REQUIRE(rz.first_repeat.has_value());
  CHECK(rz.first_repeat->earlier == 1);
  CHECK(rz.first_repeat->later == 2);
  CHECK_FALSE(rz.period.has_value());
  CHECK(rz.witnesses == std::vector<std::int64_t>(10, 0));
  CHECK(rz.largest_witness_period == Opt(1));
  CHECK(rz.largest_witness_position == Opt(0));
  const auto v = realise_block(s, parse_realisation("r1", fixed, Rounding::toward_zero), 0, 0, 20);
  CHECK(v[16].cos.to_double() == 0.75);
  CHECK(v[16].sin.to_double() == 0);
  CHECK(v[17].sin.to_double() == 0.25);

  // A plateau that ends exactly at N - 1: N = 10 gives A×9 then one B: witness of P is
  // 9 - P for P = 1..5 (i + P = 9 < N); largest witness P = 1 at i = 8.
  const auto tail = census(s, parse_realisation("r1", fixed), opts(10));
  CHECK(tail.witnesses == std::vector<std::int64_t>{8, 7, 6, 5, 4});
  CHECK(tail.largest_witness_period == Opt(1));
  CHECK(tail.largest_witness_position == Opt(8));
  CHECK(to_json(tail)["max_witness"] == 8);
  CHECK(to_json(tail)["max_witness_period"] == 1);
}
