#pragma once
/// A zoo of regular languages from the papers (THEORY §4, §5, §8), each over a concrete alphabet
/// of single letters, with a regular expression, a formula where the logics here have one, the
/// narrowest of the classes LTL[P] ⊂ LTL[P,MOD] it belongs to, and the source.
///
/// Regular expressions use concatenation, `|`, `*`, `+`, `?`, parentheses and `.` for any letter
/// of the language's alphabet (the automata module reads the same syntax).
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ropesim::ltl {

struct ZooLanguage {
  std::string name;                   ///< the papers' name, or an ASCII regex-like name
  std::vector<std::string> alphabet;  ///< single-letter symbols
  std::string regex;                  ///< over the alphabet; `.` is any of its letters
  std::string formula;                ///< text syntax (logic/formula.hpp); empty when none exists
  std::string language_class;         ///< "LTL[P]", "LTL[P,MOD]" or "none" (not in LTL[P,MOD])
  std::string note;                   ///< source; the letter mapping; why no formula, when empty
};

/// All zoo languages, in a fixed order.
std::span<const ZooLanguage> zoo();

/// The zoo language called `name`. Throws InvalidArgument naming the known languages.
const ZooLanguage& zoo_language(std::string_view name);

}  // namespace ropesim::ltl
