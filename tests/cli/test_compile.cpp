// `ropesim compile` (cli/compile_command.cpp; proofs/compiler/compiler.hpp): the written model runs
// and decides its language (hand-checked words), refusals are one line with exit 2 and no file.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace cli_test;

TEST_CASE("compile -o writes a model that run executes: aΣ* in bf16", "[cli][compile]") {
  const std::string model = temp_path("a_sigma_star.json");
  Run r = run("compile 'P(a & !P true)' --alphabet ab --format bf16 -o " + model);
  REQUIRE(r.code == 0);
  REQUIRE(std::filesystem::exists(model));
  for (const auto& [word, accept] : std::vector<std::pair<std::string, bool>>{
           {"a", true}, {"abba", true}, {"b", false}, {"ba", false}, {"bbbbba", false}}) {
    const Run w = run("run " + model + " --input " + word + " --json");
    REQUIRE(w.code == 0);
    CAPTURE(word);
    CHECK(nlohmann::json::parse(w.out)["accept"] == accept);
  }
  const Run empty = run("run " + model + " --input '' --json");
  REQUIRE(empty.code == 0);
  CHECK(nlohmann::json::parse(empty.out)["accept"] == false);
  std::filesystem::remove(model);
}

TEST_CASE("compile --explain names coordinates; --json reports the certificate", "[cli][compile]") {
  Run r = run("compile 'mod(3,1) & P b' --alphabet ab --format fp16 --explain");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("reads [bos, top] writes [raw:0]") != std::string::npos);
  CHECK(r.out.find("f_large      17.34375") != std::string::npos);
  CHECK(r.out.find("MOD_3^1") != std::string::npos);
  r = run("compile 'P b' --format fp16 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["f_large"] == "17.34375");
  CHECK(j["certified_length"].is_null());  // fp16: h(c) stops changing, every length certified
  CHECK(j["coordinates"][0] == "bos");
  CHECK(j["coordinates"][1] == "top");
}

TEST_CASE("compile refusals: parse error, S, mod(97,0) at fp8e4m3 — one line, exit 2, no file",
          "[cli][compile]") {
  const std::string model = temp_path("refused.json");
  expect_usage_error(run("compile 'P(a &' -o " + model), "column 6");
  CHECK(!std::filesystem::exists(model));
  expect_usage_error(run("compile 'a S b' -o " + model), "S (since) is not in LTL[P,MOD]");
  CHECK(!std::filesystem::exists(model));
  expect_usage_error(run("compile 'mod(97,0)' --format fp8e4m3 -o " + model),
                     "the smallest preset format that compiles it is");
  CHECK(!std::filesystem::exists(model));
  expect_usage_error(run("compile 'a' --alphabet 'a,B' -o " + model), "--alphabet");
  CHECK(!std::filesystem::exists(model));
  Run ok = run("compile 'mod(97,0)' --format fp32 -o " + model);
  CHECK(ok.code == 0);
  CHECK(std::filesystem::exists(model));
  std::filesystem::remove(model);
}

TEST_CASE("run --trace on a compiled model prints residual coordinates by name", "[cli][compile]") {
  const std::string model = temp_path("named.json");
  REQUIRE(run("compile 'P(a & !P true)' --format fp16 -o " + model).code == 0);
  const Run r = run("run " + model + " --input ab --positions eos");
  REQUIRE(r.code == 0);
  // At EOS of "ab": ⊤ holds, P true holds (layer 0 FFN), and the root P(a & !P true) holds.
  CHECK(r.out.find("embedding\n  position 3 EOS  {top=1} (others 0)") != std::string::npos);
  CHECK(r.out.find("f2:P true=1") != std::string::npos);
  CHECK(r.out.find("P(a & !P true)=1") != std::string::npos);
  std::filesystem::remove(model);
}

TEST_CASE(
    "compile --layer-norm: a post-LN model with mirrors that run executes; a refusal writes no "
    "file",
    "[cli][compile][layer-norm]") {
  const std::string model = temp_path("ab_star_ln.json");
  // (ab)* in fp16 with the LayerNorm mirror: 14 pairs (bos top sym:a sym:b + 10 subformula
  // coordinates, by hand from the formula's DAG) and 4 raw coordinates (two MOD heads, the P
  // head, count); ε = 2^-11 = 0.00048828125, γ_r = 2^10 = 1024.
  Run r =
      run("compile 'mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)' --alphabet ab --format fp16 "
          "--layer-norm --json -o " +
          model);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["layer_norm"]["pairs"] == 14);
  CHECK(j["layer_norm"]["raw_coordinates"] == 4);
  CHECK(j["layer_norm"]["raw_scale"] == "0.00048828125");
  CHECK(j["layer_norm"]["raw_gain"] == "1024");
  for (const auto& [word, accept] : std::vector<std::pair<std::string, bool>>{{"", true},
                                                                              {"ab", true},
                                                                              {"abab", true},
                                                                              {"a", false},
                                                                              {"abba", false},
                                                                              {"ba", false}}) {
    const Run w = run("run " + model + " --input '" + word + "' --json");
    REQUIRE(w.code == 0);
    CAPTURE(word);
    CHECK(nlohmann::json::parse(w.out)["accept"] == accept);
  }
  std::filesystem::remove(model);
  // fp8e4m3 has p = 4: d_model 20 > 2^4, so LN's sums are not exact; one line, exit 2, no file.
  expect_usage_error(run("compile 'mod(3,1) & P b' --format fp8e4m3 --layer-norm -o " + model),
                     "d_model 20 > 2^p = 16");
  CHECK(!std::filesystem::exists(model));
  // Without --layer-norm the report says so.
  r = run("compile 'P b' --format fp16 --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["layer_norm"].is_null());
}
