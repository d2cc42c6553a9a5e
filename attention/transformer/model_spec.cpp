// Model spec files, schema version 1 (docs/MODEL_SPEC.md): reading the model from its JSON
// (fields read with paths by model_spec_fields.hpp), checking it, and the size budget. See
// model_spec.hpp; writing is model_spec_write.cpp.
#include "attention/transformer/model_spec.hpp"

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

#include "attention/transformer/model_spec_fields.hpp"
#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "io/files.hpp"
#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"

namespace ropesim::attention {

namespace {

using nlohmann::json;

/// The document of a model spec: ropesim::read_json (no key twice, nesting at most
/// max_model_spec_depth, every number exact: MODEL_SPEC.md promises every number is read
/// exactly and rounded once by the format, so 1e400 rounds to +inf or the largest finite
/// value of F as F says).
json parse_exact(std::string_view text) {
  try {
    return ropesim::read_json(text, {max_model_spec_depth, "a model spec needs at most 6"});
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("model spec: invalid JSON: ") + e.what());
  }
}

using namespace spec_fields;

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
  seg.schedule = with_context(child(path, "schedule"), [&] { return parse_schedule(spec); });
  Format format = policy.format;
  if (const json* fj = optional_field(j, "format")) {
    const std::string fs = get_string(*fj, child(path, "format"));
    format = with_context(child(path, "format"), [&] { return numeric::parse_format(fs); });
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
    seg.layout = with_context(child(path, "layout"), [&] { return parse_pair_layout(ls); });
  }
  for (std::size_t b = 0; b < nb; ++b) {
    if (!seg.realisations[b]) continue;
    Schedule sub = seg.schedule;
    sub.blocks = {seg.schedule.blocks[b]};
    with_context(rp, [&] {
      check_applicable(sub, *seg.realisations[b]);
      return 0;
    });
  }
  return seg;
}

Format get_format(const json& j, const std::string& path) {
  const std::string text = get_string(j, path);
  return with_context(path, [&] { return numeric::parse_format(text); });
}

Rounding get_rounding(const json& j, const std::string& path) {
  const std::string text = get_string(j, path);
  return with_context(path, [&] { return numeric::parse_rounding(text); });
}

/// An accumulator model: its compact spelling ("p=11,e=8@toward-zero/128>fp32") or
/// {"format", "rounding", "promote_every", "promote_to", "promote_rounding"}.
numeric::AccumulatorModel get_accumulator(const json& j, const std::string& path) {
  if (j.is_string()) {
    const std::string text = j.get<std::string>();
    return with_context(path, [&] { return numeric::parse_accumulator_model(text); });
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

/// A head's per-tensor formats block (attention/transformer/head_formats.hpp).
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
    if (r->empty()) {
      bad(rp,
          "an empty array covers none of the head's coordinates; give segments covering "
          "head_dim, or leave \"rope\" out (or null) for NoPE");
    }
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
void refuse_model_size(const ModelShape& shape, const ModelLoadOptions& options) {
  const double total = spec_number_count(shape);
  if (total > static_cast<double>(options.max_parameters)) {
    throw InvalidArgument(
        fmt::format("model spec: the model holds about {:.3g} numbers (d_model {}, with every "
                    "head's head_dim/value_dim "
                    "and ffn.hidden), more than the limit of {} (about {:.1f} GiB in memory); "
                    "reduce the dimensions or "
                    "raise the limit (ropesim run --allow-large)",
                    total, shape.d_model, options.max_parameters,
                    static_cast<double>(options.max_parameters) * sizeof(Value) / 1073741824.0));
  }
}

/// The dimensions check_model_size reads, gathered by one SAX pass over the text before any
/// JSON value is built (memory: the nesting depth): d_model, the alphabet's length, and per
/// layer its heads' head_dim/value_dim and its ffn.hidden. Numbers of other keys are skipped
/// unread. Returns false (and the caller parses as usual, which reports the problem) when the
/// text is not JSON that nlohmann reads as is (e.g. a number beyond double's range).
class ShapeSax : public nlohmann::json_sax<json> {
 public:
  ModelShape shape;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t v) override { return number(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return number(static_cast<double>(v)); }
  bool number_float(number_float_t, const string_t&) override { return number(0); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  /// The names from the root to the value being read: object keys, "[]" for array elements.
  std::vector<std::string> path_;
  std::vector<bool> in_array_;
  std::string key_;

  std::string slot() const { return !in_array_.empty() && in_array_.back() ? "[]" : key_; }
  bool at(std::initializer_list<const char*> names) const {
    if (path_.size() + 1 != names.size()) return false;
    std::size_t i = 0;
    for (const char* n : names) {
      const std::string& here = i < path_.size() ? path_[i] : slot();
      if (here != n) return false;
      ++i;
    }
    return true;
  }
  bool value() {
    if (at({"alphabet", "[]"})) shape.symbols += 1;
    return true;
  }
  bool number(double v) {
    value();
    const double n = v > 0 ? v : 0;
    if (at({"d_model"})) shape.d_model = n;
    if (at({"layers", "[]", "heads", "[]", "head_dim"})) shape.head_dims += n;
    if (at({"layers", "[]", "heads", "[]", "value_dim"})) shape.value_dims += n;
    if (at({"layers", "[]", "ffn", "hidden"})) shape.hidden += n;
    return true;
  }
  bool open(bool array) {
    // deeper than a model spec may nest: stop here (the parse that follows refuses it in one
    // line) rather than keep a path as deep as the file is long
    if (in_array_.size() >= max_model_spec_depth) return false;
    if (!in_array_.empty()) {  // the root has no name
      value();
      if (at({"layers", "[]"})) shape.layers += 1;
      if (at({"layers", "[]", "heads", "[]"})) shape.heads += 1;
      if (at({"layers", "[]", "ffn"})) shape.ffn_layers += 1;
      path_.push_back(slot());
    }
    in_array_.push_back(array);
    return true;
  }
  bool close() {
    in_array_.pop_back();
    if (!path_.empty()) path_.pop_back();
    return true;
  }
};

/// check_model_size before parsing: the spec's dimensions from a SAX pass (ShapeSax), so that
/// a spec over the budget is refused with its file read once and no JSON value built.
void check_model_size_before_parsing(std::string_view text, const ModelLoadOptions& options) {
  if (options.max_parameters == SIZE_MAX) return;
  ShapeSax sax;
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &sax)) return;
  refuse_model_size(sax.shape, options);
}

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
  refuse_model_size(shape, options);
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
  m.policy.format = with_context("policy.format", [&] { return numeric::parse_format(fs); });
  if (const json* r = optional_field(pj, "rounding")) {
    const std::string rs = get_string(*r, "policy.rounding");
    m.policy.rounding =
        with_context("policy.rounding", [&] { return numeric::parse_rounding(rs); });
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
    m.policy.summation = with_context("policy.summation", [&] { return parse_summation(ss); });
  }
  if (const json* a = optional_field(pj, "accumulator")) {
    const std::string as = get_string(*a, "policy.accumulator");
    m.policy.accumulator =
        with_context("policy.accumulator", [&] { return numeric::parse_format(as); });
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
      m.options.masking = with_context("architecture.masking", [&] { return parse_masking(s); });
    }
    if (const json* x = optional_field(*aj, "softmax")) {
      const std::string s = get_string(*x, "architecture.softmax");
      m.options.softmax =
          with_context("architecture.softmax", [&] { return parse_softmax_variant(s); });
    }
    if (const json* x = optional_field(*aj, "layer_norm")) {
      const std::string s = get_string(*x, "architecture.layer_norm");
      m.options.norm_placement =
          with_context("architecture.layer_norm", [&] { return parse_norm_placement(s); });
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
  check_model_size_before_parsing(text, options);
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
