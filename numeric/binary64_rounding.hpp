#pragma once
/// Rounding exact doubles into a format F, and the binary64 fast path for + − × ÷ √ that
/// innocuous double rounding makes exact (NUMERIC §2).
#include <bit>
#include <cmath>
#include <cstdint>

#include "numeric/format.hpp"
#include "numeric/rounding.hpp"

namespace ropesim::numeric {

/// round_F under round-to-nearest-even for values held in a double, and the domain in which
/// computing + − × ÷ √ of elements of F in binary64 and then rounding into F is exact.
///
/// Two domains, both decided from (F, rounding) at construction:
///
/// * fast_rounding(): `round(x)` equals the engines' correctly rounded conversion of every
///   exact double x into F. Requires round-to-nearest-even, a floating format with every
///   value a double (`fits_double()`: p ≤ 53, quanta ≥ 2^-1074, emax ≤ 1023), subnormals on,
///   overflow to ±inf (`has_infinity`), NaN present and no reserved codes, so that F is the
///   IEEE-style set of (p, emin, emax) numbers that `round` assumes. No exponent limit is
///   needed: x is exact, so this is a single rounding.
///
/// * fast_arithmetic(): fast_rounding() and either F is binary64 itself (binary64's own
///   operations are the correctly rounded ones and `round` is the identity), or p ≤ 25 and
///   -400 ≤ emin, emax ≤ 400. Then for elements a, b of F held in doubles,
///   `round(a ∘ b)` with ∘ ∈ {+, −, ×, ÷} evaluated in binary64 (round-to-nearest-even, no FMA
///   contraction: the build uses -ffp-contract=off), and `round(std::sqrt(a))`, are the
///   correctly rounded results in F, special values (±0, ±inf, NaN) included.
///
/// Why (NUMERIC §2): rounding to p' bits and then to p bits, both to nearest, gives the
/// correctly rounded p-bit result for inputs that are p-bit numbers ("innocuous double
/// rounding", Figueroa, SIGNUM Newsletter 30(3) 1995; machine-checked by Roux, J. Formalized
/// Reasoning 7(1) 2014, Flocq's Double_rounding.v) when p' ≥ 2p + 1 for + − × ÷ (× and ÷
/// already for p' ≥ 2p) and p' ≥ 2p + 2 for √. With p' = 53 all five hold for p ≤ 25
/// (2·25 + 2 = 52). Roux proves it also for formats with gradual underflow (F's subnormals),
/// provided the intermediate format's own underflow threshold lies far enough below the
/// results; and the theorem knows nothing of overflow. Hence the exponent limits: non-zero
/// elements of F then have magnitudes in [2^(emin-p+1), 2^(emax+1)) ⊆ [2^-424, 2^401), so
/// non-zero products lie in [2^-848, 2^802), quotients in (2^-825, 2^825), sums and
/// differences (multiples of 2^(emin-p+1)) in [2^-424, 2^402) and roots in [2^-212, 2^201):
/// all inside binary64's normal range, where the first rounding is a true 53-bit rounding —
/// no binary64 subnormal grid (which has fewer than 53 bits and breaks the 2p + 2 margin) and
/// no binary64 overflow. Overflow in F is then decided right: the double rounding is
/// innocuous for the p-bit rounding with unbounded exponent, and F overflows to ±inf exactly
/// when that rounding exceeds max finite, which `round` tests after rounding. The tests
/// (tests/numeric/test_binary64_rounding.cpp) cross-check both domains against
/// numeric::mpfr_engine() bit for bit.
///
/// Not covered (use the engine): fma, sums of more than two terms, exp/log/cos/sin, directed
/// or ties-away rounding, saturating formats, formats without subnormals, fixed point.
class Binary64Rounding {
 public:
  /// Decides both domains for F under `rounding`; never throws (outside the domains the
  /// object only answers false).
  Binary64Rounding(const Format& format, Rounding rounding);

  /// True when `round` is round_F of exact doubles (see the class comment).
  bool fast_rounding() const { return fast_rounding_; }
  /// True when + − × ÷ √ of elements of F in binary64 followed by `round` are exact.
  bool fast_arithmetic() const { return fast_arithmetic_; }
  /// True when F is binary64 under round-to-nearest-even (`round` is then the identity).
  bool is_binary64() const { return binary64_; }
  /// Largest finite element of F as a double (fast_rounding() only; 0 otherwise).
  double max_finite() const { return max_finite_; }

  /// round_F(x) for an exact double x, round-to-nearest-even, overflow to ±inf; ±0, ±inf and
  /// NaN are returned as they are, and a negative x that rounds to zero gives -0.
  /// Precondition: fast_rounding() (otherwise the result is meaningless).
  double round(double x) const {
    if (binary64_) return x;
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
    const int biased = static_cast<int>((bits >> 52) & 0x7ff);
    if (biased == 0x7ff || x == 0.0) return x;  // ±inf, NaN, ±0
    // e = floor(log2 |x|); subnormal doubles (rare here) through ilogb
    const int e = biased == 0 ? std::ilogb(x) : biased - 1023;
    if (e > emax_) return std::copysign(HUGE_VAL, x);  // |x| ≥ 2^(emax+1) > max + ulp/2
    // quantum 2^q of F at |x|: ulp in the binade of x, or the subnormal quantum below 2^emin
    const int q = (e > emin_ ? e : emin_) - (precision_ - 1);
    double r;
    if (add_magic_) {
      // M = 1.5·2^(q+52) (a normal double: q ≥ -1074). |x| < 2^(q+p) ≤ 2^(q+51), so x + M
      // lies in (2^(q+52), 2^(q+53)] where binary64's spacing is 2^q: RN(x + M) − M is x
      // rounded to a multiple of 2^q, ties to even (M/2^q = 3·2^51 is even), and the
      // subtraction is exact. q + 53 ≤ 1023 keeps x + M finite (checked at construction).
      const double m = std::bit_cast<double>((static_cast<std::uint64_t>(q + 52 + 1023) << 52) |
                                             (std::uint64_t{1} << 51));
      r = (x + m) - m;
    } else {
      // |x|·2^-q < 2^p is exact (a power-of-two scaling inside binary64's range); nearbyint
      // rounds to nearest-even in the default floating-point environment, which ropesim
      // never changes; scaling back is exact or overflows to inf (> max finite below).
      r = std::ldexp(std::nearbyint(std::ldexp(x, -q)), q);
    }
    if (std::fabs(r) > max_finite_) return std::copysign(HUGE_VAL, x);
    return std::copysign(r, x);
  }

  /// round_F(a + b), round_F(a − b), round_F(a · b), round_F(a / b), round_F(√a) for elements
  /// a, b of F held in doubles. Precondition: fast_arithmetic().
  double add(double a, double b) const { return round(a + b); }
  double sub(double a, double b) const { return round(a - b); }
  double mul(double a, double b) const { return round(a * b); }
  double div(double a, double b) const { return round(a / b); }
  double sqrt(double a) const { return round(std::sqrt(a)); }

 private:
  int precision_ = 53;
  int emin_ = -1022;
  int emax_ = 1023;
  double max_finite_ = 0;
  bool fast_rounding_ = false;
  bool fast_arithmetic_ = false;
  bool binary64_ = false;
  bool add_magic_ = false;  // round with the 1.5·2^(q+52) addition (p ≤ 51, emax ≤ 969 + p)
};

}  // namespace ropesim::numeric
