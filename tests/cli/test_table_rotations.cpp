// `ropesim table rotations`: the realised (cos, sin) table written to .npz, .npy,
// .csv and .json, read back (the .npz and .npy with numpy, /usr/bin/python3) and compared with
// values derived by hand and with the census of the same window (`ropesim rotations --json`,
// whose counts tests/attention checks independently).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs /usr/bin/python3 on `script` (written to a file); its stdout.
std::string python(const std::string& script) {
  const std::string path = temp_path("table_rotations.py");
  std::ofstream(path) << script;
  const std::string command = "/usr/bin/python3 " + path + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  fs::remove(path);
  INFO(out);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return out;
}

}  // namespace

TEST_CASE("table rotations: CSV values by hand (r1, bf16, single:g=1)") {
  // cos 1 = 0.5403023… = 1.0806046…·2^-1: 1.0806046·128 = 138.32 → 138/256 = 0.5390625;
  // sin 1 = 0.8414709… = 1.6829419…·2^-1 → 215.42 → 215/256 = 0.83984375;
  // cos 2 = -0.4161468… = -1.6645873…·2^-2 → 213.07 → -213/512 = -0.416015625;
  // sin 2 = 0.9092974… = 1.8185948…·2^-1 → 232.78 → 233/256 = 0.91015625.
  const std::string out = temp_path("rot.csv");
  const Run r =
      run("table rotations --schedule single:g=1 --realization r1 --format bf16 "
          "--positions 3 --out " +
          out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  const std::string text = slurp(out);
  CHECK(text.rfind("# ropesim ", 0) == 0);  // provenance first, as every CSV ropesim writes
  CHECK(text.find("\nposition,cos_0,sin_0\n0,1,0\n1,0.5390625,0.83984375\n2,-0.416015625,"
                  "0.91015625\n") != std::string::npos);
  fs::remove(out);
}

TEST_CASE("table rotations: --start gives the rows of the longer table, in JSON too") {
  const std::string whole = temp_path("whole.json"), tail = temp_path("tail.json");
  const std::string common =
      "table rotations --schedule conventional:base=10000,dim=8 "
      "--realization r2 --format fp16 ";
  REQUIRE(run(common + "--positions 40 --out " + whole).code == 0);
  REQUIRE(run(common + "--start 30 --positions 10 --out " + tail).code == 0);
  const auto a = nlohmann::json::parse(slurp(whole)), b = nlohmann::json::parse(slurp(tail));
  CHECK(a["provenance"]["tool"] == "ropesim");
  CHECK(b["start"] == 30);
  CHECK(b["positions"] == 10);
  CHECK(b["blocks"] == 4);
  REQUIRE(a["rows"].size() == 40);
  REQUIRE(b["rows"].size() == 10);
  for (int k = 0; k < 10; ++k) CHECK(b["rows"][k] == a["rows"][30 + k]);
  CHECK(a["rows"][0]["cos"] == nlohmann::json::array({1, 1, 1, 1}));
  fs::remove(whole);
  fs::remove(tail);
}

TEST_CASE("table rotations: rows past the first chunk of 8192 positions") {
  // The file is written in chunks (attention::kRealisedTableChunk = 8192 positions): the rows
  // of positions 8195..8199 of a table from 3 are those of a table starting at 8195.
  const std::string whole = temp_path("chunks.csv"), tail = temp_path("chunks_tail.csv");
  const std::string common =
      "table rotations --schedule conventional:base=10000,dim=4 "
      "--realization r2 --format bf16 ";
  REQUIRE(run(common + "--start 3 --positions 8197 --out " + whole).code == 0);
  REQUIRE(run(common + "--start 8195 --positions 5 --out " + tail).code == 0);
  const auto rows = [](const std::string& text, std::size_t last) {
    std::vector<std::string> lines;
    std::stringstream ss(text);
    for (std::string line; std::getline(ss, line);) lines.push_back(line);
    return std::vector<std::string>(lines.end() - static_cast<std::ptrdiff_t>(last), lines.end());
  };
  const auto a = rows(slurp(whole), 5), b = rows(slurp(tail), 5);
  CHECK(a == b);
  CHECK(b.front().rfind("8195,", 0) == 0);
  fs::remove(whole);
  fs::remove(tail);
}

TEST_CASE("table rotations: .npz and .npy read back with numpy match the census") {
  // The distinct (cos, sin) rows numpy counts in the file are the census' distinct rotations
  // of the same window, and per block its distinct pairs.
  const std::string npz = temp_path("rot.npz"), npy = temp_path("rot.npy");
  const std::string window =
      "--schedule llama2-7b --realization r2 --format bf16 --start 65536 "
      "--positions 4096";
  const Run w1 = run("table rotations " + window + " --out " + npz);
  INFO(w1.err);
  REQUIRE(w1.code == 0);
  REQUIRE(run("table rotations " + window + " --out " + npy).code == 0);
  const Run census = run("rotations " + window + " --json");
  REQUIRE(census.code == 0);
  const auto c = nlohmann::json::parse(census.out);
  const std::string out = python(
      "import json, numpy as np\n"
      "z = np.load('" +
      npz +
      "')\n"
      "cos, sin, pos = z['cos'], z['sin'], z['positions']\n"
      "assert sorted(z.files) == ['cos', 'positions', 'provenance', 'sin'], z.files\n"
      "assert cos.shape == (4096, 64) and sin.shape == (4096, 64), cos.shape\n"
      "assert list(pos[:2]) == [65536, 65537] and pos[-1] == 65536 + 4095\n"
      "prov = json.loads(str(z['provenance'][0]))\n"
      "assert prov['tool'] == 'ropesim' and 'table rotations' in prov['command'], prov\n"
      "a = np.load('" +
      npy +
      "')\n"
      "assert a.shape == (4096, 64, 2) and (a[..., 0] == cos).all() and (a[..., 1] == sin).all()\n"
      "bits = np.concatenate([cos, sin], axis=1).view(np.uint64)\n"
      "per_block = [len(np.unique(np.stack([cos[:, d], sin[:, d]], 1).view(np.uint64), axis=0))"
      " for d in range(64)]\n"
      "print(len(np.unique(bits, axis=0)), ' '.join(map(str, per_block)))\n");
  std::string per_block;
  for (const auto& d : c["distinct_per_block"]) per_block += " " + std::to_string(d.get<int>());
  CHECK(out == std::to_string(c["distinct"].get<int>()) + per_block + "\n");
  CHECK(slurp(npy).find("# ropesim provenance: {") != std::string::npos);
  fs::remove(npz);
  fs::remove(npy);
}

TEST_CASE("table rotations: bad input is one line, exit 2, no file") {
  const std::string out = temp_path("bad.npz");
  fs::remove(out);
  expect_usage_error(run("table rotations --schedule llama2-7b --format bf17 --out " + out),
                     "--format");
  expect_usage_error(
      run("table rotations --schedule llama2-7b --realization r9 --format bf16 --out " + out),
      "--realization");
  expect_usage_error(
      run("table rotations --schedule llama2-7b --format bf16 --out " + temp_path("bad.txt")),
      "accepted: .npz .npy .csv .json");
  expect_usage_error(run("table rotations --schedule llama2-7b --format p=64,e=15 --out " + out),
                     "binary64");
  expect_usage_error(
      run("table rotations --schedule llama2-7b --format bf16 --positions 0 --out " + out),
      "--positions");
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(fs::exists(temp_path("bad.txt")));
}
