#pragma once
/// Internal: the binary64 fast path of compare()'s per-entry error arithmetic (compare.hpp;
/// NUMERIC §2). compare() measures, for a realised value x (a double) against a reference ref,
///
///   absolute  RU53(RN256(|x − ref|))                       (ErrorPair::absolute)
///   relative  |RN53(RN64(RN256(|x − ref|) / ref))|         (ErrorPair::relative; +inf when
///                                                            only ref is 0)
///   ulps      RN53(RN256(|x − ref|) · 2^-e), e = ulp_T(round_T(ref))   (CompareStats::ulps)
///
/// in MPFR (RNk: to nearest-even at k bits, RU53: upwards to a double). Here the same numbers
/// come from error-free transforms in binary64 (TwoSum, an FMA remainder of the division;
/// Muller et al., Handbook of Floating-Point Arithmetic 2nd ed. §4.3–4.4) when every real in the
/// reference's enclosure gives the same result with every intermediate rounding above: ref is
/// known as a double-double r within `error`, the difference and the quotient are carried as
/// double-doubles with bounds on their errors, and a rounding is decided only when the whole
/// interval lies at a margin from every rounding boundary (one ulp of a double for RU53, the
/// midpoints for RN53, with room for RN64's and RN256's own roundings). Otherwise the answer is
/// nullopt and compare() does the entry in MPFR, so the results are MPFR's bit for bit
/// (tests/attention/test_compare_fast.cpp checks both on boundary cases and random ones).
#include <optional>

#include "numeric/binary64_rounding.hpp"
#include "numeric/format.hpp"
#include "numeric/trig/double_double.hpp"

namespace ropesim::attention::detail {

/// A real reference known to lie within `error` (absolute, ≥ 0) of r.hi + r.lo: a double
/// (r.lo = 0, error = 0: the reference exactly), or an enclosure of cos θi, sin θi or θi.
struct EnclosedReference {
  numeric::DoubleDouble r;
  double error = 0;
};

/// compare()'s absolute and relative error of x against the reference, and whether x ≠ ref.
struct FastErrors {
  double absolute = 0;
  double relative = 0;
  bool differs = false;
};

/// The errors of a finite x against `ref` when they are the same for every real in the
/// enclosure (and then MPFR's), else nullopt. Never throws.
std::optional<FastErrors> fast_errors(double x, const EnclosedReference& ref);

/// The table format T of the ulps, for fast_ulps: usable() when round_T of doubles is exact
/// by Binary64Rounding (a floating, IEEE-style format that fits a double; round-to-nearest-even).
class FastUlpFormat {
 public:
  explicit FastUlpFormat(const numeric::Format& t);
  bool usable() const { return usable_; }
  /// compare()'s ulps of x against the reference (inner nullopt: round_T(ref) is not finite,
  /// no ulps), or nullopt (outer) when the enclosure does not decide it. Precondition: usable().
  std::optional<std::optional<double>> ulps(double x, const EnclosedReference& ref) const;

 private:
  numeric::Binary64Rounding round_;
  int precision_ = 53, emin_ = -1022;
  bool usable_ = false;
};

/// The enclosure s·ref of a scaled reference (s a double, exactly the schedule's attention
/// factor): r = s·ref.r as a double-double, error |s|·ref.error plus the product's rounding.
EnclosedReference scaled(const EnclosedReference& ref, double s);

}  // namespace ropesim::attention::detail
