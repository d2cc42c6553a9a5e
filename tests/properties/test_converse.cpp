// The converse properties (properties/converse.hpp): the O(N) one-layer evaluator against
// run(), the eventual-behaviour analysis against the model on the actual words, a hand-built
// NoPE model that counts under the canonical sequential sums (T1's upper half fails there),
// the registered properties passing in their regime and failing outside it.
#include <rapidcheck.h>

#include <catch2/catch.hpp>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "attention/transformer/model_spec.hpp"
#include "attention/transformer/random_model.hpp"
#include "attention/transformer/run.hpp"
#include "attention/transformer/transformer.hpp"
#include "numeric/format.hpp"
#include "properties/check.hpp"
#include "properties/converse.hpp"
#include "properties/generators.hpp"
#include "properties/theorems.hpp"

using namespace ropesim;
using namespace ropesim::properties;
using attention::Model;
using numeric::Format;
using numeric::Value;

namespace {

Value exact(double d) { return Value::from_double_exact(d); }

// The counting model: one layer, one NoPE head, d_model 1. Embeddings BOS 0, a 1, b −1,
// EOS 0; Q = K = 0 (every score 0, so e_j = 1 for every key and α_j = rnd(1/Z)); V copies the
// coordinate into the first value coordinate, the output matrix copies it back; the classifier
// reads it (weight 1, bias 0). So y = the sum over the keys, in order, of rnd(α·v_j): with
// α = rnd(1/Z), a contributes +α and b −α, and (ab)^n a gives α > 0, (ab)^n gives 0 exactly
// (α − α = 0, 0 + α = α are exact). Under sequential sums Z = 1 + 1 + ... stops growing at
// 2^p (2^p + 1 rounds back to 2^p, ties to even), so α = 2^-p for ever and the model accepts
// (ab)^n a and rejects (ab)^n for every n — not R-trivial, so not LTL[P] (T2).
Model counting_model(const Format& format, attention::Summation summation) {
  Model m;
  m.name = "counting";
  m.policy.format = format;
  m.policy.summation = summation;
  m.d_model = 1;
  m.embedding.alphabet = {"a", "b"};
  m.embedding.symbols = {{exact(1)}, {exact(-1)}};
  m.embedding.bos = {exact(0)};
  m.embedding.eos = {exact(0)};
  attention::AttentionHead head;
  head.name = "count";
  head.head_dim = 2;
  head.value_dim = 2;
  head.query = attention::Matrix::zeros(2, 1);
  head.key = attention::Matrix::zeros(2, 1);
  head.value = attention::Matrix::zeros(2, 1);
  head.value.at(0, 0) = exact(1);
  head.output = attention::Matrix::zeros(1, 2);
  head.output.at(0, 0) = exact(1);
  attention::Layer layer;
  layer.heads.push_back(std::move(head));
  m.layers.push_back(std::move(layer));
  m.classifier.weights = {exact(1)};
  m.classifier.bias = exact(0);
  m.validate();
  return m;
}

std::string ab(std::uint64_t n, bool with_a) {
  std::string w;
  for (std::uint64_t k = 0; k < n; ++k) w += "ab";
  return with_a ? w + "a" : w;
}

const IdentityWords kAbA{"", "a", "b", ""};

// A random one-layer model of the converse generator's shape (converse_property).
Model random_one_layer(const Format& format, bool periodic, attention::Summation summation,
                       std::uint64_t seed) {
  attention::RandomModelOptions shape;
  shape.format = format;
  shape.layers = 1;
  shape.heads = 1 + seed % 2;
  shape.d_model = 1 + seed % 4;
  shape.head_dim = 2 + 2 * (seed / 2 % 2);
  shape.ffn = seed % 3 != 0;
  if (seed % 5 == 1) shape.norms = attention::NormPlacement::post;
  if (seed % 5 == 2) shape.norms = attention::NormPlacement::pre;
  shape.rotary = periodic ? attention::RandomRotary::periodic : attention::RandomRotary::none;
  shape.max_period = 3;
  Model m = attention::random_model(shape, seed);
  if (seed % 3 != 0) sparsify(m, seed, seed % 3 == 2);
  m.policy.summation = summation;
  return m;
}

}  // namespace

TEST_CASE("one_layer_output equals run() bit for bit", "[converse]") {
  // The EOS-only evaluator must be the model: random one-layer models (NoPE and r3 tables;
  // sequential and exact sums; four formats), every word up to length 5 and a few longer ones.
  const Format formats[] = {Format::fp16(), Format::bf16(), Format::fp8e4m3(), Format::ieee(5, 4)};
  int compared = 0;
  for (std::uint64_t seed = 0; seed < 16; ++seed) {
    for (const auto summation : {attention::Summation::sequential, attention::Summation::exact}) {
      const Model m = random_one_layer(formats[seed % 4], seed % 2 == 1, summation, seed);
      std::vector<std::string> words{""};
      for (std::size_t length = 1; length <= 5; ++length) {
        for (std::size_t bits = 0; bits < (1u << length); ++bits) {
          std::string w;
          for (std::size_t i = 0; i < length; ++i) w += (bits >> i) & 1 ? 'b' : 'a';
          words.push_back(w);
        }
      }
      words.push_back("abbabaabbbaababbbbaaab");
      words.push_back(std::string(40, 'a') + std::string(9, 'b'));
      for (const auto& w : words) {
        const Value fast = one_layer_output(m, w);
        const Value full = attention::run(m, w).output;
        INFO("seed " << seed << " word '" << w << "': " << attention::exact_decimal(fast) << " vs "
                     << attention::exact_decimal(full));
        REQUIRE(fast.same_bits(full));
        ++compared;
      }
    }
  }
  CHECK(compared == 32 * 65);
}

TEST_CASE("one_layer_output refuses what the analysis does not cover", "[converse]") {
  Model two = random_one_layer(Format::fp16(), false, attention::Summation::sequential, 3);
  two.layers.push_back(two.layers[0]);
  CHECK_THROWS_AS(one_layer_output(two, "ab"), InvalidArgument);
  Model no_bos = random_one_layer(Format::fp16(), false, attention::Summation::sequential, 3);
  no_bos.options.bos = false;
  no_bos.embedding.bos.clear();
  CHECK_THROWS_AS(one_layer_output(no_bos, "ab"), InvalidArgument);
  // |x| must be a multiple of the r3 period (lcm of the tables' periods, ≥ 2 here).
  const Model periodic = random_one_layer(Format::fp16(), true, attention::Summation::exact, 4);
  CHECK_THROWS_AS(eventual_behaviour(periodic, {"", "a", "", ""}), InvalidArgument);
}

TEST_CASE("the eventual behaviour agrees with the model on the actual words", "[converse]") {
  // For random models in small formats under sequential sums, where the thresholds are small,
  // the predicted acceptance at n = threshold .. threshold + 2·period (periodicity included)
  // is the model's on u(xy)^n x v and u(xy)^n v, evaluated from scratch.
  int checked = 0, separated = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const Format f = seed % 2 ? Format::ieee(4, 4) : Format::ieee(5, 5);
    const Model m = random_one_layer(f, false, attention::Summation::sequential, seed);
    const IdentityWords words{seed % 3 ? "b" : "", seed % 4 ? "a" : "ab", seed % 5 ? "b" : "",
                              seed % 7 ? "" : "a"};
    const auto r = eventual_behaviour(m, words, 1u << 12);
    if (!r.decided) continue;
    if (r.n_star > 200) continue;
    const std::uint64_t from = r.n_star.get_ui();
    for (std::uint64_t n = from; n < from + 2 * r.period && n < from + 8; ++n) {
      const bool with_x =
          attention::accepts_output(one_layer_output(m, repeat_word(words, n, true)));
      const bool without_x =
          attention::accepts_output(one_layer_output(m, repeat_word(words, n, false)));
      if (r.witness) {
        // Periodic from the threshold: the witness recurs with the period.
        const std::uint64_t w = r.witness->get_ui();
        if ((n - w) % r.period == 0) {
          CHECK(with_x == r.accept_with_x);
          CHECK(without_x == r.accept_without_x);
        }
      } else {
        CHECK(with_x == without_x);
      }
      ++checked;
    }
    if (r.witness) ++separated;
  }
  CHECK(checked > 40);
  INFO("separated " << separated);
  CHECK(separated > 0);
}

TEST_CASE("a NoPE model counts under sequential sums: (ab)^n a and (ab)^n apart for every n",
          "[converse]") {
  // p = 5: Z = 1 + 1 + ... stops at 32 (32 + 1 = 33 rounds to 32, ties to even), α = 1/32.
  const Format p5 = Format::ieee(5, 5);
  const Model m = counting_model(p5, attention::Summation::sequential);
  const auto r = eventual_behaviour(m, kAbA);
  REQUIRE(r.decided);
  REQUIRE(r.witness.has_value());
  CHECK(r.accept_with_x);
  CHECK_FALSE(r.accept_without_x);
  CHECK(r.period == 1);
  // run() itself, before and long after Z settles (2n + 2 keys ≥ 32 from n = 15 on).
  for (const std::uint64_t n : {0, 1, 2, 15, 16, 40, 100}) {
    const auto with_a = attention::run(m, ab(n, true));
    const auto without = attention::run(m, ab(n, false));
    INFO("n = " << n);
    CHECK(with_a.accept);
    CHECK_FALSE(without.accept);
    CHECK(attention::exact_decimal(without.output) == "0");
    if (n >= 16) CHECK(attention::exact_decimal(with_a.output) == "0.03125");  // 2^-5
  }
  // fp16: Z stops at 2048, α = 2^-11; n = 3000 blocks (6001 symbols) by the O(N) evaluator.
  const Model half = counting_model(Format::fp16(), attention::Summation::sequential);
  CHECK(attention::exact_decimal(one_layer_output(half, ab(3000, true))) == "0.00048828125");
  CHECK(attention::exact_decimal(one_layer_output(half, ab(3000, false))) == "0");
  const auto rh = eventual_behaviour(half, kAbA);
  REQUIRE(rh.witness.has_value());
  CHECK(rh.accept_with_x);
  CHECK_FALSE(rh.accept_without_x);
}

TEST_CASE("the counting model under exact sums: apart until Z overflows, then never",
          "[converse]") {
  // Exact sums rounded once, in p = 5, e = 4: max F = (2 - 2^-4)·2^7 = 248, ulp 8 in the top
  // binade, so a count rounds to ∞ from 252 = max + ulp/2 on (the tie goes to ∞: 248 is odd).
  // (ab)^n a has 2n + 2 keys (BOS included): Z = rnd(2n + 2) is finite for n ≤ 124 and ∞ from
  // n = 125, where every weight is 1/∞ = 0 and y = 0. (ab)^n has y = 0 (α − α) for every n,
  // and Z = ∞ from 2n + 1 ≥ 252, n = 126: the analysis's threshold.
  const Format f = Format::ieee(5, 4);
  const Model m = counting_model(f, attention::Summation::exact);
  const auto r = eventual_behaviour(m, kAbA);
  REQUIRE(r.decided);
  CHECK_FALSE(r.witness.has_value());
  CHECK_FALSE(r.accept_with_x);
  CHECK_FALSE(r.accept_without_x);
  CHECK(r.n_star == 126);
  CHECK(r.period == 1);
  CHECK(attention::run(m, ab(124, true)).accept);         // Z = rnd(250) = 248, α = rnd(1/248)
  CHECK_FALSE(attention::run(m, ab(125, true)).accept);   // Z = rnd(252) = ∞
  CHECK_FALSE(attention::run(m, ab(124, false)).accept);  // y = 0
  CHECK_FALSE(attention::run(m, ab(200, true)).accept);
}

TEST_CASE("the counting model in a saturating F under exact sums counts for ever", "[converse]") {
  // fp8 E4M3 has no ∞: Z saturates at 448 and α = rnd(1/448) stays non-zero.
  const Model m = counting_model(Format::fp8e4m3(), attention::Summation::exact);
  const auto r = eventual_behaviour(m, kAbA);
  REQUIRE(r.decided);
  REQUIRE(r.witness.has_value());
  CHECK(r.accept_with_x);
  CHECK_FALSE(r.accept_without_x);
  CHECK(attention::accepts_output(one_layer_output(m, ab(2000, true))));
  CHECK_FALSE(attention::accepts_output(one_layer_output(m, ab(2000, false))));
}

namespace {

PropertyOutcome run_outside(const std::string& name, ConverseClass kind,
                            attention::Summation summation,
                            std::optional<Format> format = std::nullopt) {
  ConverseSettings settings;
  settings.kind = kind;
  settings.summation = summation;
  const Theorem outside{
      {name, "outside the theorem", "converse identity", 3, 53, true},
      [settings](const CheckOptions& options) { converse_property(options, settings); }};
  CheckOptions options;
  options.trials = 1000;
  options.seed = 20261201;
  options.format = format;
  const auto outcome = run_theorem(outside, options);
  std::cout << name << ": " << (outcome.failed ? "FAILED" : "passed") << " after " << outcome.passed
            << " trials\n  " << outcome.description << "\n";
  for (const auto& line : outcome.counterexample) std::cout << "  " << line << "\n";
  std::cout << "  " << outcome.replay_command << "\n";
  return outcome;
}

}  // namespace

TEST_CASE("the converse properties fail outside the theorems", "[converse]") {
  // Same generator, canonical sequential sums (small formats): the models count.
  const auto nope =
      run_outside("nope-ltlp-sequential", ConverseClass::nope, attention::Summation::sequential);
  CHECK(nope.failed);
  CHECK(nope.description.find("told apart") != std::string::npos);
  const auto rope = run_outside("rope-p-ltlpmod-sequential", ConverseClass::rope_p,
                                attention::Summation::sequential);
  CHECK(rope.failed);
  CHECK(rope.description.find("told apart") != std::string::npos);
  // Exact sums in a saturating F (`--format p=3,e=4,overflow=saturate`).
  const auto saturating =
      run_outside("nope-ltlp-saturating", ConverseClass::nope, attention::Summation::exact,
                  numeric::parse_format("p=3,e=4,overflow=saturate"));
  CHECK(saturating.failed);
  CHECK(saturating.description.find("told apart") != std::string::npos);
}

TEST_CASE("the registered converse properties pass in their regime", "[converse]") {
  for (const std::string name : {"nope-ltlp", "rope-p-ltlpmod"}) {
    CheckOptions options;
    options.trials = 100;
    options.max_length = 1000;
    const auto outcome = run_property(name, options);
    INFO(name << ": " << outcome.description);
    for (const auto& line : outcome.counterexample) INFO(line);
    CHECK_FALSE(outcome.failed);
    CHECK_FALSE(outcome.gave_up);
    CHECK(outcome.passed == 100);
    // The n* distribution: one n* per passed trial, non-trivial draws among them.
    REQUIRE(outcome.thresholds.has_value());
    CHECK(outcome.thresholds->draws == 100);
    CHECK(outcome.thresholds->n_star.size() == 100);
    CHECK(outcome.thresholds->n_star.front() <= outcome.thresholds->median());
    CHECK(outcome.thresholds->median() <= outcome.thresholds->n_star.back());
    CHECK(outcome.thresholds->regime.find("the theorem's regime") != std::string::npos);
  }
}

TEST_CASE("the shrunk sequential-sums counterexample, re-run with run()", "[converse]") {
  // docs/TESTING.md: `nope-ltlp` with the canonical sequential sums fails after 279 trials,
  // shrunk to p=3,e=4, 1 head, d_model 2, head_dim 2, no FFN, pre-LN, weight seed 9842,
  // symmetric (b = −a, bias-free), u = "", x = "aa", y = "bb", v = "": (aabb)^n aa accepted and
  // (aabb)^n rejected for every n ≥ 2. Rebuilt here as converse_property builds it and run with
  // run() itself (quadratic, every position), far beyond the threshold. What the model is
  // (model_to_json): a = (2, 0), b = (−2, −0), BOS = EOS = 0; pre-LN without bias maps EOS to 0,
  // so q = 0, every score is 0 and attention is uniform; v_a = −v_b, v_BOS = 0; the classifier
  // reads 0.75·(−0.75)·o_1. With Z stuck at 2^3 = 8 (8 + 1 rounds to 8), α = 1/8 and the value
  // sum runs 0, t, 2t, t, 0, … : y = 0.375 after (aabb)^n aa for n ≥ 2 (0.5 at n = 1), y = 0
  // after (aabb)^n — the counting model below, found by RapidCheck.
  attention::RandomModelOptions shape;
  shape.format = Format::ieee(3, 4);
  shape.layers = 1;
  shape.heads = 1;
  shape.d_model = 2;
  shape.head_dim = 2;
  shape.ffn = false;
  shape.norms = attention::NormPlacement::pre;
  shape.rotary = attention::RandomRotary::none;
  Model m = attention::random_model(shape, 9842);
  sparsify(m, 9842, true);
  m.policy.summation = attention::Summation::sequential;
  const IdentityWords words{"", "aa", "bb", ""};
  for (const std::uint64_t n : {2, 3, 10, 60, 250}) {
    INFO("n = " << n);
    CHECK(attention::run(m, repeat_word(words, n, true)).accept);
    CHECK_FALSE(attention::run(m, repeat_word(words, n, false)).accept);
  }
  const auto r = eventual_behaviour(m, words);
  REQUIRE(r.witness.has_value());
  CHECK(*r.witness == 2);
  CHECK(r.period == 1);
  // The same model with exact sums rounded once (the registered properties' regime): no
  // eventual separation.
  m.policy.summation = attention::Summation::exact;
  const auto exact = eventual_behaviour(m, words);
  REQUIRE(exact.decided);
  CHECK_FALSE(exact.witness.has_value());
}

TEST_CASE("examples/nope_counter_fp16.json is the counting model in fp16", "[converse]") {
  // The spec shipped for `ropesim run` (docs/TESTING.md): y = 2^-11 on (ab)^1100 a (2202 keys,
  // past Z = 2048) and 0 on (ab)^1100, and the analysis separates (ab)^n a from (ab)^n.
  const Model m =
      attention::load_model(std::string(ROPESIM_SOURCE_DIR) + "/examples/nope_counter_fp16.json");
  const Model reference = counting_model(Format::fp16(), attention::Summation::sequential);
  CHECK(attention::exact_decimal(attention::run(m, ab(1100, true)).output) == "0.00048828125");
  CHECK(attention::exact_decimal(attention::run(m, ab(1100, false)).output) == "0");
  for (const std::string w : {"", "a", "aba", "abab", "aab", "abb"}) {
    CHECK(attention::run(m, w).output.same_bits(attention::run(reference, w).output));
  }
  const auto r = eventual_behaviour(m, kAbA);
  REQUIRE(r.witness.has_value());
  CHECK(r.accept_with_x);
  CHECK_FALSE(r.accept_without_x);
}

namespace {

// The model and words of a shrunk nope-ltlp counterexample, rebuilt from its "name: value" lines
// the way converse_property builds them (random_model, sparsify, the policy's summation).
struct Rebuilt {
  Model model;
  IdentityWords words;
};

Rebuilt rebuild(const std::vector<std::string>& counterexample, attention::Summation summation) {
  std::map<std::string, std::string> value;
  for (const auto& line : counterexample) {
    const auto at = line.rfind(": ");  // keys may hold ": " themselves, values never
    if (at != std::string::npos) value[line.substr(0, at)] = line.substr(at + 2);
  }
  const auto text = [&](const std::string& key) {
    INFO("counterexample key " << key);
    REQUIRE(value.count(key) == 1);
    std::string v = value.at(key);
    if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
    return v;
  };
  attention::RandomModelOptions shape;
  shape.format = numeric::parse_format(text("format"));
  shape.layers = 1;
  shape.heads = std::stoul(text("heads"));
  shape.d_model = std::stoul(text("d_model"));
  shape.head_dim = 2 * std::stoul(text("head_dim / 2"));
  shape.ffn = text("ffn") == "true";
  const int norms = std::stoi(text("norms (0 none, 1 post, 2 pre)"));
  if (norms == 1) shape.norms = attention::NormPlacement::post;
  if (norms == 2) shape.norms = attention::NormPlacement::pre;
  shape.rotary = attention::RandomRotary::none;
  const std::uint64_t seed = std::stoull(text("weight seed"));
  Rebuilt out{attention::random_model(shape, seed), {}};
  const int degenerate = std::stoi(text("sparsify (0 no, 1 yes, 2 symmetric: b = -a)"));
  if (degenerate > 0) sparsify(out.model, seed, degenerate == 2);
  out.model.policy.summation = summation;
  out.words = {text("u"), text("x"), "", text("v")};
  if (text("y = x with a, b swapped") == "true") {
    for (const char c : out.words.x) out.words.y += c == 'a' ? 'b' : 'a';
  } else {
    out.words.y = text("y");
  }
  return out;
}

}  // namespace

TEST_CASE("nope-ltlp under --summation sequential fails, shrunk to a model that counts",
          "[converse]") {
  // `ropesim check --property nope-ltlp --summation sequential --trials 200` (docs/TESTING.md).
  // The shrunk case is rebuilt from its printed lines and run with run() itself (quadratic, every
  // position, nothing shared with the analysis) at n* and far past it: the two words stay apart
  // at every n tried — the model counts, as examples/nope_counter_fp16.json does.
  CheckOptions options;
  options.trials = 200;
  options.summation = attention::Summation::sequential;
  const auto outcome = run_property("nope-ltlp", options);
  INFO(outcome.description);
  for (const auto& line : outcome.counterexample) INFO(line);
  REQUIRE(outcome.failed);
  CHECK(outcome.description.find("told apart") != std::string::npos);
  CHECK(outcome.replay_command.find("--summation sequential") != std::string::npos);
  const Rebuilt r = rebuild(outcome.counterexample, attention::Summation::sequential);
  const auto eventual = eventual_behaviour(r.model, r.words);
  REQUIRE(eventual.witness.has_value());
  const std::uint64_t from = eventual.n_star.get_ui();
  int apart = 0;
  for (const std::uint64_t n : {from, from + 1, from + 2, from + 7, from + 60, from + 150}) {
    INFO("n = " << n);
    const bool with_x = attention::run(r.model, repeat_word(r.words, n, true)).accept;
    const bool without_x = attention::run(r.model, repeat_word(r.words, n, false)).accept;
    CHECK(with_x != without_x);
    apart += with_x != without_x;
  }
  CHECK(apart == 6);
  // The replay token reproduces exactly that case.
  CheckOptions replay = options;
  replay.replay = outcome.replay_command.substr(outcome.replay_command.rfind(' ') + 1);
  const auto again = run_property("nope-ltlp", replay);
  CHECK(again.failed);
  CHECK(again.counterexample == outcome.counterexample);
}

TEST_CASE("n* of a hand-built NoPE model equals the hand-derived value", "[converse]") {
  // One NoPE head, Q = K = 0 (every e_j = 1), a and b both embedded at +1, BOS at 0: the
  // classifier reads y = Σ_j rnd(α·v_j) = the count of letters times α = rnd(1/Z), which is
  // > 0 while Z is finite and 0 once Z = ∞. Exact sums rounded once in p = 5, e = 4: max F =
  // (2 − 2^-4)·2^7 = 248, ulp 8 at the top, so a count rounds to ∞ from 252 on (the tie 252
  // goes to the even 256 = ∞). Words x = "a", y = "a": u(xy)^n x v has 2n + 2 keys (BOS
  // included), u(xy)^n v has 2n + 1. So Z = ∞ on the first from n = 125, on the second from
  // n = 126 (2n + 1 ≥ 252): n* = 126. At n* − 1 = 125 the first is rejected (Z = ∞) and the
  // second accepted (Z = rnd(251) = 248); at n* both are rejected, for every larger n too.
  Model m = counting_model(Format::ieee(5, 4), attention::Summation::exact);
  m.embedding.symbols[1] = m.embedding.symbols[0];
  const IdentityWords words{"", "a", "a", ""};
  const auto r = eventual_behaviour(m, words);
  REQUIRE(r.decided);
  CHECK(r.n_star == 126);
  CHECK_FALSE(r.witness.has_value());
  CHECK(r.period == 1);
  CHECK_FALSE(attention::run(m, repeat_word(words, 125, true)).accept);
  CHECK(attention::run(m, repeat_word(words, 125, false)).accept);
  CHECK_FALSE(attention::run(m, repeat_word(words, 126, true)).accept);
  CHECK_FALSE(attention::run(m, repeat_word(words, 126, false)).accept);
  CHECK_FALSE(attention::run(m, repeat_word(words, 127, false)).accept);
}

TEST_CASE("the reachable draw checks the identity on words run past n*", "[converse]") {
  // The reachable draw, exact sums (the theorem's regime): passes, every passed case checked
  // on the words actually run at n* ≤ n < n* + max(period, 4).
  CheckOptions options;
  options.trials = 100;
  options.draw = ConverseDraw::reachable;
  const auto outcome = run_property("nope-ltlp", options);
  INFO(outcome.description);
  CHECK_FALSE(outcome.failed);
  CHECK_FALSE(outcome.gave_up);
  REQUIRE(outcome.thresholds.has_value());
  CHECK(outcome.thresholds->draws == outcome.passed);
  CHECK(outcome.thresholds->computed == outcome.passed);
  CHECK(outcome.thresholds->n_star.size() == static_cast<std::size_t>(outcome.passed));
  // Deliberately broken: the words are checked from n = 1 instead of n* (an analysis that told
  // the wrong threshold). Counting models in the exact regime separate before their
  // denominators reach ∞, and the words run catch it — by computation, not by the analysis,
  // which still sees no eventual separation.
  ConverseSettings broken;
  broken.kind = ConverseClass::nope;
  broken.draw = ConverseDraw::reachable;
  broken.n_star_for_testing = [](const mpz_class&) { return mpz_class(1); };
  const Theorem wrong{
      {"nope-ltlp-wrong-n-star", "deliberately broken", "converse identity", 3, 53, true},
      [broken](const CheckOptions& o) { converse_property(o, broken); }};
  CheckOptions o;
  o.trials = 200;
  const auto caught = run_theorem(wrong, o);
  INFO(caught.description);
  CHECK(caught.failed);
  CHECK(caught.description.find("on the words actually run") != std::string::npos);
  CHECK(caught.description.find("predicted no separation") != std::string::npos);
}

TEST_CASE("sequential sums in the reachable draw fail by computation", "[converse]") {
  CheckOptions options;
  options.trials = 200;
  options.summation = attention::Summation::sequential;
  options.draw = ConverseDraw::reachable;
  const auto outcome = run_property("nope-ltlp", options);
  INFO(outcome.description);
  CHECK(outcome.failed);
  CHECK(outcome.description.find("on the words actually run") != std::string::npos);
  CHECK(outcome.description.find("the analysis agrees") != std::string::npos);
}

TEST_CASE("pairwise summation is decided on words run and says so", "[converse]") {
  CheckOptions options;
  options.trials = 20;
  options.max_length = 200;
  options.summation = attention::Summation::pairwise;
  const auto outcome = run_property("nope-ltlp", options);
  INFO(outcome.description);
  CHECK_FALSE(outcome.gave_up);
  if (outcome.failed) {
    CHECK(outcome.description.find("a bounded observation") != std::string::npos);
  } else {
    REQUIRE(outcome.thresholds.has_value());
    CHECK(outcome.thresholds->n_star.empty());
    CHECK(outcome.thresholds->decided_by.find("words run") != std::string::npos);
  }
}

TEST_CASE("the hypotheses are refused where they do not apply", "[converse]") {
  CheckOptions options;
  options.summation = attention::Summation::sequential;
  CHECK_THROWS_AS(run_property("compiler-mod", options), InvalidArgument);
  options.summation.reset();
  options.draw = ConverseDraw::reachable;
  CHECK_THROWS_AS(run_property("periodic-r3", options), InvalidArgument);
  options.format = Format::fp16();
  CHECK_THROWS_AS(run_property("nope-ltlp", options), InvalidArgument);
  options.format.reset();
  options.summation = attention::Summation::pairwise;
  CHECK_THROWS_AS(run_property("nope-ltlp", options), InvalidArgument);
}
