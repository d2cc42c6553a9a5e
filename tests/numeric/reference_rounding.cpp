// The independent reference (see reference_rounding.hpp). Nothing here calls numeric/*.cpp:
// only the plain fields of Format are read.
#include "tests/numeric/reference_rounding.hpp"

// GCC 12 at -O3 reports false -Warray-bounds positives inside Boost.Multiprecision's cpp_int
// limb loops (inlined from fixed-size cpp_bin_float); they are in Boost, not here. (clang
// has no -Wstringop-overflow and would reject the pragma under -Werror: scripts/sanitize.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#include <boost/math/constants/constants.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace reference {

namespace {

namespace mp = boost::multiprecision;

// ---------------------------------------------------------------- exact dyadic helpers

mpq_class pow2(long k) {
  mpq_class q(1);
  if (k >= 0) {
    mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(k));
  } else {
    mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(-k));
  }
  return q;
}

mpq_class times_pow2(const mpq_class& a, long k) {
  mpq_class q;
  if (k >= 0) {
    mpq_mul_2exp(q.get_mpq_t(), a.get_mpq_t(), static_cast<mp_bitcnt_t>(k));
  } else {
    mpq_div_2exp(q.get_mpq_t(), a.get_mpq_t(), static_cast<mp_bitcnt_t>(-k));
  }
  return q;
}

/// floor(log2 a) for a > 0. With N, D of nb, db bits, a lies in (2^(nb-db-1), 2^(nb-db+1)),
/// so the answer is nb-db or nb-db-1: one exact comparison decides.
long floor_log2(const mpq_class& a) {
  const long nb = static_cast<long>(mpz_sizeinbase(a.get_num_mpz_t(), 2));
  const long db = static_cast<long>(mpz_sizeinbase(a.get_den_mpz_t(), 2));
  const long e = nb - db;
  return a >= pow2(e) ? e : e - 1;
}

/// Direction of rounding of the magnitude.
enum class Dir { nearest_even, nearest_away, to_zero, away };

Dir magnitude_direction(bool negative, Rounding r) {
  switch (r) {
    case Rounding::nearest_even:
      return Dir::nearest_even;
    case Rounding::nearest_away:
      return Dir::nearest_away;
    case Rounding::toward_zero:
      return Dir::to_zero;
    case Rounding::upward:
      return negative ? Dir::to_zero : Dir::away;
    case Rounding::downward:
      return negative ? Dir::away : Dir::to_zero;
  }
  throw std::logic_error("reference: bad rounding");
}

/// Rounds a ≥ 0 to an integer multiple of 2^q in direction d: returns the multiple k.
mpz_class round_to_quantum(const mpq_class& a, long q, Dir d) {
  const mpq_class scaled = times_pow2(a, -q);
  mpz_class n;
  mpz_fdiv_q(n.get_mpz_t(), scaled.get_num_mpz_t(), scaled.get_den_mpz_t());
  const mpq_class frac = scaled - mpq_class(n);
  if (sgn(frac) == 0) return n;
  bool up = false;
  switch (d) {
    case Dir::to_zero:
      up = false;
      break;
    case Dir::away:
      up = true;
      break;
    case Dir::nearest_even: {
      const int c = cmp(frac, mpq_class(1, 2));
      up = c > 0 || (c == 0 && mpz_odd_p(n.get_mpz_t()));
      break;
    }
    case Dir::nearest_away:
      up = cmp(frac, mpq_class(1, 2)) >= 0;
      break;
  }
  if (up) ++n;
  return n;
}

bool has_infinity(const Format& f) { return !f.is_fixed_point() && f.has_infinity; }

Number overflow(const Format& f, bool negative, Dir d) {
  if (!has_infinity(f) || d == Dir::to_zero) {
    Number n = Number::of(max_finite(f));
    n.negative = negative;
    return n;
  }
  return Number::infinity(negative);
}

Number make(bool negative, const mpq_class& magnitude) {
  Number n = Number::of(magnitude);
  n.negative = negative;
  return n;
}

}  // namespace

// ---------------------------------------------------------------- Number

Number Number::nan() {
  Number n;
  n.kind = Kind::nan;
  return n;
}

Number Number::infinity(bool negative) {
  Number n;
  n.kind = Kind::infinity;
  n.negative = negative;
  return n;
}

Number Number::zero(bool negative) {
  Number n;
  n.negative = negative;
  return n;
}

Number Number::of(const mpq_class& value) {
  Number n;
  n.negative = sgn(value) < 0;
  n.magnitude = abs(value);
  return n;
}

Number Number::from_double(double d) {
  if (std::isnan(d)) return nan();
  if (std::isinf(d)) return infinity(std::signbit(d));
  if (d == 0) return zero(std::signbit(d));
  // d = m · 2^(e - 53) with integer m < 2^53: exact.
  int e = 0;
  const double m = std::frexp(std::fabs(d), &e);
  const auto mi = static_cast<unsigned long>(std::ldexp(m, 53));
  Number n = make(std::signbit(d), times_pow2(mpq_class(mpz_class(mi)), e - 53));
  return n;
}

mpq_class Number::value() const { return negative ? mpq_class(-magnitude) : magnitude; }

double Number::to_double() const {
  if (is_nan()) return std::numeric_limits<double>::quiet_NaN();
  if (is_inf()) return negative ? -HUGE_VAL : HUGE_VAL;
  // mpq_get_d truncates; exact when the value is a double (checked; GMP traps on
  // converting an out-of-range double back, so the range is checked first).
  if (sgn(magnitude) != 0 && (floor_log2(magnitude) > 1023 || floor_log2(magnitude) < -1074)) {
    throw std::logic_error("reference: value is not a double");
  }
  const double d = magnitude.get_d();
  if (mpq_class(d) != magnitude) throw std::logic_error("reference: value is not a double");
  return negative ? -d : d;
}

std::string Number::to_string() const {
  if (is_nan()) return "NaN";
  if (is_inf()) return negative ? "-inf" : "+inf";
  std::ostringstream s;
  s << (negative ? "-" : "+");
  const mpz_class& den = magnitude.get_den();
  if (sgn(magnitude) != 0 && mpz_popcount(den.get_mpz_t()) == 1) {
    // dyadic: odd · 2^k
    mpz_class odd = magnitude.get_num();
    const long trailing = static_cast<long>(mpz_scan1(odd.get_mpz_t(), 0));
    odd >>= trailing;
    const long k = trailing - static_cast<long>(mpz_sizeinbase(den.get_mpz_t(), 2)) + 1;
    s << odd.get_str();
    if (k != 0) s << "*2^" << k;
  } else {
    s << magnitude.get_str();
  }
  if (sgn(magnitude) != 0) {
    const long e = floor_log2(magnitude);
    if (e > -1000 && e < 1000) s << " (~" << magnitude.get_d() << ")";
  }
  return s.str();
}

bool same(const Number& a, const Number& b) {
  if (a.kind != b.kind) return false;
  if (a.is_nan()) return true;
  if (a.negative != b.negative) return false;
  return a.is_inf() || a.magnitude == b.magnitude;
}

// ---------------------------------------------------------------- format quantities

mpq_class max_finite(const Format& f) {
  if (f.is_fixed_point()) {
    // (2^(I+F) - 1) · 2^-F
    return times_pow2(mpq_class(pow2(f.integer_bits + f.fraction_bits) - 1), -f.fraction_bits);
  }
  // Largest significand of the top binade minus the reserved codes, times its quantum.
  const mpq_class m = pow2(f.precision) - 1 - f.reserved_top_codes;
  return times_pow2(m, f.emax - f.precision + 1);
}

mpq_class min_positive(const Format& f) {
  if (f.is_fixed_point()) return pow2(-f.fraction_bits);
  return f.subnormals ? pow2(f.emin - f.precision + 1) : pow2(f.emin);
}

mpq_class min_normal(const Format& f) {
  if (f.is_fixed_point()) return pow2(-f.fraction_bits);
  return pow2(f.emin);
}

// ---------------------------------------------------------------- rounding

Number round(const Format& f, bool negative, const mpq_class& magnitude, Rounding r) {
  if (sgn(magnitude) < 0) throw std::logic_error("reference: negative magnitude");
  if (sgn(magnitude) == 0) return Number::zero(negative);
  const Dir d = magnitude_direction(negative, r);
  if (f.is_fixed_point()) {
    const mpz_class k = round_to_quantum(magnitude, -f.fraction_bits, d);
    if (k > pow2(f.integer_bits + f.fraction_bits) - 1) return overflow(f, negative, d);
    return make(negative, times_pow2(mpq_class(k), -f.fraction_bits));
  }
  const long e = floor_log2(magnitude);
  if (!f.subnormals && e < f.emin) {
    // F has only 0 and 2^emin here.
    const int c = cmp(magnitude, pow2(f.emin - 1));
    bool up = false;
    switch (d) {
      case Dir::to_zero:
        up = false;
        break;
      case Dir::away:
        up = true;
        break;
      case Dir::nearest_even:  // the midpoint goes to 0 (MPFR's underflow rule)
        up = c > 0;
        break;
      case Dir::nearest_away:
        up = c >= 0;
        break;
    }
    return up ? make(negative, pow2(f.emin)) : Number::zero(negative);
  }
  const long big_e = std::max<long>(e, f.emin);
  const long q = big_e - f.precision + 1;
  const mpz_class m = round_to_quantum(magnitude, q, d);
  const mpq_class v = times_pow2(mpq_class(m), q);
  if (v > max_finite(f)) return overflow(f, negative, d);
  if (sgn(v) == 0) return Number::zero(negative);
  return make(negative, v);
}

Number round(const Format& f, const mpq_class& q, Rounding r) {
  return round(f, sgn(q) < 0, abs(q), r);
}

// ---------------------------------------------------------------- operations

namespace {

Number negated(Number a) {
  a.negative = !a.negative;
  return a;
}

/// The sign rule for an exact zero sum (IEEE 754-2019 §6.3).
Number zero_sum(bool a_negative, bool b_negative, bool both_zero, Rounding r) {
  if (both_zero && a_negative == b_negative) return Number::zero(a_negative);
  return Number::zero(r == Rounding::downward);
}

}  // namespace

Number add(const Format& f, const Number& a, const Number& b, Rounding r) {
  if (a.is_nan() || b.is_nan()) return Number::nan();
  if (a.is_inf() && b.is_inf()) {
    return a.negative == b.negative ? a : Number::nan();
  }
  if (a.is_inf()) return a;
  if (b.is_inf()) return b;
  const mpq_class s = a.value() + b.value();
  if (sgn(s) == 0) return zero_sum(a.negative, b.negative, a.is_zero() && b.is_zero(), r);
  return round(f, s, r);
}

Number sub(const Format& f, const Number& a, const Number& b, Rounding r) {
  return add(f, a, negated(b), r);
}

Number mul(const Format& f, const Number& a, const Number& b, Rounding r) {
  if (a.is_nan() || b.is_nan()) return Number::nan();
  const bool neg = a.negative != b.negative;
  if (a.is_inf() || b.is_inf()) {
    if (a.is_zero() || b.is_zero()) return Number::nan();
    return Number::infinity(neg);
  }
  return round(f, neg, a.magnitude * b.magnitude, r);
}

Number div(const Format& f, const Number& a, const Number& b, Rounding r) {
  if (a.is_nan() || b.is_nan()) return Number::nan();
  const bool neg = a.negative != b.negative;
  if (a.is_inf() && b.is_inf()) return Number::nan();
  if (a.is_inf()) return Number::infinity(neg);
  if (b.is_inf()) return Number::zero(neg);
  if (b.is_zero()) return a.is_zero() ? Number::nan() : Number::infinity(neg);
  return round(f, neg, a.magnitude / b.magnitude, r);
}

Number fma(const Format& f, const Number& a, const Number& b, const Number& c, Rounding r) {
  if (a.is_nan() || b.is_nan() || c.is_nan()) return Number::nan();
  const bool product_negative = a.negative != b.negative;
  if (a.is_inf() || b.is_inf()) {
    if (a.is_zero() || b.is_zero()) return Number::nan();
    if (c.is_inf() && c.negative != product_negative) return Number::nan();
    return Number::infinity(product_negative);
  }
  if (c.is_inf()) return c;
  const mpq_class product = a.value() * b.value();
  const mpq_class s = product + c.value();
  if (sgn(s) == 0) {
    return zero_sum(product_negative, c.negative, sgn(product) == 0 && c.is_zero(), r);
  }
  return round(f, s, r);
}

Number sqrt(const Format& f, const Number& a, Rounding r) {
  if (a.is_nan()) return Number::nan();
  if (a.is_zero()) return a;  // √(±0) = ±0
  if (a.negative) return Number::nan();
  if (a.is_inf()) return a;
  // Every rounding boundary of F (elements, midpoints, the overflow threshold max + ulp/2,
  // the flush threshold 2^(emin-1)) is a multiple of 2^(qmin - 1), qmin the smallest
  // quantum. With k = 2 - qmin, s = floor(√a · 2^k) = isqrt(floor(a · 4^k)) (floor(√⌊y⌋) =
  // floor(√y)), so √a lies in [s, s + 1) · 2^-k, an interval no boundary enters strictly:
  // if s² = a · 4^k exactly, √a = s · 2^-k; otherwise √a rounds like (s + 1/2) · 2^-k.
  const long qmin = f.is_fixed_point() ? -f.fraction_bits : f.emin - f.precision + 1;
  const long k = 2 - qmin;
  const mpq_class y = times_pow2(a.magnitude, 2 * k);
  mpz_class fl;
  mpz_fdiv_q(fl.get_mpz_t(), y.get_num_mpz_t(), y.get_den_mpz_t());
  mpz_class s;
  mpz_sqrt(s.get_mpz_t(), fl.get_mpz_t());
  const bool exact = mpq_class(mpz_class(s * s)) == y;
  const mpq_class candidate =
      exact ? times_pow2(mpq_class(s), -k) : times_pow2(mpq_class(mpz_class(2 * s + 1)), -k - 1);
  return round(f, false, candidate, r);
}

Number convert(const Format& f, const Number& a, Rounding r) {
  if (a.is_nan() || a.is_inf() || a.is_zero()) return a;
  return round(f, a.negative, a.magnitude, r);
}

bool is_convention_dependent(const Format& f, const Number& result) {
  if (result.is_inf() && !has_infinity(f)) return true;
  if (f.is_fixed_point() && result.is_zero()) return true;
  return false;
}

std::vector<Number> all_values(const Format& f, bool with_infinities) {
  std::vector<mpq_class> positive;
  if (f.is_fixed_point()) {
    const long top = (1L << (f.integer_bits + f.fraction_bits)) - 1;
    for (long k = 1; k <= top; ++k) positive.push_back(times_pow2(mpq_class(k), -f.fraction_bits));
  } else {
    const long half = 1L << (f.precision - 1);
    const long full = 1L << f.precision;
    if (f.subnormals) {
      for (long m = 1; m < half; ++m) {
        positive.push_back(times_pow2(mpq_class(m), f.emin - f.precision + 1));
      }
    }
    for (long e = f.emin; e <= f.emax; ++e) {
      const long last = e == f.emax ? full - 1 - f.reserved_top_codes : full - 1;
      for (long m = half; m <= last; ++m) {
        positive.push_back(times_pow2(mpq_class(m), e - f.precision + 1));
      }
    }
  }
  std::vector<Number> out;
  out.reserve(2 * positive.size() + 4);
  if (with_infinities && has_infinity(f)) out.push_back(Number::infinity(true));
  for (auto it = positive.rbegin(); it != positive.rend(); ++it) out.push_back(make(true, *it));
  out.push_back(Number::zero(true));
  out.push_back(Number::zero(false));
  for (const auto& v : positive) out.push_back(make(false, v));
  if (with_infinities && has_infinity(f)) out.push_back(Number::infinity(false));
  return out;
}

// ---------------------------------------------------------------- transcendental functions

const char* name(Function fn) {
  switch (fn) {
    case Function::exp:
      return "exp";
    case Function::log:
      return "log";
    case Function::cos:
      return "cos";
    case Function::sin:
      return "sin";
  }
  return "?";
}

namespace {

using Wide = mp::number<mp::cpp_bin_float<1536, mp::digit_base_2>, mp::et_off>;
using Big400 = mp::number<mp::cpp_bin_float<400, mp::digit_base_2>, mp::et_off>;
using Big800 = mp::number<mp::cpp_bin_float<800, mp::digit_base_2>, mp::et_off>;

const Wide& wide_pi() {
  static const Wide pi = boost::math::constants::pi<Wide>();
  return pi;
}
const Wide& wide_ln2() {
  static const Wide ln2 = boost::math::constants::ln_two<Wide>();
  return ln2;
}

/// The exact dyadic rational of a binary cpp_bin_float.
template <class T>
mpq_class exact_rational(const T& y) {
  if (y == 0) return mpq_class(0);
  int e = 0;
  T m = mp::frexp(y, &e);  // y = m · 2^e, 1/2 ≤ |m| < 1
  constexpr int digits = std::numeric_limits<T>::digits;
  m = mp::ldexp(m, digits);  // an integer
  const bool negative = m < 0;
  const mp::cpp_int mi = mp::abs(m).template convert_to<mp::cpp_int>();
  mpz_class z(mi.str(0, std::ios_base::hex), 16);
  if (negative) z = -z;
  return times_pow2(mpq_class(z), e - digits);
}

/// fn(x) at the working precision of T for a finite non-zero double x whose result is not
/// exact; arguments are reduced in 1536-bit arithmetic with a 1536-bit π or ln 2 so that the
/// reduced argument is accurate to far more than T's precision.
template <class T>
mpq_class evaluate(Function fn, double x) {
  switch (fn) {
    case Function::exp: {
      // exp(x) = 2^n · exp(x - n ln 2), |x - n ln 2| ≤ ln2/2 (x exact in Wide).
      const Wide wx(x);
      const Wide n = mp::round(wx / wide_ln2());
      const Wide reduced = wx - n * wide_ln2();
      const T y = mp::exp(T(reduced));
      return times_pow2(exact_rational(y), n.convert_to<long>());
    }
    case Function::log: {
      // x = m · 2^e with m in [1/√2, √2): log x = log m + e ln 2; for e ≠ 0 the two terms
      // cannot cancel (|e ln 2| ≥ 0.69 > |log m| ≤ 0.35).
      int e = 0;
      double m = std::frexp(x, &e);  // m in [1/2, 1)
      if (m < 0.70710678118654752440) {
        m *= 2;
        --e;
      }
      const T lm = mp::log(T(m));
      if (e == 0) return exact_rational(lm);
      const Wide total = Wide(lm) + Wide(e) * wide_ln2();
      return exact_rational(T(total));
    }
    case Function::cos:
    case Function::sin: {
      // x = k·π/2 + r with |r| ≤ π/4 (1536-bit π: r keeps > 400 correct bits for |x| < 2^1024).
      const Wide wx(x);
      const Wide half_pi = wide_pi() / 2;
      const Wide k = mp::round(wx / half_pi);
      const T r(wx - k * half_pi);
      const Wide k4 = k - 4 * mp::floor(k / 4);
      const int quadrant = k4.convert_to<int>();
      const bool is_sin = fn == Function::sin;
      // sin(r + qπ/2): sin, cos, -sin, -cos; cos(r + qπ/2): cos, -sin, -cos, sin.
      const bool use_sin = is_sin ? (quadrant % 2 == 0) : (quadrant % 2 == 1);
      const bool negate = is_sin ? (quadrant >= 2) : (quadrant == 1 || quadrant == 2);
      T y = use_sin ? mp::sin(r) : mp::cos(r);
      if (negate) y = -y;
      return exact_rational(y);
    }
  }
  throw std::logic_error("reference: bad function");
}

/// exp(x) for |x| > 2^14 is beyond every format the tests use (|emin|, emax < 10^4): a
/// stand-in 2^±20000 rounds the same way.
constexpr double exp_argument_limit = 16384.0;

}  // namespace

Approximation approximate(Function fn, const Number& x) {
  Approximation a;
  if (x.is_nan()) {
    a.exact = Number::nan();
    return a;
  }
  switch (fn) {
    case Function::exp:
      if (x.is_inf()) {
        a.exact = x.negative ? Number::zero(false) : Number::infinity(false);
      } else if (x.is_zero()) {
        a.exact = Number::of(1);
      } else if (cmp(x.magnitude, exp_argument_limit) > 0) {
        a.exact = Number::of(pow2(x.negative ? -20000 : 20000));
      }
      break;
    case Function::log:
      if (x.is_zero()) {
        a.exact = Number::infinity(true);
      } else if (x.negative) {
        a.exact = Number::nan();
      } else if (x.is_inf()) {
        a.exact = x;
      } else if (x.magnitude == 1) {
        a.exact = Number::zero(false);
      }
      break;
    case Function::cos:
      if (x.is_inf()) {
        a.exact = Number::nan();
      } else if (x.is_zero()) {
        a.exact = Number::of(1);
      }
      break;
    case Function::sin:
      if (x.is_inf()) {
        a.exact = Number::nan();
      } else if (x.is_zero()) {
        a.exact = x;
      }
      break;
  }
  if (a.exact) return a;
  a.approx = evaluate<Big400>(fn, x.to_double());
  return a;
}

std::optional<Number> round_approximation(const Format& f, const Approximation& a, Rounding r) {
  if (a.exact) {
    if (a.exact->is_finite() && !a.exact->is_zero()) {
      return round(f, a.exact->negative, a.exact->magnitude, r);
    }
    return a.exact;
  }
  const bool negative = sgn(a.approx) < 0;
  const mpq_class m = abs(a.approx);
  const mpq_class eps = pow2(-380);
  const Number lo = round(f, negative, m * (1 - eps), r);
  const Number hi = round(f, negative, m * (1 + eps), r);
  if (!same(lo, hi)) return std::nullopt;
  return lo;
}

double log2_relative_error_400_vs_800(Function fn, const Number& x) {
  const mpq_class a = evaluate<Big400>(fn, x.to_double());
  const mpq_class b = evaluate<Big800>(fn, x.to_double());
  if (a == b) return -std::numeric_limits<double>::infinity();
  const mpq_class rel = abs(a - b) / abs(b);
  return std::log2(rel.get_d());
}

}  // namespace reference
