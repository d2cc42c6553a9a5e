// The census's fast-path counters (CensusResult::fast_path, census.hpp): what the realisation
// fast path (numeric/trig/fast_trig.hpp) did for one census, counted per task and summed,
// so the same for every thread count. The expected counts are derived from what the census
// evaluates: every position of the window once per rotary block (the main pass), and again
// every block of every 4096-position chunk that holds a class of ≥ 2 positions (the
// verification of equal fingerprints); the known hard case (block 28 of llama2-7b at position
// 69891, r1 fp32) comes from tests/attention/test_realisation_fast_path.cpp's scan of
// positions 1..2^18.
#include <catch2/catch.hpp>
#include <cstdint>

#include "attention/census/census.hpp"
#include "numeric/format.hpp"

using namespace ropesim::attention;
using ropesim::numeric::Format;

namespace {

CensusOptions window(std::uint64_t start, std::uint64_t n, unsigned threads) {
  CensusOptions o;
  o.start = start;
  o.positions = n;
  o.threads = threads;
  return o;
}

void check_same(const FastPathStats& a, const FastPathStats& b) {
  CHECK(a.evaluations == b.evaluations);
  CHECK(a.fallbacks == b.fallbacks);
  CHECK(a.exact_cases == b.exact_cases);
  CHECK(a.exact_only == b.exact_only);
}

}  // namespace

TEST_CASE("census fast path: the hard case of llama2-7b r1 fp32 falls back", "[census]") {
  // Window 69632..73727 (17·4096 + 0..4095) holds position 69891, where block 28's rounding
  // test cannot decide; the scan of positions 1..2^18 found no other undecided rounding in any
  // block. 64 blocks (head_dim 128), no position 0 and no θ = 0: no exact cases; every r1 fp32
  // group is in the fast domain: no exact-only evaluation. fp32 (cos, sin) of 4096 positions
  // are all distinct, so no chunk is verified again: 4096·64 evaluations.
  const Schedule s = preset_schedule("llama2-7b");
  const Realisation r = parse_realisation("r1", Format::fp32());
  const CensusResult c = census(s, r, window(69632, 4096, 1));
  REQUIRE(c.distinct_rotations == 4096);
  CHECK(c.fast_path.fallbacks >= 1);
  CHECK(c.fast_path.fallbacks == 1);
  CHECK(c.fast_path.evaluations == 4096u * 64u);
  CHECK(c.fast_path.exact_cases == 0);
  CHECK(c.fast_path.exact_only == 0);
  check_same(census(s, r, window(69632, 4096, 2)).fast_path, c.fast_path);
  const auto j = to_json(c);
  CHECK(j["fast_path"]["fallbacks"] == 1);
  CHECK(j["fast_path"]["evaluations"] == 262144);
}

TEST_CASE("census fast path: llama2-7b hf bf16 on 4096 positions never falls back", "[census]") {
  // hf realises in fp32 (inv_freq, t, angle, cos/sin) and casts the table to bf16: its one
  // pipeline group is in the fast domain. Position 0's angle is 0 (cos 1, sin 0 decided without
  // a rounding test, no exact case). All 4096 rotations are distinct (the high-frequency blocks
  // separate them), so the main pass is all: 4096 positions × 64 blocks.
  const Schedule s = preset_schedule("llama2-7b");
  const Realisation r = parse_realisation("hf", Format::bf16());
  const CensusResult c = census(s, r, window(0, 4096, 2));
  REQUIRE(c.distinct_rotations == 4096);
  CHECK(c.fast_path.fallbacks == 0);
  CHECK(c.fast_path.evaluations == 4096u * 64u);
  CHECK(c.fast_path.exact_cases == 0);
  CHECK(c.fast_path.exact_only == 0);
  check_same(census(s, r, window(0, 4096, 1)).fast_path, c.fast_path);
}

TEST_CASE("census fast path: the verification pass is counted too", "[census]") {
  // r2 forms the angle in F: outside the fast domain, every evaluation is exact-only. r2 bf16
  // on llama2-7b repeats rotations within 4096 positions (distinct < 4096), so the one chunk
  // 0..4095 is realised again in all 64 blocks to verify the equal fingerprints:
  // 2 · 4096 · 64 evaluations, none through the fast path.
  const Schedule s = preset_schedule("llama2-7b");
  const Realisation r = parse_realisation("r2", Format::bf16());
  const CensusResult c = census(s, r, window(0, 4096, 1));
  REQUIRE(c.distinct_rotations < 4096);
  CHECK(c.fast_path.evaluations == 0);
  CHECK(c.fast_path.fallbacks == 0);
  CHECK(c.fast_path.exact_only == 2u * 4096u * 64u);
  check_same(census(s, r, window(0, 4096, 2)).fast_path, c.fast_path);
}

TEST_CASE("census fast path: constant blocks are not counted, whatever the tasks", "[census]") {
  // axial2d:base=100,dim=8: blocks 0 and 1 read x (θ = 1, 1/10), blocks 2 and 3 read y. Along
  // x with y fixed at 5, blocks 2 and 3 are one value for the whole window (realised once per
  // task, which is not counted), so only blocks 0 and 1 go through the fast path at positions
  // 0..65535: 2 · 65536 evaluations, of which position 0 (i = 0) is an exact case in each.
  // 65536 positions are 8 tasks on one thread and 16 on two: the counts must not see it.
  const Schedule s = parse_schedule("axial2d:base=100,dim=8");
  const Realisation r = parse_realisation("r1", Format::fp32());
  CensusOptions one = window(0, 65536, 1);
  one.axis = 0;
  one.at = {0, 5};
  CensusOptions two = one;
  two.threads = 2;
  const CensusResult c = census(s, r, one);
  REQUIRE(c.distinct_rotations == 65536);
  CHECK(c.fast_path.evaluations == 2u * 65536u);
  CHECK(c.fast_path.exact_cases == 2);
  CHECK(c.fast_path.exact_only == 0);
  check_same(census(s, r, two).fast_path, c.fast_path);
}
