// Throughput of correctly rounded operations per format: the fast engine (numeric::fast_engine)
// and the MPFR engine vs MPFR called directly vs native double (STYLE: "Speed and
// memory targets live in benchmarks"). Prints ratios measured in this one run; no absolute
// target is asserted anywhere.
//
//   build/bench/bench_numeric [--count N] [--passes K]
//
// What each column measures (round-to-nearest-even unless a mode is named, N operands, one
// thread, each figure the fastest of K passes, default 3):
//  * fast / mpfr-eng: numeric::fast_engine() / numeric::mpfr_engine() through the Engine
//    interface, one call per element (Value in, Value out), results stored to an array;
//  * mpfr-direct: MPFR called directly at precision p in its default exponent range (no
//    subnormal emulation; mpfr_set_d in, mpfr_get_d out), as NUMERIC §1 measures it;
//  * double: the same loop in native binary64, not rounded into F (std::exp etc.; a ⊙ b over
//    arrays for + − × ÷, which the compiler vectorises);
//  * fast[]: numeric::round_elementwise (+ − × ÷) or numeric::round_elementwise_unary (exp log
//    cos sin) over arrays of doubles: the fast engine without the per-element Engine call and
//    Value; the form the "within 3× / 4× of native double" targets are about;
//  * mask: + − × ÷ in binary64 then re-rounded into F by Binary64Rounding::round (the
//    round-to-nearest bit-manipulation re-rounding of the kind CPFloat uses), inline, no
//    Engine call;
//  * the second table: fast[] for + − × ÷ in each of the five rounding modes against the same
//    native loop.
#include <fmt/format.h>
#include <mpfr.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "numeric/binary64_rounding.hpp"
#include "numeric/engine.hpp"
#include "numeric/fast_engine.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using ropesim::numeric::Binary64Rounding;
using ropesim::numeric::ElementwiseOperation;
using ropesim::numeric::Engine;
using ropesim::numeric::Format;
using ropesim::numeric::Rounding;
using ropesim::numeric::UnaryFunction;
using ropesim::numeric::Value;

constexpr Rounding kMode = Rounding::nearest_even;

double checksum = 0;  // keeps every loop's work observable
int passes = 3;

/// Nanoseconds per element of `body` (one pass over `count` elements): the fastest of
/// `passes` passes, so that a pass preempted on a shared machine does not decide the ratio.
double time_ns(std::size_t count, const std::function<void()>& body) {
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto start = Clock::now();
    body();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (pass == 0 || seconds < best) best = seconds;
  }
  return best / static_cast<double>(count) * 1e9;
}

struct Inputs {
  std::vector<Value> a, b;
  std::vector<double> da, db;
};

Inputs draw(const Format& f, std::size_t count, double lo, double hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Inputs in;
  for (std::size_t i = 0; i < count; ++i) {
    for (auto* pair : {&in.a, &in.b}) {
      Value v = ropesim::numeric::mpfr_engine().convert(f, Value::from_double_exact(u(rng)), kMode);
      if (v.is_zero()) v = Value::from_double_exact(1.0);
      pair->push_back(v);
    }
    in.da.push_back(in.a.back().narrow());
    in.db.push_back(in.b.back().narrow());
  }
  return in;
}

using EngineBinary = Value (Engine::*)(const Format&, const Value&, const Value&, Rounding) const;
using MpfrBinary = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);
using EngineUnary = Value (Engine::*)(const Format&, const Value&, Rounding) const;
using MpfrUnary = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

std::string optional(double v, double scale, const char* format = "{:.2f}") {
  return v > 0 ? fmt::format(fmt::runtime(format), v / scale) : std::string("-");
}

void header() {
  fmt::print("{:<6} {:<5} {:>8} {:>8} {:>9} {:>9} {:>7} {:>7} {:>9} {:>9} {:>10} {:>11} {:>10}\n",
             "format", "op", "fast ns", "fast[]", "mpfr-eng", "mpfr-dir", "double", "mask",
             "dir/fast", "fast/dbl", "fast[]/dbl", "fast[]/mask", "fallback");
}

void row(const Format& f, const char* op, double fast, double array, double engine, double direct,
         double native, double mask, const std::string& fallbacks) {
  fmt::print(
      "{:<6} {:<5} {:>8.1f} {:>8} {:>9.1f} {:>9.1f} {:>7.2f} {:>7} {:>9.1f} {:>9.1f} {:>10} {:>11} "
      "{:>10}\n",
      f.name, op, fast, optional(array, 1), engine, direct, native, optional(mask, 1),
      direct / fast, fast / native, optional(array, native),
      mask > 0 ? optional(array, mask) : std::string("-"), fallbacks);
}

/// fast[] ns per element for + − × ÷ in each rounding mode, and the native loop's, per format
/// and operation (the second table).
struct ModeRow {
  std::string format, op;
  double native = 0;
  double ns[5] = {};
};
std::vector<ModeRow> mode_rows;

constexpr Rounding kModes[] = {Rounding::nearest_even, Rounding::nearest_away,
                               Rounding::toward_zero, Rounding::upward, Rounding::downward};

template <class Native>
void binary(const Format& f, const char* op, const Inputs& in, EngineBinary method,
            ElementwiseOperation array_op, MpfrBinary direct_op, Native native) {
  const std::size_t n = in.a.size();
  std::vector<Value> out(n);
  std::vector<double> dout(n);
  auto engine_loop = [&](const Engine& e) {
    return time_ns(n, [&] {
      for (std::size_t i = 0; i < n; ++i) out[i] = (e.*method)(f, in.a[i], in.b[i], kMode);
      checksum += out[n / 2].to_double();
    });
  };
  const double fast = engine_loop(ropesim::numeric::fast_engine());
  const double engine = engine_loop(ropesim::numeric::mpfr_engine());
  auto array_loop = [&](Rounding r) {
    return time_ns(n, [&] {
      ropesim::numeric::round_elementwise(f, array_op, in.da, in.db, dout, r);
      checksum += dout[n / 2];
    });
  };
  ModeRow modes{f.name, op};
  for (int m = 0; m < 5; ++m) modes.ns[m] = array_loop(kModes[m]);
  const double array = modes.ns[0];
  mpfr_t x, y, z;
  mpfr_inits2(53, x, y, static_cast<mpfr_ptr>(nullptr));
  mpfr_init2(z, f.precision);
  const double direct = time_ns(n, [&] {
    for (std::size_t i = 0; i < n; ++i) {
      mpfr_set_d(x, in.da[i], MPFR_RNDN);
      mpfr_set_d(y, in.db[i], MPFR_RNDN);
      direct_op(z, x, y, MPFR_RNDN);
      dout[i] = mpfr_get_d(z, MPFR_RNDN);
    }
    checksum += dout[n / 2];
  });
  mpfr_clears(x, y, z, static_cast<mpfr_ptr>(nullptr));
  const double native_ns = time_ns(n, [&] {
    for (std::size_t i = 0; i < n; ++i) dout[i] = native(in.da[i], in.db[i]);
    checksum += dout[n / 2];
  });
  modes.native = native_ns;
  mode_rows.push_back(modes);
  const Binary64Rounding rounding(f, kMode);
  double mask = 0;
  if (rounding.fast_rounding()) {
    mask = time_ns(n, [&] {
      for (std::size_t i = 0; i < n; ++i) dout[i] = rounding.round(native(in.da[i], in.db[i]));
      checksum += dout[n / 2];
    });
  }
  row(f, op, fast, array, engine, direct, native_ns, mask, "-");
}

void unary(const Format& f, const char* op, const Inputs& in, EngineUnary method,
           MpfrUnary direct_op, double (*native)(double), const UnaryFunction* array_fn) {
  const std::size_t n = in.a.size();
  std::vector<Value> out(n);
  std::vector<double> dout(n);
  auto engine_loop = [&](const Engine& e) {
    return time_ns(n, [&] {
      for (std::size_t i = 0; i < n; ++i) out[i] = (e.*method)(f, in.a[i], kMode);
      checksum += out[n / 2].to_double();
    });
  };
  const auto before = ropesim::numeric::fast_engine_counters();
  const double fast = engine_loop(ropesim::numeric::fast_engine());
  double array = 0;
  if (array_fn != nullptr) {
    array = time_ns(n, [&] {
      ropesim::numeric::round_elementwise_unary(f, *array_fn, in.da, dout, kMode);
      checksum += dout[n / 2];
    });
  }
  const auto after = ropesim::numeric::fast_engine_counters();
  const double engine = engine_loop(ropesim::numeric::mpfr_engine());
  mpfr_t x, z;
  mpfr_init2(x, 53);
  mpfr_init2(z, f.precision);
  const double direct = time_ns(n, [&] {
    for (std::size_t i = 0; i < n; ++i) {
      mpfr_set_d(x, in.da[i], MPFR_RNDN);
      direct_op(z, x, MPFR_RNDN);
      dout[i] = mpfr_get_d(z, MPFR_RNDN);
    }
    checksum += dout[n / 2];
  });
  mpfr_clears(x, z, static_cast<mpfr_ptr>(nullptr));
  const double native_ns = time_ns(n, [&] {
    for (std::size_t i = 0; i < n; ++i) dout[i] = native(in.da[i]);
    checksum += dout[n / 2];
  });
  row(f, op, fast, array, engine, direct, native_ns, 0,
      fmt::format("{}/{}", after.fallbacks - before.fallbacks,
                  after.evaluations - before.evaluations));
}

double native_sqrt(double x) { return std::sqrt(x); }
double native_exp(double x) { return std::exp(x); }
double native_log(double x) { return std::log(x); }
double native_cos(double x) { return std::cos(x); }
double native_sin(double x) { return std::sin(x); }

}  // namespace

int main(int argc, char** argv) {
  std::size_t count = 100000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--count") == 0) count = std::stoul(argv[i + 1]);
    if (std::strcmp(argv[i], "--passes") == 0) passes = std::max(1, std::stoi(argv[i + 1]));
  }
  fmt::print(
      "{} operands per operation, round-to-nearest-even, ns per element; ratios from this run\n",
      count);
  fmt::print(
      "inputs: + − × ÷ √ in [-1000, 1000] (√: |a|), exp in [-10, 10], log in (0, 1000], cos/sin in "
      "[0, 65536)\n");
  fmt::print(
      "fallback = transcendental calls the fast engine passed to MPFR / calls that took its "
      "binary64 path\n");
  fmt::print("(Engine calls and fast[] together); each figure is the fastest of {} passes\n\n",
             passes);
  header();
  const auto blocks_before = ropesim::numeric::fast_engine_counters();
  for (const Format& f : {Format::fp32(), Format::bf16(), Format::fp16()}) {
    const double range =
        f.emax >= 15 && f.precision == 11 ? 200.0 : 1000.0;  // fp16: keep a ⊙ b finite
    const Inputs arith = draw(f, count, -range, range, 1);
    binary(f, "add", arith, &Engine::add, ElementwiseOperation::add, mpfr_add,
           [](double a, double b) { return a + b; });
    binary(f, "sub", arith, &Engine::sub, ElementwiseOperation::sub, mpfr_sub,
           [](double a, double b) { return a - b; });
    binary(f, "mul", arith, &Engine::mul, ElementwiseOperation::mul, mpfr_mul,
           [](double a, double b) { return a * b; });
    binary(f, "div", arith, &Engine::div, ElementwiseOperation::div, mpfr_div,
           [](double a, double b) { return a / b; });
    const Inputs positive = draw(f, count, 1e-3, range, 2);
    unary(f, "sqrt", positive, &Engine::sqrt, mpfr_sqrt, native_sqrt, nullptr);
    const UnaryFunction exp_fn = UnaryFunction::exp, log_fn = UnaryFunction::log,
                        cos_fn = UnaryFunction::cos, sin_fn = UnaryFunction::sin;
    unary(f, "log", positive, &Engine::log, mpfr_log, native_log, &log_fn);
    const Inputs exponents = draw(f, count, -10, 10, 3);
    unary(f, "exp", exponents, &Engine::exp, mpfr_exp, native_exp, &exp_fn);
    const Inputs angles = draw(f, count, 0, f.precision == 11 ? 65504.0 : 65536.0, 4);
    unary(f, "cos", angles, &Engine::cos, mpfr_cos, native_cos, &cos_fn);
    unary(f, "sin", angles, &Engine::sin, mpfr_sin, native_sin, &sin_fn);
  }
  const auto blocks_after = ropesim::numeric::fast_engine_counters();
  fmt::print(
      "\nfast[] (round_elementwise) in each rounding mode, ns per element and (ratio to the native "
      "double loop);\n"
      "blocks of 256 taken by the branch-free kernel / by the scalar path in all fast[] runs "
      "above: {} / {}\n\n",
      blocks_after.kernel_blocks - blocks_before.kernel_blocks,
      blocks_after.scalar_blocks - blocks_before.scalar_blocks);
  fmt::print("{:<6} {:<5} {:>7} {:>13} {:>13} {:>13} {:>13} {:>13}\n", "format", "op", "double",
             "RNE", "RNA", "RZ", "RU", "RD");
  for (const ModeRow& m : mode_rows) {
    fmt::print("{:<6} {:<5} {:>7.2f}", m.format, m.op, m.native);
    for (double ns : m.ns) fmt::print(" {:>13}", fmt::format("{:.2f} ({:.1f})", ns, ns / m.native));
    fmt::print("\n");
  }
  if (checksum == 12345.678) fmt::print(" ");
  return 0;
}
