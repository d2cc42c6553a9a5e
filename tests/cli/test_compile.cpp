// `ropesim compile` (cli/compile_command.cpp; proofs/compiler.hpp): the written model runs and
// decides its language (hand-checked words), refusals are one line with exit 2 and no file.
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

TEST_CASE("compile refusals: parse error, S, mod(97,0) at fp8e4m3 — one line, exit 2, no file", "[cli][compile]") {
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
