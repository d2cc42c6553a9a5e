// `ropesim experiment length`. Expected values come from elsewhere: the
// certified length from `compile --json` (the horizon scan), the theorems (exact up to the
// certified length, Cor 4.1; periodic MOD heads exact at every length, T5), and a second path
// for the accuracy past the certificate: the same words run one by one through `ropesim run`
// instead of the prefix oracle.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

namespace {

/// Word w of the experiment (proofs/length_experiment.hpp): letters drawn from mt19937_64
/// seeded with seed + w.
std::string experiment_word(std::uint64_t seed, std::size_t w, std::size_t length,
                            const std::string& alphabet) {
  std::mt19937_64 rng(seed + w);
  std::uniform_int_distribution<std::size_t> letter(0, alphabet.size() - 1);
  std::string word(length, ' ');
  for (char& c : word) c = alphabet[letter(rng)];
  return word;
}

/// Offset-aliasing word a of length L for `Y a` on single:g=1 (proofs/length_experiment.hpp),
/// rebuilt here: a random word from mt19937_64 seeded with seed ^ (0x9E3779B97F4A7C15 +
/// L·1000003 + a), then the letters at t − n, for the three n ≤ t − 1 with the largest cos(n)
/// (std::cos here; the smaller n on ties), made different from the letter at t = L (k = 1).
std::string aliasing_word(std::uint64_t seed, std::uint64_t L, std::size_t a) {
  std::mt19937_64 rng(seed ^ (0x9E3779B97F4A7C15ULL + L * 1000003ULL + a));
  std::uniform_int_distribution<std::size_t> letter(0, 1);
  std::string word(L, ' ');
  for (char& c : word) c = "ab"[letter(rng)];
  const std::uint64_t t = L;
  std::vector<std::pair<double, std::uint64_t>> by_score;
  for (std::uint64_t n = 1; n + 1 <= t; ++n) by_score.emplace_back(-std::cos(double(n)), n);
  std::sort(by_score.begin(), by_score.end());
  for (std::size_t i = 0; i < 3 && i < by_score.size(); ++i)
    word[t - by_score[i].second - 1] = word[t - 1] == 'a' ? 'b' : 'a';
  return word;
}

nlohmann::json rows_of(const nlohmann::json& j, const std::string& schedule,
                       const std::string& format) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : j["rows"]) {
    if (row["schedule"] == schedule && row["format"] == format) out.push_back(row);
  }
  return out;
}

}  // namespace

TEST_CASE("experiment length: a conventional Y a head is exact up to its certified length",
          "[cli][experiment]") {
  const Run compiled = run("compile 'Y a' --alphabet ab --format fp16 --json");
  REQUIRE(compiled.code == 0);
  const auto certified =
      nlohmann::json::parse(compiled.out)["certified_length"].get<std::uint64_t>();
  REQUIRE(certified >= 10);
  const std::string lengths = "1.." + std::to_string(certified) + ",60,100";
  const Run r = run("experiment length 'Y a' --alphabet ab --format fp16 --lengths " + lengths +
                    " --words 6 --seed 3 --json --no-progress");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["series"].size() == 1);
  CHECK(j["series"][0]["certified_length"] == certified);
  const auto rows = rows_of(j, "single:g=1", "fp16");
  REQUIRE(rows.size() == certified + 2);
  for (const auto& row : rows) {
    CHECK(row["words"] == 6);
    CHECK(row["certified_length"] == certified);
    CHECK(row["aliasing_words"] == 2);
    if (row["length"].get<std::uint64_t>() <= certified) {
      CHECK(row["accuracy"] == 1.0);
      CHECK(row["aliasing_right"] == 2);  // Cor 4.1 holds for every word, aliasing ones too
    }
  }
  // The longest length with every word right is at least the certified length (Cor 4.1).
  CHECK(j["series"][0]["longest_all_right"].get<std::uint64_t>() >= certified);

  // Past the certificate: recount with `ropesim run` on the same words (a second path).
  const Run m = run("compile 'Y a' --alphabet ab --format fp16 -o " + temp_path("exp_ya.json"));
  REQUIRE(m.code == 0);
  for (const std::uint64_t length : {60, 100}) {
    std::size_t correct = 0;
    for (std::size_t w = 0; w < 6; ++w) {
      const std::string word = experiment_word(3, w, 100, "ab").substr(0, length);
      const Run one = run("run " + temp_path("exp_ya.json") + " --input " + word + " --json");
      REQUIRE(one.code == 0);
      const bool accept = nlohmann::json::parse(one.out)["accept"].get<bool>();
      correct += accept == (word.back() == 'a') ? 1 : 0;  // Y a at EOS: the last letter is a
    }
    const auto& row = rows[certified + (length == 60 ? 0 : 1)];
    CHECK(row["length"] == length);
    CHECK(row["correct"] == correct);
    // The offset-aliasing words, rebuilt and run one by one.
    std::size_t aliasing_right = 0;
    for (std::size_t a = 0; a < 2; ++a) {
      const std::string word = aliasing_word(3, length, a);
      const Run one = run("run " + temp_path("exp_ya.json") + " --input " + word + " --json");
      REQUIRE(one.code == 0);
      const bool accept = nlohmann::json::parse(one.out)["accept"].get<bool>();
      aliasing_right += accept == (word.back() == 'a') ? 1 : 0;
    }
    CHECK(row["aliasing_right"] == aliasing_right);
  }
}

TEST_CASE("experiment length: periodic MOD heads are exact at every length, in every format",
          "[cli][experiment]") {
  // (ab)* (RoPE-X Prop 3.2) compiled with periodic tables: accuracy 1 at lengths 1..80 in bf16,
  // fp16 and fp32. The MOD heads need no certificate; the P head's is unbounded where its sums
  // stagnate (bf16, fp16) and is the checked limit --certify = 10^4 otherwise (fp32), past 80.
  const Run r = run(
      "experiment length 'mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)' --alphabet ab "
      "--format bf16 --format fp16 --format fp32 --lengths 1..80 --words 8 --json --no-progress");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["series"].size() == 3);
  for (const auto& s : j["series"]) {
    CHECK((s["certified_length"].is_null() || s["certified_length"].get<std::uint64_t>() >= 80));
    CHECK(s["longest_all_right"] == 80);
  }
  CHECK(j["rows"].size() == 3 * 80);
  for (const auto& row : j["rows"]) {
    CHECK(row["accuracy"] == 1.0);
    CHECK(row["aliasing_words"] == 0);  // no Y^k: no offset-aliasing words
  }
}

TEST_CASE("experiment length: bad input is one line and exit 2", "[cli][experiment]") {
  expect_usage_error(run("experiment length 'Y a' --lengths 5,3"), "--lengths");
  expect_usage_error(run("experiment length 'Y a' --lengths 0..4"), "--lengths");
  expect_usage_error(run("experiment length 'Y a' --lengths 1,,2"), "--lengths");
  expect_usage_error(run("experiment length 'Y a' --format fp16 --format fp16"), "--format");
  expect_usage_error(run("experiment length 'Y a' --schedule nope:1"), "--schedule");
  expect_usage_error(run("experiment length 'Y a' --alphabet aB"), "--alphabet");
  expect_usage_error(run("experiment length 'Y a' --words 0"), "--words");
  expect_usage_error(run("experiment length 'Y a' --adversarial -1"), "--adversarial");
  expect_usage_error(run("experiment length 'Y a' --adversarial 10001"), "--adversarial");
  expect_usage_error(run("experiment length 'Y a' --lengths 1000000 --words 100000"), "--lengths");
  // plot length shares the options: the same refusal before gnuplot runs, no figure.
  const std::string svg = temp_path("refused_length.svg");
  expect_usage_error(run("plot length 'Y a' --lengths 5,3 --out " + svg), "--lengths");
  CHECK_FALSE(std::filesystem::exists(svg));
}
