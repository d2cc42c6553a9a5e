// Pipelines as real code computes them (realisation.hpp PipelineSteps; NUMERIC §3):
// per-step compute and storage formats, per-step rounding, the exact or converted base, GEMM
// operands, the quotient recipe, constants' flags kept apart from the positions' flags, and
// the one-line refusals. Expected values are derived by hand (in the comments) or quoted
// from the frameworks' bug reports (docs/FRAMEWORK_BUGS.md).
#include <catch2/catch.hpp>
#include <string>

#include "attention/realisations/realisation.hpp"
#include "core/error.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;
using ropesim::numeric::Flag;
using ropesim::numeric::Flags;

namespace {

const Value* step(const BlockReport& b, const std::string& name) {
  for (const auto& [n, v] : b.steps) {
    if (n == name) return &v;
  }
  return nullptr;
}

double step_value(const BlockReport& b, const std::string& name) {
  const Value* v = step(b, name);
  REQUIRE(v != nullptr);
  return v->to_double();
}

PositionReport report(const std::string& schedule, const std::string& realisation,
                      const Format& format, std::uint64_t position) {
  return query_position(parse_schedule(schedule), parse_realisation(realisation, format), position);
}

std::string refusal(const std::string& spec) {
  try {
    parse_realisation(spec, Format::fp32());
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE(
    "inv_freq in fp16 with the base kept exact (\"CUDA style\"; PyTorch itself converts "
    "the base, docs/FRAMEWORKS.md)",
    "[pipeline-steps]") {
  // base 10^6, D = 128. Block 1: e = fp16(2/128) = 2^-6 exactly; p = fp16(10^(6/64)) with
  // 10^0.09375 = 1.24093..., fp16 spacing 2^-10 on [1, 2): 1270.7 → 1271·2^-10 = 1.2412109375;
  // 1/p = 0.805665... spacing 2^-11 on [0.5, 1): 1649.99 → 1650·2^-11 = 0.8056640625.
  // Blocks k ≥ 52: β^(2k/128) ≥ 10^4.875 = 74989 > 65520 rounds to inf in fp16, 1/inf = 0;
  // block 51: 10^4.78125 = 60430 stays finite. So blocks 52–63 and only they are 0, their
  // constants overflow, and no per-position step overflows (every angle is 0·t or finite).
  const auto rep = report("conventional:base=1000000,dim=128", "pipeline:inv_freq=fp16;base=exact",
                          Format::fp16(), 3001);
  REQUIRE(step_value(rep.blocks[1], "inv_freq") == 0.8056640625);
  for (const auto& b : rep.blocks) {
    INFO("block " << b.block);
    REQUIRE((step_value(b, "inv_freq") == 0) == (b.block >= 52));
    REQUIRE(Flags::from_bits(b.constant_flags).test(Flag::overflow) == (b.block >= 52));
    REQUIRE(b.flags == 0);
  }
  // CPU style (the Python float base converted to fp16 first): 10^6 > 65520 is inf already;
  // inf^0 = 1 for block 0, inf^e = inf for e > 0, so every other inv_freq is 1/inf = 0.
  const auto cpu =
      report("conventional:base=1000000,dim=128", "pipeline:inv_freq=fp16", Format::fp16(), 3001);
  for (const auto& b : cpu.blocks) {
    INFO("block " << b.block);
    REQUIRE(step_value(b, "inv_freq") == (b.block == 0 ? 1.0 : 0.0));
    REQUIRE(Flags::from_bits(b.constant_flags).test(Flag::overflow));
    REQUIRE(b.flags == 0);
  }
}

TEST_CASE("inv_freq computed in fp32 then stored in bf16 is not bf16 throughout",
          "[pipeline-steps]") {
  // Llama-3.2-1B: block 2's inv_freq computed in fp32 and cast to bf16 is
  // 0.439453125; rounding every step in bf16 gives 0.44140625; 8 of the 32 blocks differ.
  const auto stored = report("llama3.2-1b", "pipeline:inv_freq=fp32>bf16", Format::bf16(), 1);
  const auto all = report("llama3.2-1b", "pipeline:inv_freq=bf16", Format::bf16(), 1);
  REQUIRE(step_value(stored.blocks[2], "inv_freq") == 0.439453125);
  REQUIRE(step_value(all.blocks[2], "inv_freq") == 0.44140625);
  int differ = 0;
  for (std::size_t k = 0; k < stored.blocks.size(); ++k) {
    differ += !step(stored.blocks[k], "inv_freq")->same_bits(*step(all.blocks[k], "inv_freq"));
  }
  REQUIRE(stored.blocks.size() == 32);
  REQUIRE(differ == 8);
  // the exponent and power of the stored pipeline stayed fp32: e = 4/64 exactly
  REQUIRE(step_value(stored.blocks[2], "exponent") == 0.0625);
}

TEST_CASE("GEMM operands rounded to tf32, product exact into fp32", "[pipeline-steps]") {
  // base 10^6, D = 128, block 1: inv_freq = fp32(1/fp32(10^(6/64))) = 0.80584222...;
  // tf32 (11 significant bits, spacing 2^-11 on [0.5, 1)): 1650.36 → 0.8056640625.
  // t = 3001 in tf32: spacing 2 on [2048, 4096), 3001 is a tie between 3000 (significand
  // 1500, even) and 3002 → 3000. Product 0.8056640625·3000 = 2416.9921875, exact in fp32.
  const auto rep = report("conventional:base=1000000,dim=128", "pipeline:angle.operands=tf32",
                          Format::fp32(), 3001);
  REQUIRE(step_value(rep.blocks[1], "angle") == 2416.9921875);
  // without the operand rounding the angle is fp32(0.80584222·3001) ≠ 2416.9921875
  const auto plain = report("conventional:base=1000000,dim=128", "hf", Format::fp32(), 3001);
  REQUIRE(step_value(plain.blocks[1], "angle") != 2416.9921875);
}

TEST_CASE("a step's own rounding mode", "[pipeline-steps]") {
  // t = 2049 in fp16 (spacing 2 on [2048, 4096)): nearest-even gives 2048 (significand
  // 1024 even), upward 2050, toward zero 2048.
  const std::string s = "conventional:base=10000,dim=8";
  REQUIRE(step_value(report(s, "pipeline:position=fp16", Format::fp32(), 2049).blocks[0], "t") ==
          2048);
  REQUIRE(step_value(report(s, "pipeline:position=fp16@upward", Format::fp32(), 2049).blocks[0],
                     "t") == 2050);
  REQUIRE(step_value(report(s, "pipeline:position=fp16@rz", Format::fp32(), 2049).blocks[0], "t") ==
          2048);
  // computed in fp32, stored in fp16 with the step's rounding: 2049 → fp32 exact → 2050
  REQUIRE(
      step_value(report(s, "pipeline:position=fp32>fp16@upward", Format::fp32(), 2049).blocks[0],
                 "t") == 2050);
}

TEST_CASE("the quotient recipe divides by the timescale", "[pipeline-steps]") {
  // base 10^4, D = 8, block 1: e = 2/8, p = 10^4^(1/4) = 10 exactly. At t = 9:
  // quotient fp32(9/10) = 0.89999997615814208984375 (hand: 0.9 between fp32 neighbours
  // 0.89999997616 and 0.90000003576, nearer the first); product fp32(fp32(1/10)·9) =
  // fp32(0.100000001490116·9 = 0.900000013411) = 0.900000035762786865234375.
  const std::string s = "conventional:base=10000,dim=8";
  const auto q = report(s, "pipeline:recipe=quotient", Format::fp32(), 9);
  const auto p = report(s, "hf", Format::fp32(), 9);
  REQUIRE(step_value(q.blocks[1], "power") == 10);
  REQUIRE(step(q.blocks[1], "inv_freq") == nullptr);
  REQUIRE(step_value(q.blocks[1], "angle") == 0.89999997615814208984375);
  REQUIRE(step_value(p.blocks[1], "angle") == 0.900000035762786865234375);
}

TEST_CASE("pipeline spellings: old names unchanged, new keys round-trip", "[pipeline-steps]") {
  // the name of a spec written before per-step formats is what it always was
  const Realisation old = parse_realisation("pipeline:angle=bf16;table=A", Format::fp16());
  REQUIRE(old.name() ==
          "pipeline:inv_freq=fp32;position=fp32;angle=bf16;cos_sin=fp32;table=fp16;rotation=fp16;"
          "output=fp16;recipe=product;arithmetic=hf_eager;layout=rotate_half");
  for (const std::string spec :
       {"pipeline:inv_freq=fp32>bf16", "pipeline:exponent=bf16;power=fp32>fp16@upward;base=exact",
        "pipeline:angle.operands=tf32;base=fp16", "pipeline:attention_scaling=bf16;recipe=quotient",
        "pipeline:rotation=fp32@toward-zero;output=bf16"}) {
    INFO(spec);
    const Realisation r = parse_realisation(spec, Format::bf16());
    const Realisation back = parse_realisation(r.name(), Format::bf16());
    REQUIRE(back.steps == r.steps);
    REQUIRE(back.name() == r.name());
  }
  // inv_freq=X alone also sets the exponent's and power's compute format (old meaning)
  const Realisation r = parse_realisation("pipeline:inv_freq=fp16", Format::fp32());
  REQUIRE(r.steps.exponent.compute == Format::fp16());
  REQUIRE(r.steps.power.compute == Format::fp16());
  REQUIRE(
      parse_realisation("pipeline:inv_freq=fp16;power=fp32", Format::fp32()).steps.power.compute ==
      Format::fp32());
}

TEST_CASE("bad pipeline specs are refused naming the step", "[pipeline-steps]") {
  REQUIRE_THAT(refusal("pipeline:angle=fp32;angle=bf16"),
               Catch::Contains("step angle is given twice"));
  REQUIRE_THAT(refusal("pipeline:gemm=fp32"), Catch::Contains("unknown step 'gemm'"));
  REQUIRE_THAT(refusal("pipeline:cos_sin="), Catch::Contains("step cos_sin has no format"));
  REQUIRE_THAT(refusal("pipeline:angle=>bf16"), Catch::Contains("step angle has no format"));
  REQUIRE_THAT(refusal("pipeline:angle.operands="),
               Catch::Contains("step angle.operands has no format"));
  REQUIRE_THAT(refusal("pipeline:angle.operands=tf32;recipe=chained"),
               Catch::Contains("step angle.operands"));
  REQUIRE_THAT(refusal("pipeline:table=fp32>bf16"),
               Catch::Contains("step table is a stored format"));
  REQUIRE_THAT(refusal("pipeline:rotation=fp32>bf16"), Catch::Contains("use output=FORMAT"));
  REQUIRE_THAT(refusal("pipeline:position=fp16@sideways"), Catch::Contains("step position"));
  REQUIRE_THAT(refusal("pipeline:angle=fp33"), Catch::Contains("step angle"));
  REQUIRE_THAT(refusal("pipeline:angle"), Catch::Contains("expected KEY=VALUE"));
}

TEST_CASE("the attention factor scales the table (YaRN's mscale)", "[pipeline-steps]") {
  // cos = emb.cos() * attention_scaling in fp32 (Hugging Face), here s = 1.5 set by hand.
  // Position 1, block 0 (θ = 1): fp32(cos 1) = 0.540302276611328125 (python3
  // struct-packed math.cos(1.0); correctly rounded since cos 1 is far from an fp32 tie);
  // ×1.5 = 0.8104534149169921875, which fp32 holds exactly (424911/2^19); sin: fp32(sin 1) =
  // 0.8414709568023681640625, ×1.5 = 1.26220643520355224609375, exact as well (python3).
  Schedule s = parse_schedule("conventional:base=10000,dim=4");
  s.attention_scaling = mpq_class(3, 2);
  const auto rep = query_position(s, parse_realisation("hf", Format::fp32()), 1);
  REQUIRE(step_value(rep.blocks[0], "attention_scaling") == 1.5);
  REQUIRE(step_value(rep.blocks[0], "cos_fp") == 0.540302276611328125);
  REQUIRE(rep.blocks[0].cos.to_double() == 0.8104534149169921875);
  REQUIRE(rep.blocks[0].sin.to_double() == 1.26220643520355224609375);
  // position 0: (1, 0) scaled to (1.5, 0); r1 leaves the factor out
  const auto zero = query_position(s, parse_realisation("hf", Format::fp32()), 0);
  REQUIRE(zero.blocks[1].cos.to_double() == 1.5);
  REQUIRE(query_position(s, parse_realisation("r1", Format::fp32()), 0).blocks[1].cos.to_double() ==
          1);
}

TEST_CASE("scalar_division: reciprocal is spelled back, a bad value is one line naming both",
          "[pipeline-steps]") {
  using ropesim::numeric::Format;
  const auto r = parse_realisation("pipeline:scalar_division=reciprocal", Format::fp32());
  CHECK(r.steps.reciprocal_scalar_division);
  CHECK(r.name().find(";scalar_division=reciprocal") != std::string::npos);
  CHECK(parse_realisation(r.name(), Format::fp32()).steps == r.steps);
  const auto c = parse_realisation("pipeline:scalar_division=correct", Format::fp32());
  CHECK_FALSE(c.steps.reciprocal_scalar_division);
  CHECK(c.name().find("scalar_division") == std::string::npos);  // the default is not spelled
  // PyTorch's CPU preset divides as torch does (tests/torch checks its bits); hf reads the source
  CHECK(parse_realisation("hf-torch-cpu", Format::bf16()).steps.reciprocal_scalar_division);
  CHECK_FALSE(parse_realisation("hf", Format::bf16()).steps.reciprocal_scalar_division);
  try {
    (void)parse_realisation("pipeline:scalar_division=exact", Format::fp32());
    FAIL("accepted scalar_division=exact");
  } catch (const InvalidArgument& e) {
    const std::string m = e.what();
    CHECK(m.find('\n') == std::string::npos);
    CHECK(m.find("scalar_division 'exact' (accepted: correct, reciprocal)") != std::string::npos);
  }
}
