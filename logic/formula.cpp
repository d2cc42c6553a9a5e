#include "logic/formula.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

namespace ropesim::ltl {

namespace {

bool is_keyword(std::string_view word) {
  return word == "true" || word == "false" || word == "mod";
}

bool is_atom(std::string_view atom) {
  if (atom.empty() || !(atom[0] >= 'a' && atom[0] <= 'z')) return false;
  for (char c : atom) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return !is_keyword(atom);
}

// The canonical key of a node: equal keys <=> structurally equal nodes (children are already
// canonical ids, so this is hash-consing).
std::string key_of(const Node& n) {
  switch (n.op) {
    case Operator::symbol:
      return "s" + n.symbol;
    case Operator::top:
      return "t";
    case Operator::negation:
      return "n" + std::to_string(n.left);
    case Operator::conjunction:
      return "c" + std::to_string(n.left) + "," + std::to_string(n.right);
    case Operator::disjunction:
      return "d" + std::to_string(n.left) + "," + std::to_string(n.right);
    case Operator::past:
      return "p" + std::to_string(n.left);
    case Operator::yesterday:
      return "y" + std::to_string(n.k) + "," + std::to_string(n.left);
    case Operator::since:
      return "S" + std::to_string(n.left) + "," + std::to_string(n.right);
    case Operator::modulo:
      return "m" + std::to_string(n.m) + "," + std::to_string(n.r);
  }
  return "?";
}

}  // namespace

NodeId Formula::intern(Node node) {
  std::string key = key_of(node);
  auto found = index_.find(key);
  if (found != index_.end()) return found->second;
  if (nodes_.size() >= std::numeric_limits<NodeId>::max()) {
    throw InvalidArgument("formula: too many nodes");
  }
  auto id = static_cast<NodeId>(nodes_.size());
  nodes_.push_back(std::move(node));
  index_.emplace(std::move(key), id);
  return id;
}

const Node& Formula::node(NodeId id) const {
  if (id >= nodes_.size()) {
    throw InvalidArgument("formula: node id " + std::to_string(id) +
                          " out of range (the formula has " + std::to_string(nodes_.size()) +
                          " nodes)");
  }
  return nodes_[id];
}

NodeId Formula::symbol(std::string_view atom) {
  if (!is_atom(atom)) {
    throw InvalidArgument(
        "formula: '" + std::string(atom) +
        "' is not an atom (a lowercase letter, then lowercase letters, digits or '_'; "
        "not true, false or mod)");
  }
  Node n;
  n.op = Operator::symbol;
  n.symbol = std::string(atom);
  return intern(std::move(n));
}

NodeId Formula::top() {
  Node n;
  n.op = Operator::top;
  return intern(std::move(n));
}

NodeId Formula::negation(NodeId operand) {
  node(operand);
  Node n;
  n.op = Operator::negation;
  n.left = operand;
  return intern(std::move(n));
}

NodeId Formula::conjunction(NodeId left, NodeId right) {
  node(left);
  node(right);
  Node n;
  n.op = Operator::conjunction;
  n.left = left;
  n.right = right;
  return intern(std::move(n));
}

NodeId Formula::disjunction(NodeId left, NodeId right) {
  node(left);
  node(right);
  Node n;
  n.op = Operator::disjunction;
  n.left = left;
  n.right = right;
  return intern(std::move(n));
}

NodeId Formula::past(NodeId operand) {
  node(operand);
  Node n;
  n.op = Operator::past;
  n.left = operand;
  return intern(std::move(n));
}

NodeId Formula::yesterday(NodeId operand, std::uint64_t k) {
  node(operand);
  if (k == 0) throw InvalidArgument("formula: Y^k needs k >= 1 (got k = 0)");
  Node n;
  n.op = Operator::yesterday;
  n.left = operand;
  n.k = k;
  return intern(std::move(n));
}

NodeId Formula::since(NodeId left, NodeId right) {
  node(left);
  node(right);
  Node n;
  n.op = Operator::since;
  n.left = left;
  n.right = right;
  return intern(std::move(n));
}

NodeId Formula::modulo(std::uint64_t m, std::uint64_t r) {
  if (m == 0) throw InvalidArgument("formula: mod(m,r) needs m >= 1 (got m = 0)");
  if (r >= m) {
    throw InvalidArgument("formula: mod(m,r) needs 0 <= r < m (got mod(" + std::to_string(m) + "," +
                          std::to_string(r) + "))");
  }
  Node n;
  n.op = Operator::modulo;
  n.m = m;
  n.r = r;
  return intern(std::move(n));
}

NodeId Formula::root() const {
  if (!has_root_) {
    if (nodes_.empty()) throw InvalidArgument("formula: the formula is empty (no root)");
    return static_cast<NodeId>(nodes_.size() - 1);
  }
  return root_;
}

void Formula::set_root(NodeId root) {
  node(root);
  root_ = root;
  has_root_ = true;
}

std::vector<std::string> Formula::symbols() const {
  std::set<std::string> seen;
  for (const Node& n : nodes_) {
    if (n.op == Operator::symbol) seen.insert(n.symbol);
  }
  return {seen.begin(), seen.end()};
}

// ---------------------------------------------------------------------------------------------
// Parser: recursive descent over the grammar
//   disjunction := conjunction ('|' conjunction)*
//   conjunction := since ('&' since)*
//   since       := unary ('S' unary)*
//   unary       := '!' unary | 'P' unary | 'Y' ['^' number] unary | primary
//   primary     := '(' disjunction ')' | 'true' | 'false' | 'mod' '(' number ',' number ')' | atom
// The uppercase operators P, Y, S are single-character tokens ("Pa" is P a).

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Formula run() {
    skip_space();
    if (at_end()) fail("a formula");
    NodeId root = disjunction();
    skip_space();
    if (!at_end()) fail("an operator ('&', '|', 'S') or the end of the formula");
    formula_.set_root(root);
    return std::move(formula_);
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  Formula formula_;
  int nesting_ = 0;

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  void skip_space() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  std::string found() const {
    if (at_end()) return "end of input";
    char c = text_[pos_];
    if (std::islower(static_cast<unsigned char>(c))) {
      std::size_t end = pos_;
      while (end < text_.size() &&
             (std::islower(static_cast<unsigned char>(text_[end])) ||
              std::isdigit(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) {
        ++end;
      }
      return "'" + std::string(text_.substr(pos_, end - pos_)) + "'";
    }
    if (std::isprint(static_cast<unsigned char>(c))) return "'" + std::string(1, c) + "'";
    return "byte " + std::to_string(static_cast<unsigned>(static_cast<unsigned char>(c)));
  }

  [[noreturn]] void fail(const std::string& expected) const {
    fail_at(pos_, "expected " + expected + ", found " + found());
  }

  [[noreturn]] void fail_at(std::size_t pos, const std::string& what) const {
    throw ParseError("formula: column " + std::to_string(pos + 1) + ": " + what, pos + 1);
  }

  void enter() {
    if (++nesting_ > 1000) fail_at(pos_, "formula nested more than 1000 deep");
  }

  NodeId disjunction() {
    NodeId left = conjunction();
    for (;;) {
      skip_space();
      if (peek() != '|') return left;
      ++pos_;
      NodeId right = conjunction();
      left = formula_.disjunction(left, right);
    }
  }

  NodeId conjunction() {
    NodeId left = since();
    for (;;) {
      skip_space();
      if (peek() != '&') return left;
      ++pos_;
      NodeId right = since();
      left = formula_.conjunction(left, right);
    }
  }

  NodeId since() {
    NodeId left = unary();
    for (;;) {
      skip_space();
      if (peek() != 'S') return left;
      ++pos_;
      NodeId right = unary();
      left = formula_.since(left, right);
    }
  }

  std::uint64_t number(const char* what) {
    skip_space();
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail(what);
    std::uint64_t value = 0;
    std::size_t start = pos_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      auto digit = static_cast<std::uint64_t>(peek() - '0');
      if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
        fail_at(start, std::string("expected ") + what + " below 2^64, found a larger number");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    return value;
  }

  void expect(char c, const std::string& expected) {
    skip_space();
    if (peek() != c) fail(expected);
    ++pos_;
  }

  NodeId unary() {
    skip_space();
    char c = peek();
    if (c == '!' || c == 'P' || c == 'Y') {
      enter();
      ++pos_;
      NodeId result = 0;
      if (c == '!') {
        result = formula_.negation(unary());
      } else if (c == 'P') {
        result = formula_.past(unary());
      } else {
        std::uint64_t k = 1;
        skip_space();
        if (peek() == '^') {
          ++pos_;
          skip_space();
          std::size_t at = pos_;
          k = number("a decimal k >= 1 after 'Y^'");
          if (k == 0) fail_at(at, "expected k >= 1 in Y^k, found 0");
        }
        result = formula_.yesterday(unary(), k);
      }
      --nesting_;
      return result;
    }
    return primary();
  }

  NodeId primary() {
    skip_space();
    char c = peek();
    if (c == '(') {
      enter();
      ++pos_;
      NodeId inner = disjunction();
      skip_space();
      if (peek() != ')') fail("')' or an operator ('&', '|', 'S')");
      ++pos_;
      --nesting_;
      return inner;
    }
    if (std::islower(static_cast<unsigned char>(c))) {
      std::size_t start = pos_;
      while (std::islower(static_cast<unsigned char>(peek())) ||
             std::isdigit(static_cast<unsigned char>(peek())) || peek() == '_') {
        ++pos_;
      }
      std::string_view word = text_.substr(start, pos_ - start);
      if (word == "true") return formula_.top();
      if (word == "false") return formula_.negation(formula_.top());
      if (word == "mod") {
        expect('(', "'(' after 'mod'");
        skip_space();
        std::size_t at_m = pos_;
        std::uint64_t m = number("a decimal modulus m >= 1");
        if (m == 0) fail_at(at_m, "expected a modulus m >= 1 in mod(m,r), found 0");
        expect(',', "',' in mod(m,r)");
        skip_space();
        std::size_t at = pos_;
        std::uint64_t r = number("a decimal remainder r");
        if (r >= m) {
          fail_at(at, "expected a remainder 0 <= r < m = " + std::to_string(m) +
                          " in mod(m,r), found " + std::to_string(r));
        }
        expect(')', "')' closing mod(m,r)");
        return formula_.modulo(m, r);
      }
      return formula_.symbol(word);
    }
    fail("a formula (an atom, 'true', 'false', 'mod(m,r)', '!', 'P', 'Y', 'Y^k' or '(')");
  }
};

// Binding levels for printing: 0 '|', 1 '&', 2 'S', 3 unary and atoms.
int level(const Node& n) {
  switch (n.op) {
    case Operator::disjunction:
      return 0;
    case Operator::conjunction:
      return 1;
    case Operator::since:
      return 2;
    default:
      return 3;
  }
}

std::string print(const Formula& f, NodeId id, int needed) {
  const Node& n = f.node(id);
  std::string text;
  switch (n.op) {
    case Operator::symbol:
      text = n.symbol;
      break;
    case Operator::top:
      text = "true";
      break;
    case Operator::modulo:
      text = "mod(" + std::to_string(n.m) + "," + std::to_string(n.r) + ")";
      break;
    case Operator::negation:
      text = "!" + print(f, n.left, 3);
      break;
    case Operator::past:
    case Operator::yesterday: {
      std::string head =
          n.op == Operator::past ? "P" : (n.k == 1 ? "Y" : "Y^" + std::to_string(n.k));
      std::string operand = print(f, n.left, 3);
      text = head + (operand.front() == '(' ? "" : " ") + operand;
      break;
    }
    case Operator::conjunction:
      text = print(f, n.left, 1) + " & " + print(f, n.right, 2);
      break;
    case Operator::disjunction:
      text = print(f, n.left, 0) + " | " + print(f, n.right, 1);
      break;
    case Operator::since:
      text = print(f, n.left, 2) + " S " + print(f, n.right, 3);
      break;
  }
  if (level(n) < needed) return "(" + text + ")";
  return text;
}

}  // namespace

Formula parse(std::string_view text) { return Parser(text).run(); }

std::string to_string(const Formula& formula, NodeId id) { return print(formula, id, 0); }

std::string to_string(const Formula& formula) { return to_string(formula, formula.root()); }

std::uint64_t tree_size(const Formula& formula, NodeId id) {
  formula.node(id);  // throws for a bad id
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  auto add = [](std::uint64_t x, std::uint64_t y) { return x > kMax - y ? kMax : x + y; };
  std::vector<std::uint64_t> size(static_cast<std::size_t>(id) + 1,
                                  1);  // children have smaller ids
  for (NodeId k = 0; k <= id; ++k) {
    const Node& n = formula.node(k);
    switch (n.op) {
      case Operator::negation:
      case Operator::past:
      case Operator::yesterday:
        size[k] = add(1, size[n.left]);
        break;
      case Operator::conjunction:
      case Operator::disjunction:
      case Operator::since:
        size[k] = add(1, add(size[n.left], size[n.right]));
        break;
      default:
        break;
    }
  }
  return size[id];
}

std::uint64_t tree_size(const Formula& formula) { return tree_size(formula, formula.root()); }

}  // namespace ropesim::ltl
