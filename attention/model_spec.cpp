// Model spec files, schema version 1 (docs/MODEL_SPEC.md): reading and checking them, and the
// size budget. See model_spec.hpp; writing is model_spec_write.cpp.
#include "attention/model_spec.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "io/files.hpp"
#include "numeric/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/json_reader.hpp"

namespace ropesim::attention {

namespace {

using nlohmann::json;

/// The document of a model spec: numeric::read_json (no key twice, nesting at most
/// max_model_spec_depth, every number exact: MODEL_SPEC.md promises every number is read
/// exactly and rounded once by the format, so 1e400 rounds to +inf or the largest finite
/// value of F as F says).
json parse_exact(std::string_view text) {
  try {
    return numeric::read_json(text, {max_model_spec_depth, "a model spec needs at most 6"});
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("model spec: invalid JSON: ") + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Reading with paths
// ---------------------------------------------------------------------------------------------

constexpr const char* number_forms =
    "a JSON number, a decimal string like \"-2.5e-3\", a fraction like \"1/3\", or "
    "\"inf\"/\"-inf\"";

[[noreturn]] void bad(const std::string& path, const std::string& problem) {
  throw InvalidArgument(path + ": " + problem);
}

std::string type_text(const json& j) { return numeric::json_value_text(j); }

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

/// Limits on the sizes a spec declares (docs/MODEL_SPEC.md "Sizes"): every dimension (d_model,
/// head_dim, value_dim, ffn hidden, unrotated_pairs) and the entries of one matrix. Without
/// them a few bytes ask for more memory than exists ("d_model": 1e11 with "zeros" vectors)
/// or, worse, rows·cols overflows (head_dim 2^63 × d_model 2 is 0 entries, and "identity"
/// then wrote past the end: found by fuzz/fuzz_model_spec).
constexpr std::size_t max_dimension = 1'000'000;
constexpr std::size_t max_matrix_entries = 10'000'000;

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

template <class F>
auto with_path(const std::string& path, F&& parse) {
  try {
    return parse();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": " + e.what());
  }
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
  const std::optional<std::string> number_text = numeric::json_number_text(j);  // 2.5, 1e400
  if (!j.is_string() && !number_text)
    bad(path, std::string("expected ") + number_forms + ", got " + type_text(j));
  std::string text = number_text ? *number_text : j.get<std::string>();
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.erase(text.begin());
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (text == "inf" || text == "+inf" || text == "infinity" || text == "+infinity") {
    return f.convert(Value::from_double_exact(HUGE_VAL));
  }
  if (text == "-inf" || text == "-infinity") return f.convert(Value::from_double_exact(-HUGE_VAL));
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

std::optional<Realisation> get_realisation(const std::string& spec, const std::string& path,
                                           const numeric::FormatBinding& binding) {
  if (spec == "none") return std::nullopt;
  try {
    return parse_realisation(spec, binding);
  } catch (const InvalidArgument& e) {
    bad(path, std::string(e.what()) + "; or none (unrotated)");
  }
}

RotarySegment get_segment(const json& j, const std::string& path, const EvaluationPolicy& policy) {
  check_object(j, path);
  RotarySegment seg;
  if (optional_field(j, "unrotated_pairs")) {
    check_keys(j, path, {"unrotated_pairs"});
    seg.schedule =
        unrotated_schedule(get_dimension(j["unrotated_pairs"], child(path, "unrotated_pairs")));
    return seg;
  }
  check_keys(j, path, {"schedule", "realisation", "realization", "layout", "format"});
  const std::string spec = get_string(required_field(j, path, "schedule"), child(path, "schedule"));
  seg.schedule = with_path(child(path, "schedule"), [&] { return parse_schedule(spec); });
  Format format = policy.format;
  if (const json* fj = optional_field(j, "format")) {
    const std::string fs = get_string(*fj, child(path, "format"));
    format = with_path(child(path, "format"), [&] { return numeric::parse_format(fs); });
  }
  const char* rkey = optional_field(j, "realization") ? "realization" : "realisation";
  if (optional_field(j, "realization") && optional_field(j, "realisation")) {
    bad(child(path, "realization"), "give either realisation or realization, not both");
  }
  const json& rj = required_field(j, path, rkey);
  const std::string rp = child(path, rkey);
  // the segment's format (default F) with the policy's rounding and engine
  const numeric::FormatBinding binding{format, policy.rounding, policy.engine};
  const std::size_t nb = seg.schedule.blocks.size();
  if (rj.is_string()) {
    const auto r = get_realisation(rj.get<std::string>(), rp, binding);
    seg.realisations.assign(nb, r);
  } else if (rj.is_array()) {
    if (rj.size() != nb) {
      bad(rp, "expected one realisation per rotary block: " + std::to_string(nb) + " for '" +
                  seg.schedule.spec + "', got " + std::to_string(rj.size()));
    }
    for (std::size_t b = 0; b < nb; ++b) {
      seg.realisations.push_back(
          get_realisation(get_string(rj[b], index(rp, b)), index(rp, b), binding));
    }
  } else {
    bad(rp,
        "expected a realisation (r1, r2, r3, hf, llamacpp-cpu, llamacpp-cuda, pipeline:..., none) "
        "or an array of one per block, got " +
            type_text(rj));
  }
  seg.layout = PairLayout::adjacent;
  for (const auto& r : seg.realisations) {
    if (r) {
      seg.layout = r->layout;
      break;
    }
  }
  if (const json* lj = optional_field(j, "layout")) {
    const std::string ls = get_string(*lj, child(path, "layout"));
    seg.layout = with_path(child(path, "layout"), [&] { return parse_pair_layout(ls); });
  }
  for (std::size_t b = 0; b < nb; ++b) {
    if (!seg.realisations[b]) continue;
    Schedule sub = seg.schedule;
    sub.blocks = {seg.schedule.blocks[b]};
    with_path(rp, [&] {
      check_applicable(sub, *seg.realisations[b]);
      return 0;
    });
  }
  return seg;
}

Format get_format(const json& j, const std::string& path) {
  const std::string text = get_string(j, path);
  return with_path(path, [&] { return numeric::parse_format(text); });
}

Rounding get_rounding(const json& j, const std::string& path) {
  const std::string text = get_string(j, path);
  return with_path(path, [&] { return numeric::parse_rounding(text); });
}

/// An accumulator model: its compact spelling ("p=11,e=8@toward-zero/128>fp32") or
/// {"format", "rounding", "promote_every", "promote_to", "promote_rounding"}.
numeric::AccumulatorModel get_accumulator(const json& j, const std::string& path) {
  if (j.is_string()) {
    const std::string text = j.get<std::string>();
    return with_path(path, [&] { return numeric::parse_accumulator_model(text); });
  }
  if (!j.is_object()) {
    bad(path,
        "expected an accumulator: a string like \"p=11,e=8@toward-zero/128>fp32\" or "
        "{\"format\", \"rounding\", \"promote_every\", \"promote_to\", \"promote_rounding\"}, "
        "got " +
            type_text(j));
  }
  check_keys(j, path, {"format", "rounding", "promote_every", "promote_to", "promote_rounding"});
  numeric::AccumulatorModel m;
  m.format = get_format(required_field(j, path, "format"), child(path, "format"));
  if (const json* r = optional_field(j, "rounding"))
    m.rounding = get_rounding(*r, child(path, "rounding"));
  const json* every = optional_field(j, "promote_every");
  const json* to = optional_field(j, "promote_to");
  if (!every && !to) {
    if (optional_field(j, "promote_rounding")) {
      bad(child(path, "promote_rounding"), "given without promote_every and promote_to");
    }
    return m;
  }
  if (!every)
    bad(child(path, "promote_every"),
        "missing (required with promote_to): the number K of products per promotion");
  if (!to)
    bad(child(path, "promote_to"),
        "missing (required with promote_every): the wide format, e.g. \"fp32\"");
  numeric::Promotion promotion;
  promotion.interval = get_size(*every, child(path, "promote_every"));
  if (promotion.interval == 0 || promotion.interval > max_dimension) {
    bad(child(path, "promote_every"), "must be between 1 and " + std::to_string(max_dimension) +
                                          ", got " + std::to_string(promotion.interval));
  }
  promotion.format = get_format(*to, child(path, "promote_to"));
  if (const json* r = optional_field(j, "promote_rounding")) {
    promotion.rounding = get_rounding(*r, child(path, "promote_rounding"));
  }
  m.promotion = promotion;
  return m;
}

/// A tensor's storage: a format string, or {"format" (optional), "scale" (optional)}.
TensorFormat get_tensor_format(const json& j, const std::string& path,
                               const EvaluationPolicy& policy) {
  TensorFormat t;
  if (j.is_string()) {
    t.format = get_format(j, path);
    return t;
  }
  if (!j.is_object()) {
    bad(path,
        "expected a format string like \"bf16\" or {\"format\": \"fp8e4m3\", \"scale\": number}, "
        "got " +
            type_text(j));
  }
  check_keys(j, path, {"format", "scale"});
  if (const json* f = optional_field(j, "format")) t.format = get_format(*f, child(path, "format"));
  if (const json* sj = optional_field(j, "scale")) {
    // per-tensor scales are fp32 numbers, rounded with the policy's rounding
    const Arithmetic fp32(Format::fp32(), policy.rounding, policy.arithmetic_engine());
    const Value scale = get_value(*sj, child(path, "scale"), fp32);
    if (!scale.is_finite() || scale.is_zero() || scale.sign_bit()) {
      bad(child(path, "scale"),
          "must be positive and finite (x_stored = round(x / scale)), got " + exact_decimal(scale));
    }
    t.scale = scale;
  }
  return t;
}

/// A head's per-tensor formats block (attention/head_formats.hpp).
HeadFormats get_head_formats(const json& j, const std::string& path,
                             const EvaluationPolicy& policy) {
  check_keys(j, path,
             {"query", "key", "value", "scores", "score_accumulator", "mask", "softmax",
              "probabilities", "value_accumulator", "output"});
  HeadFormats h;
  if (const json* x = optional_field(j, "query"))
    h.query = get_tensor_format(*x, child(path, "query"), policy);
  if (const json* x = optional_field(j, "key"))
    h.key = get_tensor_format(*x, child(path, "key"), policy);
  if (const json* x = optional_field(j, "value"))
    h.value = get_tensor_format(*x, child(path, "value"), policy);
  if (const json* x = optional_field(j, "scores")) h.scores = get_format(*x, child(path, "scores"));
  if (const json* x = optional_field(j, "score_accumulator")) {
    h.score_accumulator = get_accumulator(*x, child(path, "score_accumulator"));
  }
  if (const json* x = optional_field(j, "mask")) {
    const Arithmetic s(h.scores_format(policy), policy.rounding, policy.arithmetic_engine());
    h.mask = get_value(*x, child(path, "mask"), s);
  }
  if (const json* x = optional_field(j, "softmax"))
    h.softmax = get_format(*x, child(path, "softmax"));
  if (const json* x = optional_field(j, "probabilities"))
    h.probabilities = get_format(*x, child(path, "probabilities"));
  if (const json* x = optional_field(j, "value_accumulator")) {
    h.value_accumulator = get_accumulator(*x, child(path, "value_accumulator"));
  }
  if (const json* x = optional_field(j, "output")) h.output = get_format(*x, child(path, "output"));
  return h;
}

AttentionHead get_head(const json& j, const std::string& path, std::size_t d,
                       const EvaluationPolicy& policy, const Arithmetic& f) {
  check_keys(j, path,
             {"name", "head_dim", "value_dim", "query", "query_bias", "key", "key_bias", "value",
              "value_bias", "output", "scale", "rope", "formats"});
  AttentionHead h;
  if (const json* n = optional_field(j, "name")) h.name = get_string(*n, child(path, "name"));
  h.head_dim = get_dimension(required_field(j, path, "head_dim"), child(path, "head_dim"));
  if (h.head_dim == 0) bad(child(path, "head_dim"), "must be at least 1");
  h.value_dim = get_dimension(required_field(j, path, "value_dim"), child(path, "value_dim"));
  h.query = optional_matrix(j, path, "query", h.head_dim, d, f);
  h.key = optional_matrix(j, path, "key", h.head_dim, d, f);
  h.value = optional_matrix(j, path, "value", h.value_dim, d, f);
  h.output =
      get_matrix(required_field(j, path, "output"), child(path, "output"), d, h.value_dim, f);
  h.query_bias = optional_vector(j, path, "query_bias", h.head_dim, f);
  h.key_bias = optional_vector(j, path, "key_bias", h.head_dim, f);
  h.value_bias = optional_vector(j, path, "value_bias", h.value_dim, f);
  if (const json* s = optional_field(j, "scale"); s && !s->is_null()) {
    h.scale = get_value(*s, child(path, "scale"), f);
  }
  if (const json* x = optional_field(j, "formats"); x && !x->is_null()) {
    h.formats = get_head_formats(*x, child(path, "formats"), policy);
  }
  if (const json* r = optional_field(j, "rope"); r && !r->is_null()) {
    const std::string rp = child(path, "rope");
    if (!r->is_array())
      bad(rp,
          "expected an array of segments ({\"schedule\", \"realisation\"} or "
          "{\"unrotated_pairs\"}), got " +
              type_text(*r));
    std::size_t dim = 0;
    for (std::size_t k = 0; k < r->size(); ++k) {
      h.rotary.push_back(get_segment((*r)[k], index(rp, k), policy));
      dim += h.rotary.back().dimension();
    }
    if (!h.rotary.empty() && dim != h.head_dim) {
      bad(rp, "segments cover " + std::to_string(dim) + " coordinates, head_dim is " +
                  std::to_string(h.head_dim));
    }
  }
  return h;
}

Layer get_layer(const json& j, const std::string& path, std::size_t d,
                const EvaluationPolicy& policy, const Arithmetic& f) {
  check_keys(j, path, {"heads", "attention_bias", "attention_norm", "ffn", "ffn_norm"});
  Layer layer;
  if (const json* hs = optional_field(j, "heads")) {
    const std::string hp = child(path, "heads");
    if (!hs->is_array()) bad(hp, "expected an array of heads, got " + type_text(*hs));
    for (std::size_t k = 0; k < hs->size(); ++k)
      layer.heads.push_back(get_head((*hs)[k], index(hp, k), d, policy, f));
  }
  layer.attention_bias = optional_vector(j, path, "attention_bias", d, f);
  if (const json* n = optional_field(j, "attention_norm"); n && !n->is_null()) {
    layer.attention_norm = get_norm(*n, child(path, "attention_norm"), d, f);
  }
  if (const json* n = optional_field(j, "ffn_norm"); n && !n->is_null()) {
    layer.ffn_norm = get_norm(*n, child(path, "ffn_norm"), d, f);
  }
  if (const json* fj = optional_field(j, "ffn"); fj && !fj->is_null()) {
    const std::string fp = child(path, "ffn");
    check_keys(*fj, fp, {"hidden", "w1", "b1", "w2", "b2"});
    const std::size_t hidden =
        get_dimension(required_field(*fj, fp, "hidden"), child(fp, "hidden"));
    FeedForward ffn;
    ffn.w1 = get_matrix(required_field(*fj, fp, "w1"), child(fp, "w1"), hidden, d, f);
    ffn.b1 = optional_vector(*fj, fp, "b1", hidden, f);
    ffn.w2 = get_matrix(required_field(*fj, fp, "w2"), child(fp, "w2"), d, hidden, f);
    ffn.b2 = optional_vector(*fj, fp, "b2", d, f);
    layer.ffn = std::move(ffn);
  }
  return layer;
}

/// Refuses, before anything is allocated, a spec whose matrices and vectors hold more than
/// options.max_parameters numbers (each dimension is read leniently here; read_model checks
/// the types afterwards). Sizes are summed in doubles so that no product wraps around.
void check_model_size(const json& spec, std::size_t d_model, const ModelLoadOptions& options) {
  if (options.max_parameters == SIZE_MAX) return;  // lifted: the per-dimension limits still apply
  auto size_of = [](const json* j) -> double {
    if (j && j->is_number_unsigned()) return static_cast<double>(j->get<std::uint64_t>());
    if (j && j->is_number_integer() && j->get<long long>() > 0)
      return static_cast<double>(j->get<long long>());
    return 0;
  };
  ModelShape shape;
  shape.d_model = static_cast<double>(d_model);
  if (const json* a = optional_field(spec, "alphabet"); a && a->is_array())
    shape.symbols = static_cast<double>(a->size());
  if (const json* layers = optional_field(spec, "layers"); layers && layers->is_array()) {
    for (const json& layer : *layers) {
      if (!layer.is_object()) continue;
      shape.layers += 1;
      if (const json* heads = optional_field(layer, "heads"); heads && heads->is_array()) {
        for (const json& h : *heads) {
          if (!h.is_object()) continue;
          shape.heads += 1;
          shape.head_dims += size_of(optional_field(h, "head_dim"));
          shape.value_dims += size_of(optional_field(h, "value_dim"));
        }
      }
      if (const json* ffn = optional_field(layer, "ffn"); ffn && ffn->is_object()) {
        shape.ffn_layers += 1;
        shape.hidden += size_of(optional_field(*ffn, "hidden"));
      }
    }
  }
  const double total = spec_number_count(shape);
  if (total > static_cast<double>(options.max_parameters)) {
    throw InvalidArgument(
        fmt::format("model spec: the model holds about {:.3g} numbers (d_model {}, with every "
                    "head's head_dim/value_dim "
                    "and ffn.hidden), more than the limit of {} (about {:.1f} GiB in memory); "
                    "reduce the dimensions or "
                    "raise the limit (ropesim run --allow-large)",
                    total, d_model, options.max_parameters,
                    static_cast<double>(options.max_parameters) * sizeof(Value) / 1073741824.0));
  }
}

Model read_model(const json& spec, const ModelLoadOptions& options) {
  check_keys(spec, "",
             {"ropesim_model", "name", "description", "policy", "architecture", "d_model",
              "coordinates", "alphabet", "embedding", "layers", "final_norm", "classifier"});
  const json& version = required_field(spec, "", "ropesim_model");
  if (!version.is_number_integer() || version.get<long long>() != model_spec_version) {
    bad("ropesim_model", "unsupported schema version " + version.dump() +
                             "; accepted: " + std::to_string(model_spec_version));
  }
  Model m;
  if (const json* n = optional_field(spec, "name")) m.name = get_string(*n, "name");
  if (const json* n = optional_field(spec, "description"))
    m.description = get_string(*n, "description");

  // Policy first: every number below is rounded into its F.
  const json& pj = required_field(spec, "", "policy");
  check_keys(pj, "policy", {"format", "rounding", "summation", "accumulator"});
  const std::string fs = get_string(required_field(pj, "policy", "format"), "policy.format");
  m.policy.format = with_path("policy.format", [&] { return numeric::parse_format(fs); });
  if (const json* r = optional_field(pj, "rounding")) {
    const std::string rs = get_string(*r, "policy.rounding");
    m.policy.rounding = with_path("policy.rounding", [&] { return numeric::parse_rounding(rs); });
  }
  if (options.format) m.policy.format = *options.format;
  if (options.rounding) m.policy.rounding = *options.rounding;
  // The construction's certified length (compile: certified_length; construct offset: n_max),
  // valid only in the F it was certified for.
  if (const auto c = spec.find("_construction");
      c != spec.end() && c->is_object() && !options.format && !options.rounding) {
    for (const char* key : {"certified_length", "n_max"}) {
      const auto v = c->find(key);
      if (v != c->end() && v->is_number_unsigned()) {
        m.certified_length = v->get<std::uint64_t>();
        break;
      }
    }
  }
  m.policy.engine = options.engine;
  if (const json* s = optional_field(pj, "summation")) {
    const std::string ss = get_string(*s, "policy.summation");
    m.policy.summation = with_path("policy.summation", [&] { return parse_summation(ss); });
  }
  if (const json* a = optional_field(pj, "accumulator")) {
    const std::string as = get_string(*a, "policy.accumulator");
    m.policy.accumulator =
        with_path("policy.accumulator", [&] { return numeric::parse_format(as); });
  } else if (m.policy.summation == Summation::wide_accumulator) {
    bad("policy.accumulator", "missing (required with summation wide-accumulator), e.g. \"fp32\"");
  }
  const Arithmetic f = numeric::arithmetic(m.policy);

  if (const json* aj = optional_field(spec, "architecture")) {
    check_keys(*aj, "architecture", {"bos", "masking", "softmax", "layer_norm"});
    if (const json* b = optional_field(*aj, "bos"))
      m.options.bos = get_bool(*b, "architecture.bos");
    if (const json* x = optional_field(*aj, "masking")) {
      const std::string s = get_string(*x, "architecture.masking");
      m.options.masking = with_path("architecture.masking", [&] { return parse_masking(s); });
    }
    if (const json* x = optional_field(*aj, "softmax")) {
      const std::string s = get_string(*x, "architecture.softmax");
      m.options.softmax =
          with_path("architecture.softmax", [&] { return parse_softmax_variant(s); });
    }
    if (const json* x = optional_field(*aj, "layer_norm")) {
      const std::string s = get_string(*x, "architecture.layer_norm");
      m.options.norm_placement =
          with_path("architecture.layer_norm", [&] { return parse_norm_placement(s); });
    }
  }

  m.d_model = get_dimension(required_field(spec, "", "d_model"), "d_model");
  if (m.d_model == 0) bad("d_model", "must be at least 1");
  if (const json* c = optional_field(spec, "coordinates")) {
    if (!c->is_array())
      bad("coordinates", "expected an array of d_model names, got " + type_text(*c));
    for (std::size_t k = 0; k < c->size(); ++k) {
      m.coordinates.push_back(get_string((*c)[k], "coordinates[" + std::to_string(k) + "]"));
    }
  }
  check_model_size(spec, m.d_model, options);
  const std::size_t d = m.d_model;

  const json& alphabet = required_field(spec, "", "alphabet");
  if (!alphabet.is_array())
    bad("alphabet", "expected an array of symbols (strings), got " + type_text(alphabet));
  if (alphabet.empty()) bad("alphabet", "empty; a model reads words over at least one symbol");
  for (std::size_t k = 0; k < alphabet.size(); ++k) {
    const std::string a = get_string(alphabet[k], index("alphabet", k));
    if (a.empty()) bad(index("alphabet", k), "an empty symbol; symbols are non-empty strings");
    for (std::size_t e = 0; e < k; ++e) {
      if (m.embedding.alphabet[e] == a)
        bad(index("alphabet", k),
            "symbol '" + a + "' is listed twice (also at alphabet[" + std::to_string(e) + "])");
    }
    m.embedding.alphabet.push_back(a);
  }

  const json& ej = required_field(spec, "", "embedding");
  check_keys(ej, "embedding", {"bos", "eos", "symbols"});
  if (m.options.bos) {
    m.embedding.bos = get_vector(required_field(ej, "embedding", "bos"), "embedding.bos", d, f);
  } else if (const json* b = optional_field(ej, "bos"); b && !b->is_null()) {
    bad("embedding.bos",
        "given, but architecture.bos is false (the input has no BOS position); "
        "remove embedding.bos or set architecture.bos to true");
  }
  m.embedding.eos = get_vector(required_field(ej, "embedding", "eos"), "embedding.eos", d, f);
  const json& sj = required_field(ej, "embedding", "symbols");
  check_object(sj, "embedding.symbols");
  for (auto it = sj.begin(); it != sj.end(); ++it) {
    bool known = false;
    for (const auto& a : m.embedding.alphabet) known = known || a == it.key();
    if (!known) bad("embedding.symbols." + it.key(), "not a symbol of the alphabet");
  }
  for (const auto& a : m.embedding.alphabet) {
    const auto it = sj.find(a);
    if (it == sj.end())
      bad("embedding.symbols." + a, "missing (every alphabet symbol needs a vector)");
    m.embedding.symbols.push_back(get_vector(*it, "embedding.symbols." + a, d, f));
  }

  if (const json* lj = optional_field(spec, "layers")) {
    if (!lj->is_array()) bad("layers", "expected an array of layers, got " + type_text(*lj));
    for (std::size_t k = 0; k < lj->size(); ++k)
      m.layers.push_back(get_layer((*lj)[k], index("layers", k), d, m.policy, f));
  }
  if (const json* n = optional_field(spec, "final_norm"); n && !n->is_null()) {
    m.final_norm = get_norm(*n, "final_norm", d, f);
  }
  const json& cj = required_field(spec, "", "classifier");
  check_keys(cj, "classifier", {"weights", "bias"});
  m.classifier.weights =
      get_vector(required_field(cj, "classifier", "weights"), "classifier.weights", d, f);
  if (const json* b = optional_field(cj, "bias"))
    m.classifier.bias = get_value(*b, "classifier.bias", f);
  m.validate();
  return m;
}

}  // namespace

Model parse_model(std::string_view text, const ModelLoadOptions& options) {
  return read_model(parse_exact(text), options);
}

Model model_from_json(const nlohmann::json& spec, const ModelLoadOptions& options) {
  return read_model(spec, options);
}

Model load_model(const std::filesystem::path& path, const ModelLoadOptions& options) {
  const std::string text = io::read_input_file(path.string(), "model spec file (JSON)");
  try {
    return parse_model(text, options);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path.string() + ": " + e.what());
  }
}

double spec_number_count(const ModelShape& s) {
  const double d = s.d_model;
  return d * (3 + s.symbols) + 5 * d * s.layers + 2 * (d + 1) * s.head_dims +
         (2 * d + 1) * s.value_dims + (2 * d + 1) * s.hidden + d * s.ffn_layers;
}

void check_model_budget(const std::string& what, const ModelShape& shape, double max_numbers,
                        double max_bytes) {
  const double numbers = spec_number_count(shape), bytes = spec_min_bytes(shape);
  if (numbers > max_numbers || bytes > max_bytes) {
    throw BudgetExceeded(fmt::format(
        "{}: its model would have d_model {:.3g} and {:.3g} layers, about {:.3g} numbers and a "
        "spec of at least "
        "{}; accepted: models that ropesim run reads (at most {:.0f} numbers and a {} spec)",
        what, shape.d_model, shape.layers, numbers, size_text(bytes), max_numbers,
        size_text(max_bytes)));
  }
}

double spec_min_bytes(const ModelShape& s) {
  const double entries = s.d_model * (2 * s.head_dims + 2 * s.value_dims + 2 * s.hidden);
  const double rows =
      2 * s.head_dims + s.value_dims + s.d_model * s.heads + s.hidden + s.d_model * s.ffn_layers;
  return 16 * entries + 24 * rows;
}

}  // namespace ropesim::attention
