#pragma once
/// Accuracy against length: the seed paper's headline experiment as one call (RoPE-X §5–6,
/// THEORY §6, §8). A formula is compiled once per (schedule, format) with the schedule as the
/// schedule of every rotary head — its Y^k heads (C5) and its MOD atoms (C4 on a periodic
/// schedule, C4' bounded by N_max^MOD on a non-periodic one, or refused) — and every compiled model
/// is run on the same seeded random words; each word's prefixes give one sample per requested
/// length from a single causal pass (attention/prefix_oracle.hpp), compared with the formula's
/// truth (ltl::accepts). Constructed periodic heads are exact at every length; a conventional
/// Y^k head is exact up to its certified length N_max^(k) and past it behaves like a bounded
/// locality bias, right or wrong depending on the position and the word.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attention/schedule.hpp"
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
  std::size_t words = 40;              ///< random words per length (≥ 1)
  std::uint64_t seed = 1;              ///< the words' seed (the same for every model)
  /// Offset-aliasing words per length and model (0: none; see length_experiment).
  std::size_t adversarial = 2;
};

/// One (schedule, format, length) cell.
struct LengthRow {
  std::uint64_t length = 0;
  std::size_t words = 0;    ///< words tried at this length
  std::size_t correct = 0;  ///< words the model classified as the formula does
  /// Offset-aliasing words tried at this length and how many were right (0 and 0 when the
  /// formula has no Y^k or adversarial = 0).
  std::size_t adversarial_words = 0;
  std::size_t adversarial_correct = 0;
  /// Accuracy on the random words.
  [[nodiscard]] double accuracy() const {
    return words == 0 ? 0.0 : double(correct) / double(words);
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
  /// Set when the compiler refused F (its one-line reason); then `rows` is empty.
  std::optional<std::string> refused;
  std::vector<LengthRow> rows;
  /// The longest requested length L such that every word (random and offset-aliasing) of every
  /// requested length ≤ L was right (the figure RoPE-X reports for trained models, THEORY §8);
  /// none if the first failed.
  std::optional<std::uint64_t> longest_all_right;
};

/// Progress: (models done, models in all).
using LengthProgress = std::function<void(std::size_t, std::size_t)>;

/// Runs the experiment: one series per (schedule, format), schedules outer. The random words
/// have the longest requested length; letter i of word w is drawn from a std::mt19937_64
/// seeded with seed + w, so every model sees the same words.
///
/// Offset-aliasing words (what the certified range predicts, THEORY §6): for a Y^k head the
/// EOS query of a word of length L should read position t = L + 1 − k; past N_max^(k) the
/// realised scores let a key at distance n from t compete, first at the distances n where the
/// ideal score S(n)/C = Σ_d w_d cos(θ_d n) is largest (n = 6, 19, 25, 44, … for g = 1). Each of
/// the `adversarial` words of length L is a random word (seeded apart from the random words)
/// in which, for every k of the formula's Y^k and the three distances 1 ≤ n ≤ t − 1 with the
/// largest S(n) (the smaller n on ties, S in binary64), the letter at t − n is made to differ
/// from the letter at t (the next letter of the alphabet). These words depend on the schedule,
/// so each model gets its own; a formula without Y^k gets none. One causal pass per such word.
/// Throws InvalidArgument for an
/// empty alphabet, schedule or format list, no lengths, lengths not ascending or 0, words = 0,
/// a formula that does not parse, or atoms outside the alphabet.
std::vector<LengthSeries> length_experiment(const LengthExperimentSpec& spec,
                                            const LengthProgress& progress = {});

}  // namespace ropesim::proofs
