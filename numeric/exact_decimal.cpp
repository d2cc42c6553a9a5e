// Exact decimal text (numeric/exact_decimal.hpp).
#include "numeric/exact_decimal.hpp"

#include <gmp.h>

#include <cstddef>
#include <string>

namespace ropesim::numeric {

std::string exact_decimal(const mpq_class& q) {
  if (mpz_popcount(q.get_den_mpz_t()) != 1) return q.get_str();  // not dyadic: "p/q"
  if (q == 0) return "0";
  const bool negative = q < 0;
  mpz_class num = abs(q.get_num());
  const mpz_class den = q.get_den();
  // den = 2^k: q = num·5^k / 10^k.
  const std::size_t k = mpz_sizeinbase(den.get_mpz_t(), 2) - 1;
  mpz_class five_k;
  mpz_ui_pow_ui(five_k.get_mpz_t(), 5, k);
  const mpz_class n = num * five_k;
  std::string digits = n.get_str();
  std::string out;
  long exponent10 = -static_cast<long>(k);  // value = digits · 10^exponent10
  if (k == 0) {
    // An integer: strip trailing zeros into an exponent only when there are many.
    std::size_t zeros = 0;
    while (zeros + 1 < digits.size() && digits[digits.size() - 1 - zeros] == '0') ++zeros;
    if (zeros < 6) {
      out = digits;
    } else {
      digits.resize(digits.size() - zeros);
      exponent10 = static_cast<long>(zeros);
      const long e = static_cast<long>(digits.size()) - 1 + exponent10;
      out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
            std::to_string(e);
    }
  } else {
    const long len = static_cast<long>(digits.size());
    const long leading_zeros = static_cast<long>(k) - len;  // zeros after the point
    if (leading_zeros < 0) {
      out = digits.substr(0, static_cast<std::size_t>(len - static_cast<long>(k))) + "." +
            digits.substr(static_cast<std::size_t>(len - static_cast<long>(k)));
    } else if (leading_zeros <= 5) {
      out = "0." + std::string(static_cast<std::size_t>(leading_zeros), '0') + digits;
    } else {
      const long e = len - 1 + exponent10;
      out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
            std::to_string(e);
    }
  }
  return negative ? "-" + out : out;
}

std::string exact_decimal(const Value& v) {
  if (v.is_nan()) return "nan";
  if (v.is_inf()) return v.sign_bit() ? "-inf" : "inf";
  if (v.is_zero()) return v.sign_bit() ? "-0" : "0";
  return exact_decimal(exact_rational(v));
}

}  // namespace ropesim::numeric
