// numeric::put_value (numeric/json_number.hpp): an element of F written into a JSON object. The
// expected texts are worked out by hand: 3/8 = 0.375 and 1045 are binary64 numbers; p = 64 holds
// 1 + 2^-63 = (2^63 + 1)/2^63 = 9223372036854775809/9223372036854775808, which binary64 rounds
// to 1 (2^-63 is below half of binary64's spacing 2^-52 at 1); 2^1024 is one binade beyond
// binary64's largest finite value (2 - 2^-52)·2^1023, its digits as Python's 2**1024 prints them.
// Whole objects are compared as dump() text, the bytes the commands print.
#include <gmpxx.h>
#include <mpfr.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/json_number.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"

using ropesim::numeric::Format;
using ropesim::numeric::put_value;
using ropesim::numeric::Rounding;
using ropesim::numeric::Value;

namespace {

/// `q` as an element of p = 64 with a 15-bit exponent (x87 extended: wider than fp64 in both
/// precision and range), rounded by the MPFR engine (exact for the q used here).
Value extended(const mpq_class& q) {
  return ropesim::numeric::mpfr_engine().from_rational(Format::ieee(64, 15), q,
                                                       Rounding::nearest_even);
}

std::string written(const Value& v) {
  nlohmann::json out = {{"other", 1}};
  put_value(out, "x", v);
  return out.dump();
}

}  // namespace

TEST_CASE("put_value: a binary64 value is a JSON number, with no KEY_exact", "[json_number]") {
  CHECK(written(Value::from_double_exact(0.375)) == R"({"other":1,"x":0.375})");
  CHECK(written(Value::from_double_exact(-2.5)) == R"({"other":1,"x":-2.5})");
  // an integer below 2^53 is a JSON integer; -0 is its rational value 0
  CHECK(written(Value::from_double_exact(1045.0)) == R"({"other":1,"x":1045})");
  CHECK(written(Value::from_double_exact(-0.0)) == R"({"other":1,"x":0})");
  // what counts is the value, not its storage: 3/8 in p = 64 is a binary64 number too
  const Value wide_three_eighths = extended(mpq_class(3, 8));
  REQUIRE(wide_three_eighths.is_wide());
  CHECK(written(wide_three_eighths) == R"({"other":1,"x":0.375})");
}

TEST_CASE("put_value: a value binary64 cannot hold is its nearest double and KEY_exact",
          "[json_number]") {
  const mpz_class two_63 = mpz_class(1) << 63;
  const Value v = extended(mpq_class(two_63 + 1, two_63));
  REQUIRE(v.is_wide());
  CHECK(written(v) == R"({"other":1,"x":1.0,"x_exact":"9223372036854775809/9223372036854775808"})");
  CHECK(written(extended(mpq_class(-(two_63 + 1), two_63))) ==
        R"({"other":1,"x":-1.0,"x_exact":"-9223372036854775809/9223372036854775808"})");
  // beyond binary64's range: null, and the exact integer
  const Value huge = extended(mpq_class(mpz_class(1) << 1024));
  CHECK(
      written(huge) ==
      R"({"other":1,"x":null,"x_exact":"179769313486231590772930519078902473361797697894230657)"
      R"(2734300811577326758055009631327084773224075360211201138798713933576587897688144166224)"
      R"(9284743063947412437776789342486548527630221960124609411945308295208500576883815068234)"
      R"(2462881473913110540827237163350510684586298239947245938479716304835356329624224137216"})");
}

TEST_CASE("put_value: NaN and infinities are strings, with no KEY_exact", "[json_number]") {
  constexpr double inf = std::numeric_limits<double>::infinity();
  CHECK(written(Value::from_double_exact(std::nan(""))) == R"({"other":1,"x":"nan"})");
  CHECK(written(Value::from_double_exact(inf)) == R"({"other":1,"x":"inf"})");
  CHECK(written(Value::from_double_exact(-inf)) == R"({"other":1,"x":"-inf"})");
  // held in MPFR storage (a format wider than fp64), the same strings
  mpfr_t x;
  mpfr_init2(x, 64);
  mpfr_set_nan(x);
  const Value wide_nan = Value::from_mpfr_exact(x);
  mpfr_set_inf(x, -1);
  const Value wide_minus_inf = Value::from_mpfr_exact(x);
  mpfr_clear(x);
  REQUIRE(wide_nan.is_wide());
  CHECK(written(wide_nan) == R"({"other":1,"x":"nan"})");
  CHECK(written(wide_minus_inf) == R"({"other":1,"x":"-inf"})");
}
