#include "numeric/decimal_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

namespace ropesim::numeric {

namespace {

/// 1e0 .. 1e308 as binary64 literals (the compiler rounds each correctly, as pandas' table).
const std::array<double, 309>& powers_of_ten() {
  static const std::array<double, 309> table = [] {
    std::array<double, 309> t{};
    for (int k = 0; k < 309; ++k) {
      const std::string text = "1e" + std::to_string(k);
      std::from_chars(text.data(), text.data() + text.size(), t[static_cast<std::size_t>(k)]);
    }
    return t;
  }();
  return table;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// A correctly rounded reading (std::from_chars, round to nearest even).
double correct_read(std::string_view text) {
  double v = std::numeric_limits<double>::quiet_NaN();
  const char* begin = text.data();
  if (!text.empty() && text.front() == '+') ++begin;
  std::from_chars(begin, text.data() + text.size(), v);
  return v;
}

}  // namespace

namespace {

/// pandas' last step: the accumulated digits `number` times 10^exponent, as precise_xstrtod.
double pandas_scale(double number, int exponent) {
  const auto& e = powers_of_ten();
  // one rounding per operation, as pandas' C (the build has -ffp-contract=off: no FMA)
  double x = number;
  if (exponent > 308) return HUGE_VAL;  // pandas' answer whatever the sign
  if (exponent > 0) {
    x = x * e[static_cast<std::size_t>(exponent)];
  } else if (exponent < -308) {  // subnormal results: two divisions
    if (exponent < -616) x = 0.;
    x = x / e[static_cast<std::size_t>(-308 - std::max(exponent, -616))];
    x = x / e[308];
  } else {
    x = x / e[static_cast<std::size_t>(-exponent)];
  }
  return x;
}

/// pandas' accumulation of one more digit: number * 10 + d, two roundings.
double pandas_digit(double number, int d) {
  const double times_ten = number * 10.;
  return times_ten + d;
}

}  // namespace

double pandas_default_read(std::string_view text) {
  constexpr int max_digits = 17;
  std::size_t p = 0;
  auto at = [&](std::size_t i) { return i < text.size() ? text[i] : '\0'; };
  bool negative = false;
  if (at(p) == '-' || at(p) == '+') {
    negative = at(p) == '-';
    ++p;
  }
  double number = 0.;
  int exponent = 0, num_digits = 0;
  while (is_digit(at(p))) {
    if (num_digits < max_digits) {
      number = pandas_digit(number, at(p) - '0');
      ++num_digits;
    } else {
      ++exponent;
    }
    ++p;
  }
  if (at(p) == '.') {
    ++p;
    int num_decimals = 0;
    while (num_digits < max_digits && is_digit(at(p))) {
      number = pandas_digit(number, at(p) - '0');
      ++p;
      ++num_digits;
      ++num_decimals;
    }
    while (is_digit(at(p))) ++p;  // digits past the 17th are dropped
    exponent -= num_decimals;
  }
  if (num_digits == 0) return std::numeric_limits<double>::quiet_NaN();
  if (negative) number = -number;
  if (at(p) == 'e' || at(p) == 'E') {
    ++p;
    bool negative_exponent = false;
    if (at(p) == '-' || at(p) == '+') {
      negative_exponent = at(p) == '-';
      ++p;
    }
    int n = 0;
    while (is_digit(at(p)) && n < 100000) n = n * 10 + (at(p++) - '0');
    exponent += negative_exponent ? -n : n;
  }
  if (p != text.size()) return std::numeric_limits<double>::quiet_NaN();
  return pandas_scale(number, exponent);
}

std::string csv_decimal(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string shortest = fmt::format("{}", v);
  if (pandas_default_read(shortest) == v) return shortest;
  const bool negative = std::signbit(v);
  // No decimal with fewer significant digits than the shortest reads back as v.
  std::string significant;
  for (const char c : shortest.substr(0, shortest.find('e'))) {
    if (is_digit(c)) significant += c;
  }
  const std::size_t first = significant.find_first_not_of('0');
  const std::size_t last = significant.find_last_not_of('0');
  const int fewest = first == std::string::npos ? 1 : static_cast<int>(last - first + 1);
  for (int digits = std::clamp(fewest, 15, 17); digits <= 17; ++digits) {
    // |v| rounded to `digits` significant digits, D.DDD...e±XX: the candidates are the
    // integers M near that mantissa, read as M * 10^(X - digits + 1).
    const std::string nearest = fmt::format("{:.{}e}", std::fabs(v), digits - 1);
    const std::size_t e_at = nearest.find('e');
    std::string mantissa = nearest.substr(0, e_at);
    mantissa.erase(1, 1);  // the point
    const int exponent = std::stoi(nearest.substr(e_at + 1)) - (digits - 1);
    const std::int64_t centre = std::stoll(mantissa);
    // Only integers within half an ulp of v read back as v: about ulp/2 / 10^exponent units
    // either side (one more for the rounding of this estimate), at most 20.
    const double half_ulp = (std::nextafter(std::fabs(v), HUGE_VAL) - std::fabs(v)) / 2;
    const double units = half_ulp / std::pow(10.0, exponent);
    const int radius = units < 19 ? static_cast<int>(units) + 1 : 20;
    for (int step = 0; step <= 2 * radius; ++step) {
      const std::int64_t delta = step % 2 == 0 ? step / 2 : -(step + 1) / 2;  // 0, -1, 1, -2, ...
      std::array<char, 24> m{};
      const auto [end, ec] = std::to_chars(m.data(), m.data() + m.size(), centre + delta);
      if (ec != std::errc() || end - m.data() != digits) continue;  // keeps the exponent's meaning
      double number = 0.;
      for (const char* c = m.data(); c != end; ++c) number = pandas_digit(number, *c - '0');
      if (pandas_scale(negative ? -number : number, exponent) != v) continue;
      const std::string text = std::string(negative ? "-" : "") + m[0] + "." +
                               std::string(m.data() + 1, end) + nearest.substr(e_at);
      if (correct_read(text) == v) return text;
    }
  }
  return shortest;
}

}  // namespace ropesim::numeric
