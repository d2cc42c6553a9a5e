#pragma once
/// Deterministic finite automata over an explicit alphabet (THEORY §5 T2/T6: the deciders work
/// on the minimal DFA of a regular language; [LC25 §5], [RoPE-X Thm 3.3]).
///
/// A `Dfa` is complete by construction: every state has exactly one successor per letter.
/// Letters are addressed by their index into `alphabet()`; a word is a sequence of indices.
#include <cstddef>
#include <string>
#include <vector>

namespace ropesim::automata {

/// A state of a DFA: 0..state_count()−1.
using State = std::size_t;
/// A letter, as an index into the DFA's alphabet.
using Letter = std::size_t;
/// A word: letters by index, left to right.
using Word = std::vector<Letter>;

/// A complete deterministic finite automaton A = (Q, Σ, δ, q0, F) with Q = {0, …, n−1}.
class Dfa {
 public:
  /// Builds the DFA with `alphabet` Σ (distinct non-empty symbols, at least one), transition
  /// table `transitions` (transitions[q][a] = δ(q, a), one row of |Σ| entries per state, at
  /// least one state), initial state `initial` and final states `accepting` (a flag per
  /// state). Throws ropesim::InvalidArgument naming the first violation (an empty or repeated
  /// symbol, a row of the wrong length, a target or initial state out of range, a flag vector
  /// of the wrong length).
  Dfa(std::vector<std::string> alphabet, std::vector<std::vector<State>> transitions, State initial,
      std::vector<bool> accepting);

  /// Σ: the symbols, letter i being alphabet()[i].
  const std::vector<std::string>& alphabet() const { return alphabet_; }
  /// |Σ|.
  std::size_t letter_count() const { return alphabet_.size(); }
  /// |Q| = n (states are 0..n−1).
  std::size_t state_count() const { return transitions_.size(); }
  /// q0.
  State initial() const { return initial_; }
  /// q ∈ F? Throws std::out_of_range for q ≥ n.
  bool accepting(State q) const { return accepting_.at(q); }
  /// F as one flag per state.
  const std::vector<bool>& accepting_states() const { return accepting_; }
  /// δ(q, a). Throws std::out_of_range for q ≥ n or a ≥ |Σ|.
  State next(State q, Letter a) const { return transitions_.at(q).at(a); }
  /// The table δ, one row per state (row q, column a = δ(q, a)).
  const std::vector<std::vector<State>>& transitions() const { return transitions_; }

  /// δ*(q, w): the state reached from `q` by reading `w`. Throws ropesim::InvalidArgument for
  /// a letter index ≥ |Σ|.
  State run(State q, const Word& w) const;
  /// True iff δ*(q0, w) ∈ F.
  bool accepts(const Word& w) const { return accepting_[run(initial_, w)]; }

  /// The index of `symbol` in the alphabet; throws ropesim::InvalidArgument naming the symbol
  /// and the alphabet if it is not a letter.
  Letter letter(const std::string& symbol) const;
  /// Reads `text` as a word of single-character symbols (one UTF-8 character each; every symbol
  /// must be one character; throws ropesim::InvalidArgument otherwise, naming the offending
  /// character and the alphabet).
  Word word(const std::string& text) const;
  /// `w` as text: the symbols concatenated when all are single characters, else separated by
  /// spaces (the empty word is "").
  std::string text(const Word& w) const;

  /// Same alphabet, table, initial and final states (not language equality: compare minimised
  /// DFAs, or use equivalent(), for that).
  friend bool operator==(const Dfa&, const Dfa&) = default;

 private:
  std::vector<std::string> alphabet_;
  std::vector<std::vector<State>> transitions_;
  State initial_;
  std::vector<bool> accepting_;
};

/// The alphabet as written on the command line: every UTF-8 character of `letters` is one
/// symbol (`"ab"` → {a, b}, `"aé"` → {a, é}). Throws ropesim::InvalidArgument for an empty
/// alphabet, a repeated letter, a byte that is not UTF-8, a control character or a character
/// the regular-expression syntax reserves (`| * + ? ( ) .`, space, backslash), naming the
/// character (ropesim::quoted_text) and the accepted letters.
std::vector<std::string> alphabet_from_letters(const std::string& letters);

/// The alphabet as one brace list, "{a, b}", for messages.
std::string alphabet_text(const std::vector<std::string>& alphabet);

}  // namespace ropesim::automata
