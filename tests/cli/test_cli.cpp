// The ropesim executable as a user meets it: exit codes, one-line errors naming the flag and
// the accepted values, no partial output files, JSON keys, and values derived by hand or from
// the papers (THEORY §1, §3; NUMERIC §4).
#include <sys/wait.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "attention/transformer/run.hpp"
#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE("formats --json gives THEORY §1's values", "[cli]") {
  const Run r = run("formats --json");
  REQUIRE(r.code == 0);
  const auto list = nlohmann::json::parse(r.out);
  REQUIRE(list.size() == 7);
  for (const auto& f : list) {
    for (const char* key : {"name", "p", "emin", "emax", "max", "min_positive", "unit_roundoff",
                            "f_large", "n_max"}) {
      CHECK(f.contains(key));
    }
  }
  auto find = [&](const std::string& name) {
    for (const auto& f : list) {
      if (f["name"] == name) return f;
    }
    FAIL("missing " << name);
    return nlohmann::json();
  };
  // THEORY §1: fp16 ≈ 25·ln2 → 17.34375; bf16 ≈ 134·ln2 → 93; N_max(fp16) = 1/2^-24.
  CHECK(find("fp16")["f_large"].get<double>() == 17.34375);
  CHECK(find("fp16")["max"].get<double>() == 65504.0);
  CHECK(find("fp16")["n_max"].get<std::uint64_t>() == 16777216u);
  CHECK(find("bf16")["f_large"].get<double>() == 93.0);
  CHECK(find("fp8e4m3")["max"].get<double>() == 448.0);
  CHECK(find("fp8e4m3")["n_max"].get<std::uint64_t>() == 512u);  // 1 / 2^-9
  // 150·ln2 = 103.9720770839917...; the smallest fp32 at or above it is 103.97208404541016.
  CHECK(find("fp32")["f_large"].get<double>() == 103.97208404541016);
}

TEST_CASE("formats: f_large is null under round-up", "[cli]") {
  const Run r = run("formats --json --formats fp32 --rounding upward");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)[0]["f_large"].is_null());
}

TEST_CASE("bad input: one line, exit 2, naming the flag and accepted values", "[cli]") {
  expect_usage_error(run("formats --formats fp33"), "fp16");
  expect_usage_error(run("formats --rounding sideways"), "--rounding");
  expect_usage_error(run("rotations --schedule single:g=1 --format fp33 --positions 10"),
                     "--format");
  expect_usage_error(run("rotations --schedule single:g=1 --realization r9 --positions 10"),
                     "--realization");
  expect_usage_error(run("rotations --schedule nonsense:x=1 --positions 10"), "--schedule");
  expect_usage_error(run("rotations --schedule single:g=1 --realization r3 --positions 10"), "r3");
  expect_usage_error(run("rotations --schedule single:g=one --positions 10"), "--schedule");
  expect_usage_error(run("rotations --schedule single:g=1 --positions 1"), "--positions");
  expect_usage_error(run("sweep --models llama9"), "llama2-7b");
  expect_usage_error(run("nonexistent-command"), "ropesim");
}

TEST_CASE("horizon, construct offset, table horizon: C not finite in F is one line, exit 2",
          "[cli][format_binding]") {
  // decided by proofs::require_finite_scale; hand: fp16's max finite is 65504 and 65520 =
  // 65504 + ulp/2 rounds to +inf under nearest-even; bf16's max is (2 - 2^-7)·2^127
  const std::string fp16 =
      "ropesim: error: --C: C = 65520 is not finite in fp16 (largest finite 65504); accepted: a "
      "positive decimal or 'auto'\n";
  for (const char* command :
       {"horizon --format fp16 --C 65520 --quiet", "construct offset --format fp16 --C 65520"}) {
    const cli_test::Run r = run(command);
    INFO(command);
    CHECK(r.code == 2);
    CHECK(r.err == fp16);
    CHECK(r.out.empty());
  }
  CHECK(run("horizon --format fp16 --C 65519 --quiet").code == 0);  // rounds to 65504
  const cli_test::Run table = run("table horizon --formats bf16 --k 1 --C 1e400 --quiet");
  CHECK(table.code == 2);
  CHECK(table.err ==
        "ropesim: error: --C: C = 1e400 is not finite in bf16 (largest finite 3.38953139e+38); "
        "accepted: a positive decimal or 'auto'\n");
}

TEST_CASE("bad input leaves no output file", "[cli]") {
  const std::string bad_ext = temp_path("table.xyz");
  expect_usage_error(run("sweep --models phi-2 --positions 16 --out " + bad_ext), ".csv");
  CHECK_FALSE(std::filesystem::exists(bad_ext));
  const std::string csv = temp_path("table.csv");
  expect_usage_error(run("sweep --models phi-2 --realizations r1,r7 --positions 16 --out " + csv),
                     "--realizations");
  CHECK_FALSE(std::filesystem::exists(csv));
}

TEST_CASE("rotations: periodic:m=2,3,12 under r3 has period lcm = 12", "[cli]") {
  // THEORY §3 Prop 2.2 / RoPE-X eq. 7: the table is periodic in each block with period m_d,
  // so the whole map has period lcm(2, 3, 12) = 12 and R^_12 = R^_0 is the first repeat.
  for (const char* format : {"fp16", "bf16", "fp32", "fp64", "fp8e4m3"}) {
    const Run r = run(std::string("rotations --schedule periodic:m=2,3,12 --realization r3 "
                                  "--positions 200 --json --format ") +
                      format);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["periodic"] == true);
    CHECK(j["period"] == 12);
    CHECK(j["first_repeat"] == nlohmann::json::array({0, 12}));
    CHECK(j["distinct"] == 12);
    for (const char* key : {"schedule", "realization", "format", "positions", "distinct",
                            "first_repeat", "periodic", "period", "max_witness", "witnessed"}) {
      CHECK(j.contains(key));
    }
  }
}

TEST_CASE("rotations: single:g=1 under r1 is non-periodic with a witness for every P", "[cli]") {
  const Run r =
      run("rotations --schedule single:g=1 --realization r1 --format fp32 --positions 4000 --json "
          "--witnesses");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["periodic"] == false);
  CHECK(j["period"].is_null());
  REQUIRE(j["witnesses"].size() == 2000);
  // R^_0 = (1, 0) and R^_P = (round(cos P), round(sin P)): round(sin P) = 0 would need
  // sin P = 0 (fp32 keeps |sin P| ≥ 1e-5 > 0), so i = 0 is the witness for every P. Two
  // positions i ≠ j < 4000 share R^ only if |(i - j) - 2πk| is below ~2^-23; the best
  // approximation of a multiple of 2π below 4000 is 710 - 113·2π ≈ 6e-5, so all N differ.
  for (const auto& w : j["witnesses"]) CHECK(w == 0);
  CHECK(j["distinct"] == 4000);
  CHECK(j["first_repeat"].is_null());
}

TEST_CASE("rotations --position reproduces GPT-NeoX #1003", "[cli]") {
  // NUMERIC §4 / GPT-NeoX #1003: head dim 32, base 1e4, fp16 angle table, position 1857,
  // second frequency: exact angle 1857·10^(-1/4) = 1044.2678..., fp16 angle 1045.
  // cos(1044.2678) = 0.30669 and fp16(cos 1045) = -0.408203125 (cos 1045 = -0.40816, the
  // fp16 neighbours are 2^-12 apart there): off by 0.7149 at this entry. The report's 0.7819
  // is the maximum over its whole 2048 × 16 table (checked in tests/attention).
  const Run r =
      run("rotations --schedule conventional:base=10000,dim=32 --realization r2 --format fp16 "
          "--position 1857 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  INFO(r.out.substr(0, 2000));
  REQUIRE(j.contains("blocks"));
  const auto& block = j["blocks"][1];
  CHECK(block["exact_angle"].get<double>() == Approx(1044.2678).margin(1e-4));
  CHECK(block["steps"]["phi"]["decimal"] == "1045");
  CHECK(block["steps"]["theta_hat"]["decimal"] == "0.5625");  // fp16(10^(-1/4) = 0.56234)
  CHECK(block["cos"]["decimal"] == "-0.408203125");
  CHECK(block["exact_cos"].get<double>() == Approx(0.3066928).margin(1e-6));
}

TEST_CASE(
    "rotations --rounding toward-zero --position 1857: theta_hat, phi and cos follow the mode",
    "[cli][rounding]") {
  // Hand derivation (tests/attention/test_directed_rounding.cpp,
  // tests/derivations/directed_values.py): θ = 10^(-1/4) = 0.5623413..., θ·2^11 = 1151.675 → toward
  // zero 1151·2^-11 = 0.56201171875; φ = 0.56201171875·1857 = 1043.65576171875 → 1043; cos 1043 =
  // 0.99996162, ·2^11 = 2047.92 → 2047·2^-11 = 0.99951171875; sin 1043 = -0.0087608797, |·|·2^17 =
  // 1148.31 → -1148·2^-17 = -0.008758544921875. (Nearest-even gives 0.5625, 1045, -0.408203125: the
  // test above.)
  const Run r =
      run("rotations --schedule conventional:base=10000,dim=32 --realization r2 --format fp16 "
          "--rounding toward-zero --position 1857 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["rounding"] == "toward-zero");
  const auto& block = j["blocks"][1];
  CHECK(block["steps"]["theta_hat"]["decimal"] == "0.56201171875");
  CHECK(block["steps"]["i_hat"]["decimal"] == "1857");
  CHECK(block["steps"]["phi"]["decimal"] == "1043");
  CHECK(block["cos"]["decimal"] == "0.99951171875");
  CHECK(block["sin"]["decimal"] == "-0.008758544921875");
}

TEST_CASE("rotations census JSON: period N/2 and the witness values, by hand", "[cli][boundary]") {
  // periodic:m=4 under r3 at N = 8: period 4 = N/2 exactly (the census searches P ≤ N/2).
  {
    const Run r =
        run("rotations --schedule periodic:m=4 --realization r3 --format fp32 --positions 8 --json "
            "--witnesses");
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["periodic"] == true);
    CHECK(j["period"] == 4);
    CHECK(j["witnesses"] == nlohmann::json::array({0, 0, 0}));
  }
  // single:g=1/64 in fixed:1.2 (values k/4), r1, N = 20
  // (tests/attention/test_census_boundaries.cpp): nearest: R̂_0..8 = (1, 0) since sin(i/64) < 1/8
  // iff i ≤ 8, R̂_9..19 = (1, 1/4): witness of P is 9 - P (P ≤ 9), 0 for P = 10; the largest is
  // position 8 at P = 1. toward-zero: R̂_0 = (1, 0), R̂_1..16 = (3/4, 0), R̂_17..19 = (3/4, 1/4):
  // every witness is 0.
  {
    const Run r =
        run("rotations --schedule single:g=0.015625 --realization r1 --format fixed:1.2 "
            "--positions 20 --json --witnesses");
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["periodic"] == false);
    CHECK(j["distinct"] == 2);
    CHECK(j["witnesses"] == nlohmann::json::array({8, 7, 6, 5, 4, 3, 2, 1, 0, 0}));
    CHECK(j["max_witness"] == 8);
    CHECK(j["max_witness_period"] == 1);
  }
  {
    const Run r =
        run("rotations --schedule single:g=0.015625 --realization r1 --format fixed:1.2 --rounding "
            "toward-zero --positions 20 --json");
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["distinct"] == 3);
    CHECK(j["first_repeat"] == nlohmann::json::array({1, 2}));
    CHECK(j["max_witness"] == 0);
    CHECK(j["max_witness_period"] == 1);
  }
}

// ---------------------------------------------------------------------------------------------
// horizon and table horizon (THEORY §6; RoPE-X eq. 10)
// ---------------------------------------------------------------------------------------------

TEST_CASE("horizon --json: keys and hand-derived values (θ = π/2 and g = 1)", "[cli][horizon]") {
  // periodic:m=4 realises Rot(iπ/2) exactly: scores C·{1,0,-1,0}; offset 4 (j = 0 at i = 5)
  // ties the target, so N_max = 3 with gap 0 (k = 1, C = 64 ≥ f_large(fp16) = 17.34375).
  Run r = run("horizon --schedule periodic:m=4 --k 1 --C 64 --format fp16 --json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"format", "g", "k", "C", "realization", "f_large", "n_max", "fail_query",
                          "fail_competitor", "gap", "delta_bound", "tie_distance"}) {
    CHECK(j.contains(key));
  }
  CHECK(j["n_max"] == 3);
  CHECK(j["fail_query"] == 5);
  CHECK(j["fail_competitor"] == 0);
  CHECK(j["gap"].get<double>() == 0.0);
  CHECK(j["f_large"].get<double>() == 17.34375);
  CHECK(j["format"] == "fp16");
  CHECK(j["realization"] == "r1");
  // g = 1: the tie distances of THEORY §6 (44 for fp16, 710 for fp32) and C·δ_L ≥ f_large by
  // hand: C = 1000, threshold 1 - 17.34375/1000; cos 19 = 0.98870 exceeds it, cos 6 does not.
  r = run("horizon --g 1 --k 1 --C 1000 --format fp16 --json");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["tie_distance"] == 44);
  CHECK(j["delta_bound"] == 18);
  CHECK(j["g"].get<double>() == 1.0);
  CHECK(j["C"].get<double>() == 1000.0);
  r = run("horizon --g 1 --k 1 --C 1000 --format fp32 --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["tie_distance"] == 710);
}

TEST_CASE("horizon --algorithm: candidates where they apply, the scan on request; same N_max",
          "[cli][horizon]") {
  // fp32, g = 1, C = 2839326 (docs/tables/horizon.md): N_max = 710 − 2 + k by both algorithms.
  Run fast = run("horizon --g 1 --k 4 --C 2839326 --format fp32 --json");
  Run scan = run("horizon --g 1 --k 4 --C 2839326 --format fp32 --algorithm scan --json");
  REQUIRE(fast.code == 0);
  REQUIRE(scan.code == 0);
  const auto f = nlohmann::json::parse(fast.out), s = nlohmann::json::parse(scan.out);
  CHECK(f["algorithm"] == "candidates");
  CHECK(s["algorithm"] == "scan");
  CHECK(f["max_length"] == 10000000);
  CHECK(s["max_length"] == 20000);
  for (const char* key : {"n_max", "fail_query", "fail_competitor", "offset", "gap_exact"}) {
    CHECK(f[key] == s[key]);
  }
  CHECK(f["n_max"] == 712);  // tie distance 710 − 2 + k
  // r2 forms its angle in F: outside the candidate algorithm's bound, auto scans
  const Run r2 = run("horizon --g 1 --k 1 --C 1000 --format fp16 --realization r2 --json");
  REQUIRE(r2.code == 0);
  CHECK(nlohmann::json::parse(r2.out)["algorithm"] == "scan");
}

TEST_CASE("horizon on a two-block head: candidates and scan agree with the hand values",
          "[cli][horizon]") {
  // S(n) = (cos(nπ/2) + cos(nπ/3))/2 (periodic:1/4,1/6, equal weights) has period 12 and
  // S(n) ≤ 1/4 for n ≢ 0 (mod 12). With C = 256 in fp32 every query up to i = 12 leads by
  // ≥ 256·3/4 = 192 > f_large ≈ 103.97; query i = 13 (k = 1) meets j = 0 at offset 12, whose
  // realised rotation equals the target's: gap exactly 0, N_max = 13 − 2 = 11.
  for (const char* algorithm : {"auto", "scan"}) {
    INFO(algorithm);
    const Run r = run(
        std::string(
            "horizon --schedule periodic:1/4,1/6 --k 1 --C 256 --format fp32 --json --algorithm ") +
        algorithm);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["algorithm"] == (std::string(algorithm) == "auto" ? "candidates" : "scan"));
    CHECK(j["blocks"] == 2);
    CHECK(j["n_max"] == 11);
    CHECK(j["fail_query"] == 13);
    CHECK(j["fail_competitor"] == 0);
    CHECK(j["offset"] == 12);
    CHECK(j["gap_exact"] == "0");
  }
}

TEST_CASE("horizon: an empty --schedule and an option given twice are refused in one line",
          "[cli][horizon]") {
  // Found by a differential probe: --schedule "" ran single:g=1 and wrote the file.
  const std::string out = temp_path("empty_schedule.json");
  std::filesystem::remove(out);
  const Run empty = run("horizon --schedule '' --k 1 --C 10 --format fp16 --out " + out);
  expect_usage_error(empty,
                     "--schedule: bad schedule '': unknown schedule or preset name; accepted: ");
  CHECK_FALSE(std::filesystem::exists(out));
  expect_usage_error(run("horizon --schedule llama2-7b --schedule llama2-7b --C 10"),
                     "--schedule: given 2 times; accepted: once");
}

TEST_CASE("horizon --C auto reports the chosen C and its candidates", "[cli][horizon]") {
  const Run r = run("horizon --g 1 --k 1 --C auto --format bf16 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["candidates"].is_array());
  std::uint64_t best = 0;
  for (const auto& c : j["candidates"]) best = std::max(best, c["n_max"].get<std::uint64_t>());
  CHECK(j["n_max"] == best);
  CHECK(j["C_source"].is_string());
}

TEST_CASE("horizon --simulate: the transformer agrees within N_max, and the text names it",
          "[cli][horizon]") {
  const Run r =
      run("horizon --schedule periodic:m=4 --k 1 --C 64 --format fp16 --simulate --random-words 0");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("simulation     L = 3: agrees on 15 words") != std::string::npos);
  const Run beyond =
      run("horizon --schedule periodic:m=4 --k 1 --C 64 --format fp16 --simulate-length 4 "
          "--random-words 0 --json");
  REQUIRE(beyond.code == 0);
  const auto j = nlohmann::json::parse(beyond.out);
  CHECK(j["simulation"]["disagreement"]["word"] == "aaaa");
  CHECK(j["simulation"]["within_certified_range"] == false);
}

TEST_CASE("horizon bad input: one line naming the flag, exit 2", "[cli][horizon]") {
  expect_usage_error(run("horizon --k 0 --C 64 --format fp16"), "--k");
  expect_usage_error(run("horizon --k two --C 64 --format fp16"), "--k");
  expect_usage_error(run("horizon --C 1e6 --format fp16"), "--C");
  expect_usage_error(run("horizon --C -3 --format fp16"), "--C");
  expect_usage_error(run("horizon --C 64 --format fp16 --rounding upward"), "--rounding");
  expect_usage_error(run("horizon --C 64 --format fp16 --realization r9"), "--realization");
  expect_usage_error(run("horizon --C 64 --format fp16 --realization r3"), "--realization");
  expect_usage_error(run("horizon --C 64 --format fp33"), "--format");
  expect_usage_error(run("horizon --C 64 --format fp16 --algorithm scan --max-length 50000"),
                     "--allow-slow");
  // beyond the quick limit and estimated beyond the 10 min budget (no early failure)
  expect_usage_error(
      run("horizon --g 1 --C 532040202032119.6 --format fp64 --max-length 4000000000 --quiet"),
      "--allow-slow");
  expect_usage_error(run("horizon --C 64 --format fp16 --algorithm fastest"), "--algorithm");
  expect_usage_error(run("horizon --C 64 --format fp16 --realization r2 --algorithm candidates"),
                     "--algorithm");
  expect_usage_error(run("horizon --C 64 --format fp16 --g 1 --schedule periodic:m=4"), "--g");
  expect_usage_error(run("horizon --C 64 --format fp16 --g -1"), "--g");
}

TEST_CASE("table horizon writes the table atomically; bad input leaves no file", "[cli][horizon]") {
  const std::string md = temp_path("horizon.md");
  Run r = run("table horizon --formats fp16,bf16 --g 1 --k 1,2 --C 64 --quiet --out " + md);
  REQUIRE(r.code == 0);
  std::ifstream in(md);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  // The provenance line, a blank line, then the header, the rule and 4 rows.
  CHECK(text.rfind("Made by ropesim ", 0) == 0);
  CHECK(
      text.find("`ropesim table horizon --formats fp16,bf16 --g 1 --k 1,2 --C 64 --quiet --out ") !=
      std::string::npos);
  CHECK(text.find("\n\n| format | g | k |") != std::string::npos);
  CHECK(lines(text) == 2 + 2 + 4);
  std::filesystem::remove(md);
  const std::string json = temp_path("horizon.json");
  r = run("table horizon --formats fp16 --g 1 --k 1 --C 64 --quiet --out " + json);
  REQUIRE(r.code == 0);
  std::ifstream jin(json);
  const auto file = nlohmann::json::parse(jin);
  CHECK(file["provenance"]["tool"] == "ropesim");
  CHECK(file["provenance"]["command"].get<std::string>().rfind(
            "ropesim table horizon --formats fp16 ", 0) == 0);
  CHECK(file["provenance"]["commit"].get<std::string>().size() >= 7);
  const auto rows = file["rows"];
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["tie_distance"] == 44);
  std::filesystem::remove(json);
  const std::string bad = temp_path("horizon_bad.csv");
  expect_usage_error(run("table horizon --formats fp16,fp99 --k 1 --C 64 --out " + bad),
                     "--formats");
  CHECK_FALSE(std::filesystem::exists(bad));
  expect_usage_error(run("table horizon --formats fp16 --k 1,0 --C 64 --out " + bad), "--k");
  CHECK_FALSE(std::filesystem::exists(bad));
  expect_usage_error(
      run("table horizon --formats fp16 --k 1 --C 64 --out " + temp_path("horizon.xyz")), ".csv");
}

// ---------------------------------------------------------------------------------------------
// ropesim run (docs/MODEL_SPEC.md)
// ---------------------------------------------------------------------------------------------

namespace {

/// contains-a (THEORY §2; LC25 App B.3 in miniature): score 20·is_a(key) at the EOS query,
/// value is_a, classifier y = attention - 0.5. 20 > f_large(fp16) = 17.34375, so with an a
/// the EOS weight on it is exactly 1 and y = 0.5; without an a, y = -0.5.
std::string write_contains_a(const std::string& name, const std::string& softmax = "stable",
                             const std::string& bias = "20") {
  const std::string path = temp_path(name);
  std::ofstream out(path);
  out << R"({"ropesim_model": 1, "name": "contains-a", "policy": {"format": "fp16"},
  "architecture": {"softmax": ")"
      << softmax << R"("},
  "d_model": 4, "alphabet": ["a", "b"],
  "embedding": {"bos": [0, 0, 1, 0], "eos": [1, 0, 0, 0], "symbols": {"a": [1, 1, 0, 0], "b": [1, 0, 0, 0]}},
  "layers": [{"heads": [{"name": "P a", "head_dim": 1, "value_dim": 1, "query_bias": [)"
      << bias << R"(],
    "key": [[0, 1, 0, 0]], "value": [[0, 1, 0, 0]], "output": [[0], [0], [0], [1]]}]}],
  "classifier": {"weights": [-0.5, 0, 0, 1]}})";
  return path;
}

}  // namespace

TEST_CASE("run prints accept/reject with JSON keys accept (bool) and output", "[cli][run]") {
  const std::string model = write_contains_a("contains_a.json");
  Run r = run("run " + model + " --input bab --json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["accept"] == true);
  CHECK(j["output"].get<double>() == 0.5);
  CHECK(j["output_exact"] == "0.5");
  CHECK(j["tokens"] == nlohmann::json::array({"BOS", "b", "a", "b", "EOS"}));
  CHECK(j["first_non_finite"].is_null());
  CHECK_FALSE(j.contains("trace"));
  r = run("run " + model + " --input bbb --json");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["accept"] == false);
  CHECK(j["output"].get<double>() == -0.5);
  r = run("run " + model + " --input ab");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("verdict  accept") != std::string::npos);
  r = run("run " + model + " --input \"\"");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("verdict  reject") != std::string::npos);
  std::filesystem::remove(model);
}

TEST_CASE("run --trace shows scores, weights and the residual stream", "[cli][run]") {
  const std::string model = write_contains_a("contains_a_trace.json");
  // EOS (position 3) of "ba" sees BOS, b, a with scores 0, 0, 20: weights (0, 0, 1).
  Run r = run("run " + model + " --input ba --trace --json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.contains("trace"));
  CHECK(j["trace"]["positions"] == nlohmann::json::array({3}));
  const auto& head = j["trace"]["layers"][0]["positions"][0]["heads"][0];
  CHECK(head["keys"] == nlohmann::json::array({0, 1, 2}));
  CHECK(head["scores"] == nlohmann::json::array({"0", "0", "20"}));
  CHECK(head["weights"] == nlohmann::json::array({"0", "0", "1"}));
  CHECK(j["trace"]["layers"][0]["positions"][0]["output"] ==
        nlohmann::json::array({"1", "0", "0", "1"}));
  // BOS (position 0) sees no key: zero output (THEORY §2).
  r = run("run " + model + " --input ba --positions 0,eos --json");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["trace"]["positions"] == nlohmann::json::array({0, 3}));
  CHECK(j["trace"]["layers"][0]["positions"][0]["heads"][0]["keys"].empty());
  CHECK(j["trace"]["layers"][0]["positions"][0]["heads"][0]["output"] ==
        nlohmann::json::array({"0"}));
  r = run("run " + model + " --input ba --trace");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("weights        0 0 1") != std::string::npos);
  CHECK(lines(r.out) < 40);
  std::filesystem::remove(model);
}

TEST_CASE("run: fp16 without max subtraction gives NaN; --format fp32 does not", "[cli][run]") {
  // Score 12 at the a key: e^12 ≈ 162755 > 65504 overflows fp16 → inf/inf = NaN (THEORY §2;
  // transformers #17437). In fp32 e^12 is finite and the weight on a is ≈ 1 - e^-12.
  const std::string model = write_contains_a("contains_a_nomax.json", "no-max-subtraction", "12");
  Run r = run("run " + model + " --input ab --json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["accept"] == false);
  CHECK(j["output"] == "nan");
  CHECK(j["first_non_finite"]["stage"] == "weights");
  r = run("run " + model + " --input ab --json --format fp32");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["accept"] == true);
  CHECK(j["format"] == "fp32");
  std::filesystem::remove(model);
}

TEST_CASE("run: bad input is one line naming the flag or the JSON path, exit 2", "[cli][run]") {
  const std::string model = write_contains_a("contains_a_err.json");
  expect_usage_error(run("run " + model + " --input bac"), "--input");
  expect_usage_error(run("run " + model + " --input ab --positions 9"), "--positions");
  expect_usage_error(run("run " + model + " --input ab --positions x"), "--positions");
  expect_usage_error(run("run " + model + " --input ab --format fp99"), "--format");
  expect_usage_error(run("run /nonexistent/model.json --input ab"), "/nonexistent/model.json");
  const std::string broken = temp_path("broken.json");
  {
    std::ofstream out(broken);
    out << R"({"ropesim_model": 1, "policy": {"format": "fp16"}, "d_model": 1, "alphabet": ["a"],
      "embedding": {"bos": [0], "eos": [1], "symbols": {"a": [1]}}, "classifier": {"weights": [1, 2]}})";
  }
  expect_usage_error(run("run " + broken + " --input a"), "classifier.weights");
  std::filesystem::remove(broken);
  std::filesystem::remove(model);
}

TEST_CASE("construct mod --json: C, bound and the hand-derived m = 4 margins", "[cli][construct]") {
  // m = 4 in fp16 (THEORY §7 C4): T(s) ∈ {(1,0), (0,1), (−1,0), (0,−1)} exactly, δ_4 = 1, b_4 =
  // 1/2, C = 2·f_large = 34.6875, key weight C/2 = 17.34375. --r 1 (length readout) builds the atom
  // MOD_4^2; query residue s has BOS score C·cos(π(s − 2)/2): s = 2 → 34.6875 vs 17.34375;
  // s = 1, 3 → 0 vs 17.34375; s = 0 → −34.6875 vs 17.34375 (lead 3·f_large = 52.03125).
  const Run r = run("construct mod --m 4 --r 1 --format fp16 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["m"] == 4);
  CHECK(j["r"] == 1);
  CHECK(j["atom_residue"] == 2);
  CHECK(j["readout"] == "length");
  CHECK(j["C"] == "34.6875");
  CHECK(j["C_auto"] == true);
  CHECK(j["f_large"] == "17.34375");
  CHECK(j["bound"]["rounded_up"] == "34.6875");
  CHECK(j["bound"]["exact"] == "34.6875");
  CHECK(j["b"] == "0.5");
  CHECK(j["key_weight"] == "17.34375");
  REQUIRE(j["margins"].size() == 4);
  const char* margins[4] = {"52.03125", "17.34375", "17.34375", "17.34375"};
  const char* bos[4] = {"-34.6875", "0", "34.6875", "0"};
  for (int s = 0; s < 4; ++s) {
    CHECK(j["margins"][s]["margin"] == margins[s]);
    CHECK(j["margins"][s]["bos_wins"] == (s == 2));
    CHECK(j["margins"][s]["other_score"] == "17.34375");
    CHECK(j["margins"][s]["passes"] == true);
    // the BOS score may be ±0 at s = 1, 3
    const std::string b = j["margins"][s]["bos_score"];
    CHECK((b == bos[s] || (bos[s] == std::string("0") && b == "-0")));
  }
  CHECK(j["min_margin"] == "17.34375");
  CHECK(j["out"].is_null());
}

TEST_CASE("construct mod --out writes a model that run explains and that decides N ≡ r",
          "[cli][construct]") {
  const std::string model = temp_path("mod3.json");
  Run r = run("construct mod --m 3 --r 0 --format fp16 --out " + model);
  REQUIRE(r.code == 0);
  // text: the chosen C (the bound 4/3·17.34375 = 23.125 passes), the bound and 3 residue rows
  CHECK(r.out.find("C          23.125") != std::string::npos);
  CHECK(r.out.find("23.125") != std::string::npos);
  CHECK(r.out.find("residue") != std::string::npos);
  CHECK(r.out.find(model) != std::string::npos);
  CHECK(lines(r.out) < 20);
  REQUIRE(std::filesystem::exists(model));
  for (const std::string& w :
       {std::string("\"\""), std::string("a"), std::string("ab"), std::string("aba"),
        std::string("abab"), std::string("bbbbb"), std::string("aaaaaa")}) {
    const std::size_t n = w == "\"\"" ? 0 : w.size();
    INFO(w);
    const Run x = run("run " + model + " --input " + w + " --json");
    REQUIRE(x.code == 0);
    CHECK(nlohmann::json::parse(x.out)["accept"] == (n % 3 == 0));
  }
  // --trace names the heads; at EOS of "aa" (position 3 ≡ 0 ≡ r + 1... the atom is MOD_3^1):
  // 3 ≢ 1, so the baseline wins and the head outputs 0.
  r = run("run " + model + " --input aa --trace");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("MOD_3^1") != std::string::npos);
  CHECK(r.out.find("count 1/#keys") != std::string::npos);
  CHECK(r.out.find("verdict  reject") != std::string::npos);
  // the construction report travels in the file under "_construction"
  std::ifstream in(model);
  const auto spec = nlohmann::json::parse(in);
  CHECK(spec["_construction"]["C"] == "23.125");
  CHECK(spec["policy"]["format"] == "fp16");
  // and the provenance: version, commit and the exact command
  CHECK(spec["_provenance"]["command"].get<std::string>().rfind("ropesim construct mod --m 3 --r ",
                                                                0) == 0);
  CHECK_FALSE(spec["_provenance"]["version"].get<std::string>().empty());
  std::filesystem::remove(model);
}

TEST_CASE("construct mod: m = 1 is top, accepted at every length", "[cli][construct]") {
  const std::string model = temp_path("mod1.json");
  const Run r = run("construct mod --m 1 --r 0 --format bf16 --out " + model + " --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).contains("note"));
  for (const char* w : {"\"\"", "a", "bab"}) {
    const Run x = run("run " + model + " --input " + w + " --json");
    REQUIRE(x.code == 0);
    CHECK(nlohmann::json::parse(x.out)["accept"] == true);
  }
  std::filesystem::remove(model);
}

TEST_CASE("construct mod: bad input and refusal are one line naming the flag, no file",
          "[cli][construct]") {
  const std::string model = temp_path("mod_bad.json");
  expect_usage_error(run("construct mod --m 0 --r 0 --out " + model), "--m");
  expect_usage_error(run("construct mod --m 3 --r 3 --out " + model), "--r");
  expect_usage_error(run("construct mod --m 3 --r -1 --out " + model), "--r");
  expect_usage_error(run("construct mod --m 3 --r 0 --format fp99 --out " + model), "--format");
  expect_usage_error(
      run("construct mod --m 3 --r 0 --format fp16 --rounding upward --out " + model),
      "--rounding");
  expect_usage_error(run("construct mod --m 3 --r 0 --format fp16 --C -2 --out " + model), "--C");
  expect_usage_error(run("construct mod --m 3 --r 0 --readout tail --out " + model), "--readout");
  // fp8e5m2 rounds cos(π/6) and b_12 both to 0.875: lead 0 for every C (THEORY §7 C4 refusal).
  const Run refused = run("construct mod --m 12 --r 0 --format fp8e5m2 --out " + model);
  expect_usage_error(refused, "--format");
  CHECK(refused.err.find("m = 12") != std::string::npos);
  CHECK(refused.err.find("r = 0") != std::string::npos);
  CHECK(refused.err.find("fp8e5m2") != std::string::npos);
  CHECK(refused.err.find("best margin found") != std::string::npos);
  // a given C below the bound 23.125 (fp16, m = 3) is refused naming --C
  expect_usage_error(run("construct mod --m 3 --r 0 --format fp16 --C 20 --out " + model), "--C");
  CHECK_FALSE(std::filesystem::exists(model));
  expect_usage_error(run("construct mod --m 3 --r 0 --format fp16 --out /nonexistent/dir/mod.json"),
                     "--out");
}

TEST_CASE("construct offset writes the Y^k pi_a model that run decides", "[cli][construct]") {
  const std::string model = temp_path("offset.json");
  Run r = run("construct offset --g 1 --k 1 --C 448 --format fp16 --out " + model + " --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["k"] == 1);
  CHECK(j["C"].get<double>() == 448);
  CHECK(j["out"] == model);
  REQUIRE(std::filesystem::exists(model));
  // Y π_a at EOS: the last symbol is a (THEORY §4), within the certified range.
  REQUIRE(j["n_max"].get<double>() >= 3);
  for (const char* w : {"a", "b", "ab", "ba", "bba", "aab"}) {
    INFO(w);
    const Run x = run("run " + model + " --input " + w + " --json");
    REQUIRE(x.code == 0);
    const std::string word(w);
    CHECK(nlohmann::json::parse(x.out)["accept"] == (word.back() == 'a'));
  }
  r = run("run " + model + " --input ba --trace");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("Y^1") != std::string::npos);
  std::filesystem::remove(model);
  expect_usage_error(run("construct offset --g 1 --k 0 --C 448 --format fp16 --out " + model),
                     "--k");
  expect_usage_error(run("construct offset --g 1 --k 1 --C 448 --format fp99 --out " + model),
                     "--format");
  CHECK_FALSE(std::filesystem::exists(model));
}

TEST_CASE("horizon --g takes a fraction P/Q: the same head as --schedule single:g=P/Q", "[cli]") {
  const Run by_g = run("horizon --g 1/3 --format fp16 --C 100 --json --quiet");
  const Run by_schedule =
      run("horizon --schedule single:g=1/3 --format fp16 --C 100 --json --quiet");
  REQUIRE(by_g.code == 0);
  REQUIRE(by_schedule.code == 0);
  const auto a = nlohmann::json::parse(by_g.out);
  const auto b = nlohmann::json::parse(by_schedule.out);
  CHECK(a["n_max"] == b["n_max"]);
  CHECK(a["schedule"] == "single:g=1/3");
  expect_usage_error(run("horizon --g 1/0 --format fp16"), "divides by zero");
}

TEST_CASE("sweep: a multi-key pipeline listed between other realisations", "[cli]") {
  const Run r =
      run("sweep --schedules single:g=1 --formats fp16 --positions 64 --quiet --json "
          "--realizations 'r1;pipeline:angle=fp16;cos_sin=fp32;r2'");
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["realization"] == "r1");
  // Both keys reached the one pipeline (the others keep hf's values: A = fp16 for the table).
  CHECK(rows[1]["realization"].get<std::string>().find("angle=fp16;cos_sin=fp32;table=fp16") !=
        std::string::npos);
  CHECK(rows[2]["realization"] == "r2");
}

TEST_CASE(
    "sweep --out .md: a '|' inside a schedule spec is escaped, so every row keeps its columns",
    "[cli]") {
  // liere's block list uses '|' between per-axis angles; an unescaped '|' would split the cell
  // (seen: the liere rows of docs/VARIANTS.md had two extra columns).
  const std::string md = temp_path("sweep_pipe.md");
  const Run r =
      run("sweep --schedules 'liere:axes=2,blocks=1/4|1/6' --formats bf16 --realizations r1 "
          "--positions 64 --quiet --out " +
          md);
  REQUIRE(r.code == 0);
  std::ifstream in(md);
  std::string line, header, row;
  while (std::getline(in, line)) {
    if (line.rfind("| schedule", 0) == 0) header = line;
    if (line.rfind("| liere", 0) == 0) row = line;
  }
  REQUIRE(!header.empty());
  REQUIRE(!row.empty());
  auto cells = [](const std::string& s) {  // unescaped '|' separators
    int n = 0;
    for (std::size_t i = 0; i < s.size(); ++i) n += s[i] == '|' && (i == 0 || s[i - 1] != '\\');
    return n;
  };
  CHECK(cells(row) == cells(header));
  CHECK(row.find("blocks=1/4\\|1/6") != std::string::npos);
}
