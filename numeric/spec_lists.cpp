// The lists users write and the one-line error text (numeric/spec_lists.hpp).
#include "numeric/spec_lists.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "core/error.hpp"
#include "core/text.hpp"
#include "numeric/format.hpp"

namespace ropesim::numeric {

std::vector<std::string> split_list(const std::string& text, const std::string& flag, ListKind kind,
                                    ropesim::Repeats repeats) {
  std::vector<std::string> items;
  auto starts_new = [kind](const std::string& piece) {
    switch (kind) {
      case ListKind::plain:
      case ListKind::realisations:
        return true;
      case ListKind::formats:
        return piece.rfind("p=", 0) == 0 || piece.find('=') == std::string::npos;
      case ListKind::schedules:
        // A new spec has a kind (`single:`) or is a preset name; bare numbers such as the
        // `3` of `periodic:m=2,3,12` or the `1/3` of `periodic:1/2,1/3` continue the last one.
        return piece.find(':') != std::string::npos ||
               (piece.find('=') == std::string::npos &&
                std::any_of(piece.begin(), piece.end(),
                            [](unsigned char c) { return std::isalpha(c) != 0; }));
    }
    return true;
  };
  if (text.empty()) return items;  // no list given: the caller's default or its own message
  // ropesim::split_items refuses every empty item ('3,,4', 'p=8,e=5;;', a trailing ',').
  for (const auto& group : ropesim::split_items(text, ';', flag)) {
    bool first_in_group = true;
    for (const auto& piece : ropesim::split_items(group, ',', flag)) {
      if (kind == ListKind::realisations && first_in_group && !items.empty() &&
          items.back().rfind("pipeline:", 0) == 0 && piece.find('=') != std::string::npos &&
          piece.find(':') == std::string::npos) {
        items.back() += ";" + piece;  // the next key of a multi-key pipeline spec
      } else if (first_in_group || starts_new(piece) || items.empty()) {
        items.push_back(piece);
      } else {
        items.back() += "," + piece;
      }
      first_in_group = false;
    }
  }
  ropesim::refuse_repeats(items, text, flag, repeats);
  return items;
}

std::vector<std::string> split_unique(const std::string& text, const std::string& flag,
                                      ListKind kind) {
  std::vector<std::string> items = split_list(text, flag, kind, ropesim::Repeats::items);
  if (kind == ListKind::formats) {  // precision and exponent ranges: p=4..53,e=11
    std::vector<std::string> expanded;
    for (const auto& item : items) {
      const auto formats = with_context(flag, [&] { return numeric::expand_format_range(item); });
      expanded.insert(expanded.end(), formats.begin(), formats.end());
    }
    items = std::move(expanded);
    // The same format under two spellings (fp16, half, p=11,e=5), whichever comes first; the
    // same spelling twice is left to refuse_repeats' message.
    std::vector<std::pair<numeric::Format, std::string>> seen;
    for (const auto& item : items) {
      const numeric::Format f = with_context(flag, [&] { return numeric::parse_format(item); });
      for (const auto& [earlier, spelled] : seen) {
        if (earlier == f && spelled != item) {
          throw InvalidArgument(flag + ": '" + item + "' is the same format as '" + spelled +
                                "', listed earlier; list each format once");
        }
      }
      seen.emplace_back(f, item);
    }
  }
  ropesim::refuse_repeats(items, text, flag, ropesim::Repeats::items);
  return items;
}

std::string one_line(std::string_view raw) {
  const std::string printed = printable(raw);  // no NUL, control byte or stray non-UTF-8 byte
  const std::string_view message = printed;
  // Quoted values ('...') longer than 80 characters are shortened to their first 60 and a
  // count, so an error about a 1 MB value is one readable line; newlines become spaces.
  std::string out;
  std::size_t i = 0;
  while (i < message.size()) {
    const char c = message[i];
    if (c == '\'') {
      const std::size_t close = message.find('\'', i + 1);
      if (close != std::string_view::npos && close - i - 1 > 80) {
        out += "'" + std::string(message.substr(i + 1, 60)) + "...' (" +
               std::to_string(close - i - 1) + " characters)";
        i = close + 1;
        continue;
      }
      if (close != std::string_view::npos) {      // a short quoted value, kept whole (its closing
        out += message.substr(i, close - i + 1);  // quote does not open another)
        i = close + 1;
        continue;
      }
    }
    out += (c == '\n' || c == '\r') ? ' ' : c;
    ++i;
  }
  if (out.size() > 2000) out = out.substr(0, 1980) + "... (message shortened)";
  return out;
}

}  // namespace ropesim::numeric
