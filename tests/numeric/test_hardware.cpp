// fp32 and fp64 + − × ÷ √ fma and conversion, bit for bit against the hardware (the x86-64
// SSE unit is IEEE 754 binary32/binary64 with round-to-nearest-even by default; the build uses
// -ffp-contract=off so `a * b + c` is never fused; fma is std::fma, correctly rounded in
// glibc). This is the independent oracle for the two formats the hardware has.
//
// Operands: a fixed-seed std::mt19937_64 mixing random bit patterns, values near 1,
// subnormals, ±0, ±inf, NaN, ±max, values near the overflow and underflow thresholds and
// operand pairs/triples that cancel. 250 000 triples per format (1.5 million operands in all).
// A second test repeats a smaller sample under the directed modes with fesetround.
#include <catch2/catch.hpp>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "tests/numeric/test_support.hpp"

namespace {

using namespace numeric_test;

constexpr int operation_count = 7;
const char* const operation_names[operation_count] = {"add",  "sub", "mul",    "div",
                                                      "sqrt", "fma", "convert"};

template <class T>
struct Operands {
  T a, b, c;
  double wide;  // a double to convert into T
};

template <class T>
std::vector<Operands<T>> make_operands(std::size_t n, std::uint64_t seed) {
  constexpr int p = std::numeric_limits<T>::digits;
  constexpr int w = sizeof(T) == 4 ? 8 : 11;
  OperandGenerator gen(p, w, seed);
  OperandGenerator wide_gen(53, 11, seed + 1);
  std::vector<Operands<T>> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Operands<T> o{};
    o.a = static_cast<T>(gen.next());
    const auto choice = gen.rng()() % 4;
    o.b = static_cast<T>(choice == 0 ? gen.cancelling(o.a) : gen.next());
    if (gen.rng()() % 4 == 0) {
      // c ≈ -(a·b): the fused sum cancels (exact product needed to get it right).
      const T product = o.a * o.b;
      o.c = static_cast<T>(gen.cancelling(product));
      if (gen.rng()() % 2 == 0) o.c = -o.c;
    } else {
      o.c = static_cast<T>(gen.next());
    }
    // Conversion sources: doubles, half of them close to T's rounding boundaries.
    if (sizeof(T) == 4 && gen.rng()() % 2 == 0) {
      const double base = static_cast<double>(o.a);
      const int k = static_cast<int>(gen.rng()() % 5) - 2;  // ±2 units of 2^-(p+1) ulps
      int e = 0;
      std::frexp(base, &e);
      o.wide = std::isfinite(base) && base != 0
                   ? base + k * std::ldexp(1.0, std::max(e - p - 1, -149 - 1))
                   : wide_gen.next();
    } else {
      o.wide = wide_gen.next();
    }
    out.push_back(o);
  }
  return out;
}

template <class T>
void hardware_results(const Operands<T>& o, T out[operation_count]) {
  // volatile: computed at run time in the current rounding mode, never folded.
  volatile T a = o.a, b = o.b, c = o.c;
  volatile double wide = o.wide;
  volatile T r0 = a + b, r1 = a - b, r2 = a * b, r3 = a / b;
  volatile T r4 = std::sqrt(static_cast<T>(a));
  volatile T r5 = std::fma(static_cast<T>(a), static_cast<T>(b), static_cast<T>(c));
  volatile T r6 = static_cast<T>(wide);
  out[0] = r0;
  out[1] = r1;
  out[2] = r2;
  out[3] = r3;
  out[4] = r4;
  out[5] = r5;
  out[6] = r6;
}

template <class T>
Value engine_result(const Engine& e, const Format& f, int op, const Operands<T>& o, Rounding r) {
  const Value a = Value::from_double_exact(o.a);
  const Value b = Value::from_double_exact(o.b);
  const Value c = Value::from_double_exact(o.c);
  switch (op) {
    case 0:
      return e.add(f, a, b, r);
    case 1:
      return e.sub(f, a, b, r);
    case 2:
      return e.mul(f, a, b, r);
    case 3:
      return e.div(f, a, b, r);
    case 4:
      return e.sqrt(f, a, r);
    case 5:
      return e.fma(f, a, b, c, r);
    default:
      return e.convert(f, Value::from_double_exact(o.wide), r);
  }
}

template <class T>
Mismatches compare_with_hardware(const Engine& engine, const Format& f,
                                 const std::vector<Operands<T>>& operands, int fe_mode,
                                 Rounding mode) {
  Mismatches m;
  T hw[operation_count];
  for (const auto& o : operands) {
    std::fesetround(fe_mode);
    hardware_results(o, hw);
    std::fesetround(FE_TONEAREST);
    for (int op = 0; op < operation_count; ++op) {
      ++m.checked;
      const Value v = engine_result(engine, f, op, o, mode);
      const double expected = static_cast<double>(hw[op]);
      if (v.is_wide() || !same_double(v.narrow(), expected)) {
        m.add(std::string(operation_names[op]) + "(" + hex(o.a) + ", " + hex(o.b) + ", " +
              hex(o.c) + (op == 6 ? ", src " + hex(o.wide) : std::string()) + ") " +
              mode_name(mode) + ": hardware " + hex(expected) + ", engine " + show(v));
      }
    }
  }
  return m;
}

}  // namespace

TEST_CASE("fp32 + - * / sqrt fma convert are bit-identical to the hardware (RNE)",
          "[numeric][hardware]") {
  const auto operands = make_operands<float>(250000, 0x5eed0032);
  for (const Engine* e : engines()) {
    INFO("engine " << e->name());
    const Mismatches m =
        compare_with_hardware(*e, Format::fp32(), operands, FE_TONEAREST, Rounding::nearest_even);
    INFO(m.report());
    CHECK(m.checked == 7 * 250000);
    CHECK(m.count == 0);
  }
}

TEST_CASE("fp64 + - * / sqrt fma convert are bit-identical to the hardware (RNE)",
          "[numeric][hardware]") {
  const auto operands = make_operands<double>(250000, 0x5eed0064);
  for (const Engine* e : engines()) {
    INFO("engine " << e->name());
    const Mismatches m =
        compare_with_hardware(*e, Format::fp64(), operands, FE_TONEAREST, Rounding::nearest_even);
    INFO(m.report());
    CHECK(m.count == 0);
  }
}

TEST_CASE("fp32 and fp64 under the hardware's directed modes (fesetround)", "[numeric][hardware]") {
  const auto f32 = make_operands<float>(20000, 0xd1ec7032);
  const auto f64 = make_operands<double>(20000, 0xd1ec7064);
  const std::pair<int, Rounding> modes[] = {{FE_TOWARDZERO, Rounding::toward_zero},
                                            {FE_UPWARD, Rounding::upward},
                                            {FE_DOWNWARD, Rounding::downward}};
  for (const Engine* e : engines()) {
    for (const auto& [fe, mode] : modes) {
      INFO("engine " << e->name() << " mode " << mode_name(mode));
      const Mismatches m32 = compare_with_hardware(*e, Format::fp32(), f32, fe, mode);
      INFO("fp32: " << m32.report());
      CHECK(m32.count == 0);
      const Mismatches m64 = compare_with_hardware(*e, Format::fp64(), f64, fe, mode);
      INFO("fp64: " << m64.report());
      CHECK(m64.count == 0);
    }
  }
  std::fesetround(FE_TONEAREST);
}

TEST_CASE("the reference agrees with the hardware (validates the second implementation)",
          "[numeric][hardware][reference]") {
  // The reference is only trusted because it reproduces binary32/binary64 exactly too.
  const std::pair<int, Rounding> modes[] = {{FE_TONEAREST, Rounding::nearest_even},
                                            {FE_TOWARDZERO, Rounding::toward_zero},
                                            {FE_UPWARD, Rounding::upward},
                                            {FE_DOWNWARD, Rounding::downward}};
  auto run = [&](auto tag, const Format& f, std::uint64_t seed) {
    using T = decltype(tag);
    const auto operands = make_operands<T>(10000, seed);
    Mismatches m;
    T hw[operation_count];
    for (const auto& [fe, mode] : modes) {
      for (const auto& o : operands) {
        std::fesetround(fe);
        hardware_results(o, hw);
        std::fesetround(FE_TONEAREST);
        using reference::Number;
        const Number a = Number::from_double(o.a), b = Number::from_double(o.b),
                     c = Number::from_double(o.c);
        const Number ref[operation_count] = {
            reference::add(f, a, b, mode),
            reference::sub(f, a, b, mode),
            reference::mul(f, a, b, mode),
            reference::div(f, a, b, mode),
            reference::sqrt(f, a, mode),
            reference::fma(f, a, b, c, mode),
            reference::convert(f, Number::from_double(o.wide), mode)};
        for (int op = 0; op < operation_count; ++op) {
          ++m.checked;
          if (!same_double(ref[op].to_double(), static_cast<double>(hw[op]))) {
            m.add(std::string(operation_names[op]) + " " + mode_name(mode) + " a=" + hex(o.a) +
                  " b=" + hex(o.b) + " c=" + hex(o.c) + " hw " + hex(hw[op]) + " ref " +
                  ref[op].to_string());
          }
        }
      }
    }
    INFO(f.name << ": " << m.report());
    CHECK(m.count == 0);
  };
  run(float{}, Format::fp32(), 0xfe32);
  run(double{}, Format::fp64(), 0xfe64);
}
