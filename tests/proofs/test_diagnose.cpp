// proofs/reports/diagnose.hpp: the pieces the report is made of, against values written by hand.
// The report's numbers themselves are checked against compare, rotations, horizon and table bounds
// in tests/cli/test_diagnose.cpp.
#include <catch2/catch.hpp>
#include <set>

#include "attention/realisations/framework_presets.hpp"
#include "attention/realisations/realisation.hpp"
#include "core/error.hpp"
#include "numeric/format.hpp"
#include "proofs/reports/diagnose.hpp"

using namespace ropesim;

// diagnose_work against measured reports (llama3.1-8b, bf16, --jobs 2, CPU = user + system of
// /usr/bin/time, docs/PERFORMANCE.md "diagnose's estimate"): each estimate within a factor 2
// of the run. The README's report (131072 positions, hf,vllm,flash-attn: 59 s of CPU at load
// 2-6, 64-68 s on the quiet machine, 71.7 s at load 8-10) was refused at about 868 s, beyond the
// 600 s budget.
TEST_CASE("diagnose_work: within 2x of measured reports; the README's report is not refused",
          "[proofs][diagnose][budgets]") {
  const auto s = attention::parse_schedule("llama3.1-8b");
  auto seconds = [&](std::uint64_t context, std::size_t frameworks) {
    const WorkEstimate e = proofs::diagnose_work(s, context, frameworks);
    return e.units / e.units_per_second;
  };
  struct Measured {
    std::uint64_t context;
    std::size_t frameworks;
    double low, high;  // the CPU seconds measured (several runs: their range)
  };
  for (const Measured& m : {Measured{131072, 3, 59.0, 71.7}, Measured{131072, 1, 45.4, 45.4},
                            Measured{16384, 3, 15.8, 15.8}, Measured{16384, 1, 8.7, 8.7}}) {
    INFO(m.context << " positions, " << m.frameworks << " framework(s)");
    CHECK(seconds(m.context, m.frameworks) >= m.high / 2);
    CHECK(seconds(m.context, m.frameworks) <= m.low * 2);
  }
  CHECK(seconds(131072, 3) <= Budget{}.seconds);
  // 2^31 positions (kMaxCensusPositions) stay refused: 16384 times the 131072 report's entries
  CHECK(seconds(std::uint64_t{1} << 31, 1) > 100 * Budget{}.seconds);
  CHECK(proofs::diagnose_work(s, 131072, 3).bytes <= Budget{}.bytes);
}

TEST_CASE("diagnose_bands: 0..1023, then octaves, the last cut at N", "[proofs][diagnose]") {
  using Bands = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  CHECK(proofs::diagnose_bands(1) == Bands{{0, 1}});
  CHECK(proofs::diagnose_bands(1024) == Bands{{0, 1024}});
  CHECK(proofs::diagnose_bands(3000) == Bands{{0, 1024}, {1024, 2048}, {2048, 3000}});
  CHECK(proofs::diagnose_bands(16384) ==
        Bands{{0, 1024}, {1024, 2048}, {2048, 4096}, {4096, 8192}, {8192, 16384}});
  CHECK_THROWS_AS(proofs::diagnose_bands(0), InvalidArgument);
}

TEST_CASE("with_pipeline_step replaces one step or appends it", "[proofs][diagnose]") {
  CHECK(proofs::with_pipeline_step("pipeline:inv_freq=fp32;angle=fp32;table=A", "angle", "bf16") ==
        "pipeline:inv_freq=fp32;angle=bf16;table=A");
  CHECK(proofs::with_pipeline_step("pipeline:inv_freq=fp32;table=A", "angle.operands", "tf32") ==
        "pipeline:inv_freq=fp32;table=A;angle.operands=tf32");
  // "angle" is not "angle.operands": only the exact key is replaced
  CHECK(proofs::with_pipeline_step("pipeline:angle=fp32;angle.operands=tf32", "angle", "fp16") ==
        "pipeline:angle=fp16;angle.operands=tf32");
  CHECK_THROWS_AS(proofs::with_pipeline_step("r2", "angle", "bf16"), InvalidArgument);
}

TEST_CASE("every candidate is one step of every preset that the parser accepts",
          "[proofs][diagnose]") {
  std::set<std::string> names;
  for (const auto& c : proofs::diagnose_candidates()) {
    INFO(c.name);
    CHECK(names.insert(std::string(c.name)).second);
    CHECK(!c.report.empty());
    CHECK(!c.fix.empty());
    CHECK(!c.means.empty());
    // the hf preset takes every candidate, and each changes its step list in bf16
    const auto spec = proofs::candidate_realisation(attention::framework_preset("hf").spec, c);
    const auto r = attention::parse_realisation(spec, numeric::Format::bf16());
    const auto hf = attention::parse_realisation(attention::framework_preset("hf").spec,
                                                 numeric::Format::bf16());
    CHECK(r.name() != hf.name());
  }
  CHECK(names.size() == 8);
  // torch-cpu-sleef sets power and cos_sin to SLEEF: with hf, hf-torch-cpu's own spec
  const auto& sleef = proofs::diagnose_candidates().back();
  REQUIRE(sleef.name == "torch-cpu-sleef");
  CHECK(proofs::candidate_realisation(attention::framework_preset("hf").spec, sleef) ==
        attention::framework_preset("hf-torch-cpu").spec);
}

TEST_CASE("diagnose_offsets: 1, 64, 4096 and N - 1 below N, or the offsets asked",
          "[proofs][diagnose]") {
  using V = std::vector<std::uint64_t>;
  CHECK(proofs::diagnose_offsets(131072, {}) == V{1, 64, 4096, 131071});
  CHECK(proofs::diagnose_offsets(3000, {}) == V{1, 64, 2999});
  CHECK(proofs::diagnose_offsets(65, {}) == V{1, 64});  // N - 1 = 64 once
  CHECK(proofs::diagnose_offsets(2, {}) == V{1});
  CHECK(proofs::diagnose_offsets(1, {}).empty());
  const V asked{4096, 1, 4096};
  CHECK(proofs::diagnose_offsets(5000, asked) == V{1, 4096});
  const V too_far{5000};
  CHECK_THROWS_AS(proofs::diagnose_offsets(5000, too_far), InvalidArgument);
  const V zero{0};
  CHECK_THROWS_AS(proofs::diagnose_offsets(5000, zero), InvalidArgument);
}

TEST_CASE("diagnose_default_context: the context a scaled config serves", "[proofs][diagnose]") {
  // Qwen2.5-YaRN: max_position_embeddings 32768, factor 4 × original 32768 = 131072
  CHECK(proofs::diagnose_default_context(attention::parse_schedule("qwen2.5-7b-yarn")) == 131072);
  // Llama-3.1: max_position_embeddings 131072 > factor 8 × original 8192 = 65536
  CHECK(proofs::diagnose_default_context(attention::parse_schedule("llama3.1-8b")) == 131072);
  // unscaled: max_position_embeddings
  CHECK(proofs::diagnose_default_context(attention::parse_schedule("llama2-7b")) == 4096);
  CHECK(!proofs::diagnose_default_context(attention::parse_schedule("single:g=1")));
}

TEST_CASE("rank_candidates: score error, then angle, then collisions, and what decided",
          "[proofs][diagnose]") {
  auto path = [](const std::string& name, std::vector<double> rel, double angle,
                 std::uint64_t distinct) {
    proofs::DiagnosePath p;
    p.name = name;
    for (const double r : rel) {
      proofs::DiagnoseOffsetScore x;
      x.max_rel_error = r;
      p.scores.push_back(x);
    }
    attention::ErrorMaximum a;
    a.value = angle;
    p.overall.max_angle = a;
    p.census.distinct = distinct;
    return p;
  };
  std::vector<proofs::DiagnosePath> c{
      path("small", {0.001, 0.002}, 0.5, 100),  path("big", {0.01, 0.3}, 0.1, 100),
      path("angle", {0.002, 0.001}, 0.9, 100),  path("collides", {0.002, 0.001}, 0.9, 50),
      path("nan", {std::nan(""), 0.1}, 0, 100), path("same", {0.002, 0.001}, 0.9, 50)};
  proofs::DiagnosePath skipped = path("skipped", {1.0}, 1, 1);
  skipped.skipped = "does not apply";
  c.push_back(skipped);
  const auto [order, decided] = proofs::rank_candidates(c);
  // NaN first; then 0.3; then the three at 0.002 by angle (0.9, 0.9, 0.5), the two at 0.9 by
  // fewer distinct rotations, "collides" before "same" by list order (a tie)
  CHECK(order == std::vector<std::size_t>{4, 1, 3, 5, 2, 0});
  CHECK(decided ==
        std::vector<std::string>{"score", "score", "tie", "collisions", "angle", "angle"});
}

// Each path realised once (DiagnoseOptions::share_values, the default) against every section
// realising its own (false, the code before): the same report, key for key, on Llama-3 (two
// bands, collisions of the bf16 angle), Qwen2.5-YaRN (the attention factor on both sides) and
// with vllm and flash-attn (one pipeline spec: flash-attn's report is vllm's, renamed).
TEST_CASE("diagnose: shared realised values give the report of separate realisations",
          "[proofs][diagnose]") {
  struct Case {
    std::string schedule;
    std::uint64_t context;
    std::vector<std::string> frameworks;
  };
  for (const Case& c : {Case{"llama3-8b", 1100, {"hf"}},
                        Case{"qwen2.5-7b-yarn", 300, {"hf", "vllm", "flash-attn"}}}) {
    INFO(c.schedule);
    const auto s = attention::parse_schedule(c.schedule);
    proofs::DiagnoseOptions o;
    o.context = c.context;
    o.draws = 2;
    o.horizon_limit = 50;
    const auto shared = proofs::diagnose_frameworks(s, numeric::Format::bf16(), c.frameworks, o);
    o.share_values = false;
    const auto separate = proofs::diagnose_frameworks(s, numeric::Format::bf16(), c.frameworks, o);
    REQUIRE(shared.size() == separate.size());
    for (std::size_t k = 0; k < shared.size(); ++k) {
      INFO(c.frameworks[k]);
      CHECK(proofs::to_json(shared[k]) == proofs::to_json(separate[k]));
      CHECK(shared[k].correct.census.distinct > 0);
    }
  }
}
