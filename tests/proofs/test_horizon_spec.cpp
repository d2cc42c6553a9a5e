// proofs::horizon_spec: the option texts of one Y^k head turned into a validated HorizonSpec.
// The refusals are the lines `ropesim horizon` printed for the same options before the
// validation moved out of the CLI (the binary of main at 53fd969, e.g. `ropesim horizon
// --format fp16 --C 0 --quiet`); the accepted values are read off the options by hand.
#include <catch2/catch.hpp>
#include <string>

#include "core/error.hpp"
#include "proofs/range/horizon.hpp"
#include "proofs/range/horizon_spec.hpp"

using ropesim::InvalidArgument;
using ropesim::proofs::horizon_spec;
using ropesim::proofs::HorizonArguments;
using ropesim::proofs::RangeAlgorithm;

namespace {

std::string refusal(const HorizonArguments& a) {
  try {
    (void)horizon_spec(a);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(accepted)";
}

HorizonArguments fp16() {
  HorizonArguments a;
  a.format = "fp16";
  return a;
}

}  // namespace

TEST_CASE("horizon_spec reads the head and the policy from the option texts", "[horizon_spec]") {
  HorizonArguments a = fp16();
  a.g = "0.5";
  a.k = "3";
  a.C = "8";
  a.rounding = "toward-zero";
  a.algorithm = "scan";
  a.max_length = 100;
  const auto spec = horizon_spec(a);
  CHECK(spec.head.k == 3);
  CHECK(spec.head.C == 8);
  CHECK_FALSE(spec.auto_C);
  CHECK(spec.head.policy.format.name == "fp16");
  CHECK(spec.head.policy.rounding == ropesim::numeric::Rounding::toward_zero);
  CHECK(spec.algorithm == RangeAlgorithm::scan);
  CHECK(spec.max_length == 100);
  REQUIRE(spec.head.schedule.blocks.size() == 1);  // single:g=0.5, one rotary block
  CHECK(spec.head.realisation == "r1");

  const auto automatic = horizon_spec(fp16());
  CHECK(automatic.auto_C);  // --C auto is the default
  CHECK(automatic.head.k == 1);
  CHECK(automatic.algorithm == RangeAlgorithm::automatic);
}

TEST_CASE("horizon_spec refuses with one line naming the option", "[horizon_spec]") {
  HorizonArguments a = fp16();
  a.C = "0";
  CHECK(refusal(a) == "--C: C must be positive (or 'auto'), got 0");
  a = fp16();
  a.k = "0";
  CHECK(refusal(a) ==
        "--k: '0' is out of range; accepted: an integer in 1..1000000 (decimal digits only)");
  a = fp16();
  a.rounding = "upward";
  CHECK(refusal(a) ==
        "--rounding: f_large(fp16) is undefined under rounding upward (exp(-f) never rounds up "
        "to 0; THEORY §1); use nearest-even, nearest-away, toward-zero or downward");
  a = HorizonArguments{};
  a.g = "-1";
  CHECK(refusal(a) == "--g: the frequency g must be positive, got -1");
  a = HorizonArguments{};
  a.schedule = "periodic:m=8";
  a.axis = "t";
  CHECK(refusal(a) == "--axis: 'periodic:m=8' has scalar positions; accepted: no --axis for it");
  a = fp16();
  a.C = "8";
  a.algorithm = "foo";
  CHECK(refusal(a) ==
        "--algorithm: unknown certified-range algorithm 'foo'; accepted: auto, candidates, scan");
}

TEST_CASE("the certified-range algorithm's spellings round-trip", "[horizon_spec]") {
  for (const RangeAlgorithm r :
       {RangeAlgorithm::automatic, RangeAlgorithm::candidates, RangeAlgorithm::scan}) {
    CHECK(ropesim::proofs::parse_range_algorithm(std::string(ropesim::proofs::to_string(r))) == r);
  }
  CHECK(ropesim::proofs::to_string(RangeAlgorithm::automatic) == "auto");
}
