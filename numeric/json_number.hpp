#pragma once
/// Exact values in ropesim's JSON output: a value that is a binary64 number
/// is written as a JSON number, so that `json.load` and `pandas` read it as it is; a value
/// binary64 cannot hold is written as its nearest binary64 number with the exact value beside
/// it as a string (`"base": 0.1, "base_exact": "1/10"`), marked as a number by type under a
/// NumberTextMarking (number_text). Header-only.
#include <gmpxx.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/value.hpp"

namespace ropesim::numeric {

/// What a number written as text in the libraries' JSON is: an exact value ("P/Q", an
/// integer's digits, "2^k", an exact decimal) or a decimal rounded for reading (the
/// 17-digit "decimal" of a realised value).
enum class NumberText : std::uint8_t { exact = 1, rounded_decimal = 2 };

/// While one is alive on a thread, number_text() on that thread marks its text by type (a JSON
/// binary value of subtype NumberText holding the text's bytes) instead of writing a JSON
/// string: a reader that converts the libraries' JSON (the Python module, docs/PYTHON.md)
/// then knows which texts are numbers from the C++ side, never from a key's name. Without
/// one (the CLI) the JSON is unchanged. Nests; not shared between threads.
class NumberTextMarking {
 public:
  NumberTextMarking() : previous_(active()) { active() = true; }
  ~NumberTextMarking() { active() = previous_; }
  NumberTextMarking(const NumberTextMarking&) = delete;
  NumberTextMarking& operator=(const NumberTextMarking&) = delete;
  /// True while a NumberTextMarking is alive on this thread.
  static bool& active() {
    thread_local bool on = false;
    return on;
  }

 private:
  bool previous_;
};

/// A number the JSON writes as `text` (it has no JSON number for it): the string `text`, or,
/// under a NumberTextMarking, the binary value of subtype `kind` holding it.
inline nlohmann::json number_text(const std::string& text, NumberText kind = NumberText::exact) {
  if (!NumberTextMarking::active()) return text;
  return nlohmann::json::binary(std::vector<std::uint8_t>(text.begin(), text.end()),
                                static_cast<std::uint8_t>(kind));
}

/// The exact value `q` that the JSON writes as `text` (a rounded decimal for display, "2^k"):
/// the string `text`, or, under a NumberTextMarking, `q` itself marked exact (its "P/Q" text),
/// so that a reader gets the exact value even where the text rounds it.
inline nlohmann::json exact_number(const mpq_class& q, const std::string& text) {
  if (!NumberTextMarking::active()) return text;
  return number_text(q.get_str());
}

/// The text and kind of a value number_text marked, or nullopt for any other JSON value.
inline std::optional<std::pair<std::string, NumberText>> marked_number_text(
    const nlohmann::json& j) {
  if (!j.is_binary() || !j.get_binary().has_subtype()) return std::nullopt;
  const auto subtype = j.get_binary().subtype();
  if (subtype != static_cast<std::uint64_t>(NumberText::exact) &&
      subtype != static_cast<std::uint64_t>(NumberText::rounded_decimal))
    return std::nullopt;
  const auto& bytes = j.get_binary();
  return std::pair{std::string(bytes.begin(), bytes.end()), static_cast<NumberText>(subtype)};
}

/// exact_decimal(q) as number_text (an exact value).
inline nlohmann::json exact_decimal_json(const mpq_class& q) {
  return number_text(exact_decimal(q));
}

/// exact_decimal(v) as number_text (an exact value) when v is finite; "nan", "inf", "-inf"
/// stay text.
inline nlohmann::json exact_decimal_json(const Value& v) {
  return v.is_finite() ? number_text(exact_decimal(v)) : nlohmann::json(exact_decimal(v));
}

/// `j` with every value number_text marked written back as its text (a JSON string): JSON as
/// the CLI writes it, for a file built under a NumberTextMarking (a model spec's
/// "_construction"; exact_number's values come back as "P/Q").
inline nlohmann::json unmarked(nlohmann::json j) {
  if (const auto marked = marked_number_text(j)) return marked->first;
  if (j.is_structured())
    for (auto& item : j) item = unmarked(std::move(item));
  return j;
}

/// `q` as a JSON number when it is exactly a binary64 value (an integer JSON number when `q`
/// is an integer of magnitude < 2^53), else nullopt.
inline std::optional<nlohmann::json> binary64_json(const mpq_class& q) {
  const double d = nearest_double(q);
  if (!std::isfinite(d) || mpq_class(d) != q) return std::nullopt;
  if (q.get_den() == 1 && std::abs(d) < 9007199254740992.0) {
    if (d >= 0) return nlohmann::json(static_cast<std::uint64_t>(d));
    return nlohmann::json(static_cast<std::int64_t>(d));
  }
  return nlohmann::json(d);
}

/// Sets `out[key]` to `q` as a JSON number (binary64_json), or, when binary64 cannot hold `q`,
/// to its nearest binary64 value (nearest_double: correctly rounded, not mpq_get_d, which
/// truncates) with `out[key + "_exact"]` = q's exact text ("P/Q" or an
/// integer, mpq_class::get_str). A `q` beyond binary64's range gets null and the exact text.
inline void put_exact(nlohmann::json& out, const std::string& key, const mpq_class& q) {
  if (const auto j = binary64_json(q)) {
    out[key] = *j;
    return;
  }
  const double d = nearest_double(q);
  out[key] = std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(nullptr);
  out[key + "_exact"] = number_text(q.get_str());
}

/// Sets `out[key]` to the element `v` of F. A finite v is written as put_exact writes its exact
/// value (exact_rational): a JSON number when binary64 holds v (every element of fp64 and
/// narrower formats; -0 is written 0), else its nearest binary64 value with
/// `out[key + "_exact"]` = "P/Q" beside it (a format wider than fp64: p > 53, or beyond
/// binary64's range, where `out[key]` is null). A v that is not finite is the string "nan",
/// "inf" or "-inf" (JSON has no such numbers), with no `KEY_exact`. Other keys of `out` are left
/// as they are. Throws nothing.
inline void put_value(nlohmann::json& out, const std::string& key, const Value& v) {
  if (!v.is_finite()) {
    out[key] = v.is_nan() ? "nan" : (v.sign_bit() ? "-inf" : "inf");
    return;
  }
  put_exact(out, key, exact_rational(v));
}

}  // namespace ropesim::numeric
