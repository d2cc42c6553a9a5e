#pragma once
/// The one reader of the lists users write: comma lists on the command line (`--positions
/// 3,4`, `--q 1,0`), the options of a format spec (`p=8,e=5,subnormals=off`), the keys of a
/// schedule spec and the steps of a `pipeline:` realisation.
///
/// Every list refuses empty items (`3,,4`, `a;;`, a trailing separator: a typo, never a
/// request), and where docs/CLI.md forbids repeats, a repeated item or key. Header-only.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace ropesim {

/// What a list may repeat.
enum class Repeats {
  allowed,  ///< values (vector coordinates `1,1,0`)
  items,    ///< no item twice (`--positions 3,3`)
  keys,     ///< no key (the text before '=') twice (`subnormals=off,subnormals=on`)
};

/// The key of a `key=value` item: the text before the first '=' (the whole item without one).
inline std::string_view item_key(std::string_view item) { return item.substr(0, item.find('=')); }

/// What is wrong with a list, in two parts for messages: the problem ("empty item in '3,,4'
/// (item 2)", "'3' is listed twice in '3,3'") and what is accepted instead.
struct ListFault {
  std::string problem, accepted;
};

/// The pieces of `text` between the `separator`s, in order, empty pieces kept:
/// split_pieces("a,,b", ',') = {"a", "", "b"}, split_pieces("", ',') = {""}.
inline std::vector<std::string> split_pieces(std::string_view text, char separator) {
  std::vector<std::string> pieces;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    pieces.emplace_back(
        text.substr(start, end == std::string_view::npos ? text.npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return pieces;
}

/// The first fault of the list `pieces` (split from `text` at `separator`): an empty piece,
/// or a repeat as `repeats` forbids; nullopt if there is none.
inline std::optional<ListFault> list_fault(const std::vector<std::string>& pieces,
                                           std::string_view text, char separator, Repeats repeats) {
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].empty()) {
      return ListFault{"empty item in '" + std::string(text) + "'" +
                           (text.empty() ? std::string() : " (item " + std::to_string(i + 1) + ")"),
                       "non-empty items separated by single '" + std::string(1, separator) + "'"};
    }
  }
  if (repeats == Repeats::allowed) return std::nullopt;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (repeats == Repeats::items && pieces[i] == pieces[j]) {
        return ListFault{"'" + pieces[i] + "' is listed twice in '" + std::string(text) + "'",
                         "each item once"};
      }
      if (repeats == Repeats::keys && item_key(pieces[i]) == item_key(pieces[j])) {
        return ListFault{"'" + std::string(item_key(pieces[i])) + "' is given twice in '" +
                             std::string(text) + "' ('" + pieces[j] + "' and '" + pieces[i] + "')",
                         "each key once"};
      }
    }
  }
  return std::nullopt;
}

/// Refuses an item (or, for Repeats::keys, a key) of `items` that occurs twice, naming `what`
/// (e.g. "--positions") and the list `text` it came from. Throws InvalidArgument.
inline void refuse_repeats(const std::vector<std::string>& items, std::string_view text,
                           std::string_view what, Repeats repeats) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].empty()) continue;  // empty items are split_items' business
    for (std::size_t j = 0; j < i; ++j) {
      if ((repeats == Repeats::items && items[i] == items[j]) ||
          (repeats == Repeats::keys && item_key(items[i]) == item_key(items[j]))) {
        const auto fault = list_fault({items[j], items[i]}, text, '\0', repeats);
        throw InvalidArgument(std::string(what) + ": " + fault->problem +
                              "; accepted: " + fault->accepted);
      }
    }
  }
}

/// The items of `text` between the `separator`s, in order. An empty item (an empty `text`, a
/// separator at the start or end, two in a row) is refused, and so are repeats as `repeats`
/// says: throws InvalidArgument naming `what` and `text`, e.g. "--positions: empty item in
/// '3,,4' (item 2); accepted: non-empty items separated by single ','".
/// split_items("3,4", ',', "--positions") = {"3", "4"}.
inline std::vector<std::string> split_items(std::string_view text, char separator,
                                            std::string_view what,
                                            Repeats repeats = Repeats::allowed) {
  std::vector<std::string> items = split_pieces(text, separator);
  if (const auto fault = list_fault(items, text, separator, repeats)) {
    throw InvalidArgument(std::string(what) + ": " + fault->problem +
                          "; accepted: " + fault->accepted);
  }
  return items;
}

/// Strict unsigned integer text: decimal digits only (no sign, no `0x`, no exponent as in
/// `1e3`, no fraction as in `3.0`, no blanks); leading zeros are decimal (`010` is ten). The
/// value must lie in [lo, hi]. Throws InvalidArgument "<what>: '<text>' is not an integer;
/// accepted: an integer in lo..hi (decimal digits only)" or "... is out of range; ..." (no
/// "<what>: " when `what` is empty). Every integer a user types goes through here: the CLI's
/// integer options (cli/commands.hpp integer_in) and the integers inside specs.
inline std::uint64_t parse_integer(std::string_view text, std::string_view what, std::uint64_t lo,
                                   std::uint64_t hi) {
  const std::string accepted = "accepted: an integer in " + std::to_string(lo) + ".." +
                               std::to_string(hi) + " (decimal digits only)";
  const std::string prefix = what.empty() ? std::string() : std::string(what) + ": ";
  const std::string shown =
      text.size() > 24 ? std::string(text.substr(0, 24)) + "...'" : std::string(text) + "'";
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) {
    throw InvalidArgument(prefix + "'" + shown + " is not an integer; " + accepted);
  }
  const std::size_t first = std::min(text.find_first_not_of('0'), text.size() - 1);
  const std::string_view digits = text.substr(first);
  bool overflow = digits.size() > 20;
  std::uint64_t value = 0;
  for (std::size_t i = 0; !overflow && i < digits.size(); ++i) {
    const auto digit = static_cast<std::uint64_t>(digits[i] - '0');
    if (value > (UINT64_MAX - digit) / 10) overflow = true;
    value = value * 10 + digit;
  }
  if (overflow || value < lo || value > hi) {
    throw InvalidArgument(prefix + "'" + shown + " is out of range; " + accepted);
  }
  return value;
}

}  // namespace ropesim
