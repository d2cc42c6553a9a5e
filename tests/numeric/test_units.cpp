// Unit tests with values derived by hand (the derivation is in the comment next to each
// value), from the hardware (<limits>), or from the independent reference. Nothing asserted
// here is computed by the code under test.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/exact.hpp"
#include "numeric/format.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"
#include "tests/numeric/reference_rounding.hpp"
#include "tests/numeric/test_support.hpp"

namespace {

using namespace numeric_test;
using ropesim::InvalidArgument;
using ropesim::numeric::parse_format;
using ropesim::numeric::parse_rounding;

constexpr double inf = std::numeric_limits<double>::infinity();
const double nan_value = std::numeric_limits<double>::quiet_NaN();

Value v(double d) { return Value::from_double_exact(d); }

/// Bit-pattern check with a readable message.
#define CHECK_SAME(value_expr, expected_double)                                               \
  do {                                                                                        \
    const Value check_same_v_ = (value_expr);                                                 \
    const double check_same_e_ = (expected_double);                                           \
    INFO(#value_expr << " = " << show(check_same_v_) << ", expected " << hex(check_same_e_)); \
    CHECK((!check_same_v_.is_wide() && same_double(check_same_v_.narrow(), check_same_e_)));  \
  } while (false)

/// The fields of a format without its name.
void check_same_fields(const Format& a, const Format& b) {
  INFO(a.name << " vs " << b.name);
  CHECK(a.kind == b.kind);
  CHECK(a.precision == b.precision);
  if (!a.is_fixed_point()) {
    CHECK(a.emin == b.emin);
    CHECK(a.emax == b.emax);
    CHECK(a.reserved_top_codes == b.reserved_top_codes);
  } else {
    CHECK(a.integer_bits == b.integer_bits);
    CHECK(a.fraction_bits == b.fraction_bits);
  }
  CHECK(a.subnormals == b.subnormals);
  CHECK(a.has_infinity == b.has_infinity);
}

}  // namespace

// ------------------------------------------------------------------------------ presets

TEST_CASE("preset formats have the published parameters", "[numeric][format]") {
  struct Expected {
    Format f;
    int p, emin, emax;
    bool inf;
    int reserved;
  };
  // IEEE 754 binary64/32/16: p = 53/24/11, emax = 2^(w-1) - 1 = 1023/127/15, emin = 1 - emax.
  // TF32: 10 fraction bits (p 11), binary32's exponent. bf16: 7 fraction bits (p 8), binary32's
  // exponent. OCP FP8 E4M3: bias 7, p 4, exponent field 15 is normal (emax 8), emin = 1 - 7;
  // no infinity, S.1111.111 = NaN (one reserved code). E5M2: bias 15, p 3, IEEE-like.
  const Expected presets[] = {
      {Format::fp64(), 53, -1022, 1023, true, 0}, {Format::fp32(), 24, -126, 127, true, 0},
      {Format::tf32(), 11, -126, 127, true, 0},   {Format::fp16(), 11, -14, 15, true, 0},
      {Format::bf16(), 8, -126, 127, true, 0},    {Format::fp8e4m3(), 4, -6, 8, false, 1},
      {Format::fp8e5m2(), 3, -14, 15, true, 0},
  };
  for (const auto& e : presets) {
    INFO(e.f.name);
    CHECK(e.f.kind == Format::Kind::floating);
    CHECK(e.f.precision == e.p);
    CHECK(e.f.emin == e.emin);
    CHECK(e.f.emax == e.emax);
    CHECK(e.f.has_infinity == e.inf);
    CHECK(e.f.reserved_top_codes == e.reserved);
    CHECK(e.f.subnormals);
    CHECK(e.f.has_nan);
    CHECK(e.f.fits_double());
    check_same_fields(parse_format(e.f.name), e.f);
  }
  CHECK(ropesim::numeric::preset_format_names() ==
        std::vector<std::string>{"fp64", "fp32", "tf32", "fp16", "bf16", "fp8e4m3", "fp8e5m2"});
  // IEEE-style constructor: emax = 2^(E-1) - 1, emin = 1 - emax.
  check_same_fields(Format::ieee(11, 5), Format::fp16());
  check_same_fields(Format::ieee(8, 8), Format::bf16());
  check_same_fields(Format::ieee(53, 11), Format::fp64());
  check_same_fields(Format::custom(24, -126, 127), Format::fp32());
}

TEST_CASE("the named-format table is what the parser, aliases and hint read",
          "[numeric][format][parse]") {
  using ropesim::numeric::NamedFormat;
  const auto table = ropesim::numeric::named_formats();
  // the PyTorch dtype names (torch.dtype docs) by hand, as (alias, preset)
  const std::vector<std::pair<std::string, std::string>> torch = {
      {"float64", "fp64"},  {"double", "fp64"},           {"float32", "fp32"},
      {"float", "fp32"},    {"float16", "fp16"},          {"half", "fp16"},
      {"bfloat16", "bf16"}, {"float8_e4m3fn", "fp8e4m3"}, {"float8_e5m2", "fp8e5m2"}};
  CHECK(ropesim::numeric::format_aliases() == torch);
  std::vector<int> ranks;
  for (const NamedFormat& row : table) {
    INFO(row.name);
    const Format f = row.make();
    CHECK(f.name == row.name);
    check_same_fields(parse_format(row.name), f);
    for (const std::string_view alias : row.torch_names) {
      check_same_fields(parse_format(alias), f);
      check_same_fields(parse_format("torch." + std::string(alias)), f);
      CHECK(parse_format(alias).name == row.name);  // the Format keeps the preset's name
    }
    ranks.push_back(row.size_rank);
  }
  // size_rank: a permutation of 0..n-1 that orders the presets by storage width, the width
  // counted from the fields: 1 sign bit + (p - 1) stored significand bits + the exponent
  // field, whose width w is the least with 2^w - 1 >= emax - emin + 2 codes (normals, plus the
  // zero/subnormal code; the inf/NaN code is the +1 of 2^w - 1 for IEEE formats, fp8e4m3's
  // top code is normal).
  auto bits = [](const Format& f) {
    int w = 1;
    while ((1 << w) - 1 < f.emax - f.emin + 2 - (f.has_infinity ? 0 : 1)) ++w;
    return 1 + (f.precision - 1) + w;
  };
  CHECK(bits(Format::fp16()) == 16);
  CHECK(bits(Format::bf16()) == 16);
  CHECK(bits(Format::tf32()) == 19);
  CHECK(bits(Format::fp8e4m3()) == 8);
  CHECK(bits(Format::fp8e5m2()) == 8);
  CHECK(bits(Format::fp64()) == 64);
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t k = 0; k < sorted.size(); ++k) CHECK(sorted[k] == static_cast<int>(k));
  for (const NamedFormat& a : table) {
    for (const NamedFormat& b : table) {
      INFO(a.name << " before " << b.name);
      if (a.size_rank < b.size_rank) CHECK(bits(a.make()) <= bits(b.make()));
    }
  }
}

TEST_CASE("fits_double follows binary64's precision and range", "[numeric][format]") {
  CHECK(Format::custom(53, -1022, 1023).fits_double());
  CHECK_FALSE(Format::custom(54, -10, 10).fits_double());  // p > 53
  CHECK_FALSE(Format::custom(113, -16382, 16383).fits_double());
  CHECK_FALSE(Format::custom(24, -10, 1024).fits_double());    // top binade [2^1024, ...)
  CHECK_FALSE(Format::custom(53, -1023, 1023).fits_double());  // smallest subnormal 2^-1075
  CHECK(Format::custom(52, -1023, 1023).fits_double());        // 2^(-1023-51) = 2^-1074
  CHECK(Format::fixed(20, 20).fits_double());
  CHECK_FALSE(Format::fixed(60, 0).fits_double());  // 60 significant bits
}

TEST_CASE("format constructors reject impossible parameters", "[numeric][format]") {
  CHECK_THROWS_AS(Format::ieee(1, 5), InvalidArgument);   // p < 2
  CHECK_THROWS_AS(Format::ieee(11, 1), InvalidArgument);  // E < 2
  CHECK_THROWS_AS(Format::custom(1, -5, 5), InvalidArgument);
  CHECK_THROWS_AS(Format::custom(8, 5, 4), InvalidArgument);  // emin > emax
  CHECK_THROWS_AS(Format::fixed(-1, 4), InvalidArgument);
  CHECK_THROWS_AS(Format::fixed(4, -1), InvalidArgument);
  CHECK_THROWS_AS(Format::fixed(0, 0), InvalidArgument);      // I + F ≥ 1
  CHECK_THROWS_AS(Format::fixed(500, 501), InvalidArgument);  // I + F ≤ 1000
  CHECK_NOTHROW(Format::fixed(500, 500));
  CHECK_NOTHROW(Format::fixed(0, 1));
  CHECK_NOTHROW(Format::custom(2, 0, 0));
}

// ------------------------------------------------------------------------------ parse

TEST_CASE("parse_format accepts the documented spellings", "[numeric][format][parse]") {
  for (const auto& name : ropesim::numeric::preset_format_names()) {
    const Format f = parse_format(name);
    CHECK(f.name.size() > 0);
    CHECK(parse_format(f.name) == f);
  }
  const Format fp16 = Format::fp16();
  check_same_fields(parse_format("p=11,e=5"), fp16);
  check_same_fields(parse_format("p=11,emin=-14,emax=15"), fp16);
  check_same_fields(parse_format("p=24,emin=-126,emax=127"), Format::fp32());

  Format fp16_nosub = fp16;
  fp16_nosub.subnormals = false;
  check_same_fields(parse_format("fp16,subnormals=off"), fp16_nosub);
  Format fp16_sat = fp16;
  fp16_sat.has_infinity = false;
  check_same_fields(parse_format("fp16,overflow=saturate"), fp16_sat);
  Format both = fp16_nosub;
  both.has_infinity = false;
  check_same_fields(parse_format("fp16,subnormals=off,overflow=saturate"), both);
  check_same_fields(parse_format("fp16,overflow=saturate,subnormals=off"), both);
  check_same_fields(parse_format("p=11,e=5,subnormals=off"), fp16_nosub);

  const Format fx = parse_format("fixed:8.8");
  CHECK(fx.is_fixed_point());
  CHECK(fx.integer_bits == 8);
  CHECK(fx.fraction_bits == 8);
  CHECK(fx.precision == 16);  // I + F
  check_same_fields(fx, Format::fixed(8, 8));
  const Format fx0 = parse_format("fixed:0.15");
  CHECK(fx0.integer_bits == 0);
  CHECK(fx0.fraction_bits == 15);

  // Every parsed format's name reads back to the same format.
  for (const char* spec : {"p=11,e=5", "p=7,emin=-20,emax=3", "fixed:8.8", "fp16,subnormals=off",
                           "bf16,overflow=saturate", "p=5,e=3,subnormals=off,overflow=saturate",
                           "p=113,emin=-16382,emax=16383"}) {
    INFO(spec);
    const Format f = parse_format(spec);
    CHECK(parse_format(f.name) == f);
  }
}

TEST_CASE("parse_format rejects bad spellings with an actionable message",
          "[numeric][format][parse]") {
  const std::string spellings = ropesim::numeric::format_spellings();
  for (const char* preset : {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8e4m3", "fp8e5m2"}) {
    CHECK(spellings.find(preset) != std::string::npos);
  }
  CHECK(spellings.find("fixed:") != std::string::npos);
  CHECK(spellings.find("p=") != std::string::npos);
  for (const char* bad :
       {"fp17", "FP 16", "p=11", "p=11,e=x", "fixed:8", "fixed:a.b", "fp16,subnormals=maybe",
        "fp16,overflow=wrap", "fp16,", "bf16 ", "fp16,rounding=rne"}) {
    INFO("spelling '" << bad << "'");
    try {
      (void)parse_format(bad);
      FAIL("accepted '" << bad << "'");
    } catch (const InvalidArgument& e) {
      const std::string message = e.what();
      INFO("message: " << message);
      CHECK(message.find(bad) != std::string::npos);        // names the bad spelling
      CHECK(message.find("fp8e4m3") != std::string::npos);  // and lists the accepted ones
      CHECK(message.find("fixed:") != std::string::npos);
    }
  }
  // Well-formed spellings with impossible parameters: the message names the parameter and
  // the offending value (format.hpp promises the spelling and the list too; see the report).
  const std::pair<const char*, std::vector<std::string>> out_of_range[] = {
      {"p=1,e=5", {"p", "1"}},
      {"p=11,e=1", {"e", "1"}},
      {"p=11,emin=5,emax=4", {"emin", "5", "4"}},
      {"fixed:-1.4", {"-1"}},
      {"fixed:600.600", {"600"}},
      // I + F overflowed int before the range check (a libFuzzer finding: UB, then accepted)
      {"fixed:5.2147483647", {"I=5", "F=2147483647"}},
      {"fixed:2147483647.1", {"I=2147483647"}},
  };
  for (const auto& [bad, needles] : out_of_range) {
    INFO("spelling '" << bad << "'");
    try {
      (void)parse_format(bad);
      FAIL("accepted '" << bad << "'");
    } catch (const InvalidArgument& e) {
      const std::string message = e.what();
      INFO("message: " << message);
      for (const auto& needle : needles) CHECK(message.find(needle) != std::string::npos);
    }
  }
  CHECK_THROWS_AS(parse_format(""), InvalidArgument);
}

TEST_CASE("parse_rounding and to_string", "[numeric][rounding][parse]") {
  using ropesim::numeric::Rounding;
  const std::pair<const char*, Rounding> accepted[] = {
      {"rne", Rounding::nearest_even}, {"nearest-even", Rounding::nearest_even},
      {"rna", Rounding::nearest_away}, {"nearest-away", Rounding::nearest_away},
      {"rz", Rounding::toward_zero},   {"toward-zero", Rounding::toward_zero},
      {"ru", Rounding::upward},        {"up", Rounding::upward},
      {"upward", Rounding::upward},    {"rd", Rounding::downward},
      {"down", Rounding::downward},    {"downward", Rounding::downward}};
  for (const auto& [text, mode] : accepted) {
    INFO(text);
    CHECK(parse_rounding(text) == mode);
  }
  CHECK(ropesim::numeric::to_string(Rounding::nearest_even) == "nearest-even");
  CHECK(ropesim::numeric::to_string(Rounding::nearest_away) == "nearest-away");
  CHECK(ropesim::numeric::to_string(Rounding::toward_zero) == "toward-zero");
  CHECK(ropesim::numeric::to_string(Rounding::upward) == "upward");
  CHECK(ropesim::numeric::to_string(Rounding::downward) == "downward");
  for (Rounding r : all_modes) CHECK(parse_rounding(ropesim::numeric::to_string(r)) == r);
  CHECK(ropesim::numeric::is_nearest(Rounding::nearest_even));
  CHECK(ropesim::numeric::is_nearest(Rounding::nearest_away));
  CHECK_FALSE(ropesim::numeric::is_nearest(Rounding::toward_zero));
  CHECK_FALSE(ropesim::numeric::is_nearest(Rounding::upward));
  CHECK_FALSE(ropesim::numeric::is_nearest(Rounding::downward));
  for (const char* bad : {"", "nearest", "rn", "stochastic", "RNE "}) {
    INFO("'" << bad << "'");
    try {
      (void)parse_rounding(bad);
      FAIL("accepted '" << bad << "'");
    } catch (const InvalidArgument& e) {
      const std::string message = e.what();
      INFO(message);
      CHECK(message.find("nearest-even") != std::string::npos);
      CHECK(message.find("downward") != std::string::npos);
    }
  }
}

TEST_CASE("parse_decimal_exact reads decimals exactly", "[numeric][exact][parse]") {
  using ropesim::numeric::parse_decimal_exact;
  CHECK(parse_decimal_exact("10000") == mpq_class(10000));
  CHECK(parse_decimal_exact("1e4") == mpq_class(10000));
  CHECK(parse_decimal_exact("5e5") == mpq_class(500000));
  CHECK(parse_decimal_exact("0.75") == mpq_class(3, 4));
  CHECK(parse_decimal_exact("-2.5E-3") == mpq_class(-1, 400));  // -25/10000
  CHECK(parse_decimal_exact("0.1") == mpq_class(1, 10));        // not the double 0.1
  CHECK(parse_decimal_exact("1e-30") ==
        mpq_class(mpz_class(1), mpz_class("1" + std::string(30, '0'))));
  CHECK(parse_decimal_exact("123456789012345678901234567890") ==
        mpq_class(mpz_class("123456789012345678901234567890")));
  CHECK(parse_decimal_exact("1.5e300") == mpq_class(mpz_class("15" + std::string(299, '0'))));
  CHECK(parse_decimal_exact("-0") == mpq_class(0));
  CHECK(parse_decimal_exact("500000.0") == mpq_class(500000));
  for (const char* bad :
       {"", "abc", "1e", "1.2.3", "e5", "1e4x", "0x10", "inf", "nan", "--1", "1,5", "1 000"}) {
    INFO("'" << bad << "'");
    try {
      (void)parse_decimal_exact(bad, "rope base");
      FAIL("accepted '" << bad << "'");
    } catch (const InvalidArgument& e) {
      CHECK(std::string(e.what()).find("rope base") != std::string::npos);
    }
  }
}

// ------------------------------------------------------------------------------ properties

TEST_CASE("max_finite, min_positive, min_normal of every preset", "[numeric][format_properties]") {
  using ropesim::numeric::max_finite;
  using ropesim::numeric::min_normal;
  using ropesim::numeric::min_positive;
  struct Expected {
    Format f;
    double max, min_pos, min_norm;
  };
  const Expected cases[] = {
      // binary64/binary32: the hardware's own limits.
      {Format::fp64(), DBL_MAX, std::numeric_limits<double>::denorm_min(), DBL_MIN},
      {Format::fp32(), FLT_MAX, std::numeric_limits<float>::denorm_min(), FLT_MIN},
      // tf32: max (2 - 2^-10)·2^127; min subnormal 2^(-126 - 10) = 2^-136; min normal 2^-126.
      {Format::tf32(), std::ldexp(2 - std::ldexp(1, -10), 127), std::ldexp(1, -136),
       std::ldexp(1, -126)},
      // fp16: max (2 - 2^-10)·2^15 = 65504; min subnormal 2^(-14-10) = 2^-24; normal 2^-14.
      {Format::fp16(), 65504, std::ldexp(1, -24), std::ldexp(1, -14)},
      // bf16: max (2 - 2^-7)·2^127; min subnormal 2^(-126-7) = 2^-133; normal 2^-126.
      {Format::bf16(), std::ldexp(2 - std::ldexp(1, -7), 127), std::ldexp(1, -133),
       std::ldexp(1, -126)},
      // E4M3: top binade [256, 512) in steps of 32, the top code reserved: 1.75·256 = 448;
      // min subnormal 2^(-6-3) = 2^-9; min normal 2^-6.
      {Format::fp8e4m3(), 448, std::ldexp(1, -9), std::ldexp(1, -6)},
      // E5M2: 1.75·2^15 = 57344; min subnormal 2^(-14-2) = 2^-16; normal 2^-14.
      {Format::fp8e5m2(), 57344, std::ldexp(1, -16), std::ldexp(1, -14)},
      // subnormals off: the smallest positive element is the smallest normal.
      {parse_format("fp32,subnormals=off"), FLT_MAX, FLT_MIN, FLT_MIN},
      // fixed:4.4: (2^8 - 1)·2^-4 = 15.9375; 2^-4.
      {Format::fixed(4, 4), 15.9375, 0.0625, 0.0625},
      // fixed:0.7: (2^7 - 1)·2^-7.
      {Format::fixed(0, 7), 127.0 / 128, 1.0 / 128, 1.0 / 128},
      // p 3, emin -1, emax 1: max 1.75·2 = 3.5; min subnormal 2^(-1-2) = 1/8; normal 1/2.
      {Format::custom(3, -1, 1), 3.5, 0.125, 0.5},
  };
  for (const auto& e : cases) {
    INFO(e.f.name);
    CHECK_SAME(max_finite(e.f), e.max);
    CHECK_SAME(min_positive(e.f), e.min_pos);
    CHECK_SAME(min_normal(e.f), e.min_norm);
    // the reference agrees (it is what the exhaustive tests trust)
    CHECK(reference::max_finite(e.f) == mpq_class(e.max));
    CHECK(reference::min_positive(e.f) == mpq_class(e.min_pos));
  }
}

TEST_CASE("unit_roundoff", "[numeric][format_properties]") {
  using ropesim::numeric::unit_roundoff;
  // 2^-p to nearest, 2^(1-p) directed; fixed point half or one 2^-F.
  CHECK(unit_roundoff(Format::fp32(), Rounding::nearest_even) == std::ldexp(1, -24));
  CHECK(unit_roundoff(Format::fp32(), Rounding::toward_zero) == std::ldexp(1, -23));
  CHECK(unit_roundoff(Format::fp16(), Rounding::nearest_away) == std::ldexp(1, -11));
  CHECK(unit_roundoff(Format::bf16(), Rounding::upward) == std::ldexp(1, -7));
  CHECK(unit_roundoff(Format::fp64(), Rounding::downward) == std::ldexp(1, -52));
  CHECK(unit_roundoff(Format::fixed(4, 4), Rounding::nearest_even) == std::ldexp(1, -5));
  CHECK(unit_roundoff(Format::fixed(4, 4), Rounding::downward) == std::ldexp(1, -4));
}

namespace {

/// f_large derived without the code under test: exp(-f) rounds to 0 iff exp(-f) < t, where
/// t = min_positive/2 for round-to-nearest (with subnormals off also 2^(emin-1); exp(-f) for
/// f in F is never exactly t, so ties do not arise) and t = min_positive for toward_zero and
/// downward; never for upward. So f_large is the smallest element of F above ln(1/t) = k·ln 2,
/// where ln(2^k) comes from Boost's 400-bit log (reference::approximate) and "smallest element
/// above" is the reference's upward rounding (k ln 2 is irrational, never an element).
std::optional<mpq_class> f_large_independent(const Format& f, Rounding r) {
  if (r == Rounding::upward) return std::nullopt;
  mpq_class t = reference::min_positive(f);
  if (ropesim::numeric::is_nearest(r)) t /= 2;
  const mpq_class inverse = 1 / t;  // 2^k
  const long k = static_cast<long>(mpz_sizeinbase(inverse.get_num_mpz_t(), 2)) - 1;
  REQUIRE(inverse == mpq_class(mpz_class(1) << k));
  // k·ln 2 from Boost's 400-bit ln 2 (relative error unchanged by the exact scaling by k)
  reference::Approximation log_value =
      reference::approximate(reference::Function::log, reference::Number::of(2));
  log_value.approx *= k;
  if (log_value.approx > reference::max_finite(f)) return std::nullopt;
  const auto up = reference::round_approximation(f, log_value, Rounding::upward);
  REQUIRE(up.has_value());
  REQUIRE(up->is_finite());
  return up->value();
}

}  // namespace

TEST_CASE("f_large per preset and rounding mode (THEORY §1)",
          "[numeric][format_properties][f_large]") {
  using ropesim::numeric::f_large;
  struct Expected {
    Format f;
    Rounding r;
    std::optional<double> value;
  };
  const Format fp32_nosub = parse_format("fp32,subnormals=off");
  const Format fp16_nosub = parse_format("fp16,subnormals=off");
  const Expected cases[] = {
      // fp16 RNE: exp(-f) < 2^-25 (half of 2^-24) ⇔ f > 25 ln2 = 17.3286795...; fp16 spacing in
      // [16, 32) is 2^-6: ceil(17.3286795·64) = ceil(1109.03) = 1110 → 1110/64 = 17.34375.
      {Format::fp16(), Rounding::nearest_even, 17.34375},
      {Format::fp16(), Rounding::nearest_away, 17.34375},
      // fp16 RZ/RD: exp(-f) < 2^-24 ⇔ f > 24 ln2 = 16.63553...; ceil(1064.67) = 1065 → 16.640625.
      {Format::fp16(), Rounding::toward_zero, 16.640625},
      {Format::fp16(), Rounding::downward, 16.640625},
      {Format::fp16(), Rounding::upward, std::nullopt},
      // bf16 RNE: f > 134 ln2 = 92.8817...; spacing in [64, 128) is 2^-1 → 93.
      {Format::bf16(), Rounding::nearest_even, 93.0},
      // bf16 RZ: f > 133 ln2 = 92.1886... → 92.5.
      {Format::bf16(), Rounding::toward_zero, 92.5},
      // fp32 RNE: f > 150 ln2 = 103.97207708399179...; spacing in [64, 128) is 2^-17:
      // ceil(103.972077083991796·131072) = ceil(13627828.30...) = 13627829 → 13627829/2^17
      // = 103.97208404541015625 (0x1.9fe36ap+6); the element below, 103.9720764..., is
      // < 150 ln2, so exp of its negation rounds to 2^-149, not 0.
      {Format::fp32(), Rounding::nearest_even, 0x1.9fe36ap+6},
      // fp32 RZ/RD: f > 149 ln2 = 103.27892990343185...: ceil(·2^17) = 13536976 → 846061/8192
      // = 103.2789306640625 (0x1.9d1dap+6) ≈ 149·ln2 as THEORY §1 says.
      {Format::fp32(), Rounding::toward_zero, 0x1.9d1dap+6},
      {Format::fp32(), Rounding::downward, 0x1.9d1dap+6},
      {Format::fp32(), Rounding::upward, std::nullopt},
      // fp32 without subnormals, RNE: F has nothing in (0, 2^-126); exp(-f) rounds to 0 iff
      // it is below the midpoint 2^-127 ⇔ f > 127 ln2 = 88.02969193111305...;
      // ceil(·2^17) = 11538228 → 2884557/32768 = 88.0296936035156 (0x1.601e68p+6).
      // This is ≈ 127·ln2, not THEORY §1's "≈ 126·ln2" (which is toward_zero/downward, or
      // hardware flush-to-zero of every result below 2^-126).
      {fp32_nosub, Rounding::nearest_even, 0x1.601e68p+6},
      // ... toward_zero: exp(-f) < 2^-126 ⇔ f > 126 ln2 = 87.33654475...: 715461/8192.
      {fp32_nosub, Rounding::toward_zero, 0x1.5d58ap+6},
      // fp16 without subnormals: RNE f > 15 ln2 = 10.39720770...; spacing 2^-7 in [8, 16):
      // ceil(1330.84) = 1331 → 10.3984375; RZ f > 14 ln2 = 9.70406...: ceil(1242.12) = 1243
      // → 9.7109375.
      {fp16_nosub, Rounding::nearest_even, 10.3984375},
      {fp16_nosub, Rounding::toward_zero, 9.7109375},
      // fp64 RNE: f > 1075 ln2 = 745.13321910194120762...; spacing 2^-43 in [512, 1024):
      // 6554261109157970 · 2^-43 = 0x1.74910d52d3052p+9.
      {Format::fp64(), Rounding::nearest_even, 0x1.74910d52d3052p+9},
      // tf32 RNE: f > 137 ln2 = 94.96116...; spacing 2^-4: ceil(1519.38) = 1520 → 95.
      {Format::tf32(), Rounding::nearest_even, 95.0},
      // E4M3 RNE: f > 10 ln2 = 6.931...; spacing 2^-1 in [4, 8) → 7. RZ: f > 9 ln2 = 6.238 → 6.5.
      {Format::fp8e4m3(), Rounding::nearest_even, 7.0},
      {Format::fp8e4m3(), Rounding::toward_zero, 6.5},
      // E5M2 RNE: f > 17 ln2 = 11.78...; spacing 2 in [8, 16) → 12. RZ: f > 16 ln2 = 11.09 → 12.
      {Format::fp8e5m2(), Rounding::nearest_even, 12.0},
      {Format::fp8e5m2(), Rounding::downward, 12.0},
      // fixed:4.4: min 2^-4; RNE f > 5 ln2 = 3.4657 → 3.5 (steps of 1/16: 56/16);
      // RZ f > 4 ln2 = 2.7726 → 45/16 = 2.8125.
      {Format::fixed(4, 4), Rounding::nearest_even, 3.5},
      {Format::fixed(4, 4), Rounding::toward_zero, 2.8125},
      // fixed:1.8: max 2 - 2^-8 < 9 ln2 = 6.24: exp(-max) does not underflow → none.
      {Format::fixed(1, 8), Rounding::nearest_even, std::nullopt},
      // p 4, emin -3, emax 0: max 1.875, min subnormal 2^-6: 7 ln2 = 4.85 > max → none.
      {Format::custom(4, -3, 0), Rounding::nearest_even, std::nullopt},
  };
  for (const auto& e : cases) {
    INFO(e.f.name << " " << mode_name(e.r));
    // the hand derivation and the Boost-based derivation agree ...
    const auto independent = f_large_independent(e.f, e.r);
    REQUIRE(independent.has_value() == e.value.has_value());
    if (e.value) CHECK(*independent == mpq_class(*e.value));
    // ... and the code under test gives the same element
    const auto got = f_large(e.f, e.r);
    REQUIRE(got.has_value() == e.value.has_value());
    if (e.value) CHECK_SAME(*got, *e.value);
  }
  // default argument is round-to-nearest-even
  CHECK_SAME(*f_large(Format::fp16()), 17.34375);
  // a wide format (binary128-like, values in MPFR storage): min subnormal 2^(-16382-112) =
  // 2^-16494, so f > 16495·ln 2 ≈ 11433.5 (RNE) and f > 16494·ln 2 (RZ); compared exactly
  // with the Boost-based derivation.
  const Format quad = Format::custom(113, -16382, 16383);
  for (Rounding r : {Rounding::nearest_even, Rounding::toward_zero}) {
    INFO("p=113 " << mode_name(r));
    const auto independent = f_large_independent(quad, r);
    const auto got = f_large(quad, r);
    REQUIRE(independent.has_value());
    REQUIRE(got.has_value());
    CHECK(to_number(*got).value() == *independent);
    CHECK(std::fabs(independent->get_d() -
                    (r == Rounding::nearest_even ? 16495 : 16494) * 0.69314718055994531) < 1e-9);
  }
  CHECK_FALSE(f_large(quad, Rounding::upward).has_value());
}

TEST_CASE("f_large is the smallest element whose exp(-f) rounds to 0 (reference exp)",
          "[numeric][format_properties][f_large]") {
  // Semantic check with the reference's own exp (Boost 400 bits): round(exp(-f_large)) = 0
  // and round(exp(-next_down(f_large))) ≠ 0, for several formats and modes.
  const Format formats[] = {Format::fp16(),
                            Format::bf16(),
                            Format::fp32(),
                            Format::tf32(),
                            Format::fp8e4m3(),
                            Format::fp8e5m2(),
                            parse_format("bf16,subnormals=off"),
                            Format::fixed(6, 10),
                            Format::custom(5, -20, 6)};
  const Rounding modes[] = {Rounding::nearest_even, Rounding::nearest_away, Rounding::toward_zero,
                            Rounding::downward};
  for (const Format& f : formats) {
    for (Rounding r : modes) {
      INFO(f.name << " " << mode_name(r));
      const auto fl = ropesim::numeric::f_large(f, r);
      REQUIRE(fl.has_value());
      const reference::Number x = to_number(*fl);
      const reference::Number below =
          to_number(ropesim::numeric::next_down(f, *fl));  // checked elsewhere
      auto rounded_exp_of_negation = [&](reference::Number y) {
        y.negative = true;
        const auto a = reference::approximate(reference::Function::exp, y);
        const auto rounded = reference::round_approximation(f, a, r);
        REQUIRE(rounded.has_value());
        return *rounded;
      };
      CHECK(rounded_exp_of_negation(x).is_zero());
      CHECK_FALSE(rounded_exp_of_negation(below).is_zero());
      CHECK(reference::same(reference::convert(f, x, Rounding::toward_zero), x));  // in F
    }
  }
}

TEST_CASE("N_max = floor(min(1, max) / min positive)", "[numeric][format_properties]") {
  using ropesim::numeric::n_max;
  const mpz_class one = 1;
  // fp16: 1 / 2^-24 = 2^24; fp32: 2^149; E4M3: 2^9; E5M2: 2^16; bf16: 2^133; tf32: 2^136;
  // fp64: 2^1074; fp32 without subnormals: 1 / 2^-126.
  CHECK(n_max(Format::fp16()) == one << 24);
  CHECK(n_max(Format::fp32()) == one << 149);
  CHECK(n_max(Format::fp8e4m3()) == one << 9);
  CHECK(n_max(Format::fp8e5m2()) == one << 16);
  CHECK(n_max(Format::bf16()) == one << 133);
  CHECK(n_max(Format::tf32()) == one << 136);
  CHECK(n_max(Format::fp64()) == one << 1074);
  CHECK(n_max(parse_format("fp32,subnormals=off")) == one << 126);
  // fixed:4.4: min(1, 15.9375) / (1/16) = 16; fixed:0.4: max 15/16 < 1: (15/16)/(1/16) = 15.
  CHECK(n_max(Format::fixed(4, 4)) == 16);
  CHECK(n_max(Format::fixed(0, 4)) == 15);
  // p 2, emin 0, emax 0: elements 0.5 (subnormal), 1, 1.5: 1 / 0.5 = 2.
  CHECK(n_max(Format::custom(2, 0, 0)) == 2);
}

// ------------------------------------------------------------------------------ neighbours

TEST_CASE("next_up and next_down by hand", "[numeric][engine][next]") {
  using ropesim::numeric::next_down;
  using ropesim::numeric::next_up;
  const Format h = Format::fp16();
  // 1 = 1.0000000000·2^0: next up adds 2^-10; below 1 the binade [1/2, 1) has spacing 2^-11.
  CHECK_SAME(next_up(h, v(1)), 1 + std::ldexp(1, -10));
  CHECK_SAME(next_down(h, v(1)), 1 - std::ldexp(1, -11));
  CHECK_SAME(next_up(h, v(0)), std::ldexp(1, -24));
  CHECK_SAME(next_up(h, v(-0.0)), std::ldexp(1, -24));
  CHECK_SAME(next_down(h, v(0)), -std::ldexp(1, -24));
  CHECK_SAME(next_down(h, v(-0.0)), -std::ldexp(1, -24));
  CHECK_SAME(next_up(h, v(-std::ldexp(1, -24))), -0.0);  // IEEE nextUp(-min) = -0
  CHECK_SAME(next_down(h, v(std::ldexp(1, -24))), 0.0);
  // the largest subnormal (1023·2^-24) and the smallest normal 2^-14 are neighbours
  CHECK_SAME(next_up(h, v(std::ldexp(1023, -24))), std::ldexp(1, -14));
  CHECK_SAME(next_down(h, v(std::ldexp(1, -14))), std::ldexp(1023, -24));
  // [1024, 2048) has spacing 1, [2048, 4096) spacing 2
  CHECK_SAME(next_up(h, v(2047)), 2048);
  CHECK_SAME(next_up(h, v(2048)), 2050);
  CHECK_SAME(next_down(h, v(2048)), 2047);
  CHECK_SAME(next_up(h, v(65504)), inf);
  CHECK_SAME(next_down(h, v(-65504)), -inf);
  CHECK_SAME(next_up(h, v(-inf)), -65504);
  CHECK_SAME(next_down(h, v(inf)), 65504);
  CHECK_SAME(next_up(h, v(inf)), inf);
  CHECK_SAME(next_down(h, v(-inf)), -inf);
  CHECK(next_up(h, v(nan_value)).is_nan());
  CHECK(next_down(h, v(nan_value)).is_nan());
  CHECK_SAME(next_down(h, v(-1)), -1 - std::ldexp(1, -10));

  const Format e4m3 = Format::fp8e4m3();
  // no infinity: next_up(max) = max; the top binade steps by 32: 416, 448.
  CHECK_SAME(next_up(e4m3, v(448)), 448);
  CHECK_SAME(next_down(e4m3, v(-448)), -448);
  CHECK_SAME(next_down(e4m3, v(448)), 416);
  CHECK_SAME(next_up(e4m3, v(-448)), -416);
  CHECK_SAME(next_up(e4m3, v(0)), std::ldexp(1, -9));

  const Format nosub = parse_format("fp16,subnormals=off");
  CHECK_SAME(next_up(nosub, v(0)), std::ldexp(1, -14));
  CHECK_SAME(next_down(nosub, v(std::ldexp(1, -14))), 0.0);
  CHECK_SAME(next_up(nosub, v(-std::ldexp(1, -14))), -0.0);

  const Format fx = Format::fixed(4, 4);
  CHECK_SAME(next_up(fx, v(0)), 0.0625);
  CHECK_SAME(next_up(fx, v(1)), 1.0625);
  CHECK_SAME(next_up(fx, v(15.9375)), 15.9375);  // saturating, no infinity
  CHECK_SAME(next_down(fx, v(-15.9375)), -15.9375);

  const Format f32 = Format::fp32();
  CHECK_SAME(next_up(f32, v(1)), 1 + std::ldexp(1, -23));
  CHECK_SAME(next_up(f32, v(FLT_MAX)), inf);
  CHECK_SAME(next_up(Format::fp64(), v(1)), std::nextafter(1.0, 2.0));
  CHECK_SAME(next_down(Format::fp64(), v(DBL_MIN)),
             DBL_MIN - std::numeric_limits<double>::denorm_min());
}

TEST_CASE("ulp_exponent by hand", "[numeric][engine][ulp]") {
  using ropesim::numeric::ulp_exponent;
  const Format h = Format::fp16();
  // Goldberg: ulp(x) = 2^(e - p + 1) for x in [2^e, 2^(e+1)), e ≥ emin; subnormals and 0 get
  // 2^(emin - p + 1). fp16: p - 1 = 10.
  CHECK(ulp_exponent(h, v(1)) == -10);
  CHECK(ulp_exponent(h, v(1.5)) == -10);
  CHECK(ulp_exponent(h, v(-3)) == -9);
  CHECK(ulp_exponent(h, v(1 - std::ldexp(1, -11))) == -11);
  CHECK(ulp_exponent(h, v(65504)) == 5);  // 2^15 binade: 15 - 10
  CHECK(ulp_exponent(h, v(0)) == -24);
  CHECK(ulp_exponent(h, v(-0.0)) == -24);
  CHECK(ulp_exponent(h, v(std::ldexp(1, -14))) == -24);
  CHECK(ulp_exponent(h, v(std::ldexp(1, -20))) == -24);  // subnormal
  CHECK(ulp_exponent(Format::fp32(), v(1)) == -23);
  CHECK(ulp_exponent(Format::fp64(), v(1)) == -52);
  CHECK(ulp_exponent(Format::fp64(), v(DBL_MIN)) == -1074);
  CHECK(ulp_exponent(Format::bf16(), v(93)) == -1);     // 2^6 binade, p 8: 6 - 7
  CHECK(ulp_exponent(Format::fp8e4m3(), v(448)) == 5);  // 2^8 binade, p 4: 8 - 3
  CHECK(ulp_exponent(Format::fixed(4, 4), v(3.5)) == -4);
  CHECK(ulp_exponent(Format::fixed(4, 4), v(0)) == -4);
  CHECK_THROWS_AS(ulp_exponent(h, v(inf)), InvalidArgument);
  CHECK_THROWS_AS(ulp_exponent(h, v(-inf)), InvalidArgument);
  CHECK_THROWS_AS(ulp_exponent(h, v(nan_value)), InvalidArgument);
}

// ------------------------------------------------------------------------------ rounding

TEST_CASE("ties: nearest_even vs nearest_away, by hand", "[numeric][engine][ties]") {
  struct Case {
    Format f;
    mpq_class x;
    double rne, rna;
  };
  const Case cases[] = {
      // E5M2 (p 3): [1, 2) has spacing 1/4; 1.125 is the midpoint of 1 (m = 4, even) and
      // 1.25 (m = 5): RNE 1, RNA 1.25.
      {Format::fp8e5m2(), mpq_class(9, 8), 1.0, 1.25},
      {Format::fp8e5m2(), mpq_class(-9, 8), -1.0, -1.25},
      // 1.375 between 1.25 (m 5) and 1.5 (m 6): both give 1.5.
      {Format::fp8e5m2(), mpq_class(11, 8), 1.5, 1.5},
      // subnormals m·2^-16: 2^-17 is the midpoint of 0 and 2^-16 → RNE +0, RNA 2^-16
      {Format::fp8e5m2(), mpq_class(1, 131072), 0.0, std::ldexp(1, -16)},
      {Format::fp8e5m2(), mpq_class(-1, 131072), -0.0, -std::ldexp(1, -16)},
      // 3·2^-17 between 1·2^-16 and 2·2^-16 → 2·2^-16 both; 5·2^-17 between 2 and 3 (·2^-16):
      // RNE 2·2^-16, RNA 3·2^-16.
      {Format::fp8e5m2(), mpq_class(3, 131072), std::ldexp(1, -15), std::ldexp(1, -15)},
      {Format::fp8e5m2(), mpq_class(5, 131072), std::ldexp(1, -15), std::ldexp(3, -16)},
      // E4M3 (p 4): [1, 2) spacing 1/8: 1.0625 → RNE 1, RNA 1.125; [16, 32) spacing 2:
      // 17 → RNE 16 (m 8), RNA 18.
      {Format::fp8e4m3(), mpq_class(17, 16), 1.0, 1.125},
      {Format::fp8e4m3(), mpq_class(17), 16.0, 18.0},
      // fp16: [2048, 4096) spacing 2: 2049 → RNE 2048 (m 1024), RNA 2050; 2051 → 2052 both
      // (2050 = 1025·2 is odd).
      {Format::fp16(), mpq_class(2049), 2048.0, 2050.0},
      {Format::fp16(), mpq_class(2051), 2052.0, 2052.0},
      // fp32: 2^24 + 1 → RNE 2^24, RNA 2^24 + 2.
      {Format::fp32(), mpq_class(16777217), 16777216.0, 16777218.0},
      // fixed:4.4: 1/32 is the midpoint of 0 and 1/16 (k 0 even): RNE 0, RNA 1/16;
      // 3/32 → k 2 (1/8) both.
      {Format::fixed(4, 4), mpq_class(1, 32), 0.0, 0.0625},
      {Format::fixed(4, 4), mpq_class(3, 32), 0.125, 0.125},
  };
  for (const Engine* e : engines()) {
    for (const auto& c : cases) {
      INFO(e->name() << " " << c.f.name << " x = " << c.x.get_str());
      CHECK_SAME(e->from_rational(c.f, c.x, Rounding::nearest_even), c.rne);
      CHECK_SAME(e->from_rational(c.f, c.x, Rounding::nearest_away), c.rna);
    }
    // the same ties through convert (a double input) and from_integer
    CHECK_SAME(e->convert(Format::fp8e5m2(), v(1.125), Rounding::nearest_even), 1.0);
    CHECK_SAME(e->convert(Format::fp8e5m2(), v(1.125), Rounding::nearest_away), 1.25);
    CHECK_SAME(e->from_integer(Format::fp32(), mpz_class(16777217), Rounding::nearest_even),
               16777216.0);
    CHECK_SAME(e->from_integer(Format::fp32(), mpz_class(16777217), Rounding::upward), 16777218.0);
    CHECK_SAME(e->from_integer(Format::fp16(), mpz_class(-2049), Rounding::nearest_away), -2050.0);
  }
}

TEST_CASE("directed rounding by hand", "[numeric][engine][directed]") {
  // E5M2: 1.1 lies in (1, 1.25).
  const Format f = Format::fp8e5m2();
  const mpq_class x(11, 10);
  for (const Engine* e : engines()) {
    INFO(e->name());
    CHECK_SAME(e->from_rational(f, x, Rounding::toward_zero), 1.0);
    CHECK_SAME(e->from_rational(f, x, Rounding::upward), 1.25);
    CHECK_SAME(e->from_rational(f, x, Rounding::downward), 1.0);
    CHECK_SAME(e->from_rational(f, -x, Rounding::toward_zero), -1.0);
    CHECK_SAME(e->from_rational(f, -x, Rounding::upward), -1.0);
    CHECK_SAME(e->from_rational(f, -x, Rounding::downward), -1.25);
    // below the smallest subnormal 2^-16: RU gives it, RD and RZ give +0; negatives mirror.
    const mpq_class tiny(1, 1 << 20);
    CHECK_SAME(e->from_rational(f, tiny, Rounding::upward), std::ldexp(1, -16));
    CHECK_SAME(e->from_rational(f, tiny, Rounding::downward), 0.0);
    CHECK_SAME(e->from_rational(f, -tiny, Rounding::upward), -0.0);
    CHECK_SAME(e->from_rational(f, -tiny, Rounding::downward), -std::ldexp(1, -16));
    CHECK_SAME(e->from_rational(f, -tiny, Rounding::toward_zero), -0.0);
    // subnormals off (fp16): (0, 2^-14) holds no element; its midpoint is 2^-15.
    const Format nosub = parse_format("fp16,subnormals=off");
    CHECK_SAME(e->from_rational(nosub, mpq_class(1, 1 << 16), Rounding::upward),
               std::ldexp(1, -14));
    CHECK_SAME(e->from_rational(nosub, mpq_class(1, 1 << 16), Rounding::toward_zero), 0.0);
    // 3·2^-17 = 0.75·2^-15 < midpoint → 0; 5·2^-17 = 1.25·2^-15 > midpoint → 2^-14
    CHECK_SAME(e->from_rational(nosub, mpq_class(3, 1 << 17), Rounding::nearest_even), 0.0);
    CHECK_SAME(e->from_rational(nosub, mpq_class(-5, 1 << 17), Rounding::nearest_even),
               -std::ldexp(1, -14));
    // the midpoint itself: ties-to-away goes up (convention for RNE: see the report)
    CHECK_SAME(e->from_rational(nosub, mpq_class(1, 1 << 15), Rounding::nearest_away),
               std::ldexp(1, -14));
  }
}
