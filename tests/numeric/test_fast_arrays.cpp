// The array forms of the fast engine against the MPFR engine, element by element and bit for
// bit (numeric::round_elementwise's block kernels and numeric::round_elementwise_unary;
// numeric/fast_engine_arrays.cpp).
//
// The MPFR engine is the independent implementation (its own tests check it against GMP
// rationals, tests/numeric/test_exhaustive.cpp). The operand arrays are laid out so that both
// paths of round_elementwise run in one call: blocks of 256 elements (the kernel's block) of
// "clean" pairs — elements of F in the middle of its normal range, ties included — which the
// branch-free kernel must accept, alternate with blocks that also hold subnormals, values near
// overflow, ±0, ±inf, NaN and doubles that are not in F, which send the whole block to the
// scalar path; the arrays end in a partial block of odd length. The block counters of
// fast_engine_counters() show that each path ran.
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/format.hpp"
#include "tests/numeric/test_support.hpp"

namespace {

using namespace numeric_test;
using ropesim::numeric::ElementwiseOperation;
using ropesim::numeric::fast_engine_counters;
using ropesim::numeric::mpfr_engine;
using ropesim::numeric::parse_format;
using ropesim::numeric::UnaryFunction;

constexpr std::size_t kBlock = 256;  // the kernel's block length (numeric/fast_engine_arrays.cpp)

bool identical(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

constexpr ElementwiseOperation array_ops[] = {ElementwiseOperation::add, ElementwiseOperation::sub,
                                              ElementwiseOperation::mul, ElementwiseOperation::div};

const char* op_name(ElementwiseOperation op) {
  switch (op) {
    case ElementwiseOperation::add:
      return "add";
    case ElementwiseOperation::sub:
      return "sub";
    case ElementwiseOperation::mul:
      return "mul";
    case ElementwiseOperation::div:
      return "div";
  }
  return "?";
}

/// The MPFR engine's round_F(x ∘ y): the reference for every element.
double reference(ElementwiseOperation op, const Format& f, double x, double y, Rounding r) {
  const Value a = Value::from_double_exact(x), b = Value::from_double_exact(y);
  switch (op) {
    case ElementwiseOperation::add:
      return mpfr_engine().add(f, a, b, r).narrow();
    case ElementwiseOperation::sub:
      return mpfr_engine().sub(f, a, b, r).narrow();
    case ElementwiseOperation::mul:
      return mpfr_engine().mul(f, a, b, r).narrow();
    case ElementwiseOperation::div:
      return mpfr_engine().div(f, a, b, r).narrow();
  }
  return 0;
}

/// An element of F with exponent e (normal: e ≥ emin; subnormal when e < emin) and a random
/// significand, positive.
double element(const Format& f, int e, std::mt19937_64& rng) {
  const std::uint64_t half = std::uint64_t{1} << (f.precision - 1);
  std::uint64_t m;
  if (e < f.emin) {
    m = std::uniform_int_distribution<std::uint64_t>(1, half - 1)(rng);
  } else {
    const std::uint64_t top =
        e == f.emax ? 2 * half - static_cast<std::uint64_t>(f.reserved_top_codes) : 2 * half;
    m = std::uniform_int_distribution<std::uint64_t>(half, top - 1)(rng);
  }
  return std::ldexp(static_cast<double>(m), (e < f.emin ? f.emin : e) - f.precision + 1);
}

/// A pair the kernel must accept for every operation and mode: both operands in F with
/// exponents in the middle third of [emin, emax] (products, quotients, sums and differences
/// stay in F's normal range, below max finite), and no cancellation but to exact zero: for
/// add both operands are positive, for sub they have opposite signs (|x − y| = |x| + |y|); mul
/// and div take any signs. One pair in four is a tie of + or −: y is half a quantum of x
/// (x + y is a midpoint of F), so both nearest modes are decided on the kernel path too. One
/// pair in sixteen is an exact zero sum or difference (x, −x for add; x, x for sub), and one
/// in thirty-two has signed zero operands (IEEE 754 §6.3's zero signs, mode by mode).
std::pair<double, double> clean_pair(const Format& f, ElementwiseOperation op,
                                     std::mt19937_64& rng) {
  const int span = f.emax - f.emin;
  const int lo = f.emin + (span + 2) / 3, hi = f.emax - (span + 2) / 3;
  std::uniform_int_distribution<int> exponent(lo, std::max(lo, hi));
  const int ex = exponent(rng);
  double x = element(f, ex, rng), y = element(f, exponent(rng), rng);
  if (rng() % 4 == 0 && ex - f.precision >= lo)
    y = std::ldexp(1.0, ex - f.precision);  // x ± y: a midpoint
  const bool flip_x = rng() & 1, flip_y = rng() & 1;
  switch (op) {
    case ElementwiseOperation::add:
      break;
    case ElementwiseOperation::sub:
      y = -y;
      break;
    case ElementwiseOperation::mul:
    case ElementwiseOperation::div:
      if (flip_x) x = -x;
      if (flip_y) y = -y;
      break;
  }
  if (op == ElementwiseOperation::sub && flip_x) {  // both signs flipped: still no cancellation
    x = -x;
    y = -y;
  }
  const auto kind = rng() % 32;
  if (kind < 2 && (op == ElementwiseOperation::add || op == ElementwiseOperation::sub)) {
    y = op == ElementwiseOperation::add ? -x : x;  // exact zero
  } else if (kind == 2) {
    x = (rng() & 1) ? -0.0 : 0.0;
    if (op != ElementwiseOperation::div && (rng() & 1)) y = (rng() & 1) ? -0.0 : 0.0;
  }
  return {x, y};
}

/// A value the kernel must refuse (or that tests the scalar path's conventions): subnormals,
/// the largest elements (overflow), ±0, ±inf, NaN, a double that is not in F (a 26-bit
/// significand, or a 53-bit one), the smallest subnormal.
double special(const Format& f, std::mt19937_64& rng) {
  const double max_finite =
      (2 - static_cast<double>(1 + f.reserved_top_codes) * std::ldexp(1.0, 1 - f.precision)) *
      std::ldexp(1.0, f.emax);
  const double sign = (rng() & 1) ? -1.0 : 1.0;
  switch (rng() % 10) {
    case 0:
      return sign * (f.subnormals ? element(f, f.emin - 1, rng) : std::ldexp(1.0, f.emin));
    case 1:
      return sign * max_finite;
    case 2:
      return sign * 0.0;
    case 3:
      return sign * HUGE_VAL;
    case 4:
      return std::nan("");
    case 5:
      return sign *
             std::ldexp(static_cast<double>((rng() % (1u << 25)) | (1u << 25)), -25);  // 26 bits
    case 6:
      return sign * (1.0 + std::ldexp(1.0, -52));  // 53 bits: not a small operand
    case 7:
      return sign * std::ldexp(1.0, f.emin - f.precision + 1);
    case 8:
      return sign * element(f, f.emax, rng);
    default:
      return sign * element(f, f.emin, rng);  // results below 2^emin
  }
}

/// A pair of elements of F whose result lies at the bottom of F's range: below 2^emin (F's
/// subnormals, or the gap without them) or just above it, through products and quotients of
/// small elements by elements near 1 and sums of elements near 2^emin of either sign.
std::pair<double, double> low_pair(const Format& f, ElementwiseOperation op, std::mt19937_64& rng) {
  const double sign_x = (rng() & 1) ? -1.0 : 1.0, sign_y = (rng() & 1) ? -1.0 : 1.0;
  const int near_one = std::clamp(static_cast<int>(rng() % 2) - 1, f.emin, f.emax);
  const double x = sign_x * element(f, f.emin + static_cast<int>(rng() % 2), rng);
  switch (op) {
    case ElementwiseOperation::mul:
      return {x, sign_y * element(f, near_one, rng)};
    case ElementwiseOperation::div:
      return {x, sign_y * element(f, std::min(f.emax, near_one + 1), rng)};
    default:
      return {x, sign_y * element(f, f.emin + static_cast<int>(rng() % 2), rng)};
  }
}

/// A pair whose result lies near max finite: the largest binade with a small addend, or
/// products and quotients by elements near 1 (some overflow, most do not).
std::pair<double, double> high_pair(const Format& f, ElementwiseOperation op,
                                    std::mt19937_64& rng) {
  const double sign = (rng() & 1) ? -1.0 : 1.0;
  const double x = sign * element(f, f.emax, rng);
  const int small = std::max(f.emin, f.emax - f.precision - 1 + static_cast<int>(rng() % 3));
  switch (op) {
    case ElementwiseOperation::add:
      return {x, sign * element(f, small, rng)};
    case ElementwiseOperation::sub:
      return {x, -sign * element(f, small, rng)};
    case ElementwiseOperation::mul:
      return {x, element(f, std::clamp(-1, f.emin, f.emax), rng)};
    case ElementwiseOperation::div:
      return {x, element(f, std::clamp(0, f.emin, f.emax), rng)};
  }
  return {x, x};
}

/// A pair with an operand that is not in F's normal range but has no bits below F's quantum
/// (the kernel must refuse it): for + and −, x = 2^(emin−p) (half F's smallest subnormal, a
/// midpoint) and y = ±2^(emin−p−60): binary64 rounds x + y to the midpoint x, so computing in
/// binary64 first would round to 0 where the exact sum rounds away from it under nearest
/// modes; for × and ÷, an F subnormal (or 2^(emin−p)) and an element near 1.
std::pair<double, double> tiny_pair(const Format& f, ElementwiseOperation op,
                                    std::mt19937_64& rng) {
  const double sign = (rng() & 1) ? -1.0 : 1.0;
  const double x = sign * std::ldexp(1.0, f.emin - f.precision);
  const double y = ((rng() & 1) ? -1.0 : 1.0) * std::ldexp(1.0, f.emin - f.precision - 60);
  switch (op) {
    case ElementwiseOperation::add:
    case ElementwiseOperation::sub:
      return {x, y};
    case ElementwiseOperation::mul:
    case ElementwiseOperation::div: {
      const double small = f.subnormals && (rng() & 1) ? element(f, f.emin - 1, rng) : x;
      return {small, element(f, std::clamp(0, f.emin, f.emax), rng)};
    }
  }
  return {x, y};
}

/// Arrays of 6 full blocks and a partial block of odd length: block 0 and 5 clean pairs, block
/// 2 low_pairs and block 3 high_pairs (each accepted by the kernel or not, depending on the
/// mode and format), block 4 clean with a few tiny_pairs, block 1 and the tail clean but for
/// one operand no kernel accepts and `specials` special operands at random places.
void layout(const Format& f, ElementwiseOperation op, std::mt19937_64& rng, int specials,
            std::vector<double>& a, std::vector<double>& b) {
  const std::size_t n = 6 * kBlock + 37;
  a.resize(n);
  b.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t block = i / kBlock;
    std::tie(a[i], b[i]) = block == 2   ? low_pair(f, op, rng)
                           : block == 3 ? high_pair(f, op, rng)
                                        : clean_pair(f, op, rng);
  }
  for (int k = 0; k < 4; ++k) {
    const std::size_t i = 4 * kBlock + rng() % kBlock;
    std::tie(a[i], b[i]) = tiny_pair(f, op, rng);
  }
  for (std::size_t start : {kBlock, 6 * kBlock}) {
    const std::size_t length = std::min(kBlock, n - start);
    // one value no kernel accepts (NaN, ±inf or a 53-bit double), then random specials
    const double refused[] = {std::nan(""), HUGE_VAL, -HUGE_VAL, 1.0 + std::ldexp(1.0, -52)};
    (rng() & 1 ? a : b)[start + rng() % length] = refused[rng() % 4];
    for (int k = 0; k < specials; ++k) {
      const std::size_t i = start + rng() % length;
      (rng() & 1 ? a[i] : b[i]) = special(f, rng);
      if (rng() % 3 == 0) a[i] = special(f, rng);
    }
  }
}

/// Compares round_elementwise with the MPFR engine for every operation and mode on `rounds`
/// layouts of f; counts the blocks each path took. Returns the number of disagreements and
/// records the first few in `first`.
struct PathCounts {
  std::uint64_t kernel = 0, scalar = 0;
};

std::size_t compare_arrays(const Format& f, std::mt19937_64& rng, int rounds,
                           std::vector<std::string>& first, PathCounts* paths_per_case,
                           std::span<const ElementwiseOperation> ops = array_ops,
                           std::span<const Rounding> modes = all_modes) {
  std::size_t mismatches = 0;
  std::vector<double> a, b, out, in_place;
  int case_index = 0;
  for (ElementwiseOperation op : ops) {
    for (Rounding r : modes) {
      const auto before = fast_engine_counters();
      for (int round = 0; round < rounds; ++round) {
        layout(f, op, rng, 1 + round % 4, a, b);
        out.assign(a.size(), 0.0);
        ropesim::numeric::round_elementwise(f, op, a, b, out, r);
        in_place = a;  // out is the same array as a
        ropesim::numeric::round_elementwise(f, op, in_place, b, in_place, r);
        for (std::size_t i = 0; i < a.size(); ++i) {
          const double expected = reference(op, f, a[i], b[i], r);
          for (double got : {out[i], in_place[i]}) {
            if (identical(got, expected)) continue;
            ++mismatches;
            if (first.size() < 8) {
              first.push_back(std::string(op_name(op)) + "(" + hex(a[i]) + ", " + hex(b[i]) + ") " +
                              mode_name(r) + " in " + f.name + " at " + std::to_string(i) +
                              ": array " + hex(got) + ", mpfr " + hex(expected));
            }
          }
        }
      }
      const auto after = fast_engine_counters();
      if (paths_per_case != nullptr) {
        paths_per_case[case_index] = {after.kernel_blocks - before.kernel_blocks,
                                      after.scalar_blocks - before.scalar_blocks};
      }
      ++case_index;
    }
  }
  return mismatches;
}

}  // namespace

TEST_CASE(
    "round_elementwise: kernel and scalar blocks give the MPFR engine's bits, named formats, five "
    "modes",
    "[fast_arrays]") {
  std::mt19937_64 rng(8);
  for (const Format& f :
       {Format::fp32(), Format::bf16(), Format::fp16(), Format::fp8e4m3(), Format::fp8e5m2(),
        parse_format("fp16,overflow=saturate"), parse_format("bf16,subnormals=off"),
        parse_format("fp8e5m2,subnormals=off"), parse_format("fp8e4m3,subnormals=off")}) {
    INFO(f.name);
    std::vector<std::string> first;
    PathCounts paths[4 * 5];
    const std::size_t mismatches = compare_arrays(f, rng, 2, first, paths);
    for (const auto& line : first) UNSCOPED_INFO(line);
    CHECK(mismatches == 0);
    // Each (operation, mode) ran blocks through the kernel and through the scalar path.
    for (int op = 0; op < 4; ++op) {
      for (int mode = 0; mode < 5; ++mode) {
        INFO(op_name(array_ops[op]) << " " << mode_name(all_modes[mode]));
        CHECK(paths[op * 5 + mode].scalar >= 2);
        CHECK(paths[op * 5 + mode].kernel >= 2);
      }
    }
  }
}

TEST_CASE(
    "round_elementwise: formats generated by RapidCheck, p in [2, 25], agree with the MPFR engine",
    "[fast_arrays]") {
  const auto before = fast_engine_counters();
  rc::prop("random fast formats, arrays mixing kernel and scalar blocks", [] {
    const int p = *rc::gen::inRange(2, 26);
    const int emin = *rc::gen::inRange(-400, 0);
    const int emax = *rc::gen::inRange(std::max(emin + 6, 3), 401);
    Format f = Format::custom(p, emin, emax);
    f.subnormals = *rc::gen::inRange(0, 3) != 0;
    const int overflow = *rc::gen::inRange(0, 3);
    if (overflow == 1) f.has_infinity = false;  // saturating
    if (overflow == 2 && p >= 3) {              // E4M3-like: saturating with a reserved top code
      f.has_infinity = false;
      f.reserved_top_codes = 1;
    }
    // one operation and mode per format keeps the 200 trials cheap; the named formats above
    // run every pair
    const ElementwiseOperation op[] = {array_ops[*rc::gen::inRange(0, 4)]};
    const Rounding mode[] = {all_modes[*rc::gen::inRange(0, 5)]};
    std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
    std::vector<std::string> first;
    const std::size_t mismatches = compare_arrays(f, rng, 1, first, nullptr, op, mode);
    for (const auto& line : first) RC_LOG() << line << "\n";
    RC_ASSERT(mismatches == 0u);
  });
  const auto after = fast_engine_counters();
  CHECK(after.kernel_blocks > before.kernel_blocks);
  CHECK(after.scalar_blocks > before.scalar_blocks);
}

TEST_CASE("round_elementwise: refusals", "[fast_arrays]") {
  std::vector<double> a(4, 1.0), b(4, 1.0), out(3);
  CHECK_THROWS_WITH(ropesim::numeric::round_elementwise(Format::fp32(), ElementwiseOperation::add,
                                                        a, b, out, Rounding::nearest_even),
                    Catch::Contains("lengths 4, 4 and 3"));
  out.resize(4);
  CHECK_THROWS_WITH(
      ropesim::numeric::round_elementwise(parse_format("p=64,e=15"), ElementwiseOperation::add, a,
                                          b, out, Rounding::nearest_even),
      Catch::Contains("does not fit in a double"));
  std::vector<double> buffer(5, 1.0);
  CHECK_THROWS_WITH(ropesim::numeric::round_elementwise(Format::fp32(), ElementwiseOperation::add,
                                                        std::span<const double>(buffer.data(), 4),
                                                        b, std::span<double>(buffer.data() + 1, 4),
                                                        Rounding::nearest_even),
                    Catch::Contains("overlaps"));
  std::vector<double> two(2);
  CHECK_THROWS_WITH(ropesim::numeric::round_elementwise_unary(Format::fp32(), UnaryFunction::exp, a,
                                                              two, Rounding::nearest_even),
                    Catch::Contains("lengths 4 and 2"));
  CHECK_THROWS_WITH(
      ropesim::numeric::round_elementwise_unary(parse_format("p=64,e=15"), UnaryFunction::exp, a,
                                                out, Rounding::nearest_even),
      Catch::Contains("does not fit in a double"));
  CHECK_THROWS_AS(
      ropesim::numeric::round_elementwise_unary(
          Format::fp32(), UnaryFunction::cos, std::span<const double>(buffer.data() + 1, 4),
          std::span<double>(buffer.data(), 4), Rounding::nearest_even),
      ropesim::InvalidArgument);
}

namespace {

constexpr UnaryFunction unary_functions[] = {UnaryFunction::exp, UnaryFunction::log,
                                             UnaryFunction::cos, UnaryFunction::sin};

const char* function_name(UnaryFunction fn) {
  switch (fn) {
    case UnaryFunction::exp:
      return "exp";
    case UnaryFunction::log:
      return "log";
    case UnaryFunction::cos:
      return "cos";
    case UnaryFunction::sin:
      return "sin";
  }
  return "?";
}

Value apply(const Engine& e, UnaryFunction fn, const Format& f, double x, Rounding r) {
  const Value v = Value::from_double_exact(x);
  switch (fn) {
    case UnaryFunction::exp:
      return e.exp(f, v, r);
    case UnaryFunction::log:
      return e.log(f, v, r);
    case UnaryFunction::cos:
      return e.cos(f, v, r);
    case UnaryFunction::sin:
      return e.sin(f, v, r);
  }
  return {};
}

/// The hard and special inputs of f: F's neighbours of exp's overflow and underflow thresholds
/// and of tiny arguments, of k·π/2 (k < 200, both signs), ±0, ±inf, NaN, −1, 1, doubles that
/// are not small operands (0.1, 1e-300), |x| > 600, and random elements of F.
std::vector<double> unary_inputs(const Format& f, std::mt19937_64& rng) {
  std::vector<double> out;
  auto neighbours = [&](double centre, int radius) {
    Value v = mpfr_engine().convert(f, Value::from_double_exact(centre), Rounding::nearest_even);
    for (int i = 0; i < radius; ++i) v = ropesim::numeric::next_down(f, v);
    for (int i = 0; i <= 2 * radius; ++i) {
      if (std::isfinite(v.narrow())) out.push_back(v.narrow());
      v = ropesim::numeric::next_up(f, v);
    }
  };
  const double largest =
      (2 - static_cast<double>(1 + f.reserved_top_codes) * std::ldexp(1.0, 1 - f.precision)) *
      std::ldexp(1.0, f.emax);
  const double smallest = std::ldexp(1.0, (f.subnormals ? f.emin - f.precision + 1 : f.emin));
  for (double c :
       {std::log(largest), std::log(2 * largest), std::log(smallest), std::log(smallest / 2),
        std::ldexp(1.0, -20), std::ldexp(1.0, -30), -std::ldexp(1.0, -30), std::ldexp(1.0, -60)}) {
    neighbours(c, 4);
  }
  for (int k = 1; k < 200; ++k) {
    neighbours(k * M_PI_2, 2);
    neighbours(-k * M_PI_2, 1);
  }
  for (double x :
       {0.0, -0.0, HUGE_VAL, -HUGE_VAL, std::nan(""), -1.0, 1.0, 0.1, 1e-300, 700.0, -700.0})
    out.push_back(x);
  for (int i = 0; i < 400; ++i) {
    const int e = std::uniform_int_distribution<int>(f.emin, f.emax)(rng);
    out.push_back((rng() & 1 ? -1 : 1) * element(f, e, rng));
  }
  return out;
}

}  // namespace

TEST_CASE("round_elementwise_unary: exp log cos sin arrays give the MPFR engine's bits, five modes",
          "[fast_arrays]") {
  std::mt19937_64 rng(9);
  for (const Format& f :
       {Format::fp32(), Format::bf16(), Format::fp16(), Format::fp8e4m3(),
        parse_format("fp16,overflow=saturate"), parse_format("bf16,subnormals=off")}) {
    INFO(f.name);
    const std::vector<double> x = unary_inputs(f, rng);
    std::vector<double> out(x.size()), in_place;
    std::size_t mismatches = 0;
    for (UnaryFunction fn : unary_functions) {
      for (Rounding r : all_modes) {
        const auto before = fast_engine_counters();
        ropesim::numeric::round_elementwise_unary(f, fn, x, out, r);
        const auto middle = fast_engine_counters();
        for (std::size_t i = 0; i < x.size(); ++i) {
          const Value expected = apply(mpfr_engine(), fn, f, x[i], r);
          if (!identical(out[i], expected.narrow())) {
            if (++mismatches <= 8) {
              UNSCOPED_INFO(function_name(fn)
                            << "(" << hex(x[i]) << ") " << mode_name(r) << ": array " << hex(out[i])
                            << ", mpfr " << hex(expected.narrow()));
            }
          }
        }
        // The counters move as they do for the same calls through the Engine interface.
        const auto engine_before = fast_engine_counters();
        for (double xi : x) apply(ropesim::numeric::fast_engine(), fn, f, xi, r);
        const auto engine_after = fast_engine_counters();
        CHECK(middle.evaluations - before.evaluations ==
              engine_after.evaluations - engine_before.evaluations);
        CHECK(middle.fallbacks - before.fallbacks ==
              engine_after.fallbacks - engine_before.fallbacks);
        CHECK(middle.evaluations - before.evaluations > x.size() / 2);
        in_place = x;  // out is the same array as x
        ropesim::numeric::round_elementwise_unary(f, fn, in_place, in_place, r);
        for (std::size_t i = 0; i < x.size(); ++i) {
          if (!identical(in_place[i], out[i])) ++mismatches;
        }
      }
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("round_elementwise_unary: formats outside the fast domain go to the MPFR engine",
          "[fast_arrays]") {
  const std::vector<double> x{0.5, -3.0, 100.0, 0.1};
  std::vector<double> out(x.size());
  for (const Format& f : {Format::fp64(), Format::fixed(3, 4)}) {
    for (UnaryFunction fn : unary_functions) {
      ropesim::numeric::round_elementwise_unary(f, fn, x, out, Rounding::upward);
      for (std::size_t i = 0; i < x.size(); ++i) {
        INFO(f.name << " " << function_name(fn) << "(" << hex(x[i]) << ")");
        CHECK(identical(out[i], apply(mpfr_engine(), fn, f, x[i], Rounding::upward).narrow()));
      }
    }
  }
  // and by hand: exp(0.5) in fp32, nearest-even, is the float nearest e^0.5
  // = 1.6487212707001281468…
  std::vector<double> half{0.5}, y(1);
  ropesim::numeric::round_elementwise_unary(Format::fp32(), UnaryFunction::exp, half, y,
                                            Rounding::nearest_even);
  CHECK(y[0] == static_cast<double>(1.64872127070012814684865f));
}

TEST_CASE("round_elementwise: 40 layouts per operation and mode in fp32, bf16, fp16 and fp8e4m3",
          "[fast_arrays][.long]") {
  std::mt19937_64 rng(10);
  for (const Format& f : {Format::fp32(), Format::bf16(), Format::fp16(), Format::fp8e4m3()}) {
    INFO(f.name);
    std::vector<std::string> first;
    const std::size_t mismatches = compare_arrays(f, rng, 40, first, nullptr);
    for (const auto& line : first) UNSCOPED_INFO(line);
    CHECK(mismatches == 0);
  }
}
