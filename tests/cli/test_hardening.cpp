// A reference tool's hardening: every input a new user tried that broke the contract
// "one line, exit 2, no partial file, nothing lost" (or printed a wrong value) stays a test.
// Expected values are derived by hand in the comments.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

namespace {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

/// A model spec from `construct offset` (Y^1 π_a in fp16), as JSON to edit.
nlohmann::json offset_model() {
  const std::string path = temp_path("offset_base.json");
  const Run r = run("construct offset --g 1 --k 1 --format fp16 --out " + path);
  REQUIRE(r.code == 0);
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  return j;
}

std::string save(const nlohmann::json& j, const std::string& name) {
  const std::string path = temp_path(name);
  write_text(path, j.dump());
  return path;
}

}  // namespace

TEST_CASE("no certificate rests on a wrapped or clamped integer", "[cli][hardening]") {
  // CLI11 alone turned -1 into 2^64-1 and 99999999999999999999999 into 2^64-1; the scan then
  // wrapped around and "certified" N_max >= 18446744073709551615 after 0 scores (true: 43).
  for (const char* bad :
       {"-1", "99999999999999999999999", "18446744073709551616", "0x10", "1e3", "+5", "3.0", ""}) {
    INFO(bad);
    expect_usage_error(
        run(std::string("horizon --g 1 --k 1 --format fp16 --allow-slow --max-length '") + bad +
            "'"),
        "--max-length");
    expect_usage_error(
        run(std::string("table horizon --formats fp16 --k 1 --max-length '") + bad + "'"),
        "--max-length");
  }
  // Leading zeros are decimal, not octal: --max-length 010 scans L = 10 (octal would be 8).
  // fp16, g = 1, k = 1, C = 2096 fails only at query i = 45 (N_max = 43, docs/tables/horizon.md),
  // so the scan stops at the limit: n_max = 10, at the limit.
  const Run r = run("horizon --g 1 --k 1 --C 2096 --format fp16 --max-length 010 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["n_max"] == 10);
  CHECK(j["max_length"] == 10);
}

TEST_CASE("every integer flag is checked: sign, range, base, and the flag is named",
          "[cli][hardening]") {
  expect_usage_error(run("horizon --g 1 --format fp16 --simulate --seed -1"), "--seed");
  expect_usage_error(run("horizon --g 1 --format fp16 --simulate --exhaustive-length -1"),
                     "--exhaustive-length");
  expect_usage_error(run("rotations --schedule single:g=1 --positions 18446744073709551616"),
                     "--positions");
  expect_usage_error(run("rotations --schedule single:g=1 --positions 0x10"), "--positions");
  const Run big = run("rotations --schedule single:g=1 --positions 1e400");
  expect_usage_error(big, "--positions");
  CHECK(big.err.find("accepted: an integer in 2..2147483648") != std::string::npos);
  expect_usage_error(run("sweep --schedules single:g=1 --formats fp16 --positions -3"),
                     "--positions");
  expect_usage_error(run("sweep --schedules single:g=1 --formats fp16 --threads 100000"), "--jobs");
  expect_usage_error(run("rotations --schedule single:g=1 --position -1"), "--position");
}

TEST_CASE("long computations are refused up front with the estimate", "[cli][hardening]") {
  const auto start = std::chrono::steady_clock::now();
  // 2^64-1 random words: beyond the flag's range.
  expect_usage_error(
      run("horizon --g 1 --k 1 --format fp16 --simulate --random-words 18446744073709551615"),
      "--random-words");
  // 2^25 words of length 24 (about 10^11 multiply-adds): beyond the 10-minute budget.
  const Run slow =
      run("horizon --g 1 --k 1 --format fp16 --simulate --random-words 10 --exhaustive-length 24");
  expect_usage_error(slow, "--allow-slow");
  CHECK(slow.err.find("multiply-adds") != std::string::npos);
  // run on 10^5 symbols: (10^5)^2 scores per head.
  nlohmann::json m = offset_model();
  const std::string path = save(m, "long_input.json");
  expect_usage_error(run("run " + path + " --input " + std::string(100000, 'a')), "--allow-slow");
  std::filesystem::remove(path);
  // All refused at once, not after running.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));
}

TEST_CASE("construct offset with a non-decimal g writes a model that run loads",
          "[cli][hardening]") {
  // g = 0.25 was written as the schedule single:g=1/4, which run refused.
  const std::string path = temp_path("offset_quarter.json");
  REQUIRE(run("construct offset --g 0.25 --k 1 --format fp16 --out " + path).code == 0);
  // Y^1 π_a read at EOS = N+1 is π_a at position N: "ba" ends in a -> accept, "ab" -> reject.
  const Run ba = run("run " + path + " --input ba --json");
  REQUIRE(ba.code == 0);
  CHECK(nlohmann::json::parse(ba.out)["accept"] == true);
  const Run ab = run("run " + path + " --input ab --json");
  REQUIRE(ab.code == 0);
  CHECK(nlohmann::json::parse(ab.out)["accept"] == false);
  std::filesystem::remove(path);
  // And 1/3 is not a decimal at all: the schedule spelling single:g=1/3 is accepted directly.
  const Run third = run("rotations --schedule single:g=1/3 --position 3 --json");
  REQUIRE(third.code == 0);
  CHECK(nlohmann::json::parse(third.out)["blocks"][0]["exact_angle"].get<double>() ==
        1.0);  // 3 · 1/3
}

TEST_CASE("model specs that used to crash or exhaust memory are one line", "[cli][hardening]") {
  const std::string deep = temp_path("deep.json");
  write_text(deep, std::string(100000, '[') + std::string(100000, ']'));
  expect_usage_error(run("run " + deep + " --input ab"), "nesting deeper than 64");
  // Deep inside a field (the error used to echo the value by a recursive dump).
  std::string text = offset_model().dump();
  const std::string field = "\"d_model\":7";
  REQUIRE(text.find(field) != std::string::npos);
  text.replace(text.find(field), field.size(),
               "\"d_model\":" + std::string(100000, '[') + "1" + std::string(100000, ']'));
  write_text(deep, text);
  expect_usage_error(run("run " + deep + " --input ab"), "nesting deeper than 64");
  std::filesystem::remove(deep);

  nlohmann::json big = offset_model();
  big["layers"][0]["heads"][0]["head_dim"] = 100000000;
  const std::string big_path = save(big, "big.json");
  const Run r = run("run " + big_path + " --input ab");
  expect_usage_error(r, "--allow-large");
  // 10^8 · (2·7 + 2) from the two 10^8 × 7 matrices and the biases dominate: about 1.6e+09.
  CHECK(r.err.find("1.6e+09") != std::string::npos);
  big = offset_model();
  big["layers"][0]["ffn"]["hidden"] = 100000000;
  write_text(big_path, big.dump());
  expect_usage_error(run("run " + big_path + " --input ab"), "numbers");
  std::filesystem::remove(big_path);
  expect_usage_error(run("run " + std::filesystem::temp_directory_path().string() + " --input ab"),
                     "is a directory");
}

TEST_CASE("model spec numbers beyond a double are read exactly and rounded by F",
          "[cli][hardening]") {
  // MODEL_SPEC.md: numbers are read exactly and rounded into F. 1e400 rounds to +inf in fp16,
  // so a classifier bias of 1e400 makes the output +inf (accept); -1e400 gives -inf (reject).
  for (const char* bias_text : {"1e400", "-1e400"}) {
    const std::string bias = bias_text;
    nlohmann::json base = offset_model();
    base["classifier"].erase("bias");
    std::string text = base.dump();  // nlohmann cannot hold 1e400: insert it as text
    const std::string key = "\"classifier\":{";
    REQUIRE(text.find(key) != std::string::npos);
    text.insert(text.find(key) + key.size(), "\"bias\":" + bias + ",");
    const std::string path = temp_path("e400.json");
    write_text(path, text);
    const Run r = run("run " + path + " --input ab --json");
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["accept"] == (bias[0] != '-'));
    std::filesystem::remove(path);
  }
}

TEST_CASE("model spec: silently accepted mistakes are refused", "[cli][hardening]") {
  nlohmann::json m = offset_model();
  m["alphabet"] = nlohmann::json::array();
  m["embedding"]["symbols"] = nlohmann::json::object();
  std::string path = save(m, "empty_alphabet.json");
  expect_usage_error(run("run " + path + " --input ''"), "alphabet");

  m = offset_model();
  m["architecture"]["bos"] = false;
  write_text(path, m.dump());
  expect_usage_error(run("run " + path + " --input ab"), "embedding.bos");

  m = offset_model();
  m["alphabet"] = {"a", "b", "a"};
  write_text(path, m.dump());
  expect_usage_error(run("run " + path + " --input ab"), "listed twice");

  m = offset_model();
  m["classifier"]["weights"] = {{"sparse", {{0, 0, 1}, {0, 0, 2}}}};
  m["layers"][0]["ffn"]["w1"] = {{"sparse", {{0, 1, "1"}, {0, 1, "2"}}}};
  write_text(path, m.dump());
  expect_usage_error(run("run " + path + " --input ab"), "given twice");
  std::filesystem::remove(path);
}

TEST_CASE("reference values in reports are exact", "[cli][hardening]") {
  // cos and sin of 3e150 rad: 3e150 mod 2π with π from Machin's formula to 400 digits and
  // Taylor series in 400-digit fixed point (Python integers): cos = 0.810794534964024779…,
  // sin = 0.585330865470522406…. The 320-bit reduction printed cos 0.998.
  const Run r = run("rotations --schedule single:g=1e150 --position 3 --json");
  REQUIRE(r.code == 0);
  const auto b = nlohmann::json::parse(r.out)["blocks"][0];
  CHECK(std::abs(b["exact_cos"].get<double>() - 0.81079453496402477907) < 1e-15);
  CHECK(std::abs(b["exact_sin"].get<double>() - 0.58533086547052240686) < 1e-15);
  // periodic:m=1 at position 3: angle 3·2π, so sin is exactly 0 and cos exactly 1.
  const Run p = run("rotations --schedule periodic:m=1 --realization r3 --position 3 --json");
  REQUIRE(p.code == 0);
  const auto q = nlohmann::json::parse(p.out)["blocks"][0];
  CHECK(q["exact_sin"].get<double>() == 0.0);
  CHECK(q["exact_cos"].get<double>() == 1.0);
  // p=4096,e=5: max = (2 - 2^-4095)·2^15 < 65536 and u = 2^-4096 (not 65536 and 0).
  const Run f = run("formats --formats p=4096,e=5 --json");
  REQUIRE(f.code == 0);
  const auto row = nlohmann::json::parse(f.out)[0];
  CHECK(row["max"].get<std::string>().rfind("65535.9999999999", 0) == 0);
  CHECK(row["unit_roundoff"] == "2^-4096");
}

TEST_CASE("wide exponent ranges finish at once", "[cli][hardening]") {
  // p=11,e=28: emin = 2 - 2^27 = -134217726, min positive 2^(emin-10) = 2^-134217736, max >= 1,
  // so N_max = 2^134217736 (its decimal digits would be 40 MB). f_large: exp(-f) rounds to 0
  // once f > (134217736 + 1)·ln 2 = 93032594.6…; F's spacing there is 2^(26-10) = 65536, so the
  // smallest such element is 1420·65536 = 93061120.
  const auto start = std::chrono::steady_clock::now();
  const Run f = run("formats --formats p=11,e=28 --json");
  REQUIRE(f.code == 0);
  const auto row = nlohmann::json::parse(f.out)[0];
  CHECK(row["n_max"] == "2^134217736");
  CHECK(row["f_large"] == "93061120");  // a string: the format does not fit a double
  // The automatic C of horizon tried every power of two up to 2^32767 for p=11,e=16.
  const Run h = run("horizon --g 1 --k 1 --format p=11,e=16 --json");
  REQUIRE(h.code == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(120));
}

TEST_CASE("silently accepted CLI input is refused", "[cli][hardening]") {
  expect_usage_error(run("rotations --schedule single:g=1 --realization "
                         "'pipeline:angle=fp16;angle=fp32' --position 3"),
                     "twice");
  expect_usage_error(run("table horizon --formats fp16 --out ''"), "--out");
  expect_usage_error(run("table horizon --formats fp16 --g 1 --schedules llama2-7b"), "--g");
  expect_usage_error(run("rotations --schedule single:g=1 --position 3 --max-period 4"),
                     "--max-period");
  expect_usage_error(run("rotations --schedule single:g=1 --position 3 --threads 2"), "--jobs");
  expect_usage_error(run("sweep --models llama2-7b,llama2-7b --formats fp16 --positions 64"),
                     "--models");
  expect_usage_error(run("sweep --schedules single:g=1 --formats fp16,fp16 --positions 64"),
                     "--formats");
  // The same format under two spellings: p=11,e=5 is fp16.
  expect_usage_error(run("sweep --schedules single:g=1 --formats 'fp16;p=11,e=5' --positions 64"),
                     "same format");
  expect_usage_error(run("formats --formats fp32,fp32"), "--formats");
}

TEST_CASE("messages say what to do", "[cli][hardening]") {
  const Run c = run("construct");
  expect_usage_error(c, "accepted: mod offset");
  expect_usage_error(run("table"), "accepted: horizon");
  const Run bogus = run("--bogus");
  expect_usage_error(bogus, "unknown option '--bogus'");
  CHECK(bogus.err.find("formats rotations") != std::string::npos);
  // A 100 kB value echoed in an error is shortened: the line stays short.
  const Run long_value =
      run("rotations --schedule single:g=1 --position 1 --format " + std::string(100000, 'x'));
  expect_usage_error(long_value, "--format");
  CHECK(long_value.err.size() < 2100);
}

TEST_CASE("a bad --out is found before computing", "[cli][hardening]") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  for (const std::string& command :
       {"sweep --out " + dir, "formats --out " + dir + "/",
        "table horizon --formats fp16 --out " + dir + "/x.csv/",
        "construct mod --m 2 --r 1 --format fp16 --out " + dir + "/no/such/dir/m.json",
        "construct offset --g 1 --k 1 --format fp16 --out " + dir}) {
    INFO(command);
    const auto start = std::chrono::steady_clock::now();
    expect_usage_error(run(command), "--out");
    // The default sweep takes minutes; a refusal before it starts takes well under 10 s.
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  }
}

TEST_CASE("the same command prints the same bytes at any thread count", "[cli][hardening]") {
  const Run one =
      run("rotations --schedule llama2-7b --realization r2 --format fp16 --positions 3000 --json "
          "--threads 1");
  const Run two =
      run("rotations --schedule llama2-7b --realization r2 --format fp16 --positions 3000 --json "
          "--threads 2");
  REQUIRE(one.code == 0);
  CHECK(one.out == two.out);
  const Run s1 =
      run("sweep --models phi-2,gemma-7b --formats bf16,fp16 --realizations r1,hf --positions 512 "
          "--threads 1");
  const Run s2 =
      run("sweep --models phi-2,gemma-7b --formats bf16,fp16 --realizations r1,hf --positions 512 "
          "--threads 2");
  REQUIRE(s1.code == 0);
  CHECK(s1.out == s2.out);
}

TEST_CASE("precision ranges: --formats p=A..B,e=E is one format per precision",
          "[cli][hardening]") {
  const Run r = run("formats --formats p=4..6,e=5 --json");
  REQUIRE(r.code == 0);
  const auto list = nlohmann::json::parse(r.out);
  REQUIRE(list.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(list[i]["p"] == 4 + i);
    // e = 5: emax = 15, max = (2 - 2^(1-p))·2^15, exact in a double: 61440, 63488, 64512.
    CHECK(list[i]["max"].get<double>() == (2 - std::ldexp(1.0, -3 - i)) * 32768.0);
  }
  const Run both = run("formats --formats 'p=8..9,e=4..5' --json");
  REQUIRE(both.code == 0);
  CHECK(nlohmann::json::parse(both.out).size() == 4);
  expect_usage_error(run("formats --formats p=9..4,e=5"), "empty");
  expect_usage_error(run("formats --formats p=1..5000,e=5"), "4096");
  expect_usage_error(run("formats --formats p=x..5,e=5"), "--formats");
  expect_usage_error(run("formats --formats 'p=11..12,e=5;fp16'"),
                     "same format");  // p=11,e=5 is fp16
}

TEST_CASE("terminal tables: the main columns by default, --columns for the rest",
          "[cli][hardening]") {
  const Run plain = run("formats");
  REQUIRE(plain.code == 0);
  std::size_t widest = 0, start = 0;
  for (std::size_t end = plain.out.find('\n'); end != std::string::npos;
       end = plain.out.find('\n', start)) {
    const std::string line = plain.out.substr(start, end - start);
    if (line.rfind("rounding:", 0) != 0) widest = std::max(widest, line.size());
    start = end + 1;
  }
  CHECK(widest <= 120);
  CHECK(plain.out.find("unit_roundoff") == std::string::npos);
  const Run all = run("formats --columns all");
  CHECK(all.out.find("unit_roundoff") != std::string::npos);
  const Run some = run("formats --columns name,f_large");
  CHECK(some.out.rfind("name     f_large", 0) == 0);
  expect_usage_error(run("formats --columns name,bogus"), "--columns");
}

TEST_CASE("sweep --rounding reaches every realisation and is recorded", "[cli][hardening]") {
  // The same census through `rotations` (one cell) and `sweep` (a grid) must agree, and the
  // rounding must reach the sweep. r2 rounds the position into fp16, where integers above 2048
  // are 2 apart: 2049 is a tie. Nearest-even gives î(2049) = 2048 (even significand), so the
  // first repeat is R̂_2049 = R̂_2048; upward gives î(2049) = 2050 = î(2050), so it is
  // R̂_2050 = R̂_2049 (every smaller position is exact in fp16, so nothing repeats earlier).
  const std::string file = temp_path("sweep_upward.json");
  const Run up =
      run("sweep --models phi-2 --formats fp16 --realizations r2 --positions 4096 --rounding "
          "upward --quiet --out " +
          file);
  REQUIRE(up.code == 0);
  std::ifstream in(file);
  const auto rows = nlohmann::json::parse(in)["rows"];
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["rounding"] == "upward");
  const Run cell =
      run("rotations --schedule phi-2 --realization r2 --format fp16 --positions 4096 --rounding "
          "upward --json");
  REQUIRE(cell.code == 0);
  CHECK(rows[0]["distinct"] == nlohmann::json::parse(cell.out)["distinct"]);
  CHECK(rows[0]["first_repeat"] == nlohmann::json::array({2049, 2050}));
  const Run nearest =
      run("sweep --models phi-2 --formats fp16 --realizations r2 --positions 4096 --json");
  REQUIRE(nearest.code == 0);
  CHECK(nlohmann::json::parse(nearest.out)[0]["first_repeat"] ==
        nlohmann::json::array({2048, 2049}));
  std::filesystem::remove(file);
}

TEST_CASE("every written file records version, commit and command; the terminal stays clean",
          "[cli][hardening]") {
  const std::string csv = temp_path("horizon_one.csv");
  const Run h = run("horizon --g 1 --k 1 --C 2096 --format fp16 --out " + csv);
  REQUIRE(h.code == 0);
  CHECK(h.out.find("commit") == std::string::npos);
  std::ifstream in(csv);
  std::string first, header, row;
  std::getline(in, first);
  std::getline(in, header);
  std::getline(in, row);
  CHECK(first.rfind("# ropesim ", 0) == 0);
  CHECK(first.find("command: ropesim horizon --g 1 --k 1 --C 2096 --format fp16 --out ") !=
        std::string::npos);
  CHECK(header.rfind("format,g,k,", 0) == 0);
  // fp16, g = 1, k = 1, C = 2096: N_max = 43 (docs/tables/horizon.md; tie distance 44 - 2 + k).
  CHECK(row.find(",43,") != std::string::npos);
  std::filesystem::remove(csv);

  const std::string json = temp_path("census.json");
  expect_usage_error(run("rotations --schedule periodic:m=4 --realization r3 --positions 8 --out " +
                         temp_path("c.csv")),
                     ".json");
  const Run c =
      run("rotations --schedule periodic:m=4 --realization r3 --format fp32 --positions 8 --out " +
          json);
  REQUIRE(c.code == 0);
  std::ifstream jin(json);
  const auto j = nlohmann::json::parse(jin);
  CHECK(j["provenance"]["command"].get<std::string>().rfind(
            "ropesim rotations --schedule periodic:m=4", 0) == 0);
  CHECK(j["period"] == 4);  // 2π/4 per position: period exactly N/2
  CHECK(j["witnesses"] ==
        nlohmann::json::array({0, 0, 0}));  // P = 1..3 fail at i = 0 (search stops at the period)
  std::filesystem::remove(json);
}

TEST_CASE("realised cos/sin are decided for every precision and at angle 0", "[cli][hardening]") {
  // p = 48..51 (e = 11) made `horizon` throw "CosSinRounder: rounding of cos/sin undecided at
  // 65536 bits": the binary64 shortcut of the interval rounding could never separate a value
  // within 2^-53 of a boundary of F, and sin 0 = 0 was refined forever.
  for (const char* p : {"48", "51"}) {
    const Run h = run(std::string("horizon --g 1 --k 1 --C 65536 --max-length 300 --format p=") +
                      p + ",e=11 --json");
    INFO(h.err);
    REQUIRE(h.code == 0);
  }
  // Angle 0 under every mode: cos 0 = 1 and sin 0 = 0 exactly.
  for (const char* mode : {"nearest-even", "toward-zero", "upward", "downward"}) {
    const Run r = run(
        std::string(
            "rotations --schedule single:g=1 --format p=51,e=11 --position 0 --json --rounding ") +
        mode);
    REQUIRE(r.code == 0);
    const auto b = nlohmann::json::parse(r.out)["blocks"][0];
    CHECK(b["cos"]["hex"] == "0x1p+0");
    CHECK(b["sin"]["hex"] == "0x0p+0");
  }
  // cos 5 and sin 5 rounded to 51 bits, nearest-even: Taylor series in exact fractions (Python
  // fractions, 200 terms), rounded by hand: 0x1.22785706b4ad8p-2 and -0x1.eaf81f5e09934p-1.
  const Run five = run("rotations --schedule single:g=1 --format p=51,e=11 --position 5 --json");
  REQUIRE(five.code == 0);
  const auto b = nlohmann::json::parse(five.out)["blocks"][0];
  CHECK(b["cos"]["hex"] == "0x1.22785706b4ad8p-2");
  CHECK(b["sin"]["hex"] == "-0x1.eaf81f5e09934p-1");
}

TEST_CASE("census budgets and table --json", "[cli][hardening]") {
  // 2^31 positions × 64 blocks of llama2-7b: about 1.4e11 pairs and 2^31·24 B = 48 GiB (the
  // census's at most 24 bytes a position, attention::census_work).
  const Run big = run("rotations --schedule llama2-7b --positions 2147483648");
  expect_usage_error(big, "--positions");
  CHECK(big.err.find("48 GiB") != std::string::npos);
  expect_usage_error(run("sweep --models llama2-7b --formats fp16 --positions 2147483648"),
                     "--allow-slow");
  // table horizon --json: fp16, g = 1, k = 1, C = 2096 gives N_max 43 (docs/tables/horizon.md).
  const Run t = run("table horizon --formats fp16 --g 1 --k 1 --C 2096 --json");
  REQUIRE(t.code == 0);
  const auto rows = nlohmann::json::parse(t.out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["n_max"] == 43);
}
