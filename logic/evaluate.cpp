#include "logic/evaluate.hpp"

namespace ropesim::ltl {

Word letters(std::string_view text) {
  Word word;
  word.reserve(text.size());
  for (char c : text) word.emplace_back(1, c);
  return word;
}

Evaluation::Evaluation(std::size_t nodes, std::size_t length)
    : nodes_(nodes), length_(length), values_(nodes * (length + 2), 0) {}

bool Evaluation::holds(NodeId id, std::size_t position) const {
  if (id >= nodes_) {
    throw InvalidArgument("evaluation: node id " + std::to_string(id) + " out of range (" +
                          std::to_string(nodes_) + " nodes)");
  }
  if (position > length_ + 1) {
    throw InvalidArgument("evaluation: position " + std::to_string(position) + " out of range 0.." +
                          std::to_string(length_ + 1));
  }
  return values_[id * (length_ + 2) + position] != 0;
}

Evaluation evaluate(const Formula& formula, std::span<const std::string> word) {
  const std::size_t n = word.size();
  const std::size_t width = n + 2;
  Evaluation result(formula.size(), n);
  auto& v = result.values_;
  auto nodes = formula.nodes();
  for (std::size_t id = 0; id < nodes.size(); ++id) {
    const Node& node = nodes[id];
    unsigned char* out = v.data() + id * width;  // out[0] (BOS) stays 0
    const unsigned char* l = v.data() + static_cast<std::size_t>(node.left) * width;
    const unsigned char* r = v.data() + static_cast<std::size_t>(node.right) * width;
    switch (node.op) {
      case Operator::symbol:
        for (std::size_t i = 1; i <= n; ++i) out[i] = word[i - 1] == node.symbol;
        break;  // out[n + 1] (EOS) stays 0
      case Operator::top:
        for (std::size_t i = 1; i <= n + 1; ++i) out[i] = 1;
        break;
      case Operator::negation:
        for (std::size_t i = 1; i <= n + 1; ++i) out[i] = !l[i];
        break;
      case Operator::conjunction:
        for (std::size_t i = 1; i <= n + 1; ++i) out[i] = l[i] && r[i];
        break;
      case Operator::disjunction:
        for (std::size_t i = 1; i <= n + 1; ++i) out[i] = l[i] || r[i];
        break;
      case Operator::past: {
        bool seen = false;  // some 1 <= j < i has the operand
        for (std::size_t i = 1; i <= n + 1; ++i) {
          out[i] = seen;
          seen = seen || l[i];
        }
        break;
      }
      case Operator::yesterday:
        for (std::size_t i = 1; i <= n + 1; ++i) out[i] = i > node.k && l[i - node.k];
        break;
      case Operator::since: {
        // (f S g)(1) = false (no j with 1 <= j < 1); (f S g)(i+1) = g(i) or (f(i) and (f S g)(i)).
        bool value = false;
        for (std::size_t i = 1; i <= n + 1; ++i) {
          out[i] = value;
          value = r[i] || (l[i] && value);
        }
        break;
      }
      case Operator::modulo:
        for (std::size_t i = 1; i <= n + 1; ++i) out[i] = i % node.m == node.r;
        break;
    }
  }
  return result;
}

bool accepts(const Formula& formula, std::span<const std::string> word) {
  return evaluate(formula, word).holds(formula.root(), word.size() + 1);
}

}  // namespace ropesim::ltl
