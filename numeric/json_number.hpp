#pragma once
/// Exact values in ropesim's JSON output: a value that is a binary64 number
/// is written as a JSON number, so that `json.load` and `pandas` read it as it is; a value
/// binary64 cannot hold is written as its nearest binary64 number with the exact value beside
/// it as a string (`"base": 0.1, "base_exact": "1/10"`). Header-only.
#include <gmpxx.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "numeric/exact.hpp"
#include "numeric/value.hpp"

namespace ropesim::numeric {

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
  out[key + "_exact"] = q.get_str();
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
