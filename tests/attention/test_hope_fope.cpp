// HoPE (arXiv 2410.21216) and FoPE (arXiv 2412.17739) schedules: which blocks are dropped,
// the FoPE coefficients, the spellings, and the claims at finite precision
// (docs/variants/HOPE_FOPE.md). Expected values are derived by hand (next to each number) and
// by tests/derivations/hope_fope_values.py (mpmath, fractions; shares nothing with ropesim).
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "attention/census/census.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;

namespace {

std::set<std::size_t> dropped_blocks(const Schedule& s) {
  std::set<std::size_t> out;
  for (const auto& b : s.blocks) {
    if (b.dropped) {
      REQUIRE(b.theta.is_zero());
      REQUIRE(b.turn.has_value());
      out.insert(b.index);
    }
  }
  return out;
}

std::string error_of(const std::string& spec) {
  try {
    parse_schedule(spec);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

CensusOptions window(std::uint64_t n) {
  CensusOptions o;
  o.positions = n;
  return o;
}

}  // namespace

TEST_CASE("hope drops exactly the blocks whose wavelength exceeds train_len (dim 8, by hand)",
          "[schedule][hope]") {
  // base 10000, dim 8: θ_k = 10000^(-2k/8) = 10^(-k), so the wavelengths 2π/θ_k are 2π·10^k =
  // 6.2832, 62.832, 628.32, 6283.2. A block is dropped iff 2π·10^k > T. The pairs 628/629 and
  // 6283/6284 straddle 200π = 628.3185... and 2000π = 6283.185...: only an exact comparison
  // with π separates them (hope_fope_values.py prints the same sets).
  const std::vector<std::pair<std::uint64_t, std::set<std::size_t>>> cases = {
      {6, {0, 1, 2, 3}}, {7, {1, 2, 3}}, {62, {1, 2, 3}}, {63, {2, 3}}, {100, {2, 3}},
      {628, {2, 3}},     {629, {3}},     {6283, {3}},     {6284, {}}};
  for (const auto& [T, expected] : cases) {
    INFO("train_len = " << T);
    const Schedule s = parse_schedule("hope:base=10000,dim=8,train_len=" + std::to_string(T));
    REQUIRE(s.kind == "hope");
    REQUIRE(s.blocks.size() == 4);
    CHECK(dropped_blocks(s) == expected);
    CHECK(s.train_len == T);
    // the kept blocks keep their conventional angle 10^(-k) exactly (rational, not 2πa/m)
    for (const auto& b : s.blocks) {
      if (b.dropped) continue;
      REQUIRE(b.theta.as_rational() == mpq_class(1, std::vector<int>{1, 10, 100, 1000}[b.index]));
      REQUIRE_FALSE(b.turn.has_value());
    }
  }
}

TEST_CASE("hope at head dim 128: the count of dropped blocks", "[schedule][hope]") {
  // θ_k = 10^(-k/16) (base 10000, dim 128): kept iff 2π·10^(k/16) ≤ T ⟺ k ≤ 16·log10(T/2π).
  // T = 4096: 16·log10(651.90) = 16·2.81418 = 45.03 → blocks 0..45 kept, 46..63 dropped (18).
  // T = 512: 16·log10(81.487) = 30.57 → 33 dropped from 31; T = 1024: 35.39 → 28 from 36;
  // T = 8192: 49.85 → 14 from 50 (hope_fope_values.py).
  const std::vector<std::tuple<std::uint64_t, std::size_t, std::size_t>> cases = {
      {512, 33, 31}, {1024, 28, 36}, {4096, 18, 46}, {8192, 14, 50}};
  for (const auto& [T, count, first] : cases) {
    INFO("train_len = " << T);
    const auto d =
        dropped_blocks(parse_schedule("hope:base=10000,dim=128,train_len=" + std::to_string(T)));
    CHECK(d.size() == count);
    CHECK(*d.begin() == first);
    CHECK(*d.rbegin() == 63);  // the dropped blocks are the lowest frequencies, contiguous
  }
}

TEST_CASE("hope activated=K drops the K lowest-frequency blocks left rotating",
          "[schedule][hope]") {
  // T = 100 keeps blocks 0, 1 (above); activated=1 then drops block 1 as well.
  const Schedule s = parse_schedule("hope:base=10000,dim=8,train_len=100,activated=1");
  CHECK(dropped_blocks(s) == std::set<std::size_t>{1, 2, 3});
  CHECK(s.hope_activated == 1u);
  CHECK(s.spec == "hope:base=10000,dim=8,train_len=100,activated=1");
  CHECK(parse_schedule("hope:base=10000,dim=8,train_len=100,activated=2").blocks[0].dropped);
  CHECK_THROWS_WITH(parse_schedule("hope:base=10000,dim=8,train_len=100,activated=3"),
                    Catch::Contains("activated=3 exceeds the 2 blocks"));
}

TEST_CASE("hope and fope spellings: exact parsing, one-line refusals naming the keys",
          "[schedule][hope][fope]") {
  // canonical specs parse back to themselves
  for (const std::string spec : {"hope:base=10000,dim=8,train_len=100",
                                 "fope:base=10000,dim=8,train_len=100,sigma=3/10,seed=0",
                                 "fope:base=500000,dim=128,train_len=8192,sigma=1/20,seed=7"}) {
    CHECK(parse_schedule(spec).spec == spec);
    CHECK(parse_schedule(parse_schedule(spec).spec).spec == spec);
  }
  CHECK(parse_schedule("fope:base=1e4,dim=8,train_len=100").spec ==
        "fope:base=10000,dim=8,train_len=100,sigma=3/10,seed=0");
  CHECK(parse_schedule("fope:base=1e4,dim=8,train_len=100,sigma=0.05").fope_sigma ==
        mpq_class(1, 20));
  const std::string bad_key = error_of("hope:base=10000,dim=8,train_len=100,p=0.5");
  CHECK(bad_key.find("unexpected key 'p' (hope accepts base, dim, train_len, activated)") !=
        std::string::npos);
  CHECK(bad_key.find('\n') == std::string::npos);
  CHECK(error_of("fope:base=10000,dim=8,train_len=100,activated=1")
            .find("(fope accepts base, dim, train_len, sigma, seed)") != std::string::npos);
  CHECK(error_of("hope:base=10000,dim=8").find("missing train_len=") != std::string::npos);
  CHECK(error_of("hope:base=10000,dim=8,train_len=0")
            .find("train_len: '0' is out of range; accepted: an integer in 1..") !=
        std::string::npos);
  CHECK(
      error_of("hope:base=10000,dim=8,train_len=1.5").find("train_len: '1.5' is not an integer") !=
      std::string::npos);
  CHECK(
      error_of("fope:base=10000,dim=8,train_len=10,seed=-1").find("seed: '-1' is not an integer") !=
      std::string::npos);
  CHECK(error_of("fope:base=10000,dim=8,train_len=10,sigma=-1").find("sigma must be ≥ 0") !=
        std::string::npos);
  CHECK(error_of("hope:base=10000,dim=7,train_len=10").find("2..65536") != std::string::npos);
  for (const std::string spec :
       {"hope:base=10000,dim=8,train_len=100,p=0.5", "hope:base=10000,dim=8,train_len=0"}) {
    CHECK(error_of(spec).rfind("bad schedule '" + spec + "'", 0) == 0);
  }
}

TEST_CASE("to_json shows the hope and fope metadata", "[schedule][hope][fope]") {
  const auto h = to_json(parse_schedule("hope:base=10000,dim=8,train_len=100"));
  CHECK(h["kind"] == "hope");
  CHECK(h["train_len"] == 100);
  CHECK(h["hope_activated"] == 0);
  CHECK(h["base"] == "10000");
  CHECK(h["exponent_dim"] == 8);
  CHECK(h["blocks"][2]["dropped"] == true);
  CHECK(h["blocks"][1]["dropped"] == false);
  CHECK_FALSE(h.contains("fope"));
  const auto f = to_json(parse_schedule("fope:base=10000,dim=8,train_len=100,sigma=0.05,seed=7"));
  CHECK(f["kind"] == "fope");
  CHECK(f["train_len"] == 100);
  CHECK(f["fope"]["sigma"] == "1/20");
  CHECK(f["fope"]["seed"] == 7);
  CHECK(f["fope"]["clipped"] == 2);
  CHECK_FALSE(f.contains("hope_activated"));
  CHECK_FALSE(to_json(parse_schedule("conventional:base=10000,dim=8")).contains("train_len"));
}

TEST_CASE("fope clips the components below the floor frequency 2π/T, like hope's rule",
          "[schedule][fope]") {
  // The same exact rule as hope (θ_k < 2π/T ⟺ 2π/θ_k > T): the dim-8 sets above.
  CHECK(dropped_blocks(parse_schedule("fope:base=10000,dim=8,train_len=628")) ==
        std::set<std::size_t>{2, 3});
  CHECK(dropped_blocks(parse_schedule("fope:base=10000,dim=8,train_len=629")) ==
        std::set<std::size_t>{3});
  // base 500000, dim 128, T 8192: 29 clipped from block 35 (hope_fope_values.py)
  const auto d = dropped_blocks(parse_schedule("fope:base=500000,dim=128,train_len=8192"));
  CHECK(d.size() == 29);
  CHECK(*d.begin() == 35);
}

TEST_CASE("fope coefficients: [k=m] + σ·z, z from SplitMix64 and Box–Muller in binary64",
          "[schedule][fope]") {
  // Exact values from tests/derivations/hope_fope_values.py (SplitMix64 in Python integers,
  // each Box–Muller step at 60 digits then rounded to nearest binary64 with Fraction).
  const Schedule s0 = parse_schedule("fope:base=10000,dim=8,train_len=100,sigma=3/10,seed=0");
  const Schedule s7 = parse_schedule("fope:base=10000,dim=8,train_len=100,sigma=3/10,seed=7");
  const mpq_class sigma(3, 10);
  struct Case {
    const Schedule* s;
    std::size_t k, m;
    mpq_class z;
  };
  const std::vector<Case> cases = {
      {&s0, 0, 0, mpq_class("-8156158360529807/18014398509481984")},
      {&s0, 0, 1, mpq_class("2984316836897017/1125899906842624")},
      {&s0, 1, 0, mpq_class("7205730732760401/4503599627370496")},
      {&s0, 3, 2, mpq_class("7768548986311767/9007199254740992")},
      {&s7, 0, 0, mpq_class("3073689401095985/2251799813685248")},
      {&s7, 0, 1, mpq_class("-7143140908786247/18014398509481984")},
      {&s7, 1, 0, mpq_class("-7714166223646083/4503599627370496")},
      {&s7, 3, 2, mpq_class("-7049117821823355/18014398509481984")},
  };
  for (const auto& c : cases) {
    INFO("seed " << *c.s->fope_seed << " k " << c.k << " m " << c.m);
    const mpq_class expected = (c.k == c.m ? mpq_class(1) : mpq_class(0)) + sigma * c.z;
    CHECK(fope_coefficient(*c.s, c.k, c.m) == expected);
  }
  // sigma = 0: the identity (each dimension keeps its own frequency only: RoPE)
  const Schedule id = parse_schedule("fope:base=10000,dim=8,train_len=100,sigma=0");
  for (std::size_t k = 0; k < 4; ++k) {
    for (std::size_t m = 0; m < 4; ++m) CHECK(fope_coefficient(id, k, m) == (k == m ? 1 : 0));
  }
  CHECK_THROWS_WITH(fope_coefficient(s0, 4, 0), Catch::Contains("must be < 4"));
  CHECK_THROWS_WITH(fope_coefficient(parse_schedule("hope:base=10000,dim=8,train_len=100"), 0, 0),
                    Catch::Contains("needs a fope schedule"));
}

TEST_CASE("HoPE/FoPE claims at finite precision: dropped blocks have period 1, kept blocks none",
          "[census][hope][fope]") {
  // A dropped block realises Rot(0·i) = (1, 0) at every position in every format and every
  // realisation (r2: φ = round(0·î) = 0; hf: the table holds (1, 0)), so its period is 1.
  // A kept block has θ = 10^(-k) with θ/2π irrational, so under r1 it never repeats
  // [RoPE-X Prop 4.1]; under r2/hf a repeat within 2048 positions would need round(θ̂·î) to
  // repeat with a period, which the census refutes by a witness (checked here: no period).
  for (const std::string spec :
       {"hope:base=10000,dim=8,train_len=100", "fope:base=10000,dim=8,train_len=100"}) {
    const Schedule s = parse_schedule(spec);
    for (const std::string rs : {"r1", "r2", "hf"}) {
      for (const Format& f : {Format::bf16(), Format::fp16(), Format::fp32()}) {
        INFO(spec << " " << rs << " " << f.name);
        const CensusResult c = census(s, parse_realisation(rs, f), window(2048));
        REQUIRE(c.period_per_block.size() == 4);
        CHECK(c.period_per_block[2] == 1u);
        CHECK(c.period_per_block[3] == 1u);
        CHECK(c.distinct_per_block[2] == 1u);
        CHECK(c.distinct_per_block[3] == 1u);
        CHECK_FALSE(c.period_per_block[0].has_value());
        CHECK_FALSE(c.period_per_block[1].has_value());
        CHECK_FALSE(c.period.has_value());  // the whole map is RoPE_NP: the kept blocks are
      }
    }
    // r3 needs 2πa/m angles: the kept blocks have none
    CHECK_THROWS_WITH(census(s, parse_realisation("r3", Format::fp32()), window(16)),
                      Catch::Contains("block 0"));
  }
  // train_len below the shortest wavelength 2π: every block dropped, the map is periodic with
  // period 1 in every format (the census' first repeat is at position 1).
  const CensusResult all = census(parse_schedule("hope:base=10000,dim=8,train_len=6"),
                                  parse_realisation("r2", Format::bf16()), window(64));
  CHECK(all.period == 1u);
  CHECK(all.distinct_rotations == 1u);
}

TEST_CASE("r2 at fp16: a dropped block stops being position-independent at i >= 65520",
          "[census][hope]") {
  // fp16's largest finite value is 65504; i ≥ 65520 (the midpoint to 2^16, which ties to the
  // even significand 2^16 and overflows) rounds to î = +inf. A dropped block has θ̂ = 0, and
  // φ = round(0·inf) = NaN (IEEE 754 invalid operation), so cos φ = sin φ = NaN: the block has
  // two realised values, (1, 0) below 65520 and NaN from there, and no period on 0..65535.
  // On 0..65519 it has period 1 (the test above, and this census on a shorter window).
  const Schedule s = parse_schedule("hope:base=10000,dim=8,train_len=100");
  const Realisation r2 = parse_realisation("r2", Format::fp16());
  const CensusResult full = census(s, r2, window(65536));
  CHECK(full.distinct_per_block[2] == 2u);
  CHECK(full.distinct_per_block[3] == 2u);
  CHECK_FALSE(full.period_per_block[2].has_value());
  CHECK(full.nan.count == 16u);
  CHECK(full.nan.first == 65520u);
  const CensusResult below = census(s, r2, window(65520));
  CHECK(below.period_per_block[2] == 1u);
  CHECK(below.nan.count == 0u);
  // hf forms the angle in fp32 and no angle at all for a dropped block: (1, 0) everywhere
  const CensusResult hf = census(s, parse_realisation("hf", Format::fp16()), window(65536));
  CHECK(hf.period_per_block[2] == 1u);
  CHECK(hf.nan.count == 0u);
}
