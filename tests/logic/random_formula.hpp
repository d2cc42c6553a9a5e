#pragma once
// Random formula DAGs for the logic's properties: each new node picks its operator and its
// children among the nodes built so far (so subformulas are shared); the root is the last node.
#include <rapidcheck.h>

#include <cstdint>
#include <string>
#include <vector>

#include "logic/formula.hpp"

namespace testing {

inline ropesim::ltl::Formula random_formula(int max_nodes = 14) {
  using namespace ropesim::ltl;
  Formula f;
  std::vector<NodeId> ids;
  const int count = *rc::gen::inRange(1, max_nodes + 1);
  auto pick = [&] {
    return ids[static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, ids.size()))];
  };
  for (int i = 0; i < count; ++i) {
    int op = ids.empty() ? *rc::gen::inRange(0, 3) : *rc::gen::inRange(0, 10);
    NodeId id = 0;
    switch (op) {
      case 0:
        id = f.symbol(std::string(1, static_cast<char>('a' + *rc::gen::inRange(0, 3))));
        break;
      case 1:
        id = f.top();
        break;
      case 2: {
        auto m = *rc::gen::inRange<std::uint64_t>(1, 5);
        id = f.modulo(m, *rc::gen::inRange<std::uint64_t>(0, m));
        break;
      }
      case 3:
        id = f.negation(pick());
        break;
      case 4:
        id = f.conjunction(pick(), pick());
        break;
      case 5:
        id = f.disjunction(pick(), pick());
        break;
      case 6:
        id = f.past(pick());
        break;
      case 7:
        id = f.yesterday(pick(), *rc::gen::inRange<std::uint64_t>(1, 4));
        break;
      case 8:
        id = f.since(pick(), pick());
        break;
      default:
        id = f.symbol(std::string(1, static_cast<char>('a' + *rc::gen::inRange(0, 3))));
        break;
    }
    ids.push_back(id);
  }
  f.set_root(ids.back());
  return f;
}

}  // namespace testing
