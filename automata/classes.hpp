#pragma once
/// Deciding the logic class of a regular language from its minimal DFA, each negative answer
/// with a witness (THEORY §5 T2 and T6; [LC25 Thm 4.1], [RoPE-X Thm 3.3]).
///
/// - LTL[P] ⟺ the minimal DFA is partially ordered (no cycle through two distinct states), T2.
/// - LTL[P,MOD] ⟺ the k-automaton A_k (δ^k(q, u) = δ*(q, u), |u| = k) of the minimal DFA is
///   partially ordered for some k, T6. Two independent methods decide it:
///   the component test (decide_ltl_p_mod_by_components) and the definition on Q × Z_k
///   (decide_ltl_p_mod_by_definition); tests/automata checks that they agree.
/// Every decider reads the DFA's graph: its answer is the class of L(dfa) when `dfa` is minimal
/// (minimise.hpp); `classify` minimises first.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "automata/dfa.hpp"
#include "automata/monoid.hpp"

namespace ropesim::automata {

/// A strongly connected component of the transition graph.
struct Component {
  std::vector<State> states;       ///< ascending
  bool has_internal_edge = false;  ///< some δ(q, a) = q' with q, q' both in the component
  /// The period: gcd of the lengths of the cycles inside the component (0 if it has no
  /// internal edge), computed from breadth-first levels (gcd of level(q) + 1 − level(q') over
  /// internal edges q → q').
  std::size_t period = 0;
};

/// The strongly connected components of the transition graph of `dfa` (all states, reachable
/// or not), by Boost.Graph's strong_components; ordered by their smallest state.
std::vector<Component> strongly_connected_components(const Dfa& dfa);

/// A shortest word w with δ*(from, w) = to (breadth first, letters in alphabet order), or
/// nullopt if `to` is unreachable from `from`.
std::optional<Word> shortest_path(const Dfa& dfa, State from, State to);

/// Two distinct states that reach each other: δ*(p, to) = q and δ*(q, back) = p. In A_k the
/// words have lengths ≡ 0 (mod k).
struct TwoStateCycle {
  State p = 0, q = 0;
  Word to, back;
};

/// Is `dfa` partially ordered (PODFA: every cycle is a self-loop)? The witness, when it is not,
/// is a cycle through two distinct states of one strongly connected component.
struct PartialOrder {
  bool partially_ordered = true;
  std::optional<TwoStateCycle> witness;
};

/// Decides whether `dfa` is partially ordered (THEORY §5 T2: on the minimal DFA this is
/// L ∈ LTL[P]).
PartialOrder partial_order(const Dfa& dfa);

/// Why a component forbids LTL[P,MOD]: from `state`, two different letters lead to two
/// different states of the component, so the component is not a simple cycle; `first_loop`
/// and `second_loop` are words that go around the component from `state` back to `state` by
/// these two routes (they start with the two letters).
struct BranchingComponent {
  std::vector<State> component;
  State state = 0;
  Word first_loop, second_loop;
};

/// The component test of THEORY §5 T6.
struct ComponentTest {
  bool ltl_p_mod = true;
  /// lcm of the cycle lengths of the non-trivial components (1 if there are none) when
  /// ltl_p_mod; 0 otherwise.
  std::size_t k = 0;
  std::optional<BranchingComponent> witness;  ///< when !ltl_p_mod
};

/// THEORY §5 T6 decision procedure: L(dfa) ∈ LTL[P,MOD] iff every strongly connected component
/// with an internal edge is a simple cycle whose length equals its period. The graph has
/// parallel edges merged (two letters from q to the same q' are one edge: they change nothing
/// about which states reach each other in A_k), and edges leaving the component are ignored; a
/// simple cycle is then a component in which every state has exactly one successor inside the
/// component. Such a cycle of length ℓ has period ℓ, so its length equals its period; and a
/// component of period d has d cyclic classes (path lengths between two states are fixed mod
/// d), so it is a simple cycle iff each class is one state, iff no two distinct states of it
/// reach each other by words of length ≡ 0 (mod k) for k a multiple of d — the definition
/// that decide_ltl_p_mod_by_definition tests. k = lcm of the cycle lengths.
ComponentTest decide_ltl_p_mod_by_components(const Dfa& dfa);

/// Is the k-automaton A_k partially ordered (THEORY §5 T6, [RoPE-X Thm 3.3])? Decided by
/// reachability on Q × Z_k: (q, i) → (δ(q, a), i + 1 mod k); q reaches q' in A_k iff (q, 0)
/// reaches (q', 0); A_k is partially ordered iff no two distinct states reach each other (the
/// strongly connected components of the product graph, Boost.Graph). The witness words have
/// lengths that are multiples of k. Throws ropesim::InvalidArgument if k = 0 or if
/// |Q| · k exceeds kMaxProductStates.
PartialOrder k_automaton_partial_order(const Dfa& dfa, std::size_t k);

/// The most product states (|Q| · k) k_automaton_partial_order builds.
inline constexpr std::size_t kMaxProductStates = std::size_t{1} << 21;

/// The definition method of THEORY §5 T6.
struct DefinitionTest {
  bool ltl_p_mod = true;
  std::size_t k = 1;  ///< the k tried: lcm of the periods of the non-trivial components
  std::optional<TwoStateCycle> witness;  ///< two distinct states reaching each other in A_k
};

/// L(dfa) ∈ LTL[P,MOD] by the definition: A_k partially ordered, with k = lcm of the periods of
/// the non-trivial components. That k suffices: two states q, q' of one component of period d
/// reach each other in A_k iff their cyclic classes agree mod d (when d | k), which does not
/// depend on the multiple k of d chosen; and A_j partially ordered implies A_{lcm(j,k)} is,
/// whose verdict equals A_k's. k ≤ lcm(1..n) for n states. Throws ropesim::InvalidArgument if
/// |Q| · k exceeds kMaxProductStates.
DefinitionTest decide_ltl_p_mod_by_definition(const Dfa& dfa);

/// The three classes `ropesim classify` reports, narrowest first.
enum class LanguageClass { ltl_p, ltl_p_mod, none };

/// "LTL[P]", "LTL[P,MOD]" or "none".
std::string_view to_string(LanguageClass c);

/// The most transition-monoid elements classify computes before calling the R-triviality
/// cross-check inconclusive.
inline constexpr std::size_t kDefaultMonoidCap = 20000;

/// The class of a regular language with its evidence.
struct Classification {
  Dfa minimal;  ///< the minimal DFA (canonical numbering, minimise.hpp)
  LanguageClass language_class = LanguageClass::none;  ///< the narrowest class that holds
  std::optional<std::size_t> k;  ///< 1 for LTL[P]; lcm of the cycle lengths for LTL[P,MOD]
  std::optional<TwoStateCycle> not_ltl_p;           ///< when not LTL[P]
  std::optional<BranchingComponent> not_ltl_p_mod;  ///< when not LTL[P,MOD]
  RTriviality monoid;               ///< T2's algebraic side, a cross-check of LTL[P]
  bool definition_checked = false;  ///< the A_k definition was run and agreed (false: too large)
};

/// Minimises `dfa` and classifies L(dfa): LTL[P] by partial order (T2), LTL[P,MOD] by the
/// component test (T6), "none" otherwise. Cross-checks, throwing std::logic_error (an internal
/// error) if they disagree: the A_k definition (when |Q|·k ≤ kMaxProductStates) and the
/// R-triviality of the transition monoid (when it has at most `monoid_cap` elements), and the
/// R-triviality of its stable semigroup against the component test (T6's algebraic side, QR).
Classification classify(const Dfa& dfa, std::size_t monoid_cap = kDefaultMonoidCap);

/// The classification as JSON: `states` (minimal DFA size), `class`, `k` (null for none),
/// `witness` (null for LTL[P]; for LTL[P,MOD] the cycle that rules out LTL[P]: `kind`
/// "two-state cycle", `states` [p, q], `words` [to, back]; for none the branching component:
/// `kind` "branching component", `component`, `state`, `loops` [first, second]; both with a
/// `description` sentence), `formula` (null here, automata/ has no logic: `ropesim classify`
/// puts the C3 formula of an LTL[P] language there, proofs/languages/po_formula.hpp),
/// `transition_monoid`
/// {`size` (null if beyond the cap), `r_trivial` (true/false/"inconclusive")}, `minimal_dfa`
/// (export.hpp's JSON form).
nlohmann::json to_json(const Classification& c);

/// The witness's one-sentence description (as in the JSON), "" for LTL[P].
std::string witness_description(const Classification& c);

}  // namespace ropesim::automata
