// The Y^k head (THEORY §6, C5; RoPE-X App D) and its certified range (RoPE-X eq. 10):
// hand-checked cases, a second implementation (mini_emulator.hpp), and the binary64 kernel
// cross-checked bit for bit against the transformer's head_score.
#include <catch2/catch.hpp>
#include <random>
#include <tuple>

#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"
#include "mini_emulator.hpp"
#include "proofs/range/fixed_offset_head.hpp"
#include "proofs/range/horizon.hpp"

using namespace ropesim;
using numeric::Format;

namespace {

proofs::FixedOffsetSpec spec_of(const std::string& schedule, const mpq_class& C, std::uint64_t k,
                                const Format& f, const std::string& realisation = "r1") {
  proofs::FixedOffsetSpec s;
  s.schedule = attention::parse_schedule(schedule);
  s.C = C;
  s.k = k;
  s.realisation = realisation;
  s.policy.format = f;
  return s;
}

proofs::ScanOptions up_to(std::uint64_t L) {
  proofs::ScanOptions o;
  o.max_length = L;
  return o;
}

}  // namespace

TEST_CASE("construction: Q = K = 0, key bias (1, 0), query bias rounded once (RoPE-X App D)",
          "[proofs][head]") {
  const auto h = proofs::make_fixed_offset_head(spec_of("single:g=1", 1000, 3, Format::fp16()));
  const auto& a = h.head;
  REQUIRE(a.head_dim == 2);
  REQUIRE(a.value_dim == 1);
  for (const auto& v : a.query.entries) CHECK(v.is_zero());
  for (const auto& v : a.key.entries) CHECK(v.is_zero());
  CHECK(a.key_bias[0].to_double() == 1.0);
  CHECK(a.key_bias[1].is_zero());
  const test::Mini m(test::mini_fp16());
  CHECK(a.query_bias[0].to_double() == m.trig(1, 3, false, 1000));  // round(1000 cos 3)
  CHECK(a.query_bias[1].to_double() == m.trig(1, 3, true, -1000));  // round(-1000 sin 3)
  CHECK(a.value.at(0, 0).to_double() == 1.0);
  CHECK(a.output.at(0, 0).to_double() == 1.0);
  REQUIRE(a.rotary.size() == 1);
  CHECK(a.rotary[0].schedule.blocks.size() == 1);
  CHECK(h.f_large.to_double() == 17.34375);
  CHECK(h.C.to_double() == 1000.0);
}

TEST_CASE("construction rejects bad input with InvalidArgument", "[proofs][head]") {
  CHECK_THROWS_AS(proofs::make_fixed_offset_head(spec_of("single:g=1", 64, 0, Format::fp16())),
                  InvalidArgument);
  CHECK_THROWS_AS(proofs::make_fixed_offset_head(spec_of("single:g=1", 1000000, 1, Format::fp16())),
                  InvalidArgument);
  CHECK_THROWS_AS(proofs::make_fixed_offset_head(spec_of("single:g=1", 0, 1, Format::fp16())),
                  InvalidArgument);
  CHECK_THROWS_AS(
      proofs::make_fixed_offset_head(spec_of("single:g=1", 64, 1, Format::fp16(), "r3")),
      InvalidArgument);
  CHECK_THROWS_AS(
      proofs::make_fixed_offset_head(spec_of("single:g=1", 64, 1, Format::fp16(), "r9")),
      InvalidArgument);
  auto up = spec_of("single:g=1", 64, 1, Format::fp16());
  up.policy.rounding = numeric::Rounding::upward;
  CHECK_THROWS_AS(proofs::make_fixed_offset_head(up), InvalidArgument);
}

TEST_CASE("C5 on θ = π/2: scores are exactly C·{1, 0, -1, 0}, offset 4 ties the target",
          "[proofs][head]") {
  // periodic:m=4 realises Rot(iπ/2) exactly, so Ŝ_{i,j} = C cos(π/2 (i-k-j)) with no rounding.
  // k = 1: query i sees offsets 1..i-1; offset 4 (j = 0 at i = 5) ties the target: gap 0.
  for (const char* r : {"r1", "r3"}) {
    INFO(r);
    const auto h =
        proofs::make_fixed_offset_head(spec_of("periodic:m=4", 64, 1, Format::fp16(), r));
    proofs::RealisedScores s(h);
    s.ensure(8);
    CHECK(s.score(5, 4).to_double() == 64.0);   // offset 0
    CHECK(s.score(5, 3).to_double() == 0.0);    // offset 1
    CHECK(s.score(5, 2).to_double() == -64.0);  // offset 2
    CHECK(s.score(5, 0).to_double() == 64.0);   // offset 4
    const auto range = proofs::certified_range(h, up_to(100));
    CHECK(range.n_max == 3);
    CHECK(range.fail_query == 5u);
    CHECK(range.fail_competitor == 0u);
    CHECK(range.fail_offset == 4);
    REQUIRE(range.gap.has_value());
    CHECK(*range.gap == 0);
    CHECK(*range.smallest_passing_gap == 64);
  }
  // k = 2: offsets -1..i-2; offset 4 first at i = 6.
  const auto k2 = proofs::certified_range(
      proofs::make_fixed_offset_head(spec_of("periodic:m=4", 64, 2, Format::fp16())), up_to(100));
  CHECK(k2.n_max == 4);
  CHECK(k2.fail_query == 6u);
  // C = 16 < f_large(fp16) = 17.34375: the first query fails with gap C·(1 - cos π/2) = 16.
  const auto small = proofs::certified_range(
      proofs::make_fixed_offset_head(spec_of("periodic:m=4", 16, 1, Format::fp16())), up_to(100));
  CHECK(small.n_max == 0);
  CHECK(small.fail_query == 2u);
  CHECK(*small.gap == 16);
}

TEST_CASE("fp64, g = 1, C = 2^23: N_max = 331 + k, stopped by the record distance 333",
          "[proofs][head]") {
  // Hand derivation: C·δ_44 = 2^23·1.567e-4 = 1315 ≥ f_large = 745.13 and every offset below
  // 333 has δ ≥ δ_44; C·δ_333 = 2^23·3.89e-5 = 326 < f_large. fp64 rounding moves scores by
  // ~C·2^-52 ≈ 2e-9, far below the margins. Offset 333 first appears at j = 0, i = 333 + k.
  for (std::uint64_t k : {1u, 2u}) {
    const auto r =
        proofs::certified_range(1, mpq_class(8388608), k, Format::fp64(), "r1", up_to(1000));
    CHECK(r.n_max == 331 + k);
    CHECK(r.fail_competitor == 0u);
    CHECK(r.fail_offset == 333);
    REQUIRE(r.gap.has_value());
    CHECK(r.gap->get_d() == Approx(8388608 * (1 - std::cos(333.0L))).epsilon(1e-6));
    CHECK(r.fast_kernel);
  }
}

TEST_CASE("certified range equals a second implementation (mini emulator) on small formats",
          "[proofs][head]") {
  struct Case {
    Format f;
    test::MiniFormat m;
    mpq_class f_large;
  };
  const std::vector<Case> cases{{Format::fp16(), test::mini_fp16(), mpq_class(1734375, 100000)},
                                {Format::bf16(), test::mini_bf16(), mpq_class(93)},
                                {Format::fp8e5m2(), test::mini_fp8e5m2(), mpq_class(12)},
                                {Format::tf32(), test::mini_tf32(), mpq_class(95)}};
  for (const auto& c : cases) {
    for (std::uint64_t k : {1u, 2u, 4u}) {
      for (const mpq_class& C :
           {mpq_class(40), mpq_class(448), mpq_class(2000), mpq_class(12288), mpq_class(57344)}) {
        INFO(c.f.name << " k=" << k << " C=" << C.get_str());
        const std::uint64_t L = 200;
        const auto lib = proofs::certified_range(1, C, k, c.f, "r1", up_to(L));
        const auto mini = test::mini_certified_range(c.m, 1, C, k, c.f_large, L);
        CHECK(lib.n_max == mini.n_max);
        CHECK(lib.at_limit == mini.at_limit);
        if (!mini.at_limit) {
          CHECK(lib.fail_query == mini.fail_query);
          CHECK(lib.fail_competitor == mini.fail_competitor);
          CHECK(lib.gap.has_value() == mini.finite);
          if (lib.gap && mini.finite) CHECK(*lib.gap == mini.gap);
        }
        // and the reference path (attention::head_score) agrees with the kernel
        proofs::ScanOptions slow = up_to(L);
        slow.use_fast_kernel = false;
        const auto ref = proofs::certified_range(1, C, k, c.f, "r1", slow);
        CHECK(ref.n_max == lib.n_max);
        CHECK(ref.fail_competitor == lib.fail_competitor);
      }
    }
  }
}

TEST_CASE("binary64 kernel = attention::head_score bit for bit", "[proofs][head]") {
  std::mt19937_64 rng(7);
  const std::vector<std::string> schedules{"single:g=1", "conventional:base=10000,dim=16",
                                           "single:g=0.3"};
  const std::vector<Format> formats{Format::fp16(), Format::bf16(), Format::fp32(),
                                    Format::fp64(), Format::tf32(), Format::fp8e5m2()};
  const std::vector<attention::Summation> sums{attention::Summation::sequential,
                                               attention::Summation::pairwise,
                                               attention::Summation::wide_accumulator};
  int compared = 0;
  for (const auto& sched : schedules) {
    for (const auto& f : formats) {
      for (auto sum : sums) {
        for (const char* r : {"r1", "r2", "hf"}) {
          auto spec = spec_of(sched, 300, 3, f, r);
          spec.policy.summation = sum;
          spec.policy.accumulator = Format::fp32();
          const auto h = proofs::make_fixed_offset_head(spec);
          proofs::RealisedScores s(h);
          REQUIRE(s.fast());
          s.ensure(300);
          for (int t = 0; t < 40; ++t) {
            const auto i = rng() % 300, j = rng() % 300;
            const auto a = s.score(i, j), b = s.reference_score(i, j);
            INFO(sched << " " << f.name << " " << attention::to_string(sum) << " " << r
                       << " i=" << i << " j=" << j);
            CHECK(a.same_bits(b));
            ++compared;
          }
        }
      }
    }
  }
  CHECK(compared == 3 * 6 * 3 * 3 * 40);
}

TEST_CASE("realised queries and keys equal the transformer's realise_head path", "[proofs][head]") {
  for (const char* r : {"r1", "r2", "hf", "llamacpp-cpu"}) {
    INFO(r);
    const auto h = proofs::make_fixed_offset_head(
        spec_of("conventional:base=10000,dim=8", 500, 2, Format::bf16(), r));
    proofs::RealisedScores s(h);
    s.ensure(130);
    const auto rot = attention::realise_head(h.head, 130, h.policy);
    const std::vector<numeric::Value> x(1);
    for (std::uint64_t p : {0u, 1u, 7u, 64u, 65u, 129u}) {
      const auto q = attention::head_query(h.head, rot, p, x, h.policy);
      const auto k = attention::head_key(h.head, rot, p, x, h.policy);
      for (std::size_t c = 0; c < q.size(); ++c) {
        CHECK(q[c].same_bits(s.query(p)[c]));
        CHECK(k[c].same_bits(s.key(p)[c]));
      }
    }
  }
}

TEST_CASE("C = auto picks the candidate with the largest N_max and reports every candidate",
          "[proofs][horizon]") {
  proofs::HorizonSpec spec;
  spec.head = spec_of("single:g=1", 1, 1, Format::fp16());
  spec.auto_C = true;
  spec.max_length = 3000;
  const auto r = proofs::horizon(spec);
  REQUIRE_FALSE(r.candidates.empty());
  std::uint64_t best = 0;
  for (const auto& c : r.candidates) best = std::max(best, c.n_max);
  CHECK(r.range.n_max == best);
  // candidates are increasing and include the powers of two 2^4 ... 2^15 (fp16 max 65504)
  for (std::size_t i = 1; i < r.candidates.size(); ++i) {
    CHECK(r.candidates[i - 1].C.to_double() < r.candidates[i].C.to_double());
  }
  bool saw_2_15 = false;
  for (const auto& c : r.candidates) saw_2_15 = saw_2_15 || c.source == "2^15";
  CHECK(saw_2_15);
  // The comparison columns for fp16 at g = 1: tie distance 44; tie cap π·sqrt(2·2^11) ≈ 201.
  REQUIRE(r.tie_distance.has_value());
  CHECK(r.tie_distance->value == 44);
  CHECK(r.tie_cap == Approx(201.06).epsilon(1e-3));
  CHECK_FALSE(r.pm_ceiling.has_value());  // r1 forms no angle in F
  const auto json = proofs::to_json(r);
  for (const char* key : {"format", "g", "k", "C", "realization", "f_large", "n_max", "fail_query",
                          "fail_competitor", "gap", "delta_bound", "tie_distance"}) {
    CHECK(json.contains(key));
  }
}

TEST_CASE("multi-frequency head: equal weights over a schedule, same certified-range definition",
          "[proofs][horizon]") {
  auto spec = spec_of("conventional:base=10000,dim=8", 4096, 1, Format::fp32());
  const auto h = proofs::make_fixed_offset_head(spec);
  CHECK(h.ideal.blocks.size() == 4);
  CHECK(h.ideal.weight_sum() == 1);
  const auto r = proofs::certified_range(h, up_to(2000));
  // The realised target score is close to C at every query; the range is finite here.
  proofs::RealisedScores s(h);
  s.ensure(10);
  CHECK(s.score(5, 4).to_double() == Approx(4096).epsilon(1e-3));
  // Cross-check with the reference path on the same head.
  proofs::ScanOptions slow = up_to(2000);
  slow.use_fast_kernel = false;
  const auto ref = proofs::certified_range(h, slow);
  CHECK(ref.n_max == r.n_max);
  CHECK(ref.fail_competitor == r.fail_competitor);
  CHECK(ref.gap == r.gap);
}

TEST_CASE("C = auto on several threads gives the one-thread report", "[proofs][horizon]") {
  // one search that ends on a candidate at the scan limit (no later candidate is measured), and
  // one where no candidate reaches it (every candidate is used); each candidate's position
  // chunks run on the threads
  for (const auto& [schedule, format, max_length] :
       {std::tuple<std::string, Format, std::uint64_t>{"conventional:base=10000,dim=8",
                                                       Format::fp16(), 400},
        std::tuple<std::string, Format, std::uint64_t>{"single:g=1", Format::bf16(), 2000}}) {
    INFO(schedule);
    proofs::HorizonSpec spec;
    spec.head = spec_of(schedule, 1, 1, format);
    spec.auto_C = true;
    spec.max_length = max_length;
    const auto one = proofs::horizon(spec);
    const auto expected = proofs::to_json(one).dump();
    for (unsigned threads : {2u, 3u}) {
      spec.threads = threads;
      std::size_t calls = 0;
      spec.progress = [&](std::size_t, std::size_t) { ++calls; };
      CHECK(proofs::to_json(proofs::horizon(spec)).dump() == expected);
      CHECK(calls == one.candidates.size());  // one progress call per candidate measured
    }
  }
}
