// The filtered scans of a cosine sum S(n) = Σ w_b·cos(θ_b·n) (proofs/range/cosine_scan.hpp; THEORY
// §6): the first n above a threshold against the exact scan (CosineSum::compare at every n),
// against answers derived by hand for rational turns (Niven's values), at near-ties where the
// filter must hand over to the exact comparison, and with a deliberately broken filter, which
// must give a wrong answer somewhere. The filter's bound itself is checked against MPFR.
#include <mpfr.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "attention/schedules/schedule.hpp"
#include "numeric/format.hpp"
#include "numeric/mpfr_util.hpp"
#include "proofs/common/exact_trig.hpp"
#include "proofs/range/cosine_scan.hpp"
#include "proofs/range/records.hpp"

using namespace ropesim;
using proofs::CosineScanOptions;
using proofs::CosineScanStats;
using proofs::CosineSum;

namespace {

/// S over the blocks of a schedule spec, with the given weights (all 1 when empty).
CosineSum sum_of(const std::string& spec, std::vector<mpq_class> weights = {}) {
  const auto schedule = attention::parse_schedule(spec);
  CosineSum s;
  for (const auto& b : schedule.blocks) s.blocks.emplace_back(b);
  if (weights.empty()) weights.assign(s.blocks.size(), mpq_class(1));
  s.weights = weights;
  return s;
}

/// first_reaching with stats, on `threads` threads.
std::optional<std::int64_t> fast(const CosineSum& s, const mpq_class& t, bool inclusive,
                                 std::int64_t limit, CosineScanStats* stats = nullptr,
                                 unsigned threads = 1) {
  CosineScanOptions o;
  o.threads = threads;
  o.stats = stats;
  return proofs::first_reaching(s, t, inclusive, limit, o);
}

}  // namespace

TEST_CASE("cosine scan: rational turns whose sum returns to S(0) at a known n",
          "[proofs][cosine_scan]") {
  // Turns 1/3 and 1/5: S(n) = cos(2πn/3) + cos(2πn/5) = 2 exactly when 15 | n. Elsewhere
  // S ≤ 1 + cos(2π/5) = 1.309… (3 | n) or 1 + cos(2π/3) = 1/2 (5 | n) or less.
  const CosineSum s = sum_of("periodic:1/3,1/5");
  CosineScanStats stats;
  CHECK(fast(s, mpq_class(1999, 1000), false, 100, &stats) == 15);
  CHECK(stats.filtered == 15);
  CHECK(stats.exact == 0);  // 2 − 1.999 is far above the filter's bound
  // S(6) = 1 + cos(2π/5) = 1.309… is the first above 1.3 (S(1..5) = −0.19, −1.31, 0.19,
  // −0.19, 0.5).
  CHECK(fast(s, mpq_class(13, 10), false, 100) == 6);
  CHECK(proofs::first_reaching_exact(s, mpq_class(13, 10), false, 100) == 6);
  CHECK(fast(s, mpq_class(2), true, 100) == 15);  // S(15) = 2 = t: the exact path says equal
  CHECK_FALSE(fast(s, mpq_class(2), false, 1000).has_value());         // never above 2
  CHECK_FALSE(fast(s, mpq_class(1999, 1000), false, 14).has_value());  // the limit

  // The columns: C = 1000, f_large = 1 → threshold 2 − 1/1000, first passed at 15: L = 14.
  const auto b = proofs::delta_bound(s, 1000, 1, 100);
  CHECK(b.value == 14);
  CHECK_FALSE(b.at_limit);
  // bf16 nearest-even: round(S/2) = 1 iff S/2 ≥ 1 − 2^-9, only where S = 2.
  const auto tie =
      proofs::tie_distance(s, numeric::Format::bf16(), numeric::Rounding::nearest_even, 100);
  REQUIRE(tie);
  CHECK(tie->value == 15);
  CHECK_FALSE(tie->at_limit);
  const auto none =
      proofs::tie_distance(s, numeric::Format::bf16(), numeric::Rounding::nearest_even, 14);
  REQUIRE(none);
  CHECK(none->at_limit);
  CHECK(none->value == 14);
}

TEST_CASE("cosine scan: near-ties are handed to the exact comparison", "[proofs][cosine_scan]") {
  // Turns 1/6 and 1/4: S(n) = cos(πn/3) + cos(πn/2), all Niven values: S(n) = 1/2 exactly at
  // n = 1, 4, 5, 7, 8, 11; S(2) = −3/2, S(3) = −1, S(6) = 0, S(9) = −1, S(10) = −3/2, S(12) = 2.
  const CosineSum s = sum_of("periodic:1/6,1/4");
  CosineScanStats stats;
  CHECK(fast(s, mpq_class(1, 2), false, 100, &stats) == 12);
  CHECK(stats.filtered == 12);
  CHECK(stats.exact == 6);  // the six ties, and only they
  CHECK(fast(s, mpq_class(1, 2), true, 100, &stats) == 1);
  CHECK(stats.exact == 1);
  // The δ column: C = 2, f_large = 3 → threshold S(0) − 3/2 = 1/2, first exceeded at 12.
  CHECK(proofs::delta_bound(s, 2, 3, 100).value == 11);

  // Weights 255 and 1 on turns 1/5 and 1/6: S(5)/S(0) = (255 + 1/2)/256 = 1 − 2^-9 exactly, the
  // bf16 rounds-to-one threshold under nearest-even (a tie, rounding to the even 1); again at
  // n = 25; S(30) = S(0). Below elsewhere: 255·cos(2π/5) ≤ 79, and at n = 10, 20 (15) the
  // second term is −1/2 (−1).
  const CosineSum t = sum_of("periodic:1/5,1/6", {255, 1});
  using numeric::Format;
  using numeric::Rounding;
  // (format, rounding, tie distance, whether a threshold sits exactly on some S(n) ≤ it)
  const std::vector<std::tuple<Format, Rounding, std::int64_t, bool>> expected = {
      {Format::bf16(), Rounding::nearest_even, 5, true},    // t = 1 − 2^-9 = S(5)/S(0)
      {Format::bf16(), Rounding::upward, 5, false},         // S/W > prev(1) = 1 − 2^-8
      {Format::bf16(), Rounding::toward_zero, 30, true},    // t = 1 = S(30)/S(0)
      {Format::fp16(), Rounding::nearest_even, 30, false},  // t = 1 − 2^-12
  };
  for (const auto& [format, rounding, n, on_threshold] : expected) {
    INFO(format.name << " " << numeric::to_string(rounding));
    CosineScanOptions o;
    o.stats = &stats;
    const auto tie = proofs::tie_distance(t, format, rounding, 1000, o);
    REQUIRE(tie);
    CHECK(tie->value == n);
    CHECK(stats.filtered == n);
    CHECK(stats.exact == (on_threshold ? 1 : 0));  // only the tie is handed over
  }
}

TEST_CASE("cosine scan: a broken filter gives wrong answers", "[proofs][cosine_scan]") {
  const CosineSum s = sum_of("periodic:1/6,1/4");
  const CosineSum t = sum_of("periodic:1/5,1/6", {255, 1});
  const mpq_class tie_t = mpq_class(511, 512) * 256;  // t·S(0) for bf16 nearest-even
  REQUIRE(proofs::first_reaching_exact(s, mpq_class(1, 2), false, 100) == 12);
  REQUIRE(proofs::first_reaching_exact(t, tie_t, true, 100) == 5);
  // The threshold moved by 10^-9, far beyond the filter's bound (about 10^-12 here): the ties
  // are decided in binary64, on the wrong side.
  CosineScanOptions down;
  down.threshold_shift = -1e-9;
  CHECK(proofs::first_reaching(s, mpq_class(1, 2), false, 100, down) == 1);
  CosineScanOptions up;
  up.threshold_shift = 1e-9;
  CHECK(proofs::first_reaching(t, tie_t, true, 100, up) == 30);
  // The bound set to 0: at an exact tie S(n) = t the binary64 value lies above t (a strict
  // search wrongly stops), below (an inclusive one wrongly goes on) or on it; on it for every
  // tie is what the four searches below would need to stay right.
  CosineScanOptions zero;
  zero.bound_scale = 0;
  int wrong = 0;
  wrong += proofs::first_reaching(s, mpq_class(1, 2), false, 100, zero) != 12;
  wrong += proofs::first_reaching(s, mpq_class(1, 2), true, 100, zero) != 1;
  wrong += proofs::first_reaching(t, tie_t, false, 100, zero) != 30;
  wrong += proofs::first_reaching(t, tie_t, true, 100, zero) != 5;
  CHECK(wrong > 0);
  // The proof's filter: right, with the ties handed over.
  CosineScanStats stats;
  CosineScanOptions proof;
  proof.stats = &stats;
  CHECK(proofs::first_reaching(t, tie_t, false, 100, proof) == 30);
  CHECK(stats.exact >= 2);  // n = 5 and 25
}

TEST_CASE("cosine scan: model presets against the exact scan", "[proofs][cosine_scan]") {
  // 64 blocks each. Thresholds: below S(1) (hit at once), the lower end of a 256-bit enclosure
  // of S(m) (S(m) exceeds it by ~2^-250, so at n = m the filter cannot decide: a near-tie on a
  // real head), and above every S(n) in the range (the whole range scanned).
  for (const std::string preset : {"llama2-7b", "llama3-8b"}) {
    INFO(preset);
    const CosineSum s = sum_of(preset);
    const mpq_class W = s.weight_sum();
    std::vector<std::pair<mpq_class, std::int64_t>> thresholds;  // (t, limit)
    thresholds.emplace_back(W / 2, 50);
    for (std::int64_t m : {37, 400}) {
      numeric::Mpfr lo(256), hi(256);
      s.enclose(m, lo, hi);
      mpq_class q;
      mpfr_get_q(q.get_mpq_t(), lo);
      thresholds.emplace_back(q, m + 10);
    }
    thresholds.emplace_back(W, 300);
    for (const auto& [threshold, limit] : thresholds) {
      for (bool inclusive : {false, true}) {
        INFO("t = " << threshold.get_d() << " inclusive " << inclusive << " limit " << limit);
        const auto exact = proofs::first_reaching_exact(s, threshold, inclusive, limit);
        CosineScanStats one, two;
        CHECK(fast(s, threshold, inclusive, limit, &one) == exact);
        CHECK(fast(s, threshold, inclusive, limit, &two, 2) == exact);
        CHECK(one.filtered == two.filtered);
        CHECK(one.exact == two.exact);
      }
    }
    // At the near-tie the filter handed over, and only there (or nowhere, if an earlier n
    // already exceeds S(400)).
    CosineScanStats stats;
    numeric::Mpfr lo(256), hi(256);
    s.enclose(400, lo, hi);
    mpq_class q;
    mpfr_get_q(q.get_mpq_t(), lo);
    const auto n = fast(s, q, false, 410, &stats);
    REQUIRE(n);
    CHECK(stats.exact == (*n == 400 ? 1 : 0));
    CHECK(stats.filtered == *n);
    // Above S(0) nothing is found, and the filter decides every n by itself.
    CHECK_FALSE(fast(s, W + 1, false, 5000, &stats).has_value());
    CHECK(stats.filtered == 5000);
    CHECK(stats.exact == 0);
  }
}

TEST_CASE("cosine scan: the filter's bound holds against MPFR and is small",
          "[proofs][cosine_scan]") {
  for (const std::string spec :
       {"llama3-8b", "periodic:1/3,2/7,5/11", "conventional:base=10000,dim=8"}) {
    INFO(spec);
    const CosineSum s = sum_of(spec);
    const proofs::CosineSumFilter filter(s);
    for (std::int64_t n0 :
         {std::int64_t{0}, std::int64_t{1}, std::int64_t{123457}, (std::int64_t{1} << 33) + 7}) {
      INFO("n0 = " << n0);
      std::vector<double> value(proofs::CosineSumFilter::kRun), bound(value.size());
      REQUIRE(filter.evaluate(n0, value.size(), value.data(), bound.data()));
      for (std::size_t k = 0; k < value.size(); k += 73) {
        numeric::Mpfr lo(128), hi(128);
        s.enclose(n0 + static_cast<std::int64_t>(k), lo, hi);
        const double err_lo = std::fabs(value[k] - mpfr_get_d(lo, MPFR_RNDN));
        const double err_hi = std::fabs(value[k] - mpfr_get_d(hi, MPFR_RNDN));
        CHECK(std::max(err_lo, err_hi) <= bound[k] * (1 + 1e-6) + 1e-30);
        // ≈ 7·10^-13 + k·2.8·10^-14 for 64 unit weights (cosine_scan.cpp: K0 + k·K1)
        CHECK(bound[k] < 4e-11 * static_cast<double>(s.blocks.size()) / 64);
      }
    }
  }
}

TEST_CASE("cosine scan: record distances of several blocks", "[proofs][cosine_scan]") {
  // Turns 1/3, 1/5 (see above): S(1) = −0.19, S(3) = 0.19, S(5) = 1/2, S(6) = 1.31,
  // S(15) = 2; S(9) = S(21) = S(24) = S(6) are not strict records.
  std::vector<std::int64_t> ns;
  for (const auto& r : proofs::record_distances(sum_of("periodic:1/3,1/5"), 200)) ns.push_back(r.n);
  CHECK(ns == std::vector<std::int64_t>{1, 3, 5, 6, 15});
  // llama2-7b against records found by exact comparisons (MPFR enclosures at 256 bits).
  const CosineSum s = sum_of("llama2-7b");
  std::vector<std::int64_t> expected = {1};
  numeric::Mpfr best_lo(256), best_hi(256), lo(256), hi(256);
  s.enclose(1, best_lo, best_hi);
  for (std::int64_t n = 2; n <= 1000; ++n) {
    s.enclose(n, lo, hi);
    REQUIRE((mpfr_cmp(lo, best_hi) > 0 || mpfr_cmp(hi, best_lo) < 0));  // decided at 256 bits
    if (mpfr_cmp(lo, best_hi) > 0) {
      expected.push_back(n);
      mpfr_set(best_lo, lo, MPFR_RNDN);
      mpfr_set(best_hi, hi, MPFR_RNDN);
    }
  }
  ns.clear();
  for (const auto& r : proofs::record_distances(s, 1000)) ns.push_back(r.n);
  CHECK(ns == expected);
}

TEST_CASE("cosine scan: a first hit deep in the range, the same on one and two threads",
          "[proofs][cosine_scan]") {
  // Turns 1/1009 and 1/2003 (primes) and 62 blocks of turn 1 (cos = 1 at every n, work enough
  // for the threads to overlap): S(n) = 64 = S(0) exactly when 1009·2003 = 2021027 divides n
  // (Chinese remainder theorem); elsewhere S(n) ≤ 63 + cos(2π/2003) = 64 − 4.9·10^-6, far
  // outside the filter's bound, so only the hit is handed to the exact comparison. The limit
  // holds two hits and about 4900 runs, spread over 128 tasks on two threads.
  std::string spec = "periodic:1/1009,1/2003";
  for (int b = 0; b < 62; ++b) spec += ",1/1";
  const CosineSum s = sum_of(spec);
  const mpq_class W = s.weight_sum();
  REQUIRE(W == 64);
  for (unsigned threads : {1u, 2u}) {
    INFO(threads << " threads");
    CosineScanStats stats;
    CHECK(fast(s, W, true, 5'000'000, &stats, threads) == 2021027);
    CHECK(stats.filtered == 2021027);
    CHECK(stats.exact == 1);
    CHECK_FALSE(fast(s, W, true, 2021026, &stats, threads).has_value());
    CHECK(stats.filtered == 2021026);
    CHECK(stats.exact == 0);
  }
}
