#include "automata/export.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "io/files.hpp"

namespace ropesim::automata {

namespace {

/// `s` as a DOT string literal.
std::string dot_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

/// The keys of a DFA file, all required.
constexpr const char* kDfaKeys[] = {"alphabet", "states", "initial", "accepting", "transitions"};

const nlohmann::json& member(const nlohmann::json& json, const char* key, const char* accepted) {
  if (!json.contains(key))
    throw InvalidArgument(std::string("DFA JSON: missing key '") + key +
                          "'; accepted: " + accepted);
  return json.at(key);
}

std::size_t state_number(const nlohmann::json& value, const std::string& where, std::size_t limit) {
  if (!value.is_number_unsigned() || value.get<std::uint64_t>() >= limit) {
    throw InvalidArgument("DFA JSON: " + where + " is " + ropesim::json_value_text(value) +
                          "; accepted: a state number 0.." + std::to_string(limit - 1));
  }
  return static_cast<std::size_t>(value.get<std::uint64_t>());
}

}  // namespace

std::string to_dot(const Dfa& dfa) {
  std::string out = "digraph DFA {\n  rankdir=LR;\n  start [shape=point];\n";
  for (State q = 0; q < dfa.state_count(); ++q) {
    out += "  " + std::to_string(q) + " [shape=" + (dfa.accepting(q) ? "doublecircle" : "circle") +
           "];\n";
  }
  out += "  start -> " + std::to_string(dfa.initial()) + ";\n";
  for (State q = 0; q < dfa.state_count(); ++q) {
    std::map<State, std::string> labels;
    for (Letter a = 0; a < dfa.letter_count(); ++a) {
      std::string& label = labels[dfa.next(q, a)];
      label += (label.empty() ? "" : ",") + dfa.alphabet()[a];
    }
    for (const auto& [target, label] : labels) {
      out += "  " + std::to_string(q) + " -> " + std::to_string(target) +
             " [label=" + dot_quoted(label) + "];\n";
    }
  }
  return out + "}\n";
}

nlohmann::json to_json(const Dfa& dfa) {
  nlohmann::json accepting = nlohmann::json::array();
  for (State q = 0; q < dfa.state_count(); ++q) {
    if (dfa.accepting(q)) accepting.push_back(q);
  }
  return {{"alphabet", dfa.alphabet()},
          {"states", dfa.state_count()},
          {"initial", dfa.initial()},
          {"accepting", accepting},
          {"transitions", dfa.transitions()}};
}

Dfa dfa_from_json(const nlohmann::json& json) {
  if (!json.is_object())
    throw InvalidArgument(
        "DFA JSON: the top level is not an object; accepted: {\"alphabet\": ..., \"states\": ..., "
        "\"initial\": ..., \"accepting\": ..., \"transitions\": ...}");
  for (auto it = json.begin(); it != json.end(); ++it) {  // a misspelt key must not go unnoticed
    if (std::find(std::begin(kDfaKeys), std::end(kDfaKeys), it.key()) == std::end(kDfaKeys)) {
      throw InvalidArgument(
          "DFA JSON: unknown key '" + it.key() +
          "'; accepted: alphabet, states, initial, accepting, transitions (each once)");
    }
  }
  const auto& alphabet_json = member(json, "alphabet", "a list of distinct non-empty strings");
  if (!alphabet_json.is_array())
    throw InvalidArgument(
        "DFA JSON: 'alphabet' is not a list; accepted: a list of distinct non-empty strings");
  std::vector<std::string> alphabet;
  for (const auto& symbol : alphabet_json) {
    if (!symbol.is_string()) {
      throw InvalidArgument("DFA JSON: alphabet symbol " + ropesim::json_value_text(symbol) +
                            " is not a string; accepted: non-empty strings");
    }
    alphabet.push_back(symbol.get<std::string>());
  }
  const auto& states_json = member(json, "states", "the number of states, an integer ≥ 1");
  if (!states_json.is_number_unsigned() || states_json.get<std::uint64_t>() < 1 ||
      states_json.get<std::uint64_t>() > 1000000) {
    throw InvalidArgument("DFA JSON: 'states' is " + ropesim::json_value_text(states_json) +
                          "; accepted: an integer in 1..1000000");
  }
  const auto n = static_cast<std::size_t>(states_json.get<std::uint64_t>());
  const State initial = state_number(member(json, "initial", "a state number"), "'initial'", n);
  const auto& accepting_json = member(json, "accepting", "a list of state numbers");
  if (!accepting_json.is_array())
    throw InvalidArgument("DFA JSON: 'accepting' is not a list; accepted: a list of state numbers");
  std::vector<bool> accepting(n, false);
  for (const auto& q_json : accepting_json) {
    const State q = state_number(q_json, "an accepting state", n);
    if (accepting[q]) {
      throw InvalidArgument("DFA JSON: accepting state " + std::to_string(q) +
                            " is listed twice; list each once");
    }
    accepting[q] = true;
  }
  const auto& rows = member(json, "transitions", "one list per state of one target per letter");
  if (!rows.is_array() || rows.size() != n) {
    throw InvalidArgument(
        "DFA JSON: 'transitions' must be a list of " + std::to_string(n) +
        " rows (one per state); accepted: one list of one target per letter per state");
  }
  std::vector<std::vector<State>> transitions(n);
  for (std::size_t q = 0; q < n; ++q) {
    if (!rows[q].is_array() || rows[q].size() != alphabet.size()) {
      throw InvalidArgument("DFA JSON: transitions row " + std::to_string(q) + " is " +
                            ropesim::json_value_text(rows[q]) + "; accepted: a list of " +
                            std::to_string(alphabet.size()) + " state numbers (one per letter)");
    }
    for (std::size_t a = 0; a < alphabet.size(); ++a) {
      transitions[q].push_back(state_number(
          rows[q][a], "transitions[" + std::to_string(q) + "][" + std::to_string(a) + "]", n));
    }
  }
  return Dfa(std::move(alphabet), std::move(transitions), initial, std::move(accepting));
}

Dfa load_dfa(const std::string& path) {
  const std::string text = io::read_input_file(path, "DFA file (JSON)");
  nlohmann::json json;
  try {
    json = ropesim::read_json(text);  // no key twice, numbers kept exactly
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": " + e.what() +
                          "; accepted: a DFA file {\"alphabet\", \"states\", \"initial\", "
                          "\"accepting\", \"transitions\"}");
  }
  try {
    return dfa_from_json(json);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": " + e.what());
  }
}

}  // namespace ropesim::automata
