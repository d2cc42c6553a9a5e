#pragma once
// Running the ropesim executable from tests: exit code, stdout and stderr, and the checks of
// the CLI contract (one line on stderr, exit code 2, nothing on stdout).
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cli_test {

struct Run {
  int code = -1;
  std::string out, err;
};

/// Runs `binary` with `arguments` (shell words) through sh; `shell_prefix` goes before the
/// command, e.g. "ulimit -v 4000000; " to bound its memory. Captures stdout, stderr, exit code.
inline Run run_binary(const std::string& binary, const std::string& arguments,
                      const std::string& shell_prefix = "") {
  const std::string err_path =
      std::filesystem::temp_directory_path() / ("ropesim_cli_err_" + std::to_string(::getpid()));
  const std::string command = shell_prefix + binary + " " + arguments + " 2>" + err_path;
  Run r;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    r.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream ss;
  ss << err.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_path);
  return r;
}

/// Runs ropesim with `arguments` (see run_binary).
inline Run run(const std::string& arguments, const std::string& shell_prefix = "") {
  return run_binary(ROPESIM_BINARY, arguments, shell_prefix);
}

/// "ulimit -v 4000000; ": a shell prefix that bounds a command's address space (about 3.8 GiB),
/// so a memory regression fails with bad_alloc instead of exhausting the machine. Empty in the
/// sanitizer build (ROPESIM_SANITIZED): AddressSanitizer reserves terabytes of address space for
/// its shadow memory at start-up and aborts under any such limit; there the timeouts guard.
inline std::string memory_limit() {
#ifdef ROPESIM_SANITIZED
  return "";
#else
  return "ulimit -v 4000000; ";
#endif
}

inline int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

inline void expect_usage_error(const Run& r, const std::string& must_contain) {
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find(must_contain) != std::string::npos);
  CHECK(r.out.empty());
}

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name))
      .string();
}

}  // namespace cli_test
