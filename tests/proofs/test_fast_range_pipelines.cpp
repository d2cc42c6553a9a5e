// The candidate algorithm on pipelines (proofs/range/fast_range.hpp; THEORY §6 "Pipelines"):
// Hugging Face's eager path (`hf`), whose angle is formed in fp32, so that a key's deviation
// from the ideal (cos jθ_d, sin jθ_d) grows with j. The per-query bounds then use the measured
// deviations of the keys (QueryBound::key_deviation) instead of K = ε + √2·η and |k̂_c| ≤ 1.
// Checked: the result equals the quadratic scan in every field on real heads (early failures in
// bf16 and small formats, no failure in fp16 and fp32, YaRN's attention factor > 1, other
// summations and a directed rounding), and err_i and R_i + A(n) computed from a key's own
// measured deviation bound every realised score against MPFR enclosures of C·S(n), at
// positions up to 10^6 where fp32's angle errs by ~10^-2.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "attention/realisations/realisation.hpp"
#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/mpfr_util.hpp"
#include "proofs/range/fast_range.hpp"
#include "proofs/range/fast_range_detail.hpp"
#include "tests/proofs/fast_range_support.hpp"

using namespace ropesim;
using numeric::Format;
using numeric::Rounding;

using fast_range_test::spec_of;
using fast_range_test::up_to;

namespace {

/// Every field the candidate algorithm shares with the scan (CHECK, outside RapidCheck).
void check_same(const proofs::CertifiedRange& scan, const proofs::CertifiedRange& fast) {
  CHECK(fast.algorithm == "candidates");
  CHECK(scan.n_max == fast.n_max);
  CHECK(scan.at_limit == fast.at_limit);
  CHECK(scan.fail_query == fast.fail_query);
  CHECK(scan.fail_competitor == fast.fail_competitor);
  CHECK(scan.fail_offset == fast.fail_offset);
  CHECK(scan.gap == fast.gap);
  CHECK(fast_range_test::same_value(scan.target_score, fast.target_score));
  CHECK(fast_range_test::same_value(scan.competitor_score, fast.competitor_score));
  CHECK(fast.scores_evaluated <= scan.scores_evaluated);
  CHECK_FALSE(fast.error_bound.has_value());  // no global E for a pipeline
}

/// The realised query (when q) and key of `head` at position p, through the reference path:
/// attention::realise_block and attention::rotate (THEORY §2.1 / the pipeline's arithmetic in
/// the numeric engine), as doubles.
void realise_reference(const proofs::FixedOffsetHead& head, std::uint64_t p, std::vector<double>* q,
                       std::vector<double>& k) {
  const std::size_t B = head.ideal.blocks.size(), D = head.head.head_dim;
  const std::vector<numeric::Value> zero(head.head.query.cols, numeric::Value());
  const auto bq = attention::matvec(head.head.query, zero, head.head.query_bias, head.policy);
  const auto bk = attention::matvec(head.head.key, zero, head.head.key_bias, head.policy);
  attention::HeadRotations one;
  one.positions = 1;
  one.blocks.resize(B);
  for (std::size_t b = 0; b < B; ++b)
    one.blocks[b] = attention::realise_block(head.schedule, head.realisation, b, p, p + 1);
  const auto kv = attention::rotate(head.head, one, 0, bk, head.policy);
  k.assign(D, 0.0);
  for (std::size_t c = 0; c < D; ++c) k[c] = kv[c].to_double();
  if (!q) return;
  const auto qv = attention::rotate(head.head, one, 0, bq, head.policy);
  q->assign(D, 0.0);
  for (std::size_t c = 0; c < D; ++c) (*q)[c] = qv[c].to_double();
}

/// Every score of `queries` against `keys` (reference path: attention::head_score) lies within
/// err_i and within R_i + A(n) of C·S(n) (MPFR enclosure), both bounds computed from the key's
/// own measured deviation (QueryBound::key_deviation of that key alone). Returns the largest
/// |Ŝ − C·S(n)| / (R_i + A(n)) seen and, in `k0`, the largest measured K_d over blocks and keys.
double check_measured_bounds(const proofs::FixedOffsetHead& head,
                             const std::vector<std::uint64_t>& queries,
                             const std::vector<std::uint64_t>& keys, double& k0) {
  const proofs::detail::QueryBound bound(head, proofs::realised_score_error_bound(head));
  REQUIRE(bound.measured());
  REQUIRE(bound.has_split());
  const std::size_t B = bound.blocks();
  std::map<std::uint64_t, std::vector<double>> qs, ks, devs;
  for (const std::uint64_t p : queries) realise_reference(head, p, &qs[p], ks[p]);
  for (const std::uint64_t p : keys) {
    if (!ks.count(p)) realise_reference(head, p, nullptr, ks[p]);
  }
  k0 = 0;
  for (auto& [p, k] : ks) {
    devs[p].assign(B + 1, 0.0);
    bound.key_deviation(p, k.data(), devs[p].data());
    for (std::size_t d = 0; d < B; ++d) k0 = std::max(k0, devs[p][d]);
  }
  numeric::Mpfr lo(200), hi(200), c(200), d(200), diff(200);
  mpfr_set_q(c, head.C_exact.get_mpq_t(), MPFR_RNDN);  // exact: C is in F
  const auto k = static_cast<std::int64_t>(head.k);
  double worst = 0;
  for (const std::uint64_t i : queries) {
    const std::vector<double>& q = qs[i];
    std::vector<numeric::Value> qv;
    for (const double x : q) qv.push_back(numeric::Value::from_double_exact(x));
    for (const std::uint64_t j : keys) {
      const double* kd = devs[j].data();
      const double err = bound.error(i, q.data(), kd);
      const std::int64_t n = static_cast<std::int64_t>(i) - k - static_cast<std::int64_t>(j);
      const double split = bound.split_error(i, q.data(), kd) +
                           bound.offset_error(static_cast<std::uint64_t>(n < 0 ? -n : n));
      std::vector<numeric::Value> kv;
      for (const double x : ks[j]) kv.push_back(numeric::Value::from_double_exact(x));
      const auto s = attention::head_score(head.head, qv, kv, head.policy);
      REQUIRE(s.is_finite());
      head.ideal.enclose(n, lo, hi);
      mpfr_mul(hi, hi, c, MPFR_RNDU);
      mpfr_mul(lo, lo, c, MPFR_RNDD);
      s.to_mpfr(d);
      mpfr_sub(diff, d, hi, MPFR_RNDD);
      const double below = mpfr_get_d(diff, MPFR_RNDD);  // ≥ −bound required
      mpfr_sub(diff, d, lo, MPFR_RNDU);
      const double above = mpfr_get_d(diff, MPFR_RNDU);  // ≤ bound required
      CAPTURE(i, j, err, split, below, above);
      REQUIRE(below >= -err);
      REQUIRE(above <= err);
      REQUIRE(below >= -split);
      REQUIRE(above <= split);
      worst = std::max(worst, std::max(-below, above) / split);
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("hf: candidate algorithm = quadratic scan in every field on real heads",
          "[proofs][fast_range][fast_range_pipelines]") {
  using attention::Summation;
  struct Case {
    const char* schedule;
    Format F;
    long C;
    std::uint64_t k, L;
    Rounding r = Rounding::nearest_even;
    Summation sum = Summation::sequential;
  };
  // bf16: the failures of docs/tables/horizon_models.md (queries 27, 34, 241 with gap −128,
  // 16, 560); fp16 and fp32: no failure within L; p = 6, 8: failures at queries 11 and 34,
  // p = 9: none up to 800 (the C = auto of each); YaRN's attention
  // factor (|k̂_c| up to 1.14) in bf16 and fp16; pairwise and wide-accumulator sums; a directed
  // rounding (hf's rotation then differs from THEORY §2.1's: the engine's path)
  const std::vector<Case> cases = {
      {"llama2-7b", Format::bf16(), 8192, 1, 100},
      {"llama2-7b", Format::bf16(), 8192, 8, 100},
      {"qwen2.5-7b-yarn", Format::bf16(), 16384, 1, 300},
      {"gemma-7b", Format::bf16(), 16384, 1, 60},
      {"llama3-8b", Format::fp16(), 1024, 1, 300},
      {"qwen2.5-7b-yarn", Format::fp16(), 1024, 8, 250},
      {"llama2-7b", Format::fp32(), 4096, 1, 300},
      {"gemma-7b", Format::fp32(), 4096, 8, 150},
      {"llama3-8b", Format::bf16(), 32768, 1, 1000},
      {"llama2-7b", Format::ieee(6, 5), 1024, 1, 200},
      {"mistral-7b", Format::ieee(8, 8), 8192, 8, 200},
      {"llama3-8b", Format::ieee(9, 8), 16384, 1, 800},
      {"llama3-8b", Format::bf16(), 32768, 1, 300, Rounding::nearest_even, Summation::pairwise},
      {"llama2-7b", Format::fp16(), 1024, 1, 200, Rounding::nearest_even,
       Summation::wide_accumulator},
      {"llama2-7b", Format::fp16(), 1024, 1, 80, Rounding::toward_zero},
      // four blocks, C = 2^28 in fp32 (C = auto's at 10^6): the keys' drift by 3000 (≈
      // 3000·θ·2^-24) is far above the first positions', so a query bounded by too few keys'
      // deviations would exclude wrongly
      {"conventional:base=10000,dim=8", Format::fp32(), 268435456, 1, 3000},
      // two fast blocks at p = 12: failures against key 1, far from the target (queries 2886
      // and 624), where the exclusion of distant offsets decides
      {"conventional:base=3,dim=4", Format::ieee(12, 8), 524288, 1, 3000},
      {"conventional:base=50,dim=4", Format::ieee(12, 8), 262144, 1, 1000},
  };
  for (const Case& c : cases) {
    CAPTURE(c.schedule, c.F.name, c.C, c.k, static_cast<int>(c.sum), static_cast<int>(c.r));
    auto spec = spec_of(c.schedule, c.C, c.k, c.F, "hf", c.r, c.sum);
    const auto head = proofs::make_fixed_offset_head(spec);
    REQUIRE_FALSE(proofs::fast_range_refusal(head).has_value());
    const auto scan = proofs::certified_range(head, up_to(c.L));
    const auto fast = proofs::certified_range_fast(head, up_to(c.L));
    check_same(scan, fast);
    // two threads and a small key store (older keys realised again): the same result and work
    auto o = up_to(c.L);
    o.threads = 2;
    o.key_store_bytes = 1 << 16;
    const auto two = proofs::certified_range_fast(head, o);
    check_same(scan, two);
    CHECK(two.scores_evaluated == fast.scores_evaluated);
    CHECK(two.offsets_scored == fast.offsets_scored);
  }
}

TEST_CASE("hf: the rows of docs/tables/horizon_models.md in bf16 fail where the scan says",
          "[proofs][fast_range][fast_range_pipelines]") {
  // The scan's witnesses, as published (generated by the scan before the candidate algorithm
  // covered pipelines): llama2-7b k = 1 fails at query 27 against key 25 with gap 0; llama3-8b
  // k = 8 at query 379 against key 372 (offset −1), gap 0
  const auto a = proofs::certified_range_fast(
      proofs::make_fixed_offset_head(spec_of("llama2-7b", 8192, 1, Format::bf16(), "hf")),
      up_to(100000));
  CHECK(a.n_max == 25);
  CHECK(a.fail_query == 27u);
  CHECK(a.fail_competitor == 25u);
  CHECK(a.gap == 0);
  const auto b = proofs::certified_range_fast(
      proofs::make_fixed_offset_head(spec_of("llama3-8b", 32768, 8, Format::bf16(), "hf")),
      up_to(100000));
  CHECK(b.n_max == 377);
  CHECK(b.fail_query == 379u);
  CHECK(b.fail_competitor == 372u);
  CHECK(b.fail_offset == -1);
  CHECK(b.gap == 0);
}

TEST_CASE("hf: measured key deviations bound every realised score (exact enclosures)",
          "[proofs][fast_range][fast_range_pipelines][split_bound]") {
  // Queries 2..14 and L−4..L, keys 0..14 and L−14..L with L = 10^6: in fp32 the angle
  // j·inv_freq errs by up to ulp(j·inv_freq_d)/2 plus j times inv_freq_d's own error, so the
  // measured K_d are far above the rounded-once K = ε + √2·η = 2^-24 that r1 may use; in bf16 and
  // fp16 the table's rounding dominates; YaRN's table entries reach its attention factor 1.139
  struct Case {
    const char* schedule;
    Format F;
    long C;
  };
  const std::uint64_t L = 1000000;
  for (const Case& c :
       {Case{"llama2-7b", Format::fp32(), 4096}, Case{"llama2-7b", Format::fp16(), 1024},
        Case{"llama2-7b", Format::bf16(), 8192}, Case{"qwen2.5-7b-yarn", Format::fp32(), 4096},
        Case{"qwen2.5-7b-yarn", Format::bf16(), 16384},
        Case{"gemma-7b", Format::ieee(7, 8), 2048}}) {
    CAPTURE(c.schedule, c.F.name);
    const auto head = proofs::make_fixed_offset_head(spec_of(c.schedule, c.C, 1, c.F, "hf"));
    std::vector<std::uint64_t> queries, keys;
    for (std::uint64_t p = 0; p <= 14; ++p) {
      keys.push_back(p);
      if (p >= 2) queries.push_back(p);
    }
    for (std::uint64_t p = L - 14; p <= L; ++p) keys.push_back(p);
    for (std::uint64_t p = L - 4; p <= L; ++p) queries.push_back(p);
    double k0 = 0;
    const double worst = check_measured_bounds(head, queries, keys, k0);
    CHECK(worst <= 1);
    if (c.F == Format::fp32() && std::string(c.schedule) == "llama2-7b") {
      // the fp32 angle's error at j ~ 10^6: max K_d ≫ 2^-24 (and below 2^-4)
      CHECK(k0 > 1e-3);
      CHECK(k0 < 0.07);
    }
    // YaRN: the table is the attention factor 1.1386 times (cos, sin)
    if (std::string(c.schedule) == "qwen2.5-7b-yarn") CHECK(k0 > 0.13);
  }
}

TEST_CASE("hf: domain, quick limit and estimate of the candidate algorithm",
          "[proofs][fast_range][fast_range_pipelines]") {
  const auto hf =
      proofs::make_fixed_offset_head(spec_of("llama2-7b", 1024, 1, Format::fp16(), "hf"));
  CHECK_FALSE(proofs::fast_range_refusal(hf).has_value());
  CHECK_FALSE(proofs::realised_score_error_bound(hf).has_value());
  // every offset is a candidate, so the quick limit is the scan's
  CHECK(proofs::fast_range_length_limit(hf) == proofs::scan_length_limit(hf));
  const auto e = proofs::estimate_certified_range_fast(hf, 100000, 1);
  CHECK(e.seconds > 0);
  CHECK(e.seconds < 3600);
  CHECK(e.candidate_density == 1);
  CHECK(e.scored_density < 0.01);
  // llama.cpp keeps its table and rotation in fp32: outside the overflow analysis' domain
  const auto cpu =
      proofs::make_fixed_offset_head(spec_of("llama2-7b", 1024, 1, Format::fp16(), "llamacpp-cpu"));
  const auto why = proofs::fast_range_refusal(cpu);
  REQUIRE(why.has_value());
  CHECK(why->find("table = rotation = output = A") != std::string::npos);
  // a C whose intermediates may overflow fp16 is refused (the scan then runs)
  const auto big =
      proofs::make_fixed_offset_head(spec_of("llama2-7b", 60000, 1, Format::fp16(), "hf"));
  CHECK(proofs::fast_range_refusal(big).has_value());
}

TEST_CASE("hf: a query's key bounds cover every earlier key (KeyDeviations against brute force)",
          "[proofs][fast_range][fast_range_pipelines]") {
  // The prefix maxima certified_range_fast hands each query: for every query i ≤ 3000, the
  // bounds are at least key_deviation of every key j < i (running maximum by brute force),
  // whatever the chunking (chunks of 64, 128, … as certified_range_fast forms them, and one
  // chunk); in fp32 the deviations grow with j, so a bound missing the latest keys fails
  const auto head =
      proofs::make_fixed_offset_head(spec_of("llama2-7b", 4096, 1, Format::fp32(), "hf"));
  const proofs::detail::QueryBound bound(head, std::nullopt);
  const proofs::detail::RealisedHead realised(head);
  const std::size_t D = realised.dim();
  const std::uint64_t P = 3001;
  const auto all = realised.keys(0, P);
  for (const bool one_chunk : {false, true}) {
    proofs::detail::KeyDeviations kd(bound);
    const std::size_t W = kd.width();
    REQUIRE(W == 65);
    for (std::uint64_t a = 0, chunk = 64; a < P; a += chunk, chunk *= 2) {
      if (one_chunk) chunk = P;
      const std::uint64_t b = std::min(P, a + chunk);
      kd.append(a, kd.segments(a, b - a, &all.keys[D * a], D));
    }
    std::vector<double> running(W, 0.0), dev(W);
    bool grew = false;
    for (std::uint64_t i = 1; i < P; ++i) {
      bound.key_deviation(i - 1, &all.keys[D * (i - 1)], dev.data());
      for (std::size_t x = 0; x < W; ++x) {
        grew = grew || dev[x] > running[x];
        running[x] = std::max(running[x], dev[x]);
      }
      const double* got = kd.for_query(i);
      for (std::size_t x = 0; x < W; ++x) {
        CAPTURE(i, x);
        REQUIRE(got[x] >= running[x]);
      }
    }
    CHECK(grew);
    // the key deviations of fp32's angle grow by orders of magnitude from j = 64 to 3000
    CHECK(kd.for_query(3000)[10] > 10 * kd.for_query(64)[10]);
    CHECK_THROWS_AS(kd.for_query(P + 64), std::logic_error);
  }
}
