// Looking inside a model head by head (proofs/reports/head_analysis.hpp; THEORY §6, "Looking inside
// a model"): block usage, the fixed-offset test and its certified range, bf16 vs fp32 flips.
// Expected values are derived by hand (comments) or by another algorithm (proofs::horizon's
// candidate algorithm against analyse_heads' scan).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "attention/transformer/model_spec.hpp"
#include "core/error.hpp"
#include "logic/formula.hpp"
#include "numeric/format.hpp"
#include "proofs/compiler/compiler.hpp"
#include "proofs/experiments/offset_simulation.hpp"
#include "proofs/range/horizon.hpp"
#include "proofs/reports/head_analysis.hpp"

using namespace ropesim;

namespace {

/// Writes `text` to a fresh file in the temporary directory and returns its path.
std::string temp_spec(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("ropesim_heads_" + std::to_string(::getpid()) + "_" + name + ".json");
  std::ofstream(path) << text;
  return path.string();
}

proofs::HeadAnalysis analyse(const std::string& file, const std::string& words,
                             std::optional<std::string> format = std::nullopt) {
  proofs::HeadAnalysisArguments a;
  a.model_file = file;
  a.words = words;
  a.format = std::move(format);
  return proofs::analyse_heads(proofs::head_analysis_options(a));
}

/// d_model 2, one head of two rotary blocks (periodic:m=4,8, r3: θ = π/2, π/4) whose Q and K
/// are the identity into block 1 (coordinates 2, 3) and zero on block 0.
const char* kBlockOneSpec = R"({
  "ropesim_model": 1, "policy": {"format": "fp32"}, "d_model": 2, "alphabet": ["a", "b"],
  "embedding": {"bos": [1, 1], "eos": [0, 2], "symbols": {"a": [1, 0], "b": [0, 1]}},
  "layers": [{"heads": [{"head_dim": 4, "value_dim": 1,
    "query": [[0, 0], [0, 0], [1, 0], [0, 1]], "key": [[0, 0], [0, 0], [1, 0], [0, 1]],
    "value": [[1, 0]], "output": [[1], [0]],
    "rope": [{"schedule": "periodic:m=4,8", "realisation": "r3"}]}]}],
  "classifier": {"weights": [1, 0]}})";

/// The flip model: one NoPE head attending uniformly (Q = K = 0) to BOS and the symbols, its
/// value 1 on a and 0 elsewhere, written to coordinate 1; y = x_1 − 0.3333. At EOS of a word of
/// N symbols with m a's the head outputs m·rnd(1/(N + 1)) (every exp(0) = 1, the sum N + 1
/// exact, each weight rnd(1/(N + 1)), a sum of equal terms exact for m ≤ 2).
const char* kFlipSpec = R"({
  "ropesim_model": 1, "policy": {"format": "bf16"}, "d_model": 2, "alphabet": ["a", "b"],
  "embedding": {"bos": [0, 0], "eos": [0, 0], "symbols": {"a": [1, 0], "b": [0, 0]}},
  "layers": [{"heads": [{"head_dim": 1, "value_dim": 1, "value": [[1, 0]],
    "output": [[0], [1]]}]}],
  "classifier": {"weights": [0, 1], "bias": "-0.3333"}})";

}  // namespace

TEST_CASE("block usage: Q and K zero outside block 1 use block 1 only (by hand)",
          "[proofs][heads]") {
  const auto a = analyse(temp_spec("block1", kBlockOneSpec), "ab");
  REQUIRE(a.heads.size() == 1);
  const auto& blocks = a.heads[0].blocks;
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].theta == Approx(M_PI / 2));
  CHECK(blocks[1].theta == Approx(M_PI / 4));
  CHECK(blocks[0].realisation == "r3");
  CHECK(blocks[1].coordinates[0] == 2);
  CHECK(blocks[1].coordinates[1] == 3);
  // ‖rows 2, 3 of [Q | b_q]‖_F = ‖I_2‖_F = √2; rows 0, 1 are zero.
  CHECK(blocks[0].query_weight_norm == 0);
  CHECK(blocks[0].key_weight_norm == 0);
  CHECK(blocks[1].query_weight_norm == Approx(std::sqrt(2.0)));
  CHECK(blocks[1].key_weight_norm == Approx(std::sqrt(2.0)));
  // Tokens BOS (1,1), a (1,0), b (0,1), EOS (0,2): (Q x)_block1 = x, mean norm (√2+1+1+2)/4.
  CHECK(blocks[1].query_norm == Approx((std::sqrt(2.0) + 4) / 4));
  CHECK(blocks[1].key_norm == Approx((std::sqrt(2.0) + 4) / 4));
  CHECK(blocks[0].query_norm == 0);
  CHECK(blocks[0].score_share.value() == 0);
  CHECK(blocks[1].score_share.value() == 1);
  CHECK(a.heads[0].test.queries == 2);  // positions 2 (a) and 3 (EOS: keys 0..2) of "ab"
}

TEST_CASE("the flip model: bf16 rejects what fp32 accepts, first prefix by hand",
          "[proofs][heads]") {
  // Mean 1/3 (N = 2 with one a, N = 5 with two): bf16 y = 171/512 − rnd(0.3333) = 171/512 −
  // 171/512 = 0, reject; fp32 y = rnd32(1/3) − rnd32(0.3333) ≈ 3.3e-5 > 0, accept. Prefixes of
  // "babba": b (0 a's: reject), ba (1/3: flips), bab (1/4), babb (1/5), babba (2/6: flips): the
  // first prefix that flips has 2 symbols. "ab": a (1/2, both accept), ab (flips): 2.
  const auto a = analyse(temp_spec("flip", kFlipSpec), "babba,bab,ab,aab");
  CHECK(a.format == "bf16");
  CHECK(a.reference_format == "fp32");
  CHECK(a.decisions_compared == 4);
  REQUIRE(a.flips.size() == 2);
  CHECK(a.flips[0].word == "babba");
  CHECK(a.flips[0].first_prefix == 2);
  CHECK(a.flips[0].length == 5);
  CHECK_FALSE(a.flips[0].accept);
  CHECK(a.flips[0].reference_accept);
  CHECK(a.flips[0].output.is_zero());
  CHECK(a.flips[1].word == "ab");
  CHECK(a.flips[1].first_prefix == 2);
  // every weight of the uniform head ties: no attention difference, no offset
  CHECK_FALSE(a.flips[0].first_attention_difference.has_value());
  const auto& t = a.heads[0].test;
  CHECK(t.queries == 5 + 3 + 2 + 3);  // positions 2..N+1 of each word
  CHECK(t.tied == t.queries);
  CHECK_FALSE(t.offset.has_value());
  CHECK_FALSE(t.positional);
  // --format fp32 against the reference fp32: nothing flips
  CHECK(analyse(temp_spec("flip", kFlipSpec), "babba,ab", "fp32").flips.empty());
}

TEST_CASE("a Y^1 head on periodic:m=4 (C = 64, fp16) is positional with N_max = 3 (by hand)",
          "[proofs][heads]") {
  // tests/proofs/test_fixed_offset_head.cpp derives N_max = 3 by hand: at i = 5 the target
  // j = 4 ties BOS (offset 4). On words of length ≤ 3 every query attends at offset 1.
  proofs::FixedOffsetSpec spec;
  spec.schedule = attention::parse_schedule("periodic:m=4");
  spec.C = 64;
  spec.k = 1;
  spec.policy.format = numeric::Format::fp16();
  const auto file = temp_spec("m4", attention::model_to_json(proofs::offset_model(spec)).dump());
  const auto a = analyse(file, "a,b,ab,ba,aab,bab");
  const auto& y = a.heads.at(0);  // layer 0: the Y^1 head, then the P⊤ head
  CHECK(y.test.positional);
  CHECK(y.test.offset == std::int64_t{1});
  CHECK(y.test.eligible == 1 + 1 + 2 + 2 + 3 + 3);  // queries 2..N+1, key N present
  CHECK(y.test.at_offset == y.test.eligible);
  REQUIRE(y.range.has_value());
  CHECK(y.range->content_independent);
  CHECK(y.range->range.n_max == 3);
  CHECK(y.range->range.fail_query == 5u);
  CHECK(y.range->range.fail_competitor == 0u);
  CHECK_FALSE(a.heads.at(1).test.positional);  // P⊤: uniform over the symbols
}

TEST_CASE("compiled Y a in bf16: the range equals horizon's for the same q, k, C, F",
          "[proofs][heads]") {
  proofs::CompileOptions options;
  options.policy.format = numeric::Format::bf16();
  const auto compiled = proofs::compile(ltl::parse("Y a"), {"a", "b"}, options);
  const auto file = temp_spec("ya", attention::model_to_json(compiled.model).dump());
  const auto a = analyse(file, "abba,baab,ab");
  REQUIRE(a.heads.size() == 2);
  const auto& y = a.heads[1];  // layer 1: Y a (layer 0 holds P⊤)
  CHECK(y.name == "Y a");
  CHECK(y.test.positional);
  CHECK(y.test.offset == std::int64_t{1});
  CHECK(y.test.eligible == 4 + 4 + 2);
  CHECK(y.test.at_offset == y.test.eligible);
  // Q = K = 0: the weight norms are the biases' (the spec's query_bias 17664, -27520; key (1, 0))
  REQUIRE(y.blocks.size() == 1);
  CHECK(y.blocks[0].query_weight_norm == Approx(std::hypot(17664.0, 27520.0)));
  CHECK(y.blocks[0].key_weight_norm == 1);
  CHECK(y.blocks[0].query_norm == Approx(std::hypot(17664.0, 27520.0)));
  REQUIRE(y.range.has_value());
  // the candidate algorithm of proofs::horizon on the head the compiler built (C = 32768, its
  // report's constant): the same N_max, failing query, competitor and gap
  proofs::HorizonSpec h;
  h.head.schedule = attention::parse_schedule("single:g=1");
  h.head.C = 32768;
  h.head.k = 1;
  h.head.policy.format = numeric::Format::bf16();
  h.algorithm = proofs::RangeAlgorithm::candidates;
  const auto report = proofs::horizon(h);
  CHECK(report.range.n_max == 43);
  CHECK(y.range->range.n_max == report.range.n_max);
  CHECK(y.range->range.fail_query == report.range.fail_query);
  CHECK(y.range->range.fail_competitor == report.range.fail_competitor);
  CHECK(y.range->range.gap == report.range.gap);
  CHECK_FALSE(a.heads[0].test.positional);
}

TEST_CASE("analyse heads refuses bad options in one line", "[proofs][heads]") {
  const auto file = temp_spec("refuse", kFlipSpec);
  proofs::HeadAnalysisArguments a;
  a.model_file = file;
  a.words = "ab";
  a.lengths = "1..3";
  CHECK_THROWS_WITH(proofs::head_analysis_options(a),
                    "--words: give either --words or --lengths, not both");
  a.lengths.reset();
  a.words = "abc";
  CHECK_THROWS_WITH(proofs::head_analysis_options(a), Catch::StartsWith("--words: "));
  a.words = "ab";
  a.positional_share = "1.5";
  CHECK_THROWS_WITH(proofs::head_analysis_options(a), Catch::StartsWith("--positional-share: "));
  a.positional_share = "0.9";
  a.reference_format = "fp33";
  CHECK_THROWS_WITH(proofs::head_analysis_options(a), Catch::StartsWith("--reference-format: "));
}

TEST_CASE("words per length: every word when few, else distinct drawn words", "[proofs][heads]") {
  proofs::HeadAnalysisArguments a;
  a.model_file = temp_spec("words", kFlipSpec);
  a.lengths = "1..3";
  a.per_length = 4;
  const auto o = proofs::head_analysis_options(a);
  // 2 + 4 words of lengths 1, 2 (every word, alphabet order), then 4 of the 8 of length 3
  REQUIRE(o.words.size() == 10);
  CHECK(o.words[0] == "a");
  CHECK(o.words[1] == "b");
  CHECK(o.words[2] == "aa");
  CHECK(o.words[5] == "bb");
  std::set<std::string> drawn(o.words.begin() + 6, o.words.end());
  CHECK(drawn.size() == 4);
  for (const auto& w : drawn) CHECK(w.size() == 3);
}
