// Mixed-format attention heads (attention/transformer/head_formats.hpp, mixed_attention.hpp) and
// the model spec's heads[k].formats block: hand-derived values, the exact-fraction second
// implementation (tests/derivations/accumulator_values.py) for 4096 terms in an 11-bit accumulator,
// the old path as a second implementation of an empty block, the step reports of pytorch #60939,
// and one-line refusals naming the JSON path.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "attention/transformer/mixed_attention.hpp"
#include "attention/transformer/model_spec.hpp"
#include "attention/transformer/random_model.hpp"
#include "attention/transformer/run.hpp"
#include "core/error.hpp"

using namespace ropesim::attention;
using nlohmann::json;
using ropesim::InvalidArgument;
using ropesim::numeric::Format;
using ropesim::numeric::Value;

namespace {

/// d_model 1, every token embeds as [1]; one head with q = query_bias, k = key·x, v = value·x
/// and output 1; the classifier reads the residual. `formats` is the head's formats block (or
/// "" for none); `extra` more head fields.
std::string spec(const std::string& format, const std::string& formats,
                 const std::string& head_fields, const std::string& architecture = "{}") {
  return R"({"ropesim_model": 1, "policy": {"format": ")" + format + R"("}, "architecture": )" +
         architecture +
         R"(, "d_model": 1, "alphabet": ["a"],
    "embedding": {"bos": [1], "eos": [1], "symbols": {"a": [1]}},
    "layers": [{"heads": [{"head_dim": 1, "value_dim": 1, "output": [[1]], )" +
         head_fields + (formats.empty() ? "" : R"(, "formats": )" + formats) + R"(}]}],
    "classifier": {"weights": [1]}})";
}

RunResult run_eos(const Model& m, const std::string& word) {
  RunOptions o;
  o.trace_all = true;
  return run(m, word, o);
}

const HeadTrace& head_at(const RunResult& r, std::uint64_t position) {
  for (const auto& pt : r.layers.at(0)) {
    if (pt.position == position) return pt.heads.at(0);
  }
  FAIL("position not traced");
  return r.layers.at(0).at(0).heads.at(0);
}

double d(const Value& v) { return v.to_double(); }

std::string refusal(const std::string& text) {
  try {
    parse_model(text);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("4096 terms in an 11-bit accumulator versus promotion into fp32 every 128",
          "[attention][mixed]") {
  // Every expected bit pattern below is printed by tests/derivations/accumulator_values.py
  // (accumulation_case: exact fractions for the accumulators, mpmath exp at 200 bits, no ropesim
  // code).
  AccumulationCase c;
  c.accumulators = {ropesim::numeric::parse_accumulator_model("p=11,e=8"),
                    ropesim::numeric::parse_accumulator_model("p=11,e=8/128>fp32"),
                    ropesim::numeric::parse_accumulator_model("fp32")};
  const AccumulationResult r = run_accumulation_case(c);
  REQUIRE(r.rows.size() == 3);
  CHECK(r.exact_dots[0].get_d() == Approx(199.10161978006363).epsilon(1e-15));
  const std::vector<std::vector<double>> scores = {
      {0x1.68cp+1, 0x1.e14p-6, 0x1.a3p-6, -0x1.2ecp-4, 0x1.89p-5, -0x1.278p-5, -0x1.0c4p-5,
       0x1.798p-6},
      {0x1.8e54p+1, 0x1.e77dp-6, 0x1.a0b8p-6, -0x1.3008p-4, 0x1.8c92p-5, -0x1.2b0b8p-5,
       -0x1.0abe4p-5, 0x1.785cp-6},
      {0x1.8e33cp+1, 0x1.e774a4p-6, 0x1.a1a5fp-6, -0x1.305632p-4, 0x1.8c506p-5, -0x1.2b1108p-5,
       -0x1.0bcbe4p-5, 0x1.79c898p-6}};
  const std::vector<std::vector<double>> weights = {
      {0x1.6940f8p-1, 0x1.6360e2p-5, 0x1.6207ep-5, 0x1.40812ap-5, 0x1.6a0ceep-5, 0x1.4cdd8cp-5,
       0x1.4df97ap-5, 0x1.61229ap-5},
      {0x1.8680cap-1, 0x1.1e8772p-5, 0x1.1d4b4ap-5, 0x1.023b7ap-5, 0x1.23ecb4p-5, 0x1.0c28dp-5,
       0x1.0d380ap-5, 0x1.1c979ap-5},
      {0x1.8669b8p-1, 0x1.1ebe96p-5, 0x1.1d867cp-5, 0x1.02685ep-5, 0x1.2422bp-5, 0x1.0c5c5ep-5,
       0x1.0d631ap-5, 0x1.1cd4dcp-5}};
  for (std::size_t row = 0; row < 3; ++row) {
    INFO(to_string(r.rows[row].accumulator));
    REQUIRE(r.rows[row].weights.size() == 8);
    for (std::size_t j = 0; j < 8; ++j) {
      CHECK(r.rows[row].scores[j].same_bits(Value::from_double_exact(scores[row][j])));
      CHECK(r.rows[row].weights[j].same_bits(Value::from_double_exact(weights[row][j])));
    }
  }
  // The needle's weight: 0.705573797 (11 bits) against 0.762701333 (promoted) and 0.76252532
  // (fp32): the narrow accumulator stagnates on the needle's positive sum (score 2.818 instead of
  // 3.111 = 199.10/64).
  CHECK(d(r.rows[0].weights[0]) == Approx(0.705573797).epsilon(1e-8));
  CHECK(d(r.rows[1].weights[0]) == Approx(0.762701333).epsilon(1e-8));
}

TEST_CASE("an empty formats block computes what the head without it computes",
          "[attention][mixed]") {
  // Second implementation: the old path (head_step under the sequential policy). Every example
  // model's heads get "formats": {} and must give the same trace, bit for bit.
  for (const char* file : {"mod_m2_r1_fp16.json", "offset_g1_k2_fp16.json"}) {
    INFO(file);
    const Model plain = load_model(std::string(ROPESIM_SOURCE_DIR) + "/examples/" + file);
    REQUIRE(plain.policy.summation == ropesim::numeric::Summation::sequential);
    Model mixed = plain;
    std::size_t heads = 0;
    for (auto& layer : mixed.layers) {
      for (auto& head : layer.heads) {
        head.formats = HeadFormats{};
        ++heads;
      }
    }
    REQUIRE(heads > 0);
    for (const char* word : {"", "a", "ab", "abba", "bbbab"}) {
      RunOptions o;
      o.trace_all = true;
      const json a = to_json(run(plain, word, o), word);
      json b = to_json(run(mixed, word, o), word);
      CHECK_FALSE(a.contains("first_overflow"));  // the old output has no new keys
      REQUIRE(b.contains("first_overflow"));
      b.erase("first_overflow");
      b.erase("first_invalid");
      CHECK(a.dump() == b.dump());
    }
  }
}

TEST_CASE("an empty formats block equals the old path on random models", "[attention][mixed]") {
  // Random fp16/bf16 models (attention/transformer/random_model.hpp, fixed seeds) whose weights k/4
  // make soft weights and inexact sums: the stable and no-max-subtraction softmax, strict and
  // non-strict masking, LayerNorms; every head gets "formats": {}.
  std::size_t compared = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    RandomModelOptions o;
    o.format = seed % 2 ? Format::fp16() : Format::bf16();
    o.layers = 1 + seed % 2;
    o.heads = 1 + seed % 3;
    o.rotary = seed % 3 == 0 ? RandomRotary::conventional : RandomRotary::periodic;
    o.options.masking = seed % 4 < 2 ? Masking::strict : Masking::non_strict;
    o.options.softmax = seed % 5 == 0 ? SoftmaxVariant::no_max_subtraction : SoftmaxVariant::stable;
    if (seed % 6 == 1) o.norms = NormPlacement::post;
    const Model plain = random_model(o, seed);
    Model mixed = plain;
    for (auto& layer : mixed.layers) {
      for (auto& head : layer.heads) head.formats = HeadFormats{};
    }
    for (const char* word : {"ab", "abbab", "bbbbbbba"}) {
      RunOptions ro;
      ro.trace_all = true;
      const json a = to_json(run(plain, word, ro), word);
      json b = to_json(run(mixed, word, ro), word);
      b.erase("first_overflow");
      b.erase("first_invalid");
      INFO("seed " << seed << " word " << word);
      CHECK(a.dump() == b.dump());
      ++compared;
    }
  }
  CHECK(compared == 72);
}

TEST_CASE("absent formats: the spec and the run output keep their old shape",
          "[attention][mixed]") {
  const Model m = load_model(std::string(ROPESIM_SOURCE_DIR) + "/examples/offset_g1_k2_fp16.json");
  const json saved = model_to_json(m);
  CHECK(saved.dump().find("formats") == std::string::npos);
  const json run_json = to_json(run(m, "ab"), "ab");
  CHECK_FALSE(run_json.contains("first_overflow"));
  CHECK_FALSE(run_json.contains("first_invalid"));
}

TEST_CASE("pytorch #60939: q·k overflows fp16, the softmax subtraction is invalid",
          "[attention][mixed]") {
  // q = 256 (query_bias), k = 256 (key weight): q·k = 65536 ≥ 65520 = max + ulp/2 overflows
  // fp16 to +inf; stable softmax M = inf, inf − inf = NaN (invalid), weights NaN.
  const std::string head = R"("query_bias": [256], "key": [[256]], "value": [[1]])";
  const Model m = parse_model(spec("fp16", "{}", head));
  const RunResult r = run_eos(m, "a");
  REQUIRE(r.step_flags);
  REQUIRE(r.first_overflow);
  CHECK(r.first_overflow->step == "q·k accumulation");
  CHECK(r.first_overflow->format == "fp16");
  CHECK(r.first_overflow->position == 1);  // BOS (0) sees no key under strict masking
  REQUIRE(r.first_invalid);
  CHECK(r.first_invalid->step == "softmax subtraction");
  CHECK(r.first_invalid->where == "layer 0, position 1, head 0");
  CHECK(head_at(r, 1).scores.at(0).is_inf());
  CHECK(head_at(r, 1).weights.at(0).is_nan());
  // The fix frameworks use: scores and softmax in fp32 (the q, k stores stay fp16): 65536 in
  // fp32, one key, weight exactly 1, output 1; nothing overflows.
  const Model fixed = parse_model(spec("fp16", R"({"scores": "fp32"})", head));
  const RunResult ok = run_eos(fixed, "a");
  CHECK_FALSE(ok.first_overflow);
  CHECK_FALSE(ok.first_invalid);
  CHECK(d(head_at(ok, 1).scores.at(0)) == 65536);
  CHECK(d(head_at(ok, 1).weights.at(0)) == 1);
  CHECK(d(head_at(ok, 1).output.at(0)) == 1);
  const json j = to_json(r, "a");
  CHECK(j["first_overflow"]["step"] == "q·k accumulation");
  CHECK(j["first_invalid"]["step"] == "softmax subtraction");
}

TEST_CASE("fp8 per-tensor scales: x_stored = rnd(x / scale), the score dequantised once",
          "[attention][mixed]") {
  // Hand: q = 0.3 in fp32 = 0.300000011920928955078125; q / (1/64) = 19.2000007629… lies in
  // [16, 32) where E4M3 (p = 4) has spacing 2: stored 20. k = 1, scale 1: stored 1.
  // acc = 20 (fp32), dequantisation rnd(1/64 · 1) = 1/64, score 20/64 = 0.3125.
  const std::string head = R"("query_bias": [0.3], "key": [[1]], "value": [[1]])";
  const Model m = parse_model(spec("fp32", R"({"query": {"format": "fp8e4m3", "scale": "1/64"},
      "key": {"format": "fp8e4m3", "scale": 1}, "scores": "fp32"})",
                                   head));
  const RunResult r = run_eos(m, "a");
  CHECK(d(head_at(r, 1).query.at(0)) == 20);
  CHECK(d(head_at(r, 1).scores.at(0)) == 0.3125);
  CHECK_FALSE(r.first_overflow);
  // 1000 / 1 saturates E4M3 at 448: the query store overflows (no inf in E4M3).
  const Model sat = parse_model(spec("fp32", R"({"query": {"format": "fp8e4m3"}})",
                                     R"("query_bias": [1000], "key": [[1]], "value": [[1]])"));
  const RunResult rs = run_eos(sat, "a");
  REQUIRE(rs.first_overflow);
  CHECK(rs.first_overflow->step == "query store");
  CHECK(rs.first_overflow->format == "fp8e4m3");
  CHECK(rs.first_overflow->position == 0);  // the store of BOS's query comes first
  CHECK(d(head_at(rs, 1).query.at(0)) == 448);
}

TEST_CASE("probabilities cast to bf16 and the output stored in bf16", "[attention][mixed]") {
  // q = 0: three equal scores at EOS of "aa" (keys BOS, a, a), α = rnd_fp32(1/3); cast to bf16:
  // 1/3 = 1.0101010|101…₂ × 2^-2 rounds up to 1.0101011₂ × 2^-2 = 0.333984375. v = 3:
  // Σ α̃·3 in fp32 = 3 × 1.001953125 = 3.005859375 (exact). Stored in bf16 (spacing 2^-6 on
  // [2, 4)): 3.005859375 = 3 + 0.375·2^-6 rounds to 3.
  const std::string head = R"("query_bias": [0], "key": [[1]], "value": [[3]])";
  const Model cast = parse_model(spec("fp32", R"({"probabilities": "bf16"})", head));
  const RunResult r = run_eos(cast, "aa");
  const HeadTrace& h = head_at(r, 3);
  REQUIRE(h.weights.size() == 3);
  CHECK(d(h.weights[0]) == 0.333984375);
  CHECK(d(h.output.at(0)) == 3.005859375);
  const Model stored =
      parse_model(spec("fp32", R"({"probabilities": "bf16", "output": "bf16"})", head));
  CHECK(d(head_at(run_eos(stored, "aa"), 3).output.at(0)) == 3);
}

TEST_CASE("an additive mask keeps the masked keys in the softmax", "[attention][mixed]") {
  // Strict masking, mask -10000 in fp32: at EOS of "a" (position 2) keys 0, 1 are visible
  // (score 0) and key 2 (itself) is masked (score -10000): exp(-10000) = 0 in fp32, weights
  // [1/2, 1/2, 0]. At BOS every key is masked: all scores -10000, uniform weights 1/3 (what
  // PyTorch gives a fully masked row with a finite mask).
  const std::string head = R"("query_bias": [0], "key": [[1]], "value": [[1]])";
  const Model m = parse_model(spec("fp32", R"({"mask": -10000})", head));
  const RunResult r = run_eos(m, "a");
  const HeadTrace& eos = head_at(r, 2);
  REQUIRE(eos.keys.size() == 3);
  CHECK(d(eos.scores[2]) == -10000);
  CHECK(d(eos.weights[0]) == 0.5);
  CHECK(d(eos.weights[1]) == 0.5);
  CHECK(d(eos.weights[2]) == 0);
  const HeadTrace& bos = head_at(r, 0);
  REQUIRE(bos.weights.size() == 3);
  CHECK(bos.weights[0].same_bits(Value::from_double_exact(static_cast<float>(1.0 / 3.0))));
  CHECK_FALSE(r.first_invalid);
  // With -inf the fully masked BOS row is -inf − (-inf) = NaN: invalid at the softmax
  // subtraction of position 0.
  const Model inf = parse_model(spec("fp32", R"({"mask": "-inf"})", head));
  const RunResult ri = run_eos(inf, "a");
  REQUIRE(ri.first_invalid);
  CHECK(ri.first_invalid->step == "softmax subtraction");
  CHECK(ri.first_invalid->position == 0);
  CHECK(head_at(ri, 0).weights.at(0).is_nan());
  // The -inf scores of masked keys are by design: the first non-finite value is the NaN weight
  // of the fully masked BOS row, not a masked score.
  REQUIRE(ri.first_non_finite);
  CHECK(ri.first_non_finite->stage == "weights");
  CHECK(ri.first_non_finite->position == 0);
  // With non-strict masking no row is fully masked: nothing is non-finite or invalid.
  const Model ns =
      parse_model(spec("fp32", R"({"mask": "-inf"})", head, R"({"masking": "non-strict"})"));
  const RunResult rn = run_eos(ns, "aa");
  CHECK_FALSE(rn.first_non_finite);
  CHECK_FALSE(rn.first_invalid);
  CHECK(head_at(rn, 1).scores.at(2).is_inf());
  CHECK(d(head_at(rn, 1).weights.at(0)) == 0.5);
  CHECK(d(head_at(rn, 1).weights.at(2)) == 0);
}

TEST_CASE("formats blocks round trip through model_to_json", "[attention][mixed]") {
  const std::string block = R"({"query": {"format": "fp8e4m3", "scale": "1/64"}, "key": "bf16",
      "value": {"scale": 0.5}, "scores": "fp32",
      "score_accumulator": "p=11,e=8@toward-zero/128>fp32", "mask": -10000, "softmax": "fp32",
      "probabilities": "bf16", "value_accumulator": {"format": "fp32"}, "output": "bf16"})";
  const Model m =
      parse_model(spec("bf16", block, R"("query_bias": [0.5], "key": [[1]], "value": [[1]])"));
  const json once = model_to_json(m);
  const json twice = model_to_json(model_from_json(once));
  CHECK(once.dump() == twice.dump());
  const json& f = once["layers"][0]["heads"][0]["formats"];
  CHECK(f["score_accumulator"]["promote_every"] == 128);
  CHECK(f["score_accumulator"]["rounding"] == "toward-zero");
  CHECK(f["query"]["scale"] == "0.015625");
  CHECK_FALSE(f["value"].contains("format"));
  CHECK(to_json(run(m, "a"), "a").dump() == to_json(run(model_from_json(once), "a"), "a").dump());
}

TEST_CASE("malformed formats fields are refused with one line naming the JSON path",
          "[attention][mixed]") {
  const std::string head = R"("query_bias": [0], "key": [[1]], "value": [[1]])";
  struct Case {
    const char* block;
    const char* starts;
  };
  const std::vector<Case> cases = {
      {R"({"qury": "bf16"})", "layers[0].heads[0].formats.qury: unknown field"},
      {R"({"key": {"format": "fp8e4m3", "scale": -1}})",
       "layers[0].heads[0].formats.key.scale: must be positive"},
      {R"({"key": {"scale": 0}})", "layers[0].heads[0].formats.key.scale: must be positive"},
      {R"({"scores": "fp99"})", "layers[0].heads[0].formats.scores: "},
      {R"({"scores": 16})", "layers[0].heads[0].formats.scores: expected a string"},
      {R"({"score_accumulator": {"format": "fp16", "promote_every": 0, "promote_to": "fp32"}})",
       "layers[0].heads[0].formats.score_accumulator.promote_every: must be between 1"},
      {R"({"score_accumulator": {"format": "fp16", "promote_every": 128}})",
       "layers[0].heads[0].formats.score_accumulator.promote_to: missing"},
      {R"({"score_accumulator": "fp16/0>fp32"})",
       "layers[0].heads[0].formats.score_accumulator: accumulator"},
      {R"({"value_accumulator": {"format": "fp32", "rounding": "sideways"}})",
       "layers[0].heads[0].formats.value_accumulator.rounding: "},
      {R"({"mask": "nan"})", "layers[0].heads[0].formats.mask: "},
      {R"({"query": 3})", "layers[0].heads[0].formats.query: expected a format string"},
      {R"([])", "layers[0].heads[0].formats: expected a JSON object"},
  };
  for (const Case& c : cases) {
    INFO(c.block);
    const std::string message = refusal(spec("fp32", c.block, head));
    CHECK(message.rfind(c.starts, 0) == 0);
    CHECK(message.find('\n') == std::string::npos);
  }
  // The online softmax is not modelled with per-tensor formats.
  const std::string online = refusal(spec("fp32", "{}", head, R"({"softmax": "online"})"));
  CHECK(online.rfind("layers[0].heads[0].formats: per-tensor formats are modelled with the stable",
                     0) == 0);
}
