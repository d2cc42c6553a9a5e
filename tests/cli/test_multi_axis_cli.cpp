// Multi-axis schedules on the command line (docs/CLI.md, docs/variants/MULTI_AXIS.md): tuple
// positions for `rotations --position`, the census along an axis (`--axis`, `--at`) and the
// horizon along one axis. Expected values are derived by hand in the comments.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE("rotations --position takes a tuple on a multi-axis schedule", "[cli][multi-axis]") {
  // mrope D = 4, sections 1,1,0: θ_0 = 1 reads t, θ_1 = 10000^(-1/2) = 1/100 reads h; at
  // (2,100,7) the exact angles are 2 and 1
  const Run r = run(
      "rotations --schedule mrope:base=10000,dim=4,sections=1,1,0 --position '(2,100,7)' --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["position"] == nlohmann::json::array({2, 100, 7}));
  CHECK(j["position_axes"] == nlohmann::json::array({"t", "h", "w"}));
  CHECK(j["blocks"][0]["exact_angle"] == 2.0);
  CHECK(j["blocks"][1]["exact_angle"] == 1.0);
  // the same tuple without parentheses
  const Run bare =
      run("rotations --schedule mrope:base=10000,dim=4,sections=1,1,0 --position 2,100,7 --json");
  CHECK(bare.out == r.out);
  // a scalar I is (I, I, I): angles 5 and 0.05
  const Run scalar =
      run("rotations --schedule mrope:base=10000,dim=4,sections=1,1,0 --position 5 --json");
  CHECK(nlohmann::json::parse(scalar.out)["position"] == nlohmann::json::array({5, 5, 5}));
}

TEST_CASE("rotations --position errors name the flag and the axes", "[cli][multi-axis]") {
  expect_usage_error(
      run("rotations --schedule mrope:base=10000,dim=4,sections=1,1,0 --position '(1,2)'"),
      "(t,h,w)");
  expect_usage_error(run("rotations --schedule single:g=1 --position '(1,2)'"), "--position");
  expect_usage_error(run("rotations --schedule single:g=1 --position -1"), "--position");
  expect_usage_error(run("rotations --schedule single:g=1 --positions 8 --axis x"), "--axis");
  expect_usage_error(run("rotations --schedule axial2d:base=100,dim=8 --positions 8 --axis z"),
                     "x, y");
  expect_usage_error(
      run("rotations --schedule 'liere:axes=2,blocks=1/4|1/6' --realization hf --position 1"),
      "mixes position axes");
}

TEST_CASE("rotations --axis: the period along each axis of a mixed LieRE block",
          "[cli][multi-axis]") {
  // one block rotating by 2π(p1/4 + p2/6): along p2 with p1 = 3 the angle moves by 2π/6 a step,
  // period 6; along the diagonal by 2π·5/12, period 12 (gcd(5, 12) = 1)
  const std::string base =
      "rotations --schedule 'liere:axes=2,blocks=1/4|1/6' --realization r3 --format fp16 "
      "--positions 48 --json";
  const Run along = run(base + " --axis p2 --at 3,0");
  INFO(along.err);
  REQUIRE(along.code == 0);
  const auto j = nlohmann::json::parse(along.out);
  CHECK(j["period"] == 6);
  CHECK(j["axis"] == "p2");
  CHECK(j["at"] == nlohmann::json::array({3, 0}));
  const auto diagonal = nlohmann::json::parse(run(base).out);
  CHECK(diagonal["period"] == 12);
  CHECK(diagonal["axis"] == "diagonal");
}

TEST_CASE("horizon --axis: the head along x of axial2d is the one-axis head of its x blocks",
          "[cli][multi-axis]") {
  // axial2d:base=100,dim=8 along x at y = 0: blocks 0,1 rotate by x and x/10, blocks 2,3 are
  // the identity: the head over single frequencies {1, 1/10} = conventional:base=100,dim=4
  // (θ = 100^(-2k/4)) — the same certified range
  const Run a =
      run("horizon --schedule axial2d:base=100,dim=8 --axis x --k 1 --C 8 --format fp16 --json");
  const Run b =
      run("horizon --schedule conventional:base=100,dim=4 --k 1 --C 8 --format fp16 --json");
  INFO(a.err << b.err);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  if (ja.is_array()) ja = ja[0];
  if (jb.is_array()) jb = jb[0];
  CHECK(ja["n_max"] == jb["n_max"]);
  expect_usage_error(run("horizon --schedule axial2d:base=100,dim=8 --k 1 --C 8 --format fp16"),
                     "--axis");
}
