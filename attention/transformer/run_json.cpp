// The run as JSON (docs/MODEL_SPEC.md, "Run output"). See run.hpp for the contract.
#include "attention/transformer/run.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/json_number.hpp"

namespace ropesim::attention {

namespace {

nlohmann::json values_json(const std::vector<Value>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& x : v) a.push_back(numeric::exact_decimal_json(x));
  return a;
}

}  // namespace

nlohmann::json to_json(const RunResult& result, std::string_view word) {
  nlohmann::json j;
  j["input"] = std::string(word);
  j["tokens"] = result.tokens;
  j["positions"] = result.positions;
  j["accept"] = result.accept;
  if (result.output.is_finite()) {
    j["output"] = result.output.to_double();
  } else {
    j["output"] = exact_decimal(result.output);  // "nan", "inf", "-inf"
  }
  j["output_exact"] = numeric::exact_decimal_json(result.output);
  if (result.first_non_finite) {
    const NonFinite& nf = *result.first_non_finite;
    nlohmann::json n;
    n["where"] = nf.where;
    n["stage"] = nf.stage;
    n["layer"] = nf.layer ? nlohmann::json(*nf.layer) : nlohmann::json(nullptr);
    n["position"] = nf.position ? nlohmann::json(*nf.position) : nlohmann::json(nullptr);
    n["head"] = nf.head ? nlohmann::json(*nf.head) : nlohmann::json(nullptr);
    j["first_non_finite"] = n;
  } else {
    j["first_non_finite"] = nullptr;
  }
  if (result.step_flags) {
    auto step_json = [](const std::optional<StepException>& e) {
      if (!e) return nlohmann::json(nullptr);
      return nlohmann::json{{"where", e->where}, {"step", e->step},         {"format", e->format},
                            {"layer", e->layer}, {"position", e->position}, {"head", e->head}};
    };
    j["first_overflow"] = step_json(result.first_overflow);
    j["first_invalid"] = step_json(result.first_invalid);
  }
  if (!result.traced.empty()) {
    nlohmann::json trace;
    trace["positions"] = result.traced;
    nlohmann::json emb = nlohmann::json::array();
    for (std::size_t k = 0; k < result.traced.size(); ++k) {
      emb.push_back(
          {{"position", result.traced[k]}, {"vector", values_json(result.traced_embeddings[k])}});
    }
    trace["embeddings"] = emb;
    nlohmann::json layers = nlohmann::json::array();
    for (std::size_t l = 0; l < result.layers.size(); ++l) {
      nlohmann::json positions = nlohmann::json::array();
      for (const auto& pt : result.layers[l]) {
        nlohmann::json p;
        p["position"] = pt.position;
        p["token"] = pt.token;
        p["input"] = values_json(pt.input);
        nlohmann::json heads = nlohmann::json::array();
        for (std::size_t hi = 0; hi < pt.heads.size(); ++hi) {
          const HeadTrace& ht = pt.heads[hi];
          heads.push_back({{"head", hi},
                           {"name", ht.name},
                           {"query", values_json(ht.query)},
                           {"keys", ht.keys},
                           {"scores", values_json(ht.scores)},
                           {"weights", values_json(ht.weights)},
                           {"output", values_json(ht.output)}});
        }
        p["heads"] = heads;
        p["attention"] = values_json(pt.attention);
        p["after_attention"] = values_json(pt.after_attention);
        p["ffn"] = values_json(pt.ffn);
        p["output"] = values_json(pt.output);
        positions.push_back(p);
      }
      layers.push_back({{"layer", l}, {"positions", positions}});
    }
    trace["layers"] = layers;
    trace["readout"] = values_json(result.readout);
    j["trace"] = trace;
  }
  return j;
}

nlohmann::json to_json(const Model& model, const RunResult& result, std::string_view word) {
  nlohmann::json j = to_json(result, word);
  j["model"] = model.name;
  j["format"] = model.policy.format.name;
  return j;
}

}  // namespace ropesim::attention
