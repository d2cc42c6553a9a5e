// Schedules (THEORY §3): exact angles, spec parsing, partial rotary vs p-RoPE, llama3 scaling,
// model presets. Expected values are computed independently in long double from the formulas
// (or by hand, as stated next to each number).
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <set>

#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;

namespace {

long double rel(long double a, long double b) { return std::fabs(a - b) / std::fabs(b); }

std::string error_of(const std::string& spec) {
  try {
    parse_schedule(spec);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("conventional base 1e4 dim 128: theta_d = 10^(-4*2(d-1)/128)", "[schedule]") {
  const Schedule s = parse_schedule("conventional:base=10000,dim=128");
  REQUIRE(s.blocks.size() == 64);
  REQUIRE(s.unrotated_pairs == 0);
  REQUIRE(s.head_dim == 128);
  REQUIRE(s.rotary_dim == 128);
  // θ_1 = 1 exactly (the RoPE-X θ_1 = 1 rad/token)
  REQUIRE(s.blocks[0].theta.as_rational() == mpq_class(1));
  // θ_2 = 10^(-4·2/128) = 10^(-1/16) = 0.865964323360065... (hand: 10^(-0.0625))
  REQUIRE(std::fabs(s.blocks[1].theta.to_double() - 0.8659643233600653) < 1e-15);
  for (std::size_t d = 1; d <= 64; ++d) {
    const long double expected = std::pow(10.0L, -4.0L * 2.0L * (d - 1) / 128.0L);
    INFO("d = " << d);
    REQUIRE(rel(s.blocks[d - 1].theta.to_double(), expected) < 1e-15L);
    REQUIRE_FALSE(s.blocks[d - 1].turn.has_value());
  }
  REQUIRE_FALSE(s.is_rational());
  // the same schedule from an exponent spelling, never through double
  REQUIRE(parse_schedule("conventional:base=1e4,dim=128").spec == s.spec);
}

TEST_CASE("exact rational powers are recognised", "[schedule]") {
  // 10000^(-2/4) = 1/100, 10000^(-1/4) = 1/10 (hand)
  const Schedule s = parse_schedule("conventional:base=10000,dim=4");
  REQUIRE(s.blocks[1].theta.as_rational() == mpq_class(1, 100));
  // dim 16: θ_k = 10^(-k/2): 10^(-1/2) irrational, 10^(-1) = 1/10 rational
  const Schedule t = parse_schedule("conventional:base=10000,dim=16");
  REQUIRE_FALSE(t.blocks[1].theta.as_rational().has_value());
  REQUIRE(t.blocks[2].theta.as_rational() == mpq_class(1, 10));
  REQUIRE(t.blocks[4].theta.as_rational() == mpq_class(1, 100));
}

TEST_CASE("single and periodic schedules", "[schedule]") {
  const Schedule g = parse_schedule("single:g=0.1");
  REQUIRE(g.blocks.size() == 1);
  REQUIRE(g.blocks[0].theta.as_rational() == mpq_class(1, 10));  // exact, not the double 0.1
  REQUIRE_FALSE(g.blocks[0].turn.has_value());

  const Schedule p = parse_schedule("periodic:m=2,3,12");
  REQUIRE(p.blocks.size() == 3);
  REQUIRE(p.is_rational());
  REQUIRE(p.blocks[2].turn->m == 12);
  REQUIRE(p.blocks[2].turn->a == 1);
  REQUIRE(std::fabs(p.blocks[2].theta.to_double() - 2 * std::numbers::pi / 12) < 1e-15);

  const Schedule q = parse_schedule("periodic:3/12,5/4");
  REQUIRE(q.blocks[0].turn->a == 1);  // 3/12 = 1/4
  REQUIRE(q.blocks[0].turn->m == 4);
  REQUIRE(q.blocks[1].turn->a == 1);  // 5/4 turns ≡ 1/4 (period 4) ...
  REQUIRE(q.blocks[1].turn->m == 4);
  // ... but the angle keeps its value 2π·5/4 (it matters for r2's θ̂)
  REQUIRE(std::fabs(q.blocks[1].theta.to_double() - 2 * std::numbers::pi * 5 / 4) < 1e-14);
}

TEST_CASE("partial rotary vs p-RoPE (THEORY §3)", "[schedule]") {
  // partial: rotary_dim = 96·0.25 = 24 → 12 blocks with θ_d = 1e4^(-2(d-1)/24), 36 unrotated
  const Schedule partial = parse_schedule("partial:base=10000,dim=96,factor=0.25");
  REQUIRE(partial.blocks.size() == 12);
  REQUIRE(partial.unrotated_pairs == 36);
  REQUIRE(partial.head_dim == 96);
  REQUIRE(*partial.exponent_dim == 24);
  // p-RoPE: 48 blocks over the full head, θ_d = 1e4^(-2(d-1)/96); the lowest 48 - floor(0.25·48)
  // = 36 frequencies set to 0
  const Schedule prope = parse_schedule("prope:base=10000,dim=96,p=0.25");
  REQUIRE(prope.blocks.size() == 48);
  REQUIRE(prope.unrotated_pairs == 0);
  std::size_t dropped = 0;
  for (const auto& b : prope.blocks) dropped += b.dropped;
  REQUIRE(dropped == 36);
  for (std::size_t d = 1; d <= 12; ++d) {
    INFO("d = " << d);
    REQUIRE(rel(partial.blocks[d - 1].theta.to_double(), std::pow(1e4L, -2.0L * (d - 1) / 24)) <
            1e-15L);
    REQUIRE(rel(prope.blocks[d - 1].theta.to_double(), std::pow(1e4L, -2.0L * (d - 1) / 96)) <
            1e-15L);
    REQUIRE_FALSE(prope.blocks[d - 1].dropped);
  }
  for (std::size_t d = 13; d <= 48; ++d) {
    REQUIRE(prope.blocks[d - 1].theta.is_zero());
    REQUIRE(prope.blocks[d - 1].turn.has_value());
  }
  // the second frequency differs: 1e4^(-1/12) = 0.4641588... vs 1e4^(-1/48) = 0.8254041...
  REQUIRE(std::fabs(partial.blocks[1].theta.to_double() - 0.46415888336127786) < 1e-15);
  REQUIRE(std::fabs(prope.blocks[1].theta.to_double() - 0.8254041852680184) < 1e-15);

  // p = 0.75 on a 128 head: 48 kept, 16 dropped (RRWG)
  const Schedule p75 = parse_schedule("prope:base=10000,dim=128,p=0.75");
  std::size_t kept = 0;
  for (const auto& b : p75.blocks) kept += !b.dropped;
  REQUIRE(kept == 48);
}

TEST_CASE("llama3 scaling matches a hand computation (llama3.1-8b)", "[schedule]") {
  const Schedule s = parse_schedule("llama3.1-8b");
  REQUIRE(s.blocks.size() == 64);
  REQUIRE(s.llama3.has_value());
  // Hand: wavelen_k = 2π·500000^(k/64); high band (unchanged) while wavelen < 8192/4 = 2048,
  // i.e. k ≤ 28 (k = 28.22 at the edge); low band (θ/8) while wavelen > 8192, k ≥ 35
  // (edge 34.98); k = 29..34 smoothed.
  int unchanged = 0, divided = 0, smoothed = 0;
  for (std::size_t k = 0; k < 64; ++k) {
    const long double theta = std::pow(500000.0L, -2.0L * k / 128.0L);
    const long double wavelen = 2 * std::numbers::pi_v<long double> / theta;
    long double expected;
    if (wavelen < 2048) {
      expected = theta;
      ++unchanged;
      REQUIRE(k <= 28);
    } else if (wavelen > 8192) {
      expected = theta / 8;
      ++divided;
      REQUIRE(k >= 35);
    } else {
      const long double smooth = (8192 / wavelen - 1) / (4 - 1);
      expected = (1 - smooth) * theta / 8 + smooth * theta;
      ++smoothed;
    }
    INFO("k = " << k);
    REQUIRE(rel(s.blocks[k].theta.to_double(), expected) < 1e-14L);
  }
  REQUIRE(unchanged == 29);
  REQUIRE(smoothed == 6);
  REQUIRE(divided == 29);
}

TEST_CASE("model presets", "[schedule]") {
  const auto names = model_preset_names();
  REQUIRE(names.size() == 13);
  REQUIRE(names.front() == "llama2-7b");
  std::size_t blocks = 0;
  for (const auto& n : names) blocks += parse_schedule(n).blocks.size();
  // 64·6 + 32 (llama3.2-1b) + 128 (gemma-7b) + 12 + 16, then 64 (qwen2.5-7b-yarn), 32
  // (deepseek-v3's 64-dim rotary head) and 64 (qwen2-vl-7b) (hand)
  REQUIRE(blocks == 732);
  const Schedule neox = parse_schedule("gpt-neox-20b");
  REQUIRE(neox.blocks.size() == 12);  // 96 · 0.25 = 24 rotary dims
  REQUIRE(neox.unrotated_pairs == 36);
  const Schedule phi = parse_schedule("phi-2");
  REQUIRE(phi.blocks.size() == 16);  // 80 · 0.4 = 32 rotary dims, factor read exactly
  REQUIRE(phi.unrotated_pairs == 24);
  REQUIRE(*phi.partial_rotary_factor == mpq_class(2, 5));
  REQUIRE(parse_schedule("codellama-7b").blocks[1].theta.to_double() ==
          Approx(std::pow(1e6, -2.0 / 128)).epsilon(1e-15));
  REQUIRE(models_json_text().find("llama2-7b") != std::string_view::npos);
}

TEST_CASE("bad schedule specs give one line listing the accepted ones", "[schedule]") {
  for (const std::string spec :
       {"foo", "conventional:base=0,dim=128", "conventional:base=1e4,dim=127",
        "conventional:base=1e4", "periodic:m=0", "single:g=abc",
        "partial:base=1e4,dim=96,factor=0.31", "prope:base=1e4,dim=128,p=2",
        "conventional:base=1e4,dim=128,extra=1", "periodic:1/0"}) {
    INFO(spec);
    const std::string e = error_of(spec);
    REQUIRE_FALSE(e.empty());
    REQUIRE(e.find('\n') == std::string::npos);
    REQUIRE(e.find(spec) != std::string::npos);
    REQUIRE(e.find("conventional:base=B,dim=D") != std::string::npos);
    REQUIRE(e.find("llama3.1-8b") != std::string::npos);
  }
}

TEST_CASE("the schedule-family table: spellings, kinds and keys from one row each", "[schedule]") {
  // every family kind (the grammar of schedule.hpp, by hand) is spelled, suggested when
  // mistyped and parses
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"conventional", "conventional:base=10000,dim=8"},
      {"single", "single:g=1/3"},
      {"periodic", "periodic:m=8,12"},
      {"partial", "partial:base=10000,dim=8,factor=1/2"},
      {"prope", "prope:base=10000,dim=8,p=1/2"},
      {"resonance", "resonance:base=10000,dim=8"},
      {"resonance-yarn", "resonance-yarn:base=10000,dim=16,factor=4,original=64"},
      {"axial2d", "axial2d:base=10000,dim=8"},
      {"mrope", "mrope:base=10000,dim=16,sections=4,2,2"},
      {"hirope", "hirope:base=10000,dim=16,levels=2,split=4,4"},
      {"liere", "liere:axes=2,blocks=1/4|1/3,1/5|1/7"},
      {"hope", "hope:base=10000,dim=8,train_len=64"},
      {"fope", "fope:base=10000,dim=8,train_len=64,seed=3"}};
  const std::string spellings = ropesim::attention::schedule_spellings();
  for (const auto& [kind, example] : kinds) {
    INFO(kind);
    CHECK((spellings.find(" " + kind + ":") != std::string::npos ||
           spellings.rfind(kind + ":", 0) == 0));
    CHECK_NOTHROW(parse_schedule(example));
    // one letter dropped from the kind: the refusal suggests it
    const std::string typo = kind.substr(0, kind.size() - 1) + example.substr(kind.size());
    CHECK(error_of(typo).find("did you mean '" + kind + "'") != std::string::npos);
  }
  CHECK(spellings.find("hf-config:PATH | hf-config[seq_len=N]:PATH") != std::string::npos);
  // a key outside the family's parameters is refused before any is read, naming them
  CHECK(error_of("conventional:bse=10000,dim=16")
            .find("unexpected key 'bse' (conventional accepts base, dim)") != std::string::npos);
  CHECK(error_of("mrope:base=10000,dim=16,sections=4,2,2,seed=1")
            .find("unexpected key 'seed' (mrope accepts base, dim, sections)") !=
        std::string::npos);
  // a missing key is still named when the others are known
  CHECK(error_of("prope:base=10000,dim=8").find("missing p=") != std::string::npos);
}

TEST_CASE("exact comparison and approximation oracle of ExactReal", "[schedule]") {
  const ExactReal pi = ExactReal::pi_times(1);
  REQUIRE(compare(pi, ExactReal::rational(mpq_class(355, 113))) < 0);  // π < 355/113
  REQUIRE(compare(pi, ExactReal::rational(mpq_class(333, 106))) > 0);  // π > 333/106
  mpfr_t y;
  mpfr_init2(y, 100);
  const std::uint64_t err = pi.approximate(y, 100);
  REQUIRE(err >= 1);
  REQUIRE(err <= 4);
  mpfr_t ref;
  mpfr_init2(ref, 300);
  mpfr_const_pi(ref, MPFR_RNDN);
  mpfr_sub(ref, ref, y, MPFR_RNDN);
  mpfr_t bound;
  mpfr_init2(bound, 64);
  mpfr_set_ui_2exp(bound, err, 2 - 100, MPFR_RNDN);  // err ulps of y, EXP(π) = 2
  REQUIRE(mpfr_cmpabs(ref, bound) <= 0);
  mpfr_clear(bound);
  REQUIRE(ExactReal::rational(mpq_class(1, 4)).approximate(y, 100) == 0);  // exact
  mpfr_clears(y, ref, static_cast<mpfr_ptr>(nullptr));
}

TEST_CASE("schedule dimensions are bounded: 2..65536", "[schedule]") {
  // 65536 / 2 = 32768 rotary blocks is accepted; 65538 is refused with the accepted range (a
  // 10^6-dimensional prope schedule took about 1 GB while fuzzing).
  CHECK(parse_schedule("conventional:base=10000,dim=65536").blocks.size() == 32768);
  CHECK_THROWS_WITH(parse_schedule("conventional:base=10000,dim=65538"),
                    Catch::Contains("2..65536"));
  CHECK_THROWS_WITH(parse_schedule("prope:base=10,dim=999996,p=0"), Catch::Contains("2..65536"));
}
