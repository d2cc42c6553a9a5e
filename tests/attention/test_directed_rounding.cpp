// Realised values under every rounding direction (THEORY §2.1 "every choice configurable";
// NUMERIC §3), for every realisation: r1, r3, r2, hf, llamacpp-cpu, llamacpp-cuda.
//
// Every expected value is derived by hand: the exact real x is scaled by the quantum q of its
// binade in F (q = 2^(e-p+1) for |x| in [2^e, 2^(e+1))), the two neighbours in F are
// floor(x/q)·q and ceil(x/q)·q, and the mode picks one: toward-zero the smaller magnitude,
// upward the larger value, downward the smaller value, nearest the closer one (ties: even
// significand / away from zero). The decimals of x and x/q below come from
// tests/derivations/directed_values.py (exact fractions and 90-digit decimals, no ropesim
// code); its output lists every number used here.
#include <array>
#include <catch2/catch.hpp>
#include <string>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"

using namespace ropesim::attention;
using ropesim::numeric::Rounding;

namespace {

constexpr std::array<Rounding, 5> kModes = {Rounding::nearest_even, Rounding::nearest_away,
                                            Rounding::toward_zero, Rounding::upward,
                                            Rounding::downward};
enum { RNE, RNA, RZ, RU, RD };

/// Expected values per mode, indexed like kModes.
using PerMode = std::array<double, 5>;

const Value* step(const BlockReport& b, const std::string& name) {
  for (const auto& [n, v] : b.steps) {
    if (n == name) return &v;
  }
  return nullptr;
}

double step_value(const BlockReport& b, const std::string& name) {
  const Value* v = step(b, name);
  REQUIRE(v != nullptr);
  return v->to_double();
}

}  // namespace

TEST_CASE("r1 under each rounding mode: cos/sin of 1 and 2 (single:g=1) in fp16, bf16, fp32",
          "[realisation][r1][rounding]") {
  // cos 1 = 0.54030230586813971740...   sin 1 = 0.84147098480789650665...
  // cos 2 = -0.41614683654714238699...  sin 2 = 0.90929742682568169539...
  // fp16 (p = 11): cos 1 ∈ [1/2, 1), q = 2^-11: cos 1·2^11 = 1106.5391 → 1106 or 1107
  //   (0.539 > 1/2: nearest 1107); sin 1·2^11 = 1723.3326 → 1723 | 1724.
  //   cos 2 ∈ -[1/4, 1/2), q = 2^-12: |cos 2|·2^12 = 1704.5374 → magnitude 1704 | 1705; the value
  //   is negative, so toward-zero and upward take -1704·q, downward -1705·q, nearest 1705.
  //   sin 2·2^11 = 1862.2411 → 1862 | 1863.
  // bf16 (p = 8): cos 1·2^8 = 138.3174; sin 1·2^8 = 215.4166; |cos 2|·2^9 = 213.0672;
  //   sin 2·2^8 = 232.7801 (nearest rounds up: 233).
  // fp32 (p = 24): cos 1·2^24 = 9064768.4908; sin 1·2^24 = 14117540.4699;
  //   |cos 2|·2^25 = 13963570.7289 (nearest: up); sin 2·2^24 = 15255479.3381.
  struct Case {
    Format f;
    std::uint64_t position;
    PerMode cos, sin;
  };
  const std::vector<Case> cases{
      {Format::fp16(),
       1,
       {1107 / 2048.0, 1107 / 2048.0, 1106 / 2048.0, 1107 / 2048.0, 1106 / 2048.0},
       {1723 / 2048.0, 1723 / 2048.0, 1723 / 2048.0, 1724 / 2048.0, 1723 / 2048.0}},
      {Format::fp16(),
       2,
       {-1705 / 4096.0, -1705 / 4096.0, -1704 / 4096.0, -1704 / 4096.0, -1705 / 4096.0},
       {1862 / 2048.0, 1862 / 2048.0, 1862 / 2048.0, 1863 / 2048.0, 1862 / 2048.0}},
      {Format::bf16(),
       1,
       {138 / 256.0, 138 / 256.0, 138 / 256.0, 139 / 256.0, 138 / 256.0},
       {215 / 256.0, 215 / 256.0, 215 / 256.0, 216 / 256.0, 215 / 256.0}},
      {Format::bf16(),
       2,
       {-213 / 512.0, -213 / 512.0, -213 / 512.0, -213 / 512.0, -214 / 512.0},
       {233 / 256.0, 233 / 256.0, 232 / 256.0, 233 / 256.0, 232 / 256.0}},
      {Format::fp32(),
       1,
       {9064768 / 16777216.0, 9064768 / 16777216.0, 9064768 / 16777216.0, 9064769 / 16777216.0,
        9064768 / 16777216.0},
       {14117540 / 16777216.0, 14117540 / 16777216.0, 14117540 / 16777216.0, 14117541 / 16777216.0,
        14117540 / 16777216.0}},
      {Format::fp32(),
       2,
       {-13963571 / 33554432.0, -13963571 / 33554432.0, -13963570 / 33554432.0,
        -13963570 / 33554432.0, -13963571 / 33554432.0},
       {15255479 / 16777216.0, 15255479 / 16777216.0, 15255479 / 16777216.0, 15255480 / 16777216.0,
        15255479 / 16777216.0}},
  };
  const Schedule s = parse_schedule("single:g=1");
  for (const auto& c : cases) {
    for (std::size_t m = 0; m < kModes.size(); ++m) {
      INFO(c.f.name << " position " << c.position << " " << ropesim::numeric::to_string(kModes[m]));
      const Realisation r = parse_realisation("r1", c.f, kModes[m]);
      const RealisedRotation rot = realise(s, r, c.position);
      REQUIRE(rot.blocks.size() == 1);
      CHECK(rot.blocks[0].cos.to_double() == c.cos[m]);
      CHECK(rot.blocks[0].sin.to_double() == c.sin[m]);
      CHECK(rot.rounding == kModes[m]);
      // the streaming path gives the same values
      const auto v = realise_block(s, r, 0, c.position, c.position + 1);
      CHECK(v[0].cos.to_double() == c.cos[m]);
      CHECK(v[0].sin.to_double() == c.sin[m]);
    }
  }
}

TEST_CASE("r1 and r3 under each rounding mode: the periodic:m=8 table (angles kπ/4) in fp16",
          "[realisation][r3][rounding]") {
  // cos kπ/4, sin kπ/4 ∈ {0, ±1, ±√2/2}; √2/2 = 0.70710678118654752440..., ·2^11 = 1448.1547:
  // +√2/2 → 1448/2048 = 0.70703125 except upward: 1449/2048 = 0.70751953125;
  // -√2/2 → -0.70703125 except downward: -0.70751953125. 0 and ±1 are exact.
  const Schedule s = parse_schedule("periodic:m=8");
  const PerMode plus = {0.70703125, 0.70703125, 0.70703125, 0.70751953125, 0.70703125};
  const PerMode minus = {-0.70703125, -0.70703125, -0.70703125, -0.70703125, -0.70751953125};
  for (const char* spec : {"r1", "r3"}) {
    for (std::size_t m = 0; m < kModes.size(); ++m) {
      INFO(spec << " " << ropesim::numeric::to_string(kModes[m]));
      const Realisation r = parse_realisation(spec, Format::fp16(), kModes[m]);
      const auto v = realise_block(s, r, 0, 0, 17);
      // position i uses angle (i mod 8)·π/4
      const std::array<double, 8> c = {1, plus[m], 0, minus[m], -1, minus[m], 0, plus[m]};
      const std::array<double, 8> sn = {0, plus[m], 1, plus[m], 0, minus[m], -1, minus[m]};
      for (std::size_t i = 0; i < 17; ++i) {
        INFO("position " << i);
        CHECK(v[i].cos.to_double() == c[i % 8]);
        CHECK(v[i].sin.to_double() == sn[i % 8]);
      }
    }
  }
}

TEST_CASE("r2 under each rounding mode: GPT-NeoX #1003 entry (block 1, position 1857, fp16)",
          "[realisation][r2][rounding]") {
  // θ = 10000^(-1/16) = 0.56234132519034908039...; θ·2^11 = 1151.6750 → θ̂ = 1151·2^-11 =
  // 0.56201171875 (toward-zero, downward) or 1152·2^-11 = 0.5625 (upward, nearest).
  // î = 1857 (exact in fp16: integers up to 2048 are).
  // φ = θ̂·1857: 0.56201171875·1857 = 1043.65576171875 → 1043 (toward-zero, downward; q = 1
  //   in [1024, 2048)); 0.5625·1857 = 1044.5625 → 1045 (upward; nearest: .5625 > 1/2).
  // cos 1043 = 0.99996162275671199637, ·2^11 = 2047.9214 → 2047·2^-11 = 0.99951171875 (both
  //   toward-zero and downward round a positive value down);
  // sin 1043 = -0.00876087973683036410, |·|·2^17 = 1148.3060 → toward-zero -1148·2^-17 =
  //   -0.008758544921875, downward -1149·2^-17 = -0.00876617431640625;
  // cos 1045 = -0.40816462057732357873, |·|·2^12 = 1671.8423 → nearest -1672·2^-12 =
  //   -0.408203125, upward -1671·2^-12 = -0.407958984375;
  // sin 1045 = 0.91290834288496316787, ·2^11 = 1869.6363 → 1870·2^-11 = 0.9130859375 (nearest
  //   and upward alike).
  // With nearest-even in place of the requested mode, toward-zero would give θ̂ = 0.5625 and
  // cos = -0.4082 instead of 0.9995 (a mutant that ignored the mode survived before this case).
  const Schedule s = parse_schedule("conventional:base=10000,dim=32");
  const PerMode theta_hat = {0.5625, 0.5625, 0.56201171875, 0.5625, 0.56201171875};
  const PerMode phi = {1045, 1045, 1043, 1045, 1043};
  const PerMode cos = {-0.408203125, -0.408203125, 0.99951171875, -0.407958984375, 0.99951171875};
  const PerMode sin = {0.9130859375, 0.9130859375, -0.008758544921875, 0.9130859375,
                       -0.00876617431640625};
  for (std::size_t m = 0; m < kModes.size(); ++m) {
    INFO(ropesim::numeric::to_string(kModes[m]));
    const Realisation r = parse_realisation("r2", Format::fp16(), kModes[m]);
    const PositionReport rep = query_position(s, r, 1857);
    REQUIRE(rep.blocks.size() == 16);
    const BlockReport& b = rep.blocks[1];
    CHECK(step_value(b, "theta_hat") == theta_hat[m]);
    CHECK(step_value(b, "i_hat") == 1857);
    CHECK(step_value(b, "phi") == phi[m]);
    CHECK(b.cos.to_double() == cos[m]);
    CHECK(b.sin.to_double() == sin[m]);
    const auto v = realise_block(s, r, 1, 1857, 1858);
    CHECK(v[0].cos.to_double() == cos[m]);
    CHECK(v[0].sin.to_double() == sin[m]);
  }
}

TEST_CASE("r2 under each rounding mode rounds the position: single:g=2^-10 at 2049 in fp16",
          "[realisation][r2][rounding]") {
  // 2049 = 2^11 + 1 needs 12 bits; fp16 (p = 11) has 2048 and 2050 around it, and 2049 is their
  // midpoint: nearest-even → 2048 (significand 1.0000000000 is even), nearest-away → 2050,
  // toward-zero and downward → 2048, upward → 2050.
  // θ̂ = 2^-10 exactly; φ = î·2^-10 = 2 or 2.001953125 (= 2 + 2^-9, exact: q = 2^-9 in [2, 4)).
  // cos 2 = -0.41614683654714238699, |·|·2^12 = 1704.5374: nearest/downward -1705·2^-12 =
  //   -0.416259765625, toward-zero -1704·2^-12 = -0.416015625;
  // sin 2 = 0.90929742682568169539, ·2^11 = 1862.2411 → 1862·2^-11 = 0.9091796875;
  // cos 2.001953125 = -0.41792201321793180249, |·|·2^12 = 1711.8086: nearest -1712·2^-12 =
  //   -0.41796875, upward -1711·2^-12 = -0.417724609375;
  // sin 2.001953125 = 0.90848290620565384183, ·2^11 = 1860.5730 → nearest and upward
  //   1861·2^-11 = 0.90869140625.
  // A realisation that skipped rounding the position would use 2049 in every mode.
  const Schedule s = parse_schedule("single:g=0.0009765625");
  const PerMode i_hat = {2048, 2050, 2048, 2050, 2048};
  const PerMode phi = {2, 2.001953125, 2, 2.001953125, 2};
  const PerMode cos = {-0.416259765625, -0.41796875, -0.416015625, -0.417724609375,
                       -0.416259765625};
  const PerMode sin = {0.9091796875, 0.90869140625, 0.9091796875, 0.90869140625, 0.9091796875};
  for (std::size_t m = 0; m < kModes.size(); ++m) {
    INFO(ropesim::numeric::to_string(kModes[m]));
    const Realisation r = parse_realisation("r2", Format::fp16(), kModes[m]);
    const PositionReport rep = query_position(s, r, 2049);
    REQUIRE(rep.blocks.size() == 1);
    const BlockReport& b = rep.blocks[0];
    CHECK(step_value(b, "theta_hat") == 1.0 / 1024);
    CHECK(step_value(b, "i_hat") == i_hat[m]);
    CHECK(step_value(b, "phi") == phi[m]);
    CHECK(b.cos.to_double() == cos[m]);
    CHECK(b.sin.to_double() == sin[m]);
    const auto v = realise_block(s, r, 0, 2049, 2050);
    CHECK(v[0].cos.to_double() == cos[m]);
    CHECK(v[0].sin.to_double() == sin[m]);
  }
}

TEST_CASE("hf and llama.cpp pipelines under each rounding mode (base 10^4, dim 4, position 3)",
          "[realisation][hf][llamacpp][rounding]") {
  // Block 1 has θ = 10000^(-2/4) = 1/100, formed in fp32 by every recipe:
  //   hf: e = fp32(2/4) = 0.5, p = fp32(10000^0.5) = 100 (exact), inv_freq = fp32(1/100);
  //   llamacpp-cpu/cuda: theta_scale = fp32(10000^fp32(-2/4)) = fp32(10^-2); chained and power
  //   apply it once for block 1 (theta_scale^1 is exact).
  // 1/100·2^30 = 10737418.24 → inv = 10737418·2^-30 = 5368709·2^-29 = 0.009999999776482582
  //   (nearest, toward-zero, downward) or 10737419·2^-30 = 0.010000000707805157 (upward).
  // t = 3 (exact). angle = fp32(3·inv): 3·5368709·2^-29 = 16106127·2^-29 is exact (24 bits) =
  //   0.029999999329447746; 3·10737419·2^-30 = 32212257·2^-30 = 16106128.5·2^-29 → upward
  //   16106129·2^-29 = 0.030000003054738045.
  // cos(0.029999999329447746) = 0.99955003376910106631, ·2^24 = 16769666.8194 → nearest
  //   16769667·2^-24 = 0.9995500445365906, toward-zero/downward 16769666·2^-24 =
  //   0.9995499849319458;
  // cos(0.030000003054738045) = 0.99955003365735911597, ·2^24 = 16769666.8175 → upward
  //   16769667·2^-24 = 0.9995500445365906;
  // sin(0.029999999329447746) = 0.02999549953224513292, ·2^29 = 16103711.1898 → nearest,
  //   toward-zero, downward 16103711·2^-29 = 0.029995499178767204;
  // sin(0.030000003054738045) = 0.02999550325585917634, ·2^29 = 16103713.1889 → upward
  //   16103714·2^-29 = 0.029995504766702652.
  // hf then casts the fp32 table to the activation format bf16 with the same mode:
  //   0.9995500445365906·2^8 = 255.8848 → nearest 256·2^-8 = 1, upward 1;
  //   0.9995499849319458·2^8 = 255.8848 → toward-zero/downward 255·2^-8 = 0.99609375;
  //   0.029995499178767204·2^13 = 245.7231 → nearest 246·2^-13 = 0.030029296875,
  //   toward-zero/downward 245·2^-13 = 0.0299072265625; 0.029995504766702652·2^13 = 245.7232 →
  //   upward 246·2^-13 = 0.030029296875.
  // llama.cpp keeps the fp32 table (NUMERIC §3).
  const Schedule s = parse_schedule("conventional:base=10000,dim=4");
  const PerMode inv = {0.009999999776482582, 0.009999999776482582, 0.009999999776482582,
                       0.010000000707805157, 0.009999999776482582};
  const PerMode angle = {0.029999999329447746, 0.029999999329447746, 0.029999999329447746,
                         0.030000003054738045, 0.029999999329447746};
  const PerMode cos32 = {0.9995500445365906, 0.9995500445365906, 0.9995499849319458,
                         0.9995500445365906, 0.9995499849319458};
  const PerMode sin32 = {0.029995499178767204, 0.029995499178767204, 0.029995499178767204,
                         0.029995504766702652, 0.029995499178767204};
  const PerMode cos16 = {1, 1, 0.99609375, 1, 0.99609375};
  const PerMode sin16 = {0.030029296875, 0.030029296875, 0.0299072265625, 0.030029296875,
                         0.0299072265625};
  for (std::size_t m = 0; m < kModes.size(); ++m) {
    for (const char* spec : {"hf", "llamacpp-cpu", "llamacpp-cuda"}) {
      INFO(spec << " " << ropesim::numeric::to_string(kModes[m]));
      const Realisation r = parse_realisation(spec, Format::bf16(), kModes[m]);
      const PositionReport rep = query_position(s, r, 3);
      REQUIRE(rep.blocks.size() == 2);
      const BlockReport& b = rep.blocks[1];
      const bool hf = std::string(spec) == "hf";
      CHECK(step_value(b, hf ? "inv_freq" : "theta_scale") == inv[m]);
      CHECK(step_value(b, "t") == 3);
      CHECK(step_value(b, "angle") == angle[m]);
      CHECK(step_value(b, "cos_fp") == cos32[m]);
      CHECK(step_value(b, "sin_fp") == sin32[m]);
      CHECK(b.cos.to_double() == (hf ? cos16[m] : cos32[m]));
      CHECK(b.sin.to_double() == (hf ? sin16[m] : sin32[m]));
      const auto v = realise_block(s, r, 1, 3, 4);
      CHECK(v[0].cos.to_double() == (hf ? cos16[m] : cos32[m]));
      CHECK(v[0].sin.to_double() == (hf ? sin16[m] : sin32[m]));
    }
  }
}

TEST_CASE("apply_rotation rounds with the rotation's mode (fp16, periodic:m=8, position 1)",
          "[realisation][apply][rounding]") {
  // R̂_1 = (c, s) = (a, a) with a = round(√2/2) (0.70703125 = 1448·2^-11; upward 1449·2^-11).
  // x = (1, 1): y0 = rnd(rnd(c·1) - rnd(s·1)) = rnd(a - a) = 0 (the sign of an exact zero is
  // IEEE's business, not checked); y1 = rnd(rnd(a) + rnd(a)) = 2a, exact. So y1 = 1.4140625
  // (= 2·1448·2^-11) in every mode but upward, where y1 = 2·1449·2^-11 = 1.4150390625.
  // x = (1, 3): y1 = rnd(a + rnd(3a)); 3·1448 = 4344 needs 13 bits: 3a = 4344·2^-11 =
  // 2.12109375 in [2, 4) has q = 2^-9: 4344/4 = 1086 exactly, so rnd(3a) = 3a; a + 3a = 4a =
  // 2.828125 (exact). Upward: 3·1449 = 4347, /4 = 1086.75 → 1087·2^-9 = 2.123046875, then
  // a + that = 1449·2^-11 + 4348·2^-11 = 5797·2^-11 = 2.83056640625 → q = 2^-9 in [2, 4):
  // 5797/4 = 1449.25 → upward 1450·2^-9 = 2.83203125.
  const Schedule s = parse_schedule("periodic:m=8");
  for (std::size_t m = 0; m < kModes.size(); ++m) {
    INFO(ropesim::numeric::to_string(kModes[m]));
    const Realisation r = parse_realisation("r1", Format::fp16(), kModes[m]);
    const RealisedRotation rot = realise(s, r, 1);
    const std::vector<Value> x{Value::from_double_exact(1), Value::from_double_exact(3)};
    const auto y = apply_rotation(rot, x, PairLayout::adjacent);
    CHECK(y[1].to_double() == (kModes[m] == Rounding::upward ? 2.83203125 : 2.828125));
    const std::vector<Value> ones{Value::from_double_exact(1), Value::from_double_exact(1)};
    const auto z = apply_rotation(rot, ones, PairLayout::adjacent);
    CHECK(z[0].to_double() == 0);
    CHECK(z[1].to_double() == (kModes[m] == Rounding::upward ? 1.4150390625 : 1.4140625));
  }
}

TEST_CASE("llamacpp-cpu stores the fp32 rotation into bf16 with the requested mode",
          "[realisation][apply][llamacpp][rounding]") {
  // conventional:base=10000,dim=2 has one block, θ = 1 (pair index 0: no chained product), so
  // the fp32 table at position 2 is (rnd32(cos 2), rnd32(sin 2)). Toward zero:
  //   |cos 2|·2^25 = 13963570.7289 → c = -13963570·2^-25; sin 2·2^24 = 15255479.3381 →
  //   s = 15255479·2^-24.
  // x = (0, -1) (bf16): y0 = rnd32(rnd32(c·0) - rnd32(s·(-1))) = s exactly,
  //   y1 = rnd32(rnd32(s·0) + rnd32(c·(-1))) = -c = 13963570·2^-25 exactly.
  // Stored into bf16 (p = 8) toward zero: s·2^8 = 15255479/65536 = 232.780 → 232·2^-8 =
  //   0.90625 (nearest would give 233·2^-8 = 0.91015625); -c·2^9 = 13963570/65536 = 213.067 →
  //   213·2^-9 = 0.416015625.
  const Schedule s = parse_schedule("conventional:base=10000,dim=2");
  const Realisation r = parse_realisation("llamacpp-cpu", Format::bf16(), Rounding::toward_zero);
  const RealisedRotation rot = realise(s, r, 2);
  CHECK(rot.blocks[0].cos.to_double() == -13963570 / 33554432.0);
  CHECK(rot.blocks[0].sin.to_double() == 15255479 / 16777216.0);
  const std::vector<Value> x{Value::from_double_exact(0), Value::from_double_exact(-1)};
  const auto y = apply_rotation(rot, x, r.layout);
  CHECK(y[0].to_double() == 0.90625);
  CHECK(y[1].to_double() == 0.416015625);
}
