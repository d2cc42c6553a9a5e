#pragma once
// One progress reporter for the long commands (compare, plot error, compile --certify,
// classify --model; `experiment` when it exists): a line on stderr, never on stdout, so
// stdout is byte-identical with and without it.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <string>

namespace ropesim::cli {

/// When a command shows progress: `--progress` forces it (a cluster job's log file),
/// `--no-progress` silences it, and by default it is shown only when stderr is a terminal.
enum class ProgressChoice { automatic, on, off };

/// Adds `--progress` and `--no-progress` (mutually exclusive) to `cmd`, setting `choice`.
void add_progress_flags(CLI::App* cmd, ProgressChoice& choice);

/// A rate-limited progress display on stderr. On a terminal it redraws one line with '\r' at
/// most 5 times a second, from 1 s after the start (a command that ends within a second draws
/// nothing); off a terminal (forced with --progress) it writes whole lines: the first update at
/// once, then at most one per 10 s and only when a further 1 % is done, so a log holds at most
/// about 100 lines. finish() ends what was drawn with a final "... done" line and a newline;
/// the destructor without finish() (an error is on its way) only ends a terminal's line.
/// Nothing is written when the reporter is disabled or nothing was drawn.
class ProgressReporter {
 public:
  ProgressReporter(ProgressChoice choice, std::string what);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  bool enabled() const { return enabled_; }
  /// `done` of `total` units (`unit`, e.g. "entries") are finished.
  void update(std::uint64_t done, std::uint64_t total, const std::string& unit = "");
  /// Ends the display (idempotent).
  void finish();

 private:
  std::string line(std::uint64_t done, std::uint64_t total, const std::string& unit,
                   double elapsed) const;

  bool enabled_ = false;
  bool terminal_ = false;
  bool drawn_ = false;
  bool finished_ = false;
  std::string what_;
  std::chrono::steady_clock::time_point start_, last_;
  std::uint64_t last_done_ = 0, last_total_ = 0;
  std::string last_unit_;
  int last_percent_ = -1;
};

}  // namespace ropesim::cli
