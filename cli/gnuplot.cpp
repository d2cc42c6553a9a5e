#include "cli/gnuplot.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cli/table.hpp"
#include "core/error.hpp"

extern char** environ;

namespace ropesim::cli {

std::string gnuplot_quote(std::string_view text) {
  // gnuplot expands `@macro` and back-quoted commands on the whole line, even inside quotes,
  // before it reads a string; an octal escape is only decoded after that, so every character
  // that could mean something (" \ ` @ ' $ and controls) is written as \ooo.
  static constexpr std::string_view plain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 !#%&()*+,-./:;<=>?[]^_{}|~";
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (byte >= 0x80 || plain.find(c) != std::string_view::npos) {
      out += c;  // UTF-8 bytes of θ, δ, π, ≥ are never special
    } else if (byte < 0x20 || byte == 0x7f) {
      out += ' ';
    } else {
      out += fmt::format("\\{:03o}", byte);
    }
  }
  return out + "\"";
}

std::string gnuplot_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i)
    out += (i ? "." + std::string("\"\\n\"") + "." : "") + gnuplot_quote(lines[i]);
  return out.empty() ? gnuplot_quote("") : out;
}

std::string gnuplot_number(double value) {
  if (!std::isfinite(value)) return "NaN";
  return fmt::format("{}", value);
}

namespace {

/// The first executable `gnuplot` on PATH, or "" (what posix_spawnp will start).
std::string find_gnuplot() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  std::size_t start = 0;
  for (;;) {
    const std::size_t colon = dirs.find(':', start);
    std::string dir =
        dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/gnuplot";
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return {};
}

/// A new empty temporary file; returns its path.
std::string temporary_file(const char* stem) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (std::string(stem) + "XXXXXX")).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  const int fd = ::mkstemp(buffer.data());
  if (fd < 0)
    throw std::runtime_error("cannot create a temporary file in " +
                             std::filesystem::temp_directory_path().string());
  ::close(fd);
  return std::string(buffer.data());
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// How gnuplot ended: its wait status, or that it was killed at the deadline.
struct GnuplotExit {
  int status = 0;
  bool timed_out = false;
};

/// Waits for gnuplot (leader of its own process group) until `seconds` have passed, then kills
/// the whole group (gnuplot and anything it started) and reaps it.
GnuplotExit wait_for_gnuplot(pid_t pid, double seconds) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  GnuplotExit ended;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    const pid_t done = ::waitpid(pid, &ended.status, WNOHANG);
    if (done == pid) return ended;
    if (done < 0 && errno != EINTR) return ended;  // not our child any more: nothing to wait for
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  ended.timed_out = true;
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &ended.status, 0) < 0 && errno == EINTR) {
  }
  return ended;
}

}  // namespace

double gnuplot_timeout_seconds() {
  const char* text = std::getenv("ROPESIM_GNUPLOT_TIMEOUT");
  if (text == nullptr || *text == '\0') return kGnuplotTimeoutSeconds;
  const std::string s = text;
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits])) != 0) ++digits;
  if (digits == 0 || digits != s.size() || digits > 6 || std::stoul(s) < 1) {
    throw InvalidArgument(
        "ROPESIM_GNUPLOT_TIMEOUT='" + s +
        "' is not a number of seconds; accepted: an integer in 1..999999 (default " +
        std::to_string(static_cast<int>(kGnuplotTimeoutSeconds)) + ")");
  }
  return static_cast<double>(std::stoul(s));
}

void require_gnuplot() {
  (void)gnuplot_timeout_seconds();  // a bad ROPESIM_GNUPLOT_TIMEOUT is refused before computing
  if (find_gnuplot().empty()) {
    throw InvalidArgument(
        "plot: gnuplot is not installed (not found on PATH); install it with: apt-get install "
        "gnuplot-nox");
  }
}

std::string gnuplot_terminal(PlotKind kind, const std::string& output_path, int width, int height,
                             const FigureStyle& style) {
  std::string out;
  const double w = style.size ? style.size->first : width;
  const double h = style.size ? style.size->second : height;
  const std::string font = gnuplot_quote(
      fmt::format("{},{:g}", style.font_family, style.font_size.value_or(default_font_size(kind))));
  switch (kind) {
    case PlotKind::svg:
      out += fmt::format(
          "set terminal svg size {:g},{:g} dynamic noenhanced font {} background '#ffffff'\n", w, h,
          font);
      break;
    case PlotKind::png:
      out += fmt::format(
          "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {{\n"
          "  set terminal pngcairo size {0:g},{1:g} noenhanced font {2} background '#ffffff'\n"
          "}} else {{\n"
          "  set terminal png size {0:g},{1:g} noenhanced background '#ffffff'\n"
          "}}\n",
          w, h, font);
      break;
    case PlotKind::pdf:
      // The plot's pixel size at 200 pixels per inch unless --size gave inches.
      out += fmt::format(
          "set terminal pdfcairo size {:g}in,{:g}in noenhanced font {} background '#ffffff' "
          "pointscale 0.5\n",
          style.size ? w : w / 200, style.size ? h : h / 200, font);
      break;
  }
  out += "set output " + gnuplot_quote(output_path) + "\n";
  out += "set encoding utf8\n";
  return out;
}

void draw_with_gnuplot(const Figure& figure) {
  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) require_gnuplot();
  const double timeout = gnuplot_timeout_seconds();
  // gnuplot draws into a temporary file of its own; the figure then reaches --out through
  // io::write_output_file (atomic replace, symbolic links followed, devices written through).
  const std::string temporary = temporary_file("ropesim_plot_figure_");
  std::string after_terminal;
  if (figure.style.footnote) {
    after_terminal += "set label 1000 " + gnuplot_quote(provenance_line()) +
                      fmt::format(
                          " at screen 0.005,0.012 left font ',{:g}' textcolor rgb "
                          "'#606060' noenhanced\n",
                          figure.style.font_points(8, figure.kind));
  }
  after_terminal += figure.body;
  after_terminal += "\nunset output\n";
  const std::string script =
      gnuplot_terminal(figure.kind, temporary, figure.width, figure.height, figure.style) +
      after_terminal;

  const std::string script_path = temporary_file("ropesim_plot_script_");
  const std::string log_path = temporary_file("ropesim_plot_log_");
  auto cleanup = [&] {
    std::remove(script_path.c_str());
    std::remove(log_path.c_str());
  };
  {
    std::ofstream out(script_path, std::ios::binary | std::ios::trunc);
    out << script;
    if (!out) {
      cleanup();
      throw std::runtime_error("cannot write the gnuplot script to " + script_path);
    }
  }
  // gnuplot SCRIPT, no shell: nothing in the paths is interpreted.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_APPEND,
                                   0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_path.c_str(), O_WRONLY | O_APPEND,
                                   0);
  std::string arg0 = "gnuplot";
  std::string arg1 = script_path;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  // Its own process group, so that a gnuplot that does not finish is killed with whatever it
  // started.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, gnuplot.c_str(), &actions, &attributes, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  GnuplotExit ended;
  if (spawned == 0) ended = wait_for_gnuplot(pid, timeout);
  const int status = ended.status;
  const std::string log = read_text(log_path);
  cleanup();
  std::error_code ec;
  const bool ok = spawned == 0 && !ended.timed_out && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0 && std::filesystem::exists(temporary, ec) &&
                  std::filesystem::file_size(temporary, ec) > 0;
  if (!ok) {
    std::remove(temporary.c_str());
    if (ended.timed_out) {
      throw InvalidArgument(
          fmt::format("plot: gnuplot ({}) did not finish within {:g} s and was stopped; no figure "
                      "written (ROPESIM_GNUPLOT_TIMEOUT sets the limit in seconds)",
                      gnuplot, timeout));
    }
    std::string first;
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
      if (line.find_first_not_of(" \t^") != std::string::npos)
        first = line;  // the message follows the caret
      if (line.find("line ") != std::string::npos && !first.empty()) break;
    }
    std::string how;
    if (spawned != 0) {
      how = "could not be started (" + std::string(std::strerror(spawned)) + ")";
    } else if (WIFSIGNALED(status)) {
      how = "was killed by signal " + std::to_string(WTERMSIG(status));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      how = "failed with exit status " + std::to_string(WEXITSTATUS(status));
    } else {
      how = "exited without writing the figure";
    }
    throw InvalidArgument("plot: gnuplot (" + gnuplot + ") " + how +
                          (first.empty() ? std::string() : ": " + first) + "; no figure written");
  }
  const std::string drawn = read_text(temporary);
  std::remove(temporary.c_str());
  io::write_output_file(figure.out_path, drawn, "--out");
  if (!figure.script_path.empty()) {
    // The same script, drawing to --out itself; the provenance as a comment (control characters
    // of the recorded command become spaces, so the comment stays one line).
    std::string comment = provenance_line();
    for (char& c : comment) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    }
    io::write_output_file(figure.script_path,
                          "# " + comment + "\n# Redraw with: gnuplot " +
                              shell_word(figure.script_path) + "\n" +
                              gnuplot_terminal(figure.kind, figure.out_path, figure.width,
                                               figure.height, figure.style) +
                              after_terminal,
                          "--gnuplot-script");
  }
}

}  // namespace ropesim::cli
