// Defaults that mislead a practitioner, from the command line: compare and
// rotations measure a framework pipeline on YaRN like with like (the attention factor on both
// sides), longrope warns when a run outgrows short_factor, transformers' older rope type
// spellings and PyTorch's dtype names are accepted, a mistyped name gets "did you mean",
// rotate takes a framework preset's accumulation, table bounds reads hf-config files, and the
// long commands show progress on stderr only.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

namespace {

// Transformers' YaRN attention factor of qwen2.5-7b-yarn (factor 4, no mscale):
// _compute_yarn_parameters → get_mscale(4) = 0.1 * math.log(4) + 1.0 in Python floats =
// 1.138629436111989 (CPython 3.11: repr; hex 0x1.237d37fe5d298p+0).
constexpr double kYarnFactor = 1.138629436111989;

std::string write_config(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

// A Phi-3-style longrope config, small: hidden 32 / 4 heads = head_dim 8, rotary_dim 8, four
// frequencies θ_k = 10000^(-k/4), short_factor all 1, long_factor all 2, trained at 16 tokens.
std::string phi3_config(const std::string& type, bool phi3_model_type) {
  return std::string(R"({)") + (phi3_model_type ? R"("model_type": "phi3", )" : "") +
         R"("hidden_size": 32, "num_attention_heads": 4, "rope_theta": 10000.0,
            "max_position_embeddings": 64, "original_max_position_embeddings": 16,
            "rope_scaling": {"type": ")" +
         type + R"(", "short_factor": [1, 1, 1, 1], "long_factor": [2, 2, 2, 2]}})";
}

}  // namespace

TEST_CASE(
    "compare hf on YaRN: the reference carries the attention factor, errors are rounding only",
    "[cli][defaults]") {
  // Position 0, block 0: exact cos = 1, so the reference is s·1 = s. hf computes cos in fp32,
  // multiplies by fp32(s) = 1.13862943649292 (exact product: ×1), and casts to bf16:
  // 1.13862943649292 · 128 = 145.7446 → 146, i.e. 146/128 = 1.140625. Error 1.140625 − s =
  // 1123402597805/562949953421312 = 0.0019955638880109206 (Python fractions), in ulps of bf16 at
  // 1.14 (2^-7): 0.2554321776653978. With the unscaled reference 1 the error would be 0.140625.
  const Run r =
      run("compare --schedule qwen2.5-7b-yarn --realization hf --format bf16 --positions 1 "
          "--blocks 0 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["attention_factor"].is_object());
  CHECK(j["attention_factor"]["realization"] == true);
  CHECK(j["attention_factor"]["against"] == false);
  CHECK(std::stod(j["attention_factor"]["decimal"].get<std::string>()) == kYarnFactor);
  const auto& o = j["overall"];
  CHECK(o["cos"]["absolute"]["value"].get<double>() ==
        Approx(0.0019955638880109206).epsilon(1e-12));
  CHECK(o["sin"]["absolute"]["value"].get<double>() == 0.0);  // sin 0 = 0 exactly, s·0 = 0
  CHECK(o["ulps"]["value"].get<double>() == Approx(0.2554321776653978).epsilon(1e-12));

  // Over positions 0..63 and every block: the realised value is bf16(fp32 steps); the fp32
  // steps are within about 2^-14 of s·cos θi (angles below 64 rad, each fp32 step relative
  // 2^-24), and the bf16 cast adds at most half an ulp of bf16 at |value| < 2, 2^-8. So every
  // error is below 2^-8 + 2^-14 ≈ 0.00397; the factor alone (s − 1 ≈ 0.1386) is far above.
  const Run all = run(
      "compare --schedule qwen2.5-7b-yarn --realization hf --format bf16 --positions 64 --json");
  REQUIRE(all.code == 0);
  const auto ja = nlohmann::json::parse(all.out);
  CHECK(ja["overall"]["cos"]["absolute"]["value"].get<double>() <
        std::ldexp(1.0, -8) + std::ldexp(1.0, -14));
  CHECK(ja["overall"]["sin"]["absolute"]["value"].get<double>() <
        std::ldexp(1.0, -8) + std::ldexp(1.0, -14));

  // The text names the factor on its own line.
  const Run text = run(
      "compare --schedule qwen2.5-7b-yarn --realization hf --format bf16 --positions 1 --blocks 0");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("attention    factor s = ") != std::string::npos);
  CHECK(text.out.find("1.1386294361119891") != std::string::npos);  // %.17g of kYarnFactor

  // Against r1 (no factor): B's cos 1 at position 0 is scaled by s, the same error as above.
  const Run b =
      run("compare --schedule qwen2.5-7b-yarn --realization hf --format bf16 --against r1 "
          "--against-format fp64 "
          "--positions 1 --blocks 0 --json");
  REQUIRE(b.code == 0);
  const auto jb = nlohmann::json::parse(b.out);
  CHECK(jb["attention_factor"]["against"] == false);
  CHECK(jb["overall"]["cos"]["absolute"]["value"].get<double>() ==
        Approx(0.0019955638880109206).epsilon(1e-12));

  // No factor, no line: llama2-7b has no rope scaling.
  const Run plain =
      run("compare --schedule llama2-7b --realization hf --format bf16 --positions 4 --json");
  REQUIRE(plain.code == 0);
  CHECK(nlohmann::json::parse(plain.out)["attention_factor"].is_null());
}

TEST_CASE("rotations --position on YaRN hf: errors in ulps against s·(cos, sin)",
          "[cli][defaults]") {
  // The same entry as above: cos realised 1.140625 against s, 0.2554 ulps (was 18 ulps against 1).
  const Run r = run(
      "rotations --schedule qwen2.5-7b-yarn --realization hf --format bf16 --position 0 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["attention_factor"].is_object());
  const auto& b0 = j["blocks"][0];
  CHECK(b0["exact_cos"].get<double>() == 1.0);
  CHECK(b0["reference_cos"].get<double>() == kYarnFactor);
  CHECK(b0["cos_error_ulps"].get<double>() == Approx(0.2554321776653978).epsilon(1e-12));
}

TEST_CASE("longrope: a run past original_max_position_embeddings on short_factor warns",
          "[cli][defaults]") {
  const std::string path = write_config("phi3_su.json", phi3_config("su", false));
  // Position 20 > 16 = original_max_position_embeddings: transformers' longrope_frequency_update
  // would use long_factor for this sequence (max(position_ids) + 1 = 21 > 16).
  const Run far = run("rotations --schedule hf-config:" + path +
                      " --realization r1 --format fp32 --position 20");
  REQUIRE(far.code == 0);
  CHECK(lines(far.err) == 1);
  CHECK(far.err.find("warning") != std::string::npos);
  CHECK(far.err.find("uses short_factor") != std::string::npos);
  CHECK(far.err.find("transformers uses long_factor") != std::string::npos);
  CHECK(far.err.find("hf-config[seq_len=21]:" + path) != std::string::npos);
  // Within the trained length: no warning.
  const Run near = run("rotations --schedule hf-config:" + path +
                       " --realization r1 --format fp32 --position 15");
  REQUIRE(near.code == 0);
  CHECK(near.err.empty());
  // With seq_len=21 the schedule is long_factor's: block 0 has θ_0 = 1/2, so at position 1 the
  // exact angle is 0.5 (short_factor: 1), and nothing is warned.
  const Run fixed = run("rotations --schedule hf-config[seq_len=21]:" + path +
                        " --realization r1 --format fp32 --position 1 --json");
  REQUIRE(fixed.code == 0);
  CHECK(fixed.err.empty());
  CHECK(nlohmann::json::parse(fixed.out)["blocks"][0]["exact_angle"].get<double>() == 0.5);
  const Run unset = run("rotations --schedule hf-config:" + path +
                        " --realization r1 --format fp32 --position 1 --json");
  CHECK(nlohmann::json::parse(unset.out)["blocks"][0]["exact_angle"].get<double>() == 1.0);
  // compare warns the same way (last position 99 > 15), stdout unchanged by the warning.
  const Run cmp = run("compare --schedule hf-config:" + path +
                      " --realization r1 --format fp32 --positions 100");
  REQUIRE(cmp.code == 0);
  CHECK(cmp.err.find("transformers uses long_factor") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("older rope type spellings are read as transformers reads them", "[cli][defaults]") {
  // configuration_phi3.py Phi3Config._rope_scaling_adjustment: "su" → "longrope", and "yarn"
  // → "longrope" in a phi3 config. All three spellings give the same schedule.
  const std::string su = write_config("rope_su.json", phi3_config("su", false));
  const std::string yarn_phi3 = write_config("rope_yarn_phi3.json", phi3_config("yarn", true));
  const std::string longrope = write_config("rope_longrope.json", phi3_config("longrope", false));
  const std::string tail = " --realization r1 --format fp32 --positions 12 --json";
  const Run a = run("rotations --schedule hf-config:" + su + tail);
  const Run b = run("rotations --schedule hf-config:" + yarn_phi3 + tail);
  const Run c = run("rotations --schedule hf-config:" + longrope + tail);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  REQUIRE(c.code == 0);
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out),
       jc = nlohmann::json::parse(c.out);
  ja.erase("schedule");
  jb.erase("schedule");
  jc.erase("schedule");
  CHECK(ja == jc);
  CHECK(jb == jc);
  // "yarn" outside a phi3 config is YaRN, which has no short_factor: refused with the hint.
  const std::string yarn = write_config("rope_yarn.json", phi3_config("yarn", false));
  expect_usage_error(run("rotations --schedule hf-config:" + yarn + tail), "model_type is phi3");
  for (const auto& p : {su, yarn_phi3, longrope, yarn}) std::filesystem::remove(p);
}

TEST_CASE("PyTorch dtype names are formats", "[cli][defaults]") {
  const std::string tail = " --schedule single:g=1 --realization r2 --positions 40";
  for (const auto& [alias, preset] :
       std::vector<std::pair<std::string, std::string>>{{"bfloat16", "bf16"},
                                                        {"torch.bfloat16", "bf16"},
                                                        {"float16", "fp16"},
                                                        {"half", "fp16"},
                                                        {"torch.float16", "fp16"},
                                                        {"float32", "fp32"},
                                                        {"float", "fp32"},
                                                        {"float64", "fp64"},
                                                        {"double", "fp64"},
                                                        {"float8_e4m3fn", "fp8e4m3"},
                                                        {"float8_e5m2", "fp8e5m2"}}) {
    INFO(alias);
    const Run a = run("compare --format " + alias + tail);
    const Run p = run("compare --format " + preset + tail);
    REQUIRE(a.code == 0);
    CHECK(a.out == p.out);  // the format keeps the preset's name, so every byte agrees
  }
}

TEST_CASE("a mistyped name gets the nearest names", "[cli][defaults]") {
  expect_usage_error(
      run("compare --schedule single:g=1 --realization r1 --positions 4 --format bfloat61"),
      "did you mean 'bfloat16'?");
  // fp61 is one transposition from fp16 and one substitution from fp64: both are named.
  const Run fp61 =
      run("compare --schedule single:g=1 --realization r1 --positions 4 --format fp61");
  expect_usage_error(fp61, "did you mean 'fp64' or 'fp16'?");
  expect_usage_error(run("compare --schedule lama2-7b --realization r1 --positions 4"),
                     "did you mean 'llama2-7b'?");
  expect_usage_error(run("compare --schedule single:g=1 --realization hf-cdua --positions 4"),
                     "did you mean 'hf-cuda'?");
  expect_usage_error(run("compare --schedule singel:g=1 --realization r1 --positions 4"),
                     "did you mean 'single'?");
  expect_usage_error(
      run("compare --schedule single:g=1 --realization r1 --positions 4 --rounding nearest-evn"),
      "did you mean 'nearest-even'?");
  expect_usage_error(run("compar --schedule single:g=1"), "did you mean 'compare'?");
  expect_usage_error(run("rotate --schedule single:g=1 --seed 1 --offset 1 --position 3 "
                         "--summation wide-acumulator"),
                     "did you mean 'wide-accumulator'?");
  expect_usage_error(
      run("compare --schedule single:g=1 --realization r1 --positions 4 --engine fsat"),
      "did you mean 'fast'?");
  // Far from every name: no suggestion, the accepted list as before.
  const Run far =
      run("compare --schedule single:g=1 --realization r1 --positions 4 --format zzzzzzzz");
  CHECK(far.err.find("did you mean") == std::string::npos);
  CHECK(far.err.find("accepted:") != std::string::npos);
}

TEST_CASE("rotate with a framework preset accumulates the score in fp32 and says so",
          "[cli][defaults]") {
  const std::string args =
      "rotate --schedule llama2-7b --format bf16 --seed 1 --offset 3 --positions 100,1000,10000";
  const Run hf = run(args + " --realization hf");
  REQUIRE(hf.code == 0);
  CHECK(hf.out.find("summation wide-accumulator (accumulator fp32)") != std::string::npos);
  CHECK(hf.out.find("accumulation hf's accumulation") != std::string::npos);
  // The same scores as asking for it: the default is that accumulation, nothing else.
  const Run asked =
      run(args + " --realization hf --summation wide-accumulator --accumulator fp32 --json");
  const Run implied = run(args + " --realization hf --json");
  REQUIRE(asked.code == 0);
  auto ja = nlohmann::json::parse(asked.out), ji = nlohmann::json::parse(implied.out);
  CHECK(ji["accumulator"] == "fp32");
  CHECK(ja["scores"] == ji["scores"]);
  CHECK(ja["drift"] == ji["drift"]);
  // r1 is no framework: sequential in F, THEORY §2.1's canonical order, as before.
  const Run r1 = run(args + " --realization r1 --json");
  REQUIRE(r1.code == 0);
  CHECK(nlohmann::json::parse(r1.out)["summation"] == "sequential");
  // In fp32 the fp32 accumulator is F itself: wide-accumulator and sequential round the same
  // products and partial sums into the same format, so every score agrees bit for bit.
  const std::string args32 =
      "rotate --schedule llama2-7b --format fp32 --seed 1 --offset 3 --positions 100,1000 --json";
  const Run wide = run(args32 + " --realization hf");
  const Run seq = run(args32 + " --realization hf --summation sequential");
  REQUIRE(wide.code == 0);
  REQUIRE(seq.code == 0);
  CHECK(nlohmann::json::parse(wide.out)["scores"] == nlohmann::json::parse(seq.out)["scores"]);
}

TEST_CASE("table bounds --presets takes hf-config files", "[cli][defaults]") {
  // llama2-7b's published numbers (data/models.json): head_dim 128 (4096 / 32), rope_theta
  // 10000, max_position_embeddings 4096. The file gives the preset's row, under its own name.
  const std::string path = write_config(
      "llama2_config.json",
      R"({"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000.0, "max_position_embeddings": 4096})");
  const std::string tail =
      " --kind critical-dim --realizations r1 --formats bf16 --positions 64 --json";
  const Run file = run("table bounds --presets hf-config:" + path + tail);
  const Run preset = run("table bounds --presets llama2-7b" + tail);
  REQUIRE(file.code == 0);
  REQUIRE(preset.code == 0);
  auto jf = nlohmann::json::parse(file.out), jp = nlohmann::json::parse(preset.out);
  REQUIRE(jf.size() == 1);
  REQUIRE(jp.size() == 1);
  CHECK(jf[0]["preset"] == "hf-config:" + path);
  jf[0].erase("preset");
  jp[0].erase("preset");
  CHECK(jf == jp);
  std::filesystem::remove(path);
}

TEST_CASE("--progress writes progress to stderr only; stdout is byte-identical",
          "[cli][defaults]") {
  const std::string args =
      "compare --schedule llama2-7b --realization hf --format bf16 --positions 200";
  const Run quiet = run(args);
  const Run forced = run(args + " --progress");
  const Run off = run(args + " --no-progress");
  REQUIRE(quiet.code == 0);
  REQUIRE(forced.code == 0);
  CHECK(forced.out == quiet.out);
  CHECK(off.out == quiet.out);
  CHECK(quiet.err.empty());  // stderr is not a terminal here: nothing by default
  CHECK(off.err.empty());
  // Forced off a terminal: whole lines, the first at once and a final "done", bounded.
  CHECK(forced.err.find("compare hf") != std::string::npos);
  CHECK(forced.err.find("done\n") != std::string::npos);
  CHECK(lines(forced.err) >= 2);
  CHECK(lines(forced.err) <= 102);
  CHECK(forced.err.back() == '\n');
  expect_usage_error(run(args + " --progress --no-progress"), "--no-progress");

  // The other long commands take the same flags and keep stdout.
  const std::string plot_out = temp_path("progress_error.svg");
  const Run plot =
      run("plot error --schedule single:g=1 --positions 50 --progress --out " + plot_out);
  if (plot.code == 0) {  // gnuplot may be missing; the flag is still accepted
    CHECK(plot.err.find("plot error") != std::string::npos);
  }
  std::filesystem::remove(plot_out);
  const Run compile_p = run("compile 'P a' --alphabet ab --format fp16 --certify 1000 --progress");
  const Run compile_q = run("compile 'P a' --alphabet ab --format fp16 --certify 1000");
  REQUIRE(compile_p.code == 0);
  CHECK(compile_p.out == compile_q.out);
  CHECK(compile_q.err.empty());
}

TEST_CASE("sweep --progress: lines in the log, and its shards still merge", "[cli][defaults]") {
  const std::string base =
      "sweep --models llama2-7b,phi-2 --formats bf16 --realizations r1 --positions 256";
  const std::string a = temp_path("progress_shard_1.csv"), b = temp_path("progress_shard_2.csv"),
                    merged = temp_path("progress_merged.csv"),
                    whole = temp_path("progress_whole.csv");
  const Run one = run(base + " --shard 1/2 --progress --out " + a);
  const Run two = run(base + " --shard 2/2 --quiet --out " + b);
  REQUIRE(one.code == 0);
  REQUIRE(two.code == 0);
  CHECK(one.err.find("sweep") != std::string::npos);
  CHECK(one.err.find("done\n") != std::string::npos);
  CHECK(two.err.empty());
  const Run m = run("merge " + a + " " + b + " --out " + merged);
  INFO(m.err);
  CHECK(m.code == 0);
  for (const auto& p : {a, b, merged, whole}) std::filesystem::remove(p);
}
