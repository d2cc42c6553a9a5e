#include "proofs/languages/formula_automaton.hpp"

#include <cstdint>
#include <deque>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "core/error.hpp"

namespace ropesim::proofs {

namespace {

using ltl::NodeId;
using ltl::Operator;

/// Bytes of reader memory stored per state beyond which formula_dfa refuses (a Y^k node keeps
/// k bits).
constexpr std::size_t kMaxStateBytes = std::size_t{1} << 16;
/// Total bytes of state memory formula_dfa may hold.
constexpr std::size_t kMaxMemoryBytes = std::size_t{1} << 30;

/// The reader of THEORY §4 for one formula: which nodes it evaluates, where each temporal
/// node keeps its memory, and one step of the recurrences.
class Reader {
 public:
  Reader(const ltl::Formula& formula, const std::vector<std::string>& alphabet,
         std::size_t state_cap)
      : formula_(formula),
        values_(formula.size(), 0),
        letter_of_(formula.size(), kNoLetter),
        offset_(formula.size(), 0) {
    // Only the nodes below the root matter (a DAG may hold others).
    std::vector<bool> needed(formula.size(), false);
    needed[formula.root()] = true;
    for (std::size_t id = formula.size(); id-- > 0;) {
      if (!needed[id]) continue;
      const ltl::Node& node = formula.node(static_cast<NodeId>(id));
      switch (node.op) {
        case Operator::conjunction:
        case Operator::disjunction:
        case Operator::since:
          needed[node.right] = true;
          [[fallthrough]];
        case Operator::negation:
        case Operator::past:
        case Operator::yesterday:
          needed[node.left] = true;
          break;
        default:
          break;
      }
    }
    std::uint64_t modulus = 1;
    std::size_t bits = 0;
    for (std::size_t id = 0; id < formula.size(); ++id) {
      if (!needed[id]) continue;
      order_.push_back(static_cast<NodeId>(id));
      const ltl::Node& node = formula.node(static_cast<NodeId>(id));
      offset_[id] = bits;
      switch (node.op) {
        case Operator::symbol: {
          std::size_t a = 0;
          while (a < alphabet.size() && alphabet[a] != node.symbol) ++a;
          if (a == alphabet.size()) {
            throw InvalidArgument("formula: atom '" + node.symbol +
                                  "' is not a letter of the alphabet " +
                                  automata::alphabet_text(alphabet) +
                                  "; accepted: atoms among the alphabet's letters");
          }
          letter_of_[id] = a;
          break;
        }
        case Operator::past:
        case Operator::since:
          bits += 1;
          break;
        case Operator::yesterday:
          if (node.k > 8 * kMaxStateBytes) throw too_large(state_cap);
          bits += static_cast<std::size_t>(node.k);
          break;
        case Operator::modulo: {
          // Every residue of i mod M is a reachable state, so M > cap is refused (before it
          // overflows).
          if (node.m > state_cap) throw too_large(state_cap);
          modulus = modulus / std::gcd(modulus, node.m) * node.m;  // ≤ cap · cap
          if (modulus > state_cap) throw too_large(state_cap);
          break;
        }
        default:
          break;
      }
      if (bits > 8 * kMaxStateBytes) throw too_large(state_cap);
    }
    modulus_ = modulus;
    bits_ = bits;
  }

  /// The memory of the empty prefix (i = 0): counter 0, every flag and register false.
  std::string initial() const { return std::string(sizeof(std::uint64_t) + (bits_ + 7) / 8, '\0'); }

  /// Evaluates every needed node at position i + 1 of a word whose prefix w_1..w_i left
  /// `state`, reading the letter `letter` there (nullopt: EOS, every atom false). Fills values_.
  void evaluate(const std::string& state, std::optional<std::size_t> letter) {
    const std::uint64_t position = counter(state) + 1;  // (i + 1) mod M, up to M
    for (const NodeId id : order_) {
      const ltl::Node& node = formula_.node(id);
      bool v = false;
      switch (node.op) {
        case Operator::symbol:
          v = letter.has_value() && *letter == letter_of_[id];
          break;
        case Operator::top:
          v = true;
          break;
        case Operator::negation:
          v = !values_[node.left];
          break;
        case Operator::conjunction:
          v = values_[node.left] && values_[node.right];
          break;
        case Operator::disjunction:
          v = values_[node.left] || values_[node.right];
          break;
        case Operator::past:
        case Operator::since:
          v = bit(state, offset_[id]);
          break;
        case Operator::yesterday:
          v = bit(state, offset_[id] + static_cast<std::size_t>(node.k) - 1);
          break;
        case Operator::modulo:
          v = position % node.m == node.r;
          break;
      }
      values_[id] = v;
    }
  }

  /// Whether the root holds at position i + 1 read as EOS (the prefix is the whole word).
  bool accepting(const std::string& state) {
    evaluate(state, std::nullopt);
    return values_[formula_.root()] != 0;
  }

  /// The memory after also reading `letter` at position i + 1.
  std::string next(const std::string& state, std::size_t letter) {
    evaluate(state, letter);
    std::string out = state;
    set_counter(out, (counter(state) + 1) % modulus_);
    for (const NodeId id : order_) {
      const ltl::Node& node = formula_.node(id);
      const std::size_t at = offset_[id];
      switch (node.op) {
        case Operator::past:  // seen f at some j ≤ i + 1
          set_bit(out, at, bit(state, at) || values_[node.left]);
          break;
        case Operator::since:  // (f S g)(i + 2) = g(i + 1) ∨ (f(i + 1) ∧ (f S g)(i + 1))
          set_bit(out, at, values_[node.right] || (values_[node.left] && bit(state, at)));
          break;
        case Operator::yesterday: {  // register t holds f at position (i + 1) − t
          const auto k = static_cast<std::size_t>(node.k);
          for (std::size_t t = k - 1; t > 0; --t) set_bit(out, at + t, bit(state, at + t - 1));
          set_bit(out, at, values_[node.left]);
          break;
        }
        default:
          break;
      }
    }
    return out;
  }

  static InvalidArgument too_large(std::size_t cap) {
    return InvalidArgument(
        "formula automaton: more than " + std::to_string(cap) +
        " states (the memories of P, S, Y^k and the lcm of the moduli); accepted: formulas whose "
        "automaton has at most " +
        std::to_string(cap) + " states (smaller Y^k offsets and moduli)");
  }

 private:
  static constexpr std::size_t kNoLetter = static_cast<std::size_t>(-1);

  static std::uint64_t counter(const std::string& state) {
    std::uint64_t c = 0;
    for (std::size_t b = 0; b < sizeof c; ++b)
      c |= std::uint64_t{static_cast<unsigned char>(state[b])} << (8 * b);
    return c;
  }
  static void set_counter(std::string& state, std::uint64_t c) {
    for (std::size_t b = 0; b < sizeof c; ++b) state[b] = static_cast<char>((c >> (8 * b)) & 0xff);
  }
  static bool bit(const std::string& state, std::size_t at) {
    return (static_cast<unsigned char>(state[sizeof(std::uint64_t) + at / 8]) >> (at % 8)) & 1U;
  }
  static void set_bit(std::string& state, std::size_t at, bool value) {
    auto& byte = state[sizeof(std::uint64_t) + at / 8];
    const auto mask = static_cast<unsigned char>(1U << (at % 8));
    byte = static_cast<char>(
        value ? (static_cast<unsigned char>(byte) | mask)
              : (static_cast<unsigned char>(byte) & static_cast<unsigned char>(~mask)));
  }

  const ltl::Formula& formula_;
  std::vector<unsigned char> values_;   // per node: its value at the position being read
  std::vector<std::size_t> letter_of_;  // per symbol node: its letter index
  std::vector<std::size_t> offset_;     // per P / S / Y^k node: its first memory bit
  std::vector<NodeId> order_;           // the nodes below the root, children first
  std::uint64_t modulus_ = 1;
  std::size_t bits_ = 0;
};

}  // namespace

automata::Dfa formula_dfa(const ltl::Formula& formula, const std::vector<std::string>& alphabet,
                          std::size_t state_cap) {
  Reader reader(formula, alphabet, state_cap);
  const std::string start = reader.initial();
  const std::size_t cap = std::min(state_cap, kMaxMemoryBytes / (2 * start.size() + 64));
  std::unordered_map<std::string, automata::State> number{{start, 0}};
  std::deque<const std::string*> queue{&number.begin()->first};
  std::vector<std::vector<automata::State>> transitions;
  std::vector<bool> accepting;
  while (!queue.empty()) {
    const std::string& state = *queue.front();
    queue.pop_front();
    accepting.push_back(reader.accepting(state));
    std::vector<automata::State> row(alphabet.size());
    for (std::size_t a = 0; a < alphabet.size(); ++a) {
      auto [it, inserted] = number.emplace(reader.next(state, a), number.size());
      if (inserted) {
        if (number.size() > cap) throw Reader::too_large(cap);
        queue.push_back(&it->first);
      }
      row[a] = it->second;
    }
    transitions.push_back(std::move(row));
  }
  return automata::Dfa(alphabet, std::move(transitions), 0, std::move(accepting));
}

}  // namespace ropesim::proofs
