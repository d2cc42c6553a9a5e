// ropesim compare, ropesim rotate and rotations --start through the executable: the values of
// the hand-derived cases, output shapes, and one-line exit-2 refusals without output files.
#include <nlohmann/json.hpp>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE("compare --json: GPT-NeoX #1003's 0.78 at (2008, block 1) under r2 fp16",
          "[cli][compare]") {
  const Run r =
      run("compare --schedule conventional:base=10000,dim=32 --realization r2 --format fp16 "
          "--positions 2048 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["against"] == "exact");
  CHECK(j["overall"]["cos"]["absolute"]["value"].get<double>() == Approx(0.7819).margin(5e-5));
  CHECK(j["overall"]["cos"]["absolute"]["position"] == 2008);
  CHECK(j["overall"]["cos"]["absolute"]["block"] == 1);
  CHECK(j["overall"]["entries"] == 32768);
  CHECK(j["blocks"].size() == 16);
  CHECK(!j["overall"]["angle"].is_null());
}

TEST_CASE("compare: r1 forms no angle (n/a), text and CSV shapes", "[cli][compare]") {
  const Run text =
      run("compare --schedule single:g=1 --realization r1 --format bf16 --positions 100");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("n/a") != std::string::npos);
  CHECK(text.out.find("summary") != std::string::npos);
  CHECK(text.out.find("angle n/a") != std::string::npos);
  const Run csv =
      run("compare --schedule conventional:base=10000,dim=8 --realization r2 --against r1 --format "
          "fp16 --positions 50 --csv");
  REQUIRE(csv.code == 0);
  CHECK(csv.out.rfind("block,entries,differing,nonfinite,cos_abs,", 0) == 0);
  CHECK(lines(csv.out) == 1 + 4 + 1);  // header, 4 blocks, "all"
  CHECK(csv.out.find("\nall,200,") != std::string::npos);
  CHECK(csv.out.find("n/a") != std::string::npos);  // r1 forms no angle
}

TEST_CASE("compare: bad input is one line, exit 2, no output file", "[cli][compare]") {
  const std::string out = temp_path("compare.json");
  expect_usage_error(run("compare --schedule conventional:base=10000,dim=8 --realization r1 "
                         "--positions 10 --blocks 9 -o " +
                         out),
                     "block 9");
  CHECK_FALSE(std::filesystem::exists(out));
  expect_usage_error(
      run("compare --schedule single:g=1 --realization r1 --positions 10 --blocks x"), "--blocks");
  expect_usage_error(run("compare --schedule single:g=1 --realization r1 --positions 0"),
                     "--positions");
  expect_usage_error(run("compare --schedule single:g=1 --realization r1 --positions 10 --start "
                         "9223372036854775800"),
                     "--start");
  expect_usage_error(
      run("compare --schedule single:g=1 --realization r1 --positions 10 --against-format fp16"),
      "--against-format");
  expect_usage_error(
      run("compare --schedule single:g=1 --realization r1 --against r7 --positions 10"),
      "--against");
  expect_usage_error(run("compare --schedule conventional:base=10000,dim=128 --realization r1 "
                         "--positions 2147483648"),
                     "--allow-slow");
}

TEST_CASE("rotate: e1, e1 on single:g=1 at fp16 by hand, drift with p", "[cli][rotate]") {
  const Run r =
      run("rotate --schedule single:g=1 --realization r1 --format fp16 --q 1,0 --k 1,0 --offset 5 "
          "--positions 5,100 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["scores"][0]["score"]["decimal"] == "0.28369140625");  // fp16(cos 5) = 1162/4096
  CHECK(j["scores"][1]["score"]["decimal"] ==
        "0.283447265625");  // 1161/4096 (see test_compare.cpp)
  CHECK(j["exact"].get<double>() == Approx(0.28366218546322626).epsilon(1e-15));
  CHECK(j["drift"].get<double>() == 1.0 / 4096);
  CHECK(j["summation"] == "sequential");
  // JSON numbers where the value is a binary64: the score and q, k
  CHECK(j["scores"][0]["score"]["value"].get<double>() == 1162.0 / 4096);
  CHECK(j["query"] == nlohmann::json::array({1, 0}));
  CHECK(j["key"] == nlohmann::json::array({1, 0}));
  CHECK(!j.contains("query_exact"));
}

TEST_CASE("rotate: values binary64 cannot hold get their exact value beside them",
          "[cli][rotate]") {
  // p=113,e=15 (binary128's shape): 0.3333333333333333333333 rounded to 113 bits is not a binary64:
  // the number is its nearest double, the exact value (an odd numerator over 2^114) stands beside
  // it
  const Run r =
      run("rotate --schedule single:g=1 --realization r1 --format p=113,e=15 --q "
          "0.3333333333333333333333,1 "
          "--k 1,0 --offset 0 --positions 0 --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.contains("query_exact"));
  CHECK(j["query"][0].get<double>() == Approx(1.0 / 3).epsilon(1e-15));
  // Python: round(Fraction("0.3333333333333333333333") * 2**114), odd, over 2^114
  CHECK(j["query_exact"][0] ==
        "6923062478046436838039969466045657/20769187434139310514121985316880384");
  CHECK(j["query_exact"][1] == 1);
}

TEST_CASE("rotate: --seed gives the same bytes twice; bad input is one line", "[cli][rotate]") {
  const std::string args =
      "rotate --schedule conventional:base=10000,dim=16 --realization hf --format bf16 --seed 3 "
      "--offset 2 --positions 2,500";
  const Run a = run(args), b = run(args);
  REQUIRE(a.code == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("drift") != std::string::npos);
  expect_usage_error(run("rotate --schedule single:g=1 --q 1,0,0 --k 1,0 --offset 1 --position 3"),
                     "--q");
  expect_usage_error(run("rotate --schedule single:g=1 --q 1,0 --k 1,0 --offset 5 --position 3"),
                     "p - n");
  expect_usage_error(run("rotate --schedule single:g=1 --offset 1 --position 3"), "--seed");
  expect_usage_error(run("rotate --schedule single:g=1 --q 1,zero --k 1,0 --offset 1 --position 3"),
                     "--q");
}

TEST_CASE("rotations --start: the window and the largest class", "[cli][census]") {
  const Run r =
      run("rotations --schedule single:g=1 --realization r2 --format bf16 --start 65536 "
          "--positions 257");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("positions     65536..65792\n") != std::string::npos);
  CHECK(r.out.find("largest class 257 positions share one rotation (the smallest is 65536)\n") !=
        std::string::npos);
  const Run j =
      run("rotations --schedule conventional:base=10000,dim=128 --realization "
          "pipeline:position=fp16 --positions 32768 --json");
  REQUIRE(j.code == 0);
  const auto json = nlohmann::json::parse(j.out);
  CHECK(json["distinct"] == 6145);
  CHECK(json["largest_class"] == 17);
  CHECK(json["largest_class_position"] == 16408);
  CHECK(!json.contains("start"));
  expect_usage_error(
      run("rotations --schedule single:g=1 --start 9223372036854775807 --positions 2"), "--start");
  expect_usage_error(run("rotations --schedule single:g=1 --start 5 --position 3"), "--start");
}
