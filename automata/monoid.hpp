#pragma once
/// The transition monoid of a DFA and its R-triviality (THEORY §5 T2, [LC25 Thm 4.1]: for the
/// minimal DFA, whose transition monoid is the syntactic monoid of its language, L ∈ LTL[P]
/// iff that monoid is R-trivial).
#include <cstddef>
#include <optional>
#include <vector>

#include "automata/dfa.hpp"

namespace ropesim::automata {

/// The transition monoid M = {δ*(·, w) : w ∈ Σ*} as transformations of Q, with its right
/// Cayley graph.
struct TransitionMonoid {
  /// The elements: elements[s][q] = δ*(q, w_s). Element 0 is the identity (w_0 = ε); the
  /// others in order of discovery (breadth first over words, letters in alphabet order).
  std::vector<std::vector<State>> elements;
  /// A shortest word w_s representing each element.
  std::vector<Word> words;
  /// right[s][a] = the index of s·a (apply s, then the letter a).
  std::vector<std::vector<std::size_t>> right;
};

/// The most transformation entries (|M| · |Q|) transition_monoid stores, whatever the cap:
/// about 2^22 entries (tens of megabytes with the index).
inline constexpr std::size_t kMaxMonoidEntries = std::size_t{1} << 22;

/// The transition monoid of `dfa` by breadth-first search over transformations, or nullopt if
/// it has more than `cap` elements or more than kMaxMonoidEntries / |Q|.
std::optional<TransitionMonoid> transition_monoid(const Dfa& dfa, std::size_t cap);

/// Three-valued answer of a check that may give up.
enum class Verdict { yes, no, inconclusive };

/// Is the transition monoid R-trivial (s·M = t·M ⇒ s = t)?
struct RTriviality {
  Verdict r_trivial = Verdict::inconclusive;
  std::size_t size = 0;  ///< |M|, 0 when inconclusive
  /// When not R-trivial: words of two distinct elements s ≠ t with s·x = t and t·y = s
  /// (so sM = tM), as {w_s, w_t, x, y}.
  std::optional<std::vector<Word>> witness;
};

/// Decides R-triviality of the transition monoid of `dfa`: sM is the set of elements
/// reachable from s in the right Cayley graph, so M is R-trivial iff that graph has no two
/// distinct elements in one strongly connected component (Boost.Graph strong_components).
/// Inconclusive (not a guess) when M has more than `cap` elements (or kMaxMonoidEntries / |Q|).
RTriviality r_triviality(const Dfa& dfa, std::size_t cap);

}  // namespace ropesim::automata
