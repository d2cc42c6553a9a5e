// io/files.hpp: inputs read with a byte budget, outputs written as Unix tools write them.
// Every expectation is what the file system shows afterwards: the kind of
// node (lstat), its content, its permission bits, and the directory's entries.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "io/files.hpp"

namespace fs = std::filesystem;
using ropesim::InvalidArgument;

namespace {

/// A fresh, empty directory removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("ropesim_io_" + std::to_string(::getpid()) + "_" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  [[nodiscard]] std::string operator/(const std::string& name) const {
    return (path / name).string();
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void put(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

mode_t kind_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & S_IFMT;
}

/// The names in `dir` (to see that no temporary file is left behind).
std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

/// A character device node `major`,`minor` at `path` (1,3 is null; 1,7 is full), or false
/// when this process may not create device nodes (not root, or a container without
/// CAP_MKNOD): those cases are then skipped with a warning.
bool make_char_device(const std::string& path, unsigned major, unsigned minor) {
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(major, minor)) == 0) return true;
  WARN("mknod not permitted here; device-node case skipped");
  return false;
}

}  // namespace

TEST_CASE("a regular file or a new path is replaced atomically", "[io]") {
  TempDir dir;
  const std::string path = dir / "out.csv";
  ropesim::io::write_output_file(path, "first\n");
  CHECK(slurp(path) == "first\n");
  CHECK(kind_of(path) == S_IFREG);
  // An existing file keeps its permission bits (0640 here), as with `sed -i`.
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  ropesim::io::write_output_file(path, "second\n");
  CHECK(slurp(path) == "second\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  // No temporary file is left beside it, and the probe of check_output_path leaves nothing.
  ropesim::io::check_output_path(dir / "new.json", "--out");
  CHECK(entries(dir.path) == 1);
  CHECK_FALSE(fs::exists(dir / "new.json"));
}

TEST_CASE("a symbolic link given as the output is followed, not replaced", "[io]") {
  TempDir dir;
  put(dir / "real.csv", "old\n");
  fs::create_symlink("real.csv", dir / "link.csv");         // relative target
  fs::create_symlink(dir / "link.csv", dir / "chain.csv");  // a chain of two links
  ropesim::io::write_output_file(dir / "chain.csv", "new\n");
  CHECK(kind_of(dir / "chain.csv") == S_IFLNK);
  CHECK(kind_of(dir / "link.csv") == S_IFLNK);
  CHECK(slurp(dir / "real.csv") == "new\n");
  // A dangling link: the file it names is created, the link stays (as `echo > link` does).
  fs::create_symlink("made.csv", dir / "dangling.csv");
  ropesim::io::write_output_file(dir / "dangling.csv", "made\n");
  CHECK(kind_of(dir / "dangling.csv") == S_IFLNK);
  CHECK(slurp(dir / "made.csv") == "made\n");
  CHECK(entries(dir.path) == 5);
  // A loop of links is refused in one line, naming the flag.
  fs::create_symlink("loop_b", dir / "loop_a");
  fs::create_symlink("loop_a", dir / "loop_b");
  CHECK_THROWS_WITH(ropesim::io::write_output_file(dir / "loop_a", "x", "--dot"),
                    Catch::Contains("--dot") && Catch::Contains("symbolic links"));
}

TEST_CASE("devices and FIFOs are written through, never replaced", "[io]") {
  TempDir dir;
  const std::string null = dir / "null.csv";
  if (make_char_device(null, 1, 3)) {
    ropesim::io::check_output_path(null, "--out");
    ropesim::io::write_output_file(null, "discarded\n");
    CHECK(kind_of(null) == S_IFCHR);
  }
  // /dev/full: the write fails with ENOSPC, as `echo x > /dev/full` does; the node stays.
  const std::string full = dir / "full.csv";
  if (make_char_device(full, 1, 7)) {
    CHECK_THROWS_WITH(ropesim::io::write_output_file(full, "x\n"),
                      Catch::Contains("--out") && Catch::Contains("No space left on device"));
    CHECK(kind_of(full) == S_IFCHR);
  }
  // A FIFO with a reader: the text arrives through it and the FIFO stays a FIFO. The check
  // before computing does not open it (it would block without a reader).
  const std::string fifo = dir / "pipe.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  ropesim::io::check_output_path(fifo, "--out");
  std::string received;
  std::thread reader([&] { received = slurp(fifo); });
  ropesim::io::write_output_file(fifo, "through the pipe\n");
  reader.join();
  CHECK(received == "through the pipe\n");
  CHECK(kind_of(fifo) == S_IFIFO);
  CHECK(entries(dir.path) == (fs::exists(null) ? 1U : 0U) + (fs::exists(full) ? 1U : 0U) + 1U);
}

TEST_CASE("/dev/stdout and /dev/fd/N write to the open descriptor (appending stays appending)",
          "[io]") {
  TempDir dir;
  const std::string log = dir / "log.txt";
  put(log, "earlier line\n");
  // The descriptor opened for appending, as the shell's `>> log` opens it.
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
  REQUIRE(fd >= 0);
  ropesim::io::check_output_path("/dev/fd/" + std::to_string(fd), "--out");
  ropesim::io::write_output_file("/dev/fd/" + std::to_string(fd), "one\n");
  ropesim::io::write_output_file("/proc/self/fd/" + std::to_string(fd), "two\n");
  // A link named like a table file that leads to the descriptor: still the descriptor.
  fs::create_symlink("/dev/fd/" + std::to_string(fd), dir / "table.csv");
  ropesim::io::write_output_file(dir / "table.csv", "three\n");
  CHECK(kind_of(dir / "table.csv") == S_IFLNK);
  ::close(fd);
  CHECK(slurp(log) == "earlier line\none\ntwo\nthree\n");
  CHECK(kind_of(log) == S_IFREG);
  // A descriptor that is not open is refused.
  CHECK_THROWS_WITH(ropesim::io::check_output_path("/dev/fd/987654", "-o"),
                    Catch::Contains("-o") && Catch::Contains("not an open descriptor"));
  // A /proc link of this process to a FIFO, as `cmd | cat` gives /dev/stdout: through.
  const std::string fifo = dir / "p";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = slurp(fifo); });
  const int wfd = ::open(fifo.c_str(), O_WRONLY);
  REQUIRE(wfd >= 0);
  ropesim::io::write_output_file("/dev/fd/" + std::to_string(wfd), "piped\n");
  ::close(wfd);
  reader.join();
  CHECK(received == "piped\n");
}

TEST_CASE("bad output paths are refused in one line naming the flag, touching nothing", "[io]") {
  TempDir dir;
  CHECK_THROWS_WITH(ropesim::io::check_output_path("", "-o"),
                    Catch::StartsWith("-o: empty file name"));
  CHECK_THROWS_WITH(ropesim::io::check_output_path(dir.path.string(), "--out"),
                    Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(ropesim::io::check_output_path(dir / "sub/", "--out"),
                    Catch::Contains("names a directory"));
  CHECK_THROWS_WITH(ropesim::io::check_output_path(dir / "missing/x.csv", "--out"),
                    Catch::Contains("cannot create a file in"));
  CHECK(entries(dir.path) == 0);
}

TEST_CASE("inputs are read within a byte budget", "[io]") {
  TempDir dir;
  put(dir / "small.json", "{\"a\": 1}");
  CHECK(ropesim::io::read_input_file(dir / "small.json", "model spec file") == "{\"a\": 1}");
  // A regular file over the budget is refused before reading (by its size): 11 bytes > 10.
  put(dir / "big.json", "0123456789X");
  CHECK_THROWS_WITH(ropesim::io::read_input_file(dir / "big.json", "DFA file", "", {10, 1}),
                    Catch::Contains("longer than 10 bytes, the limit for a DFA file"));
  CHECK(ropesim::io::read_input_file(dir / "big.json", "DFA file", "", {11, 1}) == "0123456789X");
  // /dev/zero never ends: refused once 1 MiB is read, at once (not after gigabytes).
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(
      ropesim::io::read_input_file("/dev/zero", "model spec file", "", {std::size_t{1} << 20, 1}),
      Catch::StartsWith("/dev/zero: longer than 1 MiB"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK_THROWS_WITH(ropesim::io::read_input_file(dir.path.string(), "DFA file"),
                    Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(
      ropesim::io::read_input_file(dir / "none.json", "DFA file", "hf-config 'x'"),
      Catch::StartsWith("hf-config 'x': cannot open the DFA file (No such file or directory)"));
  CHECK_THROWS_WITH(ropesim::io::read_input_file("", "DFA file"),
                    Catch::Contains("empty file name"));
}

TEST_CASE("a FIFO input is read to its end, and abandoned when it stays silent", "[io]") {
  TempDir dir;
  const std::string fifo = dir / "in.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A writer that sends its text and closes: read to the end.
  std::thread writer([&] { put(fifo, "[1, 2, 3]"); });
  CHECK(ropesim::io::read_input_file(fifo, "DFA file", "", {1024, 5}) == "[1, 2, 3]");
  writer.join();
  // No writer at all: open does not block, and after 1 s of silence reading stops.
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(ropesim::io::read_input_file(fifo, "DFA file", "", {1024, 1}),
                    Catch::Contains("no data for 1 s"));
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(waited >= std::chrono::milliseconds(900));
  CHECK(waited < std::chrono::seconds(10));
}
