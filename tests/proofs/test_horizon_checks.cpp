// The science decisions `ropesim horizon` and `ropesim construct` used to make themselves:
// f_large defined or not, and the quick limit on L (proofs/range/horizon.hpp,
// proofs/compiler/mod_atom.hpp). Expected values and messages derived by hand below.
#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "numeric/format.hpp"
#include "proofs/compiler/mod_atom.hpp"
#include "proofs/range/horizon.hpp"

using namespace ropesim;
using numeric::Format;
using numeric::Rounding;

namespace {

proofs::FixedOffsetHead head_g1_k1(const Format& f) {
  proofs::FixedOffsetSpec spec;  // single:g=1, k = 1, C = 1, r1
  spec.policy.format = f;
  return proofs::make_fixed_offset_head(spec);
}

}  // namespace

TEST_CASE("require_f_large: the value, or which input makes it undefined", "[horizon][f_large]") {
  // fp16 (THEORY §1): round(exp(-f)) = 0 needs exp(-f) ≤ 2^-25 (half the least subnormal 2^-24,
  // the tie going to the even 0), i.e. f ≥ 25·ln 2 = 17.3286795…; fp16's spacing on [16, 32) is
  // 2^-6, and 17.328125 = 1109/64 < 17.32868 ≤ 17.34375 = 1110/64: f_large = 17.34375.
  REQUIRE(
      proofs::require_f_large(Format::fp16(), Rounding::nearest_even, "nearest-even").to_double() ==
      17.34375);
  try {
    proofs::require_f_large(Format::fp32(), Rounding::upward, "ru");
    FAIL("upward rounding has no f_large");
  } catch (const proofs::FLargeUndefined& e) {
    REQUIRE(e.cause() == proofs::FLargeCause::rounding);
    REQUIRE(
        std::string(e.what()) ==
        "f_large(fp32) is undefined under rounding ru (exp(-f) never rounds up to 0; THEORY §1); "
        "use nearest-even, nearest-away, toward-zero or downward");
  }
  // p=2,emin=-1,emax=0: max 1.5, least positive 2^-2 = 0.25; exp(-1.5) = 0.2231 > 0.125 (half
  // of 0.25) rounds to 0.25, never 0
  const Format tiny = numeric::parse_format("p=2,emin=-1,emax=0");
  try {
    proofs::require_f_large(tiny, Rounding::nearest_even, "nearest-even");
    FAIL("the tiny format has no f_large");
  } catch (const proofs::FLargeUndefined& e) {
    REQUIRE(e.cause() == proofs::FLargeCause::format);
    REQUIRE(std::string(e.what()) ==
            "f_large(p=2,emin=-1,emax=0) is undefined: exp(-max) does not round to 0 in "
            "p=2,emin=-1,emax=0 (its range is too small for stable softmax to select exactly; "
            "THEORY §1); use a format with a wider range, e.g. fp16, bf16, fp32");
  }
}

TEST_CASE("horizon_max_length: default, quick limit and --allow-slow", "[horizon][max_length]") {
  const auto head = head_g1_k1(Format::fp16());
  const auto candidates = proofs::RangeAlgorithm::candidates;
  REQUIRE(proofs::resolve_range_algorithm(proofs::RangeAlgorithm::automatic, head) == candidates);
  // candidate algorithm: quick limit 10^7 (kFastRangeDefaultLength)
  REQUIRE(proofs::horizon_max_length(candidates, head, std::nullopt, false) == 10000000);
  REQUIRE(proofs::horizon_max_length(candidates, head, 10000000, false) == 10000000);
  REQUIRE(proofs::horizon_max_length(candidates, head, 123, false) == 123);
  REQUIRE(proofs::horizon_max_length(candidates, head, 100000000, true) == 100000000);
  // L = 10^8 beyond the quick limit: C = 1 fails at the probe's first queries, so the estimate
  // is within the budget and the run is accepted without --allow-slow
  REQUIRE(proofs::horizon_max_length(candidates, head, 100000000, false, 2) == 100000000);
  // fp64, C = the record C of N_max = 2292815: no early failure; L = 4·10^9 positions is
  // estimated beyond the 10 min budget and refused with the estimate (measured now, so only
  // its form is checked)
  {
    proofs::FixedOffsetSpec spec;
    spec.policy.format = Format::fp64();
    spec.C = mpq_class("5320402020321196/10");
    const auto far = proofs::make_fixed_offset_head(spec);
    REQUIRE_THROWS_WITH(
        proofs::horizon_max_length(candidates, far, 4000000000, false, 2),
        Catch::Matchers::StartsWith(
            "L = 4000000000 is beyond the candidate algorithm's quick limit 10000000 and its "
            "estimate exceeds the budget of 10 min (estimate: up to ") &&
            Catch::Matchers::EndsWith(" GB on 2 threads); pass --allow-slow to run it anyway"));
  }
  REQUIRE_THROWS_WITH(proofs::horizon_max_length(candidates, head, 0, false),
                      "L must be at least 1");
  // the scan on one pair with the binary64 kernel: 2·10^4 (docs/CLI.md); L = 10^6:
  // (10^6 + 2)²/2 = 5.00002·10^11 → "5e+11"
  const auto scan = proofs::RangeAlgorithm::scan;
  REQUIRE(proofs::horizon_max_length(scan, head, std::nullopt, false) == 20000);
  REQUIRE_THROWS_WITH(proofs::horizon_max_length(scan, head, 1000000, false),
                      "L = 1000000 is beyond what the quadratic scan does in the time a user would "
                      "wait for this head (limit 20000, up to N^2/2 = 5e+11 scores); pass "
                      "--allow-slow to run it anyway");
}

TEST_CASE("require_mod_f_large: m >= 2 needs f_large, m = 1 does not", "[mod_atom][f_large]") {
  proofs::ModModelSpec spec;
  spec.atom.m = 5;
  spec.atom.policy.format = Format::fp16();
  spec.atom.policy.rounding = Rounding::nearest_even;
  REQUIRE_NOTHROW(proofs::require_mod_f_large(spec, "nearest-even"));
  spec.atom.policy.rounding = Rounding::upward;
  REQUIRE_THROWS_WITH(proofs::require_mod_f_large(spec, "upward"),
                      "f_large(fp16) is undefined under rounding upward (exp(-f) never rounds "
                      "up to 0; THEORY §1); use nearest-even, nearest-away, toward-zero or "
                      "downward");
  spec.atom.m = 1;  // ⊤: no head, no f_large needed
  REQUIRE_NOTHROW(proofs::require_mod_f_large(spec, "upward"));
}
