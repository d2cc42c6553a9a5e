// The candidate algorithm on multi-frequency heads (proofs/range/fast_range.hpp): several
// rotary blocks with weights w_d, unrotated pairs as zero coordinates. Equal to the quadratic
// scan (RapidCheck over random schedules of 2–8 blocks, weights, C, k, formats, roundings,
// summations, r1/r3; fixed seed from tests/main.cpp), its error bound E checked against exact
// enclosures of the ideal scores, and a two-block head whose candidates and failure are
// derived by hand.
#include <rapidcheck.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/mpfr_util.hpp"
#include "proofs/range/fast_range.hpp"
#include "proofs/range/fast_range_detail.hpp"
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

namespace {

/// A random schedule of 2–8 rotary blocks and whether r3 applies (rational turns): random
/// turns a/m, a conventional schedule with a random base, or a partial one whose other half
/// of the pairs is unrotated.
std::pair<std::string, bool> random_schedule() {
  const int B = *rc::gen::inRange(2, 9);
  const int base = *rc::gen::inRange(2, 20000);
  switch (*rc::gen::inRange(0, 3)) {
    case 0: {
      std::string s = "periodic:";
      for (int d = 0; d < B; ++d) {
        const int m = *rc::gen::inRange(3, 200);
        s += (d ? "," : "") + std::to_string(*rc::gen::inRange(1, m)) + "/" + std::to_string(m);
      }
      return {s, true};
    }
    case 1:
      return {"conventional:base=" + std::to_string(base) + ",dim=" + std::to_string(2 * B), false};
    default:
      return {
          "partial:base=" + std::to_string(base) + ",dim=" + std::to_string(4 * B) + ",factor=0.5",
          false};
  }
}

/// Random weights w_d = a/8, a ∈ [−8, 16] (some zero or negative), or none (equal 1/B).
std::vector<mpq_class> random_weights(std::size_t B) {
  std::vector<mpq_class> w;
  if (*rc::gen::inRange(0, 3) == 0) return w;
  for (std::size_t d = 0; d < B; ++d) w.emplace_back(*rc::gen::inRange(-8, 17), 8);
  return w;
}

}  // namespace

TEST_CASE("multi-block candidate algorithm = quadratic scan (N_max, witness, scores)",
          "[proofs][fast_range][fast_range_blocks][property]") {
  const bool ok = rc::check("fast == scan, several blocks", [] {
    const Format F = random_format();
    const Rounding r = *rc::gen::element(Rounding::nearest_even, Rounding::nearest_away,
                                         Rounding::toward_zero, Rounding::downward);
    const auto sum =
        *rc::gen::element(attention::Summation::sequential, attention::Summation::pairwise,
                          attention::Summation::wide_accumulator, attention::Summation::exact);
    RC_PRE(numeric::f_large(F, r).has_value());
    const auto [schedule, rational] = random_schedule();
    const std::string realisation =
        rational ? *rc::gen::element(std::string("r1"), std::string("r3")) : "r1";
    const std::uint64_t k = *rc::gen::inRange(1, 7);
    // C: from too small to lead at all up to large
    auto spec = spec_of(schedule, random_C(F, r), k, F, realisation, r, sum);
    spec.weights = random_weights(spec.schedule.blocks.size());
    spec.policy.accumulator = *rc::gen::element(Format::fp32(), Format::fp16(), Format::fp64());
    const proofs::FixedOffsetHead head = head_or_discard(spec);
    RC_PRE(!proofs::fast_range_refusal(head).has_value());
    const std::uint64_t L = *rc::gen::inRange(1, 120);
    const bool kernel = *rc::gen::arbitrary<bool>();
    const auto scan = proofs::certified_range(head, up_to(L, kernel));
    const auto fast = proofs::certified_range_fast(head, up_to(L, kernel));
    RC_TAG(scan.at_limit ? "at limit" : "fails",
           fast.scores_evaluated < scan.scores_evaluated ? "pruned" : "no offset excluded");
    require_same(scan, fast);
    RC_ASSERT(fast.scores_evaluated <= scan.scores_evaluated);
  });
  CHECK(ok);
}

TEST_CASE("multi-block error bound E holds for every sampled realised score (exact enclosures)",
          "[proofs][fast_range][fast_range_blocks][property]") {
  const bool ok = rc::check("|S_hat - C S(n)| <= E, several blocks", [] {
    const Format F = random_format();
    const Rounding r =
        *rc::gen::element(Rounding::nearest_even, Rounding::toward_zero, Rounding::downward);
    RC_PRE(numeric::f_large(F, r).has_value());
    const auto sum =
        *rc::gen::element(attention::Summation::sequential, attention::Summation::pairwise,
                          attention::Summation::wide_accumulator, attention::Summation::exact);
    const int e = *rc::gen::inRange(0, std::min(F.precision + 8, 60));
    const mpq_class C =
        mpq_class(mpz_class(1) << e) * (1 + mpq_class(*rc::gen::inRange(0, 64), 64));
    RC_PRE(C < numeric::exact_rational(numeric::max_finite(F)) / 64);
    const auto [schedule, rational] = random_schedule();
    const std::string realisation =
        rational ? *rc::gen::element(std::string("r1"), std::string("r3")) : "r1";
    auto spec = spec_of(schedule, C, *rc::gen::inRange(1, 5), F, realisation, r, sum);
    spec.weights = random_weights(spec.schedule.blocks.size());
    spec.policy.accumulator = *rc::gen::element(Format::fp32(), Format::fp16(), Format::fp64());
    const proofs::FixedOffsetHead head = head_or_discard(spec);
    const auto E = proofs::realised_score_error_bound(head);
    RC_PRE(E.has_value());  // a C too large for the accumulator is refused, not bounded
    proofs::RealisedScores scores(head, false);
    const std::uint64_t P = 16;
    scores.ensure(P);
    numeric::Mpfr lo(200), hi(200), c(200), d(200), diff(200);
    mpfr_set_q(c, head.C_exact.get_mpq_t(), MPFR_RNDN);  // exact: C is in F
    const double Ed = numeric::nearest_double(*E) * (1 + 1e-12);
    // offsets n = i − k − j, each enclosed once; every (i, j) of that offset checked
    const auto k = static_cast<std::int64_t>(head.k);
    for (std::int64_t n = -k - static_cast<std::int64_t>(P) + 1; n < static_cast<std::int64_t>(P);
         ++n) {
      head.ideal.enclose(n, lo, hi);
      // the realised score lies within E of C·[lo, hi] (checked with directed rounding)
      mpfr_mul(hi, hi, c, MPFR_RNDU);
      mpfr_mul(lo, lo, c, MPFR_RNDD);
      for (std::uint64_t j = 0; j < P; ++j) {
        const std::int64_t i = n + k + static_cast<std::int64_t>(j);
        if (i < 0 || i >= static_cast<std::int64_t>(P)) continue;
        const auto s = scores.reference_score(static_cast<std::uint64_t>(i), j);
        RC_ASSERT(s.is_finite());
        s.to_mpfr(d);
        mpfr_sub(diff, d, hi, MPFR_RNDD);  // ≥ −E required: s − C·S ≥ s − C·hi
        RC_ASSERT(mpfr_get_d(diff, MPFR_RNDD) >= -Ed);
        mpfr_sub(diff, d, lo, MPFR_RNDU);  // ≤ E required
        RC_ASSERT(mpfr_get_d(diff, MPFR_RNDU) <= Ed);
      }
    }
  });
  CHECK(ok);
}

TEST_CASE("per-query bound err_i and u(n) hold for every realised score (exact enclosures)",
          "[proofs][fast_range][fast_range_blocks][query_bound][property]") {
  // THEORY §6, per-query bounds: |Ŝ_{i,j} − C·S(i−k−j)| ≤ err_i for every key j (err_i from
  // q̂_i alone), and u(n) ≥ S(n); checked against the reference scores (attention::head_score)
  // and MPFR enclosures of S(n), every (i, j) of 24 positions.
  const bool ok = rc::check("|S_hat - C S(n)| <= err_i, S(n) <= u(n)", [] {
    const Format F = random_format();
    const Rounding r =
        *rc::gen::element(Rounding::nearest_even, Rounding::toward_zero, Rounding::downward);
    RC_PRE(numeric::f_large(F, r).has_value());
    const auto sum =
        *rc::gen::element(attention::Summation::sequential, attention::Summation::pairwise,
                          attention::Summation::wide_accumulator, attention::Summation::exact);
    const int e = *rc::gen::inRange(0, std::min(F.precision + 8, 60));
    const mpq_class C =
        mpq_class(mpz_class(1) << e) * (1 + mpq_class(*rc::gen::inRange(0, 64), 64));
    RC_PRE(C < numeric::exact_rational(numeric::max_finite(F)) / 64);
    const bool one = *rc::gen::inRange(0, 4) == 0;
    const auto [schedule, rational] =
        one ? std::pair<std::string, bool>{"single:g=" + std::to_string(*rc::gen::inRange(1, 9)) +
                                               "/" + std::to_string(*rc::gen::inRange(1, 9)),
                                           false}
            : random_schedule();
    const std::string realisation =
        rational ? *rc::gen::element(std::string("r1"), std::string("r3")) : "r1";
    auto spec = spec_of(schedule, C, *rc::gen::inRange(1, 5), F, realisation, r, sum);
    if (!one) spec.weights = random_weights(spec.schedule.blocks.size());
    spec.policy.accumulator = *rc::gen::element(Format::fp32(), Format::fp16(), Format::fp64());
    const proofs::FixedOffsetHead head = head_or_discard(spec);
    const auto E = proofs::realised_score_error_bound(head);
    RC_PRE(E.has_value());
    const proofs::detail::QueryBound bound(head, *E);
    const proofs::detail::IdealDoubles ideal(head.ideal);
    proofs::RealisedScores scores(head, false);
    const std::uint64_t P = 24;
    scores.ensure(P);
    numeric::Mpfr lo(200), hi(200), c(200), d(200), diff(200);
    mpfr_set_q(c, head.C_exact.get_mpq_t(), MPFR_RNDN);  // exact: C is in F
    for (std::uint64_t n = 1; n < 2 * P; ++n) {
      const double u = ideal.upper(n);
      RC_ASSERT(head.ideal.compare(static_cast<std::int64_t>(n), mpq_class(u)) <= 0);
    }
    const auto k = head.k;
    for (std::uint64_t i = k + 1; i < P; ++i) {
      std::vector<double> q;
      for (const auto& v : scores.query(i)) q.push_back(v.to_double());
      const double err = bound.error(i, q.data());
      for (std::uint64_t j = 0; j < P; ++j) {
        const std::int64_t n = static_cast<std::int64_t>(i) - static_cast<std::int64_t>(k) -
                               static_cast<std::int64_t>(j);
        head.ideal.enclose(n, lo, hi);
        mpfr_mul(hi, hi, c, MPFR_RNDU);
        mpfr_mul(lo, lo, c, MPFR_RNDD);
        const auto s = scores.reference_score(i, j);
        RC_ASSERT(s.is_finite());
        s.to_mpfr(d);
        mpfr_sub(diff, d, hi, MPFR_RNDD);  // ≥ −err required
        RC_ASSERT(mpfr_get_d(diff, MPFR_RNDD) >= -err);
        mpfr_sub(diff, d, lo, MPFR_RNDU);  // ≤ err required
        RC_ASSERT(mpfr_get_d(diff, MPFR_RNDU) <= err);
      }
    }
  });
  CHECK(ok);
}

TEST_CASE("two blocks θ = π/2, π/3 with w = 1/2: candidates and failure by hand",
          "[proofs][fast_range][fast_range_blocks]") {
  // S(n) = (cos(nπ/2) + cos(nπ/3))/2 has period 12: S(0) = 1, S(6) = 0, S(n) = −1/2 for
  // n ≡ 3, 9, −3/4 for n ≡ 2, 10 and 1/4 for n ≡ 1, 4, 5, 7, 8, 11 (mod 12).
  // f_large(fp32) is just above 150·ln 2 = 103.97 (exp(−f) below half of 2^-149 rounds to 0).
  for (const char* realisation : {"r1", "r3"}) {
    INFO(realisation);
    const auto head = proofs::make_fixed_offset_head(
        spec_of("periodic:1/4,1/6", 256, 1, Format::fp32(), realisation));
    REQUIRE(head.f_large.to_double() > 103.9);
    REQUIRE(head.f_large.to_double() < 104.0);
    const mpq_class E = *proofs::realised_score_error_bound(head);
    REQUIRE(E < mpq_class(1, 1000));  // fp32: a few units of 2^-24·C = 1.5·10^-5
    // C = 256: T = 1 − (f_large + 2E)/256 ≈ 0.594 > 1/4, so only S(n) = 1 (n ≡ 0 mod 12)
    CHECK(proofs::candidate_offsets(head, E, 40) == std::vector<std::uint64_t>{12, 24, 36});
    // every query up to i = 12 leads by ≥ 256·3/4 = 192 > f_large; query i = 13 meets j = 0
    // at offset 12, whose realised rotation equals the target's (cos and sin of 12·θ_d + θ_d
    // and θ_d are the same reals), so the gap is exactly 0 and N_max = 13 − 2 = 11
    const auto fast = proofs::certified_range_fast(head, up_to(100));
    CHECK(fast.algorithm == "candidates");
    CHECK(fast.n_max == 11);
    CHECK_FALSE(fast.at_limit);
    CHECK(fast.fail_query == 13u);
    CHECK(fast.fail_competitor == 0u);
    CHECK(fast.fail_offset == 12);
    CHECK(fast.gap == mpq_class(0));
    REQUIRE(fast.target_score.has_value());
    CHECK(std::fabs(fast.target_score->to_double() - 256) < 0.01);
    CHECK(fast.candidate_offsets == 1);
  }
  // C = 128: T = 1 − (f_large + 2E)/128 ≈ 0.188 < 1/4, so S(n) = 1/4 are candidates too, and
  // query i = 2 (k = 1) against j = 0 at offset 1 leads by 128·3/4 = 96 < f_large: N_max = 0
  const auto head =
      proofs::make_fixed_offset_head(spec_of("periodic:1/4,1/6", 128, 1, Format::fp32()));
  const mpq_class E = *proofs::realised_score_error_bound(head);
  CHECK(proofs::candidate_offsets(head, E, 13) ==
        std::vector<std::uint64_t>{1, 4, 5, 7, 8, 11, 12, 13});
  const auto fast = proofs::certified_range_fast(head, up_to(100));
  CHECK(fast.n_max == 0);
  CHECK(fast.fail_query == 2u);
  CHECK(fast.fail_competitor == 0u);
  CHECK(fast.fail_offset == 1);
}

TEST_CASE("llama2-7b schedule (64 blocks): candidates = scan in every format",
          "[proofs][fast_range][fast_range_blocks]") {
  for (const Format& F : {Format::fp16(), Format::bf16(), Format::fp32(), Format::fp64()}) {
    INFO(F.name);
    const auto fl = numeric::exact_rational(*numeric::f_large(F, Rounding::nearest_even));
    // C = 4·f_large: the target leads every offset whose S(n) ≤ 3/4 (with room for E)
    const auto head = proofs::make_fixed_offset_head(spec_of("llama2-7b", 4 * fl, 2, F));
    REQUIRE(head.head.head_dim == 128);
    REQUIRE_FALSE(proofs::fast_range_refusal(head).has_value());
    const auto scan = proofs::certified_range(head, up_to(150));
    const auto fast = proofs::certified_range_fast(head, up_to(150));
    CHECK(fast.algorithm == "candidates");
    CHECK(scan.n_max == fast.n_max);
    CHECK(scan.at_limit == fast.at_limit);
    CHECK(scan.fail_query == fast.fail_query);
    CHECK(scan.fail_competitor == fast.fail_competitor);
    CHECK(scan.gap == fast.gap);
    CHECK(fast.scores_evaluated <= scan.scores_evaluated);
  }
  // r2 forms the angle in F: refused with the reason
  const auto r2 =
      proofs::make_fixed_offset_head(spec_of("llama2-7b", 512, 1, Format::fp32(), "r2"));
  const auto why = proofs::fast_range_refusal(r2);
  REQUIRE(why.has_value());
  CHECK(why->find("no position-independent bound E") != std::string::npos);
  // the quick limit: 6.4·10^7 realised (position, block) pairs / 64 blocks
  CHECK(proofs::fast_range_length_limit(r2) == 1000000);
}

TEST_CASE(
    "quick limit of several frequencies: 6.4·10^7 realised pairs, or the scan's when candidates "
    "are dense",
    "[proofs][fast_range][fast_range_blocks]") {
  // fp32, C = 4·f_large on llama2-7b: candidates are rare but not absent — 4 among the first
  // 250000 offsets, ρ = 1.6·10^-5, so the limit is the scan's 2500
  // (2·10^4/sqrt(64)) over sqrt(ρ) = 0.004: 625000, below 6.4·10^7/64 = 10^6
  const auto fl =
      numeric::exact_rational(*numeric::f_large(Format::fp32(), Rounding::nearest_even));
  const auto sparse =
      proofs::make_fixed_offset_head(spec_of("llama2-7b", 4 * fl, 1, Format::fp32()));
  const auto E = *proofs::realised_score_error_bound(sparse);
  CHECK(proofs::candidate_offsets(sparse, E, 250000).size() == 4);
  CHECK(proofs::scan_length_limit(sparse) == 2500);
  CHECK(proofs::fast_range_length_limit(sparse) == 625000);
  // C = 4096: no candidate among the first 250000 offsets, the limit is 10^6
  const auto wide = proofs::make_fixed_offset_head(spec_of("llama2-7b", 4096, 1, Format::fp32()));
  CHECK(proofs::fast_range_length_limit(wide) == 1000000);
  // p = 4: E is so large that every offset is a candidate (ρ = 1) and the limit is the
  // scan's, 2·10^4/sqrt(8) = 7071 for 8 blocks with the binary64 kernel
  const Format tiny = Format::ieee(4, 6);
  const auto fl4 = numeric::exact_rational(*numeric::f_large(tiny, Rounding::nearest_even));
  const auto dense =
      proofs::make_fixed_offset_head(spec_of("conventional:base=10000,dim=16", 4 * fl4, 1, tiny));
  REQUIRE_FALSE(proofs::fast_range_refusal(dense).has_value());
  CHECK(proofs::scan_length_limit(dense) == 7071);
  CHECK(proofs::fast_range_length_limit(dense) == 7071);
}

namespace {

/// Checks the split bound (THEORY §6 "Split bounds") against every realised score of the
/// queries in `queries` and the keys in `keys`: |Ŝ_{i,j} − C·S(n)| ≤ R_i + A(|n|), with
/// S(n) enclosed by MPFR and the score from attention::head_score (the reference path).
/// Returns the largest ratio |Ŝ − C·S(n)|/(R_i + A(n)) seen (≤ 1 when the bound holds).
template <typename Check>
double check_split_bound(const proofs::FixedOffsetHead& head, proofs::RealisedScores& scores,
                         const std::vector<std::uint64_t>& queries,
                         const std::vector<std::uint64_t>& keys, Check&& check) {
  const auto E = proofs::realised_score_error_bound(head);
  const proofs::detail::QueryBound bound(head, *E);
  check(bound.has_split());
  numeric::Mpfr lo(200), hi(200), c(200), d(200), diff(200);
  mpfr_set_q(c, head.C_exact.get_mpq_t(), MPFR_RNDN);  // exact: C is in F
  double worst = 0;
  const auto k = static_cast<std::int64_t>(head.k);
  // C·S(n) enclosed once per offset: [lo, hi] as mpq (exact copies of the MPFR bounds)
  std::map<std::int64_t, std::pair<mpq_class, mpq_class>> enclosed;
  for (const std::uint64_t i : queries) {
    std::vector<double> q;
    for (const auto& v : scores.query(i)) q.push_back(v.to_double());
    const double R = bound.split_error(i, q.data());
    for (const std::uint64_t j : keys) {
      const std::int64_t n = static_cast<std::int64_t>(i) - k - static_cast<std::int64_t>(j);
      const double err = R + bound.offset_error(static_cast<std::uint64_t>(n < 0 ? -n : n));
      auto it = enclosed.find(n);
      if (it == enclosed.end()) {
        head.ideal.enclose(n, lo, hi);
        mpfr_mul(hi, hi, c, MPFR_RNDU);
        mpfr_mul(lo, lo, c, MPFR_RNDD);
        mpq_class a, b;
        mpfr_get_q(a.get_mpq_t(), lo);
        mpfr_get_q(b.get_mpq_t(), hi);
        it = enclosed.emplace(n, std::make_pair(a, b)).first;
      }
      mpfr_set_q(lo, it->second.first.get_mpq_t(), MPFR_RNDN);  // exact: 200 bits
      mpfr_set_q(hi, it->second.second.get_mpq_t(), MPFR_RNDN);
      const auto s = scores.reference_score(i, j);
      check(s.is_finite());
      s.to_mpfr(d);
      mpfr_sub(diff, d, hi, MPFR_RNDD);  // ≥ −err required
      const double below = mpfr_get_d(diff, MPFR_RNDD);
      check(below >= -err);
      mpfr_sub(diff, d, lo, MPFR_RNDU);  // ≤ err required
      const double above = mpfr_get_d(diff, MPFR_RNDU);
      check(above <= err);
      worst = std::max(worst, std::max(-below, above) / err);
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("split bound R_i + A(n) holds for every realised score (exact enclosures)",
          "[proofs][fast_range][fast_range_blocks][split_bound][property]") {
  // THEORY §6, split bounds: sequential and pairwise sums in F, random schedules (unrotated
  // pairs included), weights, formats of precision 3–29 and C from tiny to near overflow
  const bool ok = rc::check("|S_hat - C S(n)| <= R_i + A(n)", [] {
    const Format F = random_format();
    const Rounding r =
        *rc::gen::element(Rounding::nearest_even, Rounding::toward_zero, Rounding::downward);
    RC_PRE(numeric::f_large(F, r).has_value());
    const auto sum =
        *rc::gen::element(attention::Summation::sequential, attention::Summation::pairwise);
    const int e = *rc::gen::inRange(0, std::min(F.precision + 8, 60));
    const mpq_class C =
        mpq_class(mpz_class(1) << e) * (1 + mpq_class(*rc::gen::inRange(0, 64), 64));
    RC_PRE(C < numeric::exact_rational(numeric::max_finite(F)) / 64);
    const auto [schedule, rational] = random_schedule();
    const std::string realisation =
        rational ? *rc::gen::element(std::string("r1"), std::string("r3")) : "r1";
    auto spec = spec_of(schedule, C, *rc::gen::inRange(1, 5), F, realisation, r, sum);
    spec.weights = random_weights(spec.schedule.blocks.size());
    const proofs::FixedOffsetHead head = head_or_discard(spec);
    RC_PRE(proofs::realised_score_error_bound(head).has_value());
    proofs::RealisedScores scores(head, false);
    const std::uint64_t P = 24;
    scores.ensure(P);
    std::vector<std::uint64_t> queries, keys;
    for (std::uint64_t p = 0; p < P; ++p) {
      keys.push_back(p);
      if (p > head.k) queries.push_back(p);
    }
    check_split_bound(head, scores, queries, keys, [](bool b) { RC_ASSERT(b); });
  });
  CHECK(ok);
}

TEST_CASE("split bound on gemma-7b (128 blocks) in bf16 and p = 7: sound, and far below err_i",
          "[proofs][fast_range][fast_range_blocks][split_bound]") {
  // Every realised score of queries 2..40 and 3000..3003 against keys 0..40 and 2960..3003
  // lies within R_i + A(n) of C·S(n); on this head the split bound is several times smaller
  // than the per-query bound err_i (the partial sums of a competitor's score stay far below
  // the worst case Σ|q̂_c| that err_i assumes).
  for (const Format& F : {Format::bf16(), Format::ieee(7, 8)}) {
    for (const auto sum : {attention::Summation::sequential, attention::Summation::pairwise}) {
      CAPTURE(F.name, static_cast<int>(sum));
      const auto head = proofs::make_fixed_offset_head(
          spec_of("gemma-7b", 8192, 1, F, "r1", Rounding::nearest_even, sum));
      proofs::RealisedScores scores(head, false);
      scores.ensure(3004);
      std::vector<std::uint64_t> queries, keys;
      for (std::uint64_t p = 0; p <= 40; ++p) {
        keys.push_back(p);
        if (p >= 2) queries.push_back(p);
      }
      for (std::uint64_t p = 2960; p <= 3003; ++p) keys.push_back(p);
      for (std::uint64_t p = 3000; p <= 3003; ++p) queries.push_back(p);
      const double worst =
          check_split_bound(head, scores, queries, keys, [](bool b) { REQUIRE(b); });
      CHECK(worst <= 1);
      // against err_i at a far query and a far offset: sequential sums' worst case (partial
      // sums up to Σ|q̂_c|) is far above the split bound; pairwise trees are shallow and
      // err_i is already small there
      const auto E = proofs::realised_score_error_bound(head);
      const proofs::detail::QueryBound bound(head, *E);
      std::vector<double> q;
      for (const auto& v : scores.query(3000)) q.push_back(v.to_double());
      const double split = bound.split_error(3000, q.data()) + bound.offset_error(1500);
      if (sum == attention::Summation::sequential) CHECK(split * 3 < bound.error(3000, q.data()));
    }
  }
}

TEST_CASE("gemma-7b and smaller heads at p = 6..8: candidates with split bounds = scan",
          "[proofs][fast_range][fast_range_blocks][split_bound]") {
  // Failures early and late (offset 1, offset −1 after the target, or none), the split bound
  // deciding most exclusions: every field equals the quadratic scan's.
  struct Case {
    const char* schedule;
    Format F;
    int C;
    std::uint64_t k, L;
  };
  const Case cases[] = {
      {"gemma-7b", Format::ieee(7, 8), 4096, 1, 300},                        // fails at query 50
      {"gemma-7b", Format::bf16(), 4096, 1, 300},                            // fails at query 82
      {"gemma-7b", Format::bf16(), 8192, 8, 700},                            // no failure
      {"conventional:base=10000,dim=64", Format::ieee(6, 8), 8192, 1, 400},  // query 295
      {"conventional:base=1000,dim=24", Format::ieee(6, 8), 8192, 3, 1300},  // query 1232
      {"conventional:base=100,dim=16", Format::ieee(6, 8), 4096, 3, 1300},   // none
  };
  for (const auto& c : cases) {
    CAPTURE(c.schedule, c.F.name, c.C, c.k);
    const auto head = proofs::make_fixed_offset_head(spec_of(c.schedule, c.C, c.k, c.F));
    REQUIRE_FALSE(proofs::fast_range_refusal(head).has_value());
    const auto scan = proofs::certified_range(head, up_to(c.L));
    const auto fast = proofs::certified_range_fast(head, up_to(c.L));
    CAPTURE(scan.n_max, fast.offsets_scored, fast.scores_evaluated, scan.scores_evaluated);
    CHECK(scan.n_max == fast.n_max);
    CHECK(scan.at_limit == fast.at_limit);
    CHECK(scan.fail_query == fast.fail_query);
    CHECK(scan.fail_competitor == fast.fail_competitor);
    CHECK(scan.fail_offset == fast.fail_offset);
    CHECK(scan.gap == fast.gap);
    CHECK(fast_range_test::same_value(scan.target_score, fast.target_score));
    CHECK(fast_range_test::same_value(scan.competitor_score, fast.competitor_score));
    CHECK(fast.scores_evaluated <= scan.scores_evaluated);
  }
  // gemma-7b in bf16 (C = 8192, k = 1) to 1000: under err_i alone about half of the offsets
  // are scored at some query (5293 of 10^4 to 10^4); the split bound leaves the shortest ones
  const auto head = proofs::make_fixed_offset_head(spec_of("gemma-7b", 8192, 1, Format::bf16()));
  const auto fast = proofs::certified_range_fast(head, up_to(1000));
  CHECK(fast.at_limit);
  CHECK(fast.offsets_scored < 30);
}

namespace {

/// A second implementation of the split bound's terms (THEORY §6 "Split bounds"), written from
/// the formulas in long double: the summation tree rebuilt recursively (each node with its
/// coordinate range and its rounded additions above it), R_i and A(n) summed term by term.
struct SplitFormula {
  struct Node {
    std::size_t lo, hi;  // coordinates [lo, hi)
    int h;               // rounded additions above
  };
  std::vector<Node> nodes;
  std::vector<int> leaf_h;  // −1: a coordinate outside the rotary blocks
  std::vector<std::size_t> block;
  long double eps, eta, C;
  std::vector<long double> w, theta;
  const proofs::FixedOffsetHead& head;

  explicit SplitFormula(const proofs::FixedOffsetHead& h) : head(h) {
    const Format& F = h.policy.format;
    const bool nearest =
        h.policy.rounding == Rounding::nearest_even || h.policy.rounding == Rounding::nearest_away;
    eps = std::ldexp(1.0L, nearest ? -F.precision : 1 - F.precision);
    eta = F.subnormals ? std::ldexp(1.0L, F.emin - F.precision + (nearest ? 0 : 1))
                       : std::ldexp(1.0L, F.emin);
    C = h.C_exact.get_d();
    const std::size_t D = h.head.head_dim, B = h.ideal.blocks.size();
    block.assign(D, B);
    numeric::Mpfr lo(128), hi(128);
    for (std::size_t d = 0; d < B; ++d) {
      block[2 * d] = block[2 * d + 1] = d;  // r1 / r3: adjacent pairs
      h.ideal.blocks[d].theta().enclose(lo, hi);
      theta.push_back((mpfr_get_ld(lo, MPFR_RNDN) + mpfr_get_ld(hi, MPFR_RNDN)) / 2);
      w.push_back(h.ideal.weights[d].get_d());
    }
    leaf_h.assign(D, -1);
    auto rotary = [&](std::size_t c) { return block[c] < B; };
    if (h.policy.summation == attention::Summation::sequential) {
      std::vector<std::size_t> cs;
      for (std::size_t c = 0; c < D; ++c)
        if (rotary(c)) cs.push_back(c);
      const int N = static_cast<int>(cs.size());
      for (int m = 1; m <= N; ++m) {
        leaf_h[cs[m - 1]] = m == 1 ? N - 1 : N - m + 1;
        if (m >= 2) nodes.push_back({cs[0], cs[m - 1] + 1, N - m});
      }
    } else {
      // pairwise: a node where both halves hold a rotary coordinate
      auto any = [&](std::size_t lo, std::size_t hi) {
        for (std::size_t c = lo; c < hi; ++c)
          if (rotary(c)) return true;
        return false;
      };
      auto build = [&](auto&& self, std::size_t lo, std::size_t hi, int depth) -> void {
        if (hi - lo == 1) {
          if (rotary(lo)) leaf_h[lo] = depth;
          return;
        }
        const std::size_t mid = lo + (hi - lo) / 2;
        const bool node = any(lo, mid) && any(mid, hi);
        if (node) nodes.push_back({lo, hi, depth});
        self(self, lo, mid, depth + (node ? 1 : 0));
        self(self, mid, hi, depth + (node ? 1 : 0));
      };
      build(build, 0, D, 0);
    }
  }
  long double g(int h) const { return std::pow(1 + eps, static_cast<long double>(h)); }
  long double Cw(std::size_t c) const { return C * w[block[c]]; }
  /// R_i for the realised query q̂ (doubles).
  long double R(std::uint64_t i, const std::vector<double>& q) const {
    const std::size_t D = q.size(), B = w.size();
    const long double m = static_cast<long double>(i - head.k);
    std::vector<long double> dev(D, 0);
    long double a = 0, qn = 0;
    for (std::size_t d = 0; d < B; ++d) {
      const long double x0 = q[2 * d] - C * w[d] * std::cos(m * theta[d]);
      const long double x1 = q[2 * d + 1] - C * w[d] * std::sin(m * theta[d]);
      dev[2 * d] = std::fabs(x0);
      dev[2 * d + 1] = std::fabs(x1);
      a += std::sqrt(x0 * x0 + x1 * x1);
      qn += std::sqrt(static_cast<long double>(q[2 * d]) * q[2 * d] +
                      static_cast<long double>(q[2 * d + 1]) * q[2 * d + 1]);
    }
    long double r = a + (eps + std::sqrt(2.0L) * eta) * qn;
    for (std::size_t c = 0; c < D; ++c)
      if (leaf_h[c] >= 0) r += g(leaf_h[c]) * (eps * std::fabs(q[c]) + eta);
    for (const Node& v : nodes) {
      long double delta = 0, beta = 0;
      for (std::size_t c = v.lo; c < v.hi; ++c) {
        if (block[c] >= B) continue;
        delta += dev[c] + std::fabs(Cw(c)) * (eps + eta);
        const std::size_t partner = c ^ 1;
        if (partner < v.lo || partner >= v.hi) beta += std::fabs(Cw(c)) / 2;
      }
      r += g(v.h) * (eta + eps * (delta + beta));
    }
    return r;
  }
  /// A(n).
  long double A(std::uint64_t n) const {
    long double s = 0;
    for (const Node& v : nodes) {
      long double alpha = 0;
      for (std::size_t c = v.lo; c < v.hi; ++c)
        if (block[c] < w.size())
          alpha += Cw(c) / 2 * std::cos(static_cast<long double>(n) * theta[block[c]]);
      s += g(v.h) * std::fabs(alpha);
    }
    return eps * s;
  }
};

}  // namespace

TEST_CASE("split bound: R_i and A(n) = their formulas (second implementation, long double)",
          "[proofs][fast_range][fast_range_blocks][split_bound][property]") {
  auto compare = [](const proofs::FixedOffsetHead& head, std::uint64_t i, std::uint64_t n,
                    proofs::RealisedScores& scores, auto&& check) {
    const proofs::detail::QueryBound bound(head, *proofs::realised_score_error_bound(head));
    const SplitFormula formula(head);
    check(bound.has_split());
    std::vector<double> q;
    for (const auto& v : scores.query(i)) q.push_back(v.to_double());
    const long double D = static_cast<long double>(q.size());
    long double W = 0;
    for (const auto x : formula.w) W += std::fabs(x);
    // the binary64 evaluation is an upper bound within 2^-20 relative, plus its slack for
    // the libm and the doubles of θ_d and w_d (absolute, far below every term here)
    const long double tol = 1e-9L * formula.C * W * D * (1 + formula.eps * D);
    const long double R = formula.R(i, q), Rd = bound.split_error(i, q.data());
    check(Rd >= R * (1 - 1e-12L) - tol);
    check(Rd <= R * (1 + 0x1p-20L) + tol);
    const long double A = formula.A(n), Ad = bound.offset_error(n);
    check(Ad >= A * (1 - 1e-12L) - tol);
    check(Ad <= A * (1 + 0x1p-20L) + tol);
  };
  const bool ok = rc::check("R_i, A(n) = formula", [&] {
    const Format F = random_format();
    const Rounding r =
        *rc::gen::element(Rounding::nearest_even, Rounding::toward_zero, Rounding::downward);
    RC_PRE(numeric::f_large(F, r).has_value());
    const auto sum =
        *rc::gen::element(attention::Summation::sequential, attention::Summation::pairwise);
    const int e = *rc::gen::inRange(0, std::min(F.precision + 8, 60));
    const mpq_class C = mpq_class(mpz_class(1) << e);
    RC_PRE(C < numeric::exact_rational(numeric::max_finite(F)) / 64);
    const auto [schedule, rational] = random_schedule();
    auto spec = spec_of(schedule, C, *rc::gen::inRange(1, 5), F, "r1", r, sum);
    spec.weights = random_weights(spec.schedule.blocks.size());
    const proofs::FixedOffsetHead head = head_or_discard(spec);
    RC_PRE(proofs::realised_score_error_bound(head).has_value());
    proofs::RealisedScores scores(head, false);
    scores.ensure(40);
    compare(head, *rc::gen::inRange<std::uint64_t>(head.k + 1, 40),
            *rc::gen::inRange<std::uint64_t>(1, 5000), scores, [](bool b) { RC_ASSERT(b); });
  });
  CHECK(ok);
  for (const auto sum : {attention::Summation::sequential, attention::Summation::pairwise}) {
    const auto head = proofs::make_fixed_offset_head(
        spec_of("gemma-7b", 8192, 1, Format::bf16(), "r1", Rounding::nearest_even, sum));
    proofs::RealisedScores scores(head, false);
    scores.ensure(3001);
    compare(head, 3000, 1500, scores, [](bool b) { CHECK(b); });
  }
}
