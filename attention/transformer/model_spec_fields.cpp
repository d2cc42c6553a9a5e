// Reading a model spec's JSON fields with paths (docs/MODEL_SPEC.md); see model_spec_fields.hpp.
#include "attention/transformer/model_spec_fields.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "core/json_reader.hpp"
#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"

namespace ropesim::attention::spec_fields {

namespace {

constexpr const char* number_forms =
    "a JSON number, a decimal string like \"-2.5e-3\", a fraction like \"1/3\", or "
    "\"inf\"/\"-inf\"";

/// True when `t` follows JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number_text(std::string_view t) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t start = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i - start;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (i < t.size() && t[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return false;
  }
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == t.size();
}

}  // namespace

[[noreturn]] void bad(const std::string& path, const std::string& problem) {
  throw InvalidArgument(path + ": " + problem);
}

std::string type_text(const json& j) { return ropesim::json_value_text(j); }

std::string child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string index(const std::string& path, std::size_t k) {
  return path + "[" + std::to_string(k) + "]";
}

void check_object(const json& j, const std::string& path) {
  if (!j.is_object())
    bad(path.empty() ? "model spec" : path, "expected a JSON object, got " + type_text(j));
}

/// Rejects keys not in `allowed` (keys starting with '_' and "comment" are ignored).
void check_keys(const json& j, const std::string& path,
                std::initializer_list<const char*> allowed) {
  check_object(j, path);
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "comment" || (!k.empty() && k[0] == '_')) continue;
    bool ok = false;
    for (const char* a : allowed) ok = ok || k == a;
    if (!ok) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      bad(child(path, k), "unknown field; accepted here: " + list);
    }
  }
}

const json* optional_field(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

const json& required_field(const json& j, const std::string& path, const char* key) {
  const json* f = optional_field(j, key);
  if (!f) bad(child(path, key), "missing (required)");
  return *f;
}

std::size_t get_size(const json& j, const std::string& path) {
  if (j.is_number_unsigned()) return j.get<std::size_t>();
  if (j.is_number_integer() && j.get<long long>() >= 0)
    return static_cast<std::size_t>(j.get<long long>());
  bad(path, "expected a non-negative integer, got " + type_text(j));
}

std::size_t get_dimension(const json& j, const std::string& path) {
  const std::size_t n = get_size(j, path);
  if (n > max_dimension) {
    bad(path, "must be at most " + std::to_string(max_dimension) + ", got " + std::to_string(n));
  }
  return n;
}

void check_matrix_size(const std::string& path, std::size_t rows, std::size_t cols) {
  if (cols != 0 && rows > max_matrix_entries / cols) {
    bad(path, "a " + std::to_string(rows) + " x " + std::to_string(cols) +
                  " matrix has more than " + std::to_string(max_matrix_entries) + " entries");
  }
}

std::string get_string(const json& j, const std::string& path) {
  if (!j.is_string()) bad(path, "expected a string, got " + type_text(j));
  return j.get<std::string>();
}

bool get_bool(const json& j, const std::string& path) {
  if (!j.is_boolean()) bad(path, "expected true or false, got " + type_text(j));
  return j.get<bool>();
}

/// Reads one number exactly and rounds it once into F.
Value get_value(const json& j, const std::string& path, const Arithmetic& f) {
  if (j.is_number_integer() || j.is_number_unsigned()) {
    mpq_class q;
    if (j.is_number_unsigned()) {
      q = mpz_class(std::to_string(j.get<std::uint64_t>()));
    } else {
      q = mpz_class(std::to_string(j.get<std::int64_t>()));
    }
    return f.from_rational(q);
  }
  if (j.is_number_float()) {  // only via model_from_json: the exact double
    const double d = j.get<double>();
    if (std::isnan(d))
      bad(path, std::string("NaN is not an element of F; expected ") + number_forms);
    if (std::isinf(d)) return f.convert(Value::from_double_exact(d));
    if (d == 0 && std::signbit(d)) return f.negate(f.zero());
    return f.from_rational(mpq_class(d));
  }
  const std::optional<std::string> number_text = ropesim::json_number_text(j);  // 2.5, 1e400
  if (!j.is_string() && !number_text)
    bad(path, std::string("expected ") + number_forms + ", got " + type_text(j));
  const std::string text = number_text ? *number_text : j.get<std::string>();
  if (text == "inf") return f.convert(Value::from_double_exact(HUGE_VAL));
  if (text == "-inf") return f.convert(Value::from_double_exact(-HUGE_VAL));
  // A string holds a number as JSON writes one (no blanks, no '+', no ".5" or "1."), or a
  // fraction of two such numbers: one spelling per value, as MODEL_SPEC.md lists them.
  const std::size_t slash_at = text.find('/');
  const bool well_formed =
      slash_at == std::string::npos
          ? is_json_number_text(text)
          : is_json_number_text(std::string_view(text).substr(0, slash_at)) &&
                is_json_number_text(std::string_view(text).substr(slash_at + 1));
  if (!well_formed) bad(path, "'" + text + "' is not a number; expected " + number_forms);
  const bool negative = !text.empty() && text[0] == '-';
  mpq_class q;
  try {
    const std::size_t slash = text.find('/');
    if (slash == std::string::npos) {
      q = numeric::parse_decimal_exact(text, "number");
    } else {
      const mpq_class num = numeric::parse_decimal_exact(text.substr(0, slash), "numerator");
      const mpq_class den = numeric::parse_decimal_exact(text.substr(slash + 1), "denominator");
      if (den == 0) bad(path, "division by zero in '" + text + "'");
      q = num / den;
    }
  } catch (const InvalidArgument& e) {
    const std::string why = e.what();  // 1e999999 is a number, only one too large to expand
    if (why.find("has an exponent beyond") != std::string::npos) bad(path, why);
    bad(path, "'" + text + "' is not a number; expected " + number_forms);
  }
  if (q == 0 && negative) return f.negate(f.zero());
  return f.from_rational(q);
}

/// A vector of length n: an array of numbers, or "zeros".
std::vector<Value> get_vector(const json& j, const std::string& path, std::size_t n,
                              const Arithmetic& f) {
  if (j.is_string() && j.get<std::string>() == "zeros") return std::vector<Value>(n, f.zero());
  if (!j.is_array())
    bad(path,
        "expected an array of " + std::to_string(n) + " numbers or \"zeros\", got " + type_text(j));
  if (j.size() != n) {
    bad(path, "expected " + std::to_string(n) + " numbers, got " + std::to_string(j.size()));
  }
  std::vector<Value> v;
  v.reserve(n);
  for (std::size_t k = 0; k < n; ++k) v.push_back(get_value(j[k], index(path, k), f));
  return v;
}

std::vector<Value> optional_vector(const json& parent, const std::string& path, const char* key,
                                   std::size_t n, const Arithmetic& f) {
  const json* j = optional_field(parent, key);
  if (!j || j->is_null()) return {};
  return get_vector(*j, child(path, key), n, f);
}

/// A rows × cols matrix: an array of rows, "zeros", "identity" (ones on the diagonal), or
/// {"sparse": [[r, c, value], ...]} (other entries zero).
Matrix get_matrix(const json& j, const std::string& path, std::size_t rows, std::size_t cols,
                  const Arithmetic& f) {
  check_matrix_size(path, rows, cols);
  Matrix m = Matrix::zeros(rows, cols);
  const std::string shape = std::to_string(rows) + " x " + std::to_string(cols);
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "zeros") return m;
    if (s == "identity") {
      for (std::size_t k = 0; k < std::min(rows, cols); ++k) m.at(k, k) = f.one();
      return m;
    }
    bad(path, "unknown matrix '" + s + "'; accepted: an array of " + std::to_string(rows) +
                  " rows of " + std::to_string(cols) +
                  " numbers, \"zeros\", \"identity\", or {\"sparse\": [[row, col, value], ...]}");
  }
  if (j.is_object()) {
    check_keys(j, path, {"sparse"});
    const json& entries = required_field(j, path, "sparse");
    const std::string sp = child(path, "sparse");
    if (!entries.is_array())
      bad(sp, "expected an array of [row, col, value], got " + type_text(entries));
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> given;  // (row, col) -> entry index
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const json& e = entries[k];
      const std::string ep = index(sp, k);
      if (!e.is_array() || e.size() != 3)
        bad(ep, "expected [row, col, value], got " + type_text(e));
      const std::size_t r = get_size(e[0], index(ep, 0));
      const std::size_t c = get_size(e[1], index(ep, 1));
      if (r >= rows || c >= cols) {
        bad(ep, "entry (" + std::to_string(r) + ", " + std::to_string(c) + ") outside the " +
                    shape + " matrix");
      }
      if (const auto [it, fresh] = given.emplace(std::make_pair(r, c), k); !fresh) {
        bad(ep, "entry (" + std::to_string(r) + ", " + std::to_string(c) +
                    ") is given twice (also at " + index(sp, it->second) + "); each entry once");
      }
      m.at(r, c) = get_value(e[2], index(ep, 2), f);
    }
    return m;
  }
  if (!j.is_array()) {
    bad(path, "expected a " + shape +
                  " matrix (array of rows, \"zeros\", \"identity\" or {\"sparse\": ...}), got " +
                  type_text(j));
  }
  if (j.size() != rows)
    bad(path, "expected " + shape + ": " + std::to_string(rows) + " rows, got " +
                  std::to_string(j.size()));
  for (std::size_t r = 0; r < rows; ++r) {
    const json& row = j[r];
    const std::string rp = index(path, r);
    if (!row.is_array() || row.size() != cols) {
      bad(rp, "expected a row of " + std::to_string(cols) + " numbers (matrix " + shape +
                  "), got " +
                  (row.is_array() ? std::to_string(row.size()) + " numbers" : type_text(row)));
    }
    for (std::size_t c = 0; c < cols; ++c) m.at(r, c) = get_value(row[c], index(rp, c), f);
  }
  return m;
}

Matrix optional_matrix(const json& parent, const std::string& path, const char* key,
                       std::size_t rows, std::size_t cols, const Arithmetic& f) {
  const json* j = optional_field(parent, key);
  if (!j || j->is_null()) {
    check_matrix_size(child(path, key), rows, cols);
    return Matrix::zeros(rows, cols);
  }
  return get_matrix(*j, child(path, key), rows, cols, f);
}

LayerNormParams get_norm(const json& j, const std::string& path, std::size_t d,
                         const Arithmetic& f) {
  check_keys(j, path, {"gain", "bias", "epsilon"});
  LayerNormParams n;
  n.gain = optional_vector(j, path, "gain", d, f);
  n.bias = optional_vector(j, path, "bias", d, f);
  const json* eps = optional_field(j, "epsilon");
  n.epsilon =
      eps ? get_value(*eps, child(path, "epsilon"), f) : f.from_rational(mpq_class(1, 100000));
  return n;
}
}  // namespace ropesim::attention::spec_fields
