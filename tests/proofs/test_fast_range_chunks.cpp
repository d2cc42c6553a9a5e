// The candidate algorithm's chunked, threaded evaluation (proofs/range/fast_range.hpp
// certified_range_fast) against the plain one-thread second implementation in
// fast_range_reference.hpp (every position through attention::head_query / head_key, every
// key kept, the candidate offsets listed up front, gaps in exact rationals): the same
// CertifiedRange bit for bit, counts included, for 1, 2 and 3 threads and with a small key
// store (older keys realised again), on random heads and on llama2-7b / llama3 at fp32 and
// bf16 with a failing query.
#include <rapidcheck.h>

#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/range/fast_range.hpp"
#include "tests/proofs/fast_range_reference.hpp"
#include "tests/proofs/fast_range_support.hpp"

using namespace ropesim;
using numeric::Format;
using numeric::Rounding;

using fast_range_test::head_or_discard;
using fast_range_test::random_C;
using fast_range_test::reference_range_by_candidates;
using fast_range_test::require_same;
using fast_range_test::spec_of;
using fast_range_test::up_to;

namespace {

/// Everything certified_range_fast reports, beyond require_same's witness fields.
void require_identical(const proofs::CertifiedRange& reference,
                       const proofs::CertifiedRange& chunked) {
  require_same(reference, chunked);
  RC_ASSERT(reference.max_length == chunked.max_length);
  RC_ASSERT(reference.scores_evaluated == chunked.scores_evaluated);
  RC_ASSERT(reference.candidate_offsets == chunked.candidate_offsets);
  RC_ASSERT(reference.offsets_scored == chunked.offsets_scored);
  RC_ASSERT(reference.scores_per_query_bound == chunked.scores_per_query_bound);
  RC_ASSERT(reference.fast_kernel == chunked.fast_kernel);
  RC_ASSERT(reference.error_bound == chunked.error_bound);
  RC_ASSERT(chunked.algorithm == std::string("candidates"));
}

proofs::ScanOptions chunked(std::uint64_t L, bool kernel, unsigned threads,
                            std::size_t key_store_bytes) {
  auto o = up_to(L, kernel);
  o.threads = threads;
  o.key_store_bytes = key_store_bytes;
  return o;
}

}  // namespace

TEST_CASE("chunked candidate algorithm = reference implementation, any threads and key store",
          "[proofs][fast_range][fast_range_chunks][property]") {
  const bool ok = rc::check("chunked == reference", [] {
    const Format F =
        *rc::gen::element(Format::fp16(), Format::bf16(), Format::fp32(), Format::fp64());
    // directed roundings take attention::rotate (no binary64 fast rotation)
    const Rounding r = *rc::gen::element(Rounding::nearest_even, Rounding::nearest_even,
                                         Rounding::toward_zero, Rounding::downward);
    const auto sum =
        *rc::gen::element(attention::Summation::sequential, attention::Summation::pairwise,
                          attention::Summation::wide_accumulator, attention::Summation::exact);
    RC_PRE(numeric::f_large(F, r).has_value());
    const int B = *rc::gen::inRange(1, 9);
    const std::string schedule = *rc::gen::element(
        std::string("conventional:base=") + std::to_string(*rc::gen::inRange(2, 20000)) +
            ",dim=" + std::to_string(2 * B),
        std::string("single:g=") + std::to_string(*rc::gen::inRange(1, 9)) + "/" +
            std::to_string(*rc::gen::inRange(1, 9)),
        std::string("periodic:1/7,2/9,5/11"));
    const std::string realisation = schedule.rfind("periodic", 0) == 0
                                        ? *rc::gen::element(std::string("r1"), std::string("r3"))
                                        : "r1";
    const std::uint64_t k = *rc::gen::element<std::uint64_t>(1, 2, 5, 70, 300);
    const proofs::FixedOffsetHead head =
        head_or_discard(spec_of(schedule, random_C(F, r), k, F, realisation, r, sum));
    RC_PRE(!proofs::fast_range_refusal(head).has_value());
    // up to 1500 positions: chunks of 64, 128, … and several batches
    const std::uint64_t L = *rc::gen::inRange(1, 1500);
    const bool kernel = *rc::gen::arbitrary<bool>();
    const unsigned threads = *rc::gen::inRange(1, 4);
    // keys of 16–400 positions kept: older ones a candidate needs are realised again
    const std::size_t store =
        8 * head.head.head_dim * static_cast<std::size_t>(*rc::gen::inRange(16, 400));
    const auto reference = reference_range_by_candidates(head, up_to(L, kernel));
    const auto fast = proofs::certified_range_fast(head, chunked(L, kernel, threads, store));
    RC_TAG(reference.at_limit ? "at limit" : "fails",
           reference.candidate_offsets > 0 ? "candidates" : "no candidate");
    require_identical(reference, fast);
  });
  CHECK(ok);
}

TEST_CASE("chunked = reference on llama2-7b and llama3-8b at fp32 and bf16, 1 and 2 threads",
          "[proofs][fast_range][fast_range_chunks]") {
  // bf16, C = 6000: E is large, every offset is a candidate and llama2-7b's query 655 fails
  // (offset 1); fp32, C = 4096: no candidate offset, no failure up to the limit
  struct Case {
    const char* schedule;
    Format F;
    const char* C;
  };
  const Case cases[] = {{"llama2-7b", Format::fp32(), "4096"},
                        {"llama2-7b", Format::bf16(), "6000"},
                        {"llama3-8b", Format::fp32(), "4096"},
                        {"llama3-8b", Format::bf16(), "6000"}};
  for (const auto& c : cases) {
    CAPTURE(c.schedule, c.F.name, c.C);
    const auto head = proofs::make_fixed_offset_head(
        spec_of(c.schedule, numeric::parse_rational_exact(c.C, "C"), 1, c.F));
    REQUIRE(!proofs::fast_range_refusal(head));
    const auto reference = reference_range_by_candidates(head, up_to(1500));
    for (unsigned threads : {1u, 2u}) {
      const auto fast =
          proofs::certified_range_fast(head, chunked(1500, true, threads, 8 * 128 * 100));
      CHECK(fast.n_max == reference.n_max);
      if (c.F == Format::bf16() && c.schedule == std::string("llama2-7b"))
        CHECK(fast.fail_query == std::optional<std::uint64_t>(655));
      CHECK(fast.at_limit == reference.at_limit);
      CHECK(fast.fail_query == reference.fail_query);
      CHECK(fast.fail_competitor == reference.fail_competitor);
      CHECK(fast.gap == reference.gap);
      CHECK(fast.scores_evaluated == reference.scores_evaluated);
      CHECK(fast.candidate_offsets == reference.candidate_offsets);
      CHECK(fast.offsets_scored == reference.offsets_scored);
    }
  }
}
