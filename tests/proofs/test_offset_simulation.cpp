// The Y^k transformer and the L-simulation check of Cor 4.1 (THEORY §5, §6; RoPE-X App D).
#include <catch2/catch.hpp>

#include "attention/transformer/run.hpp"
#include "numeric/format.hpp"
#include "proofs/experiments/offset_simulation.hpp"
#include "proofs/range/horizon.hpp"

using namespace ropesim;
using numeric::Format;

namespace {

proofs::FixedOffsetSpec spec_of(const std::string& schedule, const mpq_class& C, std::uint64_t k,
                                const Format& f) {
  proofs::FixedOffsetSpec s;
  s.schedule = attention::parse_schedule(schedule);
  s.C = C;
  s.k = k;
  s.policy.format = f;
  return s;
}

}  // namespace

TEST_CASE("Y^k π_a by hand (THEORY §4)", "[proofs][simulation]") {
  CHECK(proofs::offset_formula("ab", 1, 3) == false);  // w_2 = b
  CHECK(proofs::offset_formula("ba", 1, 3) == true);
  CHECK(proofs::offset_formula("ab", 2, 3) == true);   // w_1 = a
  CHECK(proofs::offset_formula("ab", 2, 2) == false);  // i = 2 is not > k
  CHECK(proofs::offset_formula("a", 1, 0) == false);   // BOS
  CHECK(proofs::offset_formula("", 1, 1) == false);
}

TEST_CASE("the Y^k transformer accepts exactly the words with w_{N+1-k} = a",
          "[proofs][simulation]") {
  const auto model = proofs::offset_model(spec_of("single:g=1", 448, 2, Format::fp16()));
  CHECK(model.layers.size() == 3);  // P-chain of length 2, then the gate
  for (const char* w : {"", "a", "b", "aa", "ab", "ba", "bb", "abb", "bab", "aab"}) {
    INFO(w);
    const auto r = attention::run(model, w);
    CHECK(r.accept == proofs::offset_formula(w, 2, std::string(w).size() + 1));
  }
}

TEST_CASE("beyond the certified range the check finds the failure (θ = π/2, N_max = 3)",
          "[proofs][simulation]") {
  // periodic:m=4, C = 64, k = 1 has N_max = 3 (hand-checked in test_fixed_offset_head.cpp): at
  // i = 5 the target j = 4 ties BOS (offset 4), each gets weight 1/2, so Y π_a at EOS of a
  // length-4 word ending in a reads 1/2. The first such word in the exhaustive order is aaaa.
  proofs::SimulationOptions o;
  o.random_words = 0;
  const auto ok =
      proofs::check_offset_simulation(spec_of("periodic:m=4", 64, 1, Format::fp16()), 3, o);
  CHECK_FALSE(ok.first.has_value());
  CHECK(ok.words == 1 + 2 + 4 + 8);
  const auto bad =
      proofs::check_offset_simulation(spec_of("periodic:m=4", 64, 1, Format::fp16()), 4, o);
  REQUIRE(bad.first.has_value());
  CHECK(bad.first->word == "aaaa");
  CHECK(bad.first->position == 5);
  CHECK(bad.first->expected == true);
  CHECK(bad.first->got == "0.5");
}

namespace {

void check_presets(std::uint64_t exhaustive, std::uint64_t random_max) {
  // Exhaustive up to length min(L, 10) and two random words up to min(L, 300) here, to keep
  // ctest short; the full check (exhaustive ≤ 16, random ≤ 2000) is the hidden
  // test "[.full]" below and `ropesim horizon --simulate` (docs/tables/horizon.md records its
  // results). C = auto over lengths ≤ 2000.
  for (const Format& f : {Format::fp8e4m3(), Format::fp8e5m2(), Format::bf16(), Format::fp16(),
                          Format::tf32(), Format::fp32(), Format::fp64()}) {
    for (std::uint64_t k : {1u, 2u}) {
      proofs::HorizonSpec h;
      h.head = spec_of("single:g=1", 1, k, f);
      h.auto_C = true;
      h.max_length = 2000;
      const auto report = proofs::horizon(h);
      INFO(f.name << " k=" << k << " C=" << report.C.to_decimal(9)
                  << " N_max=" << report.range.n_max);
      if (report.range.n_max < k) {
        WARN(f.name << " k=" << k << ": N_max = " << report.range.n_max
                    << " < k, nothing to simulate");
        continue;
      }
      proofs::FixedOffsetSpec spec = h.head;
      spec.C = attention::exact_rational(report.C);
      proofs::SimulationOptions o;
      o.exhaustive_length = exhaustive;
      o.random_max_length = random_max;
      o.random_words = 2;
      const auto sim = proofs::check_offset_simulation(spec, report.range.n_max, o);
      if (sim.first) {
        FAIL("disagreement on '" << sim.first->word << "' at position " << sim.first->position
                                 << ": expected " << sim.first->expected << ", got "
                                 << sim.first->got);
      }
      CHECK(sim.words > 0);
    }
  }
}

}  // namespace

TEST_CASE("L-simulation passes for L ≤ N_max on every preset format, k = 1 and 2 (Cor 4.1)",
          "[proofs][simulation][bulk]") {
  check_presets(10, 300);
}

TEST_CASE("full L-simulation check: exhaustive ≤ 16, random ≤ 2000 (about an hour)",
          "[.full][proofs][simulation]") {
  check_presets(16, 2000);
}

TEST_CASE("the --simulate verdict: L defaults to N_max, k <= L, a bug or allowed (Cor 4.1)",
          "[proofs][simulation][verdict]") {
  // periodic:m=4, C = 64, k = 1 in fp16: N_max = 3, and length-4 words disagree (case above)
  proofs::SimulationOptions o;
  o.random_words = 0;
  const auto spec = spec_of("periodic:m=4", 64, 1, Format::fp16());
  const auto by_default = proofs::simulate_certified_range(spec, 3, std::nullopt, o);
  CHECK(by_default.L == 3);
  CHECK(by_default.within_certified_range);
  CHECK(by_default.outcome == proofs::SimulationOutcome::agrees);
  REQUIRE(by_default.report);
  CHECK(by_default.report->words == 1 + 2 + 4 + 8);
  // L = 4 > N_max = 3: the disagreement is allowed
  const auto beyond = proofs::simulate_certified_range(spec, 3, 4, o);
  CHECK_FALSE(beyond.within_certified_range);
  CHECK(beyond.outcome == proofs::SimulationOutcome::allowed);
  REQUIRE(beyond.report);
  REQUIRE(beyond.report->first);
  CHECK(beyond.report->first->word == "aaaa");
  // the same disagreement under a (wrongly) claimed N_max = 4 contradicts the range: a bug
  const auto claimed = proofs::simulate_certified_range(spec, 4, std::nullopt, o);
  CHECK(claimed.L == 4);
  CHECK(claimed.outcome == proofs::SimulationOutcome::bug);
  // L < k: not run
  const auto k2 = spec_of("periodic:m=4", 64, 2, Format::fp16());
  const auto short_L = proofs::simulate_certified_range(k2, 3, 1, o);
  CHECK(short_L.outcome == proofs::SimulationOutcome::not_run);
  CHECK_FALSE(short_L.report);
  CHECK(proofs::simulation_length(std::nullopt, 17) == 17);
  CHECK(proofs::simulation_length(5, 17) == 5);
}
