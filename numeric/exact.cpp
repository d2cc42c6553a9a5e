#include "numeric/exact.hpp"

#include <mpfr.h>

#include <cctype>
#include <string>

#include "core/error.hpp"

namespace ropesim::numeric {

mpq_class parse_decimal_exact(std::string_view text, std::string_view what) {
  auto fail = [&]() -> mpq_class {
    throw InvalidArgument(std::string(what) +
                          " must be a decimal number such as 10000, 1e4, 0.75 " +
                          "or 2.5e-3, got '" + std::string(text) + "'");
  };
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  std::string digits;
  long scale = 0;  // value = digits · 10^(-scale) · 10^exponent
  bool any_digit = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    digits += text[i++];
    any_digit = true;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      digits += text[i++];
      ++scale;
      any_digit = true;
    }
  }
  if (!any_digit) return fail();
  long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exponent_negative = text[i++] == '-';
    if (i == text.size()) return fail();
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      exponent = exponent * 10 + (text[i++] - '0');
      if (exponent > kMaxDecimalExponent) {  // a number, but 10^exponent would not fit in memory
        throw InvalidArgument(std::string(what) + " = '" + std::string(text) +
                              "' has an exponent beyond ±" + std::to_string(kMaxDecimalExponent) +
                              "; accepted: decimal numbers with exponents in -100000..100000");
      }
    }
    if (exponent_negative) exponent = -exponent;
  }
  if (i != text.size()) return fail();
  mpz_class numerator(digits, 10);
  if (negative) numerator = -numerator;
  const long power = exponent - scale;
  mpz_class ten_power;
  mpz_ui_pow_ui(ten_power.get_mpz_t(), 10, static_cast<unsigned long>(power < 0 ? -power : power));
  mpq_class result =
      power >= 0 ? mpq_class(numerator * ten_power) : mpq_class(numerator, ten_power);
  result.canonicalize();
  return result;
}

double nearest_double(const mpq_class& q) {
  mpfr_t x;
  mpfr_init2(x, 53);
  mpfr_set_q(x, q.get_mpq_t(), MPFR_RNDN);    // correctly rounded
  const double d = mpfr_get_d(x, MPFR_RNDN);  // exact
  mpfr_clear(x);
  return d;
}

double python_float(const mpq_class& q) { return nearest_double(q); }

mpq_class parse_rational_exact(std::string_view text, std::string_view what) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return parse_decimal_exact(text, what);
  const mpq_class num = parse_decimal_exact(text.substr(0, slash), what);
  const mpq_class den = parse_decimal_exact(text.substr(slash + 1), what);
  if (den == 0) {
    throw InvalidArgument(std::string(what) + " = " + std::string(text) + " divides by zero");
  }
  return num / den;
}

}  // namespace ropesim::numeric
