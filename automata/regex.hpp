#pragma once
/// Regular expressions → DFA (THEORY §8: the LC25 and RoPE-X test languages are given as
/// regular expressions).
///
/// Syntax (single-character letters; every character of the alphabet is a letter):
///   alternative := sequence ('|' sequence)*
///   sequence    := repetition*            (an empty sequence is ε: `a|`, `()`, `` all allowed)
///   repetition  := atom ('*' | '+' | '?')*
///   atom        := letter | '.' | '(' alternative ')'
/// `.` is any letter of the alphabet. Blanks are not allowed (they are not letters).
/// Construction: Thompson's NFA, then the subset construction; the result is complete (the
/// empty subset is the sink state) but not minimal (see minimise.hpp).
#include <cstddef>
#include <string>
#include <vector>

#include "automata/dfa.hpp"

namespace ropesim::automata {

/// The most DFA states the subset construction may create before refusing.
inline constexpr std::size_t kMaxSubsetStates = 200000;

/// The DFA of `regex` over `alphabet` (single-character symbols, as alphabet_from_letters
/// returns). Throws ropesim::InvalidArgument with one line naming the problem and its column
/// (1-based) for a character outside the alphabet and the syntax, an unmatched parenthesis, a
/// repetition operator with nothing to repeat, nesting deeper than 1000 levels, or a subset
/// construction beyond kMaxSubsetStates states; and for an alphabet with a symbol that is not
/// one character or that the syntax reserves.
Dfa regex_to_dfa(const std::string& regex, const std::vector<std::string>& alphabet);

}  // namespace ropesim::automata
