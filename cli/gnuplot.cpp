#include "cli/gnuplot.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cli/table.hpp"
#include "numeric/error.hpp"

extern char** environ;

namespace ropesim::cli {

PlotKind plot_kind_for(const std::string& path, const std::string& flag) {
  if (path.empty())
    throw InvalidArgument(flag + ": empty file name; accepted: a path ending in .svg .png");
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".svg") return PlotKind::svg;
  if (ext == ".png") return PlotKind::png;
  throw InvalidArgument(flag + ": unknown figure extension '" + ext + "' in '" + path +
                        "'; accepted: .svg .png");
}

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

}  // namespace

void require_gnuplot() {
  if (find_gnuplot().empty()) {
    throw InvalidArgument(
        "plot: gnuplot is not installed (not found on PATH); install it with: apt-get install "
        "gnuplot-nox");
  }
}

std::string gnuplot_terminal(PlotKind kind, const std::string& temporary_path, int width,
                             int height) {
  std::string out;
  switch (kind) {
    case PlotKind::svg:
      out += fmt::format(
          "set terminal svg size {},{} dynamic noenhanced font 'sans,13' background '#ffffff'\n",
          width, height);
      break;
    case PlotKind::png:
      out += fmt::format(
          "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {{\n"
          "  set terminal pngcairo size {0},{1} noenhanced font 'sans,11' background '#ffffff'\n"
          "}} else {{\n"
          "  set terminal png size {0},{1} noenhanced background '#ffffff'\n"
          "}}\n",
          width, height);
      break;
  }
  out += "set output " + gnuplot_quote(temporary_path) + "\n";
  out += "set encoding utf8\n";
  return out;
}

void draw_with_gnuplot(const std::string& body, PlotKind kind, const std::string& out_path,
                       int width, int height) {
  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) require_gnuplot();
  // gnuplot draws into a temporary file of its own; the figure then reaches --out through
  // io::write_output_file (atomic replace, symbolic links followed, devices written through).
  const std::string temporary = temporary_file("ropesim_plot_figure_");
  std::string script = gnuplot_terminal(kind, temporary, width, height);
  script += "set label 1000 " + gnuplot_quote(provenance_line()) +
            " at screen 0.005,0.012 left font ',8' textcolor rgb '#606060' noenhanced\n";
  script += body;
  script += "\nunset output\n";

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
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (spawned == 0) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  const std::string log = read_text(log_path);
  cleanup();
  std::error_code ec;
  const bool ok = spawned == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
                  std::filesystem::exists(temporary, ec) &&
                  std::filesystem::file_size(temporary, ec) > 0;
  if (!ok) {
    std::remove(temporary.c_str());
    std::string first;
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
      if (line.find_first_not_of(" \t^") != std::string::npos)
        first = line;  // the message follows the caret
      if (line.find("line ") != std::string::npos && !first.empty()) break;
    }
    throw std::runtime_error("gnuplot failed" +
                             (spawned != 0 ? std::string(" to start") : std::string()) +
                             (first.empty() ? std::string() : ": " + first));
  }
  const std::string figure = read_text(temporary);
  std::remove(temporary.c_str());
  io::write_output_file(out_path, figure, "--out");
}

}  // namespace ropesim::cli
