// The realisation fast path (numeric/trig/fast_trig.hpp, and its batched kernels
// attention/detail/fast_trig_batch.hpp) against the exact path it replaces (the second
// implementation: BlockEvaluator with set_fast_path(false), i.e. numeric::CosSinRounder's
// double-double step and MPFR), bit for bit and flag for flag — both the batched evaluation
// (the default: positions in lanes) and the position-by-position one (set_batch(false)):
// every preset × realisation × preset format on sampled positions below 2^16 ([realisation]),
// the full 2^16 positions ([bulk]), random positions up to 2^30 (RapidCheck), a deliberately
// wrong error bound that must be caught on both, and the hard cases where the rounding test
// falls back.
#include <rapidcheck.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "attention/detail/evaluator.hpp"
#include "attention/detail/fast_trig_batch.hpp"
#include "attention/realisations/framework_presets.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"
#include "numeric/format.hpp"
#include "numeric/trig/fast_trig.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;

namespace {

/// Result of comparing the fast and exact paths on one (schedule, realisation).
struct Comparison {
  std::uint64_t pairs = 0;             // (member, position) pairs compared per block, summed
  std::uint64_t mismatches = 0;        // pairs whose bits or flags differ (either fast evaluator)
  std::uint64_t batch_mismatches = 0;  // of those, the batched evaluator's
  std::string first;                   // the first mismatch, for the failure message
  FastPathStats stats;                 // the batched fast evaluator's counters
  FastPathStats scalar_stats;          // the position-by-position fast evaluator's counters
};

/// Compares evaluate_bits of the fast path — batched (the default) and position by position
/// (set_batch(false)) — with evaluate_bits and evaluate of the exact path (set_fast_path(false))
/// for every block_stride-th block of `s` on the position ranges [b, b + len) of `ranges`;
/// with values_too, also the batched evaluator's evaluate() (Values) against the exact bits.
Comparison compare_paths(const Schedule& s, const Realisation& r,
                         const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges,
                         bool values_too = false, std::size_t block_stride = 1) {
  Comparison c;
  const std::vector<Realisation> members{r};
  for (std::size_t b = 0; b < s.blocks.size(); b += block_stride) {
    if (s.blocks[b].axis_angles.size() > 1) continue;  // mixed-axis blocks: evaluate_mixed
    detail::BlockEvaluator fast(s, b, members, r.arithmetic_engine());
    detail::BlockEvaluator scalar(s, b, members, r.arithmetic_engine());
    scalar.set_batch(false);
    detail::BlockEvaluator exact(s, b, members, r.arithmetic_engine());
    exact.set_fast_path(false);
    for (const auto& [begin, len] : ranges) {
      std::vector<std::vector<PairBits>> fb, sb, eb;
      fast.evaluate_bits(begin, begin + len, fb);
      scalar.evaluate_bits(begin, begin + len, sb);
      exact.evaluate_bits(begin, begin + len, eb);
      std::vector<std::vector<RealisedPair>> fv;
      if (values_too) fast.evaluate(begin, begin + len, fv);
      for (std::uint64_t k = 0; k < len; ++k) {
        ++c.pairs;
        const bool batch_bad = !(fb[0][k] == eb[0][k]);
        bool bad = batch_bad || !(sb[0][k] == eb[0][k]);
        if (values_too) {
          bad = bad || fv[0][k].cos.bits_key() != eb[0][k].cos ||
                fv[0][k].sin.bits_key() != eb[0][k].sin || fv[0][k].flags != eb[0][k].flags;
        }
        if (bad) {
          if (c.mismatches == 0) {
            c.first = s.spec + " " + r.name() + " " + r.format.name + " block " +
                      std::to_string(b) + " position " + std::to_string(begin + k) +
                      (batch_bad ? " (batched)" : " (position by position)");
          }
          ++c.mismatches;
          c.batch_mismatches += batch_bad;
        }
      }
    }
    c.stats += fast.fast_path_stats();
    c.scalar_stats += scalar.fast_path_stats();
  }
  return c;
}

/// The realisations of the sweep applicable to `s` (check_applicable), in format f.
std::vector<Realisation> realisations_for(const Schedule& s, const Format& f) {
  std::vector<std::string> specs = {
      "r1", "r3", "hf", "llamacpp-cpu", "llamacpp-cuda", "resonance-table"};
  for (const auto name : framework_preset_names()) specs.emplace_back(name);
  std::vector<Realisation> out;
  for (const auto& spec : specs) {
    Realisation r = parse_realisation(spec, f);
    try {
      check_applicable(s, r);
    } catch (const InvalidArgument&) {
      continue;
    }
    out.push_back(r);
  }
  return out;
}

/// Every preset format (fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2): the ones outside the
/// fast domain (fp64: p > 25; fp8e4m3: saturating) check that the exact path is kept.
std::vector<Format> formats() {
  std::vector<Format> out;
  for (const auto& name : ropesim::numeric::preset_format_names())
    out.push_back(ropesim::numeric::parse_format(name));
  return out;
}

/// Sweeps every preset × realisation × format of `fmts` on `ranges` (every block_stride-th
/// block); REQUIREs no mismatch; returns the fast path's totals.
FastPathStats sweep(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges,
                    const std::vector<Format>& fmts, std::size_t block_stride = 1) {
  FastPathStats total;
  std::uint64_t combos = 0;
  for (const auto& name : model_preset_names()) {
    const Schedule s = preset_schedule(name);
    for (const Format& f : fmts) {
      for (const Realisation& r : realisations_for(s, f)) {
        const Comparison c = compare_paths(s, r, ranges, false, block_stride);
        INFO(c.first);
        REQUIRE(c.mismatches == 0);
        // the same verdicts position by position and in lanes
        CHECK(c.stats.fallbacks == c.scalar_stats.fallbacks);
        CHECK(c.stats.exact_cases == c.scalar_stats.exact_cases);
        CHECK(c.scalar_stats.batched == 0);
        total += c.stats;
        ++combos;
      }
    }
  }
  CHECK(combos > 0);
  return total;
}

}  // namespace

TEST_CASE("fast path: bit-identical to the exact path on every preset, sampled positions",
          "[realisation][fast-path]") {
  // 16 windows of 4 positions spread over [0, 2^16) (0 and the window ends included), every
  // preset, realisation and preset format
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (std::uint64_t w = 0; w < 16; ++w) ranges.emplace_back(w * 4093, 4);
  ranges.emplace_back(65532, 4);
  const FastPathStats st = sweep(ranges, formats());
  // the fast path was really taken (not everything left to the exact path)
  CHECK(st.evaluations > st.fallbacks + st.exact_cases);
  CHECK(st.exact_only > 0);  // fp64 / fp8e4m3 / library steps keep the exact path
  // the batched kernels did most of it (θ = 0 blocks and the like go position by position)
  CHECK(st.batched > st.evaluations / 2);
}

TEST_CASE("fast path: bit-identical to the exact path on all 2^16 positions (fp32, bf16, fp16)",
          "[realisation][fast-path][bulk]") {
  // every preset and realisation, all 2^16 positions, every 16th block (the ctest label
  // attention-bulk; the whole sweep is the [.sweep] case below)
  using ropesim::numeric::Format;
  const FastPathStats st =
      sweep({{0, 65536}}, {Format::fp32(), Format::bf16(), Format::fp16()}, 16);
  CHECK(st.evaluations > 0);
}

TEST_CASE("fast path: the whole sweep, every block and preset format on 2^16 positions",
          "[.sweep]") {
  // run by hand: test_attention "[.sweep]" (docs/TESTING.md; about an hour on one core)
  const FastPathStats st = sweep({{0, 65536}}, formats());
  CHECK(st.evaluations > 0);
}

TEST_CASE("fast path: evaluate() and evaluate_bits() agree with the exact path",
          "[realisation][fast-path]") {
  for (const char* fmt : {"fp32", "bf16", "fp16"}) {
    const Schedule s = preset_schedule("llama2-7b");
    for (const char* spec : {"r1", "hf"}) {
      const Realisation r = parse_realisation(spec, ropesim::numeric::parse_format(fmt));
      const Comparison c = compare_paths(s, r, {{0, 300}, {1000000, 50}}, true);
      INFO(c.first);
      CHECK(c.mismatches == 0);
      CHECK(c.stats.evaluations > 0);
      CHECK(c.stats.batched == c.stats.evaluations);
    }
  }
}

TEST_CASE("fast path: the baseline (SSE2) kernels agree with the exact path as the AVX2 ones do",
          "[realisation][fast-path]") {
  // The batched kernels are compiled twice on x86-64 (detail::BatchIsa); the other tests run
  // the form the processor selects (AVX2 where it has it). Here the baseline form runs the same
  // comparisons, every preset and realisation in fp32 and bf16 on two windows.
  using ropesim::numeric::Format;
  const detail::BatchIsa before = detail::set_batch_isa(detail::BatchIsa::baseline);
  REQUIRE(detail::batch_isa() == detail::BatchIsa::baseline);
  FastPathStats st;
  try {
    st = sweep({{0, 300}, {1u << 20, 40}}, {Format::fp32(), Format::bf16()}, 8);
  } catch (...) {
    detail::set_batch_isa(before);
    throw;
  }
  detail::set_batch_isa(before);
  CHECK(st.batched > st.evaluations / 2);
  INFO("AVX2 available: " << detail::batch_avx2_available());
  CHECK(detail::batch_isa() == before);
}

TEST_CASE("fast path: random positions up to 2^30", "[realisation][fast-path]") {
  const auto presets = model_preset_names();
  const auto fmts = formats();
  const bool ok = rc::check("fast == exact at random positions", [&] {
    const auto p = *rc::gen::inRange<std::size_t>(0, presets.size());
    const Schedule s = preset_schedule(presets[p]);
    const Format f = fmts[*rc::gen::inRange<std::size_t>(0, fmts.size())];
    const auto rs = realisations_for(s, f);
    RC_PRE(!rs.empty());
    const Realisation r = rs[*rc::gen::inRange<std::size_t>(0, rs.size())];
    const std::uint64_t begin = *rc::gen::inRange<std::uint64_t>(0, std::uint64_t{1} << 30);
    const Comparison c = compare_paths(s, r, {{begin, 3}});
    RC_ASSERT(c.mismatches == 0u);
  });
  CHECK(ok);
}

TEST_CASE("fast path: a wrong error bound is caught, a correct wide one is not",
          "[realisation][fast-path]") {
  // The approximations of cos and sin are multiplied by (1 + 2^-20) (FastPathFault), in the
  // scalar functions and in the batched kernels alike. With the bound widened to cover it the
  // results stay bit-identical (more fallbacks); with the bound left as it was — a wrong bound —
  // fp32 results (ulp 2^-23 relative) differ, in the batched evaluator too: the comparison
  // detects it. This is the check that the bit-identity tests above can fail.
  auto& fault = ropesim::numeric::trig::fast_path_fault();
  const Schedule s = preset_schedule("llama2-7b");
  for (const char* spec : {"r1", "hf"}) {
    const Realisation r = parse_realisation(spec, ropesim::numeric::Format::fp32());
    fault = {0x1p-20, true};
    const Comparison covered = compare_paths(s, r, {{1, 200}});
    fault = {0x1p-20, false};
    const Comparison wrong = compare_paths(s, r, {{1, 200}});
    fault = {};
    INFO(spec);
    CHECK(covered.mismatches == 0);
    CHECK(covered.stats.fallbacks > 0);
    CHECK(covered.stats.batched == covered.stats.evaluations);
    CHECK(wrong.mismatches > 0);
    CHECK(wrong.batch_mismatches > 0);
    CHECK(wrong.stats.batched == wrong.stats.evaluations);
  }
  const Realisation bf = parse_realisation("r1", ropesim::numeric::Format::bf16());
  fault = {0x1p-20, true};
  const Comparison covered = compare_paths(s, bf, {{1, 200}});
  fault = {};
  CHECK(covered.mismatches == 0);
  // bf16 (8 bits) still decides most roundings with a 2^-19 relative bound
  CHECK(covered.stats.fallbacks < covered.stats.evaluations / 4);
}

TEST_CASE("fast path: a hard case falls back and equals the exact path",
          "[realisation][fast-path]") {
  // Found by running the fast path over llama2-7b r1 fp32 (and hf fp32), every block, positions
  // 1..2^18 and watching fast_path_stats().fallbacks: the one undecided rounding is block 28 at
  // position 69891 (cos or sin within the bound, ~2^-49 relative, of an fp32 midpoint); hf
  // had none there. Its result must come from the exact path and equal it.
  const Schedule s = preset_schedule("llama2-7b");
  const Realisation r = parse_realisation("r1", ropesim::numeric::Format::fp32());
  const std::vector<Realisation> members{r};
  detail::BlockEvaluator fast(s, 28, members, r.arithmetic_engine());
  detail::BlockEvaluator exact(s, 28, members, r.arithmetic_engine());
  exact.set_fast_path(false);
  std::vector<std::vector<PairBits>> fb, eb;
  fast.evaluate_bits(69890, 69893, fb);
  exact.evaluate_bits(69890, 69893, eb);
  CHECK(fast.fast_path_stats().evaluations == 3);
  CHECK(fast.fast_path_stats().batched == 3);  // found in lanes, recomputed by the exact path
  CHECK(fast.fast_path_stats().fallbacks == 1);
  CHECK(fb == eb);
  const auto before = realisation_fast_path_counters();
  fast.evaluate_bits(69891, 69892, fb);
  const auto after = realisation_fast_path_counters();
  CHECK(after.fallbacks - before.fallbacks >= 1);  // the global counters see it too
  CHECK(fb[0][0] == eb[0][1]);
}
