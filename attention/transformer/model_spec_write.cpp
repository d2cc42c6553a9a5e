// Writing model specs (docs/MODEL_SPEC.md): every value as its exact decimal, the file
// replaced atomically (io::write_output_file). See model_spec.hpp; reading is model_spec.cpp.
#include <string>
#include <vector>

#include "attention/transformer/model_spec.hpp"
#include "io/files.hpp"
#include "numeric/exact_decimal.hpp"

namespace ropesim::attention {

namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

json vector_json(const std::vector<Value>& v) {
  json a = json::array();
  for (const auto& x : v) a.push_back(exact_decimal(x));
  return a;
}

json matrix_json(const Matrix& m) {
  json a = json::array();
  for (std::size_t r = 0; r < m.rows; ++r) {
    json row = json::array();
    for (std::size_t c = 0; c < m.cols; ++c) row.push_back(exact_decimal(m.at(r, c)));
    a.push_back(row);
  }
  return a;
}

json norm_json(const LayerNormParams& n) {
  json j;
  if (!n.gain.empty()) j["gain"] = vector_json(n.gain);
  if (!n.bias.empty()) j["bias"] = vector_json(n.bias);
  j["epsilon"] = exact_decimal(n.epsilon);
  return j;
}

json accumulator_json(const numeric::AccumulatorModel& m) {
  json j;
  j["format"] = m.format.name;
  j["rounding"] = std::string(numeric::to_string(m.rounding));
  if (m.promotion) {
    j["promote_every"] = m.promotion->interval;
    j["promote_to"] = m.promotion->format.name;
    j["promote_rounding"] = std::string(numeric::to_string(m.promotion->rounding));
  }
  return j;
}

json tensor_format_json(const TensorFormat& t) {
  json j = json::object();
  if (t.format) j["format"] = t.format->name;
  if (t.scale) j["scale"] = exact_decimal(*t.scale);
  return j;
}

/// The fields the spec gave, and nothing else (head_formats.hpp keeps them as optionals).
json head_formats_json(const HeadFormats& h) {
  json j = json::object();
  if (h.query.format || h.query.scale) j["query"] = tensor_format_json(h.query);
  if (h.key.format || h.key.scale) j["key"] = tensor_format_json(h.key);
  if (h.value.format || h.value.scale) j["value"] = tensor_format_json(h.value);
  if (h.scores) j["scores"] = h.scores->name;
  if (h.score_accumulator) j["score_accumulator"] = accumulator_json(*h.score_accumulator);
  if (h.mask) j["mask"] = exact_decimal(*h.mask);
  if (h.softmax) j["softmax"] = h.softmax->name;
  if (h.probabilities) j["probabilities"] = h.probabilities->name;
  if (h.value_accumulator) j["value_accumulator"] = accumulator_json(*h.value_accumulator);
  if (h.output) j["output"] = h.output->name;
  return j;
}

json segment_json(const RotarySegment& seg, const EvaluationPolicy& policy) {
  json j;
  if (seg.schedule.kind == "unrotated" && seg.schedule.blocks.empty()) {
    j["unrotated_pairs"] = seg.schedule.unrotated_pairs;
    return j;
  }
  j["schedule"] = seg.schedule.spec;
  std::vector<std::string> names;
  std::optional<Format> format;
  for (const auto& r : seg.realisations) {
    names.push_back(r ? r->name() : "none");
    if (r && !(r->format == policy.format)) {
      if (format && !(*format == r->format)) {
        throw InvalidArgument("model_to_json: a rope segment mixes realisations of formats " +
                              format->name + " and " + r->format.name +
                              "; schema v1 stores one format per segment");
      }
      format = r->format;
    }
  }
  bool same = !names.empty();
  for (const auto& n : names) same = same && n == names.front();
  j["realisation"] = same ? json(names.front()) : json(names);
  j["layout"] = std::string(to_string(seg.layout));
  if (format) j["format"] = format->name;
  return j;
}

}  // namespace

nlohmann::json model_to_json(const Model& model) {
  model.validate();
  json j;
  j["ropesim_model"] = model_spec_version;
  if (!model.name.empty()) j["name"] = model.name;
  if (!model.description.empty()) j["description"] = model.description;
  json policy;
  policy["format"] = model.policy.format.name;
  policy["rounding"] = std::string(numeric::to_string(model.policy.rounding));
  policy["summation"] = std::string(to_string(model.policy.summation));
  if (model.policy.summation == Summation::wide_accumulator)
    policy["accumulator"] = model.policy.accumulator.name;
  j["policy"] = policy;
  j["architecture"] = {{"bos", model.options.bos},
                       {"masking", std::string(to_string(model.options.masking))},
                       {"softmax", std::string(to_string(model.options.softmax))},
                       {"layer_norm", std::string(to_string(model.options.norm_placement))}};
  j["d_model"] = model.d_model;
  if (!model.coordinates.empty()) j["coordinates"] = model.coordinates;
  j["alphabet"] = model.embedding.alphabet;
  json emb;
  if (!model.embedding.bos.empty()) emb["bos"] = vector_json(model.embedding.bos);
  emb["eos"] = vector_json(model.embedding.eos);
  json symbols = json::object();
  for (std::size_t k = 0; k < model.embedding.alphabet.size(); ++k) {
    symbols[model.embedding.alphabet[k]] = vector_json(model.embedding.symbols[k]);
  }
  emb["symbols"] = symbols;
  j["embedding"] = emb;
  json layers = json::array();
  for (const auto& layer : model.layers) {
    json lj = json::object();
    if (!layer.heads.empty()) {
      json heads = json::array();
      for (const auto& h : layer.heads) {
        json hj;
        if (!h.name.empty()) hj["name"] = h.name;
        hj["head_dim"] = h.head_dim;
        hj["value_dim"] = h.value_dim;
        hj["query"] = matrix_json(h.query);
        if (!h.query_bias.empty()) hj["query_bias"] = vector_json(h.query_bias);
        hj["key"] = matrix_json(h.key);
        if (!h.key_bias.empty()) hj["key_bias"] = vector_json(h.key_bias);
        hj["value"] = matrix_json(h.value);
        if (!h.value_bias.empty()) hj["value_bias"] = vector_json(h.value_bias);
        hj["output"] = matrix_json(h.output);
        if (h.scale) hj["scale"] = exact_decimal(*h.scale);
        if (!h.rotary.empty()) {
          json rope = json::array();
          for (const auto& seg : h.rotary) rope.push_back(segment_json(seg, model.policy));
          hj["rope"] = rope;
        }
        if (h.formats) hj["formats"] = head_formats_json(*h.formats);
        heads.push_back(hj);
      }
      lj["heads"] = heads;
    }
    if (!layer.attention_bias.empty()) lj["attention_bias"] = vector_json(layer.attention_bias);
    if (layer.attention_norm) lj["attention_norm"] = norm_json(*layer.attention_norm);
    if (layer.ffn) {
      json fj;
      fj["hidden"] = layer.ffn->w1.rows;
      fj["w1"] = matrix_json(layer.ffn->w1);
      if (!layer.ffn->b1.empty()) fj["b1"] = vector_json(layer.ffn->b1);
      fj["w2"] = matrix_json(layer.ffn->w2);
      if (!layer.ffn->b2.empty()) fj["b2"] = vector_json(layer.ffn->b2);
      lj["ffn"] = fj;
    }
    if (layer.ffn_norm) lj["ffn_norm"] = norm_json(*layer.ffn_norm);
    layers.push_back(lj);
  }
  j["layers"] = layers;
  if (model.final_norm) j["final_norm"] = norm_json(*model.final_norm);
  j["classifier"] = {{"weights", vector_json(model.classifier.weights)},
                     {"bias", exact_decimal(model.classifier.bias)}};
  return j;
}

void save_model(const Model& model, const std::filesystem::path& path) {
  io::write_output_file(path.string(), model_to_json(model).dump(2) + "\n", "model spec");
}

}  // namespace ropesim::attention
