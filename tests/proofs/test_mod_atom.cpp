// The MOD_m^r atom with RoPE_P (THEORY §7 C4; RoPE-X App C.3) and the length-test transformer.
// Expected values come from hand derivations (m = 2 and m = 4, where the table entries are
// exactly 0 and ±1), from THEORY §7's list of exact-arithmetic bounds, and from a second small
// implementation of the realised scores (tests/proofs/mini_emulator.hpp's MPFR rounding; no
// numeric/, attention/ or proofs/ code) for m = 3, 6, 12.
#include <mpfr.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "attention/transformer/model_spec.hpp"
#include "attention/transformer/run.hpp"
#include "core/error.hpp"
#include "mini_emulator.hpp"
#include "numeric/format.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/compiler/mod_atom.hpp"

using namespace ropesim;
using numeric::Format;

namespace {

mpq_class q(const numeric::Value& v) { return attention::exact_rational(v); }

proofs::ModAtomSpec atom_spec(std::uint64_t m, std::uint64_t r, const Format& f) {
  proofs::ModAtomSpec s;
  s.m = m;
  s.r = r;
  s.policy.format = f;
  return s;
}

// ---- the second implementation (MPFR at 1024/4096 bits, rounded by test::Mini) ----

constexpr mpfr_prec_t kBits = 1024;

/// round_F(scale·cos(2π·s/m) + shift) (or sin), through a 1024-bit value: the exact values are
/// algebraic irrationals or Niven rationals, nowhere near a rounding boundary at 2^-1000.
double mini_trig(const test::Mini& mini, long s, long m, bool sine, double scale = 1,
                 double shift = 0) {
  mpfr_t x;
  mpfr_init2(x, kBits);
  mpfr_const_pi(x, MPFR_RNDN);
  mpfr_mul_si(x, x, 2 * s, MPFR_RNDN);
  mpfr_div_si(x, x, m, MPFR_RNDN);
  if (sine) {
    mpfr_sin(x, x, MPFR_RNDN);
  } else {
    mpfr_cos(x, x, MPFR_RNDN);
  }
  mpfr_mul_d(x, x, scale, MPFR_RNDN);
  mpfr_add_d(x, x, shift, MPFR_RNDN);
  const double d = mini.round(x);
  mpfr_clear(x);
  return d;
}

/// f_large under nearest-even with subnormals (THEORY §1): exp(−f) rounds to 0 iff
/// exp(−f) ≤ 2^(emin − p) (half the smallest subnormal; the tie goes to the even 0), i.e.
/// f ≥ (p − emin)·ln 2, which is irrational: f_large is the next element of F above it.
mpq_class mini_f_large(test::MiniFormat f) {
  mpfr_t x;
  mpfr_init2(x, 256);
  mpfr_const_log2(x, MPFR_RNDN);
  mpfr_mul_si(x, x, f.p - f.emin, MPFR_RNDN);
  const long e = static_cast<long>(mpfr_get_exp(x));  // x in [2^(e-1), 2^e)
  mpfr_mul_2si(x, x, f.p - e, MPFR_RNDN);             // x·2^(p−e) in [2^(p−1), 2^p)
  mpfr_floor(x, x);
  mpz_class k;
  mpfr_get_z(k.get_mpz_t(), x, MPFR_RNDN);
  mpfr_clear(x);
  k += 1;
  mpq_class out(k);
  if (e - f.p >= 0) {
    out *= mpq_class(mpz_class(1) << static_cast<unsigned long>(e - f.p));
  } else {
    out /= mpq_class(mpz_class(1) << static_cast<unsigned long>(f.p - e));
  }
  return out;
}

/// The realised margin of every query residue of the C4 head with scale C (an element of F),
/// THEORY §2.1 arithmetic: q_s = T(s)·b_q (rotation rnd(rnd(c·x0) − rnd(s·x1)), rnd(rnd(s·x0) +
/// rnd(c·x1))), k_BOS = T(0)·(C, 0), k_other = (0, 0, rnd(C·b̂), 0), sequential dot products.
std::vector<mpq_class> mini_margins(test::MiniFormat fmt, long m, long r, double C) {
  const test::Mini mini(fmt);
  const double b0 = mini_trig(mini, r, m, false), b1 = mini_trig(mini, r, m, true, -1);
  const double b = mini_trig(mini, 1, m, false, 0.5, 0.5);  // (1 + cos 2π/m)/2
  const double w = mini.mul(C, b);
  const double c0 = mini_trig(mini, 0, m, false), s0 = mini_trig(mini, 0, m, true);
  const double k0 = mini.sub(mini.mul(c0, C), mini.mul(s0, 0.0));
  const double k1 = mini.add(mini.mul(s0, C), mini.mul(c0, 0.0));
  auto dot = [&](const double* x, const double* y) {
    double acc = mini.mul(x[0], y[0]);
    for (int c = 1; c < 4; ++c) acc = mini.add(acc, mini.mul(x[c], y[c]));
    return acc;
  };
  const double k_bos[4] = {k0, k1, 0, 0};
  const double k_other[4] = {0, 0, w, 0};
  std::vector<mpq_class> out;
  for (long s = 0; s < m; ++s) {
    const double c = mini_trig(mini, s, m, false), sn = mini_trig(mini, s, m, true);
    const double query[4] = {mini.sub(mini.mul(c, b0), mini.mul(sn, b1)),
                             mini.add(mini.mul(sn, b0), mini.mul(c, b1)), 1, 0};
    const mpq_class bos(dot(query, k_bos)), other(dot(query, k_other));
    out.push_back(s == r ? bos - other : other - bos);
  }
  return out;
}

test::MiniFormat mini_of(const Format& f) {
  if (f == Format::fp16()) return test::mini_fp16();
  if (f == Format::bf16()) return test::mini_bf16();
  if (f == Format::fp8e5m2()) return test::mini_fp8e5m2();
  return test::mini_fp32();
}

std::string word_of(std::uint64_t n, std::uint64_t bits) {
  std::string w(n, 'a');
  for (std::uint64_t c = 0; c < n; ++c) {
    if ((bits >> c) & 1) w[c] = 'b';
  }
  return w;
}

}  // namespace

TEST_CASE("f_large of the second implementation matches THEORY §1", "[proofs][mod]") {
  CHECK(mini_f_large(test::mini_fp16()) == mpq_class(555, 32));  // 17.34375
  CHECK(mini_f_large(test::mini_bf16()) == 93);
  CHECK(std::fabs(mini_f_large(test::mini_fp32()).get_d() - 103.97) < 0.005);
  for (const Format& f : {Format::fp16(), Format::bf16(), Format::fp32(), Format::fp8e5m2()}) {
    CHECK(q(*numeric::f_large(f)) == mini_f_large(mini_of(f)));
  }
}

TEST_CASE("C4 scale bound 2·f_large/δ_m: THEORY §7's values", "[proofs][mod]") {
  struct Row {
    std::uint64_t m;
    double fp32, fp16;
  };
  // THEORY §7: m=2: fp32 103.97, fp16 17.34375; m=3: 138.63, 23.125; m=4: 207.94, 34.6875;
  // m=6: 415.89, 69.375; m=12: 1552.1, 258.9.
  for (const Row& row : {Row{2, 103.97, 17.34375}, Row{3, 138.63, 23.125}, Row{4, 207.94, 34.6875},
                         Row{6, 415.89, 69.375}, Row{12, 1552.1, 258.9}}) {
    INFO("m = " << row.m);
    const auto b32 = proofs::mod_scale_bound(row.m, Format::fp32());
    const auto b16 = proofs::mod_scale_bound(row.m, Format::fp16());
    CHECK(std::fabs(b32.approximate - row.fp32) < 0.06);
    CHECK(std::fabs(b16.approximate - row.fp16) < 0.06);
    CHECK(b32.finite);
    CHECK(b16.finite);
  }
  // δ_m rational (Niven) for m = 2, 3, 4, 6: δ = 2, 3/2, 1, 1/2, so the bound is f_large,
  // 4/3·f_large, 2·f_large, 4·f_large. fp16 f_large = 555/32: 555/32, 185/8, 555/16, 555/8 —
  // all in fp16, so the round-up is exact.
  const mpq_class f16(555, 32);
  CHECK(*proofs::mod_scale_bound(2, Format::fp16()).exact == f16);
  CHECK(*proofs::mod_scale_bound(3, Format::fp16()).exact == mpq_class(185, 8));
  CHECK(q(proofs::mod_scale_bound(3, Format::fp16()).rounded_up) == mpq_class(185, 8));  // 23.125
  CHECK(q(proofs::mod_scale_bound(4, Format::fp16()).rounded_up) == 2 * f16);
  CHECK(q(proofs::mod_scale_bound(6, Format::fp16()).rounded_up) == 4 * f16);
  CHECK_FALSE(proofs::mod_scale_bound(12, Format::fp16()).exact.has_value());
  // m = 12: 34.6875/(1 − √3/2) = 258.912…; fp16 has spacing 1/4 in [256, 512): rounds up to 259.
  CHECK(q(proofs::mod_scale_bound(12, Format::fp16()).rounded_up) == 259);
  // bf16 (f_large 93): 2·93/(1 − √3/2) = 1388.34…; spacing 8 in [1024, 2048): 1392.
  CHECK(q(proofs::mod_scale_bound(12, Format::bf16()).rounded_up) == 1392);
  // fp32 m = 3: 4/3·f_large ≈ 138.63 lies in [128, 256), where fp32's spacing is 2^-16; the
  // round-up is the element of that grid at or above it, less than one spacing away.
  {
    const mpq_class exact = mpq_class(4, 3) * mini_f_large(test::mini_fp32());
    const mpq_class up = q(proofs::mod_scale_bound(3, Format::fp32()).rounded_up);
    CHECK(up >= exact);
    CHECK(up - exact < mpq_class(1, 65536));
    CHECK(mpq_class(up * 65536).get_den() == 1);
  }
  CHECK_THROWS_AS(proofs::mod_scale_bound(1, Format::fp16()), InvalidArgument);
  CHECK_THROWS_AS(proofs::mod_scale_bound(2, Format::fp16(), numeric::Rounding::upward),
                  InvalidArgument);
}

TEST_CASE("m = 2 by hand: the margin is exactly C = f_large in both residues", "[proofs][mod]") {
  // θ = π: T(0) = (1, 0), T(1) = (−1, 0) exactly (Niven). δ_2 = 2, b_2 = 0, so every non-BOS
  // key is (0, 0, 0, 0) and scores 0. Query bias for r: (cos πr, −sin πr) = (±1, 0).
  // Query residue s: q = T(s)·b_q = (cos π(s − r), ·), BOS score rnd(q0·C) = ±C.
  //   s = r: BOS C, others 0 → lead C;  s ≠ r: BOS −C, others 0 → lead C.
  // The exact bound 2·f_large/2 = f_large passes with margin exactly f_large.
  for (const Format& f : {Format::fp16(), Format::bf16(), Format::fp32()}) {
    const mpq_class fl = mini_f_large(mini_of(f));
    for (std::uint64_t r : {0, 1}) {
      INFO(f.name << " r = " << r);
      const auto h = proofs::make_mod_atom_head(atom_spec(2, r, f));
      CHECK(q(h.C) == fl);
      CHECK(h.candidates.size() == 1);
      CHECK(q(h.b) == 0);
      CHECK(q(h.key_weight) == 0);
      REQUIRE(h.margins.size() == 2);
      for (const auto& rm : h.margins) {
        CHECK(rm.bos_wins == (rm.residue == r));
        CHECK(q(rm.bos_score) == (rm.residue == r ? fl : -fl));
        CHECK(q(rm.other_min) == 0);
        CHECK(*rm.margin == fl);
        CHECK(rm.passes);
      }
      CHECK(h.min_margin == fl);
    }
  }
}

TEST_CASE("m = 4 by hand: leads f_large, f_large, 3·f_large, f_large", "[proofs][mod]") {
  // θ = π/2: T(s) = (1,0), (0,1), (−1,0), (0,−1) exactly. δ_4 = 1, b_4 = 1/2, C = 2·f_large
  // (in F: a power-of-two multiple), key weight rnd(C/2) = f_large. Query residue s, d = s − r:
  // q0 = cos(πd/2) ∈ {1, 0, −1, 0} exactly (products of 0, ±1), BOS score q0·C:
  //   d = 0: BOS 2f vs f → lead f;  d = 1, 3: f vs 0 → lead f;  d = 2: f vs −2f → lead 3f.
  const mpq_class lead[4] = {1, 1, 3, 1};
  for (const Format& f : {Format::fp16(), Format::bf16(), Format::fp32()}) {
    const mpq_class fl = mini_f_large(mini_of(f));
    for (std::uint64_t r = 0; r < 4; ++r) {
      INFO(f.name << " r = " << r);
      const auto h = proofs::make_mod_atom_head(atom_spec(4, r, f));
      CHECK(q(h.C) == 2 * fl);
      CHECK(q(h.b) == mpq_class(1, 2));
      CHECK(q(h.key_weight) == fl);
      REQUIRE(h.margins.size() == 4);
      for (const auto& rm : h.margins) {
        const std::uint64_t d = (rm.residue + 4 - r) % 4;
        const mpq_class q0 = d == 0 ? 1 : (d == 2 ? -1 : 0);
        CHECK(q(rm.bos_score) == q0 * 2 * fl);
        CHECK(q(rm.other_max) == fl);
        CHECK(*rm.margin == lead[d] * fl);
      }
      CHECK(h.min_margin == fl);
    }
  }
  // The m = 4 table itself: exactly 0 and ±1.
  const auto h = proofs::make_mod_atom_head(atom_spec(4, 1, Format::fp16()));
  const int cs[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
  for (int s = 0; s < 4; ++s) {
    CHECK(q(h.table[s].cos) == cs[s][0]);
    CHECK(q(h.table[s].sin) == cs[s][1]);
  }
  CHECK(q(h.query_cos) == 0);   // cos(π/2)
  CHECK(q(h.query_sin) == -1);  // −sin(π/2)
}

TEST_CASE("realised margins agree with a second implementation (m = 3, 6, 12; every C tried)",
          "[proofs][mod]") {
  for (const Format& f : {Format::fp16(), Format::bf16(), Format::fp32()}) {
    const mpq_class fl = mini_f_large(mini_of(f));
    for (long m : {3, 6, 12}) {
      const auto bound = proofs::mod_scale_bound(static_cast<std::uint64_t>(m), f);
      for (long r = 0; r < m; ++r) {
        INFO(f.name << " m = " << m << " r = " << r);
        const auto h = proofs::make_mod_atom_head(
            atom_spec(static_cast<std::uint64_t>(m), static_cast<std::uint64_t>(r), f));
        // The search starts at the bound rounded up, and the chosen C is the first that passes.
        REQUIRE(!h.candidates.empty());
        CHECK(h.candidates.front().C.same_bits(bound.rounded_up));
        CHECK(h.candidates.back().C.same_bits(h.C));
        for (std::size_t k = 0; k < h.candidates.size(); ++k) {
          const auto margins = mini_margins(mini_of(f), m, r, h.candidates[k].C.to_double());
          mpq_class smallest = margins[0];
          for (const auto& x : margins) smallest = std::min(smallest, x);
          REQUIRE(h.candidates[k].min_margin.has_value());
          CHECK(*h.candidates[k].min_margin == smallest);
          CHECK(h.candidates[k].passes == (smallest >= fl));
          CHECK(h.candidates[k].passes == (k + 1 == h.candidates.size()));
        }
        const auto margins = mini_margins(mini_of(f), m, r, h.C.to_double());
        for (const auto& rm : h.margins) CHECK(*rm.margin == margins[rm.residue]);
        CHECK(h.min_margin >= fl);
      }
    }
  }
}

TEST_CASE("measured C and leads (reported; THEORY §7: rounding can eat the exact bound's margin)",
          "[proofs][mod]") {
  // m = 3 in fp16, r = 0: the bound 23.125 gives the residues s = 1, 2 a lead of exactly
  // f_large in exact arithmetic (BOS scores C·cos(±2π/3) = −C/2 vs C/4), but the realised
  // query rnd(ĉ·1 − ŝ·(−0)) keeps −1/2 exactly, and the winner BOS at s = 0 has q0 = 1: all
  // leads are 3C/4 = 17.34375 exactly, so the bound itself passes.
  const auto h = proofs::make_mod_atom_head(atom_spec(3, 0, Format::fp16()));
  CHECK(q(h.C) == mpq_class(185, 8));
  CHECK(h.min_margin == mpq_class(555, 32));
  // r = 1: the query bias (−1/2, −ŝ), ŝ = rnd(√3/2) = 0.8662109375 in fp16; at s = 1 the
  // rotated q0 = rnd(1/4 + rnd(ŝ²)) = rnd(0.25 + 0.75048828125) = 1.0 (spacing 2^-10 on [1, 2)):
  // here too the bound passes. Whatever the values, the second implementation above checks them.
  for (std::uint64_t r = 0; r < 3; ++r) {
    const auto hr = proofs::make_mod_atom_head(atom_spec(3, r, Format::fp16()));
    CHECK(hr.min_margin >= mpq_class(555, 32));
  }
}

TEST_CASE("refusal: fp8e5m2 cannot hold MOD_12 (b̂ = round(cos π/6) = 0.875)", "[proofs][mod]") {
  // fp8e5m2 has p = 3: on [1/2, 1) the spacing is 1/8. cos(π/6) = 0.866… rounds to 0.875 and
  // b_12 = (1 + cos π/6)/2 = 0.933… rounds to 0.875 as well (the midpoint to 1 is 0.9375). So
  // for r = 0 the residues s = ±1 have BOS score rnd(0.875·C) and baseline rnd(C·0.875): lead 0
  // for every C, and F is refused.
  const auto m = mini_margins(test::mini_fp8e5m2(), 12, 0, 256);
  CHECK(m[1] == 0);
  CHECK(m[11] == 0);
  try {
    proofs::make_mod_atom_head(atom_spec(12, 0, Format::fp8e5m2()));
    FAIL("expected a refusal");
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("m = 12") != std::string::npos);
    CHECK(what.find("r = 0") != std::string::npos);
    CHECK(what.find("fp8e5m2") != std::string::npos);
    CHECK(what.find("best margin found") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
  // A given C below the bound is refused too, naming it: fp16 m = 3 with C = 20 < 23.125 has
  // lead 3/4·20 = 15 < f_large.
  proofs::ModAtomSpec s = atom_spec(3, 0, Format::fp16());
  s.C = 20;
  CHECK_THROWS_WITH(proofs::make_mod_atom_head(s),
                    Catch::Contains("C = 20") && Catch::Contains("best margin found 15 "));
  // f_large undefined under round-up (THEORY §1).
  s.C.reset();
  s.policy.rounding = numeric::Rounding::upward;
  CHECK_THROWS_WITH(proofs::make_mod_atom_head(s), Catch::Contains("f_large"));
  // Bad m, r.
  CHECK_THROWS_AS(proofs::make_mod_atom_head(atom_spec(1, 0, Format::fp16())), InvalidArgument);
  CHECK_THROWS_AS(proofs::make_mod_atom_head(atom_spec(3, 3, Format::fp16())), InvalidArgument);
  proofs::ModModelSpec bad;
  bad.atom = atom_spec(0, 0, Format::fp16());
  CHECK_THROWS_AS(proofs::mod_model(bad), InvalidArgument);
  bad.atom = atom_spec(2, 2, Format::fp16());
  CHECK_THROWS_AS(proofs::mod_model(bad), InvalidArgument);
}

TEST_CASE("MOD_m^r by hand (THEORY §4)", "[proofs][mod]") {
  CHECK_FALSE(proofs::mod_formula(3, 0, 0));  // BOS is not a position
  CHECK(proofs::mod_formula(3, 0, 3));
  CHECK(proofs::mod_formula(3, 1, 1));
  CHECK_FALSE(proofs::mod_formula(3, 1, 2));
  CHECK(proofs::mod_formula(1, 0, 1));
  CHECK(proofs::mod_formula(1, 0, 7));
}

TEST_CASE("the model recognises N ≡ r (mod m) at every length 0..3m (m = 1, 2, 3, 4, 6, 12)",
          "[proofs][mod][model]") {
  for (const Format& f : {Format::fp16(), Format::bf16(), Format::fp32()}) {
    for (std::uint64_t m : {1, 2, 3, 4, 6, 12}) {
      for (std::uint64_t r = 0; r < m; ++r) {
        INFO(f.name << " m = " << m << " r = " << r);
        proofs::ModModelSpec spec;
        spec.atom = atom_spec(m, r, f);
        const proofs::ModModel built = proofs::mod_model(spec);
        CHECK(built.atom_residue == (r + 1) % m);
        CHECK(built.atom.has_value() == (m > 1));
        // Every position of a^(3m): the output coordinate is exactly MOD_m^(r+1) (0 at BOS).
        attention::RunOptions all;
        all.trace_all = true;
        const std::string longest(3 * m, 'a');
        const auto run = attention::run(built.model, longest, all);
        // The coordinates by name, as the model lists them (mod_model_space).
        const auto index_of = [&](const std::string& name) {
          const auto& c = built.model.coordinates;
          return static_cast<std::size_t>(std::find(c.begin(), c.end(), name) - c.begin());
        };
        const std::size_t out = index_of("out"), first = index_of("first");
        REQUIRE(out < built.model.d_model);
        REQUIRE(first < built.model.d_model);
        for (const auto& pt : run.layers.back()) {
          INFO("position " << pt.position);
          const bool expected = proofs::mod_formula(m, (r + 1) % m, pt.position);
          CHECK(q(pt.output[out]) == (expected ? 1 : 0));
          // the first-position flag is exactly [position 1]
          if (m > 1) CHECK(q(pt.output[first]) == (pt.position == 1 ? 1 : 0));
        }
        // Every length 0..3m: accept iff N ≡ r (mod m).
        for (std::uint64_t n = 0; n <= 3 * m; ++n) {
          INFO("N = " << n);
          CHECK(attention::run(built.model, std::string(n, 'a')).accept == (n % m == r));
        }
      }
    }
  }
}

TEST_CASE("other formats: tf32, fp8e4m3 (saturating) and fp8e5m2 (m <= 6) also decide N ≡ r",
          "[proofs][mod][model]") {
  for (const Format& f : {Format::tf32(), Format::fp8e4m3(), Format::fp8e5m2()}) {
    for (std::uint64_t m : {2, 3, 4, 6, 12}) {
      if (f == Format::fp8e5m2() && m == 12) continue;  // refused (see above)
      for (std::uint64_t r = 0; r < m; ++r) {
        INFO(f.name << " m = " << m << " r = " << r);
        proofs::ModModelSpec spec;
        spec.atom = atom_spec(m, r, f);
        const auto model = proofs::mod_model(spec).model;
        for (std::uint64_t n = 0; n <= 3 * m; ++n) {
          INFO("N = " << n);
          CHECK(attention::run(model, std::string(n, 'a')).accept == (n % m == r));
        }
      }
    }
  }
}

TEST_CASE("the model depends on the length only: all words over {a, b} up to length 5",
          "[proofs][mod][model]") {
  for (std::uint64_t m : {2, 3, 6}) {
    for (std::uint64_t r = 0; r < m; ++r) {
      proofs::ModModelSpec spec;
      spec.atom = atom_spec(m, r, Format::bf16());
      const auto model = proofs::mod_model(spec).model;
      for (std::uint64_t n = 0; n <= 5; ++n) {
        for (std::uint64_t bits = 0; bits < (std::uint64_t{1} << n); ++bits) {
          const std::string w = word_of(n, bits);
          INFO("m = " << m << " r = " << r << " w = " << w);
          CHECK(attention::run(model, w).accept == (n % m == r));
        }
      }
    }
  }
}

TEST_CASE("readout eos: accept iff MOD_m^r holds at N + 1", "[proofs][mod][model]") {
  for (std::uint64_t m : {1, 2, 3, 12}) {
    for (std::uint64_t r = 0; r < m; ++r) {
      proofs::ModModelSpec spec;
      spec.atom = atom_spec(m, r, Format::fp16());
      spec.readout = proofs::ModReadout::eos;
      const auto built = proofs::mod_model(spec);
      CHECK(built.atom_residue == r);
      for (std::uint64_t n = 0; n <= 2 * m + 1; ++n) {
        INFO("m = " << m << " r = " << r << " N = " << n);
        CHECK(attention::run(built.model, std::string(n, 'a')).accept == ((n + 1) % m == r));
      }
    }
  }
  CHECK(proofs::parse_mod_readout("length") == proofs::ModReadout::length);
  CHECK(proofs::parse_mod_readout("eos") == proofs::ModReadout::eos);
  CHECK_THROWS_AS(proofs::parse_mod_readout("tail"), InvalidArgument);
}

TEST_CASE("the saved model spec reproduces the model bit for bit", "[proofs][mod][model]") {
  proofs::ModModelSpec spec;
  spec.atom = atom_spec(12, 5, Format::fp16());
  const auto built = proofs::mod_model(spec);
  const auto reloaded = attention::parse_model(attention::model_to_json(built.model).dump());
  for (std::uint64_t n = 0; n <= 36; ++n) {
    const auto a = attention::run(built.model, std::string(n, 'a'));
    const auto b = attention::run(reloaded, std::string(n, 'a'));
    CHECK(a.output.same_bits(b.output));
    CHECK(b.accept == (n % 12 == 5));
  }
  const auto j = proofs::to_json(built, spec);
  CHECK(j["m"] == 12);
  CHECK(j["atom_residue"] == 6);
  CHECK(j["margins"].size() == 12);
}
