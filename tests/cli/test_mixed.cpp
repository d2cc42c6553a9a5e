// `ropesim run` on mixed-format heads (which step overflowed, pytorch #60939) and
// `ropesim accumulate` (4096 terms in an 11-bit accumulator; values from
// tests/derivations/accumulator_values.py).
#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.hpp"

using namespace cli_test;

namespace {
const std::string examples = std::string(ROPESIM_SOURCE_DIR) + "/examples/";
}

TEST_CASE("run names the step that overflowed and the step that made the NaN",
          "[cli][run][mixed]") {
  Run r = run("run " + examples + "mixed_fp16_overflow.json --input ab");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("overflow first at layer 0, position 2, head 0: q·k accumulation (fp16)\n") !=
        std::string::npos);
  CHECK(r.out.find("invalid  first at layer 0, position 2, head 0: softmax subtraction (fp16)\n") !=
        std::string::npos);
  CHECK(r.out.find("verdict  reject") != std::string::npos);
  r = run("run " + examples + "mixed_fp16_overflow.json --input bb");
  CHECK(r.out.find("overflow none\ninvalid  none\n") != std::string::npos);
  r = run("run " + examples + "mixed_fp16_overflow.json --input ab --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["first_overflow"]["step"] == "q·k accumulation");
  CHECK(j["first_overflow"]["position"] == 2);
  CHECK(j["first_invalid"]["step"] == "softmax subtraction");
  // A model without formats prints neither line nor key (its output is unchanged).
  r = run("run " + examples + "offset_g1_k2_fp16.json --input ab --json");
  CHECK(r.out.find("first_overflow") == std::string::npos);
  r = run("run " + examples + "mixed_fp8_promoted.json --input ab");
  CHECK(r.out.find("verdict  accept") != std::string::npos);
}

TEST_CASE("a malformed formats block: one line naming the file and the JSON path, exit 2",
          "[cli][run][mixed]") {
  const std::string path = temp_path("mixed_bad.json");
  {
    std::ofstream out(path);
    out << R"({"ropesim_model": 1, "policy": {"format": "fp32"}, "d_model": 1, "alphabet": ["a"],
      "embedding": {"bos": [1], "eos": [1], "symbols": {"a": [1]}},
      "layers": [{"heads": [{"head_dim": 1, "value_dim": 1, "output": [[1]],
                             "formats": {"score_accumulator": {"format": "fp16", "promote_every": 0, "promote_to": "fp32"}}}]}],
      "classifier": {"weights": [1]}})";
  }
  expect_usage_error(
      run("run " + path + " --input a"),
      "layers[0].heads[0].formats.score_accumulator.promote_every: must be between 1 and");
  std::filesystem::remove(path);
}

TEST_CASE("accumulate: 4096 weights, 11 bits against promotion every 128 into fp32",
          "[cli][mixed]") {
  Run r = run("accumulate");
  REQUIRE(r.code == 0);
  // accumulator_values.py: max |Δα| 0.0571275 (promoted) and 0.0569515 (fp32) against 11 bits.
  CHECK(r.out.find("max |weight difference| p=11,e=8/128>fp32 vs p=11,e=8: 0.0571275\n") !=
        std::string::npos);
  CHECK(r.out.find("max |weight difference| fp32 vs p=11,e=8: 0.0569515\n") != std::string::npos);
  r = run("accumulate --json --accumulator p=11,e=8 --accumulator \"p=11,e=8/128>fp32\"");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["weights"][0] == "0.7055737972259521484375");  // 0x1.6940f8p-1
  CHECK(j["rows"][1]["accumulator"] == "p=11,e=8/128>fp32");
  expect_usage_error(run("accumulate --accumulator \"fp16/0>fp32\""), "--accumulator");
  expect_usage_error(run("accumulate --accumulator fp99"), "--accumulator");
  expect_usage_error(run("accumulate --terms 0"), "--terms");
  expect_usage_error(run("accumulate --keys 5000"), "--keys");
}
