// The README's main job, `ropesim sweep`, against its per-format parts (issue 34, item 7): the
// sweep of every format together next to the sweeps of one format each, every run the
// `ropesim` executable in a child process (the binary built beside this bench, or --binary),
// in the same run. Each round runs the whole sweep and each format's sweep once (the whole
// sweep first in odd rounds, last in even ones, so that a drift of the machine's speed hits
// both sides alike) and prints wall and CPU seconds (the child's user + system time, wait4)
// and the ratio together / (sum of the parts); then the median of the rounds' ratios and their
// range (how noisy the machine was). Target: ratio ≤ 1.05. The rows are checked too: cell
// (s, r, f) of the whole sweep's CSV must be the line of cell (s, r) of format f's CSV,
// byte for byte (the provenance line, which names the command, is skipped).
//
//   build/bench/bench_sweep [--models LIST|all] [--realizations LIST] [--formats LIST]
//                           [--positions N] [--jobs N] [--rounds R] [--binary PATH]
//   build/bench/bench_sweep                                   (the README's sweep, 3 rounds)
//   build/bench/bench_sweep --models llama2-7b,gemma-7b --rounds 5
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Measure {
  double wall = 0, cpu = 0;
  int code = -1;
};

/// Runs `binary` with `args` (stdout and stderr to /dev/null): wall time and the child's CPU time.
Measure run(const std::string& binary, const std::vector<std::string>& args) {
  std::vector<std::string> all{binary};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);  // the child must not inherit (and print) this process's buffer
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr))
      _exit(127);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage u{};
  ::wait4(pid, &status, 0, &u);
  Measure m;
  m.wall = std::chrono::duration<double>(Clock::now() - start).count();
  m.cpu = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
          1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  m.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return m;
}

/// The data lines of a CSV that `ropesim sweep --out` wrote (the '#' provenance line dropped).
std::vector<std::string> csv_rows(const std::filesystem::path& file) {
  std::vector<std::string> rows;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') rows.push_back(line);
  }
  return rows;
}

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = list.find(',', from);
    out.push_back(list.substr(from, comma - from));
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef ROPESIM_BINARY
  std::string binary = ROPESIM_BINARY;
#else
  std::string binary = "ropesim";
#endif
  std::string models, realizations, formats = "bf16,fp16,fp32,fp64", positions, jobs;
  unsigned rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--models") {
      models = value;
    } else if (flag == "--realizations") {
      realizations = value;
    } else if (flag == "--formats") {
      formats = value;
    } else if (flag == "--positions") {
      positions = value;
    } else if (flag == "--jobs") {
      jobs = value;
    } else if (flag == "--rounds") {
      rounds = static_cast<unsigned>(std::max(1ul, std::stoul(value)));
    } else if (flag == "--binary") {
      binary = value;
    } else {
      fmt::print(stderr, "bench_sweep: unknown flag {}\n", flag);
      return 2;
    }
  }
  if (argc % 2 == 0) {
    fmt::print(stderr, "bench_sweep: flag {} needs a value\n", argv[argc - 1]);
    return 2;
  }
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ropesim_bench_sweep_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // the README's command with the grid's options; each part names one format
  std::vector<std::string> common{"sweep", "--quiet"};
  if (!models.empty()) common.insert(common.end(), {"--models", models});
  if (!realizations.empty()) common.insert(common.end(), {"--realizations", realizations});
  if (!positions.empty()) common.insert(common.end(), {"--positions", positions});
  if (!jobs.empty()) common.insert(common.end(), {"--jobs", jobs});
  const std::vector<std::string> parts = split_commas(formats);
  auto sweep_of = [&](const std::string& f, const std::filesystem::path& out) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--formats", f, "--out", out.string()});
    return args;
  };
  std::string shown;
  for (std::size_t k = 1; k < common.size(); ++k) shown += " " + common[k];
  fmt::print("ropesim sweep{} --formats {} against one sweep per format; {} round(s)\n", shown,
             formats, rounds);
  std::vector<double> wall_ratio, cpu_ratio, wall_whole, wall_parts;
  bool rows_equal = true, all_ok = true;
  for (unsigned round = 0; round < rounds; ++round) {
    Measure whole;
    std::vector<Measure> part(parts.size());
    auto run_whole = [&] {
      whole = run(binary, sweep_of(formats, dir / "whole.csv"));
      all_ok = all_ok && whole.code == 0;
    };
    if (round % 2 == 0) run_whole();
    for (std::size_t f = 0; f < parts.size(); ++f) {
      part[f] = run(binary, sweep_of(parts[f], dir / fmt::format("part{}.csv", f)));
      all_ok = all_ok && part[f].code == 0;
    }
    if (round % 2 == 1) run_whole();
    // cell (s, r, f) of the whole grid is line (s·R + r)·F + f; of format f's grid, s·R + r
    const auto rows = csv_rows(dir / "whole.csv");
    bool equal = !rows.empty();
    for (std::size_t f = 0; f < parts.size() && equal; ++f) {
      const auto mine = csv_rows(dir / fmt::format("part{}.csv", f));
      equal = mine.size() >= 1 && rows.size() - 1 == (mine.size() - 1) * parts.size() &&
              mine[0] == rows[0];  // the header
      for (std::size_t j = 1; j < mine.size() && equal; ++j)
        equal = rows[1 + (j - 1) * parts.size() + f] == mine[j];
    }
    rows_equal = rows_equal && equal;
    double sum_wall = 0, sum_cpu = 0;
    std::string each;
    for (std::size_t f = 0; f < parts.size(); ++f) {
      sum_wall += part[f].wall;
      sum_cpu += part[f].cpu;
      each += fmt::format("{}{} {:.1f}", f ? ", " : "", parts[f], part[f].wall);
    }
    wall_ratio.push_back(whole.wall / sum_wall);
    cpu_ratio.push_back(whole.cpu / sum_cpu);
    wall_whole.push_back(whole.wall);
    wall_parts.push_back(sum_wall);
    fmt::print(
        "round {}: together {:.1f} s wall ({:.1f} s CPU); parts {:.1f} s wall ({:.1f} s CPU: "
        "{}); ratio {:.3f} wall, {:.3f} CPU; rows {}\n",
        round + 1, whole.wall, whole.cpu, sum_wall, sum_cpu, each, whole.wall / sum_wall,
        whole.cpu / sum_cpu, equal ? "equal" : "DIFFER");
  }
  std::filesystem::remove_all(dir);
  const auto [wlo, whi] = std::minmax_element(wall_ratio.begin(), wall_ratio.end());
  const auto [clo, chi] = std::minmax_element(cpu_ratio.begin(), cpu_ratio.end());
  fmt::print(
      "median of {} round(s): together {:.1f} s, parts {:.1f} s wall; ratio together / sum of "
      "parts {:.3f} wall (rounds {:.3f}..{:.3f}), {:.3f} CPU (rounds {:.3f}..{:.3f}); target "
      "<= 1.05; rows {}{}\n",
      rounds, median(wall_whole), median(wall_parts), median(wall_ratio), *wlo, *whi,
      median(cpu_ratio), *clo, *chi, rows_equal ? "equal" : "DIFFER",
      all_ok ? "" : "; a run exited non-zero");
  return rows_equal && all_ok ? 0 : 1;
}
