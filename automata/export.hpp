#pragma once
/// DFAs as Graphviz DOT and as JSON (the `--dfa FILE` input of `ropesim classify`).
///
/// JSON form (docs/CLI.md "ropesim classify"):
///   {"alphabet": ["a", "b"], "states": 3, "initial": 0, "accepting": [0],
///    "transitions": [[1, 2], [0, 2], [2, 2]]}
/// `transitions[q][i]` = δ(q, alphabet[i]); states are 0..states−1; `accepting` lists the final
/// states (each once, any order). Other keys are ignored.
#include <nlohmann/json.hpp>
#include <string>

#include "automata/dfa.hpp"

namespace ropesim::automata {

/// The DFA in Graphviz DOT: one node per state (double circle if final), an arrow from an
/// invisible node into the initial state, and one edge per (source, target) pair labelled with
/// the letters that take it (comma-separated, in alphabet order).
std::string to_dot(const Dfa& dfa);

/// The DFA in the JSON form above.
nlohmann::json to_json(const Dfa& dfa);

/// Reads the JSON form above. Throws ropesim::InvalidArgument with one line naming the key
/// and the accepted values for a missing or unknown key, a value of the wrong type, a state
/// out of range, a repeated accepting state, or anything Dfa's constructor refuses.
Dfa dfa_from_json(const nlohmann::json& json);

/// Reads a DFA file in the JSON form above. Throws ropesim::InvalidArgument with one line that
/// starts with the path for an unreadable file or a directory, malformed JSON (with the byte
/// position), a key given twice (ropesim::read_json), or anything dfa_from_json refuses.
Dfa load_dfa(const std::string& path);

}  // namespace ropesim::automata
