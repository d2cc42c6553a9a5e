// The certified length in use: past the certified length a model file records, `run` and `classify
// --model` say so in one line on stderr; stdout and the exit code are unchanged.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE("run warns once on stderr when the input is longer than the recorded certified length",
          "[cli][certificate]") {
  // Y^1 a on the single frequency g = 1 in fp16: the construction records its certified range
  // N_max^(1) (43 with C = 2096, docs/tables/horizon.md; read back from the file here).
  const std::string model = temp_path("edge_offset.json");
  const Run built = run("construct offset --g 1 --k 1 --format fp16 -o " + model);
  REQUIRE(built.code == 0);
  std::ifstream in(model);
  const auto spec = nlohmann::json::parse(in);
  const auto n_max = spec["_construction"]["n_max"].get<std::uint64_t>();
  REQUIRE(n_max >= 2);
  const std::string at_limit(n_max, 'a');
  const std::string past_limit(n_max + 1, 'a');

  const Run inside = run("run " + model + " --input " + at_limit);
  REQUIRE(inside.code == 0);
  CHECK(inside.err.empty());

  const Run past = run("run " + model + " --input " + past_limit);
  REQUIRE(past.code == 0);
  CHECK(lines(past.err) == 1);
  CHECK(past.err.find("warning: the input has " + std::to_string(n_max + 1) +
                      " symbols, more than the certified length " + std::to_string(n_max)) !=
        std::string::npos);
  // stdout is what it would be without the certificate: the same model run with its format
  // given again (an override drops the certificate, so no warning).
  const Run overridden = run("run " + model + " --format fp16 --input " + past_limit);
  REQUIRE(overridden.code == 0);
  CHECK(overridden.err.empty());
  CHECK(overridden.out == past.out);
  std::filesystem::remove(model);
}

TEST_CASE("classify --model warns when its test words pass the certified length",
          "[cli][certificate]") {
  const std::string model = temp_path("edge_offset_classify.json");
  REQUIRE(run("construct offset --g 1 --k 1 --format fp16 -o " + model).code == 0);
  // Random words of length 50 > N_max = 43: one warning line.
  const Run past = run("classify --model " + model +
                       " --random-words 2 --random-length 50 --exhaustive-length 4");
  INFO(past.err);
  CHECK(past.err.find("warning: the extraction tests words of up to 50 symbols") !=
        std::string::npos);
  // Within the certificate (length 8, exhaustive 4): no warning.
  const Run inside = run("classify --model " + model +
                         " --random-words 5 --random-length 8 --exhaustive-length 4");
  INFO(inside.err);
  CHECK(inside.err.find("warning") == std::string::npos);
  std::filesystem::remove(model);
}

TEST_CASE("a refused Y^k formula lists the presets that compile it by certified length",
          "[cli][certificate]") {
  // fp16 certifies Y^1 a only to 43 (docs/tables/horizon.md), so Y^50 a is refused there. The
  // hint names every preset that compiles it with its certified length, longest first; each
  // number is checked against compile --json in that preset (a second path).
  const Run r = run("compile 'Y^50 a' --alphabet ab --format fp16");
  REQUIRE(r.code == 2);
  const std::string marker = "by certified length: ";
  const std::size_t at = r.err.find(marker);
  REQUIRE(at != std::string::npos);
  std::string list = r.err.substr(at + marker.size());
  list = list.substr(0, list.find('\n'));
  std::uint64_t previous = UINT64_MAX;
  std::size_t listed = 0;
  for (std::size_t start = 0; start < list.size();) {
    const std::size_t open = list.find(" (", start), close = list.find(')', open);
    REQUIRE(open != std::string::npos);
    REQUIRE(close != std::string::npos);
    const std::string preset = list.substr(start, open - start);
    std::string value = list.substr(open + 2, close - open - 2);
    // ">= 2000": the hint's trial scans stop at 2000 positions (a full fp64 scan takes ~30 s).
    const bool at_cap = value.rfind(">= ", 0) == 0;
    if (at_cap) value = value.substr(3);
    const std::uint64_t length = value == "unbounded" ? UINT64_MAX : std::stoull(value);
    CHECK(length <= previous);
    previous = length;
    if (at_cap) {
      CHECK(length == 2000);
    } else {
      const Run c = run("compile 'Y^50 a' --alphabet ab --format " + preset + " --json");
      INFO(preset << " " << c.err);
      REQUIRE(c.code == 0);
      const auto certified = nlohmann::json::parse(c.out)["certified_length"];
      CHECK((certified.is_null() ? UINT64_MAX : certified.get<std::uint64_t>()) == length);
    }
    ++listed;
    start = close + 1;
    if (start < list.size() && list.compare(start, 2, ", ") == 0) start += 2;
  }
  CHECK(listed >= 2);
}
