// proofs/diagnose.hpp: the pieces the report is made of, against values written by hand. The
// report's numbers themselves are checked against compare, rotations, horizon and table bounds
// in tests/cli/test_diagnose.cpp.
#include <catch2/catch.hpp>
#include <set>

#include "attention/framework_presets.hpp"
#include "attention/realisation.hpp"
#include "numeric/error.hpp"
#include "numeric/format.hpp"
#include "proofs/diagnose.hpp"

using namespace ropesim;

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
