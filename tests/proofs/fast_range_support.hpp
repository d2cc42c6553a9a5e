#pragma once
// Shared by the candidate-algorithm tests (test_fast_range.cpp, test_fast_range_blocks.cpp):
// a fixed-offset head spec from a schedule spelling, scan options, and the comparison of the
// candidate algorithm's result with the quadratic scan's (proofs/fast_range.hpp promises
// every field below).
#include <gmpxx.h>
#include <rapidcheck.h>

#include <cstdint>
#include <optional>
#include <string>

#include "attention/schedule.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/summation.hpp"
#include "numeric/value.hpp"
#include "proofs/fixed_offset_head.hpp"

namespace fast_range_test {

inline ropesim::proofs::FixedOffsetSpec spec_of(
    const std::string& schedule, const mpq_class& C, std::uint64_t k,
    const ropesim::numeric::Format& f, const std::string& realisation = "r1",
    ropesim::numeric::Rounding r = ropesim::numeric::Rounding::nearest_even,
    ropesim::attention::Summation sum = ropesim::attention::Summation::sequential) {
  ropesim::proofs::FixedOffsetSpec s;
  s.schedule = ropesim::attention::parse_schedule(schedule);
  s.C = C;
  s.k = k;
  s.realisation = realisation;
  s.policy.format = f;
  s.policy.rounding = r;
  s.policy.summation = sum;
  return s;
}

inline ropesim::proofs::ScanOptions up_to(std::uint64_t L, bool kernel = true) {
  ropesim::proofs::ScanOptions o;
  o.max_length = L;
  o.use_fast_kernel = kernel;
  return o;
}

inline bool same_value(const std::optional<ropesim::numeric::Value>& a,
                       const std::optional<ropesim::numeric::Value>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || a->same_bits(*b);
}

/// Every field the candidate algorithm promises to share with the scan (RC_ASSERT: inside a
/// RapidCheck property).
inline void require_same(const ropesim::proofs::CertifiedRange& scan,
                         const ropesim::proofs::CertifiedRange& fast) {
  RC_ASSERT(scan.n_max == fast.n_max);
  RC_ASSERT(scan.at_limit == fast.at_limit);
  RC_ASSERT(scan.fail_query == fast.fail_query);
  RC_ASSERT(scan.fail_competitor == fast.fail_competitor);
  RC_ASSERT(scan.fail_offset == fast.fail_offset);
  RC_ASSERT(scan.gap == fast.gap);
  RC_ASSERT(same_value(scan.target_score, fast.target_score));
  RC_ASSERT(same_value(scan.competitor_score, fast.competitor_score));
}

}  // namespace fast_range_test
