#include "numeric/value.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>

#include "core/error.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::numeric {

namespace detail {
WideStorage::WideStorage(mpfr_srcptr value) {
  mpfr_init2(x, mpfr_get_prec(value));
  mpfr_set(x, value, MPFR_RNDN);  // exact: same precision
}
WideStorage::~WideStorage() { mpfr_clear(x); }
}  // namespace detail

Value Value::from_double_exact(double d) {
  Value v;
  v.narrow_ = d;
  return v;
}

Value Value::from_mpfr_exact(mpfr_srcptr x) {
  Value v;
  v.wide_ = std::make_shared<const detail::WideStorage>(x);
  v.narrow_ = mpfr_get_d(x, MPFR_RNDN);
  return v;
}

bool Value::is_nan() const { return is_wide() ? mpfr_nan_p(wide()) != 0 : std::isnan(narrow_); }
bool Value::is_inf() const { return is_wide() ? mpfr_inf_p(wide()) != 0 : std::isinf(narrow_); }
bool Value::is_zero() const { return is_wide() ? mpfr_zero_p(wide()) != 0 : narrow_ == 0.0; }
bool Value::is_finite() const {
  return is_wide() ? mpfr_number_p(wide()) != 0 : std::isfinite(narrow_);
}
bool Value::sign_bit() const {
  return is_wide() ? mpfr_signbit(wide()) != 0 : std::signbit(narrow_);
}
double Value::to_double() const { return narrow_; }

void Value::to_mpfr(mpfr_ptr out) const {
  if (is_wide()) {
    mpfr_set(out, wide(), MPFR_RNDN);
  } else {
    mpfr_set_d(out, narrow_, MPFR_RNDN);
  }
}

std::string Value::to_hex() const {
  char buffer[256];
  if (!is_wide()) {
    std::snprintf(buffer, sizeof buffer, "%a", narrow_);
    return buffer;
  }
  char* text = nullptr;
  if (mpfr_asprintf(&text, "%Ra", wide()) < 0) return "?";
  std::string result(text);
  mpfr_free_str(text);
  return result;
}

std::string Value::to_decimal(int significant_digits) const {
  if (!is_wide()) {
    // The shortest form that reads back to the same double (std::to_chars: plain notation
    // where it is shorter, so 20 prints as "20", not "2e+01"), if it needs at most
    // `significant_digits` digits; otherwise `significant_digits` digits.
    char buffer[64];
    if (std::isnan(narrow_)) return "nan";
    for (int digits = 1; digits <= significant_digits; ++digits) {
      std::snprintf(buffer, sizeof buffer, "%.*g", digits, narrow_);
      if (std::strtod(buffer, nullptr) == narrow_) {
        const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, narrow_);
        return error == std::errc() ? std::string(buffer, end) : std::string(buffer);
      }
    }
    return buffer;
  }
  // Wide values: `significant_digits` digits rounded to nearest when that decimal reads back
  // to this value at its precision; otherwise truncated toward zero, so that a printed value
  // never lies beyond the true one (the largest finite value of p=4096,e=5 is 65535.99…,
  // whose nearest 40-digit decimal 65536 is not in the format).
  auto print = [&](const char* spec) {
    char* text = nullptr;
    if (mpfr_asprintf(&text, spec, significant_digits, wide()) < 0) return std::string("?");
    std::string result(text);
    mpfr_free_str(text);
    return result;
  };
  std::string nearest = print("%.*Rg");
  mpfr_t back;
  mpfr_init2(back, mpfr_get_prec(wide()));
  const bool reads_back =
      mpfr_set_str(back, nearest.c_str(), 10, MPFR_RNDN) == 0 && mpfr_equal_p(back, wide()) != 0;
  mpfr_clear(back);
  return reads_back || !mpfr_number_p(wide()) ? nearest : print("%.*RZg");
}

bool Value::same_bits(const Value& other) const {
  if (is_nan() || other.is_nan()) return is_nan() && other.is_nan();
  if (sign_bit() != other.sign_bit()) return false;
  if (!is_wide() && !other.is_wide()) return narrow_ == other.narrow_;
  mpfr_t a, b;
  const mpfr_prec_t prec = 64;
  if (is_wide() && other.is_wide()) return mpfr_equal_p(wide(), other.wide()) != 0;
  mpfr_init2(a, prec);
  mpfr_init2(b, prec);
  bool equal = false;
  if (is_wide()) {
    mpfr_set_d(b, other.narrow_, MPFR_RNDN);
    equal = mpfr_equal_p(wide(), b) != 0;
  } else {
    mpfr_set_d(a, narrow_, MPFR_RNDN);
    equal = mpfr_equal_p(a, other.wide()) != 0;
  }
  mpfr_clear(a);
  mpfr_clear(b);
  return equal;
}

std::uint64_t Value::bits_key() const {
  if (is_nan()) return 0x7ff8000000000001ULL;  // one key for every NaN
  if (!is_wide()) return std::bit_cast<std::uint64_t>(narrow_);
  // Wide: hash the value itself, independent of the storage precision: x = m · 2^e with m
  // odd (trailing zero bits removed), then hash the sign, e and m's limbs.
  std::uint64_t h = mpfr_signbit(wide()) ? 0x9e3779b97f4a7c15ULL : 0;
  if (!mpfr_regular_p(wide())) return h ^ (mpfr_inf_p(wide()) ? 1 : 2);
  mpz_t m;
  mpz_init(m);
  long e = mpfr_get_z_2exp(m, wide());
  mpz_abs(m, m);
  const mp_bitcnt_t zeros = mpz_scan1(m, 0);
  mpz_fdiv_q_2exp(m, m, zeros);
  e += static_cast<long>(zeros);
  h ^= static_cast<std::uint64_t>(e) * 0xbf58476d1ce4e5b9ULL;
  const std::size_t n = mpz_size(m);
  for (std::size_t i = 0; i < n; ++i) {
    h = (h ^ static_cast<std::uint64_t>(mpz_getlimbn(m, static_cast<mp_size_t>(i)))) *
        0x94d049bb133111ebULL;
  }
  mpz_clear(m);
  return h;
}

Value negate(const Value& v) {
  if (!v.is_wide()) return Value::from_double_exact(-v.narrow());
  Mpfr x(mpfr_get_prec(v.wide()));
  mpfr_neg(x, v.wide(), MPFR_RNDN);  // exact: same precision
  return Value::from_mpfr_exact(x);
}

int compare(const Value& a, const Value& b) {
  if (a.is_nan() || b.is_nan()) return 2;
  if (!a.is_wide() && !b.is_wide()) {
    return a.narrow() < b.narrow() ? -1 : (a.narrow() > b.narrow() ? 1 : 0);
  }
  mpfr_t x, y;
  mpfr_init2(x, a.is_wide() ? mpfr_get_prec(a.wide()) : 64);
  mpfr_init2(y, b.is_wide() ? mpfr_get_prec(b.wide()) : 64);
  a.to_mpfr(x);
  b.to_mpfr(y);
  const int c = mpfr_cmp(x, y);
  mpfr_clear(x);
  mpfr_clear(y);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

mpq_class exact_rational(const Value& v) {
  if (!v.is_finite()) {
    throw InvalidArgument("exact_rational: " + v.to_decimal() + " is not a finite number");
  }
  if (!v.is_wide()) return mpq_class(v.narrow());
  mpq_class q;
  mpfr_get_q(q.get_mpq_t(), v.wide());
  return q;
}

}  // namespace ropesim::numeric
