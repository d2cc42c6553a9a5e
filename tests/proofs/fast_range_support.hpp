#pragma once
// Shared by the candidate-algorithm tests (test_fast_range.cpp, test_fast_range_blocks.cpp,
// test_fast_range_chunks.cpp): a fixed-offset head spec from a schedule spelling, scan
// options, the RapidCheck generators of formats and C, and the comparison of the candidate
// algorithm's result with the quadratic scan's (proofs/range/fast_range.hpp promises every field
// below).
#include <gmpxx.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/format.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/rounding.hpp"
#include "numeric/summation.hpp"
#include "numeric/value.hpp"
#include "proofs/range/fixed_offset_head.hpp"

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

/// A random format for a RapidCheck property: fp16, bf16, fp32, fp8e5m2, tf32, fp64 or an
/// IEEE-style format of precision 3–29 and 5–8 exponent bits.
inline ropesim::numeric::Format random_format() {
  using ropesim::numeric::Format;
  switch (*rc::gen::inRange(0, 8)) {
    case 0:
      return Format::fp16();
    case 1:
      return Format::bf16();
    case 2:
      return Format::fp32();
    case 3:
      return Format::fp8e5m2();
    case 4:
      return ropesim::numeric::parse_format("tf32");
    case 5:
      return Format::fp64();
    default:
      return Format::ieee(*rc::gen::inRange(3, 30), *rc::gen::inRange(5, 9));
  }
}

/// A random C for F and r: f_large · 2^s · (1 + m/64), s from −1 (too small to lead at all)
/// to min(p + 5, 39), m in 0..63, discarded (RC_PRE) unless below F's largest finite value.
/// Needs f_large(F, r) (RC_PRE it first).
inline mpq_class random_C(const ropesim::numeric::Format& F, ropesim::numeric::Rounding r) {
  const auto fl = ropesim::numeric::exact_rational(*ropesim::numeric::f_large(F, r));
  const int s = *rc::gen::inRange(-1, std::min(F.precision + 6, 40));
  mpq_class C = fl * (1 + mpq_class(*rc::gen::inRange(0, 64), 64));
  C *= s >= 0 ? mpq_class(mpz_class(1) << s) : mpq_class(1, 2);
  RC_PRE(C < ropesim::numeric::exact_rational(ropesim::numeric::max_finite(F)));
  return C;
}

/// make_fixed_offset_head(spec), the case discarded (RC_DISCARD) where the spec is refused.
inline ropesim::proofs::FixedOffsetHead head_or_discard(
    const ropesim::proofs::FixedOffsetSpec& spec) {
  ropesim::proofs::FixedOffsetHead head;
  bool made = true;
  try {
    head = ropesim::proofs::make_fixed_offset_head(spec);
  } catch (const ropesim::InvalidArgument&) {
    made = false;
  }
  if (!made) RC_DISCARD("head not constructible");
  return head;
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
