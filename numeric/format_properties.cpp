#include "numeric/format_properties.hpp"

#include <cmath>

#include "numeric/engine.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::numeric {

namespace {

Value exact_value(const Format& f, mpfr_srcptr x) {
  if (f.fits_double()) return Value::from_double_exact(mpfr_get_d(x, MPFR_RNDN));
  return Value::from_mpfr_exact(x);
}

Value power_of_two(const Format& f, long exponent) {
  Mpfr x(2);
  mpfr_set_ui_2exp(x, 1, exponent, MPFR_RNDN);
  return exact_value(f, x);
}
}  // namespace

Value max_finite(const Format& f) {
  if (f.is_fixed_point()) {
    // (2^(I+F) - 1) · 2^-F
    Mpfr x(f.precision + 1);
    mpfr_set_ui_2exp(x, 1, f.precision, MPFR_RNDN);
    mpfr_sub_ui(x, x, 1, MPFR_RNDN);
    mpfr_div_2si(x, x, f.fraction_bits, MPFR_RNDN);
    return exact_value(f, x);
  }
  // (2^p - 1 - reserved) · 2^(emax - p + 1)
  Mpfr x(f.precision + 1);
  mpfr_set_ui_2exp(x, 1, f.precision, MPFR_RNDN);
  mpfr_sub_ui(x, x, 1 + static_cast<unsigned long>(f.reserved_top_codes), MPFR_RNDN);
  mpfr_mul_2si(x, x, f.emax - f.precision + 1, MPFR_RNDN);
  return exact_value(f, x);
}

Value min_positive(const Format& f) {
  if (f.is_fixed_point()) return power_of_two(f, -f.fraction_bits);
  return power_of_two(f, f.subnormals ? f.emin - f.precision + 1 : f.emin);
}

Value min_normal(const Format& f) {
  if (f.is_fixed_point()) return power_of_two(f, -f.fraction_bits);
  return power_of_two(f, f.emin);
}

long unit_roundoff_exponent(const Format& f, Rounding r) {
  const long shift = is_nearest(r) ? 1 : 0;
  if (f.is_fixed_point()) return -static_cast<long>(f.fraction_bits) - shift;
  return 1 - static_cast<long>(f.precision) - shift;
}

double unit_roundoff(const Format& f, Rounding r) {
  const int shift = is_nearest(r) ? 1 : 0;
  if (f.is_fixed_point()) return std::ldexp(1.0, -f.fraction_bits - shift);
  return std::ldexp(1.0, 1 - f.precision - shift);
}

std::optional<Value> f_large(const Format& f, Rounding r) {
  const Engine& engine = default_engine();
  auto underflows = [&](const Value& x) {
    Mpfr negative(f.is_fixed_point() ? f.precision + 1 : f.precision);
    x.to_mpfr(negative);
    mpfr_neg(negative, negative, MPFR_RNDN);
    return engine.exp(f, exact_value(f, negative), r).is_zero();
  };
  Value hi = max_finite(f);
  if (!underflows(hi)) return std::nullopt;
  // Invariant: lo does not underflow, hi does; exp(-x) is monotone, so is its rounding.
  Value lo;  // +0: exp(-0) = 1
  // First the binade, by doubling from 1: f_large ≈ (|emin| + p)·ln 2 is small, while max
  // may be 2^(2^27) (p=11,e=28), where halving [0, max] would take 2^27 steps.
  for (long e = 0;; ++e) {
    mpz_class power = 1;
    mpz_mul_2exp(power.get_mpz_t(), power.get_mpz_t(), static_cast<unsigned long>(e));
    const Value t = engine.from_rational(f, mpq_class(power), Rounding::nearest_even);
    if (!t.is_finite() || compare(t, hi) >= 0) break;
    if (underflows(t)) {
      hi = t;
      break;
    }
    lo = t;
  }
  for (;;) {
    const Value up = next_up(f, lo);
    if (up.same_bits(hi)) return hi;
    Mpfr mid(f.is_fixed_point() ? f.precision + 2 : f.precision + 2);
    Mpfr b(f.is_fixed_point() ? f.precision + 2 : f.precision + 2);
    lo.to_mpfr(mid);
    hi.to_mpfr(b);
    mpfr_add(mid, mid, b, MPFR_RNDN);  // exact: both have ≤ p bits... up to a rounding at p+2
    mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
    Value m = engine.from_mpfr(f, mid, Rounding::nearest_even);
    if (compare(m, lo) <= 0 || compare(m, hi) >= 0) m = up;
    if (underflows(m)) {
      hi = m;
    } else {
      lo = m;
    }
  }
}

mpz_class n_max(const Format& f) {
  // floor(min(1, max) / min_positive), with min_positive = 2^k exactly.
  Mpfr top(f.precision + 2);
  max_finite(f).to_mpfr(top);
  if (mpfr_cmp_ui(top, 1) > 0) mpfr_set_ui(top, 1, MPFR_RNDN);
  const long k =
      f.is_fixed_point() ? -f.fraction_bits : (f.subnormals ? f.emin - f.precision + 1 : f.emin);
  mpfr_mul_2si(top, top, -k, MPFR_RNDN);  // exact
  mpz_class result;
  mpfr_get_z(result.get_mpz_t(), top, MPFR_RNDZ);
  return result;
}

}  // namespace ropesim::numeric
