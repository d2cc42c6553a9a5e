#pragma once
/// RapidCheck generators for the theorem properties (check.hpp): formats, schedules, words.
///
/// Every generator is deterministic given RapidCheck's seed and shrinks towards the simplest
/// case (presets before random formats, one block before several, short words before long).
#include <rapidcheck.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "attention/schedules/schedule.hpp"
#include "numeric/format.hpp"

namespace ropesim::properties {

/// A binary floating-point format: the presets fp32, fp16, bf16, tf32, fp64, fp8e5m2,
/// fp8e4m3, or a random IEEE-style format with precision p ∈ [min_p, max_p] bits (hidden bit
/// included) and 5..11 exponent bits. `fixed`, when set, is the only value generated.
rc::Gen<numeric::Format> format_gen(int min_p = 4, int max_p = 53,
                                    const std::optional<numeric::Format>& fixed = std::nullopt);

/// A rational ("periodic") schedule of 1..max_blocks blocks θ_d = 2π·a_d/m_d with
/// 1 ≤ m_d ≤ max_modulus and gcd(a_d, m_d) = 1 (THEORY §3 Def 2.1), as its spec text
/// `periodic:A1/M1,...`; see attention::parse_schedule.
rc::Gen<std::string> periodic_schedule_gen(int max_blocks = 3, int max_modulus = 12);

/// An irrational schedule (THEORY §3 Prop 4.1): `single:g=1`, `single:g=N/D` with D not a
/// multiple of π (every rational g ≠ 0 is an irrational multiple of 2π), or a conventional
/// schedule `base:B,dim=D` with B ∈ {10000, 500000} or a random integer base and D ∈ {2,4,8}.
rc::Gen<std::string> irrational_schedule_gen();

/// A word of length [min_length, max_length] over `alphabet` (single-letter symbols).
rc::Gen<std::string> word_gen(const std::string& alphabet, std::uint64_t min_length,
                              std::uint64_t max_length);

/// Which operators formula_gen may use.
enum class FormulaFragment {
  ltl_p,      ///< atoms, true, ! & |, P (LTL[P], THEORY §4)
  ltl_p_mod,  ///< the same plus mod(m, r) with m ≤ max_modulus (LTL[P,MOD])
  ltl_p_y,    ///< LTL[P] plus Y^k, k ≤ 3 (bounded look-back: THEORY §6, Cor 4.1, C5)
};

/// A random formula of at most `max_nodes` DAG nodes over the letters of `alphabet`, printed
/// in the logic's text syntax (ltl::to_string; parse it with ltl::parse). Each new node picks
/// its operator and its operands among the nodes built so far, so subformulas are shared; the
/// root is the last node. Moduli are in 1..max_modulus.
rc::Gen<std::string> formula_gen(const std::string& alphabet, FormulaFragment fragment,
                                 int max_nodes = 12, int max_modulus = 12);

/// A complete DFA with 2..max_states states over the letters a, b, … (2..max_letters of them),
/// as the JSON text of a `--dfa` file (automata/export.hpp; read it with automata::dfa_from_json).
/// Half of the DFAs are partially ordered by construction (in a hidden order of the states,
/// each transition stays or moves to a later state; the states are then shuffled and the
/// initial state is any state), the other half have arbitrary transitions, so both sides of
/// THEORY §5 T2 occur often. Shrinks towards fewer states and letters and simpler transitions.
rc::Gen<std::string> dfa_gen(int max_states = 8, int max_letters = 3);

/// lcm of the moduli of a periodic schedule (its exact period, RoPE-X Prop 2.2).
std::uint64_t schedule_period(const attention::Schedule& schedule);

}  // namespace ropesim::properties

namespace ropesim::numeric {
/// How RapidCheck prints a generated format in a counterexample: its parse_format spelling.
inline void showValue(const Format& format, std::ostream& os) { os << format.name; }
}  // namespace ropesim::numeric
