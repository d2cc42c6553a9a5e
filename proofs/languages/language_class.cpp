// The class of a language from one source (proofs/languages/language_class.hpp; THEORY §5, §7 C3).
#include "proofs/languages/language_class.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "attention/transformer/model_spec.hpp"
#include "automata/dfa.hpp"
#include "automata/export.hpp"
#include "automata/regex.hpp"
#include "core/budget.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "logic/formula.hpp"
#include "proofs/languages/extraction.hpp"
#include "proofs/languages/formula_automaton.hpp"
#include "proofs/languages/po_formula.hpp"

namespace ropesim::proofs {

namespace {

struct Source {
  automata::Dfa dfa;
  nlohmann::json description;
  std::optional<double> seconds, oracle_seconds;
};

/// The DFA extracted from --model by L* and the source description with the extraction's
/// figures ("extraction": proofs::to_json). The alphabet is the model's; a different
/// --alphabet is refused.
Source model_source(const ClassifyArguments& a,
                    const std::optional<std::vector<std::string>>& alphabet) {
  const attention::Model model =
      with_context("--model", [&] { return attention::load_model(*a.model_file); });
  if (alphabet && *alphabet != model.embedding.alphabet) {
    throw InvalidArgument(
        "--alphabet " + automata::alphabet_text(*alphabet) + " differs from the alphabet " +
        automata::alphabet_text(model.embedding.alphabet) + " of --model " + *a.model_file +
        "; accepted: the same letters in the same order, or no --alphabet");
  }
  ExtractionOptions e;
  e.exhaustive_length = a.exhaustive_length
                            ? static_cast<std::size_t>(*a.exhaustive_length)
                            : default_exhaustive_length(model.embedding.alphabet.size());
  e.random_words = static_cast<std::size_t>(a.random_words);
  e.random_length = static_cast<std::size_t>(a.random_length);
  e.seed = a.seed;
  e.max_states = static_cast<std::size_t>(a.max_states);
  // The equivalence test words alone: refused with the estimate before the first query.
  const WorkEstimate work = extraction_work(model, e);
  Budget budget;
  budget.unlimited = a.allow_slow;
  check_budget(a.exhaustive_length && a.random_length == 0 ? "--exhaustive-length"
                                                           : "--random-words x --random-length",
               work, budget);
  // The extraction queries words up to the longest of its exhaustive and random lengths; past
  // the model's certified length its answers are the model's, not the construction's.
  const std::uint64_t longest = std::max<std::uint64_t>(e.exhaustive_length, e.random_length);
  if (model.certified_length && longest > *model.certified_length && a.warn) {
    a.warn(fmt::format(
        "the extraction tests words of up to {} symbols, more than the "
        "certified length {} recorded in {}; the automaton describes the model past its "
        "certificate (THEORY §6)",
        longest, *model.certified_length, *a.model_file));
  }
  e.progress = a.progress;
  const Extraction x =
      with_context("--exhaustive-length", [&] { return extract_automaton(model, e); });
  nlohmann::json extraction = to_json(x);
  extraction.erase("seconds");
  extraction.erase("oracle_seconds");
  // The scope of the answer: the class is the model's on the words tested; a model with bounded
  // heads (Y^k, C4' MOD) is certified exact only up to its certified length.
  nlohmann::json scope = {
      {"certified_length",
       model.certified_length ? nlohmann::json(*model.certified_length) : nlohmann::json()},
      {"longest_test_word", longest}};
  if (model.certified_length) {
    scope["statement"] = fmt::format(
        "the class holds on words up to the certified length {}; beyond it the model may differ "
        "from its construction (see `ropesim run` warnings)",
        *model.certified_length);
  } else {
    scope["statement"] = fmt::format(
        "the class is the language of the model on the words tested (length <= {}); no certified "
        "length is recorded in the model",
        longest);
  }
  return {
      x.dfa,
      {{"kind", "model"}, {"text", *a.model_file}, {"extraction", extraction}, {"scope", scope}},
      x.seconds,
      x.oracle_seconds};
}

/// The DFA of the one source given, and its description for the report ({"kind", "text"}).
/// Throws InvalidArgument naming the flags when none or several are given.
Source language_source(const ClassifyArguments& a) {
  const bool regex = a.regex.has_value(), dfa = a.dfa_file.has_value(),
             formula = a.formula.has_value(), model = a.model_file.has_value();
  const int sources = int{regex} + int{dfa} + int{formula} + int{model};
  if (sources != 1) {
    std::string given;
    for (const auto& [flag, on] : {std::pair{"--regex", regex}, std::pair{"--dfa", dfa},
                                   std::pair{"--formula", formula}, std::pair{"--model", model}}) {
      if (on) given += std::string(given.empty() ? "" : " and ") + flag;
    }
    throw InvalidArgument(
        (sources == 0 ? std::string("no language given")
                      : given + (sources == 2 ? " both given" : " all given")) +
        "; accepted: exactly one of --regex R or --formula F (with --alphabet), --dfa FILE or "
        "--model MODEL.json");
  }
  std::optional<std::vector<std::string>> alphabet;
  if (a.alphabet)
    alphabet =
        with_context("--alphabet", [&] { return automata::alphabet_from_letters(*a.alphabet); });
  if (model) return model_source(a, alphabet);
  if (regex) {
    if (!alphabet)
      throw InvalidArgument("--regex needs --alphabet (the letters, e.g. --alphabet ab)");
    try {
      return {automata::regex_to_dfa(*a.regex, *alphabet),
              {{"kind", "regex"}, {"text", *a.regex}},
              std::nullopt,
              std::nullopt};
    } catch (const InvalidArgument& e) {  // "regex: ... at column N" → "--regex: ... at column N"
      const std::string message = e.what();
      throw InvalidArgument("--regex: " +
                            (message.rfind("regex: ", 0) == 0 ? message.substr(7) : message));
    }
  }
  if (formula) {
    if (!alphabet)
      throw InvalidArgument("--formula needs --alphabet (the letters, e.g. --alphabet ab)");
    try {
      return {formula_dfa(ltl::parse(*a.formula), *alphabet),
              {{"kind", "formula"}, {"text", *a.formula}},
              std::nullopt,
              std::nullopt};
    } catch (const InvalidArgument& e) {  // "formula: column N: ..." → "--formula: column N: ..."
      const std::string message = e.what();
      throw InvalidArgument("--formula: " +
                            (message.rfind("formula: ", 0) == 0 ? message.substr(9) : message));
    }
  }
  automata::Dfa d = with_context("--dfa", [&] { return automata::load_dfa(*a.dfa_file); });
  if (alphabet && *alphabet != d.alphabet()) {
    throw InvalidArgument("--alphabet " + automata::alphabet_text(*alphabet) +
                          " differs from the alphabet " + automata::alphabet_text(d.alphabet()) +
                          " of --dfa " + *a.dfa_file +
                          "; accepted: the same letters in the same order, or no --alphabet");
  }
  return {std::move(d), {{"kind", "dfa"}, {"text", *a.dfa_file}}, std::nullopt, std::nullopt};
}

/// The report's `formula`: for LTL[P], the C3 formula of the minimal DFA (THEORY §7 C3,
/// proofs/languages/po_formula.hpp) as {construction, text (null if its tree has more than
/// kJsonFormulaTree nodes), dag_nodes, tree_nodes (null at ≥ 2^64)}; null for other classes.
/// When a letter is not a formula atom (`--alphabet AB`, `é`) the formula cannot be written:
/// text, dag_nodes and tree_nodes are null and `unavailable` says why (not an error: the
/// classification stands).
nlohmann::json formula_json(const automata::Classification& c) {
  if (c.language_class != automata::LanguageClass::ltl_p) return nullptr;
  for (const auto& letter : c.minimal.alphabet()) {  // --regex/--dfa letters such as 'A' or 'é'
    try {
      ltl::Formula probe;
      (void)probe.symbol(letter);
    } catch (const InvalidArgument&) {
      return {{"construction", "C3: PODFA -> LTL[P] (LC25 Lemma C.1, THEORY §7)"},
              {"text", nullptr},
              {"dag_nodes", nullptr},
              {"tree_nodes", nullptr},
              {"unavailable",
               "letter " + quoted_text(letter) +
                   " is not a formula atom (a lowercase letter, then lowercase letters, digits or "
                   "'_'), so the C3 formula cannot be written"}};
    }
  }
  const ltl::Formula f = po_dfa_formula(c.minimal);
  const std::uint64_t tree = ltl::tree_size(f);
  nlohmann::json j = {{"construction", "C3: PODFA -> LTL[P] (LC25 Lemma C.1, THEORY §7)"},
                      {"text", nullptr},
                      {"dag_nodes", f.size()},
                      {"tree_nodes", nullptr}};
  if (tree != std::numeric_limits<std::uint64_t>::max()) j["tree_nodes"] = tree;
  if (tree <= kJsonFormulaTree) j["text"] = ltl::to_string(f);
  return j;
}

}  // namespace

LanguageClassification classify_language(const ClassifyArguments& a) {
  Source source = language_source(a);
  automata::Classification c =
      automata::classify(source.dfa, static_cast<std::size_t>(a.monoid_cap));
  nlohmann::json formula = formula_json(c);
  return {std::move(c), std::move(source.description), std::move(formula), source.seconds,
          source.oracle_seconds};
}

nlohmann::json to_json(const LanguageClassification& c) {
  nlohmann::json report = {{"source", c.source}};
  report.update(automata::to_json(c.classification));
  report["formula"] = c.formula;
  return report;
}

}  // namespace ropesim::proofs
