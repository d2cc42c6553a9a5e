// `ropesim table rotations` in bounded memory: the realised table of a preset
// written to .npz and .csv next to the census of the same positions, each run as the
// `ropesim` executable in a child process, timed (wall seconds) and measured (the child's peak
// resident memory, getrusage RUSAGE_CHILDREN via wait4). Printed: seconds and the ratio to the
// census, peak RSS and bytes per position, file bytes per position; then the same at N/16
// positions, whose peak RSS shows whether memory grows with N.
//
//   build/bench/bench_table_rotations [--preset llama3-8b] [--format bf16] [--realization r1]
//                                     [--start 65536] [--positions 1048576] [--jobs 2]
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Measure {
  double seconds = 0, peak_mib = 0;
  int code = -1;
};

/// Runs ROPESIM_BINARY with `args` (stdout to /dev/null): wall time and the child's peak RSS.
Measure run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::vector<std::string> all{ROPESIM_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);  // the child must not inherit (and print) this process's buffer
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stdout)) _exit(127);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage u{};
  ::wait4(pid, &status, 0, &u);
  Measure m;
  m.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  m.peak_mib = static_cast<double>(u.ru_maxrss) / 1024.0;
  m.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "llama3-8b", format = "bf16", realization = "r1", jobs = "2";
  std::uint64_t start = 65536, positions = std::uint64_t{1} << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--preset")
      preset = value;
    else if (flag == "--format")
      format = value;
    else if (flag == "--realization")
      realization = value;
    else if (flag == "--jobs")
      jobs = value;
    else if (flag == "--start")
      start = std::stoull(value);
    else if (flag == "--positions")
      positions = std::stoull(value);
    else {
      fmt::print(stderr, "bench_table_rotations: unknown flag {}\n", flag);
      return 2;
    }
  }
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ropesim_bench_table_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  fmt::print("table rotations: {} {} {}, positions {}..{} (N = {}), --jobs {}\n", preset,
             realization, format, start, start + positions - 1, positions, jobs);
  for (const std::uint64_t n : {positions, positions / 16}) {
    const std::vector<std::string> window{
        "--schedule", preset,    "--realization",       realization,   "--format",
        format,       "--start", std::to_string(start), "--positions", std::to_string(n),
        "--jobs",     jobs};
    std::vector<std::string> census{"rotations"};
    census.insert(census.end(), window.begin(), window.end());
    census.push_back("--json");
    const Measure c = run(census);
    fmt::print(
        "N = {}\n  census          {:8.1f} s  peak RSS {:7.0f} MiB  ({:.0f} bytes/position)"
        "  exit {}\n",
        n, c.seconds, c.peak_mib, c.peak_mib * 1048576.0 / static_cast<double>(n), c.code);
    for (const char* ext : {".npz", ".csv"}) {
      const std::string file = (dir / (std::string("table") + ext)).string();
      std::vector<std::string> table{"table", "rotations"};
      table.insert(table.end(), window.begin(), window.end());
      table.insert(table.end(), {"--out", file});
      const Measure t = run(table);
      const double bytes =
          std::filesystem::exists(file) ? static_cast<double>(std::filesystem::file_size(file)) : 0;
      fmt::print(
          "  table {:5}     {:8.1f} s  peak RSS {:7.0f} MiB  ({:.0f} bytes/position)  "
          "{:.2f}x the census; file {:.0f} bytes/position  exit {}\n",
          ext, t.seconds, t.peak_mib, t.peak_mib * 1048576.0 / static_cast<double>(n),
          t.seconds / c.seconds, bytes / static_cast<double>(n), t.code);
      std::filesystem::remove(file);
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}
