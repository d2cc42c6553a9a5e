#pragma once
/// Text that users type and messages echo back: UTF-8 characters and a printable form.
///
/// Header-only (automata/ uses it without linking ropesim_numeric).
#include <cstddef>
#include <string>
#include <string_view>

namespace ropesim {

/// The length in bytes of the well-formed UTF-8 character starting at `text[at]` (1 for
/// ASCII, 2..4 for a multi-byte sequence), or 0 if the bytes there are not well-formed UTF-8
/// (a stray continuation byte, a truncated sequence, an overlong form, a surrogate or a code
/// point above U+10FFFF; Unicode 15 Table 3-7). `at` must be < text.size().
inline std::size_t utf8_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) low = 0x90;   // no overlong forms
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() - at < n) return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
  }
  return n;
}

/// `text` safe to echo in a one-line message: well-formed UTF-8 is kept as it is (`é` stays
/// `é`); every byte that is not well-formed UTF-8 and every control byte (NUL, ESC, DEL, ...)
/// but newline and carriage return is written as `\xNN` (two lowercase hex digits), a tab as
/// `\t`, so a NUL cannot cut a message short, no raw byte reaches the terminal and an echoed
/// tab is seen as one. Idempotent.
inline std::string printable(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8_length(text, i);
    if (c == '\t') {
      out += "\\t";
      ++i;
      continue;
    }
    const bool control = n == 1 && (c == 0x7F || (c < 0x20 && c != '\n' && c != '\r'));
    if (n == 0 || control) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xF];
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

/// printable(text) in single quotes (not `quoted`: std::quoted would win by ADL): `'é'`,
/// `'a\x00b'`.
inline std::string quoted_text(std::string_view text) { return "'" + printable(text) + "'"; }

}  // namespace ropesim
