// compare()'s binary64 fast path (attention/fidelity/compare_fast.hpp) against MPFR: the
// per-entry numbers against an independent MPFR statement of what compare() computes (the
// header's formulas, evaluated here at 256 bits on both ends of every enclosure), boundary
// cases where an enclosure straddles a rounding boundary (the fast path must refuse), and whole
// comparisons with CompareOptions::fast_arithmetic on and off (the same JSON).
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <optional>
#include <random>
#include <string>

#include "attention/fidelity/compare.hpp"
#include "attention/fidelity/compare_fast.hpp"
#include "numeric/engine.hpp"
#include "numeric/mpfr_util.hpp"

using namespace ropesim::attention;
using ropesim::numeric::Format;
using ropesim::numeric::Mpfr;

namespace {

struct Spec {
  double absolute, relative;
  std::optional<double> ulps;
};

/// compare()'s numbers for x against the real `ref` (256 bits), as its header states them.
Spec spec(double x, mpfr_srcptr ref, const Format& t) {
  Mpfr d(256), xs(256), rel(64);
  mpfr_set_d(xs, x, MPFR_RNDN);
  mpfr_sub(d, xs, ref, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  Spec s;
  s.absolute = mpfr_get_d(d, MPFR_RNDU);
  s.relative = 0;
  if (!mpfr_zero_p(d)) {
    if (mpfr_zero_p(ref)) {
      s.relative = INFINITY;
    } else {
      mpfr_div(rel, d, ref, MPFR_RNDN);
      s.relative = std::fabs(mpfr_get_d(rel, MPFR_RNDN));
    }
  }
  const auto rounded =
      ropesim::numeric::mpfr_engine().from_mpfr(t, ref, ropesim::numeric::Rounding::nearest_even);
  if (rounded.is_finite()) {
    mpfr_mul_2si(d, d, -ropesim::numeric::ulp_exponent(t, rounded), MPFR_RNDN);
    s.ulps = mpfr_get_d(d, MPFR_RNDN);
  }
  return s;
}

/// Checks the fast path for x against every real within ref.error of ref.r: when it decides, its
/// numbers must be the spec's at both ends of the enclosure and at its centre. Returns whether
/// both fast_errors and ulps decided.
bool check(double x, const detail::EnclosedReference& ref, const Format& t) {
  const detail::FastUlpFormat fu(t);
  REQUIRE(fu.usable());
  const auto e = detail::fast_errors(x, ref);
  const auto u = fu.ulps(x, ref);
  Mpfr centre(256), end(256);
  mpfr_set_d(centre, ref.r.hi, MPFR_RNDN);
  mpfr_add_d(centre, centre, ref.r.lo, MPFR_RNDN);  // exact at 256 bits
  for (const double side : {0.0, -1.0, 1.0}) {
    mpfr_set(end, centre, MPFR_RNDN);
    mpfr_add_d(end, end, side * ref.error, MPFR_RNDN);
    const Spec s = spec(x, end, t);
    INFO("x = " << x << ", ref = " << ref.r.hi << " + " << ref.r.lo << " ± " << ref.error
                << ", side " << side);
    if (e) {
      CHECK(e->absolute == s.absolute);
      CHECK(e->relative == s.relative);
      CHECK(e->differs == (s.absolute != 0));
    }
    if (u) {
      REQUIRE(u->has_value() == s.ulps.has_value());
      if (*u) CHECK(**u == *s.ulps);
    }
  }
  return e.has_value() && u.has_value();
}

detail::EnclosedReference exactly(double r) { return {{r, 0.0}, 0.0}; }

}  // namespace

TEST_CASE("compare fast path: exact double references equal MPFR's numbers", "[compare]") {
  const Format bf16 = Format::bf16();
  // x = ref: all zero; only ref 0: relative +inf
  CHECK(check(0.75, exactly(0.75), bf16));
  CHECK(check(0.5, exactly(0.0), bf16));
  const auto zero = detail::fast_errors(0.5, exactly(0.0));
  REQUIRE(zero);
  CHECK(zero->relative == INFINITY);
  // the difference needs more than 256 bits: RN256 loses the low part, so the fast path refuses
  CHECK_FALSE(detail::fast_errors(1.0, exactly(0x1p-300)).has_value());
  // random pairs at every gap from equal binades to 60 binades apart
  std::mt19937_64 rng(35);
  std::uniform_real_distribution<double> unit(-1, 1);
  int decided = 0;
  for (int k = 0; k < 4000; ++k) {
    // one draw per statement: the order of a call's arguments is the compiler's (g++ and
    // clang differ), and the pairs must be the same in every build
    const double mx = unit(rng);
    const int ex = static_cast<int>(rng() % 8);
    const double mr = unit(rng);
    const int er = static_cast<int>(rng() % 60);
    const double x = std::ldexp(mx, -ex), ref = std::ldexp(mr, -er);
    decided += check(x, exactly(ref), bf16);
  }
  CHECK(decided > 3800);  // the fast path is the usual one (3884 of these 4000 pairs)
}

TEST_CASE("compare fast path: enclosures decide only when every real in them agrees", "[compare]") {
  const Format bf16 = Format::bf16();
  // |1 − ref| = 2^-30 exactly at the centre: the enclosure straddles the double 2^-30, whose
  // RU53 is 2^-30 below and the next double above, so the fast path must refuse
  CHECK_FALSE(detail::fast_errors(1.0, {{1 - 0x1p-30, 0.0}, 0x1p-90}).has_value());
  // the same enclosure moved off the boundary by far more than its width decides
  CHECK(check(1.0, {{1 - 0x1p-30, 0x1.2345678p-80}, 0x1p-90}, bf16));
  // a relative error whose centre is exactly a midpoint of doubles: must refuse
  // (|x − r|/r = 1 + 2^-53 with r = 2^-10, x = r − r·(1 + 2^-53) = −2^-63), with and without
  // an enclosure around r
  CHECK_FALSE(detail::fast_errors(-0x1p-63, {{0x1p-10, 0.0}, 0x1p-120}).has_value());
  CHECK_FALSE(detail::fast_errors(-0x1p-63, exactly(0x1p-10)).has_value());
  // round_T(ref) at a bf16 midpoint (1 + 2^-8) within the enclosure: must refuse the ulps
  const detail::FastUlpFormat fu(bf16);
  CHECK_FALSE(fu.ulps(1.0, {{1 + 0x1p-8, 0.0}, 0x1p-100}).has_value());
  // cos of random angles as a double-double within 2^-100, against their 256-bit values
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> angle(0, 1e5);
  int decided = 0;
  Mpfr a(256), c(256), hi(256);
  for (int k = 0; k < 2000; ++k) {
    mpfr_set_d(a, angle(rng), MPFR_RNDN);
    mpfr_cos(c, a, MPFR_RNDN);
    const double h = mpfr_get_d(c, MPFR_RNDN);
    mpfr_sub_d(hi, c, h, MPFR_RNDN);
    const double l = mpfr_get_d(hi, MPFR_RNDN);
    const double x = std::ldexp(std::nearbyint(std::ldexp(h, 8)), -8);  // a bf16-like value
    decided += check(x, {{h, l}, 0x1p-100}, bf16);
  }
  CHECK(decided > 1900);
}

TEST_CASE("compare fast path: whole comparisons equal the MPFR path", "[compare]") {
  struct Case {
    const char* schedule;
    const char* realisation;
    const char* against;  // nullptr: exact
    Format format;
    std::uint64_t start, positions;
  };
  const Case cases[] = {
      {"llama3.1-8b", "hf", nullptr, Format::bf16(), 0, 300},
      {"llama3.1-8b", "hf", nullptr, Format::fp16(), 70000, 200},
      {"qwen2.5-7b-yarn", "hf", nullptr, Format::bf16(), 30000, 200},  // attention factor
      {"llama3.1-8b", "r2", nullptr, Format::fp32(), 5, 200},
      {"llama3.1-8b", "r1", nullptr, Format::bf16(), 0, 300},
      // position-fp16: positions past 65504 overflow (the exact path, with its flags)
      {"llama3.1-8b", "pipeline:position=fp16;cos_sin=fp32", "hf", Format::bf16(), 65400, 300},
      {"llama3.1-8b", "vllm", "hf", Format::bf16(), 1000, 300},
      {"qwen2.5-7b-yarn", "hf", "r2", Format::bf16(), 0, 100},  // conventions differ: MPFR
      {"llama3.1-8b", "pipeline:inv_freq=fp32>A;cos_sin=fp32;rotation=A", "hf", Format::fp16(),
       4000, 300},
  };
  for (const auto& k : cases) {
    INFO(k.schedule << " " << k.realisation << " against " << (k.against ? k.against : "exact"));
    const auto s = parse_schedule(k.schedule);
    const auto a = parse_realisation(k.realisation, k.format);
    std::optional<Realisation> b;
    if (k.against) b = parse_realisation(k.against, k.format);
    CompareOptions o;
    o.start = k.start;
    o.positions = k.positions;
    o.blocks = {0, 1, 17, 40, 62, 63};
    const auto fast = compare(s, a, b, o);
    o.fast_arithmetic = false;
    const auto slow = compare(s, a, b, o);
    CHECK(to_json(fast) == to_json(slow));
    // A realised entry by entry (compute() with its steps) instead of in batches: the same
    // comparison and the same recorded values (cos, sin, angle step, flags)
    o.fast_arithmetic = true;
    RealisedValues batched(o.start, o.positions, s.blocks.size()),
        single(o.start, o.positions, s.blocks.size());
    CompareValues record;
    record.record = &batched;
    const auto by_batch = compare(s, a, b, o, {}, record);
    o.batch_realisation = false;
    record.record = &single;
    const auto by_entry = compare(s, a, b, o, {}, record);
    CHECK(to_json(by_batch) == to_json(fast));
    CHECK(to_json(by_entry) == to_json(fast));
    std::size_t angles = 0;
    for (std::size_t e = 0; e < batched.filled.size(); ++e) {
      if (!batched.filled[e]) continue;
      INFO("entry " << e);
      REQUIRE(single.filled[e]);
      REQUIRE(std::bit_cast<std::uint64_t>(batched.table.cos[e]) ==
              std::bit_cast<std::uint64_t>(single.table.cos[e]));
      REQUIRE(std::bit_cast<std::uint64_t>(batched.table.sin[e]) ==
              std::bit_cast<std::uint64_t>(single.table.sin[e]));
      REQUIRE(batched.entry_flags[e] == single.entry_flags[e]);
      REQUIRE(batched.has_angle[e] == single.has_angle[e]);
      REQUIRE(std::bit_cast<std::uint64_t>(batched.angle[e]) ==
              std::bit_cast<std::uint64_t>(single.angle[e]));
      angles += batched.has_angle[e];
    }
    // the pipelines and r2 form an angle step at every entry of these blocks; r1 at none
    CHECK(angles == (std::string(k.realisation) == "r1" ? 0 : o.positions * o.blocks.size()));
  }
}

TEST_CASE("compare fast path: the exact rotation's enclosure takes dd_cos_sin's stated bound",
          "[compare]") {
  // llama3.1-8b's block 0 has θ = 1 exactly (a double: no error in θ), so at small i the
  // radius of cos and sin is numeric::kDoubleDoubleTrigError (2^-88, double_double.hpp) plus
  // the product's 2^-100·|θi| and at()'s 2^-180; and at()'s 192-bit values lie inside
  const auto s = parse_schedule("llama3.1-8b");
  ExactBlockRotation exact(s.blocks[0]);
  Mpfr angle(192), c(192), sn(192), d(192);
  for (std::uint64_t i = 1; i <= 8; ++i) {
    detail::EnclosedReference ea, ec, es;
    REQUIRE(exact.enclose(i, ea, ec, es));
    INFO("i = " << i << ": radius " << ec.error);
    CHECK(ec.error >= ropesim::numeric::kDoubleDoubleTrigError);
    CHECK(ec.error <= ropesim::numeric::kDoubleDoubleTrigError + 0x1p-96);
    CHECK(es.error == ec.error);
    exact.at(i, angle, c, sn);
    for (const auto& [e, v] : {std::pair{&ec, &c}, std::pair{&es, &sn}}) {
      mpfr_sub_d(d, *v, e->r.hi, MPFR_RNDN);
      mpfr_sub_d(d, d, e->r.lo, MPFR_RNDN);
      CHECK(std::fabs(mpfr_get_d(d, MPFR_RNDU)) <= e->error);
    }
  }
}
