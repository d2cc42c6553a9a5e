// Model spec files, schema v1 (docs/MODEL_SPEC.md): exact number reading (one rounding into
// F, never via a double), round trips bit for bit, and one-line errors naming the JSON path.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "attention/transformer/model_spec.hpp"
#include "attention/transformer/run.hpp"
#include "core/error.hpp"

using namespace ropesim::attention;
using nlohmann::json;
using ropesim::InvalidArgument;
using ropesim::numeric::Format;
using ropesim::numeric::Rounding;
using ropesim::numeric::Value;

namespace {

/// The contains-a model of test_transformer.cpp as a spec (THEORY §2; LC25 App B.3 in
/// miniature): accepts iff some symbol is a.
const char* contains_a_spec = R"({
  "ropesim_model": 1,
  "name": "contains-a",
  "policy": {"format": "fp16"},
  "d_model": 4,
  "alphabet": ["a", "b"],
  "embedding": {
    "bos": [0, 0, 1, 0],
    "eos": [1, 0, 0, 0],
    "symbols": {"a": [1, 1, 0, 0], "b": [1, 0, 0, 0]}
  },
  "layers": [
    {"heads": [{"name": "P a", "head_dim": 1, "value_dim": 1,
                "query_bias": [20],
                "key": [[0, 1, 0, 0]],
                "value": [[0, 1, 0, 0]],
                "output": [[0], [0], [0], [1]]}]}
  ],
  "classifier": {"weights": [-0.5, 0, 0, 1]}
})";

std::string one_line_error(const std::string& text, const ModelLoadOptions& o = {}) {
  try {
    parse_model(text, o);
  } catch (const InvalidArgument& e) {
    const std::string m = e.what();
    CHECK(m.find('\n') == std::string::npos);
    return m;
  }
  FAIL("expected InvalidArgument for " << text.substr(0, 200));
  return "";
}

/// The base spec with one edit applied to its parsed JSON (integers and strings only, so
/// nlohmann's doubles do not matter).
std::string edited(const std::function<void(json&)>& edit) {
  json j = json::parse(contains_a_spec);
  edit(j);
  return j.dump();
}

void require_same_model(const Model& a, const Model& b) {
  CHECK(model_to_json(a) == model_to_json(b));
}

}  // namespace

TEST_CASE("a spec loads and runs: contains-a", "[model_spec]") {
  const Model m = parse_model(contains_a_spec);
  CHECK(m.name == "contains-a");
  CHECK(m.policy.format == Format::fp16());
  CHECK(m.options.bos);
  CHECK(m.options.masking == Masking::strict);
  CHECK(m.options.softmax == SoftmaxVariant::stable);
  // Omitted query matrix = zeros; omitted classifier bias = 0.
  CHECK(m.layers[0].heads[0].query.entries.size() == 4);
  CHECK(m.layers[0].heads[0].query.at(0, 2).is_zero());
  CHECK(m.classifier.bias.is_zero());
  CHECK(run(m, "bba").accept);
  CHECK_FALSE(run(m, "bbb").accept);
}

TEST_CASE("numbers are read exactly and rounded once into F", "[model_spec]") {
  // q = 1 + 2^-24 + 2^-80 (exact decimal below, from Python's fractions/decimal). Rounded
  // once into fp32 it is above the midpoint 1 + 2^-24, so it becomes 1 + 2^-23. Read through a
  // double first, it would become the midpoint 1 + 2^-24 and then tie to even → 1.
  const std::string q =
      "1.00000005960464477539062582718061255302767487140869206996285356581211090087890625";
  const double expected = 1.0 + std::ldexp(1.0, -23);
  for (const std::string& spelled : {"\"" + q + "\"", q}) {  // string and JSON number
    std::string text = contains_a_spec;
    text.replace(text.find("\"query_bias\": [20]"), 18, "\"query_bias\": [" + spelled + "]");
    const auto pos = text.find("\"fp16\"");
    text.replace(pos, 6, "\"fp32\"");
    const Model m = parse_model(text);
    CHECK(m.layers[0].heads[0].query_bias[0].to_double() == expected);
  }
  // A fraction: 1/3 in fp16 (spacing 2^-12 in [1/4, 1/2)): 1/3·2^12 = 1365.33 → 1365·2^-12.
  std::string text = contains_a_spec;
  text.replace(text.find("\"query_bias\": [20]"), 18, "\"query_bias\": [\"1/3\"]");
  CHECK(parse_model(text).layers[0].heads[0].query_bias[0].to_double() == 1365.0 / 4096);
  // Rounding override upward: 1366·2^-12. Format override fp32: rnd(1/3) = (float)(1.0f/3).
  ModelLoadOptions up;
  up.rounding = Rounding::upward;
  CHECK(parse_model(text, up).layers[0].heads[0].query_bias[0].to_double() == 1366.0 / 4096);
  ModelLoadOptions f32;
  f32.format = Format::fp32();
  CHECK(parse_model(text, f32).layers[0].heads[0].query_bias[0].to_double() ==
        static_cast<double>(1.0f / 3.0f));
  // "-0" keeps its sign; "inf" is +inf; 70000 overflows fp16 to +inf (RNE).
  text = contains_a_spec;
  text.replace(text.find("\"weights\": [-0.5, 0, 0, 1]"), 26,
               "\"weights\": [\"-0\", \"inf\", 70000, \"-2.5e-3\"]");
  const Model m = parse_model(text);
  CHECK(m.classifier.weights[0].is_zero());
  CHECK(m.classifier.weights[0].sign_bit());
  CHECK(m.classifier.weights[1].is_inf());
  CHECK(m.classifier.weights[2].is_inf());
  // -2.5e-3 in fp16: spacing 2^-19 in [2^-9, 2^-8): 0.0025·2^19 = 1310.72 → -1311·2^-19.
  CHECK(m.classifier.weights[3].to_double() == -1311.0 / 524288);
}

TEST_CASE("save then load reproduces a model bit for bit", "[model_spec]") {
  // A model with per-block realisations (r3 table, r1, none), an unrotated pair, rotate_half,
  // LayerNorms, FFN, scale, awkward values (subnormal, -0, fractions) and non-default options.
  const std::string spec = R"({
    "ropesim_model": 1, "name": "mixed", "description": "round trip",
    "policy": {"format": "bf16", "rounding": "nearest-even", "summation": "wide-accumulator",
               "accumulator": "fp32"},
    "architecture": {"bos": false, "masking": "non-strict", "softmax": "online", "layer_norm": "pre"},
    "d_model": 2,
    "alphabet": ["x", "y", "σ"],
    "embedding": {"eos": [1, "1/3"], "symbols": {"x": [0.1, -0.0], "y": ["1e-40", 3], "σ": [2, 2]}},
    "layers": [{
      "heads": [{"head_dim": 8, "value_dim": 2, "query": "identity", "key": {"sparse": [[0, 1, "0.7"]]},
                 "value": [[1, 0], [0, 1]], "output": "identity", "scale": "0.125",
                 "rope": [{"schedule": "periodic:m=3,5", "realisation": ["r3", "r1"], "layout": "rotate_half"},
                          {"schedule": "single:g=1", "realisation": "none"},
                          {"unrotated_pairs": 1}]}],
      "attention_norm": {"gain": [1, 2], "epsilon": "1e-3"},
      "ffn": {"hidden": 3, "w1": "zeros", "b1": [1, 2, 3], "w2": [[1, 0, 0], [0, 1, "-1/7"]]},
      "ffn_norm": {}
    }],
    "final_norm": {"bias": [0, 1]},
    "classifier": {"weights": [1, -1], "bias": "0.5"}
  })";
  const Model m = parse_model(spec);
  CHECK(m.layers[0].heads[0].rotary[0].realisations[0]->kind == Realisation::Kind::r3);
  CHECK_FALSE(m.layers[0].heads[0].rotary[1].realisations[0].has_value());
  CHECK(m.embedding.symbols[0][1].sign_bit());  // -0.0 as a JSON number keeps its sign
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("ropesim_spec_" + std::to_string(::getpid()) + ".json");
  save_model(m, path);
  const Model back = load_model(path);
  std::filesystem::remove(path);
  require_same_model(m, back);
  // The loaded model holds the numbers of the spec rounded once into bf16 (p = 8), derived by
  // hand: x/q with q the quantum of x's binade, nearest-even (tests/derivations/directed_values.py
  // has the rounding helper):
  //   1/3 ∈ [1/4, 1/2): q = 2^-9, 512/3 = 170.67 → 171·2^-9 = 0.333984375;
  //   0.1 ∈ [1/16, 1/8): q = 2^-11, 204.8 → 205·2^-11 = 0.10009765625;
  //   1e-40 is subnormal in bf16 (q = 2^-133 = 9.18e-41): 1.089 → 2^-133;
  //   0.7 ∈ [1/2, 1): q = 2^-8, 179.2 → 179·2^-8 = 0.69921875;
  //   -1/7 ∈ -[1/8, 1/4): q = 2^-10, 146.29 → -146·2^-10 = -0.142578125.
  // So a save that printed too few digits, or a load that rounded twice, shows here even though
  // m and back would still agree with each other.
  CHECK(back.embedding.eos[1].to_double() == 0.333984375);
  CHECK(back.embedding.symbols[0][0].to_double() == 0.10009765625);
  CHECK(back.embedding.symbols[0][1].sign_bit());
  CHECK(back.embedding.symbols[1][0].to_double() == std::ldexp(1.0, -133));
  CHECK(back.layers[0].heads[0].key.entries[0 * back.layers[0].heads[0].key.cols + 1].to_double() ==
        0.69921875);
  CHECK(back.layers[0].ffn->w2.entries[1 * 3 + 2].to_double() == -0.142578125);
  CHECK(back.classifier.bias.to_double() == 0.5);
  // Bit for bit on every embedding value and on a run.
  for (std::size_t k = 0; k < m.embedding.symbols.size(); ++k) {
    for (std::size_t c = 0; c < 2; ++c)
      CHECK(m.embedding.symbols[k][c].same_bits(back.embedding.symbols[k][c]));
  }
  const RunResult r1 = run(m, "xyσx"), r2 = run(back, "xyσx");
  CHECK(r1.output.same_bits(r2.output));
  // model_from_json of the saved JSON, too.
  require_same_model(m, model_from_json(model_to_json(m)));
}

TEST_CASE("malformed specs give one line naming the path", "[model_spec]") {
  using E = std::pair<std::string, std::string>;
  const std::vector<E> cases{
      {"{", "invalid JSON"},
      {edited([](json& j) { j.erase("policy"); }), "policy: missing (required)"},
      {edited([](json& j) { j["ropesim_model"] = 2; }),
       "ropesim_model: unsupported schema version 2; accepted: 1"},
      {edited([](json& j) { j["policy"]["format"] = "fp17"; }), "policy.format:"},
      {edited([](json& j) { j["policy"]["summation"] = "kahan"; }),
       "policy.summation: unknown summation 'kahan'"},
      {edited([](json& j) { j["policy"]["summation"] = "wide-accumulator"; }),
       "policy.accumulator: missing"},
      {edited([](json& j) { j["layers"][0]["heads"][0]["key"][0][2] = "abc"; }),
       "layers[0].heads[0].key[0][2]: 'abc' is not a number"},
      {edited([](json& j) { j["layers"][0]["heads"][0]["key"][0][2] = true; }),
       "layers[0].heads[0].key[0][2]: expected a JSON number"},
      {edited([](json& j) {
         j["layers"][0]["heads"][0]["key"] = json::array({json::array({0, 1, 0})});
       }),
       "layers[0].heads[0].key[0]: expected a row of 4 numbers"},
      {edited([](json& j) { j["layers"][0]["heads"][0]["kee"] = 1; }),
       "layers[0].heads[0].kee: unknown field; accepted here:"},
      {edited([](json& j) { j["layers"][0]["heads"][0].erase("output"); }),
       "layers[0].heads[0].output: missing"},
      {edited([](json& j) { j["embedding"]["symbols"].erase("b"); }),
       "embedding.symbols.b: missing"},
      {edited([](json& j) {
         j["embedding"]["symbols"]["c"] = json::array({0, 0, 0, 0});
       }),
       "embedding.symbols.c: not a symbol"},
      {edited([](json& j) { j["embedding"].erase("bos"); }), "embedding.bos: missing"},
      {edited([](json& j) {
         j["classifier"]["weights"] = json::array({1, 2});
       }),
       "classifier.weights: expected 4 numbers, got 2"},
      {edited([](json& j) { j["classifier"]["bias"] = "nan"; }),
       "classifier.bias: 'nan' is not a number"},
      {edited([](json& j) {
         j["layers"][0]["heads"][0]["rope"] =
             json::array({{{"schedule", "single:g=1"}, {"realisation", "r3"}}});
       }),
       "layers[0].heads[0].rope[0].realisation:"},
      {edited([](json& j) {
         j["layers"][0]["heads"][0]["rope"] =
             json::array({{{"schedule", "single:g=1"}, {"realisation", "r1"}}});
       }),
       "layers[0].heads[0].rope: segments cover 2 coordinates, head_dim is 1"},
      {edited([](json& j) {
         j["layers"][0]["heads"][0]["rope"] =
             json::array({{{"schedule", "bogus"}, {"realisation", "r1"}}});
       }),
       "layers[0].heads[0].rope[0].schedule:"},
      {edited([](json& j) {
         j["architecture"] = {{"softmax", "online"}};
         j["policy"]["summation"] = "pairwise";
       }),
       "architecture.softmax: online needs summation sequential or wide-accumulator"},
      {edited([](json& j) {
         j["layers"][0]["ffn"] = {{"hidden", 2}, {"w1", "zeros"}};
       }),
       "layers[0].ffn.w2: missing"},
      {edited([](json& j) { j["d_model"] = -1; }), "d_model: expected a non-negative integer"},
      {R"({"ropesim_model": 1, "ropesim_model": 1})", "duplicate key 'ropesim_model'"},
      // One spelling per number (issue 39): JSON's grammar inside strings, no blanks.
      {edited([](json& j) { j["classifier"]["bias"] = " 1"; }),
       "classifier.bias: ' 1' is not a number"},
      {edited([](json& j) { j["classifier"]["bias"] = "+1"; }),
       "classifier.bias: '+1' is not a number"},
      {edited([](json& j) { j["classifier"]["bias"] = ".5"; }),
       "classifier.bias: '.5' is not a number"},
      {edited([](json& j) { j["classifier"]["bias"] = "1."; }),
       "classifier.bias: '1.' is not a number"},
      {edited([](json& j) { j["classifier"]["bias"] = "007"; }),
       "classifier.bias: '007' is not a number"},
      {edited([](json& j) { j["classifier"]["bias"] = "1/ 3"; }),
       "classifier.bias: '1/ 3' is not a number"},
      {edited([](json& j) { j["classifier"]["bias"] = "infinity"; }),
       "classifier.bias: 'infinity' is not a number"},
      {edited([](json& j) { j["layers"][0]["heads"][0]["rope"] = json::array(); }),
       "layers[0].heads[0].rope: an empty array covers none of the head's coordinates"},
  };
  for (const auto& [text, expected] : cases) {
    INFO(expected);
    const std::string m = one_line_error(text);
    CHECK_THAT(m, Catch::Contains(expected));
  }
  CHECK_THROWS_WITH(load_model("/nonexistent/ropesim.json"),
                    Catch::Contains("/nonexistent/ropesim.json: cannot open the model spec file"));
}

// Regression tests for fuzz/fuzz_model_spec findings (docs/TESTING.md "Fuzzing and
// sanitizers"): before the size limits, head_dim 2^63 with d_model 2 made Matrix::zeros
// allocate rows·cols = 2^64 mod 2^64 = 0 entries and "identity" wrote past the end (UBSan:
// reference binding to null pointer); huge dimensions with "zeros" asked for terabytes
// (ASan: allocation-size-too-big / out-of-memory, std::bad_alloc in a release build).
TEST_CASE("sizes beyond the limits are refused before anything is allocated",
          "[model_spec][fuzz]") {
  // Two limits: the total (ModelLoadOptions::max_parameters, 2^24 numbers by default, refused
  // with the estimate before any field is read) and, when that is lifted (run --allow-large),
  // hard per-dimension and per-matrix limits that name the JSON path.
  ModelLoadOptions unlimited;
  unlimited.max_parameters = SIZE_MAX;
  const std::string wrapping_matrix =
      R"({"ropesim_model": 1, "policy": {"format": "fp16"}, "d_model": 2,
    "alphabet": ["a"], "embedding": {"bos": [0, 0], "eos": [0, 0], "symbols": {"a": "zeros"}},
    "layers": [{"heads": [{"head_dim": 9223372036854775808, "value_dim": 0, "query": "identity",
                           "output": "zeros"}]}],
    "classifier": {"weights": [0, 0]}})";
  CHECK_THAT(one_line_error(wrapping_matrix, unlimited),
             Catch::Contains(
                 "layers[0].heads[0].head_dim: must be at most 1000000, got 9223372036854775808"));
  const std::string huge_d_model =
      R"({"ropesim_model": 1, "policy": {"format": "fp16"}, "d_model": 100000000000,
    "alphabet": ["a"], "embedding": {"bos": "zeros", "eos": "zeros", "symbols": {"a": "zeros"}},
    "classifier": {"weights": "zeros"}})";
  CHECK_THAT(one_line_error(huge_d_model, unlimited),
             Catch::Contains("d_model: must be at most 1000000, got 100000000000"));
  const std::string huge_head = R"({"ropesim_model": 1, "policy": {"format": "fp16"}, "d_model": 1,
    "alphabet": ["a"], "embedding": {"bos": [0], "eos": [0], "symbols": {"a": "zeros"}},
    "layers": [{"heads": [{"head_dim": 4294967296, "value_dim": 4294967297, "output": "zeros"}]}],
    "classifier": {"weights": [0]}})";
  CHECK_THAT(one_line_error(huge_head, unlimited),
             Catch::Contains("layers[0].heads[0].head_dim: must be at most 1000000"));
  // Within each dimension limit, but 100000 x 1000 = 10^8 entries: refused by the matrix limit.
  const std::string huge_matrix =
      R"({"ropesim_model": 1, "policy": {"format": "fp16"}, "d_model": 1000,
    "alphabet": ["a"], "embedding": {"bos": "zeros", "eos": "zeros", "symbols": {"a": "zeros"}},
    "layers": [{"heads": [{"head_dim": 100000, "value_dim": 1, "output": "zeros"}]}],
    "classifier": {"weights": "zeros"}})";
  CHECK_THAT(
      one_line_error(huge_matrix, unlimited),
      Catch::Contains(
          "layers[0].heads[0].query: a 100000 x 1000 matrix has more than 10000000 entries"));
  // By default the total refuses it first: 2·100000·1001 + 1·2001 + 3·1000 + 1000 + 5·1000
  // = 200211001 numbers, about 2e+08.
  CHECK_THAT(one_line_error(huge_matrix), Catch::Contains("the model holds about 2e+08 numbers"));
  CHECK_THAT(
      one_line_error(edited([](json& j) {
        j["layers"][0]["heads"][0]["rope"] =
            json::array({{{"unrotated_pairs", 9223372036854775808ULL}}});
      })),
      Catch::Contains("layers[0].heads[0].rope[0].unrotated_pairs: must be at most 1000000"));
  // The root cause, in the library: rows·cols that wraps around is refused.
  CHECK_THROWS_AS(Matrix::zeros(std::size_t{1} << 63, 2), InvalidArgument);
  CHECK(Matrix::zeros(3, 2).entries.size() == 6);
}
