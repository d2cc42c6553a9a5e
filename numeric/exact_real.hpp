#pragma once
/// Exact real numbers for RoPE angles (THEORY §3): rationals, powers β^q of rationals, π, and
/// the field operations between them, each approximable to any precision with a proven error
/// bound (interval arithmetic with directed MPFR rounding), so that they can feed
/// RealApproximation and Ziv rounding (NUMERIC §2).
#include <gmpxx.h>
#include <mpfr.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "numeric/engine.hpp"

namespace ropesim::numeric {

/// A proven enclosure of a real x: sets [lo, hi] (equal precisions P) so that lo ≤ x ≤ hi,
/// with a width that shrinks like 2^-P as P grows (directed rounding at every step).
using Enclosure = std::function<void(mpfr_ptr lo, mpfr_ptr hi)>;

/// The one way ropesim turns a proven enclosure of an irrational real into Ziv's oracle
/// (numeric::RealApproximation, NUMERIC §2): at working precisions prec + 32, doubling, the
/// midpoint of an enclosure that does not straddle 0, with the half-width rounded up in ulps of
/// the approximation (at least 1: the oracle never claims exactness, so x must not be exactly
/// representable — round rationals with from_rational). Arithmetic::round_real(oracle) then
/// rounds x into F. Throws std::runtime_error (naming `what`) if the enclosure is still wider
/// than 2^20 ulps at 2^18 bits.
RealApproximation enclosure_oracle(Enclosure enclose, std::string what);

namespace detail {
struct ExactNode;
}

/// An exact real number given symbolically: a rational q, c·β^e (c, β, e rational, β > 0),
/// q·π, or a sum / difference / product / quotient of such numbers. Immutable value type;
/// copies share the expression.
///
/// Every operation is exact; approximations come with a proven enclosure (MPFR directed
/// rounding at every step). Rational values are recognised exactly: β^e is simplified to a
/// rational when it is one (e.g. 10000^(-1/2) = 1/100), so that the oracle can report
/// exactness as RealApproximation requires.
class ExactReal {
 public:
  /// 0.
  ExactReal();
  /// The rational q.
  static ExactReal rational(const mpq_class& q);
  /// q·π.
  static ExactReal pi_times(const mpq_class& q);
  /// c·β^e with β > 0. Throws ropesim::InvalidArgument if β ≤ 0.
  static ExactReal power(const mpq_class& beta, const mpq_class& exponent,
                         const mpq_class& coefficient = 1);

  friend ExactReal operator+(const ExactReal& a, const ExactReal& b);
  friend ExactReal operator-(const ExactReal& a, const ExactReal& b);
  friend ExactReal operator*(const ExactReal& a, const ExactReal& b);
  /// Throws ropesim::InvalidArgument if b is exactly zero.
  friend ExactReal operator/(const ExactReal& a, const ExactReal& b);

  /// The exact rational value when the number is known to be rational (rationals, powers
  /// that simplify, and arithmetic between those); std::nullopt otherwise.
  std::optional<mpq_class> as_rational() const;
  /// True iff the number is exactly 0.
  bool is_zero() const;
  /// If the number is q·π exactly, returns q.
  std::optional<mpq_class> as_pi_multiple() const;

  /// Sets [lo, hi] to an enclosure of the number, computed at the precision of lo and hi
  /// (which must be equal) with directed rounding: lo ≤ x ≤ hi always. The width is a few
  /// ulps at that precision for the expressions ropesim builds (more if a difference cancels).
  void enclose(mpfr_ptr lo, mpfr_ptr hi) const;

  /// The oracle of RealApproximation: sets y (precision prec) to an approximation
  /// and returns a bound on |y - x| in ulps of y (0 iff y == x exactly).
  std::uint64_t approximate(mpfr_ptr y, mpfr_prec_t prec) const;
  /// `approximate` wrapped as a RealApproximation (keeps this number alive).
  RealApproximation oracle() const;

  /// Sign (-1, 0, +1), decided exactly (refining the enclosure). Throws std::runtime_error if
  /// undecided at 65536 bits (only possible for a non-zero number that ropesim cannot
  /// recognise as zero; none of the schedules builds one).
  int sign() const;
  /// Nearest double (for display; never used for decisions).
  double to_double() const;
  /// Readable exact form, e.g. `10000^(-1/64)`, `2*pi*1/3`, `1/2`.
  std::string to_string() const;

 private:
  explicit ExactReal(std::shared_ptr<const detail::ExactNode> node);
  std::shared_ptr<const detail::ExactNode> node_;
};

/// Exact comparison: -1 if a < b, 0 if a == b, +1 if a > b (sign of a - b, see sign()).
int compare(const ExactReal& a, const ExactReal& b);

}  // namespace ropesim::numeric
