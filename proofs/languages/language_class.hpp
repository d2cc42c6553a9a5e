#pragma once
/// The logic class of a regular language given by one source (THEORY §5 T2, T6): a regex or a
/// formula over an alphabet, a DFA file, or a model file (the DFA extracted from the emulated
/// transformer by L*, proofs/languages/extraction.hpp); for LTL[P] also the C3 formula of its
/// minimal DFA (THEORY §7 C3). What `ropesim classify` and ropesim.classify (Python) compute.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "automata/classes.hpp"

namespace ropesim::proofs {

/// The options of a classification as the user gives them (the flags of `ropesim classify`;
/// a source is given when its optional is set).
struct ClassifyArguments {
  std::optional<std::string> alphabet;    ///< --alphabet: the letters, one character each
  std::optional<std::string> regex;       ///< --regex
  std::optional<std::string> formula;     ///< --formula (LTL[P,MOD], docs/LOGIC.md)
  std::optional<std::string> dfa_file;    ///< --dfa: a DFA file (docs/CLI.md)
  std::optional<std::string> model_file;  ///< --model: a model spec (docs/MODEL_SPEC.md)
  /// --model: the extraction's bounds (ExtractionOptions); unset exhaustive length:
  /// default_exhaustive_length of the model's alphabet.
  std::optional<std::uint64_t> exhaustive_length;
  std::uint64_t random_words = 100, random_length = 100, seed = 1, max_states = 256;
  std::uint64_t monoid_cap = automata::kDefaultMonoidCap;  ///< --monoid-cap
  bool allow_slow = false;  ///< --allow-slow: lift the extraction's budget
  /// --model: called with (words answered, total) while the model runs (ExtractionOptions).
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  /// Called with a warning line (without "ropesim: warning: ") before the extraction runs:
  /// its test words are longer than the model's certified length.
  std::function<void(const std::string&)> warn;
};

/// A classification and where its language came from.
struct LanguageClassification {
  automata::Classification classification;
  /// {"kind": regex|formula|dfa|model, "text": the source's text or file}; for a model also
  /// "extraction" (proofs::to_json(Extraction) without its timings) and "scope" (the certified
  /// length, the longest test word and a statement of what the class covers).
  nlohmann::json source;
  /// For LTL[P]: {construction, text (null past kJsonFormulaTree tree nodes), dag_nodes,
  /// tree_nodes (null at >= 2^64)}, or with text, dag_nodes and tree_nodes null and
  /// "unavailable" when a letter is not a formula atom; null for the other classes.
  nlohmann::json formula;
  /// --model: the extraction's time and the part spent in the transformer (seconds).
  std::optional<double> extraction_seconds, oracle_seconds;
};

/// Largest tree (ltl::tree_size) whose C3 formula the report writes as text.
inline constexpr std::uint64_t kJsonFormulaTree = 1000000;

/// Reads the one source `a` gives and classifies its minimal DFA (automata::classify with
/// a.monoid_cap). Throws InvalidArgument with one line naming the flag: no source or several,
/// --regex or --formula without --alphabet, a bad source, an --alphabet that differs from a
/// --dfa's or --model's, an extraction beyond the budget (unless allow_slow).
LanguageClassification classify_language(const ClassifyArguments& a);

/// What `ropesim classify --json` prints: {"source", every key of automata::to_json of the
/// classification, "formula"}.
nlohmann::json to_json(const LanguageClassification& c);

}  // namespace ropesim::proofs
