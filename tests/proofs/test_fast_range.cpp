// The certified range by candidate offsets (proofs/range/fast_range.hpp): equal to the quadratic
// scan (RapidCheck over g, C, k, formats, roundings, summations, realisations; fixed seed from
// tests/main.cpp), its error bound checked against exact enclosures of the ideal scores, its
// candidate set against an exact brute force, and the fp64 case against the continued
// fraction of 1/2π.
#include <rapidcheck.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/mpfr_util.hpp"
#include "proofs/range/fast_range.hpp"
#include "proofs/range/horizon.hpp"
#include "tests/proofs/fast_range_support.hpp"

using namespace ropesim;
using numeric::Format;
using numeric::Rounding;

using fast_range_test::head_or_discard;
using fast_range_test::random_C;
using fast_range_test::random_format;
using fast_range_test::require_same;
using fast_range_test::spec_of;
using fast_range_test::up_to;

TEST_CASE("candidate algorithm = quadratic scan (N_max, witness, scores) on random heads",
          "[proofs][fast_range][property]") {
  const bool ok = rc::check("fast == scan", [] {
    const Format F = random_format();
    const Rounding r = *rc::gen::element(Rounding::nearest_even, Rounding::nearest_away,
                                         Rounding::toward_zero, Rounding::downward);
    const auto sum =
        *rc::gen::element(attention::Summation::sequential, attention::Summation::pairwise,
                          attention::Summation::wide_accumulator, attention::Summation::exact);
    RC_PRE(numeric::f_large(F, r).has_value());
    // g: a rational in radians, or a rational turn (periodic:a/m, where r3 applies too)
    const bool turn = *rc::gen::inRange(0, 4) == 0;
    std::string schedule, realisation = "r1";
    if (turn) {
      const int m = *rc::gen::inRange(3, 400);
      const int a = *rc::gen::inRange(1, m);
      schedule = "periodic:" + std::to_string(a) + "/" + std::to_string(m);
      realisation = *rc::gen::element(std::string("r1"), std::string("r3"));
    } else {
      const int num = *rc::gen::inRange(1, 4000);
      const int den = *rc::gen::inRange(1, 1000);
      schedule = "single:g=" + std::to_string(num) + "/" + std::to_string(den);
    }
    const std::uint64_t k = *rc::gen::inRange(1, 7);
    // C: from too small to lead at all up to near overflow
    auto spec = spec_of(schedule, random_C(F, r), k, F, realisation, r, sum);
    spec.policy.accumulator = *rc::gen::element(Format::fp32(), Format::fp16(), Format::fp64());
    const proofs::FixedOffsetHead head = head_or_discard(spec);
    RC_PRE(!proofs::fast_range_refusal(head).has_value());
    const std::uint64_t L = *rc::gen::inRange(1, 300);
    const bool kernel = *rc::gen::arbitrary<bool>();
    const auto scan = proofs::certified_range(head, up_to(L, kernel));
    const auto fast = proofs::certified_range_fast(head, up_to(L, kernel));
    RC_TAG(scan.at_limit ? "at limit" : "fails");
    require_same(scan, fast);
    RC_ASSERT(fast.scores_evaluated <= scan.scores_evaluated);
  });
  CHECK(ok);
}

TEST_CASE("the error bound E holds for every realised score (exact enclosures)",
          "[proofs][fast_range][property]") {
  const bool ok = rc::check("|S_hat - C S(n)| <= E", [] {
    const Format F = random_format();
    const Rounding r =
        *rc::gen::element(Rounding::nearest_even, Rounding::toward_zero, Rounding::downward);
    RC_PRE(numeric::f_large(F, r).has_value());
    const int num = *rc::gen::inRange(1, 4000);
    const int den = *rc::gen::inRange(1, 1000);
    const int e = *rc::gen::inRange(0, std::min(F.precision + 8, 60));
    const mpq_class C =
        mpq_class(mpz_class(1) << e) * (1 + mpq_class(*rc::gen::inRange(0, 64), 64));
    RC_PRE(C < numeric::exact_rational(numeric::max_finite(F)) / 64);
    const auto sum =
        *rc::gen::element(attention::Summation::sequential, attention::Summation::exact,
                          attention::Summation::wide_accumulator);
    auto spec = spec_of("single:g=" + std::to_string(num) + "/" + std::to_string(den), C,
                        *rc::gen::inRange(1, 5), F, "r1", r, sum);
    const auto head = proofs::make_fixed_offset_head(spec);
    const auto E = proofs::realised_score_error_bound(head);
    RC_ASSERT(E.has_value());
    proofs::RealisedScores scores(head, false);
    scores.ensure(40);
    numeric::Mpfr lo(160), hi(160), c(160), d(160);
    mpfr_set_q(c, head.C_exact.get_mpq_t(), MPFR_RNDN);  // exact: C is in F
    for (std::uint64_t i = 0; i < 40; ++i) {
      for (std::uint64_t j = 0; j < 40; ++j) {
        const auto s = scores.reference_score(i, j);
        RC_ASSERT(s.is_finite());
        const auto n = static_cast<std::int64_t>(i) - static_cast<std::int64_t>(head.k) -
                       static_cast<std::int64_t>(j);
        head.ideal.enclose(n, lo, hi);
        // the realised score lies within E of C·[lo, hi] (checked with directed rounding)
        mpfr_mul(hi, hi, c, MPFR_RNDU);
        mpfr_mul(lo, lo, c, MPFR_RNDD);
        s.to_mpfr(d);
        mpfr_sub(hi, d, hi, MPFR_RNDD);  // ≥ −E required: s − C·S ≥ s − C·hi
        mpfr_sub(lo, d, lo, MPFR_RNDU);  // ≤ E required
        const double Ed = numeric::nearest_double(*E) * (1 + 1e-12);
        RC_ASSERT(mpfr_get_d(hi, MPFR_RNDD) >= -Ed);
        RC_ASSERT(mpfr_get_d(lo, MPFR_RNDU) <= Ed);
      }
    }
  });
  CHECK(ok);
}

TEST_CASE("candidate offsets = exact brute force over n (no binary64 pre-filter)",
          "[proofs][fast_range]") {
  struct Case {
    const char* schedule;
    mpq_class C;
    Format F;
  };
  for (const auto& c : {Case{"single:g=1", mpq_class(1 << 30), Format::fp64()},
                        Case{"single:g=1", mpq_class(1 << 20), Format::fp32()},
                        Case{"single:g=7/3", mpq_class(1 << 16), Format::fp32()},
                        Case{"single:g=1000", mpq_class(1 << 28), Format::fp64()},
                        Case{"periodic:5/17", mpq_class(1 << 12), Format::fp32()}}) {
    const auto head = proofs::make_fixed_offset_head(spec_of(c.schedule, c.C, 1, c.F));
    const mpq_class E = *proofs::realised_score_error_bound(head);
    const std::uint64_t N = 20000;
    const auto fast = proofs::candidate_offsets(head, E, N);
    const mpq_class T = head.ideal.weight_sum() - (head.f_large_exact + 2 * E) / head.C_exact;
    std::vector<std::uint64_t> brute;
    for (std::uint64_t n = 1; n <= N; ++n) {
      if (head.ideal.compare(static_cast<std::int64_t>(n), T) > 0) brute.push_back(n);
    }
    INFO(c.schedule << " " << c.F.name);
    CHECK(fast == brute);
    CHECK(!brute.empty());
  }
}

TEST_CASE("fp64, g = 1, k = 1: N_max in the millions is the continued-fraction record bound",
          "[proofs][fast_range][bulk]") {
  // C = f_large/δ_1980127 · (1 + 1/16) rounded up into fp64 (the C = auto candidate "record
  // n=1980127"). In exact arithmetic C·δ_L ≥ f_large holds up to the next convergent
  // denominator of 1/2π, 2292816, and fp64's rounding error (E ≈ 2.6) is far below the
  // margin. Offset n first appears at query i = n + k (competitor j = 0), so the first failing
  // query is i = 2292817 against j = 0, and N_max = i − 2 = 2292815.
  const auto head = proofs::make_fixed_offset_head(
      spec_of("single:g=1", mpq_class("5320402020321196/10"), 1, Format::fp64()));
  REQUIRE(head.C.to_double() == 532040202032119.6);
  const auto delta = proofs::delta_bound(head.ideal, head.C_exact, head.f_large_exact,
                                         4'000'000'000'000'000'000LL);
  CHECK(delta.value == 2292815);
  const auto r = proofs::certified_range_fast(head, up_to(3'000'000));
  CHECK(r.n_max == 2292815);
  CHECK_FALSE(r.at_limit);
  CHECK(r.fail_query == 2292817u);
  CHECK(r.fail_competitor == 0u);
  CHECK(r.fail_offset == 2292816);
  CHECK(r.candidate_offsets == 1);
}

TEST_CASE("domain: the candidate algorithm refuses what its bound does not cover",
          "[proofs][fast_range]") {
  using proofs::fast_range_refusal;
  CHECK_FALSE(fast_range_refusal(
                  proofs::make_fixed_offset_head(spec_of("single:g=1", 1000, 1, Format::fp16())))
                  .has_value());
  CHECK(fast_range_refusal(
            proofs::make_fixed_offset_head(spec_of("single:g=1", 1000, 1, Format::fp16(), "r2")))
            .has_value());
  // several rotary blocks are in the domain (tests/proofs/test_fast_range_blocks.cpp)
  CHECK_FALSE(fast_range_refusal(proofs::make_fixed_offset_head(spec_of(
                                     "conventional:base=10000,dim=8", 1000, 1, Format::fp32())))
                  .has_value());
  CHECK(fast_range_refusal(
            proofs::make_fixed_offset_head(spec_of("single:g=1", 1000, 1, Format::fixed(16, 8))))
            .has_value());
  // 60000 in fp16: the query coordinates alone may reach 2C > 65504
  CHECK(fast_range_refusal(
            proofs::make_fixed_offset_head(spec_of("single:g=1", 60000, 1, Format::fp16())))
            .has_value());
  CHECK_THROWS_AS(proofs::certified_range_fast(proofs::make_fixed_offset_head(
                      spec_of("single:g=1", 1000, 1, Format::fp16(), "r2"))),
                  InvalidArgument);
  // horizon(): auto picks candidates where it applies, the scan elsewhere; forcing
  // candidates outside the domain is refused.
  proofs::HorizonSpec h;
  h.head = spec_of("single:g=1", 2096, 1, Format::fp16());
  CHECK(proofs::horizon(h).range.algorithm == "candidates");
  h.algorithm = proofs::RangeAlgorithm::scan;
  CHECK(proofs::horizon(h).range.algorithm == "scan");
  h.head.realisation = "r2";
  h.algorithm = proofs::RangeAlgorithm::automatic;
  CHECK(proofs::horizon(h).range.algorithm == "scan");
  h.algorithm = proofs::RangeAlgorithm::candidates;
  CHECK_THROWS_AS(proofs::horizon(h), InvalidArgument);
}
