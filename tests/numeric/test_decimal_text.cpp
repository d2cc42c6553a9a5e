// numeric::pandas_default_read and numeric::csv_decimal (numeric/decimal_text.hpp). The
// misreadings are worked out by hand from pandas' algorithm (17 digit characters accumulated
// in binary64, then one division by a power of ten), the readings back with std::strtod (glibc:
// correctly rounded), apart from the code under test; tests/cli/test_paper_outputs.cpp checks
// the emulation against pandas itself.
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "numeric/decimal_text.hpp"

using ropesim::numeric::csv_decimal;
using ropesim::numeric::pandas_default_read;

namespace {

double strtod_read(const std::string& text) { return std::strtod(text.c_str(), nullptr); }

std::uint64_t bits(double v) { return std::bit_cast<std::uint64_t>(v); }

}  // namespace

TEST_CASE("pandas_default_read misreads as pandas' precise_xstrtod does", "[decimal_text]") {
  // Short decimals: the digits fit in 2^53 and 10^k is exact: one correctly rounded division.
  CHECK(pandas_default_read("0.5") == 0.5);
  CHECK(pandas_default_read("-17.34375") == -17.34375);
  CHECK(pandas_default_read("1e-05") == strtod_read("1e-05"));
  CHECK(pandas_default_read("2.5e+3") == 2500.0);
  // "0." counts as a digit: of 0.28366219997406006 pandas keeps 17 characters, "0" and
  // 2836621999740600, and drops the final 6; 2836621999740600 < 2^53 is exact and is divided
  // by 10^16 once: the nearest binary64 to 0.28366219997406.
  CHECK(pandas_default_read("0.28366219997406006") == strtod_read("0.28366219997406"));
  CHECK(strtod_read("0.28366219997406006") != strtod_read("0.28366219997406"));
  // 9899924993515015 > 2^53 = 9007199254740992 is odd and lies between two binary64 (spacing
  // 2): a tie, rounded to 9899924993515016 (even significand); divided by 10^16: the nearest
  // binary64 to 0.9899924993515016, one ulp from the text's own.
  CHECK(pandas_default_read("-0.9899924993515015") == -strtod_read("0.9899924993515016"));
  CHECK(strtod_read("0.9899924993515015") != strtod_read("0.9899924993515016"));
  // Outside the grammar: NaN (never equal to a value).
  CHECK(std::isnan(pandas_default_read("abc")));
  CHECK(std::isnan(pandas_default_read("1.5x")));
}

TEST_CASE("csv_decimal writes a decimal both readers read exactly where one exists",
          "[decimal_text]") {
  // Shortest where pandas reads it: unchanged texts.
  CHECK(csv_decimal(0.5) == "0.5");
  CHECK(csv_decimal(-17.34375) == "-17.34375");
  CHECK(csv_decimal(1.0) == "1");
  CHECK(csv_decimal(0.0) == "0");
  CHECK(csv_decimal(std::nan("")) == "nan");
  CHECK(csv_decimal(-HUGE_VAL) == "-inf");
  // The two misread above: another decimal, read back as the value by both.
  for (const double v : {strtod_read("0.28366219997406006"), -strtod_read("0.9899924993515015")}) {
    const std::string text = csv_decimal(v);
    INFO(text);
    CHECK(text.find('e') != std::string::npos);  // 17 significant digits need the exponent form
    CHECK(bits(strtod_read(text)) == bits(v));
    CHECK(bits(pandas_default_read(text)) == bits(v));
  }
}

TEST_CASE("csv_decimal reads back as the same binary64 for every value", "[decimal_text]") {
  rc::prop("strtod(csv_decimal(v)) == v bit for bit; pandas exact when the text changed", [] {
    const auto raw = *rc::gen::arbitrary<std::uint64_t>();
    const double v = std::bit_cast<double>(raw);
    RC_PRE(std::isfinite(v));
    const std::string text = csv_decimal(v);
    RC_ASSERT(bits(strtod_read(text)) == bits(v));
    RC_ASSERT(text.size() <= 24u);
  });
  rc::prop("fp32 values: pandas exact whenever a decimal of <= 17 digits is (brute force)", [] {
    const auto raw = *rc::gen::arbitrary<std::uint32_t>();
    const double v = static_cast<double>(std::bit_cast<float>(raw));
    RC_PRE(std::isfinite(v));
    const std::string text = csv_decimal(v);
    RC_ASSERT(bits(strtod_read(text)) == bits(v));
    if (bits(pandas_default_read(text)) == bits(v)) return;
    // pandas misreads the text: then no decimal of 15..17 significant digits within 30 units
    // of v's own (snprintf's) is read as v by both readers.
    for (int digits = 15; digits <= 17; ++digits) {
      char buffer[40];
      std::snprintf(buffer, sizeof buffer, "%.*e", digits - 1, v);
      const std::string nearest = buffer;
      const std::size_t e = nearest.find('e');
      const bool negative = nearest[0] == '-';
      std::string mantissa = nearest.substr(negative ? 1 : 0, e - (negative ? 1 : 0));
      mantissa.erase(1, 1);
      const long long centre = std::stoll(mantissa);
      for (long long m = centre - 30; m <= centre + 30; ++m) {
        const std::string ms = std::to_string(m);
        if (static_cast<int>(ms.size()) != digits) continue;
        const std::string candidate =
            (negative ? "-" : "") + ms.substr(0, 1) + "." + ms.substr(1) + nearest.substr(e);
        RC_ASSERT(!(bits(strtod_read(candidate)) == bits(v) &&
                    bits(pandas_default_read(candidate)) == bits(v)));
      }
    }
  });
}
