#pragma once
/// Evaluating a formula on a word at every position (THEORY §4): the reference semantics the
/// compiled transformers are checked against.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "logic/formula.hpp"

namespace ropesim::ltl {

/// A word: one symbol per position 1..N (symbols are atoms, e.g. "a", "b0").
using Word = std::vector<std::string>;

/// The word of single-letter symbols spelled by `text`: "abba" -> {"a","b","b","a"}.
Word letters(std::string_view text);

/// The truth value of every node of a formula at every position 0..N+1 of one word.
class Evaluation {
 public:
  Evaluation() = default;
  /// Whether node `id` holds at `position` (0 = BOS: always false; 1..N the symbols; N+1 EOS).
  /// Throws InvalidArgument for an id or position out of range.
  bool holds(NodeId id, std::size_t position) const;
  /// The word length N.
  std::size_t length() const { return length_; }
  /// Number of nodes evaluated.
  std::size_t nodes() const { return nodes_; }

 private:
  friend Evaluation evaluate(const Formula& formula, std::span<const std::string> word);
  Evaluation(std::size_t nodes, std::size_t length);
  std::size_t nodes_ = 0;
  std::size_t length_ = 0;
  std::vector<unsigned char> values_;  // values_[id * (N + 2) + position]
};

/// Every node of the DAG at every position, bottom-up in creation (topological) order:
/// O(|DAG| × N) time and memory. P is a running "seen" flag; S the recurrence
/// (f S g)(1) = false, (f S g)(i+1) = g(i) ∨ (f(i) ∧ (f S g)(i)); Y^k a shift by k.
Evaluation evaluate(const Formula& formula, std::span<const std::string> word);

/// Whether the formula's root holds at N + 1 (the word is in the language).
bool accepts(const Formula& formula, std::span<const std::string> word);

}  // namespace ropesim::ltl
