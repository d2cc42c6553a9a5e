#pragma once
/// Correctly rounded operations into any Format (THEORY §1; NUMERIC §1–2).
///
/// Every operation returns the element of F that the exact real result rounds to under the
/// given rounding direction, with IEEE 754 special values (signed zero, ±inf, NaN), overflow to
/// ±inf or saturation as the format says, and subnormals kept or absent as the format says.
/// Engines are interchangeable and must agree bit for bit (STYLE: fplll's FP_NR pattern).
#include <gmpxx.h>
#include <mpfr.h>

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>

#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"

namespace ropesim::numeric {

/// An exact real x given by approximations (Ziv's strategy, NUMERIC §2).
/// `approximate(y, prec)` sets y — already initialised at precision `prec` — to an
/// approximation of x and returns a bound E on its error in units of y's last place
/// (|y - x| ≤ E · 2^(EXP(y) - prec), MPFR's exponent convention); it returns 0 iff y == x.
/// The approximation must tighten as prec grows. x must not be exactly a number of
/// precision p + 1 unless the oracle reports it exactly (true for transcendental values of
/// non-zero algebraic arguments).
using RealApproximation = std::function<std::uint64_t(mpfr_ptr y, mpfr_prec_t prec)>;

/// The operations every engine provides. All take the target format first, the rounding
/// direction last (MPFR's contract). Inputs must be elements of `format` (or ±inf/NaN).
class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;

  virtual Value add(const Format& f, const Value& a, const Value& b, Rounding r) const = 0;
  virtual Value sub(const Format& f, const Value& a, const Value& b, Rounding r) const = 0;
  virtual Value mul(const Format& f, const Value& a, const Value& b, Rounding r) const = 0;
  virtual Value div(const Format& f, const Value& a, const Value& b, Rounding r) const = 0;
  /// a·b + c with one rounding.
  virtual Value fma(const Format& f, const Value& a, const Value& b, const Value& c,
                    Rounding r) const = 0;
  virtual Value sqrt(const Format& f, const Value& a, Rounding r) const = 0;
  virtual Value exp(const Format& f, const Value& a, Rounding r) const = 0;
  virtual Value log(const Format& f, const Value& a, Rounding r) const = 0;
  /// cos and sin of an angle in radians.
  virtual Value cos(const Format& f, const Value& a, Rounding r) const = 0;
  virtual Value sin(const Format& f, const Value& a, Rounding r) const = 0;
  /// {cos a, sin a}, each correctly rounded (one argument reduction for both).
  virtual std::pair<Value, Value> cos_sin(const Format& f, const Value& a, Rounding r) const = 0;

  /// Conversion of a value of any format (or any double/MPFR number) into `f`.
  virtual Value convert(const Format& f, const Value& a, Rounding r) const = 0;
  virtual Value from_integer(const Format& f, const mpz_class& n, Rounding r) const = 0;
  virtual Value from_rational(const Format& f, const mpq_class& q, Rounding r) const = 0;
  /// Rounds the exact MPFR number x (any precision) into f.
  virtual Value from_mpfr(const Format& f, mpfr_srcptr x, Rounding r) const = 0;
  /// Rounds the real given by `x` into f with Ziv's strategy; throws std::runtime_error if
  /// the oracle cannot decide the rounding below `max_precision` bits.
  virtual Value round_real(const Format& f, const RealApproximation& x, Rounding r,
                           mpfr_prec_t max_precision = 1 << 16) const = 0;
};

/// The exact reference engine: MPFR with the emin/emax + mpfr_subnormalize recipe of
/// NUMERIC §1 (round-to-odd at p + 2 bits first for the modes MPFR lacks, Boldo–Melquiond
/// 2008). Thread-safe (MPFR's exponent range is thread-local; the engine restores it).
const Engine& mpfr_engine();

/// The engine used when the caller does not choose one: fast_engine() (numeric/fast_engine.hpp),
/// which gives the same bits as mpfr_engine().
const Engine& default_engine();

/// Next element of F above / below v (IEEE nextUp/nextDown): next_up(max) = +inf when the
/// format has infinities, else max; next_up(-inf) = -max; NaN gives NaN.
Value next_up(const Format& f, const Value& v);
Value next_down(const Format& f, const Value& v);

/// The exponent k of ulp(v) = 2^k in F (Goldberg's definition: the spacing of F at |v|, with
/// ulp(0) the smallest subnormal spacing; for fixed point 2^-F). Throws InvalidArgument for
/// ±inf or NaN.
long ulp_exponent(const Format& f, const Value& v);

/// Calls `visit` on every finite element of F in increasing order (−0 before +0 omitted: zero
/// is visited once as +0). Throws InvalidArgument if F has more than 2^32 finite values or
/// does not fit in a double.
void for_each_finite_value(const Format& f, const std::function<void(const Value&)>& visit);

}  // namespace ropesim::numeric
