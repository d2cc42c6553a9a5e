#pragma once
/// Helpers shared by the numeric tests: moving values between the code under test (Value) and
/// the independent reference (reference::Number), bit comparisons, operand generators, and a
/// bounded mismatch log.
#include <gmpxx.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"
#include "tests/numeric/reference_rounding.hpp"

namespace numeric_test {

using ropesim::numeric::Engine;
using ropesim::numeric::Format;
using ropesim::numeric::Rounding;
using ropesim::numeric::Value;

inline constexpr Rounding all_modes[] = {Rounding::nearest_even, Rounding::nearest_away,
                                         Rounding::toward_zero, Rounding::upward,
                                         Rounding::downward};

inline const char* mode_name(Rounding r) {
  switch (r) {
    case Rounding::nearest_even:
      return "RNE";
    case Rounding::nearest_away:
      return "RNA";
    case Rounding::toward_zero:
      return "RZ";
    case Rounding::upward:
      return "RU";
    case Rounding::downward:
      return "RD";
  }
  return "?";
}

/// The engines under test (the default engine only when it is a different object).
inline std::vector<const Engine*> engines() {
  std::vector<const Engine*> out{&ropesim::numeric::mpfr_engine()};
  if (&ropesim::numeric::default_engine() != out.front()) {
    out.push_back(&ropesim::numeric::default_engine());
  }
  return out;
}

inline std::uint64_t double_bits(double d) {
  std::uint64_t u = 0;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

/// Bit-pattern equality with every NaN equal to every NaN.
inline bool same_double(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return double_bits(a) == double_bits(b);
}

inline std::string hex(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", d);
  return buf;
}

/// Whether every value of f is a double, decided from f's fields alone (not by the code under
/// test): p ≤ 53, smallest quantum ≥ 2^-1074, largest binade ≤ 2^1023.
inline bool representable_in_double(const Format& f) {
  if (f.is_fixed_point()) {
    return f.integer_bits + f.fraction_bits <= 53 && f.integer_bits <= 1023 &&
           f.fraction_bits <= 1074;
  }
  return f.precision <= 53 && f.emin - f.precision + 1 >= -1074 && f.emax <= 1023;
}

/// The reference number of a Value (exact; wide values through mpfr_get_q, which is exact).
inline reference::Number to_number(const Value& v) {
  if (!v.is_wide()) return reference::Number::from_double(v.narrow());
  mpfr_srcptr x = v.wide();
  if (mpfr_nan_p(x)) return reference::Number::nan();
  if (mpfr_inf_p(x)) return reference::Number::infinity(mpfr_signbit(x) != 0);
  if (mpfr_zero_p(x)) return reference::Number::zero(mpfr_signbit(x) != 0);
  mpq_class q;
  mpfr_get_q(q.get_mpq_t(), x);
  return reference::Number::of(q);
}

/// A Value holding the reference number n, narrow when f's values are doubles, wide (an
/// exact MPFR number) otherwise.
inline Value to_value(const Format& f, const reference::Number& n) {
  if (representable_in_double(f)) return Value::from_double_exact(n.to_double());
  mpfr_prec_t prec = f.is_fixed_point() ? f.integer_bits + f.fraction_bits : f.precision;
  if (prec < MPFR_PREC_MIN) prec = MPFR_PREC_MIN;
  mpfr_t x;
  mpfr_init2(x, prec);
  if (n.is_nan()) {
    mpfr_set_nan(x);
  } else if (n.is_inf()) {
    mpfr_set_inf(x, n.negative ? -1 : 1);
  } else if (n.is_zero()) {
    mpfr_set_zero(x, n.negative ? -1 : 1);
  } else {
    // Exact: an element of f has at most `prec` significant bits; checked by the ternary.
    const mpfr_exp_t saved_emin = mpfr_get_emin(), saved_emax = mpfr_get_emax();
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    const int t = mpfr_set_q(x, n.value().get_mpq_t(), MPFR_RNDN);
    mpfr_set_emin(saved_emin);
    mpfr_set_emax(saved_emax);
    if (t != 0) {
      mpfr_clear(x);
      throw std::logic_error("to_value: not an element of the format");
    }
  }
  Value v = Value::from_mpfr_exact(x);
  mpfr_clear(x);
  return v;
}

/// Same element as the reference says: NaN equals NaN, signed zeros differ.
inline bool agrees(const Value& v, const reference::Number& n) {
  return reference::same(to_number(v), n);
}

/// Whether x is an element of f (NaN counts: operations accept it), by the reference.
inline bool is_element(const Format& f, const reference::Number& x) {
  if (x.is_nan()) return true;
  if (x.is_inf()) return !f.is_fixed_point() && f.has_infinity;
  return reference::same(reference::convert(f, x, Rounding::toward_zero), x);
}

inline std::string show(const Value& v) {
  if (!v.is_wide()) return hex(v.narrow());
  return to_number(v).to_string();
}

/// Counts mismatches and keeps the first few descriptions for the report.
struct Mismatches {
  long count = 0;
  long checked = 0;
  std::vector<std::string> examples;
  void add(const std::string& what) {
    ++count;
    if (examples.size() < 12) examples.push_back(what);
  }
  std::string report() const {
    std::ostringstream s;
    s << count << " mismatches in " << checked << " checks";
    for (const auto& e : examples) s << "\n  " << e;
    return s.str();
  }
};

/// Operands of a binary IEEE format with p bits and w exponent bits, taken as a double:
/// random bit patterns, values near 1, subnormals, zeros, infinities, NaN, max, values near
/// the overflow and underflow thresholds; `like` lets a caller ask for operands that cancel.
class OperandGenerator {
 public:
  OperandGenerator(int precision, int exponent_bits, std::uint64_t seed)
      : p_(precision), w_(exponent_bits), rng_(seed) {
    emax_ = (1 << (w_ - 1)) - 1;
    emin_ = 1 - emax_;
  }

  std::mt19937_64& rng() { return rng_; }

  /// A value of the format chosen by category 0-7 (see below); `category < 0` picks one.
  double next(int category = -1) {
    if (category < 0) category = static_cast<int>(rng_() % 8);
    const bool negative = (rng_() & 1) != 0;
    double v = 0;
    switch (category) {
      case 0:  // random bit pattern (every code of the format equally likely)
        return from_bits(p_ + w_ >= 64 ? rng_() : rng_() & ((std::uint64_t{1} << (p_ + w_)) - 1));
      case 1:  // near 1: 1 ± a few ulps, or in [1/2, 4)
        v = 1.0 +
            std::ldexp(static_cast<double>(rng_() % 64), 1 - p_) * ((rng_() & 1) != 0 ? 1 : -0.5);
        if ((rng_() & 3) == 0) v = std::ldexp(significand(), static_cast<int>(rng_() % 3) - 1);
        break;
      case 2:  // subnormal
        v = std::ldexp(static_cast<double>(rng_() % (std::uint64_t{1} << (p_ - 1))),
                       emin_ - p_ + 1);
        break;
      case 3: {  // special values
        const double specials[] = {0.0,
                                   std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN(),
                                   max(),
                                   std::ldexp(1.0, emin_),
                                   std::ldexp(1.0, emin_ - p_ + 1),
                                   1.0,
                                   std::ldexp(1.0, emax_),
                                   max() - std::ldexp(1.0, emax_ - p_ + 1),
                                   std::ldexp(1.0, emin_) - std::ldexp(1.0, emin_ - p_ + 1),
                                   2.0,
                                   0.5};
        v = specials[rng_() % (sizeof specials / sizeof specials[0])];
        break;
      }
      case 4:  // large: top exponents (products and sums overflow)
        v = std::ldexp(significand(), emax_ - static_cast<int>(rng_() % 4));
        break;
      case 5:  // small normal: bottom exponents (products and quotients underflow)
        v = std::ldexp(significand(), emin_ + static_cast<int>(rng_() % 4));
        break;
      case 6:  // half the exponent range: products/quotients of two reach the edges
        v = std::ldexp(significand(), static_cast<int>(rng_() % static_cast<std::uint64_t>(emax_)) *
                                          ((rng_() & 1) != 0 ? 1 : -1));
        break;
      default:  // moderate magnitudes
        v = std::ldexp(significand(), static_cast<int>(rng_() % 41) - 20);
        break;
    }
    return negative ? -v : v;
  }

  /// A value that cancels against x: -x·(1 + k ulp) for small k (or x itself, for a - b).
  double cancelling(double x) {
    if (!std::isfinite(x) || x == 0) return next();
    int e = 0;
    std::frexp(x, &e);
    const int ulp_exp = std::max(e - p_, emin_ - p_ + 1);
    const double k = static_cast<double>(static_cast<int>(rng_() % 9) - 4);
    const double y = x + k * std::ldexp(1.0, ulp_exp);
    return (rng_() & 1) != 0 ? -y : y;
  }

  double max() const { return std::ldexp(2.0 - std::ldexp(1.0, 1 - p_), emax_); }

 private:
  /// A random significand in [1, 2) with p bits.
  double significand() {
    const std::uint64_t frac = rng_() & ((std::uint64_t{1} << (p_ - 1)) - 1);
    return 1.0 + std::ldexp(static_cast<double>(frac), 1 - p_);
  }
  /// Decodes an IEEE bit pattern of the format (sign, w exponent bits, p-1 fraction bits).
  double from_bits(std::uint64_t code) const {
    const std::uint64_t frac = code & ((std::uint64_t{1} << (p_ - 1)) - 1);
    const int biased = static_cast<int>((code >> (p_ - 1)) & ((1u << w_) - 1));
    const bool negative = ((code >> (p_ - 1 + w_)) & 1) != 0;
    double v = 0;
    if (biased == (1 << w_) - 1) {
      v = frac == 0 ? std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::quiet_NaN();
    } else if (biased == 0) {
      v = std::ldexp(static_cast<double>(frac), emin_ - p_ + 1);
    } else {
      v = std::ldexp(static_cast<double>(frac + (std::uint64_t{1} << (p_ - 1))),
                     biased - emax_ - p_ + 1);
    }
    return negative ? -v : v;
  }

  int p_, w_, emin_, emax_;
  std::mt19937_64 rng_;
};

}  // namespace numeric_test
