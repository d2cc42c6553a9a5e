#pragma once
/// Exact path counts of a DFA and uniform sampling of the words of one length from a language
/// or from its complement (the balanced words of `ropesim experiment length`,
/// proofs/experiments/length_experiment.hpp; issue 32).
///
/// For a complete DFA A = (Q, Σ, δ, q0, F), members(q, m) = |{w ∈ Σ^m : δ*(q, w) ∈ F}| obeys
///   members(q, 0) = [q ∈ F],   members(q, m) = Σ_{a ∈ Σ} members(δ(q, a), m − 1),
/// and non-members(q, m) = |Σ|^m − members(q, m). The counts grow like |Σ|^m, so they are exact
/// big integers (GMP mpz_class). |L(A) ∩ Σ^n| = members(q0, n).
///
/// Uniform sampling by unranking: the words of length n on one side, in lexicographic order of
/// letter indices, are numbered 0 .. count − 1; the word of rank r is read letter by letter:
/// from state q with m letters left, letter a is taken when r < count(δ(q, a), m − 1) and
/// otherwise r −= that count and the next letter is tried. A rank drawn uniformly from
/// [0, count) gives every word the probability 1 / count; this is the same distribution as the
/// walk that picks each letter with probability count(δ(q, a), m − 1) / count(q, m), with one
/// big-integer draw per word instead of one per letter.
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "automata/dfa.hpp"
#include "core/budget.hpp"

namespace ropesim::automata {

/// Which words of a length: those the DFA accepts, or those it rejects.
enum class Side { members, nonmembers };

/// The bytes a WordCounts table of `states` states over `letters` letters for lengths
/// 0..max_length takes (an estimate from above: one mpz_class and ⌈m·log2|Σ|/64⌉ + 1 limbs per
/// state and length m, plus the powers |Σ|^m).
double word_count_bytes(std::size_t states, std::size_t letters, std::uint64_t max_length);

/// A uniform integer in [0, bound) from `rng`, the same on every platform for the same rng
/// state: b = the bit length of bound − 1 (so bound − 1 < 2^b); ⌈b/64⌉ outputs of rng are
/// taken as the 64-bit digits of a number, most significant first, the bits above b cleared;
/// the number is returned when it is below bound, else the draw is repeated (rejection:
/// fewer than 2 draws on average). bound = 1 returns 0 without using rng. Throws
/// ropesim::InvalidArgument for bound ≤ 0.
mpz_class uniform_below(const mpz_class& bound, std::mt19937_64& rng);

/// The path counts of a DFA for the lengths 0..max_length, and the words they number.
class WordCounts {
 public:
  /// Computes members(q, m) for every state q and 0 ≤ m ≤ max_length (the recurrence above;
  /// O(|Q|·|Σ|·max_length) big-integer additions). Throws ropesim::BudgetExceeded when
  /// word_count_bytes exceeds `budget_bytes` (naming the states, the length and both sizes).
  WordCounts(Dfa dfa, std::uint64_t max_length, double budget_bytes = kMaxWordCountBytes);

  const Dfa& dfa() const { return dfa_; }
  std::uint64_t max_length() const { return max_length_; }

  /// The number of words w of length m with δ*(q, w) ∈ F (members) or ∉ F (non-members).
  /// Throws std::out_of_range for q ≥ |Q| or m > max_length().
  mpz_class count(State q, std::uint64_t m, Side side) const;
  /// |L ∩ Σ^n| or |Σ^n \ L|: count(q0, n, side).
  mpz_class words(std::uint64_t n, Side side) const { return count(dfa_.initial(), n, side); }

  /// The word of rank `rank` among the words of length n on `side`, in lexicographic order of
  /// letter indices (0-based). Throws ropesim::InvalidArgument when rank is negative or not
  /// below words(n, side), std::out_of_range for n > max_length().
  Word unrank(std::uint64_t n, Side side, const mpz_class& rank) const;
  /// The rank of `w` among the words of its length on `side` (the inverse of unrank). Throws
  /// ropesim::InvalidArgument when w is not on that side (or has a letter ≥ |Σ|).
  mpz_class rank(const Word& w, Side side) const;

  /// A word drawn uniformly from the words of length n on `side`: unrank of
  /// uniform_below(words(n, side), rng). nullopt when that side is empty at length n (rng is
  /// then not used).
  std::optional<Word> sample(std::uint64_t n, Side side, std::mt19937_64& rng) const;

 private:
  const mpz_class& members(State q, std::uint64_t m) const {
    return members_[m * dfa_.state_count() + q];
  }

  Dfa dfa_;
  std::uint64_t max_length_;
  std::vector<mpz_class> members_;  ///< members(q, m) at m·|Q| + q
  std::vector<mpz_class> powers_;   ///< |Σ|^m
};

}  // namespace ropesim::automata
