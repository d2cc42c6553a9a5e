// Resonance RoPE [arXiv 2403.00071] as a schedule (`resonance:`, `resonance-yarn:`) and as its
// reference realisation (`resonance-table[seq_len=L]`, sheryc/resonance_rope compute_freqs),
// through the census (THEORY §3 Def 2.1, Prop 2.2). Expected wavelengths, lcms and fp32 table
// entries come from tests/derivations/resonance_wavelengths.py (mpmath, shares nothing with
// ropesim) or by hand where shown.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "attention/census/census.hpp"
#include "attention/fidelity/compare.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;

namespace {

std::vector<long> wavelengths(const Schedule& s) {
  std::vector<long> out;
  for (const auto& b : s.blocks) {
    REQUIRE(b.turn);
    out.push_back(b.turn->m.get_si());
  }
  return out;
}

CensusOptions positions(std::uint64_t n) {
  CensusOptions o;
  o.positions = n;
  o.threads = 2;
  return o;
}

const std::vector<Format> kFormats = {Format::bf16(), Format::fp16(), Format::fp32()};

}  // namespace

TEST_CASE("resonance wavelengths by hand: base 10000, dim 8", "[resonance][schedule]") {
  // θ_d = 10000^(-(d-1)/4) = 1, 1/10, 1/100, 1/1000; 2π/θ_d = 6.2832, 62.832, 628.32, 6283.19
  // (2π = 6.28318...), rounded: 6, 63, 628, 6283.
  const Schedule s = parse_schedule("resonance:base=10000,dim=8");
  CHECK(s.kind == "resonance");
  CHECK(s.spec == "resonance:base=10000,dim=8");
  CHECK(wavelengths(s) == std::vector<long>{6, 63, 628, 6283});
  CHECK(s.is_rational());
  for (const auto& b : s.blocks) CHECK(b.turn->a == 1);
  // θ̃_1 = 2π/6 = π/3 exactly
  REQUIRE(s.blocks[0].theta.as_pi_multiple());
  CHECK(*s.blocks[0].theta.as_pi_multiple() == mpq_class(1, 3));
  // no base: pipelines form inv_freq from θ̃, not from β (schedule.hpp Schedule::base)
  CHECK_FALSE(s.base);
  CHECK_FALSE(s.exponent_dim);
  CHECK(parse_schedule(s.spec).spec == s.spec);
}

TEST_CASE("resonance wavelengths of dim 16 and 32 match the mpmath derivation",
          "[resonance][schedule]") {
  CHECK(wavelengths(parse_schedule("resonance:base=10000,dim=16")) ==
        std::vector<long>{6, 20, 63, 199, 628, 1987, 6283, 19869});
  CHECK(wavelengths(parse_schedule("resonance:base=10000,dim=32")) ==
        std::vector<long>{6, 11, 20, 35, 63, 112, 199, 353, 628, 1117, 1987, 3533, 6283, 11173,
                          19869, 35333});
}

TEST_CASE("resonance-yarn rounds the YaRN-blended wavelengths", "[resonance][schedule]") {
  // derivation script: correction range (0, 3), λ = [6, 26, 126, 795, 2513, 7948, 25133, 79477]
  // (k = 1: θ = 10000^(-1/8)·(1/12 + 2/3) ≈ 0.23717, 2π/θ ≈ 26.49 → 26).
  const Schedule s = parse_schedule("resonance-yarn:base=10000,dim=16,factor=4,original=64");
  CHECK(s.kind == "resonance-yarn");
  CHECK(wavelengths(s) == std::vector<long>{6, 26, 126, 795, 2513, 7948, 25133, 79477});
  REQUIRE(s.rope_scaling);
  CHECK(s.rope_scaling->type == "yarn");
  CHECK(s.attention_scaling);  // YaRN's mscale 0.1·ln 4 + 1 is kept for the pipelines
  CHECK(parse_schedule(s.spec).spec == s.spec);
  const Schedule b = parse_schedule(
      "resonance-yarn:base=10000,dim=16,factor=4,original=64,beta_fast=32,beta_slow=1");
  CHECK(wavelengths(b) == wavelengths(s));
}

TEST_CASE("resonance_wavelength rounds exact halves to even and refuses θ ≤ 0",
          "[resonance][schedule]") {
  // θ = 2π·2/5: 2π/θ = 5/2 → 2 (even); θ = 2π·2/7: 7/2 → 4 (even); θ = 2π·3/10: 10/3 → 3.
  CHECK(resonance_wavelength(ExactReal::pi_times(mpq_class(4, 5))) == 2);
  CHECK(resonance_wavelength(ExactReal::pi_times(mpq_class(4, 7))) == 4);
  CHECK(resonance_wavelength(ExactReal::pi_times(mpq_class(3, 5))) == 3);
  CHECK_THROWS_AS(resonance_wavelength(ExactReal()), InvalidArgument);
}

TEST_CASE("resonance refuses a block whose wavelength rounds to 0", "[resonance][schedule]") {
  // base 1/10000, dim 8: θ_d = 10^(d-1) = 1, 10, 100, 1000; 2π/10 = 0.63 → 1 (θ̃ = 2π, turn 0/1),
  // 2π/100 = 0.063 → 0: refused in one line.
  try {
    (void)parse_schedule("resonance:base=1/10000,dim=8");
    FAIL("expected InvalidArgument");
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    CHECK(what.find("round(2π/θ) = 0") != std::string::npos);
    CHECK(what.find("block 2") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}

TEST_CASE("bad resonance spellings are refused in one line", "[resonance][schedule]") {
  for (const char* spec :
       {"resonance:base=10000", "resonance:base=10000,dim=7", "resonance:base=10000,dim=8,p=1",
        "resonance-yarn:base=10000,dim=16,factor=4",
        "resonance-yarn:base=1,dim=16,factor=4,original=64",
        "resonance-yarn:base=10000,dim=16,factor=4,original=64,beta=2"}) {
    INFO(spec);
    try {
      (void)parse_schedule(spec);
      FAIL("expected InvalidArgument");
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      CHECK(what.rfind("bad schedule '" + std::string(spec) + "'", 0) == 0);
      CHECK(what.find("resonance:base=B,dim=D") != std::string::npos);  // lists the spellings
      CHECK(what.find('\n') == std::string::npos);
    }
  }
  for (const char* spec :
       {"resonance-table[seq_len=0]", "resonance-table[seq_len=x]", "resonance-table[seq_len=2.5]",
        "resonance-tables", "resonance-table[L=3]"}) {
    INFO(spec);
    try {
      (void)parse_realisation(spec, Format::fp32());
      FAIL("expected InvalidArgument");
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      CHECK(what.rfind("bad realisation '" + std::string(spec) + "'", 0) == 0);
      CHECK(what.find("resonance-table[seq_len=L]") != std::string::npos);
      CHECK(what.find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("resonance-table needs integer wavelengths; r3 applies to resonance schedules",
          "[resonance][realisation]") {
  const Realisation table = parse_realisation("resonance-table", Format::bf16());
  CHECK(table.name() == "resonance-table");
  CHECK(parse_realisation("resonance-table[seq_len=1000]", Format::bf16()).name() ==
        "resonance-table[seq_len=1000]");
  CHECK_THROWS_AS(check_applicable(parse_schedule("conventional:base=10000,dim=8"), table),
                  InvalidArgument);
  CHECK_THROWS_AS(check_applicable(parse_schedule("periodic:2/5"), table), InvalidArgument);
  CHECK_NOTHROW(check_applicable(parse_schedule("periodic:m=5,7"), table));
  CHECK_NOTHROW(check_applicable(parse_schedule("resonance:base=10000,dim=8"),
                                 parse_realisation("r3", Format::bf16())));
}

TEST_CASE("resonance-table entries at fp32 match the derivation, tiled by i mod λ",
          "[resonance][realisation]") {
  const Schedule s = parse_schedule("resonance:base=10000,dim=16");
  // block 0 (λ = 6), position 7 reads entry 1: angle = fp32(1·fp32(fp32(1/6)·fp32(2π))) =
  // 0x3f860a92, cos = 0x3effffff, sin = 0x3f5db3d8 (derivation script).
  const Realisation all = parse_realisation("resonance-table", Format::fp32());
  const PositionReport p7 = query_position(s, all, 7);
  CHECK(p7.blocks[0].cos.to_hex() == realise(s, all, 1).blocks[0].cos.to_hex());
  const auto step = [](const BlockReport& b, const std::string& name) {
    for (const auto& [n, v] : b.steps) {
      if (n == name) return v.to_double();
    }
    FAIL("no step " + name);
    return 0.0;
  };
  CHECK(step(p7.blocks[0], "t") == 1);
  CHECK(step(p7.blocks[0], "wavelength") == 6);
  CHECK(step(p7.blocks[0], "angle") == 1.0471975803375244);
  CHECK(p7.blocks[0].cos.to_double() == 0.4999999701976776);
  CHECK(p7.blocks[0].sin.to_double() == 0.866025447845459);
  // block 5 (λ = 1987) at position 2987: tabulated → t = 1000, sin = -0.020552467554807663;
  // with seq_len = 1000 < 1987 the angle is formed directly, t = 2987, sin = -0.020552165806293488.
  const PositionReport tab = query_position(s, all, 2987);
  CHECK(step(tab.blocks[5], "t") == 1000);
  CHECK(tab.blocks[5].sin.to_double() == -0.020552467554807663);
  const PositionReport direct =
      query_position(s, parse_realisation("resonance-table[seq_len=1000]", Format::fp32()), 2987);
  CHECK(step(direct.blocks[5], "t") == 2987);
  CHECK(direct.blocks[5].sin.to_double() == -0.020552165806293488);
  CHECK(direct.blocks[5].cos.to_double() == -0.999788761138916);
  // block 4 (λ = 628 ≤ 1000) is still tabulated under seq_len = 1000
  CHECK(step(direct.blocks[4], "t") == 2987 % 628);
}

TEST_CASE("census: r3 and resonance-table are periodic with period lcm(λ) = 1884 (dim 4)",
          "[resonance][census]") {
  // resonance:base=10000,dim=4: λ = 6, 628 (θ = 1, 1/100); lcm(6, 628) = 1884 (628 = 4·157).
  const Schedule s = parse_schedule("resonance:base=10000,dim=4");
  for (const Format& f : kFormats) {
    for (const char* r : {"r3", "resonance-table"}) {
      INFO(f.name << " " << r);
      const CensusResult c = census(s, parse_realisation(r, f), positions(4096));
      REQUIRE(c.period);
      CHECK(*c.period == 1884);
      CHECK(c.period_per_block == std::vector<std::optional<std::uint64_t>>{6, 628});
      CHECK(c.distinct_rotations == 1884);
    }
  }
}

TEST_CASE("census: resonance-table per-block period = λ_d on dim 16; blocks beyond seq_len are not",
          "[resonance][census]") {
  const Schedule s = parse_schedule("resonance:base=10000,dim=16");
  const std::vector<std::optional<std::uint64_t>> lambda{6, 20, 63, 199, 628, 1987, 6283, 19869};
  for (const Format& f : kFormats) {
    INFO(f.name);
    const CensusResult all = census(s, parse_realisation("resonance-table", f), positions(65536));
    CHECK(all.period_per_block == lambda);
    CHECK_FALSE(all.period);  // lcm ≈ 3.25e18 ≫ N/2
    const CensusResult part =
        census(s, parse_realisation("resonance-table[seq_len=1000]", f), positions(65536));
    for (std::size_t d = 0; d < 5; ++d) CHECK(part.period_per_block[d] == lambda[d]);
    for (std::size_t d = 5; d < 8; ++d) CHECK(part.period_per_block[d] != lambda[d]);
  }
}

TEST_CASE("census: angles formed in a format (r2, hf) are not periodic, with witnesses",
          "[resonance][census]") {
  const Schedule s = parse_schedule("resonance:base=10000,dim=4");
  for (const Format& f : kFormats) {
    for (const char* r : {"r2", "hf"}) {
      INFO(f.name << " " << r);
      const CensusResult c = census(s, parse_realisation(r, f), positions(4096));
      CHECK_FALSE(c.period);
      CHECK(c.largest_witness_period);
      // the exact period 1884 has a witness: R̂_{i+1884} ≠ R̂_i for some i
      REQUIRE(c.witnesses.size() >= 1884);
      CHECK(c.witnesses[1884 - 1] >= 0);
      CHECK(c.period_per_block[1] != std::optional<std::uint64_t>(628));
    }
  }
}

TEST_CASE("compare: resonance-table's tabulated angle is measured against 2π(i mod λ)/λ",
          "[resonance][compare]") {
  // dim 4, fp32: entry t of block d is fp32(fp32(t)·r), r = fp32(fp32(1/λ)·fp32(2π)) with
  // relative error ≤ 3·2^-24 (three roundings), t < λ: |angle - 2πt/λ| ≤ 2π·3·2^-24 + ulp(angle)/2
  // ≤ 1.2e-6 + 2^-22 < 1e-5. Against θ·i (the unreduced angle) the error would be ≈ 2π·⌊i/λ⌋.
  CompareOptions o;
  o.positions = 4096;
  const CompareResult c =
      compare(parse_schedule("resonance:base=10000,dim=4"),
              parse_realisation("resonance-table", Format::fp32()), std::nullopt, o);
  REQUIRE(c.overall.angle);
  CHECK(c.overall.angle->absolute.value < 1e-5);
  CHECK(c.overall.angle->absolute.value > 0);
}
