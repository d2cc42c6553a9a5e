// `ropesim experiment length` and `plot length`. Expected values come from elsewhere: the
// certified length from `compile --json` (the horizon scan), the theorems (exact up to the
// certified length, Cor 4.1; periodic MOD heads exact at every length, T5), the languages'
// sizes by hand ((ab)*: one member at each even length; Y a: the 2^(n−1) words ending in a),
// and a second path for the accuracy past the certificate: the same words, rebuilt here from
// the documented draw, run one by one through `ropesim run` instead of the prefix oracle.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

namespace {

/// Word w of side s (0 members, 1 non-members) of length n ≥ 2 for `Y a` over {a, b}
/// (proofs/experiments/length_experiment.hpp), rebuilt by hand: the side has 2^(n−1) words, those
/// ending in a (members) or b, so the draw is exhaustive only for n ≤ `words`... never at the
/// lengths used here. The generator is mt19937_64 seeded with seed + 0x9E3779B97F4A7C15·(2n + s); a
/// rank below 2^(n−1) takes ⌈(n−1)/64⌉ outputs, most significant first, the leading one cut
/// to the remaining bits, and every such number is below 2^(n−1) (no rejection). The word of
/// rank r in lexicographic order: the n − 1 bits of r, most significant first (0 = a, 1 = b),
/// then the side's last letter.
std::vector<std::string> y_a_side_words(std::uint64_t seed, std::uint64_t n, int s,
                                        std::size_t words) {
  std::mt19937_64 rng(seed + 0x9E3779B97F4A7C15ULL * (2 * n + std::uint64_t(s)));
  const std::uint64_t bits = n - 1;
  std::vector<std::string> out;
  for (std::size_t w = 0; w < words; ++w) {
    std::string word;
    for (std::uint64_t left = bits; left > 0;) {
      const std::uint64_t take = left % 64 == 0 ? 64 : left % 64;  // the leading digit first
      const std::uint64_t digit = take == 64 ? rng() : rng() & ((std::uint64_t{1} << take) - 1);
      for (std::uint64_t b = take; b-- > 0;) word += (digit >> b) & 1 ? 'b' : 'a';
      left -= take;
    }
    out.push_back(word + (s == 0 ? 'a' : 'b'));
  }
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The y value of the first row of data block `name` in a gnuplot script ("$S0 << EOD" then
/// "x y" lines).
double first_value(const std::string& script, const std::string& name) {
  const std::string head = "$" + name + " << EOD\n";
  const std::size_t at = script.find(head);
  REQUIRE(at != std::string::npos);
  std::istringstream row(script.substr(at + head.size()));
  double x = 0, y = 0;
  row >> x >> y;
  return y;
}

bool run_accepts(const std::string& model, const std::string& word) {
  const Run one = run("run " + model + " --input " + word + " --json");
  REQUIRE(one.code == 0);
  return nlohmann::json::parse(one.out)["accept"].get<bool>();
}

/// Offset-aliasing word a of length L for `Y a` on single:g=1
/// (proofs/experiments/length_experiment.hpp), rebuilt here: a random word from mt19937_64 seeded
/// with seed ^ (0x9E3779B97F4A7C15 + L·1000003 + a), then the letters at t − n, for the three n ≤ t
/// − 1 with the largest cos(n) (std::cos here; the smaller n on ties), made different from the
/// letter at t = L (k = 1).
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
                    " --words 3 --seed 3 --json --no-progress");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["series"].size() == 1);
  CHECK(j["series"][0]["certified_length"] == certified);
  const auto rows = rows_of(j, "single:g=1", "fp16");
  REQUIRE(rows.size() == certified + 2);
  for (const auto& row : rows) {
    const auto n = row["length"].get<std::uint64_t>();
    // 2^(n−1) words per side: every word once while that is at most 3 (n ≤ 2), else 3 drawn.
    const std::size_t per_side = n == 1 ? 1 : n == 2 ? 2 : 3;
    CHECK(row["members"] == per_side);
    CHECK(row["nonmembers"] == per_side);
    CHECK(row["members_exhaustive"] == (n <= 2));
    CHECK(row["members_empty"] == false);
    CHECK(row["nonmembers_empty"] == false);
    CHECK(row["aliasing_words"] == 2);
    CHECK(row["words"] == 2 * per_side + 2);
    CHECK(row["certified_length"] == certified);
    if (n <= certified) {
      CHECK(row["accuracy"] == 1.0);
      CHECK(row["balanced_accuracy"] == 1.0);
      CHECK(row["aliasing_right"] == 2);  // Cor 4.1 holds for every word, aliasing ones too
    }
  }
  // The longest length with every word right is at least the certified length (Cor 4.1).
  CHECK(j["series"][0]["longest_all_right"].get<std::uint64_t>() >= certified);

  // Past the certificate: recount with `ropesim run` on the same words (a second path).
  const std::string model = temp_path("exp_ya.json");
  REQUIRE(run("compile 'Y a' --alphabet ab --format fp16 -o " + model).code == 0);
  for (const std::uint64_t length : {60, 100}) {
    std::size_t members_right = 0, nonmembers_right = 0;
    for (const std::string& word : y_a_side_words(3, length, 0, 3))
      members_right += run_accepts(model, word) ? 1 : 0;
    for (const std::string& word : y_a_side_words(3, length, 1, 3))
      nonmembers_right += run_accepts(model, word) ? 0 : 1;
    // The offset-aliasing words, rebuilt and run one by one.
    std::size_t aliasing_right = 0;
    for (std::size_t a = 0; a < 2; ++a) {
      const std::string word = aliasing_word(3, length, a);
      aliasing_right += run_accepts(model, word) == (word.back() == 'a') ? 1 : 0;
    }
    const auto& row = rows[certified + (length == 60 ? 0 : 1)];
    REQUIRE(row["length"] == length);
    CHECK(row["members_right"] == members_right);
    CHECK(row["nonmembers_right"] == nonmembers_right);
    CHECK(row["aliasing_right"] == aliasing_right);
    CHECK(row["correct"] == members_right + nonmembers_right + aliasing_right);
    CHECK(row["accuracy_members"].get<double>() == Approx(members_right / 3.0).margin(1e-6));
    CHECK(row["balanced_accuracy"].get<double>() ==
          Approx((members_right + nonmembers_right) / 6.0).margin(1e-6));
    CHECK(row["accuracy"].get<double>() ==
          Approx((members_right + nonmembers_right + aliasing_right) / 8.0).margin(1e-6));
  }
}

TEST_CASE("experiment length: members of the star-free (ab)* expose the model past length 43",
          "[cli][experiment]") {
  // Issue 32's done-when: (ab)* without MOD (first letter a, last b, no aa, no bb; Y heads on
  // single:g=1) in fp16 is certified to 43. Uniform random words hold almost no member; the
  // balanced words hold the only member of each even length, (ab)^(n/2), and none at odd
  // lengths (both by hand). Past 43 the member (ab)^22 is rejected: `ropesim run` says so.
  const std::string formula = "'!P(b & !P true) & !P(a & Y a) & !P(b & Y b) & (Y b | !P true)'";
  const Run compiled = run("compile " + formula + " --alphabet ab --format fp16 --json");
  REQUIRE(compiled.code == 0);
  const auto certified =
      nlohmann::json::parse(compiled.out)["certified_length"].get<std::uint64_t>();
  REQUIRE(certified == 43);
  const Run r = run("experiment length " + formula +
                    " --alphabet ab --format fp16 --lengths 1..44 --words 3 --json --no-progress");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto rows = rows_of(j, "single:g=1", "fp16");
  REQUIRE(rows.size() == 44);
  for (const auto& row : rows) {
    const auto n = row["length"].get<std::uint64_t>();
    INFO("length " << n);
    CHECK(row["members_empty"] == (n % 2 == 1));
    CHECK(row["members"] == (n % 2 == 0 ? 1 : 0));
    CHECK(row["members_exhaustive"] == (n % 2 == 0));
    // 2^n − [n even] non-members: every one at n = 1 (2) and n = 2 (3), else 3 drawn.
    CHECK(row["nonmembers"] == (n == 1 ? 2 : 3));
    CHECK(row["nonmembers_exhaustive"] == (n <= 2));
    if (n % 2 == 1) CHECK(row["accuracy_members"].is_null());
    if (n <= certified) {
      if (n % 2 == 0) CHECK(row["accuracy_members"] == 1.0);
      CHECK(row["accuracy_nonmembers"] == 1.0);
      CHECK(row["balanced_accuracy"] == 1.0);
    }
  }
  std::string ab22;
  for (int i = 0; i < 22; ++i) ab22 += "ab";
  const std::string model = temp_path("exp_ab_star_free.json");
  REQUIRE(run("compile " + formula + " --alphabet ab --format fp16 -o " + model).code == 0);
  const bool accepted = run_accepts(model, ab22);
  CHECK_FALSE(accepted);  // the observation, by a second path
  CHECK(rows[43]["accuracy_members"] == (accepted ? 1.0 : 0.0));
  CHECK(rows[43]["accuracy_members"].get<double>() < 1.0);
  CHECK(rows[43]["balanced_accuracy"].get<double>() < 1.0);
  CHECK(j["series"][0]["longest_all_right"].get<std::uint64_t>() <= certified);
  // The text output names the empty sides.
  const Run text = run("experiment length " + formula +
                       " --alphabet ab --format fp16 --lengths 1..6 --words 2 --no-progress");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("no member of the language at length 1,3,5") != std::string::npos);
}

TEST_CASE("experiment length: periodic MOD heads are exact at every length, in every format",
          "[cli][experiment]") {
  // (ab)* (RoPE-X Prop 3.2) compiled with periodic tables: accuracy 1 at lengths 1..80 in bf16,
  // fp16 and fp32. The MOD heads need no certificate; the P head's is unbounded where its sums
  // stagnate (bf16, fp16) and is the checked limit --certify = 10^4 otherwise (fp32), past 80.
  const Run r = run(
      "experiment length 'mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)' --alphabet ab "
      "--format bf16 --format fp16 --format fp32 --lengths 1..80 --words 4 --json --no-progress");
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
    CHECK(row["balanced_accuracy"] == 1.0);
    CHECK(row["members"] == (row["length"].get<int>() % 2 == 0 ? 1 : 0));
    CHECK(row["aliasing_words"] == 0);  // no Y^k: no offset-aliasing words
  }
}

TEST_CASE("experiment length: Σ* has no non-member; the balanced accuracy is the members'",
          "[cli][experiment]") {
  const Run r =
      run("experiment length 'true' --alphabet ab --lengths 1..5 --words 2 --json "
          "--no-progress");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);  // kept alive for the loop
  REQUIRE(j["rows"].size() == 5);
  for (const auto& row : j["rows"]) {
    CHECK(row["nonmembers_empty"] == true);
    CHECK(row["nonmembers"] == 0);
    CHECK(row["accuracy_nonmembers"].is_null());
    CHECK(row["balanced_accuracy"] == row["accuracy_members"]);
  }
  const Run text = run("experiment length 'true' --alphabet ab --lengths 1..5 --no-progress");
  CHECK(text.out.find("no non-member of the language at length 1,2,3,4,5") != std::string::npos);
}

TEST_CASE("plot length: balanced accuracy by default, --metric, series kept apart",
          "[cli][experiment][plot]") {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    WARN("gnuplot is not installed (apt-get install gnuplot-nox): plot test skipped");
    return;
  }
  const std::string svg = temp_path("plot_length.svg"), csv = temp_path("plot_length.csv"),
                    gp = temp_path("plot_length.gp");
  const Run r =
      run("plot length 'Y a' --format fp16 --format fp32 --lengths 1..50 --words 2 "
          "--out " +
          svg + " --data " + csv + " --gnuplot-script " + gp + " --no-progress");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string script = slurp(gp);
  CHECK(script.find("balanced accuracy") != std::string::npos);
  // Both series are right at length 1 (Cor 4.1): drawn 0.006 below and above 1, with
  // different markers, so neither hides the other.
  CHECK(first_value(script, "S0") == Approx(1 - 0.006).margin(1e-12));
  CHECK(first_value(script, "S1") == Approx(1 + 0.006).margin(1e-12));
  CHECK(script.find("pt 7 ") != std::string::npos);
  CHECK(script.find("pt 5 ") != std::string::npos);
  // The data file keeps the values themselves.
  const std::string data = slurp(csv);
  CHECK(data.find("balanced_accuracy") != std::string::npos);
  CHECK(data.find("single:g=1,fp16,1,1,1,1,1,") != std::string::npos);
  const Run members = run("plot length 'Y a' --lengths 1..5 --words 2 --metric members --out " +
                          svg + " --gnuplot-script " + gp + " --no-progress");
  REQUIRE(members.code == 0);
  CHECK(slurp(gp).find("accuracy on members") != std::string::npos);
  const std::string bad = temp_path("plot_length_bad.svg");
  expect_usage_error(run("plot length 'Y a' --metric median --out " + bad), "--metric");
  CHECK_FALSE(std::filesystem::exists(bad));
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
  // The exact path counts of the balanced words beyond their 1 GiB limit (core/budget.hpp):
  // refused before anything is allocated or run, even with --allow-slow.
  expect_usage_error(run("experiment length 'Y a' --lengths 100000 --words 1 --allow-slow"),
                     "--lengths: the path counts");
  // plot length shares the options: the same refusal before gnuplot runs, no figure.
  const std::string svg = temp_path("refused_length.svg");
  expect_usage_error(run("plot length 'Y a' --lengths 5,3 --out " + svg), "--lengths");
  CHECK_FALSE(std::filesystem::exists(svg));
}
