#include "attention/schedules/hf_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpfr.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "core/suggest.hpp"
#include "io/files.hpp"
#include "numeric/exact.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::attention {

namespace {

using json = nlohmann::json;

[[noreturn]] void refuse(std::string_view where, const std::string& problem) {
  throw InvalidArgument(std::string(where) + ": " + problem);
}

/// q as written when short, else in six significant digits ("1e+400"), so that a message
/// never echoes a 400-digit number.
std::string short_text(const mpq_class& q) {
  std::string text = q.get_str();
  if (text.size() <= 30) return text;
  numeric::Mpfr x(64);
  mpfr_set_q(x, q.get_mpq_t(), MPFR_RNDN);
  char* buffer = nullptr;
  if (mpfr_asprintf(&buffer, "%.6Rg", static_cast<mpfr_ptr>(x)) < 0 || !buffer) return text;
  text = buffer;
  mpfr_free_str(buffer);
  return text;
}

std::uint64_t exact_count(const json& j, std::string_view where, std::string_view what) {
  const mpq_class q = exact_json_number(j, where, what);
  if (q.get_den() != 1 || q < 0)
    refuse(where, std::string(what) + " must be a non-negative integer, got " + short_text(q));
  if (!q.get_num().fits_ulong_p()) {
    refuse(where,
           std::string(what) + " must be a non-negative integer below 2^64, got " + short_text(q));
  }
  return q.get_num().get_ui();
}

/// The accepted rope_scaling keys of each type (transformers' `_validate_<type>_parameters`
/// required + optional keys; `type` is the old spelling of `rope_type`).
struct TypeKeys {
  const char* type;
  std::vector<std::string> required, optional;
};

const std::vector<TypeKeys>& type_keys() {
  static const std::vector<TypeKeys> keys = {
      {"default", {}, {"mrope_section", "mrope_interleaved"}},
      {"mrope", {"mrope_section"}, {"mrope_interleaved"}},
      {"linear", {"factor"}, {}},
      {"dynamic", {"factor"}, {"original_max_position_embeddings"}},
      {"yarn",
       {"factor"},
       {"attention_factor", "beta_fast", "beta_slow", "original_max_position_embeddings", "mscale",
        "mscale_all_dim", "truncate"}},
      {"longrope",
       {"short_factor", "long_factor"},
       {"attention_factor", "factor", "original_max_position_embeddings"}},
      {"llama3",
       {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
       {}},
  };
  return keys;
}

/// A value present and not null.
bool has(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && !o.at(key).is_null();
}

std::optional<mpq_class> optional_number(const json& o, const char* key, std::string_view where) {
  if (!has(o, key)) return std::nullopt;
  return exact_json_number(o.at(key), where, key);
}

std::vector<mpq_class> number_list(const json& o, const char* key, std::string_view where) {
  const json& a = o.at(key);
  if (!a.is_array()) refuse(where, std::string(key) + " must be a list of numbers");
  std::vector<mpq_class> out;
  for (const auto& x : a) out.push_back(exact_json_number(x, where, key));
  return out;
}

/// The current rope type of an older spelling that transformers still accepts, or nullptr.
/// Sources (transformers, read December 2026):
/// - "su" → "longrope", and "yarn" → "longrope" in a config whose model_type is "phi3":
///   src/transformers/models/phi3/configuration_phi3.py, Phi3Config._rope_scaling_adjustment
///   ("For backward compatibility if previous version used "su" or "yarn"", commit d7991107;
///   the first Phi-3 checkpoints wrote `"type": "su"`, later ones `"type": "longrope"`).
///   A "yarn" outside phi3 is YaRN (`_compute_yarn_parameters`).
/// - "type" itself is the old key of "rope_type" (modeling_rope_utils.py
///   `_check_received_keys`, "BC: "rope_type" was originally "type""), read below.
/// - Qwen2-VL's `"type": "mrope"` (configuration_qwen2_vl.py maps it to "default" with an
///   mrope_section) is ropesim's type "mrope" already.
const char* legacy_rope_type(const std::string& type, const std::string& model_type) {
  if (type == "su") return "longrope";
  if (type == "yarn" && model_type == "phi3") return "longrope";
  return nullptr;
}

/// rope_scaling (or v5 rope_parameters, where rope_theta and partial_rotary_factor may sit
/// beside the scaling keys: `extra` names them). `model_type` is the config's (legacy spellings
/// depend on it).
std::optional<RopeScaling> read_rope_scaling(const json& r, std::string_view where,
                                             const char* name,
                                             const std::vector<std::string>& extra,
                                             const std::string& model_type) {
  if (!r.is_object()) refuse(where, std::string(name) + " must be an object or null");
  std::string type, spelling;
  for (const char* k : {"rope_type", "type"}) {
    if (!has(r, k)) continue;
    if (!r.at(k).is_string()) refuse(where, std::string(name) + "." + k + " must be a string");
    std::string t = r.at(k).get<std::string>();
    if (const char* current = legacy_rope_type(t, model_type)) {
      spelling = t;
      t = current;
    }
    if (!type.empty() && t != type) {
      refuse(where,
             std::string(name) + " has rope_type '" + type + "' and type '" + t + "'; give one");
    }
    type = t;
  }
  std::vector<std::string> types;
  for (const auto& t : type_keys()) types.push_back(t.type);
  if (type.empty()) {
    if (extra.empty())
      refuse(where, std::string(name) + " has no rope_type (or type); accepted: " +
                        fmt::format("{}", fmt::join(types, ", ")));
    type = "default";
  }
  const auto it = std::find_if(type_keys().begin(), type_keys().end(),
                               [&](const TypeKeys& t) { return t.type == type; });
  if (it == type_keys().end()) {
    refuse(where, "unknown " + std::string(name) + " type '" + type + "'" +
                      ropesim::did_you_mean(type, types) +
                      "; accepted: " + fmt::format("{}", fmt::join(types, ", ")) +
                      " (and the older spellings transformers maps: su = longrope, yarn in a "
                      "phi3 config = longrope)");
  }
  std::vector<std::string> accepted = {"rope_type", "type"};
  accepted.insert(accepted.end(), it->required.begin(), it->required.end());
  accepted.insert(accepted.end(), it->optional.begin(), it->optional.end());
  accepted.insert(accepted.end(), extra.begin(), extra.end());
  for (const auto& [key, value] : r.items()) {
    if (std::find(accepted.begin(), accepted.end(), key) == accepted.end()) {
      const bool phi3_hint = type == "yarn" && (key == "short_factor" || key == "long_factor");
      refuse(where, "unknown key '" + key + "' in " + name + " of type " + type +
                        ropesim::did_you_mean(key, accepted) +
                        "; accepted: " + fmt::format("{}", fmt::join(accepted, ", ")) +
                        (phi3_hint ? " (a Phi-3 config's 'yarn' with short_factor and long_factor "
                                     "is longrope: transformers maps it when model_type is phi3)"
                                   : ""));
    }
  }
  for (const auto& k : it->required) {
    if (!has(r, k.c_str()))
      refuse(where, std::string(name) + " of type " + type + " needs '" + k + "'");
  }
  RopeScaling s;
  s.type = type;
  s.type_spelling = spelling;
  s.factor = optional_number(r, "factor", where);
  s.original_max_position_embeddings =
      optional_number(r, "original_max_position_embeddings", where);
  s.low_freq_factor = optional_number(r, "low_freq_factor", where);
  s.high_freq_factor = optional_number(r, "high_freq_factor", where);
  s.beta_fast = optional_number(r, "beta_fast", where);
  s.beta_slow = optional_number(r, "beta_slow", where);
  s.mscale = optional_number(r, "mscale", where);
  s.mscale_all_dim = optional_number(r, "mscale_all_dim", where);
  s.attention_factor = optional_number(r, "attention_factor", where);
  if (has(r, "truncate")) {
    if (!r.at("truncate").is_boolean())
      refuse(where, std::string(name) + ".truncate must be true or false");
    s.truncate = r.at("truncate").get<bool>();
  }
  if (has(r, "short_factor")) s.short_factor = number_list(r, "short_factor", where);
  if (has(r, "long_factor")) s.long_factor = number_list(r, "long_factor", where);
  if (has(r, "mrope_section")) {
    for (const auto& m : number_list(r, "mrope_section", where)) {
      if (m.get_den() != 1 || m < 0 || !m.get_num().fits_ulong_p()) {
        refuse(where, "mrope_section entries must be non-negative integers, got " + m.get_str());
      }
      s.mrope_section.push_back(m.get_num().get_ui());
    }
    if (s.mrope_section.size() != 3) {
      refuse(where, "mrope_section must list 3 counts (temporal, height, width), got " +
                        std::to_string(s.mrope_section.size()));
    }
    s.type = "mrope";
  }
  if (has(r, "mrope_interleaved")) {
    if (!r.at("mrope_interleaved").is_boolean())
      refuse(where, "mrope_interleaved must be true or false");
    s.mrope_interleaved = r.at("mrope_interleaved").get<bool>();
    if (s.mrope_interleaved && s.mrope_section.empty())
      refuse(where, "mrope_interleaved needs an mrope_section");
  }
  if (s.type == "default") return std::nullopt;
  return s;
}

using numeric::python_float;

/// Python float arithmetic, each operation correctly rounded to binary64 (MPFR, RNDN).
class PyFloat {
 public:
  static double log(double x) { return unary(x, mpfr_log); }
  static double sqrt(double x) { return unary(x, mpfr_sqrt); }
  static double mul(double a, double b) { return a * b; }  // IEEE binary64: correctly rounded
  static double add(double a, double b) { return a + b; }
  static double div(double a, double b) { return a / b; }

 private:
  static double unary(double x, int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t)) {
    numeric::Mpfr a(53), r(53);
    mpfr_set_d(a, x, MPFR_RNDN);
    f(r, a, MPFR_RNDN);
    return mpfr_get_d(r, MPFR_RNDN);
  }
};

/// transformers' get_mscale(scale, mscale): 1.0 if scale <= 1 else 0.1*mscale*log(scale)+1.0.
double get_mscale(double scale, double mscale) {
  if (scale <= 1) return 1.0;
  return PyFloat::add(PyFloat::mul(PyFloat::mul(0.1, mscale), PyFloat::log(scale)), 1.0);
}

std::string mscale_text(const mpq_class& factor, const mpq_class& mscale) {
  if (factor <= 1) return "1";
  return "0.1*" + mscale.get_str() + "*ln(" + factor.get_str() + ")+1";
}

void set_attention_scaling(Schedule& s, double value, std::string text) {
  s.attention_scaling = mpq_class(value);
  s.attention_scaling_text = std::move(text);
}

/// The YaRN attention factor as _compute_yarn_parameters computes it in Python floats.
void yarn_attention_scaling(Schedule& s, const RopeScaling& r, const mpq_class& factor) {
  if (r.attention_factor)
    return set_attention_scaling(s, python_float(*r.attention_factor),
                                 r.attention_factor->get_str());
  const double f = python_float(factor);
  // `if mscale and mscale_all_dim`: Python truthiness (absent or 0 is false)
  if (r.mscale && *r.mscale != 0 && r.mscale_all_dim && *r.mscale_all_dim != 0) {
    const double v = PyFloat::div(get_mscale(f, python_float(*r.mscale)),
                                  get_mscale(f, python_float(*r.mscale_all_dim)));
    return set_attention_scaling(s, v,
                                 "(" + mscale_text(factor, *r.mscale) + ")/(" +
                                     mscale_text(factor, *r.mscale_all_dim) + ")");
  }
  set_attention_scaling(s, get_mscale(f, 1.0), mscale_text(factor, 1));
}

std::int64_t to_int64(const mpz_class& z) {
  if (!z.fits_slong_p())
    throw InvalidArgument("yarn correction range out of range: " + z.get_str());
  return z.get_si();
}

ExactReal times(const ExactReal& x, const mpq_class& q) { return x * ExactReal::rational(q); }

}  // namespace

nlohmann::json parse_json_exact(std::string_view text, std::string_view where) {
  try {
    return ropesim::read_json(text);  // no key twice; 1e400 and 2001-digit integers exactly
  } catch (const InvalidArgument& e) {
    refuse(where, e.what());
  }
}

mpq_class exact_json_number(const json& j, std::string_view where, std::string_view what) {
  const std::optional<std::string> text = ropesim::json_number_text(j);
  if (!text)
    refuse(where, std::string(what) + " must be a number, got " + ropesim::json_value_text(j));
  try {
    return numeric::parse_decimal_exact(*text, what);
  } catch (const InvalidArgument& e) {
    refuse(where, e.what());
  }
}

HfRopeConfig hf_rope_config(const json& top, std::string_view where) {
  if (!top.is_object()) refuse(where, "a config must be a JSON object");
  // Vision-language configs keep the language model's keys in text_config.
  const json* text = has(top, "text_config") ? &top.at("text_config") : nullptr;
  if (text && !text->is_object()) refuse(where, "text_config must be an object");
  auto find = [&](const char* key) -> const json* {
    if (text && has(*text, key)) return &text->at(key);
    if (has(top, key)) return &top.at(key);
    return nullptr;
  };
  auto number = [&](std::initializer_list<const char*> keys) -> std::optional<mpq_class> {
    std::optional<mpq_class> v;
    const char* first = nullptr;
    for (const char* k : keys) {
      const json* j = find(k);
      if (!j) continue;
      const mpq_class x = exact_json_number(*j, where, k);
      if (v && *v != x)
        refuse(where, std::string(first) + " and " + k + " disagree (" + v->get_str() + " vs " +
                          x.get_str() + ")");
      v = x;
      first = k;
    }
    return v;
  };
  auto count = [&](const char* key) -> std::optional<std::uint64_t> {
    const json* j = find(key);
    if (!j) return std::nullopt;
    return exact_count(*j, where, key);
  };

  HfRopeConfig c;
  std::string model_type;  // legacy_rope_type depends on it
  if (const json* m = find("model_type"); m && m->is_string()) model_type = m->get<std::string>();
  const json* params = find("rope_parameters");  // transformers v5
  const json* scaling = find("rope_scaling");
  if (params && scaling) refuse(where, "give rope_scaling or rope_parameters, not both");
  std::optional<mpq_class> theta = number({"rope_theta", "rotary_emb_base"});
  std::optional<mpq_class> prf = number({"partial_rotary_factor", "rotary_pct"});
  if (params) {
    c.rope_scaling = read_rope_scaling(*params, where, "rope_parameters",
                                       {"rope_theta", "partial_rotary_factor"}, model_type);
    for (const char* k : {"rope_theta", "partial_rotary_factor"}) {
      if (!has(*params, k)) continue;
      const mpq_class x = exact_json_number(params->at(k), where, k);
      std::optional<mpq_class>& slot = std::string(k) == "rope_theta" ? theta : prf;
      if (slot && *slot != x)
        refuse(where, std::string(k) + " differs between the config and rope_parameters");
      slot = x;
    }
  } else if (scaling) {
    c.rope_scaling = read_rope_scaling(*scaling, where, "rope_scaling", {}, model_type);
  }
  if (theta) c.rope_theta = *theta;
  if (prf) c.partial_rotary_factor = *prf;
  if (const auto hd = count("head_dim")) {
    c.head_dim = *hd;
  } else {
    const auto hidden = count("hidden_size");
    const auto heads = count("num_attention_heads");
    if (!hidden || !heads || *heads == 0) {
      refuse(where, "needs head_dim, or hidden_size and num_attention_heads (> 0)");
    }
    c.head_dim = *hidden / *heads;  // Python's hidden_size // num_attention_heads
  }
  c.max_position_embeddings = count("max_position_embeddings");
  c.original_max_position_embeddings = count("original_max_position_embeddings");
  return c;
}

HfRopeConfig read_hf_config(const std::string& path) {
  const std::string where = "hf-config '" + path + "'";
  const std::string text = io::read_input_file(path, "config.json file", where);
  return hf_rope_config(parse_json_exact(text, where), where);
}

Schedule hf_config_schedule(const std::string& path, std::uint64_t seq_len) {
  const HfRopeConfig c = read_hf_config(path);
  Schedule s;
  try {
    s = config_schedule(c, seq_len);
  } catch (const InvalidArgument& e) {
    refuse("hf-config '" + path + "'", e.what());
  }
  s.kind = "hf-config";
  s.spec =
      seq_len ? "hf-config[seq_len=" + std::to_string(seq_len) + "]:" + path : "hf-config:" + path;
  return s;
}

std::pair<std::int64_t, std::int64_t> yarn_correction_range(const mpq_class& beta_fast,
                                                            const mpq_class& beta_slow,
                                                            std::size_t dim, const mpq_class& base,
                                                            const mpq_class& L) {
  if (base <= 1) throw InvalidArgument("yarn needs rope_theta > 1, got " + base.get_str());
  if (L <= 0)
    throw InvalidArgument("yarn needs original_max_position_embeddings > 0, got " + L.get_str());
  if (beta_fast <= 0 || beta_slow <= 0) {
    throw InvalidArgument("yarn needs beta_fast > 0 and beta_slow > 0, got " + beta_fast.get_str() +
                          ", " + beta_slow.get_str());
  }
  // Encloses c(n) = dim·ln(L/(2πn)) / (2 ln β) in [lo, hi], every step rounded outward.
  auto enclose = [&](const mpq_class& n, mpfr_prec_t p, numeric::Mpfr& lo,
                     numeric::Mpfr& hi) -> bool {
    numeric::Mpfr pl(p), ph(p), a(p), b(p), bl(p), bh(p);
    mpfr_const_pi(pl, MPFR_RNDD);
    mpfr_const_pi(ph, MPFR_RNDU);
    const mpq_class two_n = 2 * n;
    mpfr_mul_q(pl, pl, two_n.get_mpq_t(), MPFR_RNDD);  // 2πn ∈ [pl, ph]
    mpfr_mul_q(ph, ph, two_n.get_mpq_t(), MPFR_RNDU);
    mpfr_set_q(a, L.get_mpq_t(), MPFR_RNDD);
    mpfr_div(a, a, ph, MPFR_RNDD);  // L/(2πn) ∈ [a, b]
    mpfr_set_q(b, L.get_mpq_t(), MPFR_RNDU);
    mpfr_div(b, b, pl, MPFR_RNDU);
    mpfr_log(a, a, MPFR_RNDD);
    mpfr_log(b, b, MPFR_RNDU);
    mpfr_mul_ui(a, a, dim, MPFR_RNDD);  // numerator ∈ [a, b]
    mpfr_mul_ui(b, b, dim, MPFR_RNDU);
    mpfr_set_q(bl, base.get_mpq_t(), MPFR_RNDD);
    mpfr_set_q(bh, base.get_mpq_t(), MPFR_RNDU);
    mpfr_log(bl, bl, MPFR_RNDD);
    mpfr_log(bh, bh, MPFR_RNDU);
    mpfr_mul_ui(bl, bl, 2, MPFR_RNDD);  // 2 ln β ∈ [bl, bh]
    mpfr_mul_ui(bh, bh, 2, MPFR_RNDU);
    if (mpfr_sgn(bl) <= 0) return false;
    // quotient by a positive interval
    mpfr_div(lo, a, mpfr_sgn(a) >= 0 ? bh.get() : bl.get(), MPFR_RNDD);
    mpfr_div(hi, b, mpfr_sgn(b) >= 0 ? bl.get() : bh.get(), MPFR_RNDU);
    return true;
  };
  auto decide = [&](const mpq_class& n, mpfr_rnd_t direction) -> std::int64_t {
    for (mpfr_prec_t p = 128; p <= 65536; p *= 2) {
      numeric::Mpfr lo(p), hi(p);
      if (!enclose(n, p, lo, hi)) continue;
      mpz_class zl, zh;
      mpfr_get_z(zl.get_mpz_t(), lo, direction);
      mpfr_get_z(zh.get_mpz_t(), hi, direction);
      if (zl == zh) return to_int64(zl);
    }
    throw InvalidArgument("yarn correction range undecided at 65536 bits (beta " + n.get_str() +
                          ")");
  };
  const std::int64_t low = std::max<std::int64_t>(decide(beta_fast, MPFR_RNDD), 0);
  const std::int64_t high =
      std::min<std::int64_t>(decide(beta_slow, MPFR_RNDU), static_cast<std::int64_t>(dim) - 1);
  return {low, high};
}

Schedule config_schedule(const HfRopeConfig& c, std::uint64_t seq_len) {
  if (c.head_dim < 2 || c.head_dim % 2 != 0 || c.head_dim > 65536) {
    throw InvalidArgument("head_dim must be an even integer in 2..65536, got " +
                          std::to_string(c.head_dim));
  }
  if (c.partial_rotary_factor > 1) {
    throw InvalidArgument("partial_rotary_factor must be in (0, 1], got " +
                          c.partial_rotary_factor.get_str());
  }
  Schedule s = c.partial_rotary_factor < 1
                   ? partial_schedule(c.rope_theta, c.head_dim, c.partial_rotary_factor)
                   : conventional_schedule(c.rope_theta, c.head_dim);
  s.partial_rotary_factor = c.partial_rotary_factor;
  s.max_position_embeddings = c.max_position_embeddings;
  if (!c.rope_scaling) {
    if (seq_len)
      throw InvalidArgument(
          "seq_len applies to dynamic and longrope rope_scaling only; this config has none");
    return s;
  }
  RopeScaling r = *c.rope_scaling;
  const std::size_t D = s.rotary_dim;
  const std::size_t half = D / 2;
  auto max_pos = [&](const char* type) -> mpq_class {
    if (!c.max_position_embeddings) {
      throw InvalidArgument(std::string(type) + " rope scaling needs max_position_embeddings");
    }
    return mpq_class(mpz_class(std::to_string(*c.max_position_embeddings)));
  };
  auto positive = [&](const std::optional<mpq_class>& q, const char* what) -> mpq_class {
    if (!q || *q <= 0) throw InvalidArgument(r.type + " rope scaling needs " + what + " > 0");
    return *q;
  };
  if (seq_len && r.type != "dynamic" && r.type != "longrope") {
    throw InvalidArgument("seq_len applies to dynamic and longrope rope_scaling only, not " +
                          r.type);
  }
  if (r.type == "linear") {
    // _compute_linear_scaling_rope_parameters: inv_freq /= factor
    const mpq_class factor = positive(r.factor, "factor");
    for (auto& b : s.blocks) {
      b.theta = times(b.theta, 1 / factor);
      b.turn.reset();
    }
  } else if (r.type == "dynamic") {
    // _compute_dynamic_ntk_parameters: L = max(seq_len, max_position_embeddings);
    // base' = base·(factor·L/L0 - (factor - 1))^(D/(D-2)), so θ_k = β^(-2k/D)·x^(-2k/(D-2)).
    const mpq_class factor = positive(r.factor, "factor");
    const mpq_class L0 = max_pos("dynamic");
    const std::uint64_t L = std::max<std::uint64_t>(seq_len, *c.max_position_embeddings);
    r.seq_len = L;
    if (L > *c.max_position_embeddings) {
      if (D < 4)
        throw InvalidArgument("dynamic rope scaling needs a rotary dimension ≥ 4 (D/(D-2))");
      const mpq_class x = factor * mpq_class(mpz_class(std::to_string(L))) / L0 - (factor - 1);
      for (auto& b : s.blocks) {
        mpq_class e(-2 * static_cast<long>(b.frequency_index), static_cast<long>(D - 2));
        e.canonicalize();
        b.theta = b.theta * ExactReal::power(x, e);
        b.turn.reset();
      }
    }
  } else if (r.type == "yarn") {
    // _compute_yarn_parameters (truncate): θ'_k = θ_k·(ramp_k/factor + 1 - ramp_k)
    const mpq_class factor = positive(r.factor, "factor");
    if (!r.truncate) {
      throw InvalidArgument(
          "yarn with truncate=false has a ramp in ln(...) that is not an exact ropesim angle; "
          "accepted: truncate true (the default)");
    }
    const mpq_class L =
        r.original_max_position_embeddings ? *r.original_max_position_embeddings : max_pos("yarn");
    // `rope_scaling.get("beta_fast") or 32`: absent or 0 gives the default
    const mpq_class beta_fast = r.beta_fast && *r.beta_fast != 0 ? *r.beta_fast : mpq_class(32);
    const mpq_class beta_slow = r.beta_slow && *r.beta_slow != 0 ? *r.beta_slow : mpq_class(1);
    const auto [low, high] = yarn_correction_range(beta_fast, beta_slow, D, c.rope_theta, L);
    r.yarn_low = low;
    r.yarn_high = high;
    // linear_ramp_factor: `if min == max: max += 0.001`
    const mpq_class span = low == high ? mpq_class(1, 1000) : mpq_class(high - low);
    for (auto& b : s.blocks) {
      mpq_class ramp = (mpq_class(static_cast<long>(b.frequency_index)) - low) / span;
      if (ramp < 0) ramp = 0;
      if (ramp > 1) ramp = 1;
      b.theta = times(b.theta, ramp / factor + (1 - ramp));
      b.turn.reset();
    }
    yarn_attention_scaling(s, r, factor);
  } else if (r.type == "longrope") {
    // _compute_longrope_parameters: θ_k / ext_k, ext = long_factor iff seq_len > L_orig
    if (r.short_factor.size() != half || r.long_factor.size() != half) {
      throw InvalidArgument(
          "longrope short_factor and long_factor need rotary_dim/2 = " + std::to_string(half) +
          " entries each, got " + std::to_string(r.short_factor.size()) + " and " +
          std::to_string(r.long_factor.size()));
    }
    mpq_class L0;
    if (r.original_max_position_embeddings) {
      L0 = *r.original_max_position_embeddings;
    } else if (c.original_max_position_embeddings) {
      L0 = mpq_class(mpz_class(std::to_string(*c.original_max_position_embeddings)));
    } else {
      L0 = max_pos("longrope");
    }
    if (L0 <= 0) throw InvalidArgument("longrope needs original_max_position_embeddings > 0");
    r.original_max_position_embeddings = L0;
    const mpq_class factor = r.factor ? *r.factor : max_pos("longrope") / L0;
    r.factor = factor;
    r.seq_len = seq_len;
    r.long_factors = seq_len > 0 && mpq_class(mpz_class(std::to_string(seq_len))) > L0;
    const auto& ext = r.long_factors ? r.long_factor : r.short_factor;
    for (auto& b : s.blocks) {
      const mpq_class& e = ext.at(b.frequency_index);
      if (e <= 0) throw InvalidArgument("longrope factors must be > 0, got " + e.get_str());
      b.theta = times(b.theta, 1 / e);
      b.turn.reset();
    }
    if (r.attention_factor) {
      set_attention_scaling(s, python_float(*r.attention_factor), r.attention_factor->get_str());
    } else if (factor <= 1) {
      set_attention_scaling(s, 1.0, "1");
    } else {
      const double v = PyFloat::sqrt(PyFloat::add(
          1.0, PyFloat::div(PyFloat::log(python_float(factor)), PyFloat::log(python_float(L0)))));
      set_attention_scaling(s, v, "sqrt(1+ln(" + factor.get_str() + ")/ln(" + L0.get_str() + "))");
    }
  } else if (r.type == "llama3") {
    Llama3Scaling l;
    l.factor = *r.factor;
    l.low_freq_factor = *r.low_freq_factor;
    l.high_freq_factor = *r.high_freq_factor;
    l.original_max_position_embeddings = *r.original_max_position_embeddings;
    s = apply_llama3_scaling(std::move(s), l);
  } else if (r.type == "mrope") {
    // modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb: frequencies [0, t), [t, t+h),
    // [t+h, t+h+w) read the temporal, height, width positions; Qwen3-VL's
    // apply_interleaved_mrope: k ≡ 1 (mod 3), k < 3h reads height; k ≡ 2 (mod 3), k < 3w width.
    const auto& m = r.mrope_section;
    if (m[0] + m[1] + m[2] != half) {
      throw InvalidArgument("mrope_section [" + std::to_string(m[0]) + ", " + std::to_string(m[1]) +
                            ", " + std::to_string(m[2]) +
                            "] must sum to rotary_dim/2 = " + std::to_string(half));
    }
    for (auto& b : s.blocks) {
      const std::size_t k = b.frequency_index;
      if (r.mrope_interleaved) {
        b.axis = (k % 3 == 1 && k < 3 * m[1])   ? PositionAxis::height
                 : (k % 3 == 2 && k < 3 * m[2]) ? PositionAxis::width
                                                : PositionAxis::temporal;
      } else {
        b.axis = k < m[0]          ? PositionAxis::temporal
                 : k < m[0] + m[1] ? PositionAxis::height
                                   : PositionAxis::width;
      }
    }
  }
  s.rope_scaling = r;
  return s;
}

std::optional<std::string> longrope_factor_warning(const Schedule& s, std::uint64_t last_position) {
  if (!s.rope_scaling || s.rope_scaling->type != "longrope") return std::nullopt;
  const RopeScaling& r = *s.rope_scaling;
  if (!r.original_max_position_embeddings) return std::nullopt;
  const mpq_class& L = *r.original_max_position_embeddings;
  // transformers' longrope_frequency_update: seq_len = max(position_ids) + 1 > L -> long_factor
  const mpq_class run_length(mpz_class(std::to_string(last_position)) + 1);
  // A schedule with long_factor (seq_len > L) is for a sequence that long, whatever window of
  // it a run looks at; short_factor is wrong only when the run itself is longer than L.
  if (r.long_factors || run_length <= L) return std::nullopt;
  const std::string used = "short_factor", wanted = "long_factor";
  std::string why = r.seq_len == 0 ? "seq_len unset" : "seq_len=" + std::to_string(r.seq_len);
  std::string fix;
  if (s.kind == "hf-config") {
    const auto colon = s.spec.find(':');
    const std::string path =
        colon == std::string::npos ? std::string("PATH") : s.spec.substr(colon + 1);
    fix = "hf-config[seq_len=" + run_length.get_str() + "]:" + path;
  } else {
    fix = "hf-config[seq_len=" + run_length.get_str() + "]:PATH of the model's config.json";
  }
  return "'" + s.spec + "' is longrope with original_max_position_embeddings " + L.get_str() +
         " and this run reaches position " + std::to_string(last_position) + ": ropesim uses " +
         used + " (" + why + "), transformers uses " + wanted + " for a sequence of " +
         run_length.get_str() +
         " tokens (dynamic_rope_update: long_factor iff max(position_ids) + 1 > " + L.get_str() +
         "); for " + wanted + " give " + fix;
}

}  // namespace ropesim::attention
