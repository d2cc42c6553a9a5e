#include "automata/regex.hpp"

#include <algorithm>
#include <map>
#include <queue>

#include "core/error.hpp"
#include "core/text.hpp"

namespace ropesim::automata {

namespace {

/// Thompson's NFA: states with ε-edges and letter edges.
struct Nfa {
  std::vector<std::vector<std::size_t>> epsilon;
  std::vector<std::vector<std::pair<Letter, std::size_t>>> edges;

  std::size_t add_state() {
    epsilon.emplace_back();
    edges.emplace_back();
    return epsilon.size() - 1;
  }
};

/// A fragment of the NFA with one entry and one exit state.
struct Fragment {
  std::size_t start;
  std::size_t accept;
};

constexpr int kMaxDepth = 1000;

/// Recursive-descent parser building Thompson fragments as it goes.
class Parser {
 public:
  Parser(const std::string& text, const std::vector<std::string>& alphabet, Nfa& nfa)
      : text_(text), alphabet_(alphabet), nfa_(nfa) {}

  Fragment parse() {
    const Fragment f = alternative(0);
    if (pos_ < text_.size()) {  // only an unmatched ')' stops an alternative early
      throw InvalidArgument("regex: unmatched ')' at column " + std::to_string(pos_ + 1) + " of '" +
                            text_ + "'");
    }
    return f;
  }

 private:
  Fragment epsilon_fragment() {
    const std::size_t s = nfa_.add_state(), t = nfa_.add_state();
    nfa_.epsilon[s].push_back(t);
    return {s, t};
  }

  Fragment alternative(int depth) {
    if (depth > kMaxDepth) {
      throw InvalidArgument("regex: parentheses nested deeper than " + std::to_string(kMaxDepth) +
                            " levels at column " + std::to_string(pos_ + 1) +
                            "; accepted: at most " + std::to_string(kMaxDepth));
    }
    Fragment f = sequence(depth);
    while (pos_ < text_.size() && text_[pos_] == '|') {
      ++pos_;
      const Fragment g = sequence(depth);
      const std::size_t s = nfa_.add_state(), t = nfa_.add_state();
      nfa_.epsilon[s] = {f.start, g.start};
      nfa_.epsilon[f.accept].push_back(t);
      nfa_.epsilon[g.accept].push_back(t);
      f = {s, t};
    }
    return f;
  }

  Fragment sequence(int depth) {
    Fragment f = epsilon_fragment();
    while (pos_ < text_.size() && text_[pos_] != '|' && text_[pos_] != ')') {
      const Fragment g = repetition(depth);
      nfa_.epsilon[f.accept].push_back(g.start);
      f.accept = g.accept;
    }
    return f;
  }

  Fragment repetition(int depth) {
    Fragment f = atom(depth);
    while (pos_ < text_.size() &&
           (text_[pos_] == '*' || text_[pos_] == '+' || text_[pos_] == '?')) {
      const char op = text_[pos_++];
      const std::size_t s = nfa_.add_state(), t = nfa_.add_state();
      nfa_.epsilon[s].push_back(f.start);
      if (op != '+') nfa_.epsilon[s].push_back(t);               // * and ?: zero times
      if (op != '?') nfa_.epsilon[f.accept].push_back(f.start);  // * and +: again
      nfa_.epsilon[f.accept].push_back(t);
      f = {s, t};
    }
    return f;
  }

  Fragment atom(int depth) {
    const char c = text_[pos_];
    const std::size_t column = pos_ + 1;
    if (c == '*' || c == '+' || c == '?') {
      throw InvalidArgument(std::string("regex: '") + c + "' at column " + std::to_string(column) +
                            " has nothing to repeat; put a letter, '.' or a group before it");
    }
    if (c == '(') {
      ++pos_;
      const Fragment f = alternative(depth + 1);
      if (pos_ >= text_.size()) {
        throw InvalidArgument("regex: '(' at column " + std::to_string(column) +
                              " is never closed; add ')'");
      }
      ++pos_;  // ')'
      return f;
    }
    const std::size_t s = nfa_.add_state(), t = nfa_.add_state();
    if (c == '.') {
      for (Letter a = 0; a < alphabet_.size(); ++a) nfa_.edges[s].push_back({a, t});
      ++pos_;
    } else {
      // A letter is one UTF-8 character (alphabet_from_letters: é is one letter).
      const std::size_t n = std::max<std::size_t>(utf8_length(text_, pos_), 1);
      const std::string letter = text_.substr(pos_, n);
      Letter a = 0;
      while (a < alphabet_.size() && alphabet_[a] != letter) ++a;
      if (a == alphabet_.size()) {
        throw InvalidArgument("regex: " + quoted_text(letter) + " at column " +
                              std::to_string(column) + " is not a letter of the alphabet " +
                              alphabet_text(alphabet_) +
                              "; accepted: letters, '.', '|', '*', '+', '?', '(' and ')'");
      }
      nfa_.edges[s].push_back({a, t});
      pos_ += n;
    }
    return {s, t};
  }

  const std::string& text_;
  const std::vector<std::string>& alphabet_;
  Nfa& nfa_;
  std::size_t pos_ = 0;
};

/// The ε-closure of `states`, sorted.
std::vector<std::size_t> closure(const Nfa& nfa, std::vector<std::size_t> states) {
  std::vector<bool> in(nfa.epsilon.size(), false);
  std::vector<std::size_t> stack;
  for (std::size_t s : states) {
    if (!in[s]) {
      in[s] = true;
      stack.push_back(s);
    }
  }
  while (!stack.empty()) {
    const std::size_t s = stack.back();
    stack.pop_back();
    for (std::size_t t : nfa.epsilon[s]) {
      if (!in[t]) {
        in[t] = true;
        stack.push_back(t);
      }
    }
  }
  std::vector<std::size_t> out;
  for (std::size_t s = 0; s < in.size(); ++s) {
    if (in[s]) out.push_back(s);
  }
  return out;
}

}  // namespace

Dfa regex_to_dfa(const std::string& regex, const std::vector<std::string>& alphabet) {
  for (const auto& symbol : alphabet) {
    // One UTF-8 character (é is one letter, as in alphabet_from_letters), not a reserved one.
    if (symbol.empty() || utf8_length(symbol, 0) != symbol.size() ||
        std::string("|*+?().\\ \t\n\r").find(symbol) != std::string::npos) {
      throw InvalidArgument(
          "regex: alphabet symbol " + quoted_text(symbol) +
          " is not a single non-reserved character; accepted: single characters other than "
          "| * + ? ( ) . and blanks");
    }
  }
  if (alphabet.empty())
    throw InvalidArgument("regex: the alphabet is empty; accepted: at least one letter");
  Nfa nfa;
  const Fragment f = Parser(regex, alphabet, nfa).parse();

  // Subset construction from the ε-closure of the start state; subsets are numbered in the
  // order they are discovered (breadth first), the empty subset is the sink.
  std::map<std::vector<std::size_t>, State> index;
  std::vector<std::vector<std::size_t>> subsets;
  std::vector<std::vector<State>> transitions;
  std::queue<State> pending;
  auto intern = [&](std::vector<std::size_t> subset) {
    const auto [it, inserted] = index.emplace(subset, subsets.size());
    if (inserted) {
      if (subsets.size() >= kMaxSubsetStates) {
        throw InvalidArgument("regex: the subset construction exceeds " +
                              std::to_string(kMaxSubsetStates) +
                              " DFA states; accepted: smaller expressions");
      }
      subsets.push_back(std::move(subset));
      pending.push(it->second);
    }
    return it->second;
  };
  intern(closure(nfa, {f.start}));
  while (!pending.empty()) {
    const State q = pending.front();
    pending.pop();
    std::vector<State> row(alphabet.size());
    for (Letter a = 0; a < alphabet.size(); ++a) {
      std::vector<std::size_t> targets;
      for (std::size_t s : subsets[q]) {
        for (const auto& [letter, t] : nfa.edges[s]) {
          if (letter == a) targets.push_back(t);
        }
      }
      row[a] = intern(closure(nfa, std::move(targets)));
    }
    if (transitions.size() <= q) transitions.resize(q + 1);
    transitions[q] = std::move(row);
  }
  std::vector<bool> accepting(subsets.size(), false);
  for (State q = 0; q < subsets.size(); ++q) {
    for (std::size_t s : subsets[q]) accepting[q] = accepting[q] || s == f.accept;
  }
  return Dfa(alphabet, std::move(transitions), 0, std::move(accepting));
}

}  // namespace ropesim::automata
