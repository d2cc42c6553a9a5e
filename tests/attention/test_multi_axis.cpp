// Multi-axis schedules and tuple positions (schedule.hpp axial2d/mrope/hirope/liere,
// realisation.hpp PositionTuple, census.hpp CensusOptions::axis; docs/variants/MULTI_AXIS.md).
// Every expected value is derived by hand in the comment beside it.
#include <catch2/catch.hpp>
#include <optional>

#include "attention/census/census.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;
using ropesim::numeric::Format;

namespace {

std::vector<std::size_t> axes_read(const Schedule& s) {
  std::vector<std::size_t> out;
  for (const auto& b : s.blocks) {
    REQUIRE(b.axis_angles.size() == 1);
    out.push_back(b.axis_angles.front().axis);
  }
  return out;
}

CensusOptions along(std::uint64_t n, std::optional<std::size_t> axis, PositionTuple at = {}) {
  CensusOptions o;
  o.positions = n;
  o.axis = axis;
  o.at = std::move(at);
  return o;
}

bool same(const RealisedPair& a, const RealisedPair& b) {
  return a.cos.same_bits(b.cos) && a.sin.same_bits(b.sin) && a.flags == b.flags;
}

bool same(const RealisedRotation& a, const RealisedRotation& b) {
  if (a.blocks.size() != b.blocks.size()) return false;
  for (std::size_t d = 0; d < a.blocks.size(); ++d) {
    if (!same(a.blocks[d], b.blocks[d])) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("axial2d: half the blocks read x, half y, with θ_k = B^(-4k/D)", "[multi-axis]") {
  // D = 8: D/4 = 2 frequencies per axis, θ_0 = 100^0 = 1, θ_1 = 100^(-4/8) = 1/10;
  // compute_axial_cis lays them out as cat(x part, y part): blocks 0,1 read x, 2,3 read y.
  const Schedule s = parse_schedule("axial2d:base=100,dim=8");
  REQUIRE(s.position_axes == std::vector<std::string>{"x", "y"});
  REQUIRE(axes_read(s) == std::vector<std::size_t>{0, 0, 1, 1});
  CHECK(s.blocks[0].axis_angles[0].theta.to_double() == 1.0);
  CHECK(s.blocks[1].axis_angles[0].theta.to_double() == 0.1);
  CHECK(s.blocks[2].axis_angles[0].theta.to_double() == 1.0);
  CHECK(s.blocks[3].axis_angles[0].theta.to_double() == 0.1);
  // pipelines see inv_freq_k = β^(-2k/(D/2)): exponent dim 4, frequency index k per axis
  CHECK(*s.exponent_dim == 4);
  CHECK(s.blocks[3].frequency_index == 1);
  CHECK(s.spec == "axial2d:base=100,dim=8");
  CHECK_THROWS_AS(parse_schedule("axial2d:base=100,dim=6"),
                  InvalidArgument);  // 6 is not a multiple of 4
}

TEST_CASE("mrope and hirope: sections and levels in block order", "[multi-axis]") {
  // sections 2,1,3 over D/2 = 6 blocks: t t h w w w
  const Schedule m = parse_schedule("mrope:base=10000,dim=12,sections=2,1,3");
  REQUIRE(m.position_axes == std::vector<std::string>{"t", "h", "w"});
  CHECK(axes_read(m) == std::vector<std::size_t>{0, 0, 1, 2, 2, 2});
  CHECK(m.spec == "mrope:base=10000,dim=12,sections=2,1,3");
  CHECK_THROWS_AS(parse_schedule("mrope:base=10000,dim=12,sections=2,2,3"),
                  InvalidArgument);  // 7 ≠ 6
  // default split of 8 blocks into 3 levels: 8 = 2 + 3 + 3 (remainder 2 to the last levels)
  const Schedule h = parse_schedule("hirope:base=10000,dim=16,levels=3");
  REQUIRE(h.position_axes == std::vector<std::string>{"level1", "level2", "level3"});
  CHECK(axes_read(h) == std::vector<std::size_t>{0, 0, 1, 1, 1, 2, 2, 2});
  const Schedule h2 = parse_schedule("hirope:base=10000,dim=8,levels=2,split=3,1");
  CHECK(axes_read(h2) == std::vector<std::size_t>{0, 0, 0, 1});
}

TEST_CASE("r1 at a tuple: each block rotates by θ_{d,a}·p_a of its axis", "[multi-axis]") {
  // mrope D = 4, sections 1,1,0: θ_0 = 1 reads t, θ_1 = 10000^(-2/4) = 1/100 reads h.
  // At (t,h,w) = (2,100,7): angles 1·2 = 2 and 100/100 = 1 (w is read by no block).
  const Schedule s = parse_schedule("mrope:base=10000,dim=4,sections=1,1,0");
  const Realisation r = parse_realisation("r1", Format::fp32());
  const PositionReport rep = query_position(s, r, PositionTuple{2, 100, 7});
  CHECK(rep.tuple == PositionTuple{2, 100, 7});
  CHECK(rep.blocks[0].exact_angle == 2.0);
  CHECK(rep.blocks[1].exact_angle == 1.0);
  // wrong tuple length: refused naming the axes
  CHECK_THROWS_WITH(realise(s, r, PositionTuple{1, 2}), Catch::Contains("(t,h,w)"));
}

TEST_CASE("exact turns per axis: values by hand", "[multi-axis]") {
  // block 0 reads p1 with θ = 2π/4, block 1 reads p2 with θ = 2π/6
  const Schedule s = parse_schedule("liere:axes=2,blocks=1/4|0/1,0/1|1/6");
  const Realisation r = parse_realisation("r1", Format::bf16());
  const RealisedRotation rot = realise(s, r, PositionTuple{1, 2});
  // block 0: angle π/2 → (0, 1) exactly
  CHECK(rot.blocks[0].cos.to_double() == 0.0);
  CHECK(rot.blocks[0].sin.to_double() == 1.0);
  // block 1: angle 2·2π/6 = 2π/3 → cos = -1/2 exactly, sin = √3/2 = 0.8660254...; bf16 (8
  // significant bits) on [1/2, 1) has ulp 2^-8: 0.8660254·256 = 221.70 → 222/256 = 0.8671875
  CHECK(rot.blocks[1].cos.to_double() == -0.5);
  CHECK(rot.blocks[1].sin.to_double() == 0.8671875);
}

TEST_CASE("a block mixing axes (LieRE commuting generators): r1 = r3 and the period lattice",
          "[multi-axis]") {
  // one block, θ_1 = 2π/4 on p1 and θ_2 = 2π/6 on p2: angle 2π(p1/4 + p2/6)
  const Schedule s = parse_schedule("liere:axes=2,blocks=1/4|1/6");
  REQUIRE(s.blocks[0].axis_angles.size() == 2);
  const Realisation r1 = parse_realisation("r1", Format::bf16());
  const Realisation r3 = parse_realisation("r3", Format::bf16());
  // (1,1): 2π·(3/12 + 2/12) = 2π·5/12 = 150°: cos = -√3/2 → -0.8671875 in bf16, sin = 1/2
  const RealisedRotation a = realise(s, r1, PositionTuple{1, 1});
  CHECK(a.blocks[0].cos.to_double() == -0.8671875);
  CHECK(a.blocks[0].sin.to_double() == 0.5);
  CHECK(same(a, realise(s, r3, PositionTuple{1, 1})));
  // (2,3) is in the period lattice: 2/4 + 3/6 = 1, so R(p + (2,3)) = R(p); (1,0) is not
  for (const PositionTuple& p : {PositionTuple{0, 0}, PositionTuple{1, 0}, PositionTuple{5, 7}}) {
    const RealisedRotation base = realise(s, r1, p);
    CHECK(same(base, realise(s, r1, PositionTuple{p[0] + 2, p[1] + 3})));
    CHECK(!same(base, realise(s, r1, PositionTuple{p[0] + 1, p[1]})));
  }
  // a scalar position i is the tuple (i, i): angle 2π·5i/12
  CHECK(same(realise(s, r1, std::uint64_t{7}), realise(s, r1, PositionTuple{7, 7})));
  // no framework step list for a mixed block
  CHECK_THROWS_WITH(realise(s, parse_realisation("hf", Format::bf16()), PositionTuple{1, 1}),
                    Catch::Contains("mixes position axes"));
}

TEST_CASE("r2 of a mixed block forms Σ rnd(θ̂_a·p̂_a) in axis order", "[multi-axis]") {
  // θ = 1 on both axes, bf16, p = (257, 1): p̂_1 = rnd(257) = 256 (ulp 2 on [256, 512), the tie
  // goes to the even significand), term 1·256 = 256; term 1·1 = 1; φ = rnd(256 + 1) = 256
  // (a tie again). The exact angle is 258.
  const Schedule s = parse_schedule("liere:axes=2,blocks=1|1");
  const Realisation r2 = parse_realisation("r2", Format::bf16());
  const PositionReport rep = query_position(s, r2, PositionTuple{257, 1});
  REQUIRE(rep.blocks.size() == 1);
  std::optional<double> phi, p_hat_1;
  for (const auto& [name, v] : rep.blocks[0].steps) {
    if (name == "phi") phi = v.to_double();
    if (name == "p_hat_p1") p_hat_1 = v.to_double();
  }
  CHECK(p_hat_1 == 256.0);
  CHECK(phi == 256.0);
  CHECK(rep.blocks[0].exact_angle == 258.0);
  // decimals and turns do not mix within a block
  CHECK_THROWS_AS(parse_schedule("liere:axes=2,blocks=1/4|0.5"), InvalidArgument);
}

TEST_CASE("one-axis blocks at the diagonal (i,...,i) are the one-axis schedule at i",
          "[multi-axis]") {
  // mrope's blocks are conventional:base=10000,dim=16's, each reading one axis; at (i,i,i)
  // every block reads i, so every realisation (the hf pipeline too) gives the old bits.
  const Schedule m = parse_schedule("mrope:base=10000,dim=16,sections=2,3,3");
  const Schedule c = parse_schedule("conventional:base=10000,dim=16");
  for (const char* spec : {"r1", "r2", "hf"}) {
    const Realisation r = parse_realisation(spec, Format::bf16());
    for (std::uint64_t i : {0ull, 1ull, 1857ull, 70001ull}) {
      INFO(spec << " i=" << i);
      CHECK(same(realise(m, r, PositionTuple{i, i, i}), realise(c, r, i)));
    }
  }
  // axial2d:base=100,dim=8 at (x, y) = conventional:base=100,dim=4 at x (blocks 0,1) and at
  // y (blocks 2,3): θ_k = 100^(-4k/8) = 100^(-2k/4), and the pipeline's exponent 2k/4 is
  // the same fp32 quotient
  const Schedule ax = parse_schedule("axial2d:base=100,dim=8");
  const Schedule half = parse_schedule("conventional:base=100,dim=4");
  const Realisation hf = parse_realisation("hf", Format::fp16());
  const RealisedRotation xy = realise(ax, hf, PositionTuple{300, 4097});
  const RealisedRotation x = realise(half, hf, std::uint64_t{300});
  const RealisedRotation y = realise(half, hf, std::uint64_t{4097});
  CHECK(same(xy.blocks[0], x.blocks[0]));
  CHECK(same(xy.blocks[1], x.blocks[1]));
  CHECK(same(xy.blocks[2], y.blocks[0]));
  CHECK(same(xy.blocks[3], y.blocks[1]));
}

TEST_CASE("census along each axis of a periodic multi-axis schedule", "[multi-axis][census]") {
  const Realisation r1 = parse_realisation("r1", Format::fp32());
  // blocks read one axis each: period 4 along p1, 6 along p2, lcm(4, 6) = 12 on the diagonal
  const Schedule s = parse_schedule("liere:axes=2,blocks=1/4|0/1,0/1|1/6");
  const CensusResult c1 = census(s, r1, along(48, 0));
  CHECK(c1.period == 4u);
  CHECK(c1.axis == "p1");
  CHECK(c1.period_per_block[1] == 1u);  // block 1 reads p2, fixed at 0
  CHECK(census(s, r1, along(48, 1, {5, 0})).period == 6u);
  CHECK(census(s, r1, along(48, std::nullopt)).period == 12u);
  // one block mixing axes, 2π(p1/4 + p2/6): along p1 (p2 = 5) period 4, along p2 period 6,
  // on the diagonal 2π·5i/12: period 12 (gcd(5, 12) = 1). r3 gives the same.
  const Schedule mixed = parse_schedule("liere:axes=2,blocks=1/4|1/6");
  const Realisation r3 = parse_realisation("r3", Format::fp16());
  CHECK(census(mixed, r3, along(48, 0, {0, 5})).period == 4u);
  CHECK(census(mixed, r3, along(48, 1, {3, 0})).period == 6u);
  CHECK(census(mixed, r3, along(48, std::nullopt)).period == 12u);
  CHECK(census(mixed, r1, along(48, std::nullopt)).period == 12u);
}

TEST_CASE("census along x of axial2d: a witness of non-periodicity, y blocks constant",
          "[multi-axis][census]") {
  // along x with y = 3: blocks 2,3 read y and hold one value each (period 1, one distinct);
  // blocks 0,1 rotate by x and 0.1·x, never repeating in fp32 (cos 1 ≠ 1): for P = 1 the
  // witness is i = 0 (R̂(1,3) ≠ R̂(0,3)).
  const Schedule s = parse_schedule("axial2d:base=100,dim=8");
  const CensusResult c = census(s, parse_realisation("r1", Format::fp32()), along(64, 0, {0, 3}));
  CHECK(!c.period.has_value());
  CHECK(c.witnesses.at(0) == 0);
  CHECK(c.distinct_per_block == std::vector<std::uint64_t>{64, 64, 1, 1});
  CHECK(c.period_per_block[2] == 1u);
  CHECK(c.at == PositionTuple{0, 3});
}

TEST_CASE("census line errors name the axes", "[multi-axis][census]") {
  const Realisation r1 = parse_realisation("r1", Format::fp32());
  CHECK_THROWS_WITH(census(parse_schedule("single:g=1"), r1, along(8, 0)),
                    Catch::Contains("scalar positions"));
  const Schedule s = parse_schedule("axial2d:base=100,dim=8");
  CHECK_THROWS_WITH(census(s, r1, along(8, 2)), Catch::Contains("x, y"));
  CHECK_THROWS_WITH(census(s, r1, along(8, 0, {1, 2, 3})), Catch::Contains("x, y"));
  CHECK_THROWS_WITH(s.axis_index("z"), Catch::Contains("x, y"));
  CHECK(s.axis_index("y") == 1);
  CHECK_THROWS_AS(realise(s, parse_realisation("r3", Format::fp32()), PositionTuple{1, 1}),
                  InvalidArgument);
}

TEST_CASE("position tuples: parsing and text", "[multi-axis]") {
  CHECK(parse_position_tuple("(1,2,3)") == PositionTuple{1, 2, 3});
  CHECK(parse_position_tuple("1, 2") == PositionTuple{1, 2});
  CHECK(parse_position_tuple("9223372036854775807") == PositionTuple{9223372036854775807ull});
  CHECK_THROWS_AS(parse_position_tuple("9223372036854775808"), InvalidArgument);
  CHECK_THROWS_AS(parse_position_tuple("(1,-2)"), InvalidArgument);
  CHECK_THROWS_AS(parse_position_tuple("(1,2"), InvalidArgument);
  CHECK_THROWS_AS(parse_position_tuple(""), InvalidArgument);
  CHECK(to_string(PositionTuple{4, 5}) == "(4,5)");
  CHECK(to_string(PositionTuple{4}) == "4");
}
