#include "automata/dfa.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/error.hpp"
#include "core/text.hpp"

namespace ropesim::automata {

std::string alphabet_text(const std::vector<std::string>& alphabet) {
  std::string out = "{";
  for (std::size_t i = 0; i < alphabet.size(); ++i) out += (i ? ", " : "") + alphabet[i];
  return out + "}";
}

Dfa::Dfa(std::vector<std::string> alphabet, std::vector<std::vector<State>> transitions,
         State initial, std::vector<bool> accepting)
    : alphabet_(std::move(alphabet)),
      transitions_(std::move(transitions)),
      initial_(initial),
      accepting_(std::move(accepting)) {
  if (alphabet_.empty())
    throw InvalidArgument("DFA: the alphabet is empty; accepted: at least one symbol");
  std::set<std::string> seen;
  for (const auto& symbol : alphabet_) {
    if (symbol.empty())
      throw InvalidArgument(
          "DFA: an alphabet symbol is empty; accepted: non-empty distinct symbols");
    if (!seen.insert(symbol).second) {
      throw InvalidArgument("DFA: symbol '" + symbol +
                            "' is listed twice in the alphabet; list each once");
    }
  }
  const std::size_t n = transitions_.size();
  if (n == 0) throw InvalidArgument("DFA: no states; accepted: at least one state");
  for (std::size_t q = 0; q < n; ++q) {
    if (transitions_[q].size() != alphabet_.size()) {
      throw InvalidArgument("DFA: state " + std::to_string(q) + " has " +
                            std::to_string(transitions_[q].size()) +
                            " transitions; accepted: exactly one per letter (" +
                            std::to_string(alphabet_.size()) + ")");
    }
    for (std::size_t a = 0; a < alphabet_.size(); ++a) {
      if (transitions_[q][a] >= n) {
        throw InvalidArgument("DFA: transition from state " + std::to_string(q) + " on '" +
                              alphabet_[a] + "' goes to state " +
                              std::to_string(transitions_[q][a]) + "; accepted: 0.." +
                              std::to_string(n - 1));
      }
    }
  }
  if (initial_ >= n) {
    throw InvalidArgument("DFA: initial state " + std::to_string(initial_) +
                          " does not exist; accepted: 0.." + std::to_string(n - 1));
  }
  if (accepting_.size() != n) {
    throw InvalidArgument("DFA: " + std::to_string(accepting_.size()) + " accepting flags for " +
                          std::to_string(n) + " states; accepted: one per state");
  }
}

State Dfa::run(State q, const Word& w) const {
  for (Letter a : w) {
    if (a >= alphabet_.size()) {
      throw InvalidArgument("DFA: letter index " + std::to_string(a) + " is not in the alphabet " +
                            alphabet_text(alphabet_));
    }
    q = transitions_.at(q)[a];
  }
  return q;
}

Letter Dfa::letter(const std::string& symbol) const {
  const auto it = std::find(alphabet_.begin(), alphabet_.end(), symbol);
  if (it == alphabet_.end()) {
    throw InvalidArgument(
        "'" + symbol + "' is not a letter of the alphabet; accepted: " + alphabet_text(alphabet_));
  }
  return static_cast<Letter>(it - alphabet_.begin());
}

Word Dfa::word(const std::string& text) const {
  Word w;
  w.reserve(text.size());
  for (std::size_t i = 0;
       i < text.size();) {  // letters are UTF-8 characters (alphabet_from_letters)
    const std::size_t n = std::max<std::size_t>(utf8_length(text, i), 1);
    w.push_back(letter(text.substr(i, n)));
    i += n;
  }
  return w;
}

std::string Dfa::text(const Word& w) const {
  const bool single = std::all_of(alphabet_.begin(), alphabet_.end(),
                                  [](const std::string& s) { return s.size() == 1; });
  std::string out;
  for (std::size_t i = 0; i < w.size(); ++i)
    out += (single || i == 0 ? "" : " ") + alphabet_.at(w[i]);
  return out;
}

std::vector<std::string> alphabet_from_letters(const std::string& letters) {
  const std::string reserved = "|*+?().\\ \t\n\r";
  if (letters.empty())
    throw InvalidArgument("the alphabet is empty; accepted: one or more distinct letters, e.g. ab");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < letters.size();) {
    const std::size_t n =
        utf8_length(letters, i);  // a letter is one UTF-8 character: é is one letter
    if (n == 0) {
      throw InvalidArgument(
          "byte " + quoted_text(letters.substr(i, 1)) + " at byte " + std::to_string(i + 1) +
          " of the alphabet is not UTF-8; accepted: distinct characters, e.g. ab");
    }
    const std::string letter = letters.substr(i, n);
    i += n;
    if (reserved.find(letter) != std::string::npos ||
        (n == 1 && std::iscntrl(static_cast<unsigned char>(letter[0])) != 0)) {
      throw InvalidArgument(
          quoted_text(letter) +
          " cannot be a letter (the regular-expression syntax reserves | * + ? ( ) . \\ and "
          "blanks; "
          "control characters neither); accepted: other single characters, e.g. ab");
    }
    if (std::find(out.begin(), out.end(), letter) != out.end()) {
      throw InvalidArgument("letter " + quoted_text(letter) +
                            " is listed twice in the alphabet; list each once");
    }
    out.push_back(letter);
  }
  return out;
}

}  // namespace ropesim::automata
