// The prefix-sharing membership oracle (attention/transformer/prefix_oracle.hpp): its classifier
// values on every prefix against run() on each prefix separately (the second implementation: one
// full pass per prefix, BOS w_1..w_n EOS), bit for bit, over random models that exercise every
// switch run() has (formats, periodic-table / conventional / no RoPE, strict and non-strict
// masking, with and without BOS, post-/pre-LN, stable / online / no-max softmax); and one
// model whose answers are derived by hand.
#include <rapidcheck.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "attention/transformer/prefix_oracle.hpp"
#include "attention/transformer/random_model.hpp"
#include "attention/transformer/run.hpp"
#include "core/error.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;
using ropesim::numeric::Format;
using ropesim::numeric::Value;

namespace {

Value v(double d) { return Value::from_double_exact(d); }

/// LC25's P π_a in miniature (as tests/attention/test_transformer.cpp's contains-a): one NoPE
/// head scoring C·is_a(j), value is_a; classifier x_3 - 1/2. With C = 200 ≥ f_large(fp32)
/// the head outputs 1 at EOS iff some symbol is a (the a keys lead by 200), else 0.
Model contains_a_model() {
  Model m;
  m.policy.format = Format::fp32();
  m.d_model = 4;
  m.embedding.alphabet = {"a", "b"};
  m.embedding.symbols = {{v(1), v(1), v(0), v(0)}, {v(1), v(0), v(0), v(0)}};
  m.embedding.bos = {v(0), v(0), v(1), v(0)};
  m.embedding.eos = {v(1), v(0), v(0), v(0)};
  AttentionHead h;
  h.head_dim = 1;
  h.value_dim = 1;
  h.query = Matrix::zeros(1, 4);
  h.query_bias = {v(200)};
  h.key = Matrix{1, 4, {v(0), v(1), v(0), v(0)}};
  h.value = Matrix{1, 4, {v(0), v(1), v(0), v(0)}};
  h.output = Matrix{4, 1, {v(0), v(0), v(0), v(1)}};
  Layer layer;
  layer.heads.push_back(h);
  m.layers.push_back(layer);
  m.classifier.weights = {v(-0.5), v(0), v(0), v(1)};
  m.classifier.bias = v(0);
  return m;
}

std::string random_word(std::mt19937_64& rng, std::size_t alphabet, std::size_t length) {
  std::string w;
  for (std::size_t k = 0; k < length; ++k) w.push_back(static_cast<char>('a' + rng() % alphabet));
  return w;
}

/// Checks the oracle against run() on every prefix of `word`, bit for bit.
void check_against_run(const Model& model, const std::string& word) {
  const PrefixRun prefixes = PrefixOracle(model).run(word);
  REQUIRE(prefixes.outputs.size() == word.size() + 1);
  for (std::size_t n = 0; n <= word.size(); ++n) {
    const RunResult r = run(model, word.substr(0, n));
    INFO("word '" << word << "', prefix length " << n << ": run gives " << exact_decimal(r.output)
                  << ", the oracle " << exact_decimal(prefixes.outputs[n]));
    CHECK(prefixes.outputs[n].same_bits(r.output));
    CHECK(prefixes.accept[n] == r.accept);
  }
  // The whole word alone (one EOS query): run()'s output on the whole word, bit for bit.
  CHECK(PrefixOracle(model).output(word).same_bits(run(model, word).output));
}

}  // namespace

TEST_CASE("prefix oracle: contains-a by hand", "[prefix_oracle]") {
  // Prefixes of "bbab": ε, b, bb contain no a (reject, y = -1/2); bba, bbab do (y = 1/2).
  const Model m = contains_a_model();
  CHECK(accepts_prefixes(m, "bbab") == std::vector<bool>{false, false, false, true, true});
  const PrefixRun r = PrefixOracle(m).run("bbab");
  CHECK(r.outputs[0].to_double() == -0.5);
  CHECK(r.outputs[4].to_double() == 0.5);
  CHECK(accepts_prefixes(m, "") == std::vector<bool>{false});
  CHECK_THROWS_AS(accepts_prefixes(m, "bxa"), InvalidArgument);
  const std::vector<std::size_t> bad{0, 2};
  CHECK_THROWS_AS(PrefixOracle(m).run(bad), InvalidArgument);
}

TEST_CASE("prefix oracle equals run() on every prefix of random models", "[prefix_oracle]") {
  // Every combination of the switches, a few seeds each, random words of length 0..14.
  const std::vector<Format> formats{Format::fp16(), Format::fp32(), Format::bf16()};
  std::mt19937_64 rng(20261201);
  std::size_t models = 0;
  for (const RandomRotary rotary :
       {RandomRotary::periodic, RandomRotary::conventional, RandomRotary::none}) {
    for (const Masking masking : {Masking::strict, Masking::non_strict}) {
      for (const bool bos : {true, false}) {
        for (int norms = 0; norms < 3; ++norms) {
          for (const SoftmaxVariant softmax : {SoftmaxVariant::stable, SoftmaxVariant::online,
                                               SoftmaxVariant::no_max_subtraction}) {
            RandomModelOptions o;
            o.format = formats[models % formats.size()];
            o.alphabet_size = 2 + models % 2;
            o.layers = 1 + models % 2;
            o.heads = 1 + (models / 2) % 2;
            o.rotary = rotary;
            o.options.masking = masking;
            o.options.bos = bos;
            o.options.softmax = softmax;
            if (norms == 1) o.norms = NormPlacement::post;
            if (norms == 2) o.norms = NormPlacement::pre;
            const Model m = random_model(o, rng());
            ++models;
            INFO("model " << models << ": " << to_string(masking) << (bos ? ", BOS" : ", no BOS")
                          << ", " << to_string(softmax) << ", norms " << norms << ", rotary "
                          << static_cast<int>(rotary));
            for (int trial = 0; trial < 2; ++trial)
              check_against_run(m, random_word(rng, o.alphabet_size, rng() % 15));
          }
        }
      }
    }
  }
  CHECK(models == 108);
}

TEST_CASE("prefix oracle equals run() on long words (rotation cache grows)", "[prefix_oracle]") {
  // One oracle object answers words of growing length: the cached realised rotations are
  // re-realised for more positions, and the answers still equal run().
  RandomModelOptions o;
  o.rotary = RandomRotary::conventional;
  o.layers = 2;
  const Model m = random_model(o, 7);
  const PrefixOracle oracle(m);
  std::mt19937_64 rng(3);
  for (std::size_t length : {3u, 10u, 40u}) {
    const std::string w = random_word(rng, 2, length);
    const PrefixRun r = oracle.run(w);
    for (std::size_t n = 0; n <= length; n += 1 + length / 8) {
      CHECK(r.outputs[n].same_bits(run(m, w.substr(0, n)).output));
    }
    CHECK(r.outputs[length].same_bits(run(m, w).output));
    CHECK(oracle.output(w).same_bits(run(m, w).output));
  }
}

TEST_CASE("prefix oracle: speed-up over one run per prefix at N = 200", "[.speed][prefix_oracle]") {
  // Not a correctness test (hidden tag): reports the time of the oracle and of 201 runs.
  RandomModelOptions o;
  o.format = Format::fp16();
  o.layers = 2;
  o.heads = 2;
  o.d_model = 8;
  o.head_dim = 4;
  const Model m = random_model(o, 11);
  std::mt19937_64 rng(5);
  const std::string w = random_word(rng, 2, 200);
  const auto t0 = std::chrono::steady_clock::now();
  const PrefixRun r = PrefixOracle(m).run(w);
  const auto t1 = std::chrono::steady_clock::now();
  std::size_t agree = 0;
  for (std::size_t n = 0; n <= w.size(); ++n)
    agree += run(m, w.substr(0, n)).output.same_bits(r.outputs[n]) ? 1 : 0;
  const auto t2 = std::chrono::steady_clock::now();
  const double oracle_s = std::chrono::duration<double>(t1 - t0).count();
  const double runs_s = std::chrono::duration<double>(t2 - t1).count();
  WARN("N = 200, 2 layers x 2 heads, d_model 8, fp16: prefix oracle "
       << oracle_s << " s, 201 runs " << runs_s << " s, speed-up " << runs_s / oracle_s);
  CHECK(agree == 201);
}
