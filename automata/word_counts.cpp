// Exact path counts of a DFA and uniform sampling by unranking (see word_counts.hpp).
#include "automata/word_counts.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/budget.hpp"
#include "core/error.hpp"

namespace ropesim::automata {

namespace {

/// "12 MiB": a size for messages, rounded up to whole MiB.
std::string mib(double bytes) {
  return std::to_string(static_cast<long long>(std::ceil(bytes / (1024.0 * 1024)))) + " MiB";
}

}  // namespace

double word_count_bytes(std::size_t states, std::size_t letters, std::uint64_t max_length) {
  const double bits_per_letter = std::log2(static_cast<double>(std::max<std::size_t>(letters, 2)));
  const double n = static_cast<double>(max_length) + 1;
  // Σ_{m=0}^{max_length} (⌈m·log2|Σ|/64⌉ + 1) limbs ≤ n·(1 + 1) + log2|Σ|·n²/128 limbs.
  const double limbs = 2 * n + bits_per_letter * n * n / 128;
  const double per_state = n * static_cast<double>(sizeof(mpz_class)) + 8 * limbs;
  return (static_cast<double>(states) + 1) * per_state;
}

mpz_class uniform_below(const mpz_class& bound, std::mt19937_64& rng) {
  if (sgn(bound) <= 0) throw InvalidArgument("uniform_below: the bound must be positive");
  if (bound == 1) return 0;
  const mpz_class top = bound - 1;
  const std::size_t bits = mpz_sizeinbase(top.get_mpz_t(), 2);
  const std::size_t digits = (bits + 63) / 64;
  std::vector<std::uint64_t> words(digits);
  mpz_class r;
  for (;;) {
    for (auto& w : words) w = rng();
    const std::size_t spare = digits * 64 - bits;  // bits above b in the leading digit
    if (spare > 0) words[0] &= ~std::uint64_t{0} >> spare;
    // order 1: most significant word first; endian 0: native within each word.
    mpz_import(r.get_mpz_t(), digits, 1, sizeof(std::uint64_t), 0, 0, words.data());
    if (r < bound) return r;
  }
}

WordCounts::WordCounts(Dfa dfa, std::uint64_t max_length, double budget_bytes)
    : dfa_(std::move(dfa)), max_length_(max_length) {
  const std::size_t states = dfa_.state_count();
  const double bytes = word_count_bytes(states, dfa_.letter_count(), max_length);
  if (bytes > budget_bytes) {
    throw BudgetExceeded("the path counts of the minimal DFA (" + std::to_string(states) +
                         " states, lengths 0.." + std::to_string(max_length) + ") would take " +
                         mib(bytes) + ", over the limit of " + mib(budget_bytes) +
                         "; ask for shorter lengths");
  }
  members_.resize((max_length + 1) * states);
  powers_.resize(max_length + 1);
  powers_[0] = 1;
  for (State q = 0; q < states; ++q) members_[q] = dfa_.accepting(q) ? 1 : 0;
  const auto& delta = dfa_.transitions();
  for (std::uint64_t m = 1; m <= max_length; ++m) {
    powers_[m] = powers_[m - 1] * static_cast<unsigned long>(dfa_.letter_count());
    for (State q = 0; q < states; ++q) {
      mpz_class& c = members_[m * states + q];
      for (const State next : delta[q]) c += members(next, m - 1);
    }
  }
}

mpz_class WordCounts::count(State q, std::uint64_t m, Side side) const {
  if (q >= dfa_.state_count()) throw std::out_of_range("WordCounts::count: state out of range");
  if (m > max_length_) throw std::out_of_range("WordCounts::count: length beyond max_length");
  if (side == Side::members) return members(q, m);
  return powers_[m] - members(q, m);
}

Word WordCounts::unrank(std::uint64_t n, Side side, const mpz_class& rank) const {
  if (n > max_length_) throw std::out_of_range("WordCounts::unrank: length beyond max_length");
  if (sgn(rank) < 0 || rank >= words(n, side)) {
    throw InvalidArgument("unrank: rank " + rank.get_str() + " is not below the " +
                          words(n, side).get_str() + " words of length " + std::to_string(n));
  }
  Word w;
  w.reserve(n);
  State q = dfa_.initial();
  mpz_class r = rank;
  mpz_class c;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t left = n - i - 1;
    Letter chosen = dfa_.letter_count();
    for (Letter a = 0; a < dfa_.letter_count(); ++a) {
      c = count(dfa_.next(q, a), left, side);
      if (r < c) {
        chosen = a;
        break;
      }
      r -= c;
    }
    // r < count(q, n − i) = Σ_a count(δ(q, a), n − i − 1), so some letter is chosen.
    if (chosen == dfa_.letter_count()) throw std::logic_error("unrank: counts inconsistent");
    w.push_back(chosen);
    q = dfa_.next(q, chosen);
  }
  return w;
}

mpz_class WordCounts::rank(const Word& w, Side side) const {
  if (w.size() > max_length_) throw std::out_of_range("WordCounts::rank: word beyond max_length");
  State q = dfa_.initial();
  mpz_class r = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] >= dfa_.letter_count()) throw InvalidArgument("rank: letter index out of range");
    for (Letter a = 0; a < w[i]; ++a) r += count(dfa_.next(q, a), w.size() - i - 1, side);
    q = dfa_.next(q, w[i]);
  }
  if (dfa_.accepting(q) != (side == Side::members))
    throw InvalidArgument("rank: the word is not on that side of the language");
  return r;
}

std::optional<Word> WordCounts::sample(std::uint64_t n, Side side, std::mt19937_64& rng) const {
  const mpz_class total = words(n, side);
  if (sgn(total) == 0) return std::nullopt;
  return unrank(n, side, uniform_below(total, rng));
}

}  // namespace ropesim::automata
