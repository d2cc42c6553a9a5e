// Real PyTorch as the oracle: tests/torch/hf_tables.py builds the Hugging Face Llama
// RoPE tables in PyTorch 1.13.1 (Debian python3-torch, one thread) at CPU capability avx2 and
// default, for llama2-7b, llama3-8b and llama3.1-8b over positions 0..16383, and this test
// requires, through the library (realise_block):
//   - hf-torch-cpu bit-identical to torch at avx2 in fp32, bf16 and fp16 (every cos and sin);
//   - the hf step list with power/cos_sin :glibc bit-identical to torch at default (scalar
//     path, glibc cosf/sinf/powf);
//   - the correctly rounded hf different from torch (avx2) only where torch's fp32 value is
//     not the correctly rounded cos/sin of torch's own fp32 angle, checked with MPFR here.
// Where torch or the capability is missing, hf_tables.py writes a .skip file with the reason
// and this executable prints it and exits 77 (ctest SKIP_RETURN_CODE): skipped, not passed.
#define CATCH_CONFIG_RUNNER
#include <mpfr.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "attention/realisations/realisation.hpp"
#include "numeric/libm.hpp"

using namespace ropesim::attention;

namespace {

const std::string kDir = ROPESIM_TORCH_TABLES;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

/// One hf_<capability>.bin: its JSON header and the bytes after it.
struct Tables {
  nlohmann::json header;
  std::string data;
  template <class T>
  T at(const nlohmann::json& preset, const std::string& array, std::size_t index) const {
    const auto& a = preset["arrays"][array];
    T v;
    std::memcpy(&v, data.data() + a["offset"].get<std::size_t>() + index * sizeof(T), sizeof(T));
    return v;
  }
};

Tables load(const std::string& capability) {
  const std::string text = read_text(kDir + "/hf_" + capability + ".bin");
  REQUIRE_FALSE(text.empty());
  const auto eol = text.find('\n');
  Tables t;
  t.header = nlohmann::json::parse(text.substr(0, eol));
  t.data = text.substr(eol + 1);
  return t;
}

/// bf16 / fp16 bit patterns as doubles (IEEE 754 binary16 decoded by hand; bf16 is the top
/// half of a binary32).
double bf16_value(std::uint16_t bits) {
  const std::uint32_t w = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}
double fp16_value(std::uint16_t bits) {
  const int sign = bits >> 15, exponent = (bits >> 10) & 31, fraction = bits & 1023;
  double magnitude =
      exponent == 0 ? std::ldexp(fraction, -24) : std::ldexp(1024 + fraction, exponent - 25);
  if (exponent == 31) magnitude = fraction ? NAN : INFINITY;
  return sign ? -magnitude : magnitude;
}

bool same(double a, double b) { return a == b && std::signbit(a) == std::signbit(b); }

/// cos or sin of the binary32 angle, correctly rounded to binary32 by MPFR.
float correctly_rounded(float angle, bool cos) {
  mpfr_t x, y;
  mpfr_init2(x, 24);
  mpfr_init2(y, 24);
  mpfr_set_flt(x, angle, MPFR_RNDN);
  if (cos)
    mpfr_cos(y, x, MPFR_RNDN);
  else
    mpfr_sin(y, x, MPFR_RNDN);
  const float r = mpfr_get_flt(y, MPFR_RNDN);
  mpfr_clear(x);
  mpfr_clear(y);
  return r;
}

const char* kFormats[] = {"fp32", "bf16", "fp16"};

Format format_named(const std::string& name) {
  return name == "fp32" ? Format::fp32() : (name == "bf16" ? Format::bf16() : Format::fp16());
}

/// torch's entry (position i, block d) of `what` ("cos"/"sin") in `format`, as a double.
double torch_value(const Tables& t, const nlohmann::json& p, const std::string& what,
                   const std::string& format, std::size_t index) {
  if (format == "fp32") return t.at<float>(p, what + "_fp32", index);
  const auto bits = t.at<std::uint16_t>(p, what + "_" + format, index);
  return format == "bf16" ? bf16_value(bits) : fp16_value(bits);
}

struct Count {
  std::size_t identical = 0, total = 0;
  double percent() const { return 100.0 * static_cast<double>(identical) / total; }
};

/// Compares `spec` with torch's tables of `t` for every preset and format: returns
/// counts[preset][format]. When `hf_check` is set, every difference must be where torch's fp32
/// value is not correctly rounded (MPFR), and `spec`'s fp32 value must be the correctly
/// rounded one there; except in the scaled base-10000 case (an entry with a "schedule"), where
/// the correctly rounded division gives other inv_freq bits than torch's and is only counted.
std::vector<std::vector<Count>> compare(const Tables& t, const std::string& spec, bool hf_check) {
  const std::size_t positions = t.header["positions"];
  std::vector<std::vector<Count>> counts;
  for (const auto& p : t.header["presets"]) {
    // a preset by its name, or the schedule hf_tables.py names (an hf-config file it wrote)
    const Schedule s = parse_schedule(p.value("schedule", p["name"].get<std::string>()));
    const std::size_t nb = p["blocks"];
    REQUIRE(s.blocks.size() == nb);
    counts.emplace_back(3);
    for (int f = 0; f < 3; ++f) {
      const Realisation r = parse_realisation(spec, format_named(kFormats[f]));
      for (std::size_t d = 0; d < nb; ++d) {
        const auto pairs = realise_block(s, r, d, 0, positions);
        for (std::size_t i = 0; i < positions; ++i) {
          const std::size_t index = i * nb + d;
          for (const bool cos : {true, false}) {
            const std::string what = cos ? "cos" : "sin";
            const double mine = (cos ? pairs[i].cos : pairs[i].sin).to_double();
            const double torch = torch_value(t, p, what, kFormats[f], index);
            ++counts.back()[f].total;
            if (same(mine, torch)) {
              ++counts.back()[f].identical;
              continue;
            }
            if (hf_check && p.contains("schedule")) continue;
            if (!hf_check) {
              INFO(p["name"] << " " << kFormats[f] << " " << spec << " position " << i << " block "
                             << d << " " << what << ": ropesim " << mine << ", torch " << torch);
              REQUIRE(same(mine, torch));
            }
            const float angle = t.at<float>(p, "angle", index);
            const float torch32 = t.at<float>(p, what + "_fp32", index);
            const float cr = correctly_rounded(angle, cos);
            INFO(p["name"] << " " << kFormats[f] << " position " << i << " block " << d << " "
                           << what << ": torch fp32 " << torch32 << ", MPFR " << cr);
            REQUIRE(torch32 != cr);  // torch's fp32 value is not correctly rounded here
            if (f == 0) REQUIRE(mine == static_cast<double>(cr));
          }
        }
      }
    }
  }
  return counts;
}

void report(const Tables& t, const std::string& spec,
            const std::vector<std::vector<Count>>& counts) {
  std::size_t k = 0;
  for (const auto& p : t.header["presets"]) {
    std::ostringstream line;
    line << spec << " vs torch " << t.header["torch"].get<std::string>() << " ("
         << t.header["capability"].get<std::string>() << "), " << p["name"].get<std::string>()
         << ", cos+sin identical:";
    for (int f = 0; f < 3; ++f) {
      line << " " << kFormats[f] << " " << counts[k][f].identical << "/" << counts[k][f].total
           << " (" << counts[k][f].percent() << " %)";
    }
    WARN(line.str());
    ++k;
  }
}

}  // namespace

TEST_CASE("hf-torch-cpu is PyTorch's AVX2 table bit for bit", "[torch]") {
  if (!exists(kDir + "/hf_avx2.bin")) return;         // .skip: reported by main
  REQUIRE(ropesim::numeric::sleef_avx2_available());  // torch ran AVX2 here, so SLEEF can
  const Tables t = load("avx2");
  const auto counts = compare(t, "hf-torch-cpu", false);
  report(t, "hf-torch-cpu", counts);
}

TEST_CASE("glibc steps are PyTorch's scalar path (ATEN_CPU_CAPABILITY=default) bit for bit",
          "[torch]") {
  if (!exists(kDir + "/hf_default.bin")) return;
  const Tables t = load("default");
  const std::string spec =
      "pipeline:exponent=fp32;power=fp32:glibc;inv_freq=fp32;position=fp32;angle=fp32;"
      "cos_sin=fp32:glibc;attention_scaling=fp32;scalar_division=reciprocal;table=A;rotation=A;"
      "output=A;recipe=product;"
      "arithmetic=hf_eager;layout=rotate_half";
  const auto counts = compare(t, spec, false);
  report(t, "hf-cpu with :glibc", counts);
  WARN("glibc " << ropesim::numeric::glibc_version());
}

/// GPT-NeoX #1003's fp16 table (hf_tables.py "neox") against `spec` at fp16: the number of
/// (cos, sin) values that differ (NaN equals NaN: the positions ≥ 65520 round to inf in fp16).
std::size_t neox_differences(const Tables& t, const std::string& spec) {
  const auto& p = t.header["neox"];
  const Schedule s = parse_schedule(p["schedule"].get<std::string>());
  const Realisation r = parse_realisation(spec, Format::fp16());
  const std::size_t nb = p["blocks"], positions = p["positions"];
  std::size_t differences = 0;
  for (std::size_t d = 0; d < nb; ++d) {
    const auto pairs = realise_block(s, r, d, 0, positions);
    for (std::size_t i = 0; i < positions; ++i) {
      for (const bool cos : {true, false}) {
        const double mine = (cos ? pairs[i].cos : pairs[i].sin).to_double();
        const double torch =
            fp16_value(t.at<std::uint16_t>(p, cos ? "cos_fp16" : "sin_fp16", i * nb + d));
        if (!same(mine, torch) && !(std::isnan(mine) && std::isnan(torch))) ++differences;
      }
    }
  }
  return differences;
}

TEST_CASE("GPT-NeoX #1003's bit-faithful spelling is torch's fp16 table", "[torch]") {
  const std::string spelling =
      "pipeline:inv_freq=fp32>fp16;position=fp16;angle=fp16;cos_sin=fp32>fp16";
  if (exists(kDir + "/hf_avx2.bin")) {
    const Tables t = load("avx2");
    // 65536 positions x 16 blocks x (cos, sin): the correctly rounded fp32 cos/sin rounded to
    // fp16 equals torch's SLEEF fp32 rounded to fp16 everywhere here, and so does :sleef-u10;
    // r2 at fp16 (one rounding of the exact cos) differs at fp16 ties
    CHECK(neox_differences(t, spelling) == 0);
    CHECK(neox_differences(t, spelling + ":sleef-u10") == 0);
    const std::size_t r2 = neox_differences(t, "r2");
    WARN("GPT-NeoX #1003 table, 2097152 values: r2 at fp16 differs from torch in " << r2);
    CHECK(r2 > 0);
  }
  if (exists(kDir + "/hf_default.bin")) {
    CHECK(neox_differences(load("default"), spelling + ":glibc") == 0);
  }
}

TEST_CASE("the correctly rounded hf differs from torch only where torch is not correctly rounded",
          "[torch]") {
  if (!exists(kDir + "/hf_avx2.bin")) return;
  const Tables t = load("avx2");
  const auto counts = compare(t, "hf", true);
  report(t, "hf", counts);
  // and it does differ (SLEEF u10 is not correctly rounded): a test that can fail
  REQUIRE(counts[0][0].identical < counts[0][0].total);
  // llama3 scaling on base 10000: the correctly rounded division 2π/inv_freq (hf) is not
  // torch's reciprocal-then-product, so hf differs from torch there beyond libm (issue 39
  // measured 97.3 % of fp32 values equal), which hf-torch-cpu's scalar_division=reciprocal
  // models (the first test case requires it bit for bit)
  std::size_t k = 0;
  for (const auto& p : t.header["presets"]) {
    if (p.contains("schedule")) {
      INFO(p["name"]);
      CHECK(counts[k][0].percent() < counts[0][0].percent() - 1);
    }
    ++k;
  }
}

int main(int argc, char* argv[]) {
  std::string skipped;
  for (const char* capability : {"avx2", "default"}) {
    const std::string path = kDir + "/hf_" + capability + ".skip";
    if (exists(path))
      skipped += std::string(capability) + ": " + read_text(path);
    else if (!exists(kDir + "/hf_" + capability + ".bin"))
      skipped += std::string(capability) + ": no table in " + kDir +
                 " (ctest runs tests/torch/hf_tables.py first, fixture torch)\n";
  }
  const int status = Catch::Session().run(argc, argv);
  if (status != 0) return status;
  if (!skipped.empty()) {
    std::cout << "SKIPPED (in part or whole):\n" << skipped;
    return 77;
  }
  return 0;
}
