#pragma once
/// The one strict JSON reader of the files users give ropesim: model specs
/// (attention/transformer/model_spec), Hugging Face config.json (attention/schedules/hf_config) and
/// DFA files (automata/export).
///
/// - a key given twice in one object is refused (RFC 8259 §4 leaves it to the reader; last-wins
///   would silently drop a value the user wrote);
/// - objects and arrays nested deeper than a limit are refused while parsing (no recursive
///   copy, dump or destruction can then exhaust the stack);
/// - every number is kept exactly: an integer that fits 64 bits as a JSON integer, every other
///   number (a fraction, an exponent, 1e400, an integer of 2001 digits) as its source text, in
///   a binary value of subtype `json_number_subtype` (JSON text never yields binary values, so
///   such a number cannot be mistaken for a string). Read it with json_number_text.
///
/// Header-only: automata/ uses it without linking ropesim_numeric.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace ropesim {

/// The subtype of the binary values that hold a number's source text.
inline constexpr std::uint64_t json_number_subtype = 0x4e;  // 'N'

/// How read_json reads: the deepest nesting accepted, and a note for the message ("a model
/// spec needs at most 6").
struct JsonReading {
  std::size_t max_depth = 64;
  std::string depth_note;
};

/// True if `j` is a number: a JSON integer, a double (documents built in code) or a number
/// kept as its text by read_json.
inline bool is_json_number(const nlohmann::json& j) {
  return j.is_number() || (j.is_binary() && j.get_binary().has_subtype() &&
                           j.get_binary().subtype() == json_number_subtype);
}

/// The decimal text of a number read by read_json: the source text ("2.5", "1e400") for a
/// kept number, the decimal digits for a JSON integer; nullopt for anything else (doubles
/// included: they have no exact text).
inline std::optional<std::string> json_number_text(const nlohmann::json& j) {
  if (j.is_number_unsigned()) return std::to_string(j.get<std::uint64_t>());
  if (j.is_number_integer()) return std::to_string(j.get<std::int64_t>());
  if (is_json_number(j) && j.is_binary()) {
    const auto& bytes = j.get_binary();
    return std::string(bytes.begin(), bytes.end());
  }
  return std::nullopt;
}

/// A JSON value for a message, at most about 40 characters: `number 2.5`, `string "ab"`,
/// `array [1,2]`, `object {"a":1}`, `boolean true`, `null`.
inline std::string json_value_text(const nlohmann::json& j) {
  std::string s;
  std::string type = j.type_name();
  if (const auto text = json_number_text(j)) {
    type = "number";
    s = *text;
  } else if (j.is_binary()) {
    s = "(binary)";
  } else {
    try {
      s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } catch (const nlohmann::json::exception&) {
      s = "(unprintable)";
    }
  }
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return j.is_null() ? "null" : type + " " + s;
}

namespace detail {

/// The length of the JSON number (RFC 8259 §6 grammar) at text[at], or 0 if none starts there.
inline std::size_t json_number_length(std::string_view text, std::size_t at) {
  std::size_t i = at;
  const auto digit = [&](std::size_t k) {
    return k < text.size() && text[k] >= '0' && text[k] <= '9';
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (!digit(i)) return 0;
  if (text[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < text.size() && text[i] == '.') {
    if (!digit(i + 1)) return 0;
    ++i;
    while (digit(i)) ++i;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t k = i + 1;
    if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
    if (!digit(k)) return 0;
    i = k;
    while (digit(i)) ++i;
  }
  return i - at;
}

/// Builds the document; see read_json.
class StrictJsonSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  using json = nlohmann::json;
  StrictJsonSax(const JsonReading& how, std::vector<std::string> numbers)
      : how_(how), numbers_(std::move(numbers)) {}

  json root;
  std::string error;

  bool null() override { return put(nullptr) != nullptr; }
  bool boolean(bool v) override { return put(v) != nullptr; }
  bool number_integer(number_integer_t v) override { return number(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return number(json(v)); }
  bool number_float(number_float_t, const string_t&) override { return number(json()); }
  bool string(string_t& v) override { return put(v) != nullptr; }
  bool binary(binary_t&) override {
    error = "binary values are not JSON";
    return false;
  }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool key(string_t& k) override {
    if (stack_.back()->contains(k)) {
      error = "duplicate key '" + k + "' (each key once)";
      return false;
    }
    key_ = k;
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while
    // parsing value - invalid literal; last read: 'tru'" -> from "syntax error" on.
    std::string what = e.what();
    const auto at = what.find(": ");
    if (what.rfind("[json.exception.", 0) == 0 && at != std::string::npos)
      what = what.substr(at + 2);
    if (what.size() > 160) what = what.substr(0, 160) + "...";
    error = "malformed JSON at byte " + std::to_string(position) + ": " + what;
    return false;
  }

 private:
  /// The next number token of the text: an integer that fits 64 bits (spelt as its value:
  /// not "-0", not "007") as nlohmann read it, anything else as its text.
  bool number(json value) {
    if (next_number_ >= numbers_.size()) {  // cannot happen: both scan the same grammar
      error = "internal: number tokens out of step";
      return false;
    }
    const std::string& text = numbers_[next_number_++];
    if (value.is_number_integer() && value.dump() == text) return put(std::move(value)) != nullptr;
    return put(json::binary(std::vector<std::uint8_t>(text.begin(), text.end()),
                            json_number_subtype)) != nullptr;
  }
  bool open(json v) {
    if (stack_.size() >= how_.max_depth) {
      error = "nesting deeper than " + std::to_string(how_.max_depth) + " levels" +
              (how_.depth_note.empty() ? "" : " (" + how_.depth_note + ")");
      return false;
    }
    json* p = put(std::move(v));
    if (!p) return false;
    stack_.push_back(p);
    return true;
  }
  json* put(json v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    json* top = stack_.back();
    if (top->is_array()) {
      top->push_back(std::move(v));
      return &top->back();
    }
    json& slot = (*top)[key_];
    slot = std::move(v);
    return &slot;
  }
  const JsonReading& how_;
  std::vector<std::string> numbers_;
  std::size_t next_number_ = 0;
  std::vector<json*> stack_;
  std::string key_;
};

}  // namespace detail

/// Parses JSON `text` strictly (see the file comment). Throws InvalidArgument with the problem
/// and no file name (callers put theirs in front): "malformed JSON at byte N: syntax error
/// ...", "duplicate key 'k' (each key once)" or "nesting deeper than 64 levels".
inline nlohmann::json read_json(std::string_view text, const JsonReading& how = {}) {
  // nlohmann stops at a number beyond double's range ("number overflow") before a handler
  // sees it. Every number token of the text (outside strings) is recorded in order, and the
  // ones beyond double's range are replaced by 0 for nlohmann; the handler takes each
  // number's value from the recorded text, so 1e400 is kept as "1e400".
  std::vector<std::string> numbers;
  std::string scanned;
  scanned.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      scanned += c;
      if (c == '\\' && i + 1 < text.size()) {
        scanned += text[i + 1];
        i += 2;
        continue;
      }
      if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') in_string = true;
    const std::size_t n =
        (c == '-' || (c >= '0' && c <= '9')) ? detail::json_number_length(text, i) : 0;
    if (n == 0) {
      scanned += c;
      ++i;
      continue;
    }
    const std::string token(text.substr(i, n));
    numbers.push_back(token);
    // Beyond double's range: the exponent or the digits are too large (strtod gives ±inf).
    const bool overflows = (token.size() > 300 || token.find_first_of("eE") != std::string::npos) &&
                           !std::isfinite(std::strtod(token.c_str(), nullptr));
    scanned += overflows ? std::string("0") : token;
    i += n;
  }
  detail::StrictJsonSax sax(how, std::move(numbers));
  const bool ok = nlohmann::json::sax_parse(scanned.begin(), scanned.end(), &sax);
  if (!ok) {
    std::string e = sax.error.empty() ? "malformed JSON" : sax.error;
    for (char& c : e) {
      if (c == '\n') c = ' ';
    }
    throw InvalidArgument(e);
  }
  return std::move(sax.root);
}

}  // namespace ropesim
