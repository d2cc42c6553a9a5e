// Multi-frequency heads: a conventional (multi-frequency) Y^k head is built, run and certified end
// to end. The certified range is the one `horizon` measures for the same schedule (a second,
// separate command path), and the model is right on every word within it (the formula Y a read
// at EOS holds iff the word ends with a).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

bool accepts(const std::string& model, const std::string& word) {
  const Run r = run("run " + model + " --input '" + word + "' --json");
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out)["accept"].get<bool>();
}

/// Every word up to length 4, and 12 random words of lengths up to `longest`.
std::vector<std::string> test_words(std::uint64_t longest) {
  std::vector<std::string> words;
  for (std::size_t n = 1; n <= 4; ++n) {
    for (std::size_t bits = 0; bits < (std::size_t{1} << n); ++bits) {
      std::string w;
      for (std::size_t i = 0; i < n; ++i) w += (bits >> i) & 1 ? 'a' : 'b';
      words.push_back(w);
    }
  }
  std::mt19937_64 rng(7);
  for (int t = 0; t < 12; ++t) {
    std::string w(1 + rng() % longest, 'b');
    for (char& c : w) c = rng() % 2 ? 'a' : 'b';
    words.push_back(w);
  }
  return words;
}

}  // namespace

TEST_CASE("construct offset and compile build a Y^1 head on a conventional schedule",
          "[cli][multi_frequency]") {
  const std::string schedule = "conventional:base=10000,dim=8";
  const Run h =
      run("horizon --schedule " + schedule + " --k 1 --format fp16 --max-length 2000 --json");
  REQUIRE(h.code == 0);
  const auto horizon = nlohmann::json::parse(h.out);
  const auto n_max = horizon["n_max"].get<std::uint64_t>();
  REQUIRE(n_max >= 8);

  const std::string built = temp_path("multi_offset.json");
  const Run c = run("construct offset --schedule " + schedule +
                    " --k 1 --format fp16 --max-length 2000 -o " + built);
  INFO(c.err);
  REQUIRE(c.code == 0);
  CHECK(read_json(built)["_construction"]["n_max"].get<std::uint64_t>() == n_max);

  const std::string compiled = temp_path("multi_compiled.json");
  const Run k =
      run("compile 'Y a' --alphabet ab --format fp16 --schedule " + schedule + " -o " + compiled);
  INFO(k.err);
  REQUIRE(k.code == 0);
  const auto spec = read_json(compiled);
  // The compiler's Y head takes C = auto and the default length limit of horizon; its certified
  // range is what horizon reports for the same head with the default limit.
  const Run hd = run("horizon --schedule " + schedule + " --k 1 --format fp16 --json");
  REQUIRE(hd.code == 0);
  CHECK(spec["_construction"]["certified_length"].get<std::uint64_t>() ==
        nlohmann::json::parse(hd.out)["n_max"].get<std::uint64_t>());
  CHECK(spec["_construction"].dump().find(schedule) != std::string::npos);

  for (const std::string& word : test_words(std::min<std::uint64_t>(n_max, 60))) {
    INFO(word);
    const bool ends_with_a = word.back() == 'a';
    CHECK(accepts(built, word) == ends_with_a);
    CHECK(accepts(compiled, word) == ends_with_a);
  }
  std::filesystem::remove(built);
  std::filesystem::remove(compiled);
}

TEST_CASE("compile --schedule refuses schedules a Y^k head cannot use, in one line",
          "[cli][multi_frequency]") {
  expect_usage_error(run("compile 'Y a' --alphabet ab --format fp16 --schedule nope:x"),
                     "--schedule");
  // construct offset takes horizon's head options: the same one-line refusal, no file.
  const std::string out = temp_path("refused_offset.json");
  expect_usage_error(run("construct offset --schedule nope:x --k 1 --format fp16 -o " + out),
                     "--schedule");
  CHECK_FALSE(std::filesystem::exists(out));
}
