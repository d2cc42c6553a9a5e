// The lanes of the batched fast path (attention/detail/fast_trig_batch.hpp) against the scalar
// functions they replace (fast_trig.hpp, numeric::Binary64Rounding — the second
// implementation), bit for bit: the branch-free rounding into F on edge cases (±0, subnormal
// doubles, F's subnormals, ties, the overflow threshold, ±inf) and random doubles; the kernels'
// cos/sin and verdicts against cos_sin_turns + round_decided lane by lane. The end-to-end
// comparison with the exact path is test_realisation_fast_path.cpp.
#include <rapidcheck.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attention/detail/evaluator.hpp"
#include "attention/detail/fast_trig_batch.hpp"
#include "attention/detail/format_ops.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "numeric/binary64_rounding.hpp"
#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/trig/fast_trig.hpp"

using namespace ropesim::attention::detail;
using ropesim::numeric::Binary64Rounding;
using ropesim::numeric::Format;
using ropesim::numeric::Rounding;

namespace {

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

/// The formats with a batched rounding: every IEEE-style preset and two custom ones.
std::vector<Format> batch_formats() {
  return {Format::fp32(),
          Format::bf16(),
          Format::fp16(),
          Format::tf32(),
          Format::fp8e5m2(),
          Format::custom(25, -400, 400),
          Format::custom(51, -1022, 1020)};
}

/// Doubles that probe a rounding into F (p, emin, emax): zero, subnormal doubles, F's
/// subnormal range and its smallest normal, ties and their neighbours at several binades, the
/// largest finite element, the overflow threshold max + ulp/2 and beyond, ±inf, both signs.
std::vector<double> edge_cases(const Format& f) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {0.0, 0x1p-1074, 0x1p-1030, 0x1p-1022, inf, 1.0, 0.5, 3.0};
  const int p = f.precision;
  for (int e : {f.emin - p - 1, f.emin - p, f.emin - 1, f.emin, 0, -1, 7, f.emax}) {
    const double b = std::ldexp(1.0, e);
    const double tie = b + std::ldexp(1.0, e - p);  // halfway between b and its successor
    for (double x : {b, tie, std::nextafter(tie, 0.0), std::nextafter(tie, inf), 3 * tie}) {
      xs.push_back(x);
    }
  }
  const double max = std::ldexp(2.0 - std::ldexp(1.0, 1 - p), f.emax);
  const double threshold = max + std::ldexp(1.0, f.emax - p);
  for (double x : {max, threshold, std::nextafter(threshold, 0.0), std::nextafter(threshold, inf),
                   std::ldexp(1.0, f.emax + 1), std::ldexp(1.0, f.emax + 40), 0x1p1023}) {
    xs.push_back(x);
  }
  const std::size_t n = xs.size();
  for (std::size_t k = 0; k < n; ++k) xs.push_back(-xs[k]);
  return xs;
}

}  // namespace

TEST_CASE("batched rounding: BatchRounding equals Binary64Rounding on edge cases and at random",
          "[realisation][fast-path]") {
  const auto& engine = ropesim::numeric::mpfr_engine();
  for (const Format& f : batch_formats()) {
    INFO(f.name);
    const FormatOps ops(f, Rounding::nearest_even, engine);
    const Binary64Rounding scalar(f, Rounding::nearest_even);
    const auto batch = BatchRounding::of(&ops);
    REQUIRE(batch.has_value());
    CHECK_FALSE(batch->identity);
    for (double x : edge_cases(f)) {
      INFO(x);
      CHECK(bits(batch->round(x)) == bits(scalar.round(x)));
    }
    const bool ok = rc::check("batched round == scalar round", [&] {
      const auto u = *rc::gen::arbitrary<std::uint64_t>();
      const double x = std::bit_cast<double>(u);
      RC_PRE(std::isfinite(x));
      RC_ASSERT(bits(batch->round(x)) == bits(scalar.round(x)));
    });
    CHECK(ok);
  }
  // binary64 and a missing step are the identity; saturating and directed roundings have no
  // batched form (their groups keep the scalar path)
  const FormatOps fp64(Format::fp64(), Rounding::nearest_even, engine);
  CHECK(BatchRounding::of(&fp64)->identity);
  CHECK(BatchRounding::of(nullptr)->identity);
  const FormatOps e4m3(Format::fp8e4m3(), Rounding::nearest_even, engine);
  CHECK_FALSE(BatchRounding::of(&e4m3).has_value());
  const FormatOps up(Format::fp32(), Rounding::upward, engine);
  CHECK_FALSE(BatchRounding::of(&up).has_value());
}

TEST_CASE(
    "batched kernel: r1_batch equals ropesim::numeric::trig::cos_sin_turns and "
    "ropesim::numeric::trig::round_decided "
    "lane by lane",
    "[realisation][fast-path]") {
  // θ = 10000^(-2·5/128) rad (llama2-7b's block 5) as τ = θ/2π, positions 1 .. 1000 and a run
  // near 2^40; targets fp32 and bf16
  const auto& engine = ropesim::numeric::mpfr_engine();
  const FormatOps fp32(Format::fp32(), Rounding::nearest_even, engine);
  const FormatOps bf16(Format::bf16(), Rounding::nearest_even, engine);
  R1Kernel k;
  const double theta = std::pow(10000.0, -10.0 / 128.0);
  k.tau = {theta / (2 * M_PI), 0.0, 0x1p-80, true};  // an exact τ for this test: hi, lo, err
  k.targets = {*BatchRounding::of(&fp32), *BatchRounding::of(&bf16)};
  const Binary64Rounding* scalar[2] = {&fp32.real().binary64(), &bf16.real().binary64()};
  std::uint64_t compared = 0, decided = 0;
  for (std::uint64_t begin : {std::uint64_t{1}, std::uint64_t{1} << 40}) {
    for (std::uint64_t chunk = 0; chunk < 1000; chunk += kBatch) {
      std::vector<double> x(kBatch), cos(2 * kBatch), sin(2 * kBatch);
      std::vector<std::uint8_t> ok(kBatch);
      for (std::size_t j = 0; j < kBatch; ++j) x[j] = static_cast<double>(begin + chunk + j);
      r1_batch(k, x.data(), kBatch, cos.data(), sin.data(), ok.data());
      // the other compiled form (baseline / AVX2) gives the same bits and verdicts
      const BatchIsa isa = batch_isa();
      set_batch_isa(isa == BatchIsa::avx2 ? BatchIsa::baseline : BatchIsa::avx2);
      std::vector<double> cos2(2 * kBatch), sin2(2 * kBatch);
      std::vector<std::uint8_t> ok2(kBatch);
      r1_batch(k, x.data(), kBatch, cos2.data(), sin2.data(), ok2.data());
      set_batch_isa(isa);
      CHECK(ok2 == ok);
      for (std::size_t j = 0; j < 2 * kBatch; ++j) {
        if (ok[j % kBatch] == 0) continue;
        CHECK(bits(cos2[j]) == bits(cos[j]));
        CHECK(bits(sin2[j]) == bits(sin[j]));
      }
      for (std::size_t j = 0; j < kBatch; ++j) {
        double fh = 0, fl = 0, ef = 0;
        bool want = ropesim::numeric::trig::turns_of_product(k.tau, begin + chunk + j, fh, fl, ef);
        ropesim::numeric::trig::Approx c, s;
        want = want && ropesim::numeric::trig::cos_sin_turns(fh, fl, ef, c, s);
        double rc[2] = {}, rs[2] = {};
        for (int t = 0; t < 2; ++t) {
          want = want && ropesim::numeric::trig::round_decided(*scalar[t], c, rc[t]) &&
                 ropesim::numeric::trig::round_decided(*scalar[t], s, rs[t]);
        }
        ++compared;
        REQUIRE((ok[j] != 0) == want);
        if (!want) continue;
        ++decided;
        for (int t = 0; t < 2; ++t) {
          CHECK(bits(cos[t * kBatch + j]) == bits(rc[t]));
          CHECK(bits(sin[t * kBatch + j]) == bits(rs[t]));
        }
      }
    }
  }
  CHECK(compared == 2 * 1024);
  CHECK(decided > compared / 2);
}

TEST_CASE(
    "batched evaluator: several members and groups share batches, each equal to the exact path",
    "[realisation][fast-path]") {
  // One evaluator for r1 in bf16, fp16 and fp32 (one r1 group, three slots of the batch), hf in
  // bf16 and fp32 (one pipeline group, two table slots) and r2 in bf16 (exact path only):
  // every member's bits against its own exact-path evaluator, over a run that is not a
  // multiple of the batch (3 batches and a tail) and starts away from 0.
  using namespace ropesim::attention;
  const Schedule s = preset_schedule("llama2-7b");
  std::vector<Realisation> members;
  for (const char* spec : {"r1", "hf", "r2"}) {
    for (const Format& f : {Format::bf16(), Format::fp16(), Format::fp32()}) {
      if (std::string(spec) == "r2" && f != Format::bf16()) continue;
      if (std::string(spec) == "hf" && f == Format::fp16()) continue;
      members.push_back(parse_realisation(spec, f));
    }
  }
  const std::uint64_t begin = 1000, end = begin + 3 * kBatch + 37;
  for (std::size_t b : {std::size_t{0}, std::size_t{17}, std::size_t{63}}) {
    BlockEvaluator shared(s, b, members, members.front().arithmetic_engine());
    std::vector<std::vector<PairBits>> got;
    shared.evaluate_bits(begin, end, got);
    REQUIRE(got.size() == members.size());
    for (std::size_t m = 0; m < members.size(); ++m) {
      const std::vector<Realisation> one{members[m]};
      BlockEvaluator exact(s, b, one, members[m].arithmetic_engine());
      exact.set_fast_path(false);
      std::vector<std::vector<PairBits>> want;
      exact.evaluate_bits(begin, end, want);
      INFO("block " << b << " " << members[m].name() << " " << members[m].format.name);
      CHECK(got[m] == want[0]);
    }
    // r1 (3 slots) and hf (2 slots) in lanes; r2 by the exact path alone
    CHECK(shared.fast_path_stats().batched == 2 * (end - begin));
    CHECK(shared.fast_path_stats().exact_only == end - begin);
  }
}
