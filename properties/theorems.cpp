#include "properties/theorems.hpp"

#include <fmt/format.h>
#include <rapidcheck.h>

#include <algorithm>

#include "attention/census/census.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "attention/transformer/random_model.hpp"
#include "attention/transformer/run.hpp"
#include "attention/transformer/transformer.hpp"
#include "automata/classes.hpp"
#include "automata/export.hpp"
#include "automata/minimise.hpp"
#include "automata/monoid.hpp"
#include "logic/evaluate.hpp"
#include "logic/formula.hpp"
#include "logic/zoo.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/compiler/compiler.hpp"
#include "proofs/experiments/offset_simulation.hpp"
#include "proofs/languages/extraction.hpp"
#include "proofs/languages/formula_automaton.hpp"
#include "proofs/languages/po_formula.hpp"
#include "proofs/range/fixed_offset_head.hpp"
#include "properties/converse.hpp"
#include "properties/generators.hpp"

namespace ropesim::properties {
namespace {

using attention::RealisedRotation;

// R̂_i = R̂_j bit for bit, block by block (the census's notion of equality, THEORY §3).
bool same_rotation(const RealisedRotation& x, const RealisedRotation& y) {
  if (x.blocks.size() != y.blocks.size()) return false;
  for (std::size_t b = 0; b < x.blocks.size(); ++b) {
    if (!x.blocks[b].cos.same_bits(y.blocks[b].cos) || !x.blocks[b].sin.same_bits(y.blocks[b].sin))
      return false;
  }
  return true;
}

// Every witness the census reports for P = 1..limit is re-checked with attention::realise
// (one position at a time, not the census's streamed blocks): R̂_{i+P} ≠ R̂_i.
void check_witnesses(const attention::Schedule& s, const attention::Realisation& r,
                     const attention::CensusResult& result, std::uint64_t limit) {
  const std::uint64_t n = std::min<std::uint64_t>(limit, result.witnesses.size());
  for (std::uint64_t P = 1; P <= n; ++P) {
    const std::int64_t i = result.witnesses[P - 1];
    RC_ASSERT(i >= 0);
    const auto at = static_cast<std::uint64_t>(i);
    RC_ASSERT(!same_rotation(attention::realise(s, r, at), attention::realise(s, r, at + P)));
    // The witness is the smallest such i: every earlier i agrees (checked for small i only).
    for (std::uint64_t j = 0; j < std::min<std::uint64_t>(at, 8); ++j) {
      RC_ASSERT(same_rotation(attention::realise(s, r, j), attention::realise(s, r, j + P)));
    }
  }
}

// The smallest P in 1..L with R̂_{i+P} = R̂_i for every i in 0..L, realised one position at a
// time (a second way to the census's period, which streams blocks and hashes rotations); none
// if no P ≤ L repeats.
std::optional<std::uint64_t> brute_force_period(const attention::Schedule& s,
                                                const attention::Realisation& r, std::uint64_t L) {
  std::vector<RealisedRotation> table;
  for (std::uint64_t i = 0; i <= 2 * L; ++i) table.push_back(attention::realise(s, r, i));
  for (std::uint64_t P = 1; P <= L; ++P) {
    bool repeats = true;
    for (std::uint64_t i = 0; i <= L && repeats; ++i)
      repeats = same_rotation(table[i], table[i + P]);
    if (repeats) return P;
  }
  return std::nullopt;
}

// Def 2.1 / Prop 2.2: a rational schedule θ_d = 2π/m_d realised as r1 (the ideal phase reduced
// exactly, then cos/sin rounded once) or r3 (the periodic table) is periodic with a period
// dividing L = lcm(m_d) in every format, also far from the census window, and the census's
// minimal period is the brute-force one; r2 (phase rounded first) of the same schedule is
// reported correctly (a period that holds, or witnesses that hold). r1 makes this a check of
// the realisation, not of a table indexed by i mod m: an r1 that formed the phase θ·i in
// floating point drifts at large i and fails at the far position.
void periodic_r3(const CheckOptions& options) {
  const numeric::Format F = *format_gen(4, 53, options.format).as("format");
  const std::string spec = *periodic_schedule_gen().as("schedule");
  const attention::Schedule s = attention::parse_schedule(spec);
  const std::uint64_t L = schedule_period(s);
  attention::CensusOptions census_options;
  census_options.positions = std::max<std::uint64_t>(4 * L + 2, 16);
  const auto r3 = attention::parse_realisation("r3", F);
  const auto result = attention::census(s, r3, census_options);
  RC_ASSERT(result.period.has_value());
  RC_ASSERT(L % *result.period == 0);
  // Far from the census window: R̂_{i+L} = R̂_i.
  const std::uint64_t i = *rc::gen::inRange<std::uint64_t>(0, 1000000).as("far position i");
  RC_ASSERT(same_rotation(attention::realise(s, r3, i), attention::realise(s, r3, i + L)));
  // And the minimal period is minimal: each smaller P has a verified witness.
  check_witnesses(s, r3, result, *result.period - 1);
  RC_ASSERT(brute_force_period(s, r3, L) == result.period);

  const auto r1 = attention::parse_realisation("r1", F);
  const auto ideal = attention::census(s, r1, census_options);
  RC_ASSERT(ideal.period.has_value());
  RC_ASSERT(L % *ideal.period == 0);
  RC_ASSERT(brute_force_period(s, r1, L) == ideal.period);
  RC_ASSERT(same_rotation(attention::realise(s, r1, i), attention::realise(s, r1, i + L)));
  check_witnesses(s, r1, ideal, *ideal.period - 1);

  const auto r2 = attention::parse_realisation("r2", F);
  const auto reported = attention::census(s, r2, census_options);
  if (reported.period) {
    const std::uint64_t P = *reported.period;
    for (std::uint64_t j = 0; j + P < census_options.positions;
         j += std::max<std::uint64_t>(1, P / 2)) {
      RC_ASSERT(same_rotation(attention::realise(s, r2, j), attention::realise(s, r2, j + P)));
    }
    check_witnesses(s, r2, reported, P - 1);
  } else {
    check_witnesses(s, r2, reported, 24);
  }
}

// Prop 4.1: for an irrational rotation (g = 1, any rational g, base-derived θ_d) the census
// finds a witness of non-periodicity for every candidate period up to the bound.
void nonperiodic(const CheckOptions& options) {
  const numeric::Format F = *format_gen(4, 53, options.format).as("format");
  const std::string spec = *irrational_schedule_gen().as("schedule");
  const std::string realisation =
      *rc::gen::element(std::string("r1"), std::string("r2")).as("realisation");
  const attention::Schedule s = attention::parse_schedule(spec);
  const auto r = attention::parse_realisation(realisation, F);
  const std::uint64_t bound = std::min<std::uint64_t>(options.max_length, 256);
  attention::CensusOptions census_options;
  census_options.positions = 2 * bound + 2;
  census_options.max_period = bound;
  const auto result = attention::census(s, r, census_options);
  RC_ASSERT(!result.period.has_value());
  RC_ASSERT(result.witnesses.size() == bound);
  for (const auto w : result.witnesses) RC_ASSERT(w >= 0);
  check_witnesses(s, r, result, 24);
}

// Cor 4.1: for k ≤ L ≤ N_max^(k)(g, C, F) the Y^k transformer (C5 head + P^k gate)
// L-simulates Y^k π_a: right at every position of every word of length ≤ L.
void bounded_lookback(const CheckOptions& options) {
  const numeric::Format F = *format_gen(8, 24, options.format).as("format");
  const auto f_large = numeric::f_large(F);
  RC_PRE(f_large.has_value());
  const std::uint64_t k = *rc::gen::inRange<std::uint64_t>(1, 4).as("k");
  // C ≥ 4·f_large: C·(1 − cos 1) ≥ 1.8·f_large, so the target beats its neighbours (N_max ≥ k).
  const int scale = *rc::gen::inRange(2, 21).as("C = f_large * 2^j, j");
  proofs::FixedOffsetSpec spec;
  spec.k = k;
  spec.C = numeric::exact_rational(*f_large) * (mpq_class(1) << scale);
  // C must be finite in F (the head's biases are C·cos kg, C·sin kg rounded into F).
  while (spec.C > numeric::exact_rational(numeric::max_finite(F)) / 2) spec.C /= 2;
  spec.policy.format = F;
  const std::uint64_t limit = std::min<std::uint64_t>(options.max_length, 2000);
  proofs::ScanOptions scan;
  scan.max_length = limit;
  const auto range = proofs::certified_range(proofs::make_fixed_offset_head(spec), scan);
  RC_PRE(range.n_max >= k);
  const std::uint64_t L = *rc::gen::inRange<std::uint64_t>(k, range.n_max + 1).as("L");
  proofs::SimulationOptions simulation;
  simulation.exhaustive_length = 6;
  simulation.random_max_length = std::min<std::uint64_t>(L, options.max_length);
  simulation.random_words = 2;
  simulation.seed = *rc::gen::inRange<std::uint64_t>(1, 1000).as("word seed");
  const auto report = proofs::check_offset_simulation(spec, L, simulation);
  if (report.first) {
    RC_FAIL(fmt::format("N_max = {}, L = {}: word '{}' position {}: expected {}, got {}",
                        range.n_max, L,
                        report.first->word.size() > 60 ? report.first->word.substr(0, 60) + "..."
                                                       : report.first->word,
                        report.first->position, report.first->expected, report.first->got));
  }
}

// Prop 3.1: the binary predicate MOD_m^r(i, j) — j − i ≡ r (mod m), the relation a RoPE_P
// head compares positions by — is ∨_a (MOD_m^a(i) ∧ MOD_m^{(a+r) mod m}(j)): unary MOD atoms
// (evaluated by the logic module at both positions of one word) and Boolean logic suffice.
void binary_mod(const CheckOptions& options) {
  const std::uint64_t m = *rc::gen::inRange<std::uint64_t>(2, 9).as("m");
  const std::uint64_t r = *rc::gen::inRange<std::uint64_t>(0, m).as("r");
  const std::uint64_t top = std::clamp<std::uint64_t>(options.max_length, 1, 64);
  const std::uint64_t i = *rc::gen::inRange<std::uint64_t>(1, top + 1).as("i");
  const std::uint64_t j = *rc::gen::inRange<std::uint64_t>(1, top + 1).as("j");
  const numeric::Format F = *format_gen(8, 53, options.format).as("format");
  // The unary atoms as a RoPE_P transformer computes them: the disjunction of every MOD_m^a,
  // compiled with periodic tables (C4), each atom's coordinate read at positions i and j.
  std::string text;
  for (std::uint64_t a = 0; a < m; ++a) text += (a ? " | " : "") + fmt::format("mod({},{})", m, a);
  ltl::Formula f = ltl::parse(text);
  proofs::CompileOptions compile_options;
  compile_options.policy.format = F;
  compile_options.suggest_format = false;
  std::optional<proofs::CompiledModel> compiled;
  try {
    compiled = proofs::compile(f, {"a", "b"}, compile_options);
  } catch (const proofs::Refusal& e) {
    if (e.reason() != proofs::RefusalReason::mod_margin)
      RC_FAIL(std::string("refused: ") + e.what());
    RC_DISCARD("F cannot hold a MOD_m atom's margins (C4)");
  }
  // A word whose positions 1..N include i and j (the letters do not matter to MOD).
  const std::string word(std::max(i, j), 'a');
  attention::RunOptions run_options;
  run_options.trace_positions = {i, j};
  const auto result = attention::run(compiled->model, word, run_options);
  const auto atom_at = [&](std::uint64_t a, std::uint64_t position) {
    const ltl::NodeId id = f.modulo(m, a);  // hash-consed: the node of mod(m,a) in f
    const std::string& name = compiled->node_coordinates[id];
    RC_ASSERT(!name.empty());
    std::size_t t = 0;
    while (result.traced[t] != position) ++t;
    const auto& value = result.layers.back()[t].output[compiled->space.index(name)];
    const mpq_class q = numeric::exact_rational(value);
    RC_ASSERT((q == 0 || q == 1));
    return q == 1;
  };
  bool via_unary = false;
  for (std::uint64_t a = 0; a < m; ++a)
    via_unary = via_unary || (atom_at(a, i) && atom_at((a + r) % m, j));
  const bool definition = ((j % m) + m - (i % m)) % m == r;
  RC_ASSERT(via_unary == definition);
}

// The compiled model agrees with the formula: acceptance on random words up to the tested
// length (long ones included), and on one short word every subformula coordinate at every
// position (0 at BOS, ltl::evaluate elsewhere).
void check_compiled(const CheckOptions& options, FormulaFragment fragment) {
  const std::string alphabet =
      *rc::gen::element(std::string("ab"), std::string("abc")).as("alphabet");
  const std::string text = *formula_gen(alphabet, fragment).as("formula");
  // Y^k heads run horizon's range scan (C = auto): up to p = 24 its quick limit stays small.
  const numeric::Format F =
      *format_gen(fragment == FormulaFragment::ltl_p_y ? 8 : 4,
                  fragment == FormulaFragment::ltl_p_y ? 24 : 53, options.format)
           .as("format");
  // Post-LN with the LayerNorm mirror (THEORY §7 C1) or no LayerNorm.
  const bool layer_norm = *rc::gen::arbitrary<bool>().as("layer norm");
  const ltl::Formula formula = ltl::parse(text);
  proofs::CompileOptions compile_options;
  compile_options.policy.format = F;
  compile_options.certify_limit = options.max_length + 2;
  compile_options.suggest_format = false;
  compile_options.layer_norm = layer_norm;
  std::vector<std::string> symbols;
  for (const char c : alphabet) symbols.emplace_back(1, c);
  std::optional<proofs::CompiledModel> compiled;
  try {
    compiled = proofs::compile(formula, symbols, compile_options);
  } catch (const proofs::Refusal& e) {
    // A refusal is a finding unless the theory allows it: an LTL[P] formula needs only f_large
    // and the exact constants of C1, which every binary format with p ≥ 8 has; an LTL[P,MOD]
    // formula may be refused only for a MOD atom's realised margins (C4). Anything else would
    // let a broken gadget hide behind discarded cases. The reason is the refusal's type,
    // never its message text.
    const std::string message = e.what();
    bool has_mod = false;
    for (const auto& node : formula.nodes())
      has_mod = has_mod || (node.op == ltl::Operator::modulo && node.m >= 2);
    // The LayerNorm mirror needs 2^(p-1) in F (emax ≥ p − 1), d_model ≤ 2^p and raw outputs
    // absorbed by the mean's partial sums: p ≥ 8 gives the last two for the generated formulas
    // (d_model ≤ 2^8), so with 2^(p-1) finite any other refusal is a finding.
    if (e.reason() == proofs::RefusalReason::layer_norm_mirror && F.precision >= 8)
      RC_FAIL("LayerNorm mirror refused: " + message);
    if (e.reason() == proofs::RefusalReason::layer_norm_gain) RC_DISCARD("2^(p-1) is not in F");
    if (fragment == FormulaFragment::ltl_p && F.precision >= 8)
      RC_FAIL("LTL[P] formula refused: " + message);
    // A Y^k head may be refused only when its certified range N_max^(k) < k in F (THEORY §6).
    if (fragment == FormulaFragment::ltl_p_y && e.reason() != proofs::RefusalReason::offset_head &&
        F.precision >= 8) {
      RC_FAIL("refused for a reason other than a Y^k head's range (" +
              std::string(proofs::to_string(e.reason())) + "): " + message);
    }
    if (fragment == FormulaFragment::ltl_p_mod &&
        (!has_mod || e.reason() != proofs::RefusalReason::mod_margin) && F.precision >= 8) {
      RC_FAIL("refused for a reason other than a MOD margin (" +
              std::string(proofs::to_string(e.reason())) + "): " + message);
    }
    RC_DISCARD("F refused by the compiler (MOD margins, or p < 8)");
  }
  if (fragment == FormulaFragment::ltl_p) {
    // T1: LTL[P] needs no positional encoding at all.
    for (const auto& layer : compiled->model.layers) {
      for (const auto& head : layer.heads) RC_ASSERT(head.rotary.empty());
    }
  }
  const std::uint64_t longest = std::min<std::uint64_t>(
      options.max_length, compiled->certified_length.value_or(options.max_length));
  RC_PRE(longest >= 1);
  // A short word with every coordinate checked.
  const std::string short_word =
      *word_gen(alphabet, 0, std::min<std::uint64_t>(longest, 8)).as("short word");
  {
    attention::RunOptions run_options;
    run_options.trace_all = true;
    const auto result = attention::run(compiled->model, short_word, run_options);
    const auto truth = ltl::evaluate(formula, ltl::letters(short_word));
    for (std::size_t t = 0; t < result.traced.size(); ++t) {
      const std::uint64_t position = result.traced[t];
      const auto& stream =
          result.layers.empty() ? result.traced_embeddings[t] : result.layers.back()[t].output;
      for (ltl::NodeId id = 0; id < formula.size(); ++id) {
        const std::string& name = compiled->node_coordinates[id];
        if (name.empty()) continue;
        const auto& value = stream[compiled->space.index(name)];
        const bool expected = position != 0 && truth.holds(id, position);
        RC_ASSERT(numeric::exact_rational(value) == (expected ? 1 : 0));
        if (layer_norm && compiled->space.contains("mirror:" + name)) {
          const auto& mirror = stream[compiled->space.index("mirror:" + name)];
          RC_ASSERT(numeric::exact_rational(mirror) == (expected ? 0 : 1));
        }
      }
    }
    RC_ASSERT(result.accept == ltl::accepts(formula, ltl::letters(short_word)));
  }
  // Long words: acceptance (the formula read at N + 1).
  for (int k = 0; k < 2; ++k) {
    const std::string word = *word_gen(alphabet, 1, longest).as("long word");
    const auto result = attention::run(compiled->model, word);
    RC_ASSERT(result.accept == ltl::accepts(formula, ltl::letters(word)));
  }
}

// Lemma 3.2 / T5 (lower bound): every LTL[P,MOD] formula compiles, in every format the
// compiler accepts, to a RoPE_P transformer that accepts w iff the formula holds at N + 1.
void compiler_mod(const CheckOptions& options) {
  check_compiled(options, FormulaFragment::ltl_p_mod);
}

// Cor 4.1 / C5 in the compiler: LTL[P] formulas with Y^k (k ≤ 3) compile, each Y^k a
// conventional fixed-offset head on single:g=1 with C = auto, and the model accepts w iff the
// formula holds at N + 1 for every word up to the model's certified length (the smallest
// N_max^(k) of its heads). Words past the certificate are not claimed and not tested.
void compiler_y(const CheckOptions& options) { check_compiled(options, FormulaFragment::ltl_p_y); }

// T1: the same for LTL[P] formulas, compiled without any positional encoding.
void compiler_nope(const CheckOptions& options) { check_compiled(options, FormulaFragment::ltl_p); }

// The compiled LTL[P] model of `text` over {a, b} in F, switched to LC25's no-BOS convention
// (`w EOS`) with the given masking (THEORY §2). Its P heads need no BOS: with no earlier ψ
// every key ties and every value is 0. nullopt when the compiler refuses F.
std::optional<attention::Model> no_bos_model(const std::string& text, const numeric::Format& F,
                                             attention::Masking masking,
                                             std::uint64_t certify_limit) {
  proofs::CompileOptions compile_options;
  compile_options.certify_limit = certify_limit;
  compile_options.policy.format = F;
  compile_options.suggest_format = false;
  try {
    attention::Model model = proofs::compile(ltl::parse(text), {"a", "b"}, compile_options).model;
    model.options.bos = false;
    model.options.masking = masking;
    model.embedding.bos.clear();
    return model;
  } catch (const InvalidArgument&) {
    return std::nullopt;
  }
}

// Masking (THEORY §2; LC25 Thm F.4, proved without BOS), the strict half: strict masking
// without BOS recognises bbΣ*: the compiled formula P(b ∧ ¬P⊤) ∧ P(b ∧ P⊤ ∧ ¬P P⊤)
// ("w_1 = w_2 = b") accepts exactly the words that start with bb.
// The non-strict half is not a property: its argument (every position of b^n holds the
// representation of position 1, as each sees n identical keys and values) holds in exact
// arithmetic but not under rounding — averaging 7 equal values with weights round_F(1/7) does
// not give the value back in p = 8 (seen with `P b`, n = 7, p=8,e=5; docs/CLI.md).
void masking_strict(const CheckOptions& options) {
  const numeric::Format F = *format_gen(8, 53, options.format).as("format");
  const auto strict = no_bos_model("P(b & !P true) & P(b & P true & !P P true)", F,
                                   attention::Masking::strict, options.max_length + 2);
  RC_ASSERT(strict.has_value());
  for (int k = 0; k < 3; ++k) {
    const std::string word =
        *word_gen("ab", 0, std::min<std::uint64_t>(options.max_length, 200)).as("word");
    const bool in_language = word.size() >= 2 && word[0] == 'b' && word[1] == 'b';
    RC_ASSERT(attention::run(*strict, word).accept == in_language);
  }
}

// Masking (THEORY §2; LC25 Thm F.4, proved without BOS), the step of the non-strict half that
// holds in F. Without BOS and without positional encoding, under non-strict masking, position 2
// of a word b·b·u sees two keys that both hold position 1's representation: its scores tie, the
// weights are round_F(1/2) = 1/2 and the output is round(v/2) + round(v/2) = v (halving is exact
// for normal v), so position 2 holds position 1's representation after every layer, for every
// model: no readout of position 2 tells "b" from "bb". Checked on random NoPE models (weights
// k/4, 1–3 layers, optional FFN and LayerNorm) in random formats. What does NOT carry over to F
// is the exact-arithmetic step to every position of b^n: averaging n ≥ 3 equal values with
// weights round_F(1/n) need not return the value (p=8,e=5, n = 7: 0.9921875; docs/CLI.md), and
// ropesim's EOS readout sees one key more for bb than for b.
void masking_nonstrict(const CheckOptions& options) {
  attention::RandomModelOptions shape;
  shape.format = *format_gen(4, 53, options.format).as("format");
  shape.layers = *rc::gen::inRange<std::size_t>(1, 4).as("layers");
  shape.heads = *rc::gen::inRange<std::size_t>(1, 3).as("heads per layer");
  shape.d_model = *rc::gen::inRange<std::size_t>(2, 7).as("d_model");
  shape.head_dim = 2 * *rc::gen::inRange<std::size_t>(1, 3).as("head_dim / 2");
  shape.rotary = attention::RandomRotary::none;
  shape.ffn = *rc::gen::arbitrary<bool>().as("ffn");
  const int norms = *rc::gen::inRange(0, 3).as("norms (0 none, 1 post, 2 pre)");
  if (norms == 1) shape.norms = attention::NormPlacement::post;
  if (norms == 2) shape.norms = attention::NormPlacement::pre;
  shape.options.bos = false;
  shape.options.masking = attention::Masking::non_strict;
  const std::uint64_t seed = *rc::gen::inRange<std::uint64_t>(0, 1000000).as("weight seed");
  const attention::Model model = attention::random_model(shape, seed);
  const std::string word =
      "bb" +
      *word_gen("ab", 0, std::min<std::uint64_t>(options.max_length, 40)).as("suffix u of bbu");
  attention::RunOptions run_options;
  run_options.trace_positions = {1, 2};
  const attention::RunResult result = attention::run(model, word, run_options);
  RC_ASSERT(result.traced.size() == 2u);
  for (std::size_t l = 0; l < result.layers.size(); ++l) {
    const auto& first = result.layers[l][0].output;
    const auto& second = result.layers[l][1].output;
    RC_ASSERT(first.size() == second.size());
    for (std::size_t k = 0; k < first.size(); ++k) {
      if (first[k].bits_key() != second[k].bits_key()) {
        RC_FAIL("layer " + std::to_string(l) + " coordinate " + std::to_string(k) +
                ": position 1 holds " + numeric::exact_decimal(first[k]) + ", position 2 " +
                numeric::exact_decimal(second[k]));
      }
    }
  }
}

// T2 with C3 on minimal DFAs: partially ordered ⇔ R-trivial transition monoid ⇔ the C3
// formula (LC25 Lemma C.1) defines the language. The C3 side is checked twice: its formula's
// DFA (proofs/languages/formula_automaton) is equivalent to the minimal DFA, and the logic's
// evaluator agrees with the DFA on a random word. Also: a zoo formula's DFA has the zoo's class.
void po_c3(const CheckOptions& options) {
  const std::string text = *dfa_gen().as("DFA");
  const automata::Dfa minimal =
      automata::minimise(automata::dfa_from_json(nlohmann::json::parse(text)));
  const bool po = automata::partial_order(minimal).partially_ordered;
  const automata::RTriviality monoid = automata::r_triviality(minimal, std::size_t{1} << 20);
  RC_ASSERT(monoid.r_trivial != automata::Verdict::inconclusive);
  RC_ASSERT((monoid.r_trivial == automata::Verdict::yes) == po);
  std::string letters;
  for (const auto& symbol : minimal.alphabet()) letters += symbol;
  if (po) {
    const ltl::Formula formula = proofs::po_dfa_formula(minimal);
    for (const auto& node : formula.nodes()) {
      RC_ASSERT(node.op != ltl::Operator::yesterday && node.op != ltl::Operator::since &&
                node.op != ltl::Operator::modulo);  // LTL[P]
    }
    const auto printed = [&] {
      return ltl::tree_size(formula) <= 2000 ? ltl::to_string(formula)
                                             : fmt::format("({} DAG nodes)", formula.size());
    };
    const auto witness =
        automata::counterexample(proofs::formula_dfa(formula, minimal.alphabet()), minimal);
    if (witness) {
      RC_FAIL(fmt::format("the C3 formula {} and the minimal DFA differ on the word \"{}\"",
                          printed(), minimal.text(*witness)));
    }
    const std::string word =
        *word_gen(letters, 0, std::min<std::uint64_t>(options.max_length, 64)).as("word");
    RC_ASSERT(ltl::accepts(formula, ltl::letters(word)) == minimal.accepts(minimal.word(word)));
  } else {
    RC_ASSERT_THROWS_AS(proofs::po_dfa_formula(minimal), InvalidArgument);
  }
  std::vector<std::string> named;
  for (const auto& language : ltl::zoo())
    if (!language.formula.empty()) named.push_back(language.name);
  const ltl::ZooLanguage& language =
      ltl::zoo_language(*rc::gen::elementOf(named).as("zoo language"));
  const auto c =
      automata::classify(proofs::formula_dfa(ltl::parse(language.formula), language.alphabet));
  RC_ASSERT(automata::to_string(c.language_class) == language.language_class);
}

// T6 [RoPE-X Thm 3.3] against its algebraic side: on the minimal DFA, the component test
// (classes.hpp: every non-trivial SCC a simple cycle of length = period; what `ropesim
// classify` reports) says LTL[P,MOD] iff the stable semigroup η(Σ^s) of the syntactic morphism
// is R-trivial (QR; monoid.hpp, a second implementation that reads only transformations, not
// the graph). Half the DFAs are random (dfa_gen: mostly outside the class), half come from
// random LTL[P,MOD] formulas (formula_dfa), which must be inside it on both sides. A witness of
// non-QR is re-checked by running the DFA: s·x = t and t·y = s on every state.
void t6_monoid(const CheckOptions&) {
  const bool from_formula = *rc::gen::arbitrary<bool>().as("from an LTL[P,MOD] formula");
  automata::Dfa dfa = [&] {
    if (!from_formula) return automata::dfa_from_json(nlohmann::json::parse(*dfa_gen().as("DFA")));
    const std::string alphabet =
        *rc::gen::element(std::string("ab"), std::string("abc")).as("alphabet");
    const std::string text = *formula_gen(alphabet, FormulaFragment::ltl_p_mod, 8, 6).as("formula");
    std::vector<std::string> symbols;
    for (const char c : alphabet) symbols.emplace_back(1, c);
    return proofs::formula_dfa(ltl::parse(text), symbols);
  }();
  const automata::Dfa minimal = automata::minimise(dfa);
  const bool components = automata::decide_ltl_p_mod_by_components(minimal).ltl_p_mod;
  const automata::QuasiRTriviality qr = automata::quasi_r_triviality(minimal, std::size_t{1} << 16);
  RC_PRE(qr.quasi_r_trivial != automata::Verdict::inconclusive);
  if (from_formula) RC_ASSERT(components);
  RC_ASSERT((qr.quasi_r_trivial == automata::Verdict::yes) == components);
  if (qr.witness) {
    const auto& w = *qr.witness;  // {u_s, u_t, x, y}
    for (const auto& word : w) RC_ASSERT(word.size() == qr.stability_index);
    for (automata::State q = 0; q < minimal.state_count(); ++q) {
      automata::Word sx = w[0], ty = w[1];
      sx.insert(sx.end(), w[2].begin(), w[2].end());
      ty.insert(ty.end(), w[3].begin(), w[3].end());
      RC_ASSERT(minimal.run(q, sx) == minimal.run(q, w[1]));
      RC_ASSERT(minimal.run(q, ty) == minimal.run(q, w[0]));
    }
  }
}

// The exact oracle of a formula: for every prefix w_1..w_n, whether the formula holds at n + 1
// (ltl::accepts on the prefix; a second implementation, sharing nothing with the transformer).
proofs::MembershipOracle formula_oracle(const ltl::Formula& formula,
                                        const std::vector<std::string>& symbols) {
  return [&formula, &symbols](const automata::Word& w) {
    std::vector<bool> answers;
    ltl::Word prefix;
    answers.push_back(ltl::accepts(formula, prefix));
    for (const automata::Letter a : w) {
      prefix.push_back(symbols[a]);
      answers.push_back(ltl::accepts(formula, prefix));
    }
    return answers;
  };
}

// Extraction bounds of the properties: every word of length ≤ 8 over two letters (5 over
// three) and 10 random words of length ≤ 40 (at most the certified / tested length).
proofs::ExtractionOptions property_bounds(std::size_t letters, std::uint64_t longest) {
  proofs::ExtractionOptions o;
  o.exhaustive_length = letters == 2 ? 8 : 5;
  o.random_words = 10;
  o.random_length = static_cast<std::size_t>(std::min<std::uint64_t>(40, longest));
  o.seed = 1;
  o.max_states = 64;
  return o;
}

// THEORY §7 (transformer → logic direction), RoPE-X Thm 3.1: the DFA extracted from a compiled
// LTL[P,MOD] formula's transformer is the formula's DFA — the DFA L* learns from the formula
// itself (ltl::accepts) under the same bounds, and, independently of L*, it agrees with
// ltl::accepts on every word of length ≤ 7 (two letters) or ≤ 4 (three) — and it is
// classified LTL[P] or LTL[P,MOD].
void extract_compiled(const CheckOptions& options) {
  const std::string alphabet =
      *rc::gen::element(std::string("ab"), std::string("abc")).as("alphabet");
  const std::string text = *formula_gen(alphabet, FormulaFragment::ltl_p_mod, 8, 6).as("formula");
  const numeric::Format F = *format_gen(8, 53, options.format).as("format");
  const ltl::Formula formula = ltl::parse(text);
  std::vector<std::string> symbols;
  for (const char c : alphabet) symbols.emplace_back(1, c);
  proofs::CompileOptions compile_options;
  compile_options.policy.format = F;
  compile_options.certify_limit = 64;
  compile_options.suggest_format = false;
  std::optional<proofs::CompiledModel> compiled;
  try {
    compiled = proofs::compile(formula, symbols, compile_options);
  } catch (const InvalidArgument&) {
    // Which refusals are legitimate is compiler-mod's business; here only models count.
    RC_DISCARD("F refused by the compiler");
  }
  const std::uint64_t longest = std::min<std::uint64_t>(
      options.max_length, compiled->certified_length.value_or(options.max_length));
  RC_PRE(longest >= 8);
  const proofs::ExtractionOptions bounds = property_bounds(symbols.size(), longest);
  const proofs::Extraction extracted = proofs::extract_automaton(compiled->model, bounds);
  RC_ASSERT(!extracted.state_cap_hit);
  const proofs::Extraction reference =
      proofs::extract_automaton(formula_oracle(formula, symbols), symbols, bounds);
  RC_ASSERT(automata::equivalent(extracted.dfa, reference.dfa));
  // Brute force: every word up to the length, in length-lexicographic order.
  const std::size_t brute = symbols.size() == 2 ? 7 : 4;
  std::vector<automata::Word> layer{{}};
  for (std::size_t n = 0; n <= brute; ++n) {
    std::vector<automata::Word> next;
    for (const automata::Word& w : layer) {
      ltl::Word word;
      for (const automata::Letter a : w) word.push_back(symbols[a]);
      RC_ASSERT(extracted.dfa.accepts(w) == ltl::accepts(formula, word));
      for (automata::Letter a = 0; a < symbols.size(); ++a) {
        next.push_back(w);
        next.back().push_back(a);
      }
    }
    layer = std::move(next);
  }
  RC_ASSERT(automata::classify(extracted.dfa).language_class != automata::LanguageClass::none);
}

// RoPE-X Lemma 3.1 / Thm 3.1 upper bound (THEORY §5 T5, §7): a RoPE_P transformer — random
// weights k/4 (exact in fp8 E4M3), 1–2 layers of 1–2 heads whose rotary pairs are periodic
// tables (r3) of period ≤ 6 — recognises a language in LTL[P,MOD]: the DFA extracted under
// modest bounds is classified LTL[P] or LTL[P,MOD]. Extractions that hit the state cap, or
// that a larger fresh test set contradicts, are discarded: their DFA is not the model's.
void extract_rope_p(const CheckOptions& options) {
  attention::RandomModelOptions shape;
  shape.format = *rc::gen::element(numeric::Format::fp16(), numeric::Format::bf16(),
                                   numeric::Format::fp32(), numeric::Format::fp8e4m3())
                      .as("format");
  if (options.format) shape.format = *options.format;
  shape.layers = *rc::gen::inRange<std::size_t>(1, 3).as("layers");
  shape.heads = *rc::gen::inRange<std::size_t>(1, 3).as("heads per layer");
  shape.d_model = *rc::gen::inRange<std::size_t>(2, 5).as("d_model");
  shape.head_dim = 2 * *rc::gen::inRange<std::size_t>(1, 3).as("rotary pairs per head");
  shape.rotary = attention::RandomRotary::periodic;
  shape.max_period = *rc::gen::inRange<std::uint64_t>(2, 7).as("max period");
  shape.ffn = *rc::gen::arbitrary<bool>().as("ffn");
  const std::uint64_t seed = *rc::gen::inRange<std::uint64_t>(0, 1000000).as("weight seed");
  const attention::Model model = attention::random_model(shape, seed);
  const proofs::MembershipOracle oracle = proofs::model_oracle(model);
  const proofs::Extraction extracted = proofs::extract_automaton(
      oracle, model.embedding.alphabet, property_bounds(2, options.max_length));
  if (extracted.state_cap_hit) RC_DISCARD("the extraction hit the state cap");
  const automata::Classification c = automata::classify(extracted.dfa);
  RC_LOG() << "extracted " << c.minimal.state_count() << " states, "
           << automata::to_string(c.language_class) << "\n";
  // Converged? A fresh test set (every word up to length 11, 20 random words of length ≤ 100
  // from another seed) must agree; otherwise the bounded extraction is not the model's DFA and
  // its class says nothing either way: an accepted LTL[P]/LTL[P,MOD] hypothesis gets the same
  // check as a "none" one (a hypothesis in the class that the model contradicts would let a
  // counterexample hide). A weaker set — length 10, 10 words of length 80 — let a
  // non-converged 19-state hypothesis through at fp8 E4M3: the bounds matter. Discards are
  // counted and reported by `ropesim check`.
  proofs::ExtractionOptions validation;
  validation.exhaustive_length = 11;
  validation.random_words = 20;
  validation.random_length =
      static_cast<std::size_t>(std::min<std::uint64_t>(100, options.max_length));
  validation.seed = 2;
  if (proofs::find_disagreement(extracted.dfa, oracle, validation)) {
    RC_DISCARD("the extraction did not converge within the bounds");
  }
  RC_ASSERT(c.language_class != automata::LanguageClass::none);
}

// The hypotheses of a converse run from the options (`--summation`, `--draw`): exact sums and
// the standard draw unless told otherwise.
ConverseSettings converse_settings(const CheckOptions& options, ConverseClass kind) {
  ConverseSettings settings;
  settings.kind = kind;
  settings.summation = options.summation.value_or(attention::Summation::exact);
  settings.draw = options.draw.value_or(ConverseDraw::standard);
  return settings;
}

// T1 upper half [LC25] (THEORY §5 "The converse as identities"): a NoPE F-transformer ropesim
// did not build recognises an R-trivial language, so for every u, x, y, v it cannot tell
// u(xy)^n x v from u(xy)^n v for all large n. Random one-layer models (converse.hpp) and
// random words; the eventual behaviour of both acceptance sequences is decided exactly
// (eventual_behaviour: a threshold n* and period L from which both are periodic), and a
// difference anywhere in [n*, n* + L) recurs for ever, so it is a counterexample whatever the
// language's n0 — no bound on n0 is needed, and no finite sample stands in for "large n".
//
// Regime (the default; `--summation`, `--draw` and a saturating `--format` set others, see
// ConverseSettings): every sum exact and rounded once into an F with ±∞ (Summation::exact,
// round-to-nearest-even). Why the identity holds there (the argument this property checks
// against the decision procedure and, where the threshold is small, against the model run on
// the actual words): the block's keys repeat, so the softmax denominator of the EOS query grows
// like n·E_B and rounds to +∞ from some n on, after which every weight is e/∞ = 0 and the
// attention output is 0 on both words; or E_B = 0, and then the block's keys, the extra x's
// among them, carry weight exactly 0 and add exact zeros. Under the canonical sequential sums
// (THEORY §2.1) the denominator instead stops growing at about 2^p, the weights stay non-zero,
// and a value sum with both signs counts — T1's upper half fails there, and with exact sums in
// a saturating F (fp8 E4M3) too (tests/properties/test_converse.cpp, docs/TESTING.md).
void nope_ltlp(const CheckOptions& options) {
  converse_property(options, converse_settings(options, ConverseClass::nope));
}

// T5 upper half [RoPE-X Lemma 3.1 / Thm 3.1]: the same for RoPE_P models whose rotary pairs
// are r3 tables of random periods m ∈ [2, 4] (lcm M), with |x| and |y| multiples of M, so every
// copy of xy and the suffix keep their residues mod M: the identity of LTL[P,MOD] languages
// whose moduli divide M (THEORY §5: the k-automaton is partially ordered), which is what the
// paper's translation of such a transformer (realised rotations depend on i mod M) gives.
void rope_p_ltlpmod(const CheckOptions& options) {
  converse_property(options, converse_settings(options, ConverseClass::rope_p));
}

}  // namespace

const std::vector<Theorem>& theorems() {
  static const std::vector<Theorem> list = {
      {{"compiler-mod", "RoPE-X Lemma 3.2 / Thm 3.1 lower bound (THEORY §5 T5, §7 C1, C4)",
        "a compiled LTL[P,MOD] formula's RoPE_P transformer accepts w iff the formula holds at "
        "N+1, in every format the compiler accepts",
        4, 53},
       compiler_mod},
      {{"compiler-y", "RoPE-X Cor 4.1, App D (THEORY §5, §6, §7 C5)",
        "a compiled LTL[P] formula with Y^k heads accepts w iff the formula holds at N+1, for "
        "every word up to the model's certified length",
        8, 24},
       compiler_y},
      {{"compiler-nope", "LC25 Thm 3.3 (THEORY §5 T1, §7 C1)",
        "a compiled LTL[P] formula's transformer has no positional encoding and accepts w iff the "
        "formula holds at N+1",
        4, 53},
       compiler_nope},
      {{"masking-strict", "LC25 Thm F.4, strict half (THEORY §2, no-BOS mode)",
        "strict masking without BOS recognises bbΣ*: the compiled model accepts exactly the words "
        "starting with bb",
        8, 53},
       masking_strict},
      {{"masking-nonstrict",
        "LC25 Thm F.4, non-strict half: the stutter step in F (THEORY §2, no-BOS mode)",
        "non-strict masking without BOS or positions: position 2 of b·b·u holds position 1's "
        "representation after every layer",
        4, 53},
       masking_nonstrict},
      {{"binary-mod", "RoPE-X Prop 3.1 (THEORY §5)",
        "MOD_m^r(i, j) (j − i ≡ r mod m) equals the disjunction over a of MOD_m^a(i) ∧ "
        "MOD_m^{(a+r) mod m}(j), the unary atoms read off a compiled RoPE_P transformer",
        8, 53},
       binary_mod},
      {{"periodic-r3", "RoPE-X Def 2.1, Prop 2.2 (THEORY §3, §5)",
        "r3 of a rational schedule is periodic with period dividing lcm(m_d) in every format; r2 "
        "is reported with a verified period or verified witnesses",
        4, 53},
       periodic_r3},
      {{"nonperiodic", "RoPE-X Prop 4.1 (THEORY §3, §5)",
        "an irrational rotation (g = 1, rational g, base-derived θ_d) has a verified "
        "non-periodicity witness for every candidate period up to the bound",
        4, 53},
       nonperiodic},
      {{"bounded-lookback", "RoPE-X Cor 4.1 (THEORY §5, §6)",
        "for k ≤ L ≤ N_max^(k) the Y^k transformer is right at every position of every word of "
        "length ≤ L",
        8, 24},
       bounded_lookback},
      {{"po-c3", "LC25 Thm 4.1, Lemma C.1 (THEORY §5 T2, §7 C3)",
        "on minimal DFAs: partially ordered ⇔ R-trivial transition monoid ⇔ the C3 formula's "
        "language equals the DFA's; zoo formulas' DFAs have the zoo's class",
        0, 0},
       po_c3},
      {{"t6-monoid", "RoPE-X Thm 3.3 (THEORY §5 T6)",
        "on minimal DFAs: the T6 component test (every non-trivial SCC a simple cycle of length = "
        "period) holds iff the stable semigroup of the syntactic morphism is R-trivial (QR)",
        0, 0},
       t6_monoid},
      {{"extract-compiled", "RoPE-X Thm 3.1 (THEORY §5 T5, §7 transformer → logic)",
        "the DFA L* extracts from a compiled LTL[P,MOD] formula's transformer equals the formula's "
        "(L* on ltl::accepts; brute force up to length 7) and is LTL[P] or LTL[P,MOD]",
        8, 53},
       extract_compiled},
      {{"extract-rope-p", "RoPE-X Lemma 3.1 / Thm 3.1 upper bound (THEORY §5 T5, §7)",
        "the DFA L* extracts from a random RoPE_P transformer (periodic tables, period ≤ 6) is "
        "classified LTL[P] or LTL[P,MOD]",
        4, 53},
       extract_rope_p},
      {{"nope-ltlp", "LC25 Thm 3.3 upper half, T2 identity (THEORY §5 T1, converse)",
        "a random one-layer NoPE transformer (exact sums in F with inf) does not tell u(xy)^n x v "
        "from u(xy)^n v for all large n: the eventual behaviour, decided exactly, agrees",
        3, 53, true},
       nope_ltlp},
      {{"rope-p-ltlpmod", "RoPE-X Lemma 3.1 / Thm 3.1 upper half (THEORY §5 T5, T6, converse)",
        "a random one-layer RoPE_P transformer (r3 tables of periods 2-4, lcm M; exact sums in F "
        "with inf) does not tell u(xy)^n x v from u(xy)^n v for all large n, |x|, |y| = 0 mod M",
        3, 53, true},
       rope_p_ltlpmod},
  };
  return list;
}

}  // namespace ropesim::properties
