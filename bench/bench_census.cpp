// Census throughput: realised (cos, sin) pairs per second of `attention::census` for one model
// preset, next to native double cos+sin of the same angles measured in the same run (the
// ratio is what to compare across machines). Also times the default-sweep grid of one preset.
//
// Then the same census (hf, bf16) with 1 and 2 threads (issue 8: the speed-up, and the check
// that both give the same counts), and the peak resident memory of the process after each
// census (getrusage; it only grows), from which the bytes per position are read.
//
//   build/bench/bench_census [--preset NAME] [--positions N] [--only-threads]
//   build/bench/bench_census --preset llama2-7b --positions 16777216 --only-threads   (2^24)
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>

#include "attention/census.hpp"
#include "numeric/stopwatch.hpp"

namespace {

using ropesim::numeric::Clock;
using ropesim::numeric::seconds_since;
using namespace ropesim;

/// Native double cos+sin of θ_d·i for every block and position (θ_d to double).
double native_seconds(const attention::Schedule& s, std::uint64_t positions) {
  volatile double sink = 0;
  const auto start = Clock::now();
  for (const auto& block : s.blocks) {
    const double theta = block.theta.to_double();
    for (std::uint64_t i = 0; i < positions; ++i) {
      const double angle = theta * static_cast<double>(i);
      sink = sink + std::cos(angle) + std::sin(angle);
    }
  }
  return seconds_since(start);
}

/// Peak resident set size of this process so far, MiB (Linux ru_maxrss is in KiB).
double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

/// hf at bf16 with 1 and then 2 threads: seconds, speed-up, equal counts, peak memory.
void threads_section(const attention::Schedule& s, std::uint64_t positions, double native) {
  const double pairs = static_cast<double>(positions) * static_cast<double>(s.blocks.size());
  const auto r = attention::parse_realisation("hf", numeric::Format::bf16());
  const double before = peak_rss_mib();
  fmt::print("threads: hf bf16 over N = {} (peak RSS before: {:.0f} MiB)\n", positions, before);
  std::uint64_t distinct[2] = {0, 0};
  double seconds[2] = {0, 0};
  for (unsigned t = 1; t <= 2; ++t) {
    attention::CensusOptions options;
    options.positions = positions;
    options.threads = t;
    const auto start = Clock::now();
    const auto result = attention::census(s, r, options);
    seconds[t - 1] = seconds_since(start);
    distinct[t - 1] = result.distinct_rotations;
    fmt::print(
        "  {} thread(s): {:.3f} s, {:.3g} pairs/s, {:.1f} x native; distinct {}; peak RSS {:.0f} "
        "MiB "
        "({:.1f} bytes per position above the start)\n",
        t, seconds[t - 1], pairs / seconds[t - 1], seconds[t - 1] / native,
        result.distinct_rotations, peak_rss_mib(),
        (peak_rss_mib() - before) * 1048576.0 / static_cast<double>(positions));
  }
  fmt::print("  speed-up 2 threads / 1 thread: {:.2f}; counts {}\n", seconds[0] / seconds[1],
             distinct[0] == distinct[1] ? "equal" : "DIFFER");
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "llama2-7b";
  std::uint64_t positions = 65536;
  bool only_threads = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--only-threads") == 0) only_threads = true;
  }
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--preset") == 0) preset = argv[i + 1];
    if (std::strcmp(argv[i], "--positions") == 0) positions = std::stoull(argv[i + 1]);
  }
  const attention::Schedule s = attention::preset_schedule(preset);
  const double pairs = static_cast<double>(positions) * static_cast<double>(s.blocks.size());
  const double native = native_seconds(s, positions);
  fmt::print("census of {} ({} blocks) over N = {}: {:.3g} (position, block) pairs; one thread\n",
             preset, s.blocks.size(), positions, pairs);
  fmt::print("native double cos+sin of the same angles: {:.3f} s ({:.3g} pairs/s)\n", native,
             pairs / native);
  if (only_threads) {
    threads_section(s, positions, native);
    return 0;
  }
  fmt::print("{:<6} {:<6} {:>10} {:>14} {:>16}\n", "real.", "format", "seconds", "pairs/s",
             "time / native");
  attention::CensusOptions options;
  options.positions = positions;
  options.threads = 1;
  for (const char* realisation : {"r1", "r2", "hf"}) {
    for (const auto& format : {numeric::Format::bf16(), numeric::Format::fp32()}) {
      const auto r = attention::parse_realisation(realisation, format);
      const auto start = Clock::now();
      const auto result = attention::census(s, r, options);
      const double t = seconds_since(start);
      fmt::print("{:<6} {:<6} {:>10.3f} {:>14.3g} {:>16.1f}   (distinct {})\n", realisation,
                 format.name, t, pairs / t, t / native, result.distinct_rotations);
    }
  }
  attention::SweepGrid grid;
  grid.schedules = {s};
  grid.realisations = {"r1", "r2", "hf"};
  grid.formats = {numeric::Format::bf16(), numeric::Format::fp16(), numeric::Format::fp32(),
                  numeric::Format::fp64()};
  const auto start = Clock::now();
  (void)attention::sweep(grid, options);
  const double t = seconds_since(start);
  fmt::print(
      "sweep of {} x r1 r2 hf x bf16 fp16 fp32 fp64 (12 cells, shared work): {:.2f} s = {:.1f} x "
      "native for one table\n",
      preset, t, t / native);
  threads_section(s, positions, native);
  return 0;
}
