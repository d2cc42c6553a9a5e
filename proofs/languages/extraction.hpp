#pragma once
/// Extracting the automaton a membership oracle computes — in particular the language an
/// emulated F-transformer recognises — by Angluin's L* with Rivest–Schapire counterexample
/// handling (THEORY §7, "Transformer → logic direction": extract the DFA the emulated
/// transformer computes and check it is in the T6 class; RoPE-X Lemma 3.1 / Thm 3.1).
///
/// - Membership queries share prefixes: the oracle answers all prefixes w_1..w_n (n = 0..|w|)
///   of a word at once (for a transformer: one causal pass,
///   attention/transformer/prefix_oracle.hpp), and every answer is cached, so each word is asked at
///   most once.
/// - L* (D. Angluin, "Learning regular sets from queries and counterexamples", Inf. Comput.
///   75, 1987) keeps an observation table with access strings S (distinct rows) and suffixes E
///   (ε first); a closed table gives the hypothesis. A counterexample w is analysed as in R. L.
///   Rivest and R. E. Schapire, "Inference of finite automata using homing sequences", Inf.
///   Comput. 103, 1993: with ⌊u⌋ the access string of the hypothesis state reached by u and
///   α(i) = member(⌊w_1..w_i⌋ · w_{i+1}..w_m), α(0) ≠ α(m), so a binary search finds i with
///   α(i) ≠ α(i+1); the suffix w_{i+2}..w_m joins E and splits a state.
/// - Equivalence queries cannot be answered exactly for a black box; they are answered by
///   comparison with the oracle on every word of length ≤ exhaustive_length (the words of that
///   exact length, whose prefixes are all the shorter words) and on random_words random words
///   of length random_length (all their prefixes compared). The result is therefore a
///   (minimised) DFA that agrees with the oracle on those words and on every word L* asked —
///   the oracle's minimal DFA when that has no behaviour the bounds cannot see; both bounds
///   are part of the result.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attention/transformer/transformer.hpp"
#include "automata/dfa.hpp"

namespace ropesim::proofs {

/// A membership oracle that answers every prefix at once: for a word w of m letters (indices
/// into the alphabet) it returns m + 1 flags, flag n = (w_1..w_n ∈ L). Must be deterministic.
using MembershipOracle = std::function<std::vector<bool>(const automata::Word&)>;

/// The bounds of an extraction.
struct ExtractionOptions {
  /// Every word of length ≤ this is compared with the hypothesis (|Σ|^L words of length L are
  /// asked; the shorter ones are their prefixes).
  std::size_t exhaustive_length = 8;
  std::size_t random_words = 200;   ///< random words compared, each of length random_length
  std::size_t random_length = 100;  ///< length of the random words (0 = none)
  std::uint64_t seed = 1;           ///< seed of the random words (std::mt19937_64)
  std::size_t max_states = 256;     ///< L* stops when the table would need more states
  /// Called with (test words answered, test words in all) while the equivalence test set is
  /// answered (the long part: one model run per word); unset: no calls. Results do not depend
  /// on it.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
};

/// The most words of length exhaustive_length an extraction asks (|Σ|^L).
inline constexpr std::uint64_t kMaxExhaustiveWords = std::uint64_t{1} << 22;

/// The default exhaustive length for `letters` letters (≥ 1): the largest L ≤ 12 with
/// letters^L ≤ 1024 (2 letters: 10, 3: 6, 4: 5, 5: 4, 6: 3; 1 letter: 12), so that the
/// exhaustive part asks about a thousand words.
std::size_t default_exhaustive_length(std::size_t letters);

/// The work of the equivalence test set of extract_automaton(model, options), for check_budget
/// before it starts: every word of length exhaustive_length (|Σ|^L of them, L ≤ 64 and
/// |Σ|^L ≤ kMaxExhaustiveWords; more counts as kMaxExhaustiveWords + 1, which extraction
/// refuses) and random_words words of length random_length, each run once through the model
/// (attention::run_work: quadratic in the length), and the memory that holds them (every test
/// word and its answers, 8 bytes per letter) plus one run. The queries of L* itself come on
/// top (they depend on the language), so this is a lower bound of the extraction's work.
WorkEstimate extraction_work(const attention::Model& model, const ExtractionOptions& options);

/// The result of an extraction.
struct Extraction {
  /// The learned DFA, minimal (automata::minimise; canonical numbering). When state_cap_hit it
  /// is only an approximation: the table was not closed.
  automata::Dfa dfa;
  ExtractionOptions bounds;    ///< the bounds used
  bool state_cap_hit = false;  ///< the table needed more than bounds.max_states states
  std::size_t equivalence_rounds =
      0;  ///< equivalence queries asked (the last one passed unless the cap was hit)
  std::size_t counterexamples = 0;  ///< counterexamples found (= rounds - 1 without the cap)
  /// Membership: oracle calls (each answers all prefixes of one word) and their total letters,
  /// for the L* table and counterexample analysis, and for the equivalence test words.
  std::uint64_t learning_queries = 0, learning_symbols = 0;
  std::uint64_t equivalence_queries = 0, equivalence_symbols = 0;
  std::uint64_t exhaustive_words = 0;  ///< words of length exhaustive_length compared
  double seconds = 0;                  ///< wall-clock time of the whole extraction
  double oracle_seconds = 0;           ///< of which inside the oracle
};

/// Learns the DFA the oracle computes over `alphabet` (distinct non-empty symbols) by L* with
/// Rivest–Schapire counterexamples and the bounded equivalence test (see the file comment).
/// Throws InvalidArgument for an empty or repeated alphabet, max_states = 0, |Σ|^L above
/// kMaxExhaustiveWords (naming the bound), or an oracle that answers the wrong number of
/// prefixes. Source: THEORY §7; Angluin 1987; Rivest & Schapire 1993.
Extraction extract_automaton(const MembershipOracle& oracle,
                             const std::vector<std::string>& alphabet,
                             const ExtractionOptions& options);

/// The shortest word on which `dfa` and the oracle disagree among the test words of `bounds`
/// (every word of length ≤ exhaustive_length, random_words random words of length
/// random_length drawn with `seed`; max_states unused), or nullopt. With bounds larger than
/// an extraction's, or another seed, this checks that the extraction converged. Throws
/// InvalidArgument as extract_automaton does for the bounds and the oracle.
std::optional<automata::Word> find_disagreement(const automata::Dfa& dfa,
                                                const MembershipOracle& oracle,
                                                const ExtractionOptions& bounds);

/// The F-transformer as a membership oracle: attention::PrefixOracle over a copy of `model`
/// (validated now; throws InvalidArgument as Model::validate does). Letter a is
/// model.embedding.alphabet[a]. Not thread-safe.
MembershipOracle model_oracle(const attention::Model& model);

/// extract_automaton(model_oracle(model), model.embedding.alphabet, options).
Extraction extract_automaton(const attention::Model& model, const ExtractionOptions& options);

/// The extraction's figures as JSON: "bounds" {exhaustive_length, random_words, random_length,
/// seed, max_states}, "state_cap_hit", "equivalence_rounds", "counterexamples",
/// "membership_queries" {learning: {words, symbols}, equivalence: {words, symbols}, total:
/// {words, symbols}}, "exhaustive_words", "seconds", "oracle_seconds". Does not print.
nlohmann::json to_json(const Extraction& extraction);

}  // namespace ropesim::proofs
