// The ropesim executable as a user meets it: exit codes, one-line errors naming the flag and
// the accepted values, no partial output files, JSON keys, and values derived by hand or from
// the papers (THEORY §1, §3; NUMERIC §4).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct Run {
  int code = -1;
  std::string out, err;
};

Run run(const std::string& arguments) {
  const std::string err_path = std::filesystem::temp_directory_path() / ("ropesim_cli_err_" + std::to_string(::getpid()));
  const std::string command = std::string(ROPESIM_BINARY) + " " + arguments + " 2>" + err_path;
  Run r;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream ss;
  ss << err.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_path);
  return r;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void expect_usage_error(const Run& r, const std::string& must_contain) {
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find(must_contain) != std::string::npos);
  CHECK(r.out.empty());
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace

TEST_CASE("formats --json gives THEORY §1's values", "[cli]") {
  const Run r = run("formats --json");
  REQUIRE(r.code == 0);
  const auto list = nlohmann::json::parse(r.out);
  REQUIRE(list.size() == 7);
  for (const auto& f : list) {
    for (const char* key : {"name", "p", "emin", "emax", "max", "min_positive", "unit_roundoff", "f_large", "n_max"}) {
      CHECK(f.contains(key));
    }
  }
  auto find = [&](const std::string& name) {
    for (const auto& f : list) {
      if (f["name"] == name) return f;
    }
    FAIL("missing " << name);
    return nlohmann::json();
  };
  // THEORY §1: fp16 ≈ 25·ln2 → 17.34375; bf16 ≈ 134·ln2 → 93; N_max(fp16) = 1/2^-24.
  CHECK(find("fp16")["f_large"].get<double>() == 17.34375);
  CHECK(find("fp16")["max"].get<double>() == 65504.0);
  CHECK(find("fp16")["n_max"].get<std::uint64_t>() == 16777216u);
  CHECK(find("bf16")["f_large"].get<double>() == 93.0);
  CHECK(find("fp8e4m3")["max"].get<double>() == 448.0);
  CHECK(find("fp8e4m3")["n_max"].get<std::uint64_t>() == 512u);  // 1 / 2^-9
  // 150·ln2 = 103.9720770839917...; the smallest fp32 at or above it is 103.97208404541016.
  CHECK(find("fp32")["f_large"].get<double>() == 103.97208404541016);
}

TEST_CASE("formats: f_large is null under round-up", "[cli]") {
  const Run r = run("formats --json --formats fp32 --rounding upward");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)[0]["f_large"].is_null());
}

TEST_CASE("bad input: one line, exit 2, naming the flag and accepted values", "[cli]") {
  expect_usage_error(run("formats --formats fp33"), "fp16");
  expect_usage_error(run("formats --rounding sideways"), "--rounding");
  expect_usage_error(run("rotations --schedule single:g=1 --format fp33 --positions 10"), "--format");
  expect_usage_error(run("rotations --schedule single:g=1 --realization r9 --positions 10"), "--realization");
  expect_usage_error(run("rotations --schedule nonsense:x=1 --positions 10"), "--schedule");
  expect_usage_error(run("rotations --schedule single:g=1 --realization r3 --positions 10"), "r3");
  expect_usage_error(run("rotations --schedule single:g=one --positions 10"), "--schedule");
  expect_usage_error(run("rotations --schedule single:g=1 --positions 1"), "--positions");
  expect_usage_error(run("sweep --models llama9"), "llama2-7b");
  expect_usage_error(run("nonexistent-command"), "ropesim");
}

TEST_CASE("bad input leaves no output file", "[cli]") {
  const std::string bad_ext = temp_path("table.xyz");
  expect_usage_error(run("sweep --models phi-2 --positions 16 --out " + bad_ext), ".csv");
  CHECK_FALSE(std::filesystem::exists(bad_ext));
  const std::string csv = temp_path("table.csv");
  expect_usage_error(run("sweep --models phi-2 --realizations r1,r7 --positions 16 --out " + csv), "--realizations");
  CHECK_FALSE(std::filesystem::exists(csv));
}

TEST_CASE("rotations: periodic:m=2,3,12 under r3 has period lcm = 12", "[cli]") {
  // THEORY §3 Prop 2.2 / RoPE-X eq. 7: the table is periodic in each block with period m_d,
  // so the whole map has period lcm(2, 3, 12) = 12 and R^_12 = R^_0 is the first repeat.
  for (const char* format : {"fp16", "bf16", "fp32", "fp64", "fp8e4m3"}) {
    const Run r = run(std::string("rotations --schedule periodic:m=2,3,12 --realization r3 --positions 200 --json --format ") + format);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["periodic"] == true);
    CHECK(j["period"] == 12);
    CHECK(j["first_repeat"] == nlohmann::json::array({0, 12}));
    CHECK(j["distinct"] == 12);
    for (const char* key : {"schedule", "realization", "format", "positions", "distinct", "first_repeat", "periodic",
                            "period", "max_witness", "witnesses"}) {
      CHECK(j.contains(key));
    }
  }
}

TEST_CASE("rotations: single:g=1 under r1 is non-periodic with a witness for every P", "[cli]") {
  const Run r = run("rotations --schedule single:g=1 --realization r1 --format fp32 --positions 4000 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["periodic"] == false);
  CHECK(j["period"].is_null());
  REQUIRE(j["witnesses"].size() == 2000);
  // R^_0 = (1, 0) and R^_P = (round(cos P), round(sin P)): round(sin P) = 0 would need
  // sin P = 0 (fp32 keeps |sin P| ≥ 1e-5 > 0), so i = 0 is the witness for every P. Two
  // positions i ≠ j < 4000 share R^ only if |(i - j) - 2πk| is below ~2^-23; the best
  // approximation of a multiple of 2π below 4000 is 710 - 113·2π ≈ 6e-5, so all N differ.
  for (const auto& w : j["witnesses"]) CHECK(w == 0);
  CHECK(j["distinct"] == 4000);
  CHECK(j["first_repeat"].is_null());
}

TEST_CASE("rotations --position reproduces GPT-NeoX #1003", "[cli]") {
  // NUMERIC §4: head dim 32, base 1e4, fp16 angle table: position 1857, second frequency:
  // exact angle 1857·10^(-1/4) = 1044.27..., fp16 angle 1045, cos off by ≈ 0.78.
  const Run r = run("rotations --schedule conventional:base=10000,dim=32 --realization r2 --format fp16 --position 1857 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  INFO(r.out.substr(0, 2000));
  REQUIRE(j.contains("blocks"));
  const auto& block = j["blocks"][1];
  CHECK(block["exact_angle"].get<double>() == Approx(1044.2670).margin(1e-3));
  bool saw_phi = false;
  for (auto it = block["steps"].begin(); it != block["steps"].end(); ++it) {
    const auto& step = *it;
    if (step.is_object() && step.value("name", "") == "phi") {
      saw_phi = true;
      CHECK(std::stod(step["value"].get<std::string>()) == 1045.0);
    }
  }
  CHECK(saw_phi);
  const double cos_exact = block["exact_cos"].get<double>();
  const double cos_realised = std::stod(block["cos"].get<std::string>());
  CHECK(std::abs(cos_exact - cos_realised) == Approx(0.78).margin(0.02));
}
