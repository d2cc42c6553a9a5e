// proofs/literature/positional_head and proofs/literature/no_decay: items (i) and (iii) of "Round
// and Round We Go" [RRWG, arXiv 2410.06205]. Expected values are derived by hand below and printed
// by tests/derivations/rrwg_values.py (fractions + mpmath, no ropesim code).
#include <catch2/catch.hpp>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"
#include "numeric/format.hpp"
#include "proofs/literature/no_decay.hpp"
#include "proofs/literature/positional_head.hpp"

using namespace ropesim;

TEST_CASE("the previous-token head on theta_1 = 1 stops before the first tie distance", "[rrwg]") {
  // A competitor at offset n ties with the target once round_F(cos n) = 1. At the record
  // distances 1, 6, 19, 25, 44, 333, 710 this first happens at n = 44 in bf16 and fp16
  // (1 − cos 44 = 1.567e-4 < 2^-12 = 2.44e-4, half fp16's spacing below 1) and at n = 710 in
  // fp32 (1 − cos 710 = 1.82e-9 < 2^-25 = 2.98e-8; 1 − cos 333 = 3.89e-5 is not): the query
  // i = k + 44 + 1 = 45 (resp. 711) sees the key j = 0 at offset 44 (710), so N_max ≤ 43
  // (709). C = auto reaches that cap: e.g. fp16 needs C·δ_43 ≥ f_large with δ_43 = 1 − cos 25
  // = 8.797e-3 and f_large = 17.34375, i.e. C ≥ 1972 (rrwg_values.py).
  for (const auto& [format, n_max] :
       {std::pair{numeric::Format::bf16(), 43}, std::pair{numeric::Format::fp16(), 43},
        std::pair{numeric::Format::fp32(), 709}}) {
    for (const char* realisation : {"r1", "r2"}) {
      INFO(format.name << " " << realisation);
      const auto report = proofs::previous_token_head(format, realisation, 1);
      CHECK(report.range.n_max == static_cast<std::uint64_t>(n_max));
      REQUIRE(report.range.fail_query);
      CHECK(*report.range.fail_query == static_cast<std::uint64_t>(n_max) + 2);
      REQUIRE(report.range.fail_offset);
      CHECK(*report.range.fail_offset == n_max + 1);
      REQUIRE(report.tie_distance);
      CHECK(report.tie_distance->value == static_cast<std::int64_t>(n_max) + 1);
    }
  }
  CHECK_THROWS_AS(proofs::previous_token_head(numeric::Format::fp16(), "r1", 0), InvalidArgument);
}

TEST_CASE("a NoPE head cannot read the previous token: exact sums give equal outputs", "[rrwg]") {
  // Exact arithmetic: the output is a function of the key multiset (the prefixes are
  // permutations) — in F with exact summation each sum is rounded once from the same exact
  // value, so o and o' are bit for bit equal for every pair.
  for (const auto& format :
       {numeric::Format::bf16(), numeric::Format::fp16(), numeric::Format::fp32()}) {
    proofs::NopeCheckSpec spec;
    spec.policy.format = format;
    spec.policy.summation = numeric::Summation::exact;
    spec.trials = 100;
    const auto c = proofs::nope_previous_token_check(spec);
    INFO(format.name);
    CHECK(c.pairs == 100);
    CHECK(c.identical == 100);
    CHECK(c.max_difference == 0);
  }
}

TEST_CASE("a NoPE head with ordered sums differs by at most the summation bound", "[rrwg]") {
  // B = (1+u)(1+γ)/(1−γ) − (1−u)(1−γ)/(1+γ), u = 2^-p, γ = m·u/(1 − m·u), N = 16 keys:
  // m = 15 (sequential), 4 (pairwise). Exact values from rrwg_values.py (fractions).
  struct Case {
    numeric::Format format;
    numeric::Summation summation;
    const char* bound;
  };
  const Case cases[] = {
      {numeric::Format::bf16(), numeric::Summation::sequential, "954593/3702784"},
      {numeric::Format::bf16(), numeric::Summation::pairwise, "18113/253952"},
      {numeric::Format::fp16(), numeric::Summation::sequential, "64520417/2116026368"},
      {numeric::Format::fp32(), numeric::Summation::sequential,
       "4362858112483553/1180589509655085973504"},
      {numeric::Format::fp32(), numeric::Summation::pairwise,
       "79164816228353/73786941110466117632"},
  };
  for (const auto& c : cases) {
    proofs::NopeCheckSpec spec;
    spec.policy.format = c.format;
    spec.policy.summation = c.summation;
    spec.trials = 200;
    const auto r = proofs::nope_previous_token_check(spec);
    INFO(c.format.name << " " << numeric::to_string(c.summation));
    CHECK(r.keys == 16);
    CHECK(r.bound == mpq_class(c.bound));
    CHECK(r.underflows == 0);
    CHECK(r.max_difference <= r.bound);
    CHECK(r.bound_holds());
    CHECK(r.bound < r.margin);  // far below the 1/2 a read-out of ψ ∈ {0, 1} needs
  }
  // The order does matter in F: with sequential sums some pairs differ (bf16, seed 1).
  proofs::NopeCheckSpec spec;
  spec.policy.format = numeric::Format::bf16();
  const auto r = proofs::nope_previous_token_check(spec);
  CHECK(r.identical < r.pairs);
  CHECK(r.max_difference > 0);
  spec.length = 2;
  CHECK_THROWS_AS(proofs::nope_previous_token_check(spec), InvalidArgument);
}

TEST_CASE("no decay: cos n on theta_1 = 1, exact and realised", "[rrwg]") {
  const auto s = attention::single_schedule(1);
  const auto sum = proofs::alignment_sum(s);
  // mpmath: cos 44 = 0.99984330864769122007, cos 710 = 0.99999999818263592108.
  double error = 0;
  CHECK(std::abs(sum.approximate(44, &error) - 0.99984330864769122007) <= error + 1e-16);
  CHECK(std::abs(sum.approximate(710, &error) - 0.99999999818263592108) <= error + 1e-16);
  // r1 with the key at 0: k_0 = (1, 0) (cos 0 = 1, sin 0 = 0 exactly), q = (ĉ, ŝ), so the
  // score rnd(rnd(ĉ·1) + rnd(ŝ·0)) = ĉ = round_F(cos n): fp32 16774587/2^24 at n = 44, 1 at
  // n = 710; fp16 1 at 44 (rrwg_values.py).
  auto score = [&](const numeric::Format& F, const char* r, std::uint64_t i, std::uint64_t j) {
    numeric::EvaluationPolicy policy;
    policy.format = F;
    return numeric::exact_rational(
        proofs::realised_alignment_score(s, attention::parse_realisation(r, F), i, j, policy));
  };
  CHECK(score(numeric::Format::fp32(), "r1", 44, 0) == mpq_class(16774587, 16777216));
  CHECK(score(numeric::Format::fp32(), "r1", 710, 0) == 1);
  CHECK(score(numeric::Format::fp16(), "r1", 44, 0) == 1);
  // r2 in bf16 forms the phase in bf16: î = round(333) = 332 (a tie; even significand),
  // φ = 332, round_bf16(cos 332) = 0.53125 = 17/32.
  CHECK(score(numeric::Format::bf16(), "r2", 333, 0) == mpq_class(17, 32));
  // the overload without a policy takes F from the realisation (`table bounds --kind no-decay`)
  CHECK(numeric::exact_rational(proofs::realised_alignment_score(
            s, attention::parse_realisation("r1", numeric::Format::fp32()), 44, 0)) ==
        mpq_class(16774587, 16777216));
  CHECK(numeric::exact_rational(proofs::realised_alignment_score(
            s, attention::parse_realisation("r2", numeric::Format::bf16()), 333, 0)) ==
        mpq_class(17, 32));
  CHECK_THROWS_AS(proofs::alignment_sum(attention::unrotated_schedule(1)), InvalidArgument);
}
