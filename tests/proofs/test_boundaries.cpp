// Boundaries of the certified range (THEORY §1, §6; RoPE-X eq. 10) and of Cor 4.1:
//  * a lead of exactly f_large certifies, one element of F less does not, in seven formats and
//    under nearest-even and toward-zero (f_large depends on the mode);
//  * the query bias under every rounding mode (hand-derived);
//  * N_max asserted for fp32 (single frequency) and for multi-frequency heads, each against a
//    second implementation (tests/proofs/mini_emulator.hpp, extended here to two blocks);
//  * a cheap slice of the hidden "[.full]" L-simulation: one random word of length N_max for
//    fp32 and fp64.
#include <array>
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "mini_emulator.hpp"
#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/common/exact_trig.hpp"
#include "proofs/experiments/offset_simulation.hpp"
#include "proofs/range/fixed_offset_head.hpp"
#include "proofs/range/records.hpp"

using namespace ropesim;
using numeric::Format;
using numeric::Rounding;

namespace {

proofs::FixedOffsetSpec spec_of(const std::string& schedule, const mpq_class& C, std::uint64_t k,
                                const Format& f, Rounding rounding = Rounding::nearest_even) {
  proofs::FixedOffsetSpec s;
  s.schedule = attention::parse_schedule(schedule);
  s.C = C;
  s.k = k;
  s.policy.format = f;
  s.policy.rounding = rounding;
  return s;
}

/// An exact rational a/b in canonical form (gmpxx does not canonicalise mpq_class(a, b)).
mpq_class q(long a, long b) {
  mpq_class x(a, b);
  x.canonicalize();
  return x;
}

proofs::ScanOptions up_to(std::uint64_t L) {
  proofs::ScanOptions o;
  o.max_length = L;
  return o;
}

/// A two-block (or more) head on the mini emulator: rational frequencies g_d, equal weights
/// 1/B, so the query bias of block d is round(C/B·cos(k g_d)), round(-C/B·sin(k g_d)), and
/// the score is the sequential dot product over the coordinates (q0_0, q1_0, q0_1, q1_1, …)
/// with (c_0, s_0, c_1, s_1, …) (THEORY §2.1, §6). Returns the certified range as
/// mini_certified_range does (RNE only).
test::MiniRange mini_multi_range(test::MiniFormat fmt, const std::vector<mpq_class>& g,
                                 const mpq_class& C, std::uint64_t k, const mpq_class& f_large,
                                 std::uint64_t max_length) {
  const test::Mini m(fmt);
  const std::size_t B = g.size();
  const mpq_class Cw = C / static_cast<long>(B);  // C is a power of two here: exact in F
  std::vector<double> b0(B), b1(B);
  for (std::size_t d = 0; d < B; ++d) {
    b0[d] = m.trig(g[d], static_cast<long>(k), false, Cw);
    b1[d] = m.trig(g[d], static_cast<long>(k), true, -Cw);
  }
  const std::uint64_t P = max_length + 2;
  std::vector<std::vector<double>> key(P), query(P);
  for (std::uint64_t p = 0; p < P; ++p) {
    for (std::size_t d = 0; d < B; ++d) {
      const double c = m.trig(g[d], static_cast<long>(p), false, 1);
      const double s = m.trig(g[d], static_cast<long>(p), true, 1);
      key[p].push_back(c);
      key[p].push_back(s);
      query[p].push_back(m.sub(m.mul(c, b0[d]), m.mul(s, b1[d])));
      query[p].push_back(m.add(m.mul(s, b0[d]), m.mul(c, b1[d])));
    }
  }
  auto score = [&](std::uint64_t i, std::uint64_t j) {
    double acc = m.mul(query[i][0], key[j][0]);
    for (std::size_t c = 1; c < 2 * B; ++c) acc = m.add(acc, m.mul(query[i][c], key[j][c]));
    return acc;
  };
  test::MiniRange out;
  for (std::uint64_t i = k + 1; i <= max_length + 1; ++i) {
    const double t = score(i, i - k);
    double best = -HUGE_VAL;
    std::uint64_t arg = 0;
    for (std::uint64_t j = 0; j < i; ++j) {
      if (j == i - k) continue;
      const double s = score(i, j);
      if (s > best) {
        best = s;
        arg = j;
      }
    }
    if (!(std::isfinite(t) && std::isfinite(best) && mpq_class(t) - mpq_class(best) >= f_large)) {
      out.n_max = i - 2;
      out.fail_query = i;
      out.fail_competitor = arg;
      out.gap = mpq_class(t) - mpq_class(best);
      return out;
    }
  }
  out.n_max = max_length;
  out.at_limit = true;
  return out;
}

}  // namespace

TEST_CASE("a lead of exactly f_large certifies, one element less does not (7 formats, RNE/RZ)",
          "[proofs][head][boundary][rounding]") {
  // periodic:m=4 realises Rot(iπ/2) exactly in every format and mode, so with k = 1 the scores
  // are exactly C·cos(π/2·(i-1-j)) ∈ C·{1, 0, -1, 0}. At i = 2 the only competitor is j = 0
  // (offset 1, score 0): the gap is exactly C. Queries 3 and 4 have gaps C and C; at i = 5
  // offset 4 (j = 0) ties the target. So C = f_large gives N_max = 3 with smallest passing gap
  // f_large; C = the predecessor of f_large in F gives N_max = 0 (fails at i = 2, gap = C).
  // f_large (tests/derivations/directed_values.py, THEORY §1): nearest: the smallest element
  // above (m+1)·ln2, toward-zero: above m·ln2, with 2^-m the smallest subnormal:
  //   fp16 m = 24: 25 ln2 = 17.32868 → 17.34375 (q = 2^-6; predecessor 17.328125);
  //                24 ln2 = 16.63553 → 16.640625 (predecessor 16.625)
  //   bf16 m = 133: 134 ln2 = 92.88172 → 93 (q = 1/2; 92.5); 133 ln2 = 92.18858 → 92.5 (92)
  //   tf32 m = 136: 137 ln2 = 94.96116 → 95 (q = 1/16; 94.9375); 136 ln2 = 94.26802 → 94.3125
  //   (94.25) fp32 m = 149: 150 ln2 = 103.9720771 → 13627829·2^-17 = 103.97208404541015625
  //                 (predecessor 13627828·2^-17); 149 ln2 = 103.2789299 → 13536976·2^-17
  //   fp64 m = 1074: 1075 ln2 → 6554261109157970·2^-43; 1074 ln2 → 6548164122079684·2^-43
  //   fp8e5m2 m = 16: 17 ln2 = 11.78 and 16 ln2 = 11.09 → 12 in both (q = 2; predecessor 10)
  //   fp8e4m3 m = 9: 10 ln2 = 6.93 → 7 (q = 1/2; 6.5); 9 ln2 = 6.24 → 6.5 (6)
  struct Case {
    Format f;
    Rounding r;
    mpq_class f_large, predecessor;
  };
  const mpq_class two17(131072), two43(mpz_class(1) << 43);
  const std::vector<Case> cases{
      {Format::fp16(), Rounding::nearest_even, q(1110, 64), q(1109, 64)},
      {Format::fp16(), Rounding::toward_zero, q(1065, 64), q(1064, 64)},
      {Format::bf16(), Rounding::nearest_even, mpq_class(93), q(185, 2)},
      {Format::bf16(), Rounding::toward_zero, q(185, 2), mpq_class(92)},
      {Format::tf32(), Rounding::nearest_even, mpq_class(95), q(1519, 16)},
      {Format::tf32(), Rounding::toward_zero, q(1509, 16), q(1508, 16)},
      {Format::fp32(), Rounding::nearest_even, mpq_class(13627829) / two17,
       mpq_class(13627828) / two17},
      {Format::fp32(), Rounding::toward_zero, mpq_class(13536976) / two17,
       mpq_class(13536975) / two17},
      {Format::fp64(), Rounding::nearest_even, mpq_class(mpz_class("6554261109157970")) / two43,
       mpq_class(mpz_class("6554261109157969")) / two43},
      {Format::fp64(), Rounding::toward_zero, mpq_class(mpz_class("6548164122079684")) / two43,
       mpq_class(mpz_class("6548164122079683")) / two43},
      {Format::fp8e5m2(), Rounding::nearest_even, mpq_class(12), mpq_class(10)},
      {Format::fp8e5m2(), Rounding::toward_zero, mpq_class(12), mpq_class(10)},
      {Format::fp8e4m3(), Rounding::nearest_even, mpq_class(7), q(13, 2)},
      {Format::fp8e4m3(), Rounding::toward_zero, q(13, 2), mpq_class(6)},
  };
  for (const auto& c : cases) {
    INFO(c.f.name << " " << numeric::to_string(c.r));
    const auto at = proofs::make_fixed_offset_head(spec_of("periodic:m=4", c.f_large, 1, c.f, c.r));
    CHECK(at.f_large_exact == c.f_large);
    const auto pass = proofs::certified_range(at, up_to(50));
    CHECK(pass.n_max == 3);
    CHECK(pass.fail_query == 5u);
    REQUIRE(pass.smallest_passing_gap.has_value());
    CHECK(*pass.smallest_passing_gap == c.f_large);
    const auto below =
        proofs::make_fixed_offset_head(spec_of("periodic:m=4", c.predecessor, 1, c.f, c.r));
    const auto fail = proofs::certified_range(below, up_to(50));
    CHECK(fail.n_max == 0);
    CHECK(fail.fail_query == 2u);
    CHECK(fail.fail_competitor == 0u);
    REQUIRE(fail.gap.has_value());
    CHECK(*fail.gap == c.predecessor);
  }
}

TEST_CASE("query bias of the Y^3 head (C = 1000, g = 1, fp16) under every rounding mode",
          "[proofs][head][rounding]") {
  // 1000·cos 3 = -989.99249660044545727, in -[512, 1024): q = 1/2, |x|/q = 1979.98499 →
  //   magnitude 1979·q = 989.5 or 1980·q = 990: nearest and downward -990, toward-zero and
  //   upward -989.5.
  // -1000·sin 3 = -141.12000805986722210, in -[128, 256): q = 1/8, |x|/q = 1128.96006 →
  //   nearest and downward -141.125, toward-zero and upward -141.
  const std::array<Rounding, 5> modes = {Rounding::nearest_even, Rounding::nearest_away,
                                         Rounding::toward_zero, Rounding::upward,
                                         Rounding::downward};
  const std::array<double, 5> b0 = {-990, -990, -989.5, -989.5, -990};
  const std::array<double, 5> b1 = {-141.125, -141.125, -141, -141, -141.125};
  const auto& engine = numeric::default_engine();
  const proofs::BlockAngle one(attention::single_schedule(1).blocks[0]);
  for (std::size_t m = 0; m < modes.size(); ++m) {
    INFO(numeric::to_string(modes[m]));
    CHECK(proofs::round_scaled_trig(Format::fp16(), modes[m], one, 3, false, 1000, engine)
              .to_double() == b0[m]);
    CHECK(proofs::round_scaled_trig(Format::fp16(), modes[m], one, 3, true, -1000, engine)
              .to_double() == b1[m]);
    // the head itself (upward is refused: no f_large, THEORY §1)
    if (modes[m] == Rounding::upward) {
      CHECK_THROWS_AS(
          proofs::make_fixed_offset_head(spec_of("single:g=1", 1000, 3, Format::fp16(), modes[m])),
          InvalidArgument);
      continue;
    }
    const auto h =
        proofs::make_fixed_offset_head(spec_of("single:g=1", 1000, 3, Format::fp16(), modes[m]));
    CHECK(h.head.query_bias[0].to_double() == b0[m]);
    CHECK(h.head.query_bias[1].to_double() == b1[m]);
    CHECK(h.realisation.rounding == modes[m]);
  }
}

TEST_CASE("N_max of fp32 at g = 1 equals the second implementation: 709 (k = 1), 710 (k = 2)",
          "[proofs][head][boundary]") {
  // C = 2839326 (what `horizon --C auto` picks for fp32: f_large/δ_333·(1 + 1/16) rounded up).
  // THEORY §6: round_F(cos n) = 1 first at n = 710 for fp32, and 710 is a record distance
  // (710 - 113·2π = 6.03e-5): at i = 710 + k the competitor j = 0 (offset 710) ties the
  // target (gap 0 in the scan below), so N_max = 710 + k - 2 at most. The mini emulator
  // (MPFR at 4096 bits, its own rounding) confirms every earlier query passes.
  const mpq_class C(2839326);
  const mpq_class fl = mpq_class(13627829) / 131072;  // f_large(fp32), see the tie test above
  for (std::uint64_t k : {1u, 2u}) {
    INFO("k = " << k);
    const auto lib = proofs::certified_range(1, C, k, Format::fp32(), "r1", up_to(800));
    const auto mini = test::mini_certified_range(test::mini_fp32(), 1, C, k, fl, 800);
    CHECK(lib.n_max == mini.n_max);
    CHECK(lib.fail_query == mini.fail_query);
    CHECK(lib.fail_competitor == mini.fail_competitor);
    REQUIRE(lib.gap.has_value());
    CHECK(*lib.gap == mini.gap);
    CHECK(lib.n_max == 708 + k);
    CHECK(lib.fail_offset == 710);
  }
}

TEST_CASE("N_max of a multi-frequency head equals a second implementation (θ = 1, 1/10)",
          "[proofs][head][boundary]") {
  // conventional:base=100,dim=4 has θ_0 = 1 and θ_1 = 100^(-1/2) = 1/10: two rational
  // frequencies, equal weights 1/2. Ideal score C·(cos n + cos(n/10))/2; it comes back near C
  // at n = 63 (63 - 20π = 0.168, 6.3 - 2π = 0.017), which is where the scan stops.
  struct Case {
    Format f;
    test::MiniFormat m;
    mpq_class C, f_large;
    std::uint64_t expected;  // the value both implementations give (recorded from the mini)
  };
  const std::vector<Case> cases{
      {Format::fp16(), test::mini_fp16(), 1024, q(1110, 64), 62},
      {Format::fp32(), test::mini_fp32(), 65536, mpq_class(13627829) / 131072, 376},
      {Format::bf16(), test::mini_bf16(), 4096, 93, 62},
  };
  for (const auto& c : cases) {
    INFO(c.f.name);
    const auto h =
        proofs::make_fixed_offset_head(spec_of("conventional:base=100,dim=4", c.C, 1, c.f));
    REQUIRE(h.ideal.blocks.size() == 2);
    const auto lib = proofs::certified_range(h, up_to(500));
    const auto mini = mini_multi_range(c.m, {mpq_class(1), q(1, 10)}, c.C, 1, c.f_large, 500);
    CHECK(lib.n_max == mini.n_max);
    CHECK(lib.at_limit == mini.at_limit);
    CHECK(lib.fail_query == mini.fail_query);
    CHECK(lib.fail_competitor == mini.fail_competitor);
    if (lib.gap) CHECK(*lib.gap == mini.gap);
    CHECK(lib.n_max == c.expected);
  }
}

TEST_CASE("L-simulation slice: one random word of length N_max for fp32 and fp64 (Cor 4.1)",
          "[proofs][simulation][boundary]") {
  // The hidden "[.full]" test runs every preset with exhaustive words ≤ 16 and random words
  // ≤ 2000; CI runs this slice. fp32: C = 2839326, N_max = 709 (test above, second
  // implementation). fp64: C = 2^39: every offset n ≤ 2000 has 1 - cos n ≥ 1 - cos 710 =
  // 1.817e-9 (710 is the last record distance below 103993, THEORY §6), so the exact lead is
  // ≥ 2^39·1.817e-9 = 999 > f_large(fp64) = 745.13, and fp64 rounding moves a score of size
  // 2^39 by about 2^-13 per operation: N_max ≥ 2000, the scan limit.
  struct Case {
    Format f;
    mpq_class C;
    std::uint64_t L;
    bool at_limit;
  };
  for (const auto& c :
       std::vector<Case>{{Format::fp32(), 2839326, 709, false},
                         {Format::fp64(), mpq_class(mpz_class(1) << 39), 2000, true}}) {
    INFO(c.f.name);
    const auto spec = spec_of("single:g=1", c.C, 1, c.f);
    const auto range = proofs::certified_range(proofs::make_fixed_offset_head(spec), up_to(2000));
    CHECK(range.n_max == c.L);
    CHECK(range.at_limit == c.at_limit);
    proofs::SimulationOptions o;
    o.exhaustive_length = 3;  // 15 words: every short word, incl. the empty word
    o.random_words = 1;       // the longest first: one word of length exactly L
    o.random_max_length = c.L;
    o.seed = 10;
    const auto sim = proofs::check_offset_simulation(spec, c.L, o);
    if (sim.first) {
      FAIL("disagreement on a word of length "
           << sim.first->word.size() << " at position " << sim.first->position << ": expected "
           << sim.first->expected << ", got " << sim.first->got);
    }
    CHECK(sim.words == 15 + 1);
    // positions compared: N + 2 per word (BOS..EOS): Σ_{n ≤ 3} 2^n (n + 2) = 2 + 6 + 16 + 40
    // = 64 for the short words, L + 2 for the long one
    CHECK(sim.positions == 64 + c.L + 2);
  }
}
