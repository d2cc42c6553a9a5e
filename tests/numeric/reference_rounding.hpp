#pragma once
/// An independent second implementation of correctly rounded arithmetic into a Format, used
/// only to verify the numeric module (STYLE: "a test asserts a value that was derived
/// independently ... by a second implementation").
///
/// It shares no code with the MPFR engine: it reads nothing from numeric/ but the plain
/// fields of `Format` and the `Rounding` enumerators. Exact results are GMP rationals
/// (mpq_class) rounded by the rounding code in reference_rounding.cpp; √ is decided by exact
/// integer square roots and exact comparisons; exp/log/cos/sin are evaluated with
/// Boost.Multiprecision `cpp_bin_float` at 400 bits (arguments of cos/sin are reduced with a
/// 1536-bit π first) and then rounded by the same code, refusing to decide when the 400-bit
/// value lies within a relative 2^-380 of a rounding boundary.
///
/// Semantics (IEEE 754-2019 §4.3, §6.3, §7.4, §9.2 and format.hpp):
///  * round a real x ≠ 0: round |x| with the precision p and the quantum 2^(max(e, emin)-p+1)
///    (subnormals on) as if the exponent range were unbounded above; then, if the result
///    exceeds the largest finite value, overflow: to ±inf for round-to-nearest and for the
///    directed mode pointing away from zero, to ±max otherwise; formats without infinity and
///    fixed point saturate to ±max in every mode;
///  * subnormals off: F has nothing between 0 and 2^emin; a value below 2^emin rounds to 0 or
///    2^emin; the round-to-nearest midpoint 2^(emin-1) goes to 0 under nearest_even (MPFR's
///    underflow rule: "rounds to zero ... if less than or equal to half the minimum") and to
///    2^emin under nearest_away;
///  * a non-zero value that rounds to 0 keeps its sign; an exact zero sum of operands of
///    opposite signs (or x - x) is +0, and -0 under downward; sign of a product or quotient is
///    the exclusive or of the operand signs; √(-0) = -0;
///  * fixed point fixed:I.F: quantum 2^-F, |k| ≤ 2^(I+F) - 1, saturating.
#include <gmpxx.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "numeric/format.hpp"
#include "numeric/rounding.hpp"

namespace reference {

using ropesim::numeric::Format;
using ropesim::numeric::Rounding;

/// A number of the extended reals with signed zero: NaN, ±inf or a finite rational.
struct Number {
  enum class Kind { nan, infinity, finite };
  Kind kind = Kind::finite;
  bool negative = false;  ///< sign bit (also for zero and infinity)
  mpq_class magnitude;    ///< |value| when finite (canonical, ≥ 0)

  static Number nan();
  static Number infinity(bool negative);
  static Number zero(bool negative);
  /// A finite value; the sign of zero is +.
  static Number of(const mpq_class& value);
  /// Exact: every double is a dyadic rational.
  static Number from_double(double d);

  bool is_nan() const { return kind == Kind::nan; }
  bool is_inf() const { return kind == Kind::infinity; }
  bool is_finite() const { return kind == Kind::finite; }
  bool is_zero() const { return is_finite() && sgn(magnitude) == 0; }
  /// The signed value of a finite number.
  mpq_class value() const;
  /// Exactly, when the number is a double (every value of a format with p ≤ 53 and range
  /// inside binary64's); NaN for NaN.
  double to_double() const;
  std::string to_string() const;
};

/// Same element: NaN equals NaN, +0 differs from -0.
bool same(const Number& a, const Number& b);

/// Largest finite, smallest positive, smallest positive normal element of f, derived from
/// the fields of f alone.
mpq_class max_finite(const Format& f);
mpq_class min_positive(const Format& f);
mpq_class min_normal(const Format& f);

/// Rounds the exact real `sign · magnitude` (magnitude ≥ 0) into f. A zero magnitude gives a
/// zero with the given sign.
Number round(const Format& f, bool negative, const mpq_class& magnitude, Rounding r);
/// Rounds the exact rational q (an exact zero gives +0).
Number round(const Format& f, const mpq_class& q, Rounding r);

/// Correctly rounded IEEE operations on inputs that are elements of f (or ±inf/NaN).
Number add(const Format& f, const Number& a, const Number& b, Rounding r);
Number sub(const Format& f, const Number& a, const Number& b, Rounding r);
Number mul(const Format& f, const Number& a, const Number& b, Rounding r);
Number div(const Format& f, const Number& a, const Number& b, Rounding r);
Number fma(const Format& f, const Number& a, const Number& b, const Number& c, Rounding r);
Number sqrt(const Format& f, const Number& a, Rounding r);
/// Conversion of a number of any format into f.
Number convert(const Format& f, const Number& a, Rounding r);

/// True when the operation's result in f involves a convention format.hpp leaves open:
/// an infinity (exact, e.g. 1/0, or an infinite input) in a format without infinities, or a
/// zero result in fixed point (whose sign the documentation does not fix).
bool is_convention_dependent(const Format& f, const Number& result_with_infinity);

/// Every element of f in increasing order: -max … -min, -0, +0, min … max, plus ±inf when f
/// has them (first/last). Built from the fields of f; requires a modest number of elements.
std::vector<Number> all_values(const Format& f, bool with_infinities = true);

/// Transcendental functions through Boost.Multiprecision (400-bit cpp_bin_float).
enum class Function { exp, log, cos, sin };
const char* name(Function fn);

/// The value of fn(x) as far as rounding needs it: either exactly known (`exact`: special
/// values, exp(0) = 1, log(1) = 0, cos(0) = 1, sin(±0) = ±0, overflowing or underflowing exp)
/// or a 400-bit approximation `approx` (a dyadic rational) with relative error far below
/// 2^-380.
struct Approximation {
  std::optional<Number> exact;
  mpq_class approx;
};
Approximation approximate(Function fn, const Number& x);

/// Rounds an Approximation into f. Returns nullopt (undecidable at 400 bits) when the
/// interval approx·[1 - 2^-380, 1 + 2^-380] contains a rounding boundary, i.e. when rounding
/// its two ends gives different elements.
std::optional<Number> round_approximation(const Format& f, const Approximation& a, Rounding r);

/// Relative difference |a - b| / |b| of a Boost 400-bit evaluation against an 800-bit one,
/// as log2 (used by a test that checks the 400-bit values are as accurate as assumed).
double log2_relative_error_400_vs_800(Function fn, const Number& x);

}  // namespace reference
