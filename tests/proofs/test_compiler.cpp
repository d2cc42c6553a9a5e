// The formula -> transformer compiler (THEORY §7 C1, C4; LC25 App B.3; RoPE-X App C.3).
// Expectations are independent of the code under test: membership of (aa)*, (ab)*, aΣ* and
// "N ≡ 0 (mod 3) and some b" by hand-written predicates on the word; every subformula
// coordinate against the logic module's evaluator (logic/evaluate.hpp, a separate
// implementation of THEORY §4); the P-head certificate against a native IEEE binary32 loop.
#include <rapidcheck.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "attention/transformer/model_spec.hpp"
#include "attention/transformer/run.hpp"
#include "core/error.hpp"
#include "language_support.hpp"
#include "logic/evaluate.hpp"
#include "logic/formula.hpp"
#include "numeric/format.hpp"
#include "proofs/compiler/compiler.hpp"

using namespace ropesim;
using numeric::Format;
using namespace language_test;

namespace {

proofs::CompileOptions options_for(const Format& f, std::uint64_t limit = 10000) {
  proofs::CompileOptions o;
  o.policy.format = f;
  o.certify_limit = limit;
  return o;
}

bool ends_with_a(const std::string& w) { return !w.empty() && w.back() == 'a'; }
bool second_to_last_b(const std::string& w) { return w.size() >= 2 && w[w.size() - 2] == 'b'; }

struct Case {
  const char* formula;
  bool (*member)(const std::string&);
};

const Case kCases[] = {
    {"mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !a)", in_aa_star},
    {"mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)", in_ab_star},
    {"P(a & !P true)", in_a_sigma_star},
    {"mod(3,1) & P b", mod3_and_some_b},
};

// Bounded (Y^k, C5): exact only up to the certified length N_max^(k) (≥ 10 in these formats).
const Case kBoundedCases[] = {
    {"P(b & Y a)", contains_ab},
    {"Y a", ends_with_a},
    {"Y^2 b", second_to_last_b},
};

std::string random_word(std::mt19937_64& rng, std::size_t n, double p_a) {
  std::bernoulli_distribution coin(p_a);
  std::string w;
  for (std::size_t i = 0; i < n; ++i) w += coin(rng) ? 'a' : 'b';
  return w;
}

}  // namespace

TEST_CASE(
    "compiled (aa)*, (ab)*, aΣ*, mod(3,1) & P b, Σ*abΣ*, Σ*a, Σ*bΣ accept exactly their languages "
    "on every word up to length 10",
    "[compiler][bulk]") {
  std::vector<std::string> words;
  words = ab_words_up_to(10);
  std::vector<Case> cases(std::begin(kCases), std::end(kCases));
  cases.insert(cases.end(), std::begin(kBoundedCases), std::end(kBoundedCases));
  for (const Format& f : {Format::fp16(), Format::bf16(), Format::fp32()}) {
    for (const Case& c : cases) {
      const ltl::Formula formula = ltl::parse(c.formula);
      const proofs::CompiledModel compiled = proofs::compile(formula, {"a", "b"}, options_for(f));
      CAPTURE(f.name, c.formula);
      if (compiled.certified_length) REQUIRE(*compiled.certified_length >= 10);
      std::size_t accepted = 0;
      for (const std::string& w : words) {
        const bool expected = c.member(w);
        const auto letters = ltl::letters(w);
        REQUIRE(ltl::accepts(formula, letters) == expected);  // the formula is the language
        const bool got = attention::run(compiled.model, w).accept;
        if (got != expected)
          FAIL_CHECK("word '" << w << "': model " << got << ", language " << expected);
        accepted += got;
      }
      CHECK(accepted > 0);
      CHECK(accepted < words.size());
    }
  }
}

TEST_CASE("every subformula coordinate is exactly 0 or 1, 0 at BOS, and equals the logic's value",
          "[compiler]") {
  std::vector<std::string> words;
  words = ab_words_up_to(6);
  std::vector<Case> cases(std::begin(kCases), std::end(kCases));
  cases.insert(cases.end(), std::begin(kBoundedCases), std::end(kBoundedCases));
  cases.push_back({"Y^2 (a | mod(2,0)) & !P(b & Y b)", nullptr});
  for (const Format& f : {Format::fp16(), Format::bf16(), Format::fp32()}) {
    for (const Case& c : cases) {
      const ltl::Formula formula = ltl::parse(c.formula);
      const proofs::CompiledModel compiled = proofs::compile(formula, {"a", "b"}, options_for(f));
      CAPTURE(f.name, c.formula);
      attention::RunOptions ro;
      ro.trace_all = true;
      for (const std::string& w : words) {
        const attention::RunResult r = attention::run(compiled.model, w, ro);
        const ltl::Evaluation truth = ltl::evaluate(formula, ltl::letters(w));
        REQUIRE(!r.layers.empty());
        const auto& last = r.layers.back();
        for (std::size_t id = 0; id < formula.size(); ++id) {
          const std::string& name = compiled.node_coordinates[id];
          if (name.empty()) continue;
          const std::size_t k = compiled.space.index(name);
          for (const attention::PositionTrace& pt : last) {
            const numeric::Value& v = pt.output[k];
            const bool expected = truth.holds(static_cast<ltl::NodeId>(id), pt.position);
            if (pt.position == 0) REQUIRE(v.is_zero());
            INFO("word '" << w << "' position " << pt.position << " coordinate " << name);
            REQUIRE(v.is_finite());
            REQUIRE(attention::exact_rational(v) == (expected ? 1 : 0));
          }
        }
      }
    }
  }
}

TEST_CASE("compiled models agree with the languages on random words of length 1000",
          "[compiler][bulk]") {
  std::mt19937_64 rng(20261201);
  for (const Format& f : {Format::fp16(), Format::bf16(), Format::fp32()}) {
    for (const Case& c : kCases) {
      const ltl::Formula formula = ltl::parse(c.formula);
      const proofs::CompiledModel compiled = proofs::compile(formula, {"a", "b"}, options_for(f));
      CAPTURE(f.name, c.formula);
      std::vector<std::string> ws = {std::string(1000, 'a'), std::string(999, 'a'),
                                     random_word(rng, 1000, 0.5), random_word(rng, 999, 0.99)};
      std::string ab;
      for (int i = 0; i < 500; ++i) ab += "ab";
      ws.push_back(ab);
      ws.push_back(ab + "a");
      for (const auto& w : ws) {
        CAPTURE(w.size());
        CHECK(attention::run(compiled.model, w).accept == c.member(w));
      }
    }
  }
}

TEST_CASE("the P-head certificate: fp16 and bf16 certify every length, fp32 the checked counts",
          "[compiler]") {
  // fp16: the sequential sum of ones stops at 2048 (THEORY §1), bf16 at 256; then h(c) is a
  // sum of equal terms that stops growing, so every count is certified.
  attention::EvaluationPolicy p16;
  p16.format = Format::fp16();
  const auto c16 = proofs::certify_past_head(p16, mpq_class(1, 4), mpq_class(1, 2), 100000);
  CHECK(!c16.certified_count);
  REQUIRE(c16.stagnation_count);
  CHECK(*c16.stagnation_count >= 2048);
  attention::EvaluationPolicy pb;
  pb.format = Format::bf16();
  const auto cb = proofs::certify_past_head(pb, mpq_class(1, 4), mpq_class(1, 2), 100000);
  CHECK(!cb.certified_count);
  REQUIRE(cb.stagnation_count);
  CHECK(*cb.stagnation_count >= 256);

  // fp32 against native IEEE binary32 (round-to-nearest-even, -ffp-contract=off): h(c) is the
  // float sum of c copies of 1.0f / float(c) (Z_c = c exactly below 2^24).
  attention::EvaluationPolicy p32;
  const std::uint64_t limit = 3000;
  const auto c32 = proofs::certify_past_head(p32, mpq_class(1, 4), mpq_class(1, 2), limit);
  REQUIRE(c32.certified_count);
  CHECK(*c32.certified_count == limit);
  volatile float lo = 2, hi = 0;
  for (std::uint64_t c = 1; c <= limit; ++c) {
    const volatile float alpha = 1.0f / static_cast<float>(c);
    volatile float h = 0;
    for (std::uint64_t k = 0; k < c; ++k) h = h + alpha;
    if (h < lo) lo = h;
    if (h > hi) hi = h;
  }
  CHECK(c32.min_output.to_double() == static_cast<double>(lo));
  CHECK(c32.max_output.to_double() == static_cast<double>(hi));
  CHECK(lo < 1.0f);  // the head output is not exactly 1: re-binarisation is needed
}

TEST_CASE(
    "mod(97,0) is refused at fp8e4m3 naming the failure and the smallest preset; fp32 compiles it",
    "[compiler]") {
  const ltl::Formula formula = ltl::parse("mod(97,0) & P a");
  std::string message;
  try {
    (void)proofs::compile(formula, {"a", "b"}, options_for(Format::fp8e4m3()));
  } catch (const InvalidArgument& e) {
    message = e.what();
  }
  INFO(message);
  REQUIRE(!message.empty());
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.find("MOD_97^0") != std::string::npos);
  CHECK(message.find("fp8e4m3") != std::string::npos);
  CHECK(message.find("the smallest preset format that compiles it is ") != std::string::npos);
  const proofs::CompiledModel ok =
      proofs::compile(formula, {"a", "b"}, options_for(Format::fp32()));
  // N + 1 ≡ 0 (mod 97) and some a: words of length 96 with an a, not of length 95.
  CHECK(attention::run(ok.model, std::string(96, 'a')).accept);
  CHECK(!attention::run(ok.model, std::string(96, 'b')).accept);
  CHECK(!attention::run(ok.model, std::string(95, 'a')).accept);
  CHECK(attention::run(ok.model, std::string(192, 'b') + "a").accept);
}

TEST_CASE("Y^k is a bounded operator: the certified length is the smallest N_max^(k)",
          "[compiler]") {
  const auto compiled =
      proofs::compile(ltl::parse("Y a | Y^3 b"), {"a", "b"}, options_for(Format::fp16()));
  REQUIRE(compiled.bounded_heads.size() == 2);
  REQUIRE(compiled.certified_length);
  CHECK(*compiled.certified_length ==
        std::min(compiled.bounded_heads[0].n_max, compiled.bounded_heads[1].n_max));
  // Y^3 needs the gate P^3 true: three P heads before the Y^3 head.
  std::size_t p_heads = 0;
  for (const auto& layer : compiled.layers) {
    for (const auto& h : layer.heads) p_heads += h.kind == "P";
  }
  CHECK(p_heads == 3);
  // Words at the certified length agree with the language.
  const std::size_t L = *compiled.certified_length;
  std::mt19937_64 rng(7);
  for (int t = 0; t < 4; ++t) {
    const std::string w = random_word(rng, L, 0.5);
    const bool expected = (w.back() == 'a') || (w.size() >= 3 && w[w.size() - 3] == 'b');
    CHECK(attention::run(compiled.model, w).accept == expected);
  }
}

TEST_CASE("the compiler refuses S with one line", "[compiler]") {
  for (const char* text : {"a S b", "P(a S Y b)"}) {
    const ltl::Formula formula = ltl::parse(text);
    CAPTURE(text);
    CHECK_THROWS_AS(proofs::compile(formula, {"a", "b"}, options_for(Format::fp32())),
                    InvalidArgument);
  }
  CHECK_THROWS_AS(proofs::compile(ltl::parse("a"), {}, options_for(Format::fp32())),
                  InvalidArgument);
  CHECK_THROWS_AS(proofs::compile(ltl::parse("a"), {"a", "a"}, options_for(Format::fp32())),
                  InvalidArgument);
}

/// The reason of the refusal `compile` throws, or nullopt if it compiles.
std::optional<proofs::RefusalReason> refusal_of(const std::string& text,
                                                const proofs::CompileOptions& options) {
  try {
    (void)proofs::compile(ltl::parse(text), {"a", "b"}, options);
  } catch (const proofs::Refusal& e) {
    return e.reason();
  }
  return std::nullopt;
}

TEST_CASE("every compiler refusal carries a typed reason (properties never read the message)",
          "[compiler]") {
  using R = proofs::RefusalReason;
  CHECK(refusal_of("a S b", options_for(Format::fp32())) == R::input);
  // p=8,e=3: largest finite 15.9375, f_large = 6.9375; MOD_5 needs a scale of at least
  // 2*6.9375/(1 - cos 72°) = 20.08 > 15.9375, so the atom is refused for its margins (C4),
  // with or without the preset suggestion appended to the message.
  auto tiny = options_for(numeric::parse_format("p=8,e=3"), 100);
  tiny.suggest_format = false;
  CHECK(refusal_of("mod(5,0)", tiny) == R::mod_margin);
  tiny.suggest_format = true;
  CHECK(refusal_of("mod(5,0)", tiny) == R::mod_margin);
  // Pairwise summation: the certificates assume sequential sums.
  auto pairwise = options_for(Format::fp32());
  pairwise.policy.summation = attention::Summation::pairwise;
  CHECK(refusal_of("P a", pairwise) == R::summation);
  // Under upward rounding f_large is undefined (THEORY §1).
  auto upward = options_for(Format::fp16());
  upward.policy.rounding = numeric::Rounding::upward;
  CHECK(refusal_of("P a", upward) == R::no_f_large);
  CHECK(refusal_of("P a", options_for(Format::fp16())) == std::nullopt);
}

TEST_CASE("leaf roots and atoms outside the alphabet", "[compiler]") {
  // `a` at N+1 is false (EOS is no symbol); `true` accepts everything; mod(1,0) is ⊤.
  const auto o = options_for(Format::fp16());
  CHECK(!attention::run(proofs::compile(ltl::parse("a"), {"a", "b"}, o).model, "aa").accept);
  CHECK(attention::run(proofs::compile(ltl::parse("true"), {"a", "b"}, o).model, "").accept);
  CHECK(attention::run(proofs::compile(ltl::parse("mod(1,0)"), {"a", "b"}, o).model, "b").accept);
  // An atom outside the alphabet is refused, as classify --formula refuses it.
  CHECK_THROWS_WITH(proofs::compile(ltl::parse("!c"), {"a", "b"}, o),
                    Catch::Contains("atom 'c' is not a letter of the alphabet"));
  CHECK_THROWS_WITH(proofs::compile(ltl::parse("P c"), {"a", "b"}, o),
                    Catch::Contains("atom 'c' is not a letter of the alphabet"));
}

TEST_CASE("the model spec keeps the coordinate names; files without them still load",
          "[compiler]") {
  const auto compiled =
      proofs::compile(ltl::parse("P(a & !P true)"), {"a", "b"}, options_for(Format::bf16()));
  const nlohmann::json j = attention::model_to_json(compiled.model);
  REQUIRE(j.contains("coordinates"));
  CHECK(j["coordinates"][0] == "bos");
  CHECK(j["coordinates"][1] == "top");
  CHECK(j["coordinates"][2] == "sym:a");
  const attention::Model back = attention::model_from_json(j);
  CHECK(back.coordinates == compiled.space.names());
  nlohmann::json old = j;
  old.erase("coordinates");
  const attention::Model unnamed = attention::model_from_json(old);
  CHECK(unnamed.coordinates.empty());
  CHECK(attention::run(unnamed, "ab").accept);
  nlohmann::json wrong = j;
  wrong["coordinates"].erase(0);
  CHECK_THROWS_AS(attention::model_from_json(wrong), InvalidArgument);
}

// Hidden (minutes): one word of length about 10^4 per formula and format (run it with
// ./build/tests/test_proofs "[.long]"); attention::run is O(N²) per head.
TEST_CASE("compiled models agree with the languages on words of length 10^4", "[.long]") {
  std::mt19937_64 rng(10000);
  std::string ab;
  for (int i = 0; i < 5000; ++i) ab += "ab";
  for (const Format& f : {Format::fp16(), Format::bf16(), Format::fp32()}) {
    const std::string words[] = {std::string(10000, 'a'), ab, random_word(rng, 10000, 0.5),
                                 random_word(rng, 9999, 0.9)};
    for (std::size_t k = 0; k < 4; ++k) {
      const Case& c = kCases[k];
      const ltl::Formula formula = ltl::parse(c.formula);
      const proofs::CompiledModel compiled = proofs::compile(formula, {"a", "b"}, options_for(f));
      CAPTURE(f.name, c.formula, words[k].size());
      if (compiled.certified_length) REQUIRE(*compiled.certified_length >= words[k].size());
      CHECK(attention::run(compiled.model, words[k]).accept == c.member(words[k]));
    }
  }
}

TEST_CASE(
    "directed rounding: compiled (ab)* and aΣ* in fp16 are exact under toward-zero and downward",
    "[compiler]") {
  std::vector<std::string> words;
  words = ab_words_up_to(8);
  for (const numeric::Rounding r : {numeric::Rounding::toward_zero, numeric::Rounding::downward}) {
    auto o = options_for(Format::fp16());
    o.policy.rounding = r;
    for (std::size_t k : {std::size_t{1}, std::size_t{2}}) {
      const Case& c = kCases[k];
      const proofs::CompiledModel compiled = proofs::compile(ltl::parse(c.formula), {"a", "b"}, o);
      CAPTURE(numeric::to_string(r), c.formula);
      for (const std::string& w : words) {
        CAPTURE(w);
        CHECK(attention::run(compiled.model, w).accept == c.member(w));
      }
    }
  }
  // Round-up has no f_large (THEORY §1): refused, and no preset helps.
  auto up = options_for(Format::fp16());
  up.policy.rounding = numeric::Rounding::upward;
  try {
    (void)proofs::compile(ltl::parse("P a"), {"a", "b"}, up);
    FAIL("compiled under round-up");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("f_large(fp16) is undefined") != std::string::npos);
    CHECK(std::string(e.what()).find("no preset format compiles it") != std::string::npos);
  }
}

namespace {

// A random LTL[P,MOD,Y] formula (no S) of depth ≤ `depth`: operators at every inner node,
// atoms a, b (the alphabet) and c (outside it), true and mod(m,r) at the leaves; equal
// subformulas become one node (hash-consing), so the DAG shares them.
ltl::NodeId random_node(ltl::Formula& f, int depth) {
  const int op = depth == 0 ? *rc::gen::inRange(0, 3) : *rc::gen::inRange(3, 10);
  switch (op) {
    case 0:
      return f.symbol(std::string(1, static_cast<char>('a' + *rc::gen::inRange(0, 3))));
    case 1:
      return f.top();
    case 2: {
      const auto m = *rc::gen::inRange<std::uint64_t>(1, 5);
      return f.modulo(m, *rc::gen::inRange<std::uint64_t>(0, m));
    }
    case 3:
      return f.negation(random_node(f, depth - 1));
    case 4: {
      const auto x = random_node(f, depth - 1);
      return f.conjunction(x, random_node(f, depth - 1));
    }
    case 5: {
      const auto x = random_node(f, depth - 1);
      return f.disjunction(x, random_node(f, depth - 1));
    }
    case 6:
    case 7:
      return f.past(random_node(f, depth - 1));
    case 8:
      return f.yesterday(random_node(f, depth - 1), *rc::gen::inRange<std::uint64_t>(1, 3));
    default:
      return f.negation(f.past(random_node(f, depth - 1)));
  }
}

ltl::Formula random_compilable_formula(int max_depth) {
  ltl::Formula f;
  f.set_root(random_node(f, *rc::gen::inRange(2, max_depth + 1)));
  return f;
}

}  // namespace

TEST_CASE(
    "property: random formulas compile to models whose every subformula coordinate equals the "
    "logic's value",
    "[compiler][property]") {
  std::vector<std::string> words;
  words = ab_words_up_to(5);
  const bool ok = rc::check("compiled coordinates == ltl::evaluate", [&] {
    const ltl::Formula formula = random_compilable_formula(4);
    const Format f = *rc::gen::element(Format::fp16(), Format::bf16(), Format::fp32());
    // Atoms range over a..c: c is a symbol no word below uses (its coordinate is 0 throughout);
    // the alphabet must list it, as the compiler refuses atoms outside the alphabet.
    const proofs::CompiledModel compiled =
        proofs::compile(formula, {"a", "b", "c"}, options_for(f, 2000));
    RC_TAG(f.name);
    RC_TAG(compiled.bounded_heads.empty() ? "no Y" : "Y",
           compiled.mod_heads.empty() ? "no MOD" : "MOD", compiled.past ? "P" : "no P");
    attention::RunOptions ro;
    ro.trace_all = true;
    for (const std::string& w : words) {
      const attention::RunResult r = attention::run(compiled.model, w, ro);
      const ltl::Evaluation truth = ltl::evaluate(formula, ltl::letters(w));
      RC_ASSERT(r.accept == ltl::accepts(formula, ltl::letters(w)));
      if (r.layers.empty()) continue;  // a leaf root: no layer
      for (std::size_t id = 0; id < formula.size(); ++id) {
        const std::string& name = compiled.node_coordinates[id];
        if (name.empty()) continue;
        const std::size_t k = compiled.space.index(name);
        for (const attention::PositionTrace& pt : r.layers.back()) {
          const bool expected = truth.holds(static_cast<ltl::NodeId>(id), pt.position);
          RC_ASSERT(pt.output[k].is_finite());
          RC_ASSERT(attention::exact_rational(pt.output[k]) == (expected ? 1 : 0));
        }
      }
    }
  });
  CHECK(ok);
}
