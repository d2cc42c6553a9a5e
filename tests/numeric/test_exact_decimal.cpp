// numeric::exact_decimal (numeric/exact_decimal.hpp): the one exact decimal spelling. The
// expected texts are worked out by hand (2^-24 = 5^24 / 10^24, 5^24 = 59604644775390625), and
// the property reads every text back with a reader written here, apart from the code under test.
#include <gmpxx.h>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "numeric/exact_decimal.hpp"

using ropesim::numeric::exact_decimal;

namespace {

/// "[-]D[.DDD][eE]" back to a rational: digits / 10^(digits after the point) · 10^E.
mpq_class read_back(const std::string& text) {
  std::size_t k = 0;
  const bool negative = text[0] == '-';
  if (negative) k = 1;
  std::string digits;
  long after_point = 0, exponent = 0;
  bool point = false;
  for (; k < text.size() && text[k] != 'e'; ++k) {
    if (text[k] == '.') {
      point = true;
    } else {
      digits += text[k];
      if (point) ++after_point;
    }
  }
  if (k < text.size()) exponent = std::stol(text.substr(k + 1));
  const long shift = exponent - after_point;
  mpz_class ten;
  mpz_ui_pow_ui(ten.get_mpz_t(), 10, static_cast<unsigned long>(shift < 0 ? -shift : shift));
  mpq_class q{mpz_class(digits, 10)};  // not base 0: "025" is not octal
  q = shift < 0 ? mpq_class(q / ten) : mpq_class(q * ten);
  return negative ? mpq_class(-q) : q;
}

}  // namespace

TEST_CASE("exact_decimal of dyadic rationals, by hand", "[exact_decimal]") {
  CHECK(exact_decimal(mpq_class(0)) == "0");
  CHECK(exact_decimal(mpq_class(-3, 8)) == "-0.375");
  CHECK(exact_decimal(mpq_class(-1, 512)) == "-0.001953125");
  CHECK(exact_decimal(mpq_class(12)) == "12");
  CHECK(exact_decimal(mpq_class(999999)) == "999999");
  CHECK(exact_decimal(mpq_class(1000000)) == "1e6");        // six trailing zeros: scientific
  CHECK(exact_decimal(mpq_class(-2500000)) == "-2500000");  // five zeros: positional
  CHECK(exact_decimal(mpq_class(-25000000)) == "-2.5e7");
  CHECK(exact_decimal(mpq_class(1, 1 << 20)) == "9.5367431640625e-7");  // 5^20 = 95367431640625
  CHECK(exact_decimal(mpq_class(1, 1 << 16)) == "0.0000152587890625");  // four zeros: positional
  CHECK(exact_decimal(mpq_class(1, 1 << 24)) == "5.9604644775390625e-8");
}

TEST_CASE("exact_decimal of a rational with no finite decimal is p/q", "[exact_decimal]") {
  CHECK(exact_decimal(mpq_class(1, 3)) == "1/3");
  CHECK(exact_decimal(mpq_class(-7, 10)) == "-7/10");
}

TEST_CASE("exact_decimal reads back to the same rational", "[exact_decimal][property]") {
  // q = a · 10^j / 2^k with |a| < 10^6: small numerators and large k reach the scientific
  // form of tiny values (more than five zeros after the point), j the one of round integers.
  // Seen failing: with exact_decimal.cpp dropping the last digit of the small scientific form
  // this property failed (as did the by-hand 2^-20 and 2^-24 cases).
  rc::prop("a·10^j/2^k reads back exactly", [] {
    const auto a = *rc::gen::inRange<long>(-999999, 1000000);
    const auto j = *rc::gen::inRange<unsigned long>(0, 12);
    const auto k = *rc::gen::inRange<unsigned long>(0, 120);
    mpz_class ten_j, den;
    mpz_ui_pow_ui(ten_j.get_mpz_t(), 10, j);
    mpz_ui_pow_ui(den.get_mpz_t(), 2, k);
    mpq_class q(mpz_class(a) * ten_j, den);
    q.canonicalize();
    RC_ASSERT(read_back(exact_decimal(q)) == q);
  });
}
