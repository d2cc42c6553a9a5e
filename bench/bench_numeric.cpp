// Throughput of correctly rounded cos+sin: the exact engine vs MPFR called directly vs native
// double (brief: "Speed and memory targets live in benchmarks"). Prints ratios measured in this
// one run; no absolute target is asserted anywhere.
//
//   build/bench/bench_numeric [--count N]
#include <fmt/format.h>
#include <mpfr.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "numeric/engine.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using ropesim::numeric::Format;
using ropesim::numeric::Rounding;
using ropesim::numeric::Value;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Row {
  std::string format;
  double engine_ns, mpfr_ns, native_ns;
};

Row measure(const Format& f, std::size_t count) {
  const auto& engine = ropesim::numeric::mpfr_engine();
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> angle(0.0, 65536.0);
  std::vector<Value> inputs;
  std::vector<double> doubles;
  for (std::size_t i = 0; i < count; ++i) {
    const Value v = engine.convert(f, Value::from_double_exact(angle(rng)), Rounding::nearest_even);
    inputs.push_back(v);
    doubles.push_back(v.to_double());
  }
  double checksum = 0;

  auto start = Clock::now();
  for (const auto& v : inputs) {
    const auto [c, s] = engine.cos_sin(f, v, Rounding::nearest_even);
    checksum += c.to_double() + s.to_double();
  }
  const double engine_s = seconds_since(start);

  // MPFR directly: mpfr_sin_cos at precision p in MPFR's default exponent range (no
  // subnormal emulation needed for |cos|, |sin| ≥ 2^-60 here), as NUMERIC §1 measures it.
  mpfr_t x, s, c;
  mpfr_inits2(f.precision, s, c, static_cast<mpfr_ptr>(nullptr));
  mpfr_init2(x, 53);
  start = Clock::now();
  for (double d : doubles) {
    mpfr_set_d(x, d, MPFR_RNDN);
    mpfr_sin_cos(s, c, x, MPFR_RNDN);
    checksum += mpfr_get_d(c, MPFR_RNDN) + mpfr_get_d(s, MPFR_RNDN);
  }
  const double mpfr_s = seconds_since(start);
  mpfr_clears(x, s, c, static_cast<mpfr_ptr>(nullptr));

  start = Clock::now();
  volatile double sink = 0;
  for (double d : doubles) {
    sink = sink + std::cos(d) + std::sin(d);
  }
  const double native_s = seconds_since(start);
  checksum += sink;
  if (checksum == 12345.678) fmt::print("");  // keep the work observable
  const double n = static_cast<double>(count);
  return {f.name, engine_s / n * 1e9, mpfr_s / n * 1e9, native_s / n * 1e9};
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t count = 200000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--count") == 0) count = std::stoul(argv[i + 1]);
  }
  fmt::print("cos+sin of {} angles in [0, 65536), correctly rounded (one pair = cos and sin)\n", count);
  fmt::print("{:<8} {:>14} {:>14} {:>14} {:>14} {:>14}\n", "format", "engine ns/pair", "mpfr ns/pair",
             "double ns/pair", "engine/mpfr", "engine/double");
  for (const Format& f : {Format::fp32(), Format::bf16()}) {
    const Row r = measure(f, count);
    fmt::print("{:<8} {:>14.1f} {:>14.1f} {:>14.1f} {:>14.2f} {:>14.1f}\n", r.format, r.engine_ns, r.mpfr_ns,
               r.native_ns, r.engine_ns / r.mpfr_ns, r.engine_ns / r.native_ns);
  }
  return 0;
}
