// Realisations (THEORY §3; NUMERIC §3–4) checked against second implementations: direct MPFR
// at 300 bits rounded once by the reference engine, and native binary32 arithmetic (IEEE
// correctly rounded +−×÷, -ffp-contract=off) for the fp32 steps of r2 and the pipelines.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "attention/detail/format_ops.hpp"
#include "attention/realisations/realisation.hpp"
#include "core/error.hpp"
#include "numeric/mpfr_util.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;
using ropesim::numeric::Flag;
using ropesim::numeric::Flags;
using ropesim::numeric::mpfr_engine;

namespace {

/// An MPFR number at the tests' reference precision, 300 bits.
struct Mp : ropesim::numeric::Mpfr {
  Mp() : Mpfr(300) {}
};

bool same(const Value& a, const Value& b) { return a.same_bits(b); }
Value dbl(double d) { return Value::from_double_exact(d); }

/// θ = base^(-2k/dim) at 300 bits, directly.
void theta_ref(mpfr_ptr out, double base, int k, int dim) {
  Mp l;
  mpfr_set_d(l, base, MPFR_RNDN);
  mpfr_log(l, l, MPFR_RNDN);
  mpfr_mul_si(l, l, -2 * k, MPFR_RNDN);
  mpfr_div_si(l, l, dim, MPFR_RNDN);
  mpfr_exp(out, l, MPFR_RNDN);
}

/// round_F(cos x), round_F(sin x) from a 300-bit x, via the reference engine.
std::pair<Value, Value> cos_sin_ref(const Format& f, mpfr_ptr x) {
  Mp c, s;
  mpfr_sin_cos(s, c, x, MPFR_RNDN);
  return {mpfr_engine().from_mpfr(f, c, Rounding::nearest_even),
          mpfr_engine().from_mpfr(f, s, Rounding::nearest_even)};
}

float flt(mpfr_ptr x) { return mpfr_get_flt(x, MPFR_RNDN); }
float cos_f(float a) {
  Mp x, c, s;
  mpfr_set_flt(x, a, MPFR_RNDN);
  mpfr_sin_cos(s, c, x, MPFR_RNDN);
  return flt(c);
}
float sin_f(float a) {
  Mp x, c, s;
  mpfr_set_flt(x, a, MPFR_RNDN);
  mpfr_sin_cos(s, c, x, MPFR_RNDN);
  return flt(s);
}
float pow_f(float a, float b) {
  Mp x, y, r;
  mpfr_set_flt(x, a, MPFR_RNDN);
  mpfr_set_flt(y, b, MPFR_RNDN);
  mpfr_pow(r, x, y, MPFR_RNDN);
  return flt(r);
}

const Value* step(const BlockReport& b, const std::string& name) {
  for (const auto& [n, v] : b.steps) {
    if (n == name) return &v;
  }
  return nullptr;
}

const std::vector<Format> kFormats = {Format::fp64(),   Format::fp32(), Format::tf32(),
                                      Format::fp16(),   Format::bf16(), Format::fp8e4m3(),
                                      Format::fp8e5m2()};

}  // namespace

TEST_CASE("fast binary64 path equals the reference engine bit for bit", "[realisation][fast]") {
  std::mt19937_64 rng(20261130);
  std::uniform_real_distribution<double> mant(-2.0, 2.0);
  std::uniform_int_distribution<int> ex(-40, 40);
  for (const Format& f : {Format::fp32(), Format::tf32(), Format::fp16(), Format::bf16(),
                          Format::fp8e5m2(), Format::ieee(20, 6), Format::fp64()}) {
    detail::FormatOps ops(f, Rounding::nearest_even, mpfr_engine());
    REQUIRE(ops.fast_round());
    INFO(f.name);
    for (int t = 0; t < 20000; ++t) {
      const double x = std::ldexp(mant(rng), ex(rng));
      std::uint8_t fl = 0;
      const Value fast = ops.convert(dbl(x), fl);
      const Value ref = mpfr_engine().convert(f, dbl(x), Rounding::nearest_even);
      INFO(x);
      REQUIRE(same(fast, ref));
      // arithmetic on two elements of F
      const Value a = ref;
      const Value b =
          mpfr_engine().convert(f, dbl(std::ldexp(mant(rng), ex(rng) / 2)), Rounding::nearest_even);
      REQUIRE(same(ops.mul(a, b, fl), mpfr_engine().mul(f, a, b, Rounding::nearest_even)));
      REQUIRE(same(ops.add(a, b, fl), mpfr_engine().add(f, a, b, Rounding::nearest_even)));
      REQUIRE(same(ops.sub(a, b, fl), mpfr_engine().sub(f, a, b, Rounding::nearest_even)));
      if (!b.is_zero())
        REQUIRE(same(ops.div(a, b, fl), mpfr_engine().div(f, a, b, Rounding::nearest_even)));
    }
  }
  // overflow is flagged: fp16(65520) = +inf (hand: max 65504, half ulp 16)
  detail::FormatOps h(Format::fp16(), Rounding::nearest_even, mpfr_engine());
  std::uint8_t fl = 0;
  REQUIRE(h.from_uint(65519, fl).to_double() == 65504.0);
  REQUIRE(fl == 0);
  REQUIRE(h.from_uint(65520, fl).is_inf());
  REQUIRE(fl == flag_overflow);
}

TEST_CASE("FormatOps: one arithmetic, RealRounding's, bound to the binding",
          "[realisation][format_binding]") {
  // built from a FormatBinding: F, rounding and engine are the binding's, and the Arithmetic
  // and binary64 rounding FormatOps works through are the ones inside its RealRounding
  const ropesim::numeric::FormatBinding binding{Format::bf16(), Rounding::toward_zero,
                                                &mpfr_engine()};
  const detail::FormatOps ops(binding);
  CHECK(ops.format() == Format::bf16());
  CHECK(ops.rounding() == Rounding::toward_zero);
  CHECK(&ops.engine() == &mpfr_engine());
  CHECK(&ops.arithmetic() == &ops.real().arithmetic());
  CHECK(ops.fast_round() == ops.real().binary64().fast_rounding());
  // hand: bf16 has p = 8, spacing 2 in [256, 512); 259 is the midpoint of 258 and 260:
  // toward zero gives 258 (nearest-even would give 260, whose last significand bit is 0)
  std::uint8_t fl = 0;
  CHECK(ops.from_uint(259, fl).to_double() == 258.0);
  CHECK(ops.convert(dbl(-259.0), fl).to_double() == -258.0);
  CHECK(fl == 0);
}

// The double-double cos/sin step against the MPFR Ziv path: tests/numeric/test_real_rounding.cpp
// (numeric::CosSinRounder).

TEST_CASE("r1 equals direct 300-bit MPFR rounded once (single:g=1, conventional)",
          "[realisation][r1]") {
  const Schedule g1 = parse_schedule("single:g=1");
  for (const Format& f : kFormats) {
    INFO(f.name);
    const Realisation r = parse_realisation("r1", f);
    const auto got = realise_block(g1, r, 0, 0, 1500);
    for (std::uint64_t i = 0; i < got.size(); ++i) {
      Mp x;
      mpfr_set_ui(x, i, MPFR_RNDN);
      const auto [c, s] = cos_sin_ref(f, x);
      INFO("i = " << i);
      REQUIRE(same(got[i].cos, c));
      REQUIRE(same(got[i].sin, s));
    }
  }
  const Schedule conv = parse_schedule("conventional:base=10000,dim=16");
  for (const Format& f : {Format::fp32(), Format::bf16(), Format::fp64()}) {
    const Realisation r = parse_realisation("r1", f);
    for (int k = 0; k < 8; ++k) {
      Mp th;
      theta_ref(th, 10000, k, 16);
      const auto got = realise_block(conv, r, k, 40000, 40100);
      for (std::uint64_t j = 0; j < got.size(); ++j) {
        Mp x;
        mpfr_mul_ui(x, th, 40000 + j, MPFR_RNDN);
        const auto [c, s] = cos_sin_ref(f, x);
        INFO(f.name << " k = " << k << " i = " << 40000 + j);
        REQUIRE(same(got[j].cos, c));
        REQUIRE(same(got[j].sin, s));
      }
    }
  }
}

TEST_CASE("r1/r3 on periodic blocks: exact table values", "[realisation][r3]") {
  const Schedule p = parse_schedule("periodic:m=12");
  const Realisation r3 = parse_realisation("r3", Format::fp32());
  const auto v = realise_block(p, r3, 0, 0, 24);
  // hand: cos(2π·3/12) = 0 (+0), sin = 1; cos(2π·2/12) = 1/2; sin(2π·6/12) = +0; period 12
  REQUIRE(v[3].cos.to_double() == 0.0);
  REQUIRE_FALSE(v[3].cos.sign_bit());
  REQUIRE(v[3].sin.to_double() == 1.0);
  REQUIRE(v[2].cos.to_double() == 0.5);
  REQUIRE(v[6].sin.to_double() == 0.0);
  REQUIRE(v[1].cos.to_double() == static_cast<double>(static_cast<float>(std::sqrt(3.0L) / 2)));
  for (int i = 0; i < 12; ++i) {
    REQUIRE(same(v[i].cos, v[i + 12].cos));
    REQUIRE(same(v[i].sin, v[i + 12].sin));
  }
  // r3 on an irrational schedule names the block
  try {
    realise_block(parse_schedule("conventional:base=10000,dim=8"), r3, 0, 0, 1);
    FAIL("expected InvalidArgument");
  } catch (const InvalidArgument& e) {
    REQUIRE(std::string(e.what()).find("block 0") != std::string::npos);
  }
}

TEST_CASE("r2 at fp32 equals native float arithmetic", "[realisation][r2]") {
  const Schedule conv = parse_schedule("conventional:base=10000,dim=16");
  const Realisation r = parse_realisation("r2", Format::fp32());
  for (int k = 0; k < 8; ++k) {
    Mp th;
    theta_ref(th, 10000, k, 16);
    const float theta_hat = flt(th);
    for (std::uint64_t begin : {std::uint64_t{0}, std::uint64_t{70000}}) {
      const auto got = realise_block(conv, r, k, begin, begin + 300);
      for (std::uint64_t j = 0; j < got.size(); ++j) {
        const float phi = theta_hat * static_cast<float>(begin + j);
        INFO("k = " << k << " i = " << begin + j);
        REQUIRE(got[j].cos.to_double() == cos_f(phi));
        REQUIRE(got[j].sin.to_double() == sin_f(phi));
        REQUIRE(std::signbit(got[j].sin.to_double()) == std::signbit(sin_f(phi)));
      }
    }
  }
}

TEST_CASE("GPT-NeoX #1003: r2 at fp16, head dim 32, base 1e4, position 1857", "[realisation][r2]") {
  const Schedule s = parse_schedule("conventional:base=10000,dim=32");
  const auto rep = query_position(s, parse_realisation("r2", Format::fp16()), 1857);
  const BlockReport& b = rep.blocks.at(1);  // second frequency θ_2 = 10^(-1/4)
  // hand: 1857 · 0.56234132519 = 1044.2678...; fp16: θ̂ = 0.5625 (spacing 2^-11 on [0.5, 1)),
  // î = 1857 (exact), θ̂·î = 1044.5625 → 1045 (spacing 1 on [1024, 2048))
  REQUIRE(b.exact_angle == Approx(1044.2678408784782).epsilon(1e-14));
  REQUIRE(step(b, "theta_hat")->to_double() == 0.5625);
  REQUIRE(step(b, "i_hat")->to_double() == 1857.0);
  REQUIRE(step(b, "phi")->to_double() == 1045.0);
  // cos(1044.2678) = 0.306693, cos(1045) = -0.408165 (independent double evaluation): the
  // realised cos is fp16(-0.408165) = -0.408203125 and is off by ≈ 0.715
  REQUIRE(b.exact_cos == Approx(0.30669280981876773).epsilon(1e-12));
  REQUIRE(b.cos.to_double() == -0.408203125);
  REQUIRE(b.cos.to_double() - b.exact_cos == Approx(-0.7149).margin(1e-3));
  REQUIRE(b.cos_error_ulps < -2900);  // thousands of ulps (fp16 ulp at 0.31 is 2^-12)
  REQUIRE(b.flags == 0);
}

TEST_CASE("r2 at saturating fp16 flags overflow after rounding: from 65520, not from 65505",
          "[realisation][r2][flags]") {
  // Saturating fp16 clamps i_hat to max = 65504 from i = 65505 on, but IEEE overflow is
  // "after rounding": 65505..65519 round to 65504 with an unbounded exponent (no overflow),
  // 65520 = max + ulp/2 is the tie that goes to the even 65536 (overflow). Before the flags
  // moved into numeric::Arithmetic, every i > 65504 was flagged.
  const Schedule s = parse_schedule("conventional:base=10000,dim=8");
  const Realisation r =
      parse_realisation("r2", ropesim::numeric::parse_format("p=11,e=5,overflow=saturate"));
  const auto v = realise_block(s, r, 1, 65500, 65530);
  for (std::uint64_t j = 0; j < v.size(); ++j) {
    const std::uint64_t i = 65500 + j;
    INFO("i = " << i);
    REQUIRE(v[j].cos.is_finite());
    REQUIRE(Flags::from_bits(v[j].flags).test(Flag::overflow) == (i >= 65520));
  }
}

TEST_CASE("r2 at fp16 overflows from position 65520: i_hat = +inf, cos = NaN",
          "[realisation][r2]") {
  const Schedule s = parse_schedule("conventional:base=10000,dim=8");
  const Realisation r = parse_realisation("r2", Format::fp16());
  const auto v = realise_block(s, r, 1, 65510, 65530);
  for (std::uint64_t j = 0; j < v.size(); ++j) {
    const std::uint64_t i = 65510 + j;
    INFO("i = " << i);
    if (i < 65520) {
      REQUIRE(v[j].flags == 0);
      REQUIRE(v[j].cos.is_finite());
    } else {
      REQUIRE(Flags::from_bits(v[j].flags).test(Flag::overflow));
      REQUIRE(Flags::from_bits(v[j].flags).test(Flag::invalid));
      REQUIRE(v[j].cos.is_nan());
      REQUIRE(v[j].sin.is_nan());
    }
  }
  const auto rep = query_position(s, r, 65520);
  REQUIRE(step(rep.blocks[0], "i_hat")->is_inf());
}

TEST_CASE("hf pipeline equals a float re-implementation (llama2-7b, bf16 table)",
          "[realisation][hf]") {
  const Schedule s = parse_schedule("llama2-7b");
  const Realisation hf = parse_realisation("hf", Format::bf16());
  const Realisation hf32 = parse_realisation("hf", Format::fp32());
  REQUIRE(hf.layout == PairLayout::rotate_half);
  for (int k : {0, 1, 7, 31, 63}) {
    // inv_freq = 1 / 10000^(fp32(2k)/fp32(128)), every step fp32
    const float e = static_cast<float>(2 * k) / 128.0f;
    const float inv = 1.0f / pow_f(10000.0f, e);
    const auto got = realise_block(s, hf, k, 60000, 60200);
    const auto got32 = realise_block(s, hf32, k, 60000, 60200);
    for (std::uint64_t j = 0; j < got.size(); ++j) {
      const float angle = inv * static_cast<float>(60000 + j);
      const float c = cos_f(angle), sn = sin_f(angle);
      INFO("k = " << k << " i = " << 60000 + j);
      REQUIRE(got32[j].cos.to_double() == c);
      REQUIRE(got32[j].sin.to_double() == sn);
      REQUIRE(
          same(got[j].cos, mpfr_engine().convert(Format::bf16(), dbl(c), Rounding::nearest_even)));
      REQUIRE(
          same(got[j].sin, mpfr_engine().convert(Format::bf16(), dbl(sn), Rounding::nearest_even)));
    }
  }
}

TEST_CASE("hf llama3 inv_freq equals Hugging Face's formula in float (llama3.1-8b)",
          "[realisation][hf]") {
  const Schedule s = parse_schedule("llama3.1-8b");
  const auto rep = query_position(s, parse_realisation("hf", Format::bf16()), 5000);
  int changed = 0;
  for (int k = 0; k < 64; ++k) {
    const float inv0 = 1.0f / pow_f(500000.0f, static_cast<float>(2 * k) / 128.0f);
    const float wavelen = static_cast<float>(2 * 3.141592653589793) / inv0;
    float inv = inv0;
    if (wavelen > 8192.0f) {
      inv = inv0 / 8.0f;
    } else if (!(wavelen < 2048.0f)) {
      const float smooth = (8192.0f / wavelen - 1.0f) / 3.0f;
      inv = (1.0f - smooth) * inv0 / 8.0f + smooth * inv0;
    }
    changed += inv != inv0;
    INFO("k = " << k);
    REQUIRE(step(rep.blocks[k], "inv_freq")->to_double() == inv);
    REQUIRE(step(rep.blocks[k], "angle")->to_double() == inv * 5000.0f);
  }
  REQUIRE(changed == 35);  // 64 − 29 high-frequency blocks (hand, see test_schedule)
}

TEST_CASE("llama.cpp pipelines equal float re-implementations", "[realisation][llamacpp]") {
  const Schedule s = parse_schedule("conventional:base=10000,dim=128");
  const float theta_scale = pow_f(10000.0f, -2.0f / 128.0f);
  const auto cpu = query_position(s, parse_realisation("llamacpp-cpu", Format::bf16()), 31337);
  const auto cuda = query_position(s, parse_realisation("llamacpp-cuda", Format::bf16()), 31337);
  REQUIRE(cpu.table_format == Format::fp32());
  float theta = 31337.0f;
  for (int k = 0; k < 64; ++k) {
    INFO("k = " << k);
    REQUIRE(step(cpu.blocks[k], "angle")->to_double() == theta);  // k chained roundings
    REQUIRE(cpu.blocks[k].cos.to_double() == cos_f(theta));
    REQUIRE(cpu.blocks[k].sin.to_double() == sin_f(theta));
    theta = theta * theta_scale;
    Mp ts, p;
    mpfr_set_flt(ts, theta_scale, MPFR_RNDN);
    mpfr_pow_ui(p, ts, k, MPFR_RNDN);
    const float angle = 31337.0f * flt(p);
    REQUIRE(step(cuda.blocks[k], "angle")->to_double() == angle);
    REQUIRE(cuda.blocks[k].cos.to_double() == cos_f(angle));
  }
  REQUIRE_THROWS_AS(
      realise(parse_schedule("llama3.1-8b"), parse_realisation("llamacpp-cpu", Format::bf16()), 1),
      InvalidArgument);
  REQUIRE_THROWS_AS(
      realise(parse_schedule("single:g=1"), parse_realisation("llamacpp-cuda", Format::bf16()), 1),
      InvalidArgument);
}

TEST_CASE("pipeline specs", "[realisation]") {
  const Realisation p =
      parse_realisation("pipeline:angle=bf16;table=A;recipe=product", Format::fp16());
  REQUIRE(p.steps.angle.compute == Format::bf16());
  REQUIRE(p.steps.table == Format::fp16());
  REQUIRE(p.steps.inv_freq.compute == Format::fp32());
  REQUIRE(p.name().rfind("pipeline:", 0) == 0);
  // a bf16 angle (transformers #29285): with θ_1 = 1, angle = bf16(1·1001) = 1000
  // (hand: bf16 spacing on [512, 1024) is 4)
  const Schedule s = parse_schedule("conventional:base=10000,dim=8");
  const auto a = query_position(s, p, 1001);
  REQUIRE(step(a.blocks[0], "angle")->to_double() == 1000.0);
  for (const std::string bad :
       {"pipeline:angle=fp99", "pipeline:recipe=magic", "pipeline:foo=1", "r4"}) {
    INFO(bad);
    try {
      parse_realisation(bad, Format::fp32());
      FAIL("expected InvalidArgument");
    } catch (const InvalidArgument& e) {
      REQUIRE(std::string(e.what()).find("llamacpp-cpu") != std::string::npos);
      REQUIRE(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("apply_rotation: THEORY §2.1 arithmetic in float, and both layouts agree",
          "[realisation][apply]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  const Schedule s =
      parse_schedule("partial:base=10000,dim=16,factor=0.5");  // 4 blocks + 4 unrotated
  for (const std::string spec : {"r1", "r2", "hf", "llamacpp-cpu"}) {
    for (const Format& f : {Format::fp32(), Format::bf16()}) {
      const Realisation r = parse_realisation(spec, f);
      for (std::uint64_t i : {0u, 5u, 777u}) {
        const RealisedRotation rot = realise(s, r, i);
        std::vector<Value> adj(16);
        for (auto& x : adj) x = mpfr_engine().convert(f, dbl(u(rng)), Rounding::nearest_even);
        // the same vector in rotate_half layout: pair d at (d, d + 4), unrotated 8..15
        std::vector<Value> half(16);
        for (int d = 0; d < 4; ++d) {
          half[d] = adj[2 * d];
          half[d + 4] = adj[2 * d + 1];
        }
        for (int k = 8; k < 16; ++k) half[k] = adj[k];
        const auto ya = apply_rotation(rot, adj, PairLayout::adjacent);
        const auto yh = apply_rotation(rot, half, PairLayout::rotate_half);
        INFO(spec << " " << f.name << " i = " << i);
        for (int d = 0; d < 4; ++d) {
          REQUIRE(same(ya[2 * d], yh[d]));
          REQUIRE(same(ya[2 * d + 1], yh[d + 4]));
        }
        for (int k = 8; k < 16; ++k) REQUIRE(same(ya[k], adj[k]));  // unrotated: unchanged
        if (f == Format::fp32() && spec != "hf") {
          for (int d = 0; d < 4; ++d) {
            const float c = static_cast<float>(rot.blocks[d].cos.to_double());
            const float sn = static_cast<float>(rot.blocks[d].sin.to_double());
            const float x0 = static_cast<float>(adj[2 * d].to_double());
            const float x1 = static_cast<float>(adj[2 * d + 1].to_double());
            const float p = c * x0, q = sn * x1, r0 = sn * x0, r1 = c * x1;
            REQUIRE(ya[2 * d].to_double() == p - q);
            REQUIRE(ya[2 * d + 1].to_double() == r0 + r1);
          }
        }
      }
    }
  }
}
