// Output paths: every file a command writes goes through io::write_output_file, so a device
// node, a FIFO, a symbolic link or /dev/stdout given as the output behaves as with any Unix
// tool. Each case below was a data loss before: the node or link was replaced by a regular
// file (`mknod full.csv c 1 7; ropesim formats --out full.csv` exited 0 with full.csv now a
// 936-byte file). What is checked is what the file system shows afterwards (lstat).
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;
namespace fs = std::filesystem;

namespace {

struct Writer {
  std::string command;    ///< with {} where the output path goes
  std::string extension;  ///< what the command accepts
  std::string marker;     ///< a string the written file contains
};

/// One cheap invocation of every command that writes a file, and of every output flag.
std::vector<Writer> writers() {
  return {
      {"formats --formats fp16 --out {}", ".csv", "fp16"},
      {"sweep --models phi-2 --formats fp16 --realizations r1 --positions 16 --out {}", ".csv",
       "phi-2"},
      {"table horizon --formats fp16 --g 1 --k 1 --C 64 --quiet --out {}", ".csv", "fp16"},
      {"table bounds --kind critical-dim --positions 512 --out {}", ".md", "ropesim"},
      {"rotations --schedule single:g=1 --format fp16 --positions 10 -o {}", ".json", "ropesim"},
      {"table rotations --schedule single:g=1 --format fp16 --positions 4 --out {}", ".csv",
       "ropesim"},
      {"table rotations --schedule single:g=1 --format fp16 --positions 4 --out {}", ".npz",
       "cos.npy"},
      {"compare --schedule single:g=1 --realization r1 --format bf16 --positions 100 -o {}", ".csv",
       "ropesim"},
      {"rotate --schedule single:g=1 --format fp16 --q 1,0 --k 1,0 --offset 5 --position 7 -o {}",
       ".json", "ropesim"},
      {"horizon --g 1 --k 1 --C 2096 --format fp16 --max-length 10 -o {}", ".csv", "fp16"},
      {"construct mod --m 3 --r 0 --format fp16 -o {}", ".json", "ropesim_model"},
      {"construct offset --g 1 --k 1 --C 448 --format fp16 -o {}", ".json", "ropesim_model"},
      {"compile 'P a' --alphabet ab --format fp16 -o {}", ".json", "ropesim_model"},
      {"classify --alphabet ab --regex '(ab)*' --out {}", ".json", "ropesim"},
      {"classify --alphabet ab --regex '(ab)*' --dot {}", ".dot", "digraph"},
      {"rotations --schedule single:g=1 --format fp16 --positions 10 --certificate {}", ".json",
       "\"census\""},
      {"horizon --g 1 --k 1 --C 2096 --format fp16 --max-length 10 --certificate {}", ".json",
       "\"horizon\""},
      {"compile 'P a' --alphabet ab --format fp16 -o /dev/null --certificate {}", ".json",
       "\"compile\""},
      {std::string("analyse heads '") + ROPESIM_SOURCE_DIR +
           "/examples/offset_g1_k2_fp16.json' --words ab,ba -o {}",
       ".json", "\"provenance\""},
  };
}

std::string with_path(std::string command, const std::string& path) {
  command.replace(command.find("{}"), 2, "'" + path + "'");
  return command;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

mode_t kind_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & S_IFMT;
}

struct Scratch {
  fs::path dir = fs::path(temp_path("outpaths"));
  Scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  [[nodiscard]] std::string at(const std::string& name) const { return (dir / name).string(); }
};

}  // namespace

TEST_CASE(
    "a symbolic link given as the output is followed: the link stays, its target gets the file",
    "[cli][output_paths]") {
  for (const Writer& w : writers()) {
    INFO(w.command);
    Scratch s;
    const std::string target = s.at("target" + w.extension);
    const std::string link = s.at("link" + w.extension);
    { std::ofstream(target) << "old content\n"; }
    fs::create_symlink(target, link);
    const Run r = run(with_path(w.command, link));
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(kind_of(link) == S_IFLNK);
    CHECK(fs::read_symlink(link) == fs::path(target));
    const std::string written = slurp(target);
    CHECK(written.find(w.marker) != std::string::npos);
    CHECK(written.find("old content") == std::string::npos);
    // Nothing else is left in the directory (no temporary file).
    CHECK(std::distance(fs::directory_iterator(s.dir), fs::directory_iterator()) == 2);
  }
}

TEST_CASE("a device node given as the output is written through, never replaced",
          "[cli][output_paths]") {
  Scratch probe;
  if (::mknod(probe.at("probe").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    WARN("mknod not permitted here (not root, or no CAP_MKNOD); device-node cases skipped");
    return;
  }
  for (const Writer& w : writers()) {
    INFO(w.command);
    Scratch s;
    // A null device named like an output file: exit 0, the node is still a device.
    const std::string null = s.at("null" + w.extension);
    REQUIRE(::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    const Run ok = run(with_path(w.command, null));
    INFO(ok.err);
    CHECK(ok.code == 0);
    CHECK(kind_of(null) == S_IFCHR);
    // A full device (as /dev/full): the write fails with ENOSPC, reported in one line with
    // exit code 2, and the node is still a device (before: replaced by a regular file).
    const std::string full = s.at("full" + w.extension);
    REQUIRE(::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0);
    const Run refused = run(with_path(w.command, full));
    INFO(refused.err);
    CHECK(refused.code == 2);
    CHECK(lines(refused.err) == 1);
    CHECK(refused.err.find("No space left on device") != std::string::npos);
    CHECK(kind_of(full) == S_IFCHR);
    CHECK(std::distance(fs::directory_iterator(s.dir), fs::directory_iterator()) == 2);
  }
}

TEST_CASE("-o /dev/stdout writes to standard output, and appends under >>", "[cli][output_paths]") {
  // run() reads standard output through a pipe: /dev/stdout -> /proc/self/fd/1 -> pipe.
  const Run piped = run("compile 'P a' --alphabet ab --format fp16 -o /dev/stdout --json");
  INFO(piped.err);
  REQUIRE(piped.code == 0);
  CHECK(piped.out.find("\"ropesim_model\"") != std::string::npos);         // the model spec
  CHECK(piped.out.find("\"out\": \"/dev/stdout\"") != std::string::npos);  // then the report
  CHECK(piped.out.find("\"ropesim_model\"") < piped.out.find("\"out\": \"/dev/stdout\""));
  // Redirected with >> to a log: the log keeps what it had (before: the log was replaced by
  // a new file through /proc/self/fd/1's target).
  Scratch s;
  const std::string log = s.at("run.log");
  { std::ofstream(log) << "earlier job output\n"; }
  const Run appended =
      run("construct mod --m 3 --r 0 --format fp16 -o /dev/stdout >> '" + log + "'");
  INFO(appended.err);
  REQUIRE(appended.code == 0);
  const std::string text = slurp(log);
  CHECK(text.rfind("earlier job output\n", 0) == 0);
  CHECK(text.find("ropesim_model") != std::string::npos);
  CHECK(kind_of(log) == S_IFREG);
  // The same for a table command: --out /dev/stdout with a kind given by the extension of
  // the redirected file is not possible, so tables need an extension; /dev/stdout works for
  // every JSON writer: rotations, rotate, classify.
  const Run classify = run("classify --alphabet ab --regex '(ab)*' --out /dev/stdout");
  INFO(classify.err);
  CHECK(classify.code == 0);
  CHECK(classify.out.find("\"provenance\"") != std::string::npos);
  // a table command to a device: one line saying why and how to name one
  const Run table = run("formats --out /dev/stdout");
  expect_usage_error(table, "'/dev/stdout' is a device or pipe");
  CHECK(table.err.find("out.csv -> /dev/stdout") != std::string::npos);
}

TEST_CASE("--certificate and --out naming one file are refused, nothing written",
          "[cli][output_paths]") {
  Scratch s;
  const std::string same = s.at("same.json"), link = s.at("link.json");
  fs::create_symlink(same, link);  // the same file under another name
  for (const std::string& command :
       {std::string("compile 'P a' --alphabet ab --format fp16"),
        std::string("horizon --g 1 --k 1 --C 2096 --format fp16 --max-length 10"),
        std::string("rotations --schedule single:g=1 --format fp16 --positions 10")}) {
    INFO(command);
    expect_usage_error(run(command + " -o '" + same + "' --certificate '" + same + "'"),
                       "is also the --out file");
    expect_usage_error(run(command + " -o '" + same + "' --certificate '" + link + "'"),
                       "is also the --out file");
    CHECK_FALSE(fs::exists(same));
    // Two devices may be shared, as in a shell (a JSON-only flag takes a device as JSON).
    const bool json_out = command.rfind("horizon", 0) != 0;  // horizon's --out has four kinds
    const Run both = run(command + " -o " + (json_out ? "/dev/null" : s.at("h.csv")) +
                         " --certificate /dev/null");
    INFO(both.err);
    CHECK(both.code == 0);
  }
}

TEST_CASE("a run ended by SIGTERM or SIGINT leaves neither the file nor its temporary",
          "[cli][output_paths][signals]") {
  // Before: `timeout 4 ropesim table rotations … --out big.csv` left big.csv.tmp.<pid>.1
  // (144 MB) behind. The run is stopped once its temporary file exists (it is being written);
  // `set -m` gives the background job the default SIGINT action a terminal's job has.
  for (const char* signal_name : {"TERM", "INT"}) {
    INFO(signal_name);
    Scratch s;
    const std::string dir = s.dir.string();
    const std::string script_path = s.at("stop.sh");
    {
      std::ofstream script(script_path);
      script << "set -m\n"
             << ROPESIM_BINARY
             << " table rotations --schedule llama2-7b --positions 3000000 --out '" << dir
             << "/big.csv' 2>/dev/null &\n"
             << "pid=$!; i=0\n"
             << "while [ $i -lt 600 ] && ! ls '" << dir << "' | grep -q tmp; do sleep 0.05; "
             << "i=$((i+1)); done\n"
             << "ls '" << dir << "' | grep -c tmp\n"
             << "kill -" << signal_name << " $pid; wait $pid; echo status=$?\n"
             << "rm -f '" << script_path << "'\n";
    }
    const Run r = run_binary("bash", "'" + script_path + "'");
    INFO(r.out << r.err);
    CHECK(r.out.find("1\n") == 0);  // the temporary existed when the signal came
    CHECK(r.out.find(std::string("status=") +
                     (std::string(signal_name) == "TERM" ? "143" : "130")) != std::string::npos);
    CHECK(std::distance(fs::directory_iterator(s.dir), fs::directory_iterator()) == 0);
  }
}

TEST_CASE("an empty output path is refused, not ignored", "[cli][output_paths]") {
  // compile, construct mod and construct offset exited 0 and wrote nothing for -o ''.
  expect_usage_error(run("compile 'P a' --alphabet ab --format fp16 -o ''"), "empty file name");
  expect_usage_error(run("construct mod --m 3 --r 0 --format fp16 -o ''"), "empty file name");
  expect_usage_error(run("construct offset --g 1 --k 1 --C 448 --format fp16 -o ''"),
                     "empty file name");
}

TEST_CASE("model specs from /dev/zero and other endless inputs are refused within the budget",
          "[cli][output_paths][budgets]") {
  // Before: run /dev/zero allocated until a 6-8 GB limit stopped it; classify --dfa /dev/zero
  // held 19.8 GB after 60 s. Now: refused after 64 MiB, one line naming the file. The ulimit
  // (4 GB of address space) makes a regression fail instead of exhausting the machine.
  const std::string limit = memory_limit();
  for (const std::string& command :
       {std::string("run /dev/zero --input ab"), std::string("classify --dfa /dev/zero"),
        std::string("rotations --schedule hf-config:/dev/zero --format fp16 --positions 4")}) {
    INFO(command);
    const Run r = run(command, limit);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find("/dev/zero") != std::string::npos);
    CHECK(r.err.find("longer than 64 MiB") != std::string::npos);
  }
}
