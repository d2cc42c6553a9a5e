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

/// Is the stable semigroup of the syntactic morphism R-trivial (the variety QR of THEORY §5 T6,
/// [RoPE-X Thm 3.3]: for the minimal DFA, L ∈ LTL[P,MOD] iff it is)?
///
/// With η: Σ* → M the morphism onto the transition monoid and E_n = η(Σ^n), the sequence
/// E_1, E_2, … is eventually periodic (E_{n+1} = E_n · η(Σ)); the stability index s is the least
/// s ≥ 1 with E_s = E_{2s}, and the stable semigroup is S = E_s (closed under products, since
/// E_s · E_s = E_{2s}). S is R-trivial iff no two distinct s, t ∈ S have t ∈ sS¹ and s ∈ tS¹.
/// This is the algebraic side of T6, a second implementation beside the component test of
/// classes.hpp (which reads the DFA's graph): they share only the DFA.
struct QuasiRTriviality {
  Verdict quasi_r_trivial = Verdict::inconclusive;
  std::size_t stability_index = 0;  ///< s; 0 when inconclusive
  std::size_t size = 0;             ///< |S|; 0 when inconclusive
  /// When not: words {u_s, u_t, x, y}, each of length s, of two distinct elements s ≠ t of S
  /// with s·x = t and t·y = s (so two distinct states of the s-automaton reach each other).
  std::optional<std::vector<Word>> witness;
};

/// Decides quasi-R-triviality (above) of the transition monoid of `dfa`. Inconclusive (not a
/// guess) when the monoid has more than `cap` elements, when the sequence E_n has not repeated
/// after `cap` steps, or when |S|² · |Q| exceeds kMaxMonoidEntries · 16.
QuasiRTriviality quasi_r_triviality(const Dfa& dfa, std::size_t cap);

}  // namespace ropesim::automata
