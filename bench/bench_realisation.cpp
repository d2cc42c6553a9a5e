// Realisation throughput: realised (cos, sin) pairs per second of
// detail::BlockEvaluator::evaluate_bits — the fast path with its fallbacks — for r1 and hf at
// bf16 and fp32 on one preset, one thread, next to a native binary64 cos+sin loop over the same
// angles θ_d·i measured in the same run (the ratio is what to compare across machines); the
// same fast path position by position (set_batch(false): the scalar functions, no lanes); then
// the exact path alone (set_fast_path(false)) on fewer positions, for the speed-up; and
// evaluate() (Values) next to evaluate_bits(). Prints the fast path's counters.
//
//   build/bench/bench_realisation [--preset NAME] [--positions N] [--exact-positions M]
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attention/detail/evaluator.hpp"
#include "attention/realisations/realisation.hpp"
#include "core/stopwatch.hpp"

namespace {

using namespace ropesim;
using ropesim::Clock;
using ropesim::seconds_since;

/// Native binary64 cos+sin of θ_d·i for every block and position (θ_d to double).
double native_seconds(const attention::Schedule& s, std::uint64_t positions) {
  volatile double sink = 0;
  const auto start = Clock::now();
  for (const auto& block : s.blocks) {
    const double theta = block.theta.to_double();
    double acc = 0;
    for (std::uint64_t i = 0; i < positions; ++i) {
      const double angle = theta * static_cast<double>(i);
      acc += std::cos(angle) + std::sin(angle);
    }
    sink = sink + acc;
  }
  return seconds_since(start);
}

/// Seconds to realise every block of `s` at positions [0, positions) with evaluate_bits
/// (values = false) or evaluate (values = true), in chunks of 4096 positions as a consumer
/// would, batched or position by position (`batch`); `stats` receives the summed fast-path
/// counters.
double realise_seconds(const attention::Schedule& s, const attention::Realisation& r,
                       std::uint64_t positions, bool fast, bool values,
                       attention::FastPathStats& stats, bool batch = true) {
  const std::vector<attention::Realisation> members{r};
  std::vector<std::vector<attention::PairBits>> bits;
  std::vector<std::vector<attention::RealisedPair>> pairs;
  std::uint64_t check = 0;
  const auto start = Clock::now();
  for (std::size_t b = 0; b < s.blocks.size(); ++b) {
    attention::detail::BlockEvaluator ev(s, b, members, r.arithmetic_engine());
    ev.set_fast_path(fast);
    ev.set_batch(batch);
    for (std::uint64_t i = 0; i < positions; i += 4096) {
      const std::uint64_t end = std::min<std::uint64_t>(positions, i + 4096);
      if (values) {
        ev.evaluate(i, end, pairs);
        check += pairs[0].back().cos.bits_key();
      } else {
        ev.evaluate_bits(i, end, bits);
        check += bits[0].back().cos;
      }
    }
    stats += ev.fast_path_stats();
  }
  const double t = seconds_since(start);
  if (check == 1) fmt::print(" ");  // keeps the results live
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "llama2-7b";
  std::uint64_t positions = 65536, exact_positions = 4096;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (std::strcmp(argv[a], "--preset") == 0) {
      preset = argv[a + 1];
    } else if (std::strcmp(argv[a], "--positions") == 0) {
      positions = std::stoull(argv[a + 1]);
    } else if (std::strcmp(argv[a], "--exact-positions") == 0) {
      exact_positions = std::stoull(argv[a + 1]);
    } else {
      fmt::print(stderr,
                 "bench_realisation: unknown option '{}'; accepted: --preset NAME, --positions N, "
                 "--exact-positions M\n",
                 argv[a]);
      return 2;
    }
  }
  const attention::Schedule s = attention::preset_schedule(preset);
  const double blocks = static_cast<double>(s.blocks.size());
  const double native = native_seconds(s, positions);
  const double native_pairs = static_cast<double>(positions) * blocks / native;
  fmt::print("{}: {} blocks, N = {} positions, one thread\n", preset, s.blocks.size(), positions);
  fmt::print("native binary64 cos+sin of θ_d·i: {:.3f} s, {:.3g} pairs/s\n", native, native_pairs);
  for (const char* spec : {"r1", "hf"}) {
    for (const auto& format : {numeric::Format::bf16(), numeric::Format::fp32()}) {
      const auto r = attention::parse_realisation(spec, format);
      attention::FastPathStats st, st_values, st_exact, st_scalar;
      const double fast = realise_seconds(s, r, positions, true, false, st);
      const double scalar = realise_seconds(s, r, positions, true, false, st_scalar, false);
      const double values = realise_seconds(s, r, positions, true, true, st_values);
      const double exact = realise_seconds(s, r, exact_positions, false, false, st_exact);
      const double fast_pairs = static_cast<double>(positions) * blocks / fast;
      const double exact_pairs = static_cast<double>(exact_positions) * blocks / exact;
      fmt::print(
          "{:>3} {:>4}: evaluate_bits {:.3f} s, {:.3g} pairs/s = {:.2f} x native time ({} of {} "
          "evaluations batched); position by position {:.2f} x native; evaluate (Values) {:.2f} x "
          "native; exact path alone {:.3g} pairs/s (N = {}), fast path {:.1f} x faster; "
          "fallbacks {} of {} evaluations ({} exact cases)\n",
          spec, format.name, fast, fast_pairs, fast / native, st.batched, st.evaluations,
          scalar / native, values / native, exact_pairs, exact_positions, fast_pairs / exact_pairs,
          st.fallbacks, st.evaluations, st.exact_cases);
    }
  }
  return 0;
}
