#pragma once
/// The one mechanism for an enum's spellings (option values such as --softmax, --rounding,
/// --summation): a table gives each value its name (what to_string prints and "accepted" lists)
/// and further spellings that parsing also accepts; name_of and parse_name read it, so the
/// text printed and the text parsed cannot drift apart.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace ropesim {

/// One spelling of an enum value.
template <class E>
struct Spelling {
  E value;
  std::string_view text;
};

/// The spellings of one enum.
template <class E>
struct EnumNames {
  /// What a value is called in the refusal: "unknown <what> 'x'; accepted: ...".
  std::string_view what;
  /// One name per value, in the order the refusal lists them; name_of gives these.
  std::span<const Spelling<E>> names;
  /// Further spellings parse_name accepts (never printed).
  std::span<const Spelling<E>> aliases = {};
  /// The text after "; accepted: "; empty: the names joined by ", ".
  std::string_view accepted = {};
  /// Whether the refusal suggests the closest spelling (ropesim::did_you_mean) ...
  bool suggest = false;
  /// ... among these spellings; empty: among the names.
  std::span<const std::string_view> suggestions = {};
};

/// The name of `value` in `table`; "?" for a value the table does not list. Throws nothing.
template <class E>
std::string_view name_of(const EnumNames<E>& table, E value) {
  for (const Spelling<E>& s : table.names) {
    if (s.value == value) return s.text;
  }
  return "?";
}

/// The value spelled `text` (a name or an alias, exactly). Throws InvalidArgument
/// "unknown <what> '<text>'[; did you mean ...]; accepted: <accepted>" for any other text.
template <class E>
E parse_name(const EnumNames<E>& table, std::string_view text) {
  for (const Spelling<E>& s : table.names) {
    if (s.text == text) return s.value;
  }
  for (const Spelling<E>& s : table.aliases) {
    if (s.text == text) return s.value;
  }
  std::vector<std::string_view> names;
  for (const Spelling<E>& s : table.names) names.push_back(s.text);
  std::string message = "unknown " + std::string(table.what) + " '" + std::string(text) + "'";
  if (table.suggest) {
    message += table.suggestions.empty()
                   ? did_you_mean(text, names)
                   : did_you_mean(text, std::vector<std::string_view>(table.suggestions.begin(),
                                                                      table.suggestions.end()));
  }
  std::string accepted(table.accepted);
  if (accepted.empty()) {
    for (std::size_t k = 0; k < names.size(); ++k) {
      if (k) accepted += ", ";
      accepted += names[k];
    }
  }
  throw InvalidArgument(message + "; accepted: " + accepted);
}

}  // namespace ropesim
