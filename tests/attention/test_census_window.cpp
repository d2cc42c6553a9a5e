// The census over a window S..S+N-1 (CensusOptions::start) and the largest class of equal
// realised rotations: hand-derived counts for fp16 positions and bf16 r2, and a brute-force
// recount from directly realised values.
#include <catch2/catch.hpp>
#include <map>
#include <tuple>

#include "attention/census/census.hpp"
#include "core/error.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;

namespace {

CensusOptions window(std::uint64_t start, std::uint64_t n) {
  CensusOptions o;
  o.start = start;
  o.positions = n;
  return o;
}

}  // namespace

TEST_CASE("fp16 positions: 6145 distinct rotations over 32768 positions, largest class 17 at 16408",
          "[census][window]") {
  // Derivation (by hand): t = fp16(i). Integers 0..2048 are exact (11 significant bits);
  // then the spacing doubles every binade: [2048,4096) step 2, [4096,8192) step 4,
  // [8192,16384) step 8, [16384,32768) step 16: 1024 values each; 32767 rounds up to 32768.
  // Distinct t over 0..32767: 2048 + 4·1024 + 1 = 6145, and every other step is fp32, so
  // distinct t give distinct angles t·inv_freq_0 = t (inv_freq_0 = 1). First repeat: 2049 ties
  // to the even 2048. Largest class: in the step-16 binade t = 16384 + 16j keeps both tie
  // points t ± 8 when j is even (17 positions t-8..t+8), the first such full class is j = 2,
  // t = 16416, positions 16408..16424 (t = 16384 has only 16380..16392: 13 positions).
  const Schedule s = parse_schedule("conventional:base=10000,dim=128");
  const Realisation r =
      parse_realisation("pipeline:position=fp16", ropesim::numeric::Format::fp32());
  const CensusResult c = census(s, r, window(0, 32768));
  CHECK(c.distinct_rotations == 6145);
  REQUIRE(c.first_repeat.has_value());
  CHECK(c.first_repeat->earlier == 2048);
  CHECK(c.first_repeat->later == 2049);
  CHECK(c.largest_class.size == 17);
  CHECK(c.largest_class.position == 16408);
  CHECK(c.start == 0);
}

TEST_CASE("r2 at bf16 on single:g=1 from 65536: 65536..65792 share one rotation",
          "[census][window]") {
  // bf16 has 8 significant bits: on [2^16, 2^17) its spacing is 2^(16-7) = 512. i ≤ 65791
  // rounds down to 65536; 65792 = 65536 + 256 is the midpoint to 66048 = 2^16·(1 + 2^-7) and
  // ties to the even significand (65536's); θ̂ = 1, so φ = î and the rotation is one value.
  const Schedule s = parse_schedule("single:g=1");
  const Realisation r = parse_realisation("r2", ropesim::numeric::Format::bf16());
  const CensusResult c = census(s, r, window(65536, 257));
  CHECK(c.distinct_rotations == 1);
  CHECK(c.largest_class.size == 257);
  CHECK(c.largest_class.position == 65536);
  REQUIRE(c.first_repeat.has_value());
  CHECK(c.first_repeat->earlier == 65536);
  CHECK(c.first_repeat->later == 65537);
  REQUIRE(c.period.has_value());
  CHECK(*c.period == 1);
  // 65793 lies above the midpoint: î = 66048, a second rotation
  const CensusResult d = census(s, r, window(65792, 2));
  CHECK(d.distinct_rotations == 2);
  CHECK(!d.first_repeat.has_value());
  CHECK(d.largest_class.size == 1);
  CHECK(d.largest_class.position == 65792);
  // 66047 rounds to 66048 (65 below it, 447 above 65536... nearer 66048): same as 66048
  const CensusResult e = census(s, r, window(66047, 2));
  CHECK(e.distinct_rotations == 1);
  CHECK(e.largest_class.size == 2);
  CHECK(e.largest_class.position == 66047);
}

TEST_CASE("census window: positions are absolute and match a brute-force recount",
          "[census][window]") {
  // Brute force from realise_block over the window: classes by (cos, sin) bit patterns of
  // every block, first repeat, smallest period and witnesses by direct comparison.
  const Schedule s = parse_schedule("conventional:base=10000,dim=8");
  for (const char* spec : {"r2", "hf"}) {
    const Realisation r = parse_realisation(spec, ropesim::numeric::Format::fp8e5m2());
    const std::uint64_t start = 1000, n = 300;
    std::vector<std::vector<std::uint64_t>> keys(n);
    for (std::size_t b = 0; b < s.blocks.size(); ++b) {
      const auto pairs = realise_block(s, r, b, start, start + n);
      for (std::uint64_t k = 0; k < n; ++k) {
        keys[k].push_back(pairs[k].cos.bits_key());
        keys[k].push_back(pairs[k].sin.bits_key());
      }
    }
    std::map<std::vector<std::uint64_t>, std::pair<std::uint64_t, std::uint64_t>>
        classes;  // key → (count, first)
    std::optional<std::pair<std::uint64_t, std::uint64_t>> first_repeat;
    for (std::uint64_t k = 0; k < n; ++k) {
      auto [it, fresh] = classes.try_emplace(keys[k], 0, start + k);
      ++it->second.first;
      if (!fresh && !first_repeat) first_repeat = {it->second.second, start + k};
    }
    std::uint64_t best = 0, best_pos = 0;
    for (const auto& [key, v] : classes) {
      if (v.first > best || (v.first == best && v.second < best_pos)) {
        best = v.first;
        best_pos = v.second;
      }
    }
    CensusOptions o = window(start, n);
    o.max_period = 40;
    const CensusResult c = census(s, r, o);
    INFO(spec);
    CHECK(c.start == start);
    CHECK(c.distinct_rotations == classes.size());
    CHECK(c.largest_class.size == best);
    CHECK(c.largest_class.position == best_pos);
    REQUIRE(c.first_repeat.has_value() == first_repeat.has_value());
    if (first_repeat) {
      CHECK(c.first_repeat->earlier == first_repeat->first);
      CHECK(c.first_repeat->later == first_repeat->second);
    }
    if (!c.period) {
      for (std::uint64_t p = 1; p <= 40; ++p) {
        std::int64_t w = -1;
        for (std::uint64_t k = 0; k + p < n && w < 0; ++k) {
          if (keys[k] != keys[k + p]) w = static_cast<std::int64_t>(start + k);
        }
        CHECK(c.witnesses[p - 1] == w);
      }
    }
  }
}

TEST_CASE("census window: S + N - 1 beyond 2^63 - 1 is refused", "[census][window]") {
  const Schedule s = parse_schedule("single:g=1");
  const Realisation r = parse_realisation("r1", ropesim::numeric::Format::fp32());
  CHECK_THROWS_AS(census(s, r, window(kMaxCensusLastPosition, 2)), InvalidArgument);
  CHECK_NOTHROW(census(s, r, window(kMaxCensusLastPosition - 1, 2)));
}
