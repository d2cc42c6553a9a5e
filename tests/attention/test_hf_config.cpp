// hf-config schedules (docs/HF_CONFIG.md): Hugging Face config.json files written to a temp
// dir, every rope_scaling type against values derived independently: by hand (rational
// angles chosen so that β^(-2k/D) is rational), by python3 fractions + mpmath at 300 bits (YaRN
// correction ranges: small 2.0160002112515442 / 5.0263001678913562, Qwen2.5 23.5959476083381 /
// 39.6508807104171, DeepSeek-V3 10.47224081031803 / 22.51344063687727), and CPython's own
// math.log/math.sqrt for the attention factors (the hex literals below); the framework
// pipeline's inv_freq against native binary32 arithmetic as in test_realisation.cpp.
#include <rapidcheck.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/hf_config.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"
#include "numeric/mpfr_util.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;
using ropesim::numeric::ExactReal;

namespace {

std::string write_config(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("ropesim_hfc_" + std::to_string(::getpid()) + "_" + name + ".json");
  std::ofstream(path) << text;
  return path.string();
}

Schedule hf(const std::string& name, const std::string& text, std::uint64_t seq_len = 0) {
  return hf_config_schedule(write_config(name, text), seq_len);
}

mpq_class rational_of(const Schedule& s, std::size_t k) {
  const auto q = s.blocks.at(k).theta.as_rational();
  REQUIRE(q.has_value());
  return *q;
}

std::string error_of(const std::string& spec) {
  try {
    parse_schedule(spec);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

void require_same_angles(const Schedule& a, const Schedule& b) {
  REQUIRE(a.blocks.size() == b.blocks.size());
  REQUIRE(a.unrotated_pairs == b.unrotated_pairs);
  for (std::size_t k = 0; k < a.blocks.size(); ++k) {
    INFO("k = " << k);
    // the same exact expression (ExactReal cannot decide x − x = 0 for irrational x)
    REQUIRE(a.blocks[k].theta.to_string() == b.blocks[k].theta.to_string());
    REQUIRE(a.blocks[k].theta.to_double() == b.blocks[k].theta.to_double());
  }
}

/// The same exact real: equal expressions (ExactReal cannot decide x − x = 0 for an
/// irrational x, so the hand-derived c·β^e is compared by its exact form and its value).
bool same(const ExactReal& a, const ExactReal& b) {
  return a.to_string() == b.to_string() && a.to_double() == b.to_double();
}

float pow_f(float a, float b) {
  ropesim::numeric::Mpfr x(300), y(300), r(300);
  mpfr_set_flt(x, a, MPFR_RNDN);
  mpfr_set_flt(y, b, MPFR_RNDN);
  mpfr_pow(r, x, y, MPFR_RNDN);
  return mpfr_get_flt(r, MPFR_RNDN);
}

const Value* step(const BlockReport& b, const std::string& name) {
  for (const auto& [n, v] : b.steps) {
    if (n == name) return &v;
  }
  return nullptr;
}

const char* kYarnSmall = R"({"head_dim": 16, "rope_theta": 10000, "max_position_embeddings": 8192,
  "rope_scaling": {"rope_type": "yarn", "factor": 8, "original_max_position_embeddings": 2048}})";

}  // namespace

TEST_CASE("hf-config linear: θ_k / factor, hidden_size / heads, default rope_theta",
          "[hf-config]") {
  // D = 32/4 = 8, β = 10000 (absent): θ_k = 10^(-k) exactly; /2.5 by hand.
  const Schedule s =
      hf("linear", R"({"hidden_size": 32, "num_attention_heads": 4, "vocab_size": 32000,
    "architectures": ["LlamaForCausalLM"], "max_position_embeddings": 2048,
    "rope_scaling": {"type": "linear", "factor": 2.5}})");
  REQUIRE(s.kind == "hf-config");
  REQUIRE(s.blocks.size() == 4);
  REQUIRE(rational_of(s, 0) == mpq_class(2, 5));
  REQUIRE(rational_of(s, 1) == mpq_class(1, 25));
  REQUIRE(rational_of(s, 2) == mpq_class(1, 250));
  REQUIRE(rational_of(s, 3) == mpq_class(1, 2500));
  REQUIRE(s.rope_scaling->type == "linear");
  REQUIRE_FALSE(s.attention_scaling.has_value());
  // transformers v5 spelling: rope_parameters with rope_theta inside
  const Schedule v5 = hf("linear_v5", R"({"head_dim": 8, "rope_parameters":
    {"rope_type": "linear", "factor": 2.5, "rope_theta": 10000}})");
  require_same_angles(s, v5);
}

TEST_CASE("hf-config dynamic: base·(f·L/L0 − (f − 1))^(D/(D−2)) at seq_len", "[hf-config]") {
  // D = 4, β = 10^4, f = 2, L0 = 2048. L = 4096: x = 3, β' = 10^4·3^2 = 90000, θ_1 = 1/300.
  const std::string text = R"({"head_dim": 4, "rope_theta": 10000, "max_position_embeddings": 2048,
    "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})";
  const Schedule at_init = hf("dynamic", text);
  REQUIRE(rational_of(at_init, 1) == mpq_class(1, 100));  // default L = L0: unchanged
  REQUIRE(at_init.rope_scaling->seq_len == 2048);
  REQUIRE(rational_of(hf("dynamic", text, 1000), 1) == mpq_class(1, 100));  // max(L, L0)
  const Schedule longer = hf("dynamic", text, 4096);
  REQUIRE(rational_of(longer, 0) == 1);
  REQUIRE(rational_of(longer, 1) == mpq_class(1, 300));
  REQUIRE(parse_schedule("hf-config[seq_len=4096]:" + write_config("dynamic", text))
              .blocks[1]
              .theta.as_rational() == mpq_class(1, 300));
  // pipelines refuse the recomputed base
  REQUIRE_THROWS_WITH(query_position(longer, parse_realisation("hf", Format::bf16()), 3),
                      Catch::Contains("dynamic rope scaling beyond max_position_embeddings"));
}

TEST_CASE("hf-config yarn: correction range, ramp and θ·(ramp/f + 1 − ramp)", "[hf-config]") {
  // D = 16, β = 10^4, L = 2048: c(32) = 2.016…, c(1) = 5.026… → [2, 6]; ramp_k = (k−2)/4
  // clamped; multipliers 1,1,1, 25/32, 9/16, 11/32, 1/8, 1/8 (python fractions).
  const Schedule s = hf("yarn", kYarnSmall);
  REQUIRE(s.rope_scaling->yarn_low == 2);
  REQUIRE(s.rope_scaling->yarn_high == 6);
  REQUIRE(rational_of(s, 0) == 1);
  REQUIRE(rational_of(s, 2) == mpq_class(1, 10));    // θ_2 = 10^4^(-1/4) · 1
  REQUIRE(rational_of(s, 4) == mpq_class(9, 1600));  // θ_4 = 1/100 · 9/16
  REQUIRE(rational_of(s, 6) == mpq_class(1, 8000));  // θ_6 = 1/1000 · 1/8
  REQUIRE(same(s.blocks[3].theta, ExactReal::power(10000, mpq_class(-3, 8), mpq_class(25, 32))));
  REQUIRE(same(s.blocks[5].theta, ExactReal::power(10000, mpq_class(-5, 8), mpq_class(11, 32))));
  REQUIRE(same(s.blocks[7].theta, ExactReal::power(10000, mpq_class(-7, 8), mpq_class(1, 8))));
  // attention factor: CPython 0.1*1*math.log(8)+1.0
  REQUIRE(s.attention_scaling == mpq_class(0x1.353bd3fd8bbe4p+0));
  REQUIRE(s.attention_scaling_text == "0.1*1*ln(8)+1");
  // mscale / mscale_all_dim: (0.1*0.707*log 8 + 1)/(0.1*1*log 8 + 1) in CPython
  const Schedule m = hf("yarn_mscale", R"({"head_dim": 16, "max_position_embeddings": 2048,
    "rope_scaling": {"type": "yarn", "factor": 8.0, "mscale": 0.707, "mscale_all_dim": 1}})");
  REQUIRE(m.attention_scaling == mpq_class(0x1.e62cd80f78c7ep-1));
  require_same_angles(s, m);  // same L (max_position_embeddings), same range
  // presets: Qwen2.5 long-context YaRN and DeepSeek-V3 (ranges from mpmath, see the top)
  const Schedule q = parse_schedule("qwen2.5-7b-yarn");
  REQUIRE(q.rope_scaling->yarn_low == 23);
  REQUIRE(q.rope_scaling->yarn_high == 40);
  REQUIRE(q.attention_scaling == mpq_class(0x1.237d37fe5d298p+0));  // 0.1*math.log(4.0)+1.0
  const Schedule d = parse_schedule("deepseek-v3");
  REQUIRE(d.rope_scaling->yarn_low == 10);
  REQUIRE(d.rope_scaling->yarn_high == 23);
  REQUIRE(d.attention_scaling == 1);  // mscale = mscale_all_dim
  // θ_0 (k < low) is extrapolated, θ_63 (k ≥ high) interpolated: 10^6^(-126/128)/4
  REQUIRE(rational_of(q, 0) == 1);
  REQUIRE(same(q.blocks[63].theta, ExactReal::power(1000000, mpq_class(-63, 64), mpq_class(1, 4))));
  REQUIRE(yarn_correction_range(32, 1, 16, 10000, 2048) ==
          std::pair<std::int64_t, std::int64_t>{2, 6});
}

TEST_CASE("hf-config longrope: short/long factors by seq_len, attention factor", "[hf-config]") {
  // D = 4: θ = 1, 1/100. short [1, 2] → 1, 1/200; long [4, 8] → 1/4, 1/800.
  const std::string text =
      R"({"head_dim": 4, "rope_theta": 10000, "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096,
    "rope_scaling": {"type": "longrope", "short_factor": [1.0, 2.0], "long_factor": [4, 8]}})";
  const Schedule s = hf("longrope", text);
  REQUIRE(rational_of(s, 0) == 1);
  REQUIRE(rational_of(s, 1) == mpq_class(1, 200));
  REQUIRE_FALSE(s.rope_scaling->long_factors);
  REQUIRE(rational_of(hf("longrope", text, 4096), 1) == mpq_class(1, 200));
  const Schedule l = hf("longrope", text, 4097);
  REQUIRE(rational_of(l, 0) == mpq_class(1, 4));
  REQUIRE(rational_of(l, 1) == mpq_class(1, 800));
  // factor = 131072/4096 = 32: CPython math.sqrt(1 + math.log(32.0)/math.log(4096))
  REQUIRE(s.attention_scaling == mpq_class(0x1.30b3713738289p+0));
  REQUIRE(s.attention_scaling_text == "sqrt(1+ln(32)/ln(4096))");
}

TEST_CASE("hf-config of a preset's config gives the preset's exact angles", "[hf-config]") {
  const Schedule l = hf("llama31", R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "rope_theta": 500000.0, "max_position_embeddings": 131072,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "torch_dtype": "bfloat16"})");
  require_same_angles(l, parse_schedule("llama3.1-8b"));
  REQUIRE(l.llama3.has_value());
  require_same_angles(
      hf("phi2", R"({"hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4,
    "rope_theta": 10000.0, "max_position_embeddings": 2048})"),
      parse_schedule("phi-2"));
  require_same_angles(
      hf("neox", R"({"hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25,
    "rotary_emb_base": 10000, "max_position_embeddings": 2048})"),
      parse_schedule("gpt-neox-20b"));
}

TEST_CASE("hf-config mrope: axes per block from mrope_section, nested text_config", "[hf-config]") {
  const Schedule s = hf(
      "qwen2vl", R"({"model_type": "qwen2_vl", "vision_config": {"depth": 32, "hidden_size": 1280},
    "text_config": {"hidden_size": 3584, "num_attention_heads": 28, "rope_theta": 1000000.0,
      "max_position_embeddings": 32768, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}})");
  require_same_angles(s, parse_schedule("conventional:base=1000000,dim=128"));
  require_same_angles(s, parse_schedule("qwen2-vl-7b"));
  // sections in pairs: [0,16) temporal, [16,40) height, [40,64) width (by hand)
  REQUIRE(s.blocks[15].axis == PositionAxis::temporal);
  REQUIRE(s.blocks[16].axis == PositionAxis::height);
  REQUIRE(s.blocks[39].axis == PositionAxis::height);
  REQUIRE(s.blocks[40].axis == PositionAxis::width);
  REQUIRE(s.blocks[63].axis == PositionAxis::width);
  // Qwen3-VL interleaved [24, 20, 20]: k ≡ 1 (mod 3), k < 60 height; k ≡ 2, k < 60 width
  const Schedule i = hf("qwen3vl", R"({"head_dim": 128, "rope_theta": 5000000,
    "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": true}})");
  int counts[3] = {0, 0, 0};
  for (const auto& b : i.blocks) ++counts[static_cast<int>(*b.axis)];
  REQUIRE(counts[0] == 24);
  REQUIRE(counts[1] == 20);
  REQUIRE(counts[2] == 20);
  REQUIRE(i.blocks[58].axis == PositionAxis::height);
  REQUIRE(i.blocks[59].axis == PositionAxis::width);
  REQUIRE(i.blocks[61].axis == PositionAxis::temporal);
}

TEST_CASE("hf-config refusals: one line naming the file and the accepted values", "[hf-config]") {
  struct Case {
    const char* name;
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"bad_type", R"({"head_dim": 8, "rope_scaling": {"type": "ntk-by-parts", "factor": 2}})",
       "unknown rope_scaling type 'ntk-by-parts'; accepted: default, mrope, linear, dynamic, yarn, "
       "longrope, llama3"},
      {"bad_key", R"({"head_dim": 8, "rope_scaling": {"type": "linear", "factor": 2, "fator": 3}})",
       // 'fator' is one insertion from 'factor' (ropesim::did_you_mean)
       "unknown key 'fator' in rope_scaling of type linear (did you mean 'factor'?); accepted: "
       "rope_type, type, factor"},
      {"no_factor", R"({"head_dim": 8, "rope_scaling": {"rope_type": "yarn"}})", "needs 'factor'"},
      {"short_list", R"({"head_dim": 8, "max_position_embeddings": 10,
         "rope_scaling": {"type": "longrope", "short_factor": [1, 2, 3], "long_factor": [1, 2, 3, 4]}})",
       "need rotary_dim/2 = 4 entries each, got 3 and 4"},
      {"mrope_sum",
       R"({"head_dim": 8, "rope_scaling": {"type": "mrope", "mrope_section": [1, 1, 1]}})",
       "must sum to rotary_dim/2 = 4"},
      {"no_dim", R"({"rope_theta": 10000})",
       "needs head_dim, or hidden_size and num_attention_heads"},
      {"malformed", R"({"head_dim": 8,)", "malformed JSON"},
      {"truncate",
       R"({"head_dim": 8, "max_position_embeddings": 64, "rope_scaling": {"type": "yarn", "factor": 2, "truncate": false}})",
       "truncate=false"},
      // 10^400 was echoed as its 401 digits
      {"huge_dim", R"({"head_dim": 1e400})",
       "head_dim must be a non-negative integer below 2^64, got 1e+400"},
      {"fraction_dim", R"({"head_dim": 8.5})", "head_dim must be a non-negative integer, got 17/2"},
  };
  for (const auto& c : cases) {
    const std::string path = write_config(c.name, c.text);
    const std::string e = error_of("hf-config:" + path);
    INFO(c.name << ": " << e);
    REQUIRE(e.find('\n') == std::string::npos);
    REQUIRE(e.find("hf-config '" + path + "'") != std::string::npos);
    REQUIRE(e.find(c.message) != std::string::npos);
  }
  const std::string missing = error_of("hf-config:/nonexistent/config.json");
  REQUIRE(missing ==
          "hf-config '/nonexistent/config.json': cannot open the config.json file (No such file or "
          "directory)");
  REQUIRE(error_of("hf-config[seq_len=x]:" + write_config("dynamic2", "{}")).find("seq_len") !=
          std::string::npos);
  REQUIRE(error_of("hf-config[seq_len=9]:" + write_config("plain", R"({"head_dim": 8})"))
              .find("seq_len applies") != std::string::npos);
}

TEST_CASE("hf pipeline rescales inv_freq as Hugging Face does, in fp32",
          "[hf-config][realisation]") {
  // Native binary32 re-implementation of _compute_yarn_parameters / linear / longrope.
  const auto hf_bf16 = parse_realisation("hf", Format::bf16());
  const Schedule y = hf("yarn", kYarnSmall);
  const auto rep = query_position(y, hf_bf16, 1000);
  for (int k = 0; k < 8; ++k) {
    const float p = pow_f(10000.0f, static_cast<float>(2 * k) / 16.0f);
    const float extrapolation = 1.0f / p;
    const float interpolation = 1.0f / (8.0f * p);
    float ramp = (static_cast<float>(k) - 2.0f) / 4.0f;
    ramp = ramp < 0 ? 0.0f : ramp > 1 ? 1.0f : ramp;
    const float ef = 1.0f - ramp;
    const float inv = interpolation * (1.0f - ef) + extrapolation * ef;
    INFO("k = " << k);
    REQUIRE(step(rep.blocks[k], "inv_freq")->to_double() == inv);
  }
  const Schedule lin = hf(
      "linear_p",
      R"({"head_dim": 16, "rope_theta": 10000, "rope_scaling": {"type": "linear", "factor": 3}})");
  const auto rl = query_position(lin, hf_bf16, 7);
  const Schedule lr =
      hf("longrope_p", R"({"head_dim": 4, "rope_theta": 10000, "max_position_embeddings": 8192,
    "rope_scaling": {"type": "longrope", "short_factor": [1.1, 0.3], "long_factor": [1, 1], "original_max_position_embeddings": 4096}})");
  const auto rr = query_position(lr, hf_bf16, 7);
  for (int k = 0; k < 8; ++k) {
    const float p = pow_f(10000.0f, static_cast<float>(2 * k) / 16.0f);
    REQUIRE(step(rl.blocks[k], "inv_freq")->to_double() == (1.0f / p) / 3.0f);
  }
  const float ext[2] = {static_cast<float>(1.1), static_cast<float>(0.3)};  // Python float → fp32
  for (int k = 0; k < 2; ++k) {
    const float p = pow_f(10000.0f, static_cast<float>(2 * k) / 4.0f);
    REQUIRE(step(rr.blocks[k], "inv_freq")->to_double() == 1.0f / (ext[k] * p));
  }
}

namespace {

/// transformers' find_correction_dim in binary64 with glibc's log (a second implementation).
double correction_dim_double(double n, int dim, double base, double L) {
  return (dim * std::log(L / (n * 2 * 3.141592653589793))) / (2 * std::log(base));
}

}  // namespace

TEST_CASE("yarn correction range and pipeline inv_freq over random configs",
          "[hf-config][property]") {
  // The exact range (MPFR intervals) equals floor/ceil of the binary64 formula unless c(n) is
  // within rounding error of an integer (not met with the fixed seed); the hf pipeline's
  // inv_freq equals the binary32 re-implementation with that range.
  const bool ok = rc::check("yarn range and inv_freq", [] {
    const int D = 2 * *rc::gen::inRange(2, 33);
    const int base = *rc::gen::inRange(2, 10000001);
    const int L = *rc::gen::inRange(1, 1000001);
    const int fast = *rc::gen::inRange(1, 65);
    const int slow = *rc::gen::inRange(1, fast + 1);
    const int factor = *rc::gen::inRange(2, 65);
    const auto [low, high] = yarn_correction_range(fast, slow, D, base, L);
    const double lo_d = std::max(std::floor(correction_dim_double(fast, D, base, L)), 0.0);
    const double hi_d = std::min(std::ceil(correction_dim_double(slow, D, base, L)), D - 1.0);
    RC_ASSERT(static_cast<double>(low) == lo_d);
    RC_ASSERT(static_cast<double>(high) == hi_d);
    HfRopeConfig c;
    c.rope_theta = base;
    c.head_dim = static_cast<std::size_t>(D);
    c.max_position_embeddings = static_cast<std::uint64_t>(L);
    RopeScaling r;
    r.type = "yarn";
    r.factor = factor;
    r.beta_fast = fast;
    r.beta_slow = slow;
    c.rope_scaling = r;
    const Schedule s = config_schedule(c);
    const auto rep = query_position(s, parse_realisation("hf", Format::bf16()), 1);
    const float span = static_cast<float>(lo_d == hi_d ? (hi_d + 0.001) - lo_d : hi_d - lo_d);
    for (int k = 0; k < D / 2; ++k) {
      const float p =
          pow_f(static_cast<float>(base), static_cast<float>(2 * k) / static_cast<float>(D));
      float ramp = (static_cast<float>(k) - static_cast<float>(lo_d)) / span;
      ramp = ramp < 0 ? 0.0f : ramp > 1 ? 1.0f : ramp;
      const float ef = 1.0f - ramp;
      const float inv = (1.0f / (static_cast<float>(factor) * p)) * (1.0f - ef) + (1.0f / p) * ef;
      RC_ASSERT(step(rep.blocks[k], "inv_freq")->to_double() == inv);
    }
  });
  REQUIRE(ok);
}

TEST_CASE("older rope type spellings: su and phi3's yarn are longrope (configuration_phi3.py)",
          "[hf-config]") {
  // transformers Phi3Config._rope_scaling_adjustment: type "su" or "yarn" → "longrope".
  // rotary_dim 4: θ_0 = 1, θ_1 = 10000^(-1/2) = 1/100; short_factor [1, 4] gives θ'_1 = 1/400.
  const std::string keys = R"("head_dim": 4, "rope_theta": 10000, "max_position_embeddings": 32,
      "original_max_position_embeddings": 8, "rope_scaling": {"short_factor": [1, 4], "long_factor": [2, 8], )";
  const Schedule su = hf("su", "{" + keys + R"("type": "su"}})");
  REQUIRE(su.rope_scaling.has_value());
  CHECK(su.rope_scaling->type == "longrope");
  CHECK(su.rope_scaling->type_spelling == "su");
  CHECK(rational_of(su, 0) == 1);
  CHECK(rational_of(su, 1) == mpq_class(1, 400));
  const Schedule phi3 =
      hf("phi3_yarn", R"({"model_type": "phi3", )" + keys + R"("type": "yarn"}})");
  CHECK(phi3.rope_scaling->type == "longrope");
  CHECK(phi3.rope_scaling->type_spelling == "yarn");
  CHECK(rational_of(phi3, 1) == mpq_class(1, 400));
  // both keys, both spellings of one type: accepted
  const Schedule both = hf("su_both", "{" + keys + R"("type": "su", "rope_type": "longrope"}})");
  CHECK(both.rope_scaling->type == "longrope");
  // "yarn" outside phi3 is YaRN: short_factor is not a YaRN key, and the message says why
  const std::string e =
      error_of("hf-config:" + write_config("yarn_not_phi3", "{" + keys + R"("type": "yarn"}})"));
  CHECK(e.find("unknown key 'long_factor' in rope_scaling of type yarn") != std::string::npos);
  CHECK(e.find("model_type is phi3") != std::string::npos);
}

TEST_CASE("longrope_factor_warning: short_factor past original_max_position_embeddings",
          "[hf-config]") {
  const std::string text = R"({"head_dim": 4, "rope_theta": 10000, "max_position_embeddings": 32,
      "original_max_position_embeddings": 8,
      "rope_scaling": {"type": "longrope", "short_factor": [1, 4], "long_factor": [2, 8]}})";
  const Schedule s = hf("warn", text);
  // transformers: long_factor iff max(position_ids) + 1 > 8, i.e. a last position ≥ 8
  CHECK_FALSE(longrope_factor_warning(s, 7).has_value());
  const auto w = longrope_factor_warning(s, 8);
  REQUIRE(w.has_value());
  CHECK(w->find("ropesim uses short_factor (seq_len unset)") != std::string::npos);
  CHECK(w->find("transformers uses long_factor for a sequence of 9 tokens") != std::string::npos);
  CHECK(w->find("hf-config[seq_len=9]:") != std::string::npos);
  // seq_len = 9 > 8: the schedule holds long_factor (θ'_1 = 1/800) and is for that long a
  // sequence: nothing to warn about at any position.
  const Schedule l = hf("warn_long", text, 9);
  CHECK(rational_of(l, 1) == mpq_class(1, 800));
  CHECK_FALSE(longrope_factor_warning(l, 1000).has_value());
  // not longrope: never
  CHECK_FALSE(longrope_factor_warning(parse_schedule("llama2-7b"), 1000000).has_value());
}
