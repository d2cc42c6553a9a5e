// Pipeline steps computed by the libraries frameworks call (realisation.hpp
// StepFormat::implementation; numeric/libm.hpp): the `:IMPL` spelling and its
// refusals, and values quoted from real PyTorch 1.13.1 (Debian python3-torch, one thread):
// at ATEN_CPU_CAPABILITY=avx2 (SLEEF u10 AVX2, eight lanes per vector) and =default (glibc
// cosf). The full tables are compared in tests/torch/ (ctest torch-oracle).
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "attention/realisations/framework_presets.hpp"
#include "attention/realisations/realisation.hpp"
#include "core/error.hpp"
#include "numeric/libm.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;
namespace numeric = ropesim::numeric;

namespace {

std::string refusal(const std::string& spec, Rounding rounding = Rounding::nearest_even) {
  try {
    parse_realisation(spec, Format::fp32(), rounding);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

/// The realised fp32 cos or sin of block `block` at `position` on llama2-7b.
float llama2(const std::string& realisation, std::uint64_t position, std::size_t block,
             bool cos = true) {
  const auto r = parse_realisation(realisation, Format::fp32());
  const auto rot = realise(parse_schedule("llama2-7b"), r, position);
  return static_cast<float>((cos ? rot.blocks[block].cos : rot.blocks[block].sin).to_double());
}

}  // namespace

TEST_CASE("power and cos_sin take :cr, :glibc or :sleef-u10, spelled back by name()", "[libm]") {
  const auto r =
      parse_realisation("pipeline:cos_sin=fp32>fp16:glibc;power=fp32:sleef-u10", Format::fp16());
  REQUIRE(r.steps.cos_sin.implementation == numeric::LibmImplementation::glibc);
  REQUIRE(r.steps.cos_sin.store == Format::fp16());
  REQUIRE(r.steps.power.implementation == numeric::LibmImplementation::sleef_u10);
  REQUIRE(r.name().find(";cos_sin=fp32>fp16:glibc;") != std::string::npos);
  REQUIRE(r.name().find(";power=fp32:sleef-u10") != std::string::npos);
  REQUIRE(parse_realisation(r.name(), Format::fp16()).steps == r.steps);
  // :cr is the default and is not spelled
  const auto cr = parse_realisation("pipeline:cos_sin=fp32:cr", Format::fp32());
  REQUIRE(cr.steps == parse_realisation("pipeline:cos_sin=fp32", Format::fp32()).steps);
  // a fixed-point format keeps its ':'
  REQUIRE_NOTHROW(parse_realisation("pipeline:table=fixed:2.14", Format::fp32()));
}

TEST_CASE("library steps are refused in one line where they cannot run", "[libm]") {
  CHECK(refusal("pipeline:cos_sin=fp16:glibc").find("compute format must be fp32, got fp16") !=
        std::string::npos);
  CHECK(refusal("pipeline:angle=fp32:glibc").find("step angle takes no math library") !=
        std::string::npos);
  CHECK(refusal("pipeline:cos_sin=fp32:sleef").find("did you mean 'sleef-u10'") !=
        std::string::npos);
  CHECK(refusal("pipeline:cos_sin=fp32@toward-zero:glibc").find("nearest-even") !=
        std::string::npos);
  CHECK(refusal("pipeline:cos_sin=fp32:sleef-u10", Rounding::toward_zero).find("nearest-even") !=
        std::string::npos);
  CHECK(refusal("pipeline:base=exact;power=fp32:glibc").find("base=exact") != std::string::npos);
  // the SLEEF vector holds 8 blocks of one position: 4 blocks are refused
  const auto r = parse_realisation("hf-torch-cpu", Format::bf16());
  try {
    realise(parse_schedule("conventional:base=10000,dim=8"), r, 1);
    FAIL("no refusal");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("multiple of 8 rotary blocks") != std::string::npos);
  }
}

TEST_CASE("glibc steps give PyTorch's scalar path (ATEN_CPU_CAPABILITY=default)", "[libm]") {
  // torch 1.13.1, capability default, llama2-7b HF table, position 2, block 5:
  // torch cos = 0x1.1fc4e8p-1; the correctly rounded cos of the same fp32 angle 0x1.f2a79ep-1
  // is 0x1.1fc4eap-1 (mpmath at 200 bits: 0.5620491816916192994; the distances to the two
  // are 0.524 and 0.476 ulp).
  CHECK(llama2("pipeline:cos_sin=fp32:glibc", 2, 5) == 0x1.1fc4e8p-1f);
  CHECK(llama2("hf", 2, 5) == 0x1.1fc4eap-1f);
  // and the library itself on that angle
  CHECK(numeric::glibc_cosf(0x1.f2a79ep-1f) == 0x1.1fc4e8p-1f);
  CHECK(numeric::glibc_version().find('.') != std::string::npos);
}

TEST_CASE("sleef-u10 steps give PyTorch's AVX2 path, lane mates included", "[libm]") {
  if (!numeric::sleef_avx2_available()) {
    WARN("SKIPPED: this CPU lacks AVX2/FMA, sleef-u10 cannot run here");
    return;
  }
  // torch 1.13.1, capability avx2, one thread, llama2-7b HF table (emb.cos() of the
  // contiguous [16384, 128] fp32 emb):
  //   position 164, block 7, angle 0x1.df1bc6p+5: torch -0x1.f5f75ap-1, while SLEEF on the angle
  //   alone (and the correctly rounded cos) give -0x1.f5f758p-1: lane 0 of its vector (block
  //   0, angle 164) is ≥ 125, so all eight lanes take SLEEF's wider argument reduction
  //   (a mate of 124.99 keeps -0x1.f5f758p-1, one of 125 gives -0x1.f5f75ap-1: checked with
  //   Sleef_cosf8_u10avx2 directly).
  CHECK(llama2("hf-torch-cpu", 164, 7) == -0x1.f5f75ap-1f);
  CHECK(llama2("hf", 164, 7) == -0x1.f5f758p-1f);
  numeric::SleefVector alone{};
  alone.fill(0x1.df1bc6p+5f);
  CHECK(numeric::sleef_cosf8_u10(alone)[0] == -0x1.f5f758p-1f);
  //   position 135, block 3, angle 0x1.5eaa84p+6: torch 0x1.e96c3p-1 (= correctly rounded);
  //   SLEEF on the angle alone gives 0x1.e96c32p-1.
  CHECK(llama2("hf-torch-cpu", 135, 3) == 0x1.e96c3p-1f);
  alone.fill(0x1.5eaa84p+6f);
  CHECK(numeric::sleef_cosf8_u10(alone)[0] == 0x1.e96c32p-1f);
  CHECK(numeric::sleef_version() == "3.5.1");
}

TEST_CASE("power:sleef-u10 is PyTorch's cpu_kernel_vec: SLEEF in blocks of 16, glibc tail",
          "[libm]") {
  if (!numeric::sleef_avx2_available()) {
    WARN("SKIPPED: this CPU lacks AVX2/FMA, sleef-u10 cannot run here");
    return;
  }
  // torch 1.13.1, capability avx2: 100000.0 ** (torch.arange(0, 80, 2).float() / 80), 40
  // elements: 0..31 in two 16-element blocks of Sleef_powf8_u10, 32..39 by std::pow (glibc).
  //   k = 28: torch 0x4545a46f (= Sleef_powf8_u10avx2; glibc powf gives 0x4545a470)
  //   k = 39: torch 0x479276b9 (= glibc powf; Sleef_powf8_u10avx2 gives 0x479276b8)
  const auto s = parse_schedule("conventional:base=100000,dim=80");
  const auto r = parse_realisation("hf-torch-cpu", Format::fp32());
  const auto rep = query_position(s, r, 1);
  auto power = [&](std::size_t block) {
    for (const auto& [name, v] : rep.blocks[block].steps) {
      if (name == "power") return static_cast<float>(v.to_double());
    }
    FAIL("no power step");
    return 0.0f;
  };
  CHECK(power(28) == std::bit_cast<float>(0x4545a46fu));
  CHECK(power(39) == std::bit_cast<float>(0x479276b9u));
  // the libraries on those arguments
  const float base = 100000.0f, e28 = 56.0f / 80.0f, e39 = 78.0f / 80.0f;
  numeric::SleefVector b{}, e{};
  b.fill(base);
  e.fill(e28);
  CHECK(numeric::sleef_powf8_u10(b, e)[0] == std::bit_cast<float>(0x4545a46fu));
  CHECK(numeric::glibc_powf(base, e28) == std::bit_cast<float>(0x4545a470u));
  e.fill(e39);
  CHECK(numeric::sleef_powf8_u10(b, e)[0] == std::bit_cast<float>(0x479276b8u));
  CHECK(numeric::glibc_powf(base, e39) == std::bit_cast<float>(0x479276b9u));
}
