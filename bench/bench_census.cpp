// Census throughput: realised (cos, sin) pairs per second of `attention::census` for one model
// preset, next to native double cos+sin of the same angles measured in the same run (the
// ratio is what to compare across machines). Also times the default-sweep grid of one preset.
//
// Then the same census (hf, bf16) with 1 and 2 threads (the speed-up, and the check that both
// give the same JSON), in --repeat rounds (default 5 up to 2^20 positions, 1 above) with each
// thread count's median, the census's own count of its working bytes a position
// (CensusResult::working_bytes) and the peak resident memory of the process after each census
// (getrusage; it only grows), from which the bytes per position are read.
//
// --cli times `ropesim rotations --schedule PRESET --realization hf --format bf16 --positions N
// --json` (the binary built beside this bench, or --binary PATH) against a native C loop of
// binary64 cos+sin over the same N x blocks angles, in the same run (target: within
// 6x; N = 1048576 for llama2-7b is 2^26 angles).
//
//   build/bench/bench_census [--preset NAME] [--positions N] [--only-threads] [--threads 1,2]
//                            [--repeat R]
//   build/bench/bench_census --preset llama2-7b --positions 16777216 --only-threads   (2^24)
//   build/bench/bench_census --cli --positions 1048576
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attention/census/census.hpp"
#include "core/stopwatch.hpp"

namespace {

using ropesim::Clock;
using ropesim::seconds_since;
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

/// hf at bf16 with each thread count, `repeat` rounds (each round runs every thread count once,
/// so that a passing disturbance hits all counts alike): seconds, speed-up against the first
/// count's run of the same round, equal JSON, memory; then each count's median over the rounds
/// and the speed-up of the medians (a census of 2^16 positions takes a tenth of a second, so
/// one run alone says little).
void threads_section(const attention::Schedule& s, std::uint64_t positions, double native,
                     const std::vector<unsigned>& thread_counts, unsigned repeat) {
  const double pairs = static_cast<double>(positions) * static_cast<double>(s.blocks.size());
  const auto r = attention::parse_realisation("hf", numeric::Format::bf16());
  const double before = peak_rss_mib();
  fmt::print("threads: hf bf16 over N = {} (peak RSS before: {:.0f} MiB), {} round(s)\n", positions,
             before, repeat);
  nlohmann::json first;
  std::vector<std::int64_t> first_witnesses;
  std::vector<std::vector<double>> times(thread_counts.size());
  for (unsigned round = 0; round < repeat; ++round) {
    double round_first = 0;
    for (std::size_t c = 0; c < thread_counts.size(); ++c) {
      const unsigned t = thread_counts[c];
      attention::CensusOptions options;
      options.positions = positions;
      options.threads = t;
      const auto start = Clock::now();
      const auto result = attention::census(s, r, options);
      const double seconds = seconds_since(start);
      times[c].push_back(seconds);
      // every key but the witness list, and the witnesses apart (the JSON of 2^23 witnesses
      // would add about 16 bytes a position to the resident memory measured here)
      const auto json = attention::to_json(result);
      if (first.is_null()) {
        first = json;
        first_witnesses = result.witnesses;
      }
      if (c == 0) round_first = seconds;
      const bool equal = json == first && result.witnesses == first_witnesses;
      fmt::print(
          "  {} thread(s): {:.3f} s, {:.3g} pairs/s, {:.1f} x native; distinct {}; working "
          "{:.2f} bytes/position; peak RSS {:.0f} MiB ({:.1f} bytes per position above the "
          "start); speed-up {:.2f}; JSON {}\n",
          t, seconds, pairs / seconds, seconds / native, result.distinct_rotations,
          static_cast<double>(result.working_bytes) / static_cast<double>(positions),
          peak_rss_mib(), (peak_rss_mib() - before) * 1048576.0 / static_cast<double>(positions),
          round_first / seconds, equal ? "equal" : "DIFFERS");
    }
  }
  if (repeat < 2) return;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
  };
  const double base = median(times[0]);
  for (std::size_t c = 0; c < thread_counts.size(); ++c) {
    const double m = median(times[c]);
    fmt::print("  median of {} rounds, {} thread(s): {:.3f} s; speed-up {:.2f}\n", repeat,
               thread_counts[c], m, base / m);
  }
}

/// `ropesim rotations` on the command line against the native loop over the same angles.
void cli_section(const std::string& binary, const std::string& preset, std::uint64_t positions,
                 double native) {
  const std::string command = fmt::format(
      "'{}' rotations --schedule {} --realization hf --format bf16 --positions {} --json "
      "--allow-slow > /dev/null",
      binary, preset, positions);
  const auto start = Clock::now();
  const int status = std::system(command.c_str());
  const double t = seconds_since(start);
  fmt::print("cli: {}\n  exit status {}, {:.2f} s wall = {:.1f} x the native loop ({:.3f} s)\n",
             command, status, t, t / native, native);
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "llama2-7b";
  std::uint64_t positions = 65536;
  bool only_threads = false, cli = false;
  unsigned repeat = 0;  // 0: 5 rounds up to 2^20 positions, 1 above
  std::vector<unsigned> thread_counts = {1, 2};
#ifdef ROPESIM_BINARY
  std::string binary = ROPESIM_BINARY;
#else
  std::string binary = "ropesim";
#endif
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--only-threads") == 0) only_threads = true;
    if (std::strcmp(argv[i], "--cli") == 0) cli = true;
  }
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--preset") == 0) preset = argv[i + 1];
    if (std::strcmp(argv[i], "--positions") == 0) positions = std::stoull(argv[i + 1]);
    if (std::strcmp(argv[i], "--binary") == 0) binary = argv[i + 1];
    if (std::strcmp(argv[i], "--repeat") == 0)
      repeat = static_cast<unsigned>(std::stoul(argv[i + 1]));
    if (std::strcmp(argv[i], "--threads") == 0) {
      thread_counts.clear();
      for (const char* p = argv[i + 1]; *p;) {
        char* end = nullptr;
        thread_counts.push_back(static_cast<unsigned>(std::strtoul(p, &end, 10)));
        p = *end == ',' ? end + 1 : end;
      }
    }
  }
  if (repeat == 0) repeat = positions <= (std::uint64_t{1} << 20) ? 5 : 1;
  const attention::Schedule s = attention::preset_schedule(preset);
  const double pairs = static_cast<double>(positions) * static_cast<double>(s.blocks.size());
  const double native = native_seconds(s, positions);
  fmt::print("census of {} ({} blocks) over N = {}: {:.3g} (position, block) pairs; one thread\n",
             preset, s.blocks.size(), positions, pairs);
  fmt::print("native double cos+sin of the same angles: {:.3f} s ({:.3g} pairs/s)\n", native,
             pairs / native);
  if (cli) {
    cli_section(binary, preset, positions, native);
    return 0;
  }
  if (only_threads) {
    threads_section(s, positions, native, thread_counts, repeat);
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
  threads_section(s, positions, native, thread_counts, repeat);
  return 0;
}
