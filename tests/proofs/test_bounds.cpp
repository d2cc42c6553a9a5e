// proofs/literature/bounds: the base-of-RoPE context bound [Men et al. 2024] and the critical
// dimension [Liu et al. 2023]. Expected values are independent of the code under test: by hand, or
// from python3 + mpmath at 50 digits (tests/derivations/bounds_values.py prints every one of them).
#include <mpfr.h>

#include <catch2/catch.hpp>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"
#include "numeric/mpfr_util.hpp"
#include "proofs/literature/bounds.hpp"

using namespace ropesim;
using proofs::BaseVerdict;

namespace {

/// B_m(b) enclosed at 200 bits, as a double interval.
std::pair<double, double> enclose_B(const proofs::CosineSum& sum, std::int64_t m) {
  numeric::Mpfr lo(200), hi(200);
  sum.enclose(m, lo, hi);
  return {mpfr_get_d(lo, MPFR_RNDD), mpfr_get_d(hi, MPFR_RNDU)};
}

}  // namespace

TEST_CASE("the base grid has two significant digits", "[bounds]") {
  CHECK(proofs::base_grid_value(0) == 10);
  CHECK(proofs::base_grid_value(89) == 99);
  CHECK(proofs::base_grid_value(90) == 100);
  CHECK(proofs::base_grid_value(91) == 110);
  CHECK(proofs::base_grid_value(90 * 2 + 33) == 4300);  // 43·10^2
  CHECK(proofs::base_grid_index_at_least(mpq_class(4300)) == 90 * 2 + 33);
  CHECK(proofs::base_grid_index_at_least(mpq_class(4301)) == 90 * 2 + 34);  // 4400
  CHECK(proofs::base_grid_index_at_least(mpq_class(1, 2)) == 0);
  CHECK_THROWS_AS(proofs::base_grid_value(proofs::kMaxBaseGridIndex + 1), InvalidArgument);
}

TEST_CASE("B_m for D = 4 by hand and by mpmath", "[bounds]") {
  // D = 4, b = 100: θ_0 = 1, θ_1 = 100^(-1/2) = 1/10, B_m = cos m + cos(m/10).
  // mpmath (50 digits): B_1 = 1.5353064711461654835, B_2 = 0.56391974129409924413,
  // B_3 = -0.034656007474839437629, B_4 = 0.26741737313927316816.
  const auto sum = proofs::base_context_sum(mpq_class(100), 4);
  REQUIRE(sum.blocks.size() == 2);
  const std::pair<int, double> expected[] = {{0, 2.0},
                                             {1, 1.5353064711461654835},
                                             {2, 0.56391974129409924413},
                                             {3, -0.034656007474839437629},
                                             {4, 0.26741737313927316816}};
  for (const auto& [m, value] : expected) {
    const auto [lo, hi] = enclose_B(sum, m);
    INFO("m = " << m);
    CHECK(lo <= value + 1e-15);
    CHECK(hi >= value - 1e-15);
    CHECK(hi - lo < 1e-14);
  }
  // B_m ≥ 0 for m = 0, 1, 2 and B_3 < 0: b = 100 passes for L = 2, fails for L = 3 at m = 3.
  const auto two = proofs::check_base_exact(sum, 2);
  CHECK(two.verdict == BaseVerdict::passes);
  CHECK(two.evaluated == 3);
  const auto three = proofs::check_base_exact(sum, 3);
  CHECK(three.verdict == BaseVerdict::fails);
  REQUIRE(three.witness);
  CHECK(*three.witness == 3);
  // two threads: the same verdict and witness
  const auto threaded = proofs::check_base_exact(sum, 3, {}, 2);
  CHECK(threaded.verdict == BaseVerdict::fails);
  CHECK(*threaded.witness == 3);
}

TEST_CASE("the rigorous grid search on D = 8 matches an mpmath scan of the same grid", "[bounds]") {
  // python3 + mpmath, mp.dps = 50: for each L the first grid base (10, 11, …, 99, 100, 110, …)
  // with B_m ≥ 0 for all m ≤ L, and the first m rejecting the grid base below it:
  //   L = 20: 1200 (1100 fails at m = 16); L = 50: 3900 (3800 at m = 22);
  //   L = 100: 16000 (15000 at m = 97); and 1200 still passes for L = 21 (it fails at m = 22),
  //   so L = 21 keeps 1200 (the search for 21 must start at 20's answer, not after it).
  const auto rows = proofs::base_context_bounds(
      {20, 21, 50, 100},
      [](const mpz_class& b, std::uint64_t L, std::span<const std::uint64_t> hints) {
        return proofs::check_base_exact(proofs::base_context_sum(mpq_class(b), 8), L, hints);
      },
      0);
  REQUIRE(rows.size() == 4);
  const struct {
    std::uint64_t L;
    long base, below, witness;
  } expected[] = {
      {20, 1200, 1100, 16}, {21, 1200, 1100, 16}, {50, 3900, 3800, 22}, {100, 16000, 15000, 97}};
  for (std::size_t i = 0; i < 4; ++i) {
    INFO("L = " << expected[i].L);
    CHECK(rows[i].length == expected[i].L);
    REQUIRE(rows[i].base);
    CHECK(*rows[i].base == expected[i].base);
    REQUIRE(rows[i].rejected_base);
    CHECK(*rows[i].rejected_base == expected[i].below);
    REQUIRE(rows[i].rejected_witness);
    CHECK(*rows[i].rejected_witness == static_cast<std::uint64_t>(expected[i].witness));
    CHECK(rows[i].undecided.empty());
  }
}

TEST_CASE("B_m summed in bf16 and fp32 (r1) against an independent rounding", "[bounds]") {
  // D = 4, b = 300 under r1: ĉ_i = round_F(cos(m·θ_i)), s = round_F(ĉ_0 + ĉ_1). python3:
  // mpmath cosines rounded with fractions (8 bits for bf16, 24 for fp32, nearest-even):
  //   m = 10: exact B_10 = -0.0011597014 < 0, bf16 sum = 0 (-0.83984375 + 0.83984375),
  //           fp32 sum = -0.00115966796875;
  //   m = 3:  bf16 sum = -0.00390625.
  const auto s = attention::conventional_schedule(mpq_class(300), 4);
  const auto bf16 = attention::parse_realisation("r1", numeric::Format::bf16());
  const auto fp32 = attention::parse_realisation("r1", numeric::Format::fp32());
  CHECK(proofs::realised_context_sum(s, bf16, 10).to_double() == 0.0);
  CHECK(proofs::realised_context_sum(s, fp32, 10).to_double() == -0.00115966796875);
  CHECK(proofs::realised_context_sum(s, bf16, 3).to_double() == -0.00390625);
  // the exact sign at m = 10 is negative: finite precision moves B_10 to ≥ 0
  const auto exact = proofs::base_context_sum(mpq_class(300), 4);
  CHECK(exact.compare(10, mpq_class(0)) < 0);
}

TEST_CASE("finite precision moves the bound: D = 8 in bf16 and fp16 (r1)", "[bounds]") {
  // python3 (mpmath cosines rounded with fractions, summed in block order in F):
  //   bf16: L = 10 → 200 (190 at m = 10), L = 20 → 1200, L = 50 → 3800 (3700 at m = 22);
  //   fp16: L = 50 → 3900, as in exact arithmetic (above).
  auto search = [](const numeric::Format& f) {
    const auto r = attention::parse_realisation("r1", f);
    return proofs::base_context_bounds(
        {10, 20, 50},
        [&](const mpz_class& b, std::uint64_t L, std::span<const std::uint64_t> hints) {
          return proofs::check_base_realised(attention::conventional_schedule(mpq_class(b), 8), r,
                                             L, hints);
        },
        0);
  };
  const auto bf16 = search(numeric::Format::bf16());
  REQUIRE(bf16.size() == 3);
  CHECK(*bf16[0].base == 200);
  CHECK(*bf16[0].rejected_base == 190);
  CHECK(*bf16[0].rejected_witness == 10);
  CHECK(*bf16[1].base == 1200);
  CHECK(*bf16[2].base == 3800);
  CHECK(*bf16[2].rejected_base == 3700);
  CHECK(*bf16[2].rejected_witness == 22);
  const auto fp16 = search(numeric::Format::fp16());
  CHECK(*fp16[2].base == 3900);
}

TEST_CASE("critical dimension of LLaMA2 by hand: d_extra = 92", "[bounds]") {
  // b = 10^4, d = 128, T = 4096: x = 64·ln(4096/2π)/ln(10^4) = 64·6.47997/9.21034 = 45.0269,
  // ⌈x⌉ = 46, d_extra = 92 (Liu et al. 2023 report 92 for LLaMA2);
  // T_extra = 2π·10^(4·92/128) = 2π·10^2.875 = 4711.72 (mpmath: 4711.72427802).
  const auto c = proofs::critical_dimension(mpq_class(10000), 128, 4096);
  CHECK(c.d_extra == 92);
  REQUIRE(c.block);
  CHECK(*c.block == 46);
  CHECK(c.ratio == Approx(45.0268812738).epsilon(1e-9));
  CHECK(c.t_extra.to_double() == Approx(4711.72427802).epsilon(1e-10));
  // mpmath: (10^4, 128, 32768) → x = 59.4763210656, d_extra 120, T_extra 35332.9475206;
  //         (5·10^5, 128, 8192) → x = 34.9841190015, d_extra 70;
  //         (10^4, 24, 2048) → x = 7.53945025184, d_extra 16.
  CHECK(proofs::critical_dimension(mpq_class(10000), 128, 32768).d_extra == 120);
  CHECK(proofs::critical_dimension(mpq_class(10000), 128, 32768).t_extra.to_double() ==
        Approx(35332.9475206).epsilon(1e-10));
  CHECK(proofs::critical_dimension(mpq_class(500000), 128, 8192).d_extra == 70);
  CHECK(proofs::critical_dimension(mpq_class(10000), 24, 2048).d_extra == 16);
  // every block completes a period within T_train: no critical block (b = 2, d = 4:
  // x = 2·ln(4096/2π)/ln 2 = 18.7 → d_extra = 38 ≥ d)
  const auto none = proofs::critical_dimension(mpq_class(2), 4, 4096);
  CHECK(none.d_extra == 38);
  CHECK(!none.block);
  CHECK_THROWS_AS(proofs::critical_dimension(mpq_class(1), 128, 4096), InvalidArgument);
  CHECK_THROWS_AS(proofs::critical_dimension(mpq_class(10000), 127, 4096), InvalidArgument);
  CHECK_THROWS_AS(proofs::critical_dimension(mpq_class(10000), 128, 6), InvalidArgument);
}

TEST_CASE("restrict_to_block keeps one block of a preset", "[bounds]") {
  const auto s = attention::preset_schedule("llama2-7b");
  const auto one = proofs::restrict_to_block(s, 46);
  REQUIRE(one.blocks.size() == 1);
  CHECK(one.blocks[0].frequency_index == 46);
  CHECK(one.blocks[0].theta.to_string() == "10000^(-23/32)");  // θ_46 = 10^4^(-92/128)
  CHECK(one.unrotated_pairs == 0);
  CHECK_THROWS_AS(proofs::restrict_to_block(s, 64), InvalidArgument);
}

TEST_CASE("semantic drift of the lowest channel, exact and in bf16", "[bounds]") {
  // conventional:base=100,dim=8: 4 blocks, channels = the last ⌈4/4⌉ = 1 block, θ_3 =
  // 100^(-3/4) = 0.0316228. Tolerance 0.012: drift when cos(m·θ_3) < 0.988. mpmath (50 digits):
  //   cos(4θ) = 0.992010660979, cos(5θ) = 0.987526019975 < 0.988  → exact drift at m = 5;
  //   r1 in bf16 (ulp 2^-8 on [1/2, 1)): round(cos 5θ) = 253/256 = 0.98828125 ≥ 0.988,
  //   round(cos 6θ) = 251/256 = 0.98046875 < 0.988  → bf16 drift at m = 6.
  const auto s = attention::conventional_schedule(mpq_class(100), 8);
  const auto channels = proofs::semantic_channels(s);
  REQUIRE(channels == std::vector<std::size_t>{3});
  const mpq_class tolerance(12, 1000);
  const auto exact = proofs::semantic_drift_exact(s, channels, tolerance, 100);
  REQUIRE(exact.length);
  CHECK(*exact.length == 5);
  const auto bf16 = proofs::semantic_drift_realised(
      s, channels, attention::parse_realisation("r1", numeric::Format::bf16()), tolerance, 100);
  REQUIRE(bf16.length);
  CHECK(*bf16.length == 6);
  CHECK(!bf16.nan);
  // p-RoPE p = 0.75 sets that block to θ = 0: cos 0 = 1, no drift at any length
  const auto prope = attention::prope_schedule(mpq_class(100), 8, mpq_class(3, 4));
  CHECK(!proofs::semantic_drift_exact(prope, channels, tolerance, 1000).length);
  // 128 blocks: the last 32 are the channels
  CHECK(
      proofs::semantic_channels(attention::conventional_schedule(mpq_class(10000), 256)).front() ==
      96);
  CHECK_THROWS_AS(proofs::semantic_drift_exact(s, channels, mpq_class(1), 10), InvalidArgument);
}

TEST_CASE("the paper's Table 1 values, K read as 1024 or 1000", "[bounds]") {
  // Men et al. 2024, Table 1: 1K 4.3e3, 4K 2.7e4, 1M 5.1e8 (the paper's row as printed by
  // J. Su,
  // kexue.fm/archives/10122: 4.3e3 1.6e4 2.7e4 8.4e4 3.1e5 6.4e5 2.1e6 7.8e6 3.6e7 6.4e7 5.1e8)
  CHECK(proofs::paper_base_bound(1024) == std::optional<std::string>("4.3e3"));
  CHECK(proofs::paper_base_bound(1000) == std::optional<std::string>("4.3e3"));
  CHECK(proofs::paper_base_bound(4000) == std::optional<std::string>("2.7e4"));
  CHECK(proofs::paper_base_bound(1048576) == std::optional<std::string>("5.1e8"));
  CHECK(proofs::paper_base_bound(1000000) == std::optional<std::string>("5.1e8"));
  CHECK(!proofs::paper_base_bound(1024000));
  CHECK(!proofs::paper_base_bound(3000));
  // All eleven, against Su's printed copy of the row (L = 1024·2^k):
  const char* const row[] = {"4.3e3", "1.6e4", "2.7e4", "8.4e4", "3.1e5", "6.4e5",
                             "2.1e6", "7.8e6", "3.6e7", "6.4e7", "5.1e8"};
  for (int k = 0; k < 11; ++k) {
    INFO("L = 1024 * 2^" << k);
    CHECK(proofs::paper_base_bound(std::uint64_t{1024} << k) == std::optional<std::string>(row[k]));
  }
}

TEST_CASE("T_train of the presets", "[bounds]") {
  // data/models.json: llama2-7b max_position_embeddings 4096; llama3.1-8b has llama3 scaling
  // with original_max_position_embeddings 8192 (max_position_embeddings 131072).
  for (const auto& p : attention::model_presets()) {
    const auto t = proofs::training_length(p);
    if (p.name == "llama2-7b") {
      CHECK(t.length == 4096);
      CHECK(t.source == "max_position_embeddings");
    }
    if (p.name == "llama3.1-8b") {
      CHECK(t.length == 8192);
      CHECK(t.source == "original_max_position_embeddings");
    }
  }
}

TEST_CASE("the paper's bases read exactly and checked at D = 128 without the CLI", "[bounds]") {
  // Independent check (numpy float64, the margin confirmed with mpmath at 40 digits): with
  // B_m = sum_{i<64} cos(m * b^(-2i/128)), b = 4300 keeps B_m >= 0 for m = 0..1024 (min 0.249);
  // b = 27000 first has B_m < 0 at m = 4079 (B_4079 = -0.0920873548), L = 4096.
  const auto k1 = proofs::check_paper_base(1024, 128, 2);
  REQUIRE(k1);
  CHECK(k1->printed == "4.3e3");
  CHECK(k1->value == mpq_class(4300));
  CHECK(k1->check.verdict == BaseVerdict::passes);
  const auto k4 = proofs::check_paper_base(4096, proofs::kPaperBaseDim);
  REQUIRE(k4);
  CHECK(k4->value == mpq_class(27000));
  CHECK(k4->check.verdict == BaseVerdict::fails);
  REQUIRE(k4->check.witness);
  CHECK(*k4->check.witness == 4079);
  // the paper printed D = 128 only, and no entry for 3000
  CHECK(!proofs::check_paper_base(1024, 64));
  CHECK(!proofs::check_paper_base(3000, 128));
}

TEST_CASE("semantic-drift rows: the model and p-RoPE at each p, without the CLI", "[bounds]") {
  // conventional:base=100,dim=8 (blocks θ_i = 100^(-i/4)); its channel is block 3 (the
  // hand derivation above: exact drift at m = 5, bf16 r1 at m = 6 for tolerance 0.012);
  // p = 3/4 sets block 3 to θ = 0: no drift; p = 1 keeps the schedule.
  const auto s = attention::conventional_schedule(mpq_class(100), 8);
  const auto ps = proofs::parse_prope_fractions({"0.75", "1"});
  REQUIRE(ps.size() == 2);
  CHECK(ps[0].value == mpq_class(3, 4));
  const std::vector<attention::Realisation> rs{
      attention::parse_realisation("r1", numeric::Format::bf16())};
  const auto rows =
      proofs::semantic_drift_rows(s, mpq_class(100), ps, rs, mpq_class(12, 1000), 100);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].label == "none");
  CHECK(rows[0].channels == std::vector<std::size_t>{3});
  REQUIRE(rows[0].exact.length);
  CHECK(*rows[0].exact.length == 5);
  REQUIRE(rows[0].realised.size() == 1);
  REQUIRE(rows[0].realised[0].length);
  CHECK(*rows[0].realised[0].length == 6);
  CHECK(rows[1].label == "0.75");
  CHECK(!rows[1].exact.length);
  CHECK(!rows[1].realised[0].length);
  REQUIRE(rows[2].exact.length);
  CHECK(*rows[2].exact.length == 5);
  CHECK_THROWS_WITH(proofs::parse_prope_fractions({"2"}),
                    Catch::Contains("p-RoPE's p must lie in [0, 1] (got 2)"));
  CHECK_THROWS_AS(proofs::parse_prope_fractions({"x"}), InvalidArgument);
  CHECK_THROWS_AS(proofs::semantic_drift_rows(s, mpq_class(100), ps, rs, mpq_class(1), 10),
                  InvalidArgument);
}
