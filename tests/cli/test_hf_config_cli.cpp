// `--schedule hf-config:PATH` from the command line (docs/CLI.md, docs/HF_CONFIG.md): a config
// equal to a conventional schedule gives the same census, a bad config exits 2 with one line.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE("rotations --schedule hf-config:PATH equals the conventional schedule it describes",
          "[cli][hf-config]") {
  const std::string path = temp_path("hf_config.json");
  std::ofstream(path)
      << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_attention_heads": 4,
    "rope_theta": 10000.0, "max_position_embeddings": 2048, "rope_scaling": null})";
  const std::string tail = " --realization hf --format bf16 --positions 3000 --json";
  const Run a = run("rotations --schedule hf-config:" + path + tail);
  const Run b = run("rotations --schedule conventional:base=10000,dim=16" + tail);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  CHECK(ja["schedule"] == "hf-config:" + path);
  ja.erase("schedule");
  jb.erase("schedule");
  CHECK(ja == jb);
  CHECK(ja["distinct"].get<long>() > 1000);
  std::filesystem::remove(path);
}

TEST_CASE("a bad hf-config exits 2 with one line naming the file", "[cli][hf-config]") {
  const std::string path = temp_path("hf_config_bad.json");
  // "su" was the example of an unknown type until ropesim accepted it as transformers does
  // (Phi-3's old spelling of longrope, docs/HF_CONFIG.md); "ntk-by-parts" is no type at all.
  std::ofstream(path)
      << R"({"head_dim": 64, "rope_scaling": {"type": "ntk-by-parts", "factor": 2}})";
  expect_usage_error(run("rotations --schedule hf-config:" + path + " --positions 10"),
                     "unknown rope_scaling type 'ntk-by-parts'");
  expect_usage_error(run("rotations --schedule hf-config:" + path + " --positions 10"), path);
  expect_usage_error(run("rotations --schedule hf-config:/nonexistent/x.json --positions 10"),
                     "/nonexistent/x.json");
  std::filesystem::remove(path);
}
