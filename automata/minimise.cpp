#include "automata/minimise.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include "automata/shortest_word.hpp"
#include "core/error.hpp"

namespace ropesim::automata {

namespace {

/// `dfa` with its states renumbered by `block` (block[q] = new state of q, or none): the
/// quotient by a congruence, numbered breadth first from the initial state's block.
Dfa renumber_quotient(const Dfa& dfa, const std::vector<std::size_t>& block) {
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  const std::size_t blocks = *std::max_element(block.begin(), block.end()) + 1;
  std::vector<State> representative(blocks, kNone);
  for (State q = 0; q < dfa.state_count(); ++q) {
    if (representative[block[q]] == kNone) representative[block[q]] = q;
  }
  std::vector<std::size_t> order(blocks, kNone);  // block → canonical number
  std::vector<std::size_t> by_number;             // canonical number → block
  std::queue<std::size_t> pending;
  order[block[dfa.initial()]] = 0;
  by_number.push_back(block[dfa.initial()]);
  pending.push(block[dfa.initial()]);
  while (!pending.empty()) {
    const std::size_t b = pending.front();
    pending.pop();
    for (Letter a = 0; a < dfa.letter_count(); ++a) {
      const std::size_t c = block[dfa.next(representative[b], a)];
      if (order[c] == kNone) {
        order[c] = by_number.size();
        by_number.push_back(c);
        pending.push(c);
      }
    }
  }
  std::vector<std::vector<State>> transitions(by_number.size(),
                                              std::vector<State>(dfa.letter_count()));
  std::vector<bool> accepting(by_number.size());
  for (std::size_t i = 0; i < by_number.size(); ++i) {
    const State q = representative[by_number[i]];
    accepting[i] = dfa.accepting(q);
    for (Letter a = 0; a < dfa.letter_count(); ++a)
      transitions[i][a] = order[block[dfa.next(q, a)]];
  }
  return Dfa(dfa.alphabet(), std::move(transitions), 0, std::move(accepting));
}

}  // namespace

Dfa reachable_part(const Dfa& dfa) {
  std::vector<std::size_t> identity(dfa.state_count());
  for (State q = 0; q < dfa.state_count(); ++q) identity[q] = q;
  return renumber_quotient(dfa, identity);
}

Dfa minimise(const Dfa& input) {
  const Dfa dfa = reachable_part(input);
  const std::size_t n = dfa.state_count(), k = dfa.letter_count();
  // Inverse transitions: inverse[a][q] = {p : δ(p, a) = q}.
  std::vector<std::vector<std::vector<State>>> inverse(k, std::vector<std::vector<State>>(n));
  for (State p = 0; p < n; ++p) {
    for (Letter a = 0; a < k; ++a) inverse[a][dfa.next(p, a)].push_back(p);
  }
  // Hopcroft: the partition starts as {F, Q∖F} (without empty blocks); the worklist holds
  // (splitter block, letter) pairs, initially the smaller of the two blocks with every letter.
  std::vector<std::vector<State>> blocks;
  std::vector<std::size_t> block_of(n);
  {
    std::vector<State> final_states, others;
    for (State q = 0; q < n; ++q) (dfa.accepting(q) ? final_states : others).push_back(q);
    for (auto* part : {&final_states, &others}) {
      if (part->empty()) continue;
      for (State q : *part) block_of[q] = blocks.size();
      blocks.push_back(std::move(*part));
    }
  }
  std::set<std::pair<std::size_t, Letter>> worklist;
  {
    std::size_t smallest = 0;
    for (std::size_t b = 1; b < blocks.size(); ++b) {
      if (blocks[b].size() < blocks[smallest].size()) smallest = b;
    }
    if (blocks.size() > 1) {
      for (Letter a = 0; a < k; ++a) worklist.insert({smallest, a});
    }
  }
  while (!worklist.empty()) {
    const auto [splitter, a] = *worklist.begin();
    worklist.erase(worklist.begin());
    // X = δ_a^{-1}(splitter), grouped by the block its states lie in.
    std::map<std::size_t, std::vector<State>> hit;
    for (State q : blocks[splitter]) {
      for (State p : inverse[a][q]) hit[block_of[p]].push_back(p);
    }
    for (auto& [y, inside] : hit) {
      if (inside.size() == blocks[y].size()) continue;  // Y ⊆ X: no split
      // Split Y into Y ∩ X (new block) and Y ∖ X (keeps the number y).
      const std::size_t z = blocks.size();
      std::vector<State> rest;
      std::sort(inside.begin(), inside.end());
      for (State q : blocks[y]) {
        if (!std::binary_search(inside.begin(), inside.end(), q)) rest.push_back(q);
      }
      for (State q : inside) block_of[q] = z;
      blocks[y] = std::move(rest);
      blocks.push_back(std::move(inside));
      for (Letter b = 0; b < k; ++b) {
        if (worklist.count({y, b}) > 0) {
          worklist.insert({z, b});
        } else {
          worklist.insert({blocks[z].size() <= blocks[y].size() ? z : y, b});
        }
      }
    }
  }
  return renumber_quotient(dfa, block_of);
}

std::optional<Word> counterexample(const Dfa& a, const Dfa& b) {
  if (a.alphabet() != b.alphabet()) {
    throw InvalidArgument("cannot compare DFAs over different alphabets " +
                          alphabet_text(a.alphabet()) + " and " + alphabet_text(b.alphabet()) +
                          "; accepted: the same symbols in the same order");
  }
  // Breadth first over pairs (p, q) = p·nb + q: the first pair the DFAs disagree on.
  const std::size_t nb = b.state_count();
  auto found = shortest_word(
      a.state_count() * nb, a.letter_count(), a.initial() * nb + b.initial(),
      [&](std::size_t pair, Letter x) { return a.next(pair / nb, x) * nb + b.next(pair % nb, x); },
      [&](std::size_t pair) { return a.accepting(pair / nb) != b.accepting(pair % nb); });
  if (!found) return std::nullopt;
  return std::move(found->first);
}

}  // namespace ropesim::automata
