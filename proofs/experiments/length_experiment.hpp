#pragma once
/// Accuracy against length: the seed paper's headline experiment as one call (RoPE-X §5–6,
/// THEORY §6, §8). A formula is compiled once per (schedule, format) with the schedule as the
/// schedule of every rotary head — its Y^k heads (C5) and its MOD atoms (C4 on a periodic
/// schedule, C4' bounded by N_max^MOD on a non-periodic one, or refused) — and every compiled
/// model is run on the same seeded words, compared with the formula's truth (ltl::accepts).
///
/// Balanced words (issue 32): uniform random words over Σ are almost all non-members of a
/// sparse language such as (ab)*, so a model that rejects everything would score ≈ 1. Each
/// requested length n therefore gets its own words, drawn uniformly from L ∩ Σ^n (members) and
/// from Σ^n \ L (non-members) through exact path counts in the formula's minimal DFA
/// (automata/word_counts.hpp, proofs/languages/formula_automaton.hpp), reported per side and as the
/// balanced accuracy (the mean of the two sides' accuracies). Constructed periodic heads are
/// exact at every length; a conventional Y^k head is exact up to its certified length
/// N_max^(k) and past it behaves like a bounded locality bias, right or wrong depending on the
/// position and the word.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attention/schedules/schedule.hpp"
#include "core/budget.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"

namespace ropesim::proofs {

/// What to run.
struct LengthExperimentSpec {
  std::string formula;                         ///< LTL[P,MOD] text with Y^k (logic/formula.hpp)
  std::vector<std::string> alphabet;           ///< single-letter symbols, e.g. {"a", "b"}
  std::vector<attention::Schedule> schedules;  ///< the rotary heads' schedules (≥ 1)
  /// True (the default): each schedule is also the MOD atoms' (C4 when periodic, C4' otherwise).
  /// False: MOD atoms keep their own periodic tables (C4) whatever the schedule — what
  /// `experiment length` does when no --schedule is named, as `compile` does.
  bool schedule_for_mod = true;
  std::vector<numeric::Format> formats;  ///< F of each model (≥ 1)
  numeric::Rounding rounding = numeric::Rounding::nearest_even;
  std::vector<std::uint64_t> lengths;  ///< word lengths, ascending, each ≥ 1
  /// Words per length and side (≥ 1): `words` members and `words` non-members of each length
  /// (every word of a side that has at most this many, see length_experiment).
  std::size_t words = 20;
  std::uint64_t seed = 1;  ///< the words' seed (the same for every model)
  /// Offset-aliasing words per length and model (0: none; see length_experiment).
  std::size_t adversarial = 2;
};

/// One (schedule, format, length) cell.
struct LengthRow {
  std::uint64_t length = 0;
  /// Members (words of L ∩ Σ^n) tried and classified right; 0 and 0 when the side is empty.
  std::size_t members = 0, members_correct = 0;
  /// Non-members (words of Σ^n \ L) tried and classified right; 0 and 0 when empty.
  std::size_t nonmembers = 0, nonmembers_correct = 0;
  /// L ∩ Σ^n resp. Σ^n \ L has no word (e.g. (ab)* at odd n, Σ* for non-members).
  bool members_empty = false, nonmembers_empty = false;
  /// The side has at most `words` words: each was tried once (the side's accuracy is exact).
  bool members_exhaustive = false, nonmembers_exhaustive = false;
  /// Offset-aliasing words tried at this length and how many were right (0 and 0 when the
  /// formula has no Y^k or adversarial = 0).
  std::size_t adversarial_words = 0;
  std::size_t adversarial_correct = 0;

  /// Every word tried at this length: members, non-members and offset-aliasing words.
  [[nodiscard]] std::size_t words() const { return members + nonmembers + adversarial_words; }
  /// The words of words() classified as the formula does.
  [[nodiscard]] std::size_t correct() const {
    return members_correct + nonmembers_correct + adversarial_correct;
  }
  /// correct() / words(): the mean over every word tried (0 when none).
  [[nodiscard]] double accuracy() const {
    return words() == 0 ? 0.0 : double(correct()) / double(words());
  }
  /// members_correct / members; nullopt when L ∩ Σ^n is empty.
  [[nodiscard]] std::optional<double> accuracy_members() const {
    if (members == 0) return std::nullopt;
    return double(members_correct) / double(members);
  }
  /// nonmembers_correct / nonmembers; nullopt when Σ^n \ L is empty.
  [[nodiscard]] std::optional<double> accuracy_nonmembers() const {
    if (nonmembers == 0) return std::nullopt;
    return double(nonmembers_correct) / double(nonmembers);
  }
  /// The mean of accuracy_members and accuracy_nonmembers over the sides that are not empty
  /// (one of them always has a word: Σ^n is not empty). Offset-aliasing words do not enter it.
  [[nodiscard]] double balanced_accuracy() const {
    const auto m = accuracy_members(), n = accuracy_nonmembers();
    if (m && n) return (*m + *n) / 2;
    return m ? *m : n ? *n : 0.0;
  }
};

/// One compiled model and its rows.
struct LengthSeries {
  std::string schedule;  ///< the schedule's spec
  std::string format;    ///< F's name
  /// How the formula's MOD atoms were built: "" (none), "periodic tables (C4)" or "the schedule
  /// (C4', bounded)".
  std::string mod_atoms;
  /// The model's certified length (compile's certified_length; none: exact at every length).
  std::optional<std::uint64_t> certified_length;
  /// compile's certified_length_at_limit: the certified length is where a check stopped
  /// without a failure, not where one failed.
  bool certified_length_at_limit = false;
  /// Set when the compiler refused F (its one-line reason); then `rows` is empty.
  std::optional<std::string> refused;
  std::vector<LengthRow> rows;
  /// The longest requested length L such that every word (members, non-members and
  /// offset-aliasing words) of every requested length ≤ L was right (the figure RoPE-X reports for
  /// trained models, THEORY §8); none if the first failed.
  std::optional<std::uint64_t> longest_all_right;
};

/// The balanced words of one length (what length_experiment tries at that length).
struct BalancedWords {
  std::uint64_t length = 0;
  std::vector<std::string> members;     ///< words of L ∩ Σ^n, in draw order
  std::vector<std::string> nonmembers;  ///< words of Σ^n \ L, in draw order
  /// L ∩ Σ^n resp. Σ^n \ L has no word.
  bool members_empty = false, nonmembers_empty = false;
  /// The side has at most `words` words: each is listed once, in lexicographic order.
  bool members_exhaustive = false, nonmembers_exhaustive = false;
};

/// Which language and lengths balanced_words draws from.
struct BalancedWordsSpec {
  /// The language: an LTL[P,MOD] formula (logic/formula.hpp), or a regular expression
  /// (automata/regex.hpp) for a language without a formula (PARITY); exactly one is non-empty.
  std::string formula;
  std::string regex;
  std::vector<std::string> alphabet;   ///< single-letter symbols, e.g. {"a", "b"}
  std::vector<std::uint64_t> lengths;  ///< word lengths, ascending, each ≥ 1
  std::size_t words = 20;              ///< words per length and side (≥ 1)
  std::uint64_t seed = 1;              ///< the draw's seed
};

/// The balanced words of every requested length, drawn exactly as length_experiment draws them
/// (the same words for the same formula, alphabet, lengths, words and seed): from the minimal
/// DFA of the formula (formula_dfa) or of the regex (automata::regex_to_dfa), per length and
/// side, none when the side is empty, every word once when it has at most `words`, else
/// `words` uniform draws by exact path counts (see length_experiment for the seeding). A
/// formula's words are each checked against ltl::accepts (a disagreement throws
/// std::logic_error). The trained models' experiment (python/ropesim/train.py, issue 37) trains
/// and tests on these words.
///
/// Throws InvalidArgument for neither or both of formula and regex, an empty alphabet or a
/// symbol that is not one letter, no lengths, lengths not ascending or 0, words = 0, a formula
/// or regex that does not parse or uses letters outside the alphabet; BudgetExceeded when the
/// path counts exceed kMaxWordCountBytes.
std::vector<BalancedWords> balanced_words(const BalancedWordsSpec& spec);

/// Progress: (models done, models in all).
using LengthProgress = std::function<void(std::size_t, std::size_t)>;

/// Runs the experiment: one series per (schedule, format), schedules outer.
///
/// The balanced words (the same for every model): for each requested length n and side s
/// (members, non-members) of the formula's minimal DFA (formula_dfa, then automata::minimise),
/// with c = the exact number of words of length n on that side (automata::WordCounts):
///   - c = 0: none (the row says the side is empty);
///   - c ≤ words: every word of the side once, in lexicographic order (the row says exhaustive);
///   - else `words` words drawn uniformly and independently (with repetition) by
///     WordCounts::sample from one std::mt19937_64 per (n, s) seeded with
///     seed + 0x9E3779B97F4A7C15 · (2n + s) (mod 2^64; s = 0 members, 1 non-members), in order.
/// Each word is checked against ltl::accepts (a second evaluation of the formula; a
/// disagreement with the DFA throws std::logic_error) and costs one causal pass of its length
/// with one EOS query (attention::PrefixOracle::output).
///
/// Offset-aliasing words (what the certified range predicts, THEORY §6): for a Y^k head the
/// EOS query of a word of length L should read position t = L + 1 − k; past N_max^(k) the
/// realised scores let a key at distance n from t compete, first at the distances n where the
/// ideal score S(n)/C = Σ_d w_d cos(θ_d n) is largest (n = 6, 19, 25, 44, … for g = 1). Each of
/// the `adversarial` words of length L is a random word (letters from an std::mt19937_64 seeded
/// with seed ^ (0x9E3779B97F4A7C15 + L·1000003 + a)) in which, for every k of the formula's
/// Y^k and the three distances 1 ≤ n ≤ t − 1 with the largest S(n) (the smaller n on ties, S
/// in binary64), the letter at t − n is made to differ from the letter at t (the next letter of
/// the alphabet). These words depend on the schedule, so each model gets its own; a formula
/// without Y^k gets none. One causal pass per such word.
///
/// Throws InvalidArgument for an empty alphabet, schedule or format list, no lengths, lengths
/// not ascending or 0, words = 0, a formula that does not parse, or atoms outside the
/// alphabet; BudgetExceeded when the path counts up to the longest length exceed
/// kMaxWordCountBytes (core/budget.hpp); InvalidArgument when the DFA exceeds
/// formula_dfa's state cap.
std::vector<LengthSeries> length_experiment(const LengthExperimentSpec& spec,
                                            const LengthProgress& progress = {});

/// The attention work of `series` series of `spec`'s lengths per format (length_experiment
/// runs one per schedule: series = spec.schedules.size(); plot separation one per language and
/// schedule), for check_budget before it starts: one causal pass per word and model, about
/// (L+2)²/2 scores per head for a word of length L (one EOS query:
/// attention::PrefixOracle::output); up to `words` members, `words` non-members and
/// `adversarial` offset-aliasing words per length; the compiled models of the zoo have at most
/// a few dozen heads (counted as 32). Units: attention scores, at 2·10^7 per second.
WorkEstimate length_experiment_work(const LengthExperimentSpec& spec, std::size_t series);

}  // namespace ropesim::proofs
