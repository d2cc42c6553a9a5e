// The seed's separation through the command line (issue 32): MOD atoms follow --schedule
// (THEORY §7 C4'), the separation figure, and classify's scope. Expected values come from the
// theory (a periodic MOD head is exact at every length, T5; no schedule whose angles are at most
// 1 rad per position holds MOD_2 or MOD_3: ε ≥ π − 1 > π/2, ε ≥ 2π/3 − 1 > π/3), from the hand
// derivation of tests/proofs/test_bounded_mod.cpp (g = 3/2, m = 4: N_max^MOD = 10 in fp32), and
// from a second path: `ropesim run` on the words themselves.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("compile --schedule: a MOD atom never gets a table the user did not name",
          "[cli][separation]") {
  const std::string model = temp_path("sep_mod2.json");
  std::filesystem::remove(model);
  // llama2-7b's angles are at most 1 rad per position: no bounded MOD_2 (done-when of issue 32).
  const Run r =
      run("compile 'mod(2,0)' --alphabet ab --schedule llama2-7b --format fp16 -o " + model);
  expect_usage_error(r, "under schedule 'llama2-7b'");
  CHECK(r.err.find("N_max^MOD") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(model));
  // A periodic schedule keeps C4: exact at every length.
  const Run p =
      run("compile 'mod(2,0)' --alphabet ab --schedule periodic:m=2 --format fp16 --json");
  REQUIRE(p.code == 0);
  const auto j = nlohmann::json::parse(p.out);
  CHECK(j["mod_heads"].size() == 1);
  CHECK(j["bounded_mod_heads"].empty());
  CHECK(j["certified_length"].is_null());
  // A periodic schedule of another period is refused, not replaced by the atom's own table:
  // compile, construct mod and experiment length alike.
  const Run q =
      run("compile 'mod(3,0)' --alphabet ab --schedule periodic:m=4 --format bf16 -o " + model);
  expect_usage_error(q, "under the periodic schedule 'periodic:1/4'");
  CHECK(q.err.find("turn 1/3") != std::string::npos);
  CHECK(q.err.find("no preset format") == std::string::npos);  // no format fixes it
  CHECK(q.err.find("characters)") == std::string::npos);       // not shortened
  CHECK_FALSE(std::filesystem::exists(model));
  const Run c = run("construct mod --m 3 --r 0 --schedule periodic:m=4 --format bf16 -o " + model);
  expect_usage_error(c, "turn 1/3");
  CHECK_FALSE(std::filesystem::exists(model));
  const Run e =
      run("experiment length 'mod(3,0)' --alphabet ab --schedule periodic:m=4 --schedule "
          "periodic:m=3 --format bf16 --lengths 1..12 --words 2 --json --no-progress");
  INFO(e.err);
  REQUIRE(e.code == 0);
  const auto x = nlohmann::json::parse(e.out);
  REQUIRE(x["series"].size() == 2);
  CHECK(x["series"][0]["refused"].get<std::string>().find("turn 1/3") != std::string::npos);
  CHECK(x["series"][1]["refused"].is_null());
  CHECK(x["series"][1]["longest_all_right"] == 12);
  // the schedule's own block of turn 1/m is the head's, and the model says so
  const Run b =
      run("compile 'mod(3,0)' --alphabet ab --schedule periodic:m=4,3 --format bf16 --json");
  REQUIRE(b.code == 0);
  CHECK(b.out.find("\"block\": \"1\"") != std::string::npos);
}

TEST_CASE("construct mod --schedule: the bounded atom, its range and run's own verdicts",
          "[cli][separation]") {
  const std::string model = temp_path("sep_bounded_mod4.json");
  const Run r =
      run("construct mod --m 4 --r 0 --readout eos --schedule single:g=1.5 --format "
          "fp32 -o " +
          model);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("N_max^MOD = 10") != std::string::npos);  // derived by hand
  CHECK(r.out.find("fails at   query 12") != std::string::npos);
  // The model file records the certified length; `run` decides MOD_4^0 at EOS = N + 1 right on
  // every length up to 10 (N + 1 ≡ 0 mod 4 iff N = 3, 7).
  const auto spec = nlohmann::json::parse(read_all(model));
  CHECK(spec["_construction"]["certified_length"] == 10);
  for (int n = 1; n <= 10; ++n) {
    const Run w = run("run " + model + " --input " + std::string(std::size_t(n), 'a') + " --json");
    INFO("length " << n << ": " << w.err);
    REQUIRE(w.code == 0);
    CHECK(nlohmann::json::parse(w.out)["accept"] == ((n + 1) % 4 == 0));
  }
  // No bounded MOD_2 on 1 rad per position: one line, exit 2, no file.
  const std::string refused = temp_path("sep_refused_mod2.json");
  std::filesystem::remove(refused);
  expect_usage_error(
      run("construct mod --m 2 --r 0 --schedule single:g=1 --format fp32 -o " + refused),
      "--schedule");
  CHECK_FALSE(std::filesystem::exists(refused));
}

TEST_CASE("experiment length: periodic MOD_3 exact to 500, conventional MOD_3 refused",
          "[cli][separation][experiment]") {
  const Run r = run(
      "experiment length 'mod(3,1)' --alphabet ab --schedule periodic:m=3 --schedule "
      "conventional:base=10000,dim=64 --format bf16 --lengths 1..12,100,250,500 --words 2 --json "
      "--no-progress");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["series"].size() == 2);
  CHECK(j["series"][0]["refused"].is_null());
  CHECK(j["series"][0]["longest_all_right"] == 500);
  CHECK(j["series"][0]["mod_atoms"] == "periodic tables (C4)");
  CHECK(j["series"][1]["refused"].get<std::string>().find("MOD_3^1 atom refused under schedule") !=
        std::string::npos);
  for (const auto& row : j["rows"]) CHECK(row["balanced_accuracy"] == 1.0);
  // Without --schedule: single:g=1 for Y^k heads, the MOD atoms' own periodic tables.
  const Run d = run(
      "experiment length 'mod(3,1)' --alphabet ab --lengths 1..6 --words 1 --json --no-progress");
  REQUIRE(d.code == 0);
  CHECK(nlohmann::json::parse(d.out)["series"][0]["mod_atoms"] == "periodic tables (C4)");
  // A bounded MOD atom under a non-periodic schedule: exact up to its certified length. For
  // mod(4,1) on θ = 3/2 (ε = 3/2 − π/2 = −0.0708, b = cos(π/4) = 0.7071) the ideal BOS score at
  // query i is C·cos((i − 1)π/2 + iε): at i ≡ 1 BOS must lead, cos(iε) = 0.938, 0.804 at i = 5, 9
  // but 0.606 < b at i = 13; at i ≡ 2 it must trail, sin(i|ε|) = 0.650 < b at i = 10; at i ≡ 0, 3
  // its score is negative. So queries 2..12 pass and N_max^MOD = 11.
  const Run b =
      run("experiment length 'mod(4,1)' --alphabet ab --schedule single:g=1.5 --format fp32 "
          "--lengths 1..11 --words 2 --json --no-progress");
  INFO(b.err);
  REQUIRE(b.code == 0);
  const auto jb = nlohmann::json::parse(b.out);
  CHECK(jb["series"][0]["mod_atoms"] == "the schedule (C4', bounded)");
  CHECK(jb["series"][0]["certified_length"] == 11);
  CHECK(jb["series"][0]["longest_all_right"] == 11);
}

TEST_CASE("plot separation: panels per language, refusals named, data per series",
          "[cli][separation][plot]") {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    WARN("gnuplot is not installed (apt-get install gnuplot-nox): plot test skipped");
    return;
  }
  const std::string svg = temp_path("sep.svg"), csv = temp_path("sep.csv"),
                    gp = temp_path("sep.gp");
  const Run r =
      run("plot separation --schedule periodic --schedule single:g=1 --format fp32 "
          "--lengths 1..12 --words 1 --out " +
          svg + " --data " + csv + " --gnuplot-script " + gp + " --no-progress");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string script = read_all(gp);
  CHECK(script.find("set multiplot layout 2,2") != std::string::npos);
  for (const char* title : {"(aa)*", "(ab)*", "MOD_3", "Sigma*a"})
    CHECK(script.find(title) != std::string::npos);
  // single:g=1 holds none of the MOD languages: named in their panels' titles.
  CHECK(script.find("refused (no construction): single:g=1 fp32") != std::string::npos);
  const std::string data = read_all(csv);
  CHECK(data.find("(aa)*,periodic:1/2,fp32,1,1,") != std::string::npos);
  CHECK(data.find("Sigma*a,single:g=1,fp32,1,1,") != std::string::npos);
  CHECK(data.find("MOD_3^1 atom refused") != std::string::npos);
  CHECK(r.out.find("Sigma*a: single:g=1 in fp32: certified length 709") != std::string::npos);
  const std::string bad = temp_path("sep_bad.svg");
  std::filesystem::remove(bad);
  expect_usage_error(run("plot separation --schedule nope:1 --out " + bad), "--schedule");
  expect_usage_error(run("plot separation --schedule periodic --schedule periodic --out " + bad),
                     "--schedule");
  // Every flag's bad value: one line naming it, exit 2, nothing written.
  expect_usage_error(run("plot separation --lengths 5..2 --out " + bad), "--lengths");
  expect_usage_error(run("plot separation --lengths x --out " + bad), "--lengths");
  expect_usage_error(run("plot separation --words 0 --out " + bad), "--words");
  expect_usage_error(run("plot separation --format fp99 --out " + bad), "--format");
  expect_usage_error(run("plot separation --rounding up-ish --out " + bad), "--rounding");
  expect_usage_error(run("plot separation --lengths 1..4 --out " + temp_path("sep_bad.txt")),
                     "--out");
  CHECK_FALSE(std::filesystem::exists(bad));
}

TEST_CASE("plot separation: --out through a symbolic link, --data to standard output",
          "[cli][separation][plot][output_paths]") {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    WARN("gnuplot is not installed (apt-get install gnuplot-nox): plot test skipped");
    return;
  }
  namespace fs = std::filesystem;
  const fs::path dir = temp_path("sep_paths");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path target = dir / "target.svg", link = dir / "link.svg";
  { std::ofstream(target) << "old content\n"; }
  fs::create_symlink(target, link);
  const Run r =
      run("plot separation --schedule single:g=1 --format fp32 --lengths 1..3 --words 1 "
          "--no-progress --out " +
          link.string() + " --data /dev/stdout");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(fs::is_symlink(link));
  CHECK(fs::read_symlink(link) == target);
  const std::string svg = read_all(target.string());
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("old content") == std::string::npos);
  // The data went to standard output (a pipe here), with the Sigma*a rows.
  CHECK(r.out.find("Sigma*a,single:g=1,fp32,1,1,") != std::string::npos);
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);
  fs::remove_all(dir);
}

TEST_CASE("classify --model states the certified length its class holds to", "[cli][separation]") {
  const std::string model = temp_path("sep_pbya.json");
  const Run c = run("compile 'P(b & Y a)' --alphabet ab --format fp16 -o " + model);
  REQUIRE(c.code == 0);
  const Run r = run("classify --model " + model + " --no-progress");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("LTL[P] on words up to the certified length 43") != std::string::npos);
  const Run j = run("classify --model " + model + " --json --no-progress");
  REQUIRE(j.code == 0);
  CHECK(nlohmann::json::parse(j.out)["source"]["scope"]["certified_length"] == 43);
}

TEST_CASE("compile says when the certified length is where the range check stopped",
          "[cli][separation]") {
  // `horizon --schedule llama2-7b --format bf16 --k 1 --C auto` prints N_max >= 2500 (its scan
  // limit, no failing query): the compiled Y a is certified to 2500 and may be exact beyond.
  const Run limit = run("compile 'Y a' --alphabet ab --schedule llama2-7b --format bf16 --json");
  REQUIRE(limit.code == 0);
  const auto l = nlohmann::json::parse(limit.out);
  CHECK(l["certified_length"] == 2500);
  CHECK(l["certified_length_at_limit"] == true);
  const Run text = run("compile 'Y a' --alphabet ab --schedule llama2-7b --format bf16");
  CHECK(text.out.find("<= 2500 (where the range checks stopped without a failure") !=
        std::string::npos);
  // single:g=1 in fp16 fails at query 46 (N_max = 43, docs/tables/horizon.md): not at a limit
  const Run failed = run("compile 'Y a' --alphabet ab --format fp16 --json");
  REQUIRE(failed.code == 0);
  const auto f = nlohmann::json::parse(failed.out);
  CHECK(f["certified_length"] == 43);
  CHECK(f["certified_length_at_limit"] == false);
}
