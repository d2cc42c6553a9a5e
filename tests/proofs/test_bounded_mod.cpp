// The MOD_m^r atom under a non-periodic schedule (THEORY §7 C4') and its certified range
// N_max^MOD. Expected values come from a hand derivation (g = 3/2, m = 4) and from a second small
// implementation of the realised scores (tests/proofs/mini_emulator.hpp: MPFR at 4096 bits
// rounded into F; no numeric/, attention/ or proofs/ code) over several g, m, r, C and formats.
#include <mpfr.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <string>

#include "attention/schedules/schedule.hpp"
#include "attention/transformer/run.hpp"
#include "logic/evaluate.hpp"
#include "logic/formula.hpp"
#include "mini_emulator.hpp"
#include "numeric/format.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/compiler/bounded_mod.hpp"
#include "proofs/compiler/compiler.hpp"
#include "proofs/compiler/mod_atom.hpp"
#include "proofs/compiler/refusal.hpp"

using namespace ropesim;
using numeric::Format;

namespace {

/// round_F(K·cos(2π·t)) (or sin) for a rational number of turns t, through 1024 bits.
double mini_turn(const test::Mini& mini, const mpq_class& t, bool sine, double K = 1) {
  mpfr_t x;
  mpfr_init2(x, 1024);
  mpfr_const_pi(x, MPFR_RNDN);
  mpfr_mul_q(x, x, mpq_class(2 * t).get_mpq_t(), MPFR_RNDN);
  if (sine) {
    mpfr_sin(x, x, MPFR_RNDN);
  } else {
    mpfr_cos(x, x, MPFR_RNDN);
  }
  mpfr_mul_d(x, x, K, MPFR_RNDN);
  const double d = mini.round(x);
  mpfr_clear(x);
  return d;
}

/// The turn a/m nearest g radians with gcd(a, m) = 1, by trying every a (the second
/// implementation of the block choice).
std::uint64_t mini_turn_of(double g, std::uint64_t m) {
  std::uint64_t best = 1;
  double best_d = 10;
  for (std::uint64_t a = 1; a < m; ++a) {
    if (std::gcd(a, m) != 1) continue;
    const double d = std::fabs(
        std::remainder(g - 2 * std::numbers::pi * double(a) / double(m), 2 * std::numbers::pi));
    if (d < best_d) {
      best_d = d;
      best = a;
    }
  }
  return best;
}

/// N_max^MOD of the C4' head with one block of angle g (rational radians) and a given C, computed
/// step by step as THEORY §2.1 and §7 C4' say, on the mini emulator: the largest L with every
/// query 2..L+1 led by f_large by its winner; the scan stops at max_length.
std::uint64_t mini_bounded_range(test::MiniFormat fmt, const mpq_class& g, std::uint64_t m,
                                 std::uint64_t r, double C, const mpq_class& f_large,
                                 std::uint64_t max_length) {
  const test::Mini mini(fmt);
  const std::uint64_t a = mini_turn_of(g.get_d(), m);
  const double b = mini_turn(mini, mpq_class(1, 2 * m), false);  // cos(π/m)
  const double w = mini.mul(C, b);
  const double qc = mini_turn(mini, mpq_class(a * r, m), false);
  const double qs = mini_turn(mini, mpq_class(a * r, m), true, -1);
  // The BOS key is R̂_0 (C, 0) = (C, 0); the non-BOS key (0, 0, w, 0).
  std::uint64_t n_max = 0;
  for (std::uint64_t i = 2; i <= max_length + 1; ++i) {
    const double c = mini.trig(g, static_cast<long>(i), false, 1);
    const double s = mini.trig(g, static_cast<long>(i), true, 1);
    const double q0 = mini.sub(mini.mul(c, qc), mini.mul(s, qs));
    const double q1 = mini.add(mini.mul(s, qc), mini.mul(c, qs));
    // Sequential dot products over (block pair, baseline pair); q's baseline pair is (1, 0).
    const double bos =
        mini.add(mini.add(mini.add(mini.mul(q0, C), mini.mul(q1, 0.0)), mini.mul(1.0, 0.0)),
                 mini.mul(0.0, 0.0));
    const double other =
        mini.add(mini.add(mini.add(mini.mul(q0, 0.0), mini.mul(q1, 0.0)), mini.mul(1.0, w)),
                 mini.mul(0.0, 0.0));
    if (!std::isfinite(bos) || !std::isfinite(other)) break;
    const mpq_class lead =
        i % m == r ? mpq_class(bos) - mpq_class(other) : mpq_class(other) - mpq_class(bos);
    if (lead < f_large) break;
    n_max = i - 1;
  }
  return n_max;
}

proofs::BoundedModSpec spec_of(const mpq_class& g, std::uint64_t m, std::uint64_t r,
                               const Format& F, std::optional<mpq_class> C = {}) {
  proofs::BoundedModSpec s;
  s.m = m;
  s.r = r;
  s.schedule = attention::single_schedule(g);
  s.policy.format = F;
  s.C = C;
  s.max_length = 5000;
  return s;
}

mpq_class f_large_of(const Format& F) {
  return attention::exact_rational(*numeric::f_large(F, numeric::Rounding::nearest_even));
}

}  // namespace

TEST_CASE("C4': the hand-derived range of g = 3/2, m = 4 in fp32", "[bounded_mod]") {
  // θ = 3/2 is nearest the turn 2π·1/4 = π/2: ε = 3/2 − π/2 = −0.0707963 rad, b = cos(π/4) =
  // 0.70711, and with r = 0 the query bias is (1, 0), so the ideal BOS score at query i is
  // C·cos(iπ/2 + iε) against C·b for every other key:
  //   i ≡ 0: BOS must lead, cos(iε) > b: i = 4, 8 give 0.960, 0.844; i = 12 gives
  //          cos(0.8496) = 0.6602 < b: the first failure;
  //   i ≡ 1: cos(π/2 + iε) = sin(i|ε|) must trail b: i = 5, 9 give 0.346, 0.595 (lead ≥ 0.112·C);
  //   i ≡ 2, 3: −cos(iε) and −sin(i|ε|) are negative: they trail by more than b.
  // The smallest lead over queries 2..11 is 0.112·C ≥ f_large = 103.97 for C = 2^15, so
  // N_max^MOD = 10 (words of length ≤ 10; query 12 fails). Realised values in fp32 are within
  // 2^-20 of these, far from every threshold.
  const proofs::BoundedModHead h =
      proofs::make_bounded_mod_head(spec_of(mpq_class(3, 2), 4, 0, Format::fp32(), 32768));
  CHECK(h.a == 1);
  CHECK(h.n_max == 10);
  REQUIRE(h.fail_query);
  CHECK(*h.fail_query == 12);
  CHECK_FALSE(h.at_limit);
  CHECK(std::fabs(h.epsilon - (1.5 - std::numbers::pi / 2)) < 1e-12);
  // C = auto keeps the longest range: no C can pass query 12 (the ideal lead is negative).
  const proofs::BoundedModHead automatic =
      proofs::make_bounded_mod_head(spec_of(mpq_class(3, 2), 4, 0, Format::fp32()));
  CHECK(automatic.n_max == 10);
  CHECK(automatic.auto_C);
}

TEST_CASE("C4': the certified range equals the mini emulator's", "[bounded_mod]") {
  struct Case {
    mpq_class g;
    std::uint64_t m, r;
    double C;
    Format F;
    test::MiniFormat mini;
  };
  const std::vector<Case> cases = {
      {mpq_class(3, 2), 4, 0, 32768, Format::fp32(), test::mini_fp32()},
      {mpq_class(3, 2), 4, 3, 512, Format::fp32(), test::mini_fp32()},
      {mpq_class(21, 10), 3, 1, 4096, Format::fp32(), test::mini_fp32()},
      {mpq_class(21, 10), 3, 2, 256, Format::bf16(), test::mini_bf16()},
      {mpq_class(1), 6, 5, 2048, Format::fp32(), test::mini_fp32()},
      {mpq_class(9, 10), 7, 2, 1024, Format::fp16(), test::mini_fp16()},
      {mpq_class(9, 10), 7, 0, 16384, Format::bf16(), test::mini_bf16()},
      {mpq_class(314, 100), 2, 1, 65536, Format::fp32(), test::mini_fp32()},
      {mpq_class(1257, 1000), 5, 4, 8192, Format::fp32(), test::mini_fp32()},
  };
  for (const Case& c : cases) {
    INFO("g = " << c.g.get_str() << ", m = " << c.m << ", r = " << c.r << ", C = " << c.C
                << ", F = " << c.F.name);
    const std::uint64_t expected =
        mini_bounded_range(c.mini, c.g, c.m, c.r, c.C, f_large_of(c.F), 5000);
    if (expected < 2 * c.m) {
      // Below two periods the construction refuses (no bounded MOD simulation).
      CHECK_THROWS_AS(proofs::make_bounded_mod_head(spec_of(c.g, c.m, c.r, c.F, mpq_class(c.C))),
                      proofs::Refusal);
      continue;
    }
    const proofs::BoundedModHead h =
        proofs::make_bounded_mod_head(spec_of(c.g, c.m, c.r, c.F, mpq_class(c.C)));
    CHECK(h.n_max == expected);
    CHECK(h.a == mini_turn_of(c.g.get_d(), c.m));
  }
}

TEST_CASE("C4': no bounded simulation: one line naming the schedule and the nearest block",
          "[bounded_mod]") {
  // θ = 1 rad is 2.14 rad from the only turn of m = 2 (π), far beyond the π/2 of drift allowed.
  try {
    (void)proofs::make_bounded_mod_head(spec_of(mpq_class(1), 2, 0, Format::fp16()));
    FAIL("expected a refusal");
  } catch (const proofs::Refusal& e) {
    CHECK(e.reason() == proofs::RefusalReason::mod_schedule);
    const std::string what = e.what();
    CHECK(what.find("single:g=1") != std::string::npos);
    CHECK(what.find("nearest block 0") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}

TEST_CASE("compile: --schedule is the schedule of every rotary head, MOD atoms included",
          "[bounded_mod]") {
  const ltl::Formula mod2 = ltl::parse("mod(2,0)");
  proofs::CompileOptions options;
  options.policy.format = Format::fp16();
  options.suggest_format = false;
  SECTION("llama2-7b's angles hold no bounded MOD_2: refused, never the periodic model") {
    options.offset_schedule = attention::parse_schedule("llama2-7b");
    options.mod_schedule = options.offset_schedule;
    try {
      (void)proofs::compile(mod2, {"a", "b"}, options);
      FAIL("expected a refusal");
    } catch (const proofs::Refusal& e) {
      CHECK(e.reason() == proofs::RefusalReason::mod_schedule);
      CHECK(std::string(e.what()).find("llama2-7b") != std::string::npos);
    }
  }
  SECTION("a periodic schedule keeps C4") {
    options.mod_schedule = attention::parse_schedule("periodic:m=2");
    const proofs::CompiledModel c = proofs::compile(mod2, {"a", "b"}, options);
    CHECK(c.mod_heads.size() == 1);
    CHECK(c.bounded_mod_heads.empty());
    CHECK_FALSE(c.certified_length);
  }
  SECTION("a periodic schedule without the turn 1/m is refused, never replaced by 1/m") {
    // periodic:m=4 rotates by pi/2: cos(i*pi/2) takes one value on each residue mod 4, so no
    // query bias makes BOS lead exactly on i = 0 (mod 3); the atom's own table 1/3 is not the
    // schedule the user named. periodic:1/4,1/3 has it as block 1.
    const ltl::Formula mod3 = ltl::parse("mod(3,0)");
    for (const std::string spec : {"periodic:m=4", "periodic:1/4,2/3", "periodic:m=6"}) {
      INFO(spec);
      options.mod_schedule = attention::parse_schedule(spec);
      try {
        (void)proofs::compile(mod3, {"a", "b"}, options);
        FAIL("expected a refusal");
      } catch (const proofs::Refusal& e) {
        CHECK(e.reason() == proofs::RefusalReason::mod_period);
        const std::string what = e.what();
        CHECK(what.find("no preset format") == std::string::npos);  // no format fixes it
        CHECK(what.find(options.mod_schedule->spec) != std::string::npos);
        CHECK(what.find("turn 1/3") != std::string::npos);
        CHECK(what.find('\n') == std::string::npos);
      }
    }
    options.mod_schedule = attention::parse_schedule("periodic:m=4,3");
    const proofs::CompiledModel c = proofs::compile(mod3, {"a", "b"}, options);
    REQUIRE(c.mod_heads.size() == 1);
    const nlohmann::json report = proofs::to_json(c);
    CHECK(report.dump().find("\"block\"") != std::string::npos);
    for (std::uint64_t L = 1; L <= 13; ++L) {
      const std::string word(L, 'b');
      INFO("length " << L);
      CHECK(attention::run(c.model, word).accept == ltl::accepts(mod3, ltl::letters(word)));
    }
  }
  SECTION("a non-periodic block near the turn: bounded, and exact on every length up to N_max") {
    options.policy.format = Format::fp32();
    options.mod_schedule = attention::single_schedule(mpq_class(3, 2));
    const ltl::Formula mod4 = ltl::parse("mod(4,1)");  // length ≡ 0 (mod 4) read at EOS
    const proofs::CompiledModel c = proofs::compile(mod4, {"a", "b"}, options);
    REQUIRE(c.bounded_mod_heads.size() == 1);
    const std::uint64_t n = c.bounded_mod_heads[0].n_max;
    CHECK(n >= 4);
    REQUIRE(c.certified_length);
    CHECK(*c.certified_length == n);
    for (std::uint64_t L = 1; L <= n; ++L) {
      const std::string word(L, 'a');
      INFO("length " << L);
      CHECK(attention::run(c.model, word).accept == ltl::accepts(mod4, ltl::letters(word)));
    }
  }
}
