#include "cli/progress.hpp"

#include <unistd.h>

#include <iostream>

#include "cli/commands.hpp"

namespace ropesim::cli {

void add_progress_flags(CLI::App* cmd, ProgressChoice& choice) {
  auto* on = cmd->add_flag_callback(
      "--progress", [&choice] { choice = ProgressChoice::on; },
      "Show progress on stderr even when it is not a terminal (log files); stdout is unchanged");
  auto* off = cmd->add_flag_callback(
      "--no-progress", [&choice] { choice = ProgressChoice::off; }, "Show no progress on stderr");
  on->excludes(off);
}

ProgressReporter::ProgressReporter(ProgressChoice choice, std::string what)
    : what_(std::move(what)), start_(std::chrono::steady_clock::now()), last_(start_) {
  terminal_ = stderr_is_tty();
  enabled_ = choice == ProgressChoice::on || (choice == ProgressChoice::automatic && terminal_);
}

ProgressReporter::~ProgressReporter() {
  // left without finish() (an error is on its way): end the line, claim nothing
  if (enabled_ && drawn_ && !finished_ && terminal_) std::cerr << "\n" << std::flush;
}

std::string ProgressReporter::line(std::uint64_t done, std::uint64_t total, const std::string& unit,
                                   double elapsed) const {
  std::string text = progress_line(static_cast<std::size_t>(done), static_cast<std::size_t>(total),
                                   what_, elapsed);
  if (!unit.empty()) {
    const auto bracket = text.find(']');
    if (bracket != std::string::npos) text.insert(bracket, " " + unit);
  }
  return text;
}

void ProgressReporter::update(std::uint64_t done, std::uint64_t total, const std::string& unit) {
  if (!enabled_ || finished_) return;
  last_done_ = done;
  last_total_ = total;
  last_unit_ = unit;
  const auto now = std::chrono::steady_clock::now();
  const double since_start = std::chrono::duration<double>(now - start_).count();
  const double since_last = std::chrono::duration<double>(now - last_).count();
  const int percent =
      total == 0 ? 100
                 : static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
  if (terminal_) {
    if (since_start < 1.0 || (drawn_ && since_last < 0.2)) return;
    std::cerr << "\r" << line(done, total, unit, since_start) << "   " << std::flush;
  } else {
    // the first update at once (a log shows the job started), then rate-limited
    if (drawn_ && (since_last < 10.0 || percent <= last_percent_)) return;
    std::cerr << line(done, total, unit, since_start) << "\n" << std::flush;
  }
  drawn_ = true;
  last_ = now;
  last_percent_ = percent;
}

void ProgressReporter::finish() {
  if (finished_) return;
  finished_ = true;
  if (!enabled_ || !drawn_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::cerr << (terminal_ ? "\r" : "") << line(last_done_, last_total_, last_unit_, elapsed)
            << (terminal_ ? " done   \n" : " done\n") << std::flush;
}

}  // namespace ropesim::cli
