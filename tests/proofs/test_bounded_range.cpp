// The certified range under bounded-error trig (proofs/range/bounded_range.hpp):
// ulp-0 is the scan of the correctly rounded pipeline exactly, and at U = 1 the range every
// implementation certifies is at most the range of each concrete implementation inside the
// model (cr, glibc cosf/sinf, SLEEF u10), each measured by the ordinary scan.
#include <catch2/catch.hpp>

#include "attention/realisations/bounded_realisation.hpp"
#include "core/error.hpp"
#include "numeric/libm.hpp"
#include "proofs/range/bounded_range.hpp"
#include "proofs/range/fixed_offset_head.hpp"

using namespace ropesim;
using proofs::FixedOffsetSpec;

namespace {

FixedOffsetSpec head_spec(const std::string& schedule, const std::string& realisation,
                          const mpq_class& C, const numeric::Format& F = numeric::Format::fp32()) {
  FixedOffsetSpec spec;
  spec.schedule = attention::parse_schedule(schedule);
  spec.realisation = realisation;
  spec.C = C;
  spec.k = 1;
  spec.policy.format = F;
  return spec;
}

std::uint64_t scan(const FixedOffsetSpec& spec, std::uint64_t L) {
  proofs::ScanOptions o;
  o.max_length = L;
  return proofs::certified_range(proofs::make_fixed_offset_head(spec), o).n_max;
}

}  // namespace

TEST_CASE("bounded range: ulp-0 is the scan of the :cr pipeline", "[bounded]") {
  // single frequency g = 1 with the C that `horizon --C auto` picks (fp32: the record n = 333,
  // the range ends at fp32's tie distance 710, THEORY §6; bf16: 2^15), and an eight-block head
  for (const auto& [schedule, C, F] : std::vector<std::tuple<std::string, int, numeric::Format>>{
           {"single:g=1", 2839326, numeric::Format::fp32()},
           {"single:g=1", 32768, numeric::Format::bf16()},
           {"conventional:base=10000,dim=16", 1716, numeric::Format::fp32()}}) {
    INFO(schedule << " C=" << C << " " << F.name);
    const auto cr = scan(head_spec(schedule, "pipeline:cos_sin=fp32", C, F), 1500);
    const auto b = proofs::bounded_certified_range(
        head_spec(schedule, "pipeline:cos_sin=fp32:ulp-0", C, F), 1500);
    CHECK(b.uncertain_entries == 0);
    CHECK(cr > 0);  // not a vacuous equality
    CHECK(b.n_max == cr);
  }
}

TEST_CASE("bounded range: below every implementation inside ulp-1", "[bounded]") {
  const std::uint64_t L = 1500;
  // one block: cr and glibc's cosf/sinf (within 1 ulp: tests/attention/test_bounded_trig.cpp)
  {
    const auto all = proofs::bounded_certified_range(
        head_spec("single:g=1", "pipeline:cos_sin=fp32:ulp-1", 2839326), L);
    CHECK(all.uncertain_entries > 0);
    const auto cr = scan(head_spec("single:g=1", "pipeline:cos_sin=fp32", 2839326), L);
    const auto glibc = scan(head_spec("single:g=1", "pipeline:cos_sin=fp32:glibc", 2839326), L);
    CHECK(cr == 709);
    CHECK(all.n_max <= cr);
    CHECK(all.n_max <= glibc);
    // measured: the 1-ulp boxes do not move this head's range (the enclosure is not vacuous)
    CHECK(all.n_max == 709);
  }
  // eight blocks: SLEEF u10 too (its lanes need a multiple of 8 blocks)
  if (!numeric::sleef_avx2_available()) {
    WARN("SKIPPED: this CPU lacks AVX2/FMA, sleef-u10 cannot run here");
    return;
  }
  const std::string s = "conventional:base=10000,dim=16";
  const auto all =
      proofs::bounded_certified_range(head_spec(s, "pipeline:cos_sin=fp32:ulp-1", 1716), L);
  for (const std::string impl : {"cr", "glibc", "sleef-u10"}) {
    INFO(impl);
    CHECK(all.n_max <= scan(head_spec(s, "pipeline:cos_sin=fp32:" + impl, 1716), L));
  }
}

TEST_CASE("bounded range: cuda-fast past pi, and refusals", "[bounded]") {
  // g = 1: position 4 has the argument 4 > π, where __cosf is undocumented ([-1, 1]): no
  // implementation-independent claim reaches past the query that reads it
  const auto r = proofs::bounded_certified_range(
      head_spec("single:g=1", "pipeline:cos_sin=fp32:cuda-fast", 2839326), 100);
  CHECK(r.undocumented_entries > 0);
  REQUIRE(r.fail_query);
  CHECK(*r.fail_query == 4);  // q_4 reads the argument 4 > π
  CHECK(r.n_max == 2);
  CHECK_THROWS_AS(
      proofs::bounded_certified_range(head_spec("single:g=1", "pipeline:cos_sin=fp32", 64), 100),
      InvalidArgument);
  CHECK_THROWS_AS(proofs::bounded_certified_range(
                      head_spec("single:g=1", "pipeline:cos_sin=fp32:ulp-1", 64), 0),
                  InvalidArgument);
}
