// Framework presets (attention/realisations/framework_presets.hpp; docs/FRAMEWORKS.md): every
// preset's step list parses, the built-in names keep their meaning, and for hf-cpu/hf-cuda,
// hf-cuda-tf32, vllm, megatron, te-fused, llama.cpp and jax the realised steps at one
// position and block equal values derived independently by
// tests/derivations/framework_preset_values.py (exact rationals and 400-bit mpmath, each
// step rounded to nearest-even in its format; the fractions below are its output).
#include <catch2/catch.hpp>
#include <string>

#include "attention/realisations/framework_presets.hpp"
#include "attention/realisations/realisation.hpp"
#include "core/error.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;

namespace {

Realisation preset(const std::string& name, const Format& activation) {
  return parse_realisation(framework_preset(name).spec, activation);
}

PositionReport report(const std::string& name, const std::string& schedule,
                      const Format& activation, std::uint64_t position) {
  return query_position(parse_schedule(schedule), preset(name, activation), position);
}

double step_value(const BlockReport& b, const std::string& name) {
  for (const auto& [n, v] : b.steps) {
    if (n == name) return v.to_double();
  }
  FAIL("no step " << name);
  return 0;
}

/// y = R̂_i x for the preset, with x zero except x[d] = x0 and x[d + D/2] = x1 (rotate_half
/// pairs block d with d + D/2); returns (y[d], y[d + D/2]).
std::pair<double, double> rotate_pair(const std::string& name, const std::string& schedule,
                                      const Format& activation, std::uint64_t position,
                                      std::size_t block, double x0, double x1) {
  const Schedule s = parse_schedule(schedule);
  const Realisation r = preset(name, activation);
  const RealisedRotation rot = realise(s, r, position);
  const std::size_t half = rot.blocks.size() + rot.unrotated_pairs;
  std::vector<Value> x(2 * half, Value::from_double_exact(0));
  x[block] = Value::from_double_exact(x0);
  x[block + half] = Value::from_double_exact(x1);
  const auto y = apply_rotation(rot, x, r.layout);
  return {y[block].to_double(), y[block + half].to_double()};
}

}  // namespace

TEST_CASE("every framework preset parses in every activation format", "[framework-presets]") {
  const std::vector<std::string_view> expected{"hf",
                                               "hf-cpu",
                                               "hf-torch-cpu",
                                               "hf-cuda",
                                               "hf-cuda-tf32",
                                               "vllm",
                                               "vllm-native",
                                               "llamacpp-cpu",
                                               "llamacpp-cpu-glibc",
                                               "llamacpp-cuda",
                                               "megatron",
                                               "megatron-fused",
                                               "te-fused",
                                               "flash-attn",
                                               "mlx",
                                               "jax"};
  REQUIRE(framework_preset_names() == expected);
  for (const auto& p : framework_presets()) {
    INFO(p.name);
    REQUIRE(p.spec.substr(0, 9) == "pipeline:");
    REQUIRE_FALSE(p.summary.empty());
    REQUIRE_FALSE(p.sources.empty());
    REQUIRE_FALSE(p.not_modelled.empty());
    REQUIRE(find_framework_preset(p.name) == &p);
    for (const auto& a : {Format::bf16(), Format::fp16(), Format::fp32()}) {
      const Realisation r = parse_realisation(p.spec, a);
      REQUIRE(r.kind == Realisation::Kind::pipeline);
      REQUIRE(r.steps.output == a);  // every framework stores rotated q/k in the activation dtype
    }
  }
}

TEST_CASE("an unknown preset name is refused with the list of names", "[framework-presets]") {
  REQUIRE(find_framework_preset("pytorch") == nullptr);
  try {
    framework_preset("pytorch");
    FAIL("accepted");
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    REQUIRE(what.find("'pytorch'") != std::string::npos);
    REQUIRE(what.find("hf-cpu, hf-torch-cpu, hf-cuda, hf-cuda-tf32, vllm") != std::string::npos);
    REQUIRE(what.find('\n') == std::string::npos);
  }
}

TEST_CASE("hf, llamacpp-cpu and llamacpp-cuda presets are the built-in step lists",
          "[framework-presets]") {
  // NUMERIC §3: the names keep their meaning. Compared field by field except the name.
  for (const std::string name : {"hf", "llamacpp-cpu", "llamacpp-cuda"}) {
    INFO(name);
    for (const auto& a : {Format::bf16(), Format::fp16()}) {
      Realisation from_table = preset(name, a);
      const Realisation built_in = parse_realisation(name, a);
      from_table.steps.name = built_in.steps.name;
      REQUIRE(from_table.steps == built_in.steps);
      REQUIRE(from_table.layout == built_in.layout);
    }
  }
}

TEST_CASE("hf-cpu and hf-cuda: fp32 steps, bf16 table (Llama-3 base, position 4097)",
          "[framework-presets]") {
  // PyTorch converts the Python base to the exponent's dtype on both devices, so the step
  // lists are the same (framework_presets.cpp, hf-cuda's note). Block 3, D = 128, β = 5e5:
  // e = 6/128 = 3/64; p = fp32(500000^(3/64)) = 15517763/2^23; inv_freq = fp32(1/p) =
  // 2267361/2^22; angle = fp32(inv_freq·4097) = 4535829/2048; cos = -16744389/2^24,
  // sin = 4196053/2^26; in bf16 -255/256 and 1/16.
  REQUIRE(framework_preset("hf-cpu").spec == framework_preset("hf-cuda").spec);
  for (const std::string name : {"hf-cpu", "hf-cuda"}) {
    INFO(name);
    const auto b = report(name, "conventional:base=500000,dim=128", Format::bf16(), 4097).blocks[3];
    REQUIRE(step_value(b, "exponent") == 3.0 / 64);
    REQUIRE(step_value(b, "power") == 15517763.0 / 8388608);
    REQUIRE(step_value(b, "inv_freq") == 2267361.0 / 4194304);
    REQUIRE(step_value(b, "t") == 4097);
    REQUIRE(step_value(b, "angle") == 4535829.0 / 2048);
    REQUIRE(step_value(b, "cos_fp") == -16744389.0 / 16777216);
    REQUIRE(step_value(b, "sin_fp") == 4196053.0 / 67108864);
    REQUIRE(b.cos.to_double() == -255.0 / 256);
    REQUIRE(b.sin.to_double() == 1.0 / 16);
  }
}

TEST_CASE("hf-cuda-tf32 rounds the GEMM operands: position 4097 becomes 4096",
          "[framework-presets]") {
  // inv_freq 2267361/2^22 → tf32 1107/2048; t = 4097 → 4096 (a tie, to even); the product
  // 1107·2 = 2214 is exact. cos(2214) = -5705563/2^23, sin = 12298829/2^24; in bf16 -87/128
  // and 47/64 — against hf-cuda's -255/256 and 1/16 at the same position and block.
  const auto b =
      report("hf-cuda-tf32", "conventional:base=500000,dim=128", Format::bf16(), 4097).blocks[3];
  REQUIRE(step_value(b, "angle") == 2214);
  REQUIRE(step_value(b, "cos_fp") == -5705563.0 / 8388608);
  REQUIRE(step_value(b, "sin_fp") == 12298829.0 / 16777216);
  REQUIRE(b.cos.to_double() == -87.0 / 128);
  REQUIRE(b.sin.to_double() == 47.0 / 64);
}

TEST_CASE("vllm: fp16 cache, rotation in fp32 stored once", "[framework-presets]") {
  // β = 1e4, D = 128, position 2008, block 1: inv_freq = 14528471/2^24, angle =
  // 1780589/1024, cos = -16200485/2^30 → fp16 -989/65536, sin → fp16 -1. x0 = fp16(1/7) =
  // 585/4096, x1 = fp16(-35/9) = -1991/512. The kernel: y0 = -249/64, y1 = fp16(fp32(fp32(s·x0)
  // + fp32(c·x1))) = -1379/16384; fp16 eager (hf-cpu at fp16) gives y1 = -689/8192 instead.
  const std::string schedule = "conventional:base=10000,dim=128";
  const auto b = report("vllm", schedule, Format::fp16(), 2008).blocks[1];
  REQUIRE(step_value(b, "inv_freq") == 14528471.0 / 16777216);
  REQUIRE(step_value(b, "angle") == 1780589.0 / 1024);
  REQUIRE(step_value(b, "cos_fp") == -16200485.0 / 1073741824);
  REQUIRE(b.cos.to_double() == -989.0 / 65536);
  REQUIRE(b.sin.to_double() == -1);
  const double x0 = 585.0 / 4096, x1 = -1991.0 / 512;
  const auto [y0, y1] = rotate_pair("vllm", schedule, Format::fp16(), 2008, 1, x0, x1);
  REQUIRE(y0 == -249.0 / 64);
  REQUIRE(y1 == -1379.0 / 16384);
  const auto eager = rotate_pair("hf-cpu", schedule, Format::fp16(), 2008, 1, x0, x1);
  REQUIRE(eager.first == -249.0 / 64);
  REQUIRE(eager.second == -689.0 / 8192);
  // forward_native rotates in fp16: rnd(rnd(x1·c) + rnd(x0·s)) in fp16, the eager value
  const auto native = rotate_pair("vllm-native", schedule, Format::fp16(), 2008, 1, x0, x1);
  REQUIRE(native.first == -249.0 / 64);
  REQUIRE(native.second == -689.0 / 8192);
}

TEST_CASE("megatron (unfused) rotates in bf16, te-fused in fp32 from an fp32 table",
          "[framework-presets]") {
  // Same block as above in bf16: cos → -247/16384, sin → -1; x0 = bf16(1/7) = 73/512,
  // x1 = bf16(-37/9) = -33/8. Megatron: y0 = -33/8, y1 = bf16(bf16(x1·c) + bf16(x0·s)) =
  // -41/512. TE fused: fp32 cos/sin, y1 = bf16(fp32(fp32(s·x0) + fp32(c·x1))) = -165/2048.
  const std::string schedule = "conventional:base=10000,dim=128";
  const auto meg = report("megatron", schedule, Format::bf16(), 2008).blocks[1];
  REQUIRE(meg.cos.to_double() == -247.0 / 16384);
  REQUIRE(meg.sin.to_double() == -1);
  const auto te = report("te-fused", schedule, Format::bf16(), 2008).blocks[1];
  REQUIRE(te.cos.to_double() == -16200485.0 / 1073741824);  // the table stays fp32
  const double x0 = 73.0 / 512, x1 = -33.0 / 8;
  const auto m = rotate_pair("megatron", schedule, Format::bf16(), 2008, 1, x0, x1);
  REQUIRE(m.first == -33.0 / 8);
  REQUIRE(m.second == -41.0 / 512);
  const auto t = rotate_pair("te-fused", schedule, Format::bf16(), 2008, 1, x0, x1);
  REQUIRE(t.first == -33.0 / 8);
  REQUIRE(t.second == -165.0 / 2048);
}

TEST_CASE("llama.cpp: chained product on CPU, powf(theta_scale, k) on CUDA",
          "[framework-presets]") {
  // β = 1e4, D = 128, position 1000, block 8. theta_scale = fp32(10000^(-1/64)) =
  // 14528471/2^24. CPU: θ = 1000, eight times θ ← fp32(θ·theta_scale) → 10362155/32768;
  // cos -16022415/2^25, sin 14740947/2^24. CUDA: inv = fp32(theta_scale^8) = 5305423/2^24,
  // angle = fp32(1000·inv) = 5181077/16384; cos -16021515/2^25, sin 1842649/2^21.
  const std::string schedule = "conventional:base=10000,dim=128";
  const auto cpu = report("llamacpp-cpu", schedule, Format::bf16(), 1000).blocks[8];
  REQUIRE(step_value(cpu, "theta_scale") == 14528471.0 / 16777216);
  REQUIRE(step_value(cpu, "angle") == 10362155.0 / 32768);
  REQUIRE(cpu.cos.to_double() == -16022415.0 / 33554432);  // table fp32
  REQUIRE(cpu.sin.to_double() == 14740947.0 / 16777216);
  const auto cuda = report("llamacpp-cuda", schedule, Format::bf16(), 1000).blocks[8];
  REQUIRE(step_value(cuda, "inv_freq") == 5305423.0 / 16777216);
  REQUIRE(step_value(cuda, "angle") == 5181077.0 / 16384);
  REQUIRE(cuda.cos.to_double() == -16021515.0 / 33554432);
  REQUIRE(cuda.sin.to_double() == 1842649.0 / 2097152);
}

TEST_CASE("jax (Gemma): the angle is position / timescale, no reciprocal", "[framework-presets]") {
  // β = 1e4, D = 256, position 3000, block 9: e = 18/256 = 9/128; timescale = fp32(10000^e)
  // = 16030235/2^23; angle = fp32(3000/timescale) = 12860599/8192 (the product recipe gives
  // 1607575/1024); cos 2610545/2^22, sin -13131483/2^24, kept in fp32.
  const std::string schedule = "conventional:base=10000,dim=256";
  const auto b = report("jax", schedule, Format::bf16(), 3000).blocks[9];
  REQUIRE(step_value(b, "power") == 16030235.0 / 8388608);
  REQUIRE(step_value(b, "angle") == 12860599.0 / 8192);
  REQUIRE(b.cos.to_double() == 2610545.0 / 4194304);
  REQUIRE(b.sin.to_double() == -13131483.0 / 16777216);
  const auto product = report("hf-cpu", schedule, Format::bf16(), 3000).blocks[9];
  REQUIRE(step_value(product, "angle") == 1607575.0 / 1024);
}

TEST_CASE("base 1e6 with inv_freq in fp16: what PyTorch's model.half() gives instead",
          "[framework-presets]") {
  // The buffer computed in fp32 and cast to fp16 (pipeline:inv_freq=fp32>fp16) keeps every
  // block non-zero: block 1 is 0.8056640625 as with the exact base, block 63 is the fp16
  // subnormal 21·2^-24 (fp32(1/fp32(10^(6·126/128))) ≈ 1.2409e-6), where the fp16 power
  // overflows (base exact: blocks 52–63 are 0) or the fp16 base is inf (all blocks but 0
  // are 0; tests/attention/test_pipeline_steps.cpp).
  const Schedule s = parse_schedule("conventional:base=1000000,dim=128");
  const auto rep =
      query_position(s, parse_realisation("pipeline:inv_freq=fp32>fp16", Format::fp16()), 1);
  REQUIRE(step_value(rep.blocks[1], "inv_freq") == 0.8056640625);
  REQUIRE(step_value(rep.blocks[63], "inv_freq") == 21.0 / 16777216);
  for (const auto& b : rep.blocks) {
    INFO("block " << b.block);
    REQUIRE(step_value(b, "inv_freq") > 0);
    REQUIRE(b.constant_flags == 0);
  }
}

TEST_CASE("megatron's eager arithmetic shows under upward rounding", "[framework-presets]") {
  // With nearest rounding hf_eager and theory in the same format agree (rnd(-a) = -rnd(a)),
  // so the arithmetic Megatron's preset names is only visible with a directed rounding. All
  // steps upward (bf16, β = 1e4, D = 128, position 2008, block 1): inv_freq = 7264235/2^23,
  // angle = 14244711/8192, table cos = -249/16384, sin = -255/256. x0 = 73/512, x1 = -33/8:
  // eager y0 = up(up(x0·c) + up(-x1·s)) = -131/32, where theory gives up(up(c·x0) - up(s·x1))
  // = -33/8; y1 = -161/2048 in both.
  const Schedule s = parse_schedule("conventional:base=10000,dim=128");
  const Realisation r =
      parse_realisation(framework_preset("megatron").spec, Format::bf16(), Rounding::upward);
  const auto b = query_position(s, r, 2008).blocks[1];
  REQUIRE(step_value(b, "inv_freq") == 7264235.0 / 8388608);
  REQUIRE(step_value(b, "angle") == 14244711.0 / 8192);
  REQUIRE(b.cos.to_double() == -249.0 / 16384);
  REQUIRE(b.sin.to_double() == -255.0 / 256);
  const RealisedRotation rot = realise(s, r, 2008);
  std::vector<Value> x(128, Value::from_double_exact(0));
  x[1] = Value::from_double_exact(73.0 / 512);
  x[65] = Value::from_double_exact(-33.0 / 8);
  const auto y = apply_rotation(rot, x, r.layout);
  REQUIRE(y[1].to_double() == -131.0 / 32);
  REQUIRE(y[65].to_double() == -161.0 / 2048);
}
