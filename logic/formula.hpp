#pragma once
/// Formulas of past temporal logic with modular predicates, LTL[P,MOD] and its neighbours
/// (THEORY §4; Li & Cotterell 2025; Jerad, Svete, Li & Cotterell 2026 §2).
///
/// Semantics (THEORY §4), on a word w_1..w_N read at positions 1..N+1 (N + 1 is EOS; position 0
/// is BOS, which is never a logical position: every formula is false there):
///   a          w_i = a (false at N + 1)          true     every position 1..N+1
///   !f         not f                              f & g, f | g   Boolean and, or
///   P f        f at some j with 1 ≤ j < i         Y f     i > 1 and f at i − 1
///   Y^k f      i > k and f at i − k (k ≥ 1)       f S g   some j < i has g, and f holds at
///                                                         every position strictly between j and i
///   mod(m,r)   i ≡ r (mod m), m ≥ 1, 0 ≤ r < m
/// A word is accepted iff the formula holds at N + 1.
///
/// Text syntax (parse / to_string):
///   atoms      a symbol: a lowercase letter followed by lowercase letters, digits or '_'
///              (`a`, `b0`), except the keywords `true`, `false` (= !true) and `mod`
///   constants  `true`, `false`, `mod(m,r)` with decimal m ≥ 1 and 0 ≤ r < m
///   unary      `!f`, `P f`, `Y f`, `Y^k f` (k ≥ 1 decimal) — bind tightest, right to left
///   binary     `f S g` (left-assoc) binds tighter than `&` (left-assoc), which binds tighter
///              than `|` (left-assoc); parentheses group. Whitespace is free.
///   Examples: `P(a & !P true)` (aΣ*), `Y^3 b`, `mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)`.
/// Formulas are hash-consed DAGs: structurally equal subformulas are one node, built and
/// compiled once.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"  // header-only: ropesim::InvalidArgument (exit 2 in the CLI)

namespace ropesim::ltl {

/// The operators of the logic.
enum class Operator {
  symbol,
  top,
  negation,
  conjunction,
  disjunction,
  past,
  yesterday,
  since,
  modulo
};

/// Index of a node in its Formula (children always have smaller ids than their parents).
using NodeId = std::uint32_t;

/// One node of the DAG.
struct Node {
  Operator op = Operator::top;
  std::string symbol;          ///< op == symbol: the atom
  std::uint64_t k = 0;         ///< op == yesterday: Y^k, k ≥ 1
  std::uint64_t m = 0, r = 0;  ///< op == modulo: mod(m, r)
  NodeId left = 0;             ///< unary operand; left operand of & | S
  NodeId right = 0;            ///< right operand of & | S
  friend bool operator==(const Node&, const Node&) = default;
};

/// A hash-consed formula DAG with a root. Nodes are stored in creation order, which is a
/// topological order (children before parents). Builders return the existing id for a node
/// structurally equal to one already present. Throws InvalidArgument on bad ids, k = 0,
/// m = 0, r ≥ m, or a symbol that is not a valid atom.
class Formula {
 public:
  NodeId symbol(std::string_view atom);
  NodeId top();
  NodeId negation(NodeId operand);
  NodeId conjunction(NodeId left, NodeId right);
  NodeId disjunction(NodeId left, NodeId right);
  NodeId past(NodeId operand);
  NodeId yesterday(NodeId operand, std::uint64_t k = 1);
  NodeId since(NodeId left, NodeId right);
  NodeId modulo(std::uint64_t m, std::uint64_t r);

  /// The root (the formula read at N + 1). Throws InvalidArgument if the formula is empty.
  NodeId root() const;
  void set_root(NodeId root);

  const Node& node(NodeId id) const;
  std::span<const Node> nodes() const { return nodes_; }
  /// Number of distinct nodes (the DAG size).
  std::size_t size() const { return nodes_.size(); }
  /// The distinct atoms, sorted.
  std::vector<std::string> symbols() const;

 private:
  NodeId intern(Node node);
  std::vector<Node> nodes_;
  std::unordered_map<std::string, NodeId> index_;  // canonical key of a node -> id
  NodeId root_ = 0;
  bool has_root_ = false;
};

/// A syntax error: the message names the column (1-based) and what was expected.
class ParseError : public InvalidArgument {
 public:
  ParseError(const std::string& message, std::size_t column)
      : InvalidArgument(message), column_(column) {}
  std::size_t column() const { return column_; }

 private:
  std::size_t column_;
};

/// Parses the text syntax above. Throws ParseError.
Formula parse(std::string_view text);

/// Prints the subformula at `id` (or the root) in the text syntax with the fewest parentheses
/// that re-parse to the same DAG: parse(to_string(f)) is structurally equal to f.
std::string to_string(const Formula& formula, NodeId id);
std::string to_string(const Formula& formula);

/// The number of nodes of the formula at `id` (or the root) written out as a tree, every shared
/// subformula counted once per use (saturating at UINT64_MAX; O(|DAG|) time). to_string prints
/// at least this many characters (every node prints at least one), so a DAG whose tree size is
/// large should not be printed.
std::uint64_t tree_size(const Formula& formula, NodeId id);
std::uint64_t tree_size(const Formula& formula);

}  // namespace ropesim::ltl
