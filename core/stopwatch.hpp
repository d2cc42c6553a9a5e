#pragma once
/// Elapsed wall-clock time: the one `seconds_since` of the library (the certified-range scans
/// record their seconds) and of the benchmarks in bench/. Header-only.
#include <chrono>

namespace ropesim {

/// The clock every measured duration uses: monotonic, unaffected by changes of the system time.
using Clock = std::chrono::steady_clock;

/// Seconds (a double, sub-microsecond resolution on Linux) elapsed on Clock since `start`.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace ropesim
