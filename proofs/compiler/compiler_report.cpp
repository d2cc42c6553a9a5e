#include "proofs/compiler/compiler_report.hpp"

#include "numeric/exact_decimal.hpp"
#include "numeric/json_number.hpp"

namespace ropesim::proofs {

using numeric::exact_decimal;

namespace {

nlohmann::json certificate_json(const PastCertificate& c) {
  nlohmann::json j;
  j["f1"] = numeric::exact_decimal_json(c.f1);
  j["f2"] = numeric::exact_decimal_json(c.f2);
  j["certified_count"] = c.certified_count ? nlohmann::json(*c.certified_count) : nlohmann::json();
  j["stagnation_count"] =
      c.stagnation_count ? nlohmann::json(*c.stagnation_count) : nlohmann::json();
  j["min_output"] = numeric::exact_decimal_json(c.min_output);
  j["max_output"] = numeric::exact_decimal_json(c.max_output);
  j["first_failure"] = c.first_failure ? nlohmann::json(*c.first_failure) : nlohmann::json();
  j["limit"] = c.limit;
  return j;
}

}  // namespace

void describe_components(CompiledModel& out, const std::vector<LayerComponents>& layers) {
  out.certified_length = out.past ? out.past->certified_count : std::nullopt;
  // a bound that stopped at its check's limit (no failure seen) leaves the true length ≥ it
  out.certified_length_at_limit = out.past && out.past->certified_count && !out.past->first_failure;
  auto bound_by = [&out](std::uint64_t n_max, bool at_limit) {
    if (!out.certified_length || n_max < *out.certified_length) {
      out.certified_length = n_max;
      out.certified_length_at_limit = at_limit;
    } else if (n_max == *out.certified_length) {
      out.certified_length_at_limit = out.certified_length_at_limit && at_limit;
    }
  };
  out.layers.clear();
  for (const LayerComponents& layer : layers) {
    LayerDescription desc;
    for (const Component& c : layer) {
      (c.sublayer == Sublayer::attention ? desc.heads : desc.ffn).push_back(c.description);
      if (c.mod_head) out.mod_heads.push_back(*c.mod_head);
      if (c.bounded_mod_head) {
        out.bounded_mod_heads.push_back(*c.bounded_mod_head);
        bound_by(c.bounded_mod_head->n_max, c.bounded_mod_head->at_limit);
      }
      if (c.bounded_head) {
        out.bounded_heads.push_back(*c.bounded_head);
        bound_by(c.bounded_head->n_max, c.bounded_head->at_limit);
      }
    }
    out.layers.push_back(std::move(desc));
  }
}

nlohmann::json to_json(const CompiledModel& c) {
  nlohmann::json j;
  j["formula"] = c.formula;
  if (c.layer_norm) {
    j["layer_norm"] = {{"placement", "post"},
                       {"mirror", true},
                       {"epsilon", numeric::number_text("0")},
                       {"raw_scale", numeric::exact_decimal_json(c.layer_norm->raw_scale)},
                       {"raw_gain", numeric::exact_decimal_json(c.layer_norm->raw_gain)},
                       {"pairs", c.layer_norm->pairs},
                       {"padding", c.layer_norm->padding},
                       {"raw_coordinates", c.layer_norm->raw}};
  } else {
    j["layer_norm"] = nullptr;
  }
  j["alphabet"] = c.alphabet;
  j["format"] = c.model.policy.format.name;
  j["rounding"] = std::string(numeric::to_string(c.model.policy.rounding));
  j["f_large"] = numeric::exact_decimal_json(c.f_large);
  j["coordinates"] = c.space.names();
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& name : c.node_coordinates) {
    if (!name.empty()) nodes.push_back(name);
  }
  j["subformula_coordinates"] = nodes;
  auto gadget = [](const GadgetDescription& g) {
    return nlohmann::json{
        {"kind", g.kind},
        {"node", g.node},
        {"reads", g.reads},
        {"writes", g.writes},
        {"constants", g.constants.is_null() ? nlohmann::json::object() : g.constants}};
  };
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : c.layers) {
    nlohmann::json heads = nlohmann::json::array(), ffn = nlohmann::json::array();
    for (const auto& g : l.heads) heads.push_back(gadget(g));
    for (const auto& g : l.ffn) ffn.push_back(gadget(g));
    layers.push_back({{"heads", heads}, {"ffn", ffn}});
  }
  j["layers"] = layers;
  j["past_certificate"] = c.past ? certificate_json(*c.past) : nlohmann::json();
  nlohmann::json mods = nlohmann::json::array();
  for (const auto& h : c.mod_heads) {
    nlohmann::json margins = nlohmann::json::array();
    for (const auto& rm : h.margins) {
      margins.push_back(
          {{"residue", rm.residue},
           {"bos_wins", rm.bos_wins},
           {"margin", rm.margin ? (numeric::exact_decimal_json(*rm.margin)) : nlohmann::json()},
           {"passes", rm.passes}});
    }
    mods.push_back({{"m", h.m},
                    {"r", h.r},
                    {"C", numeric::exact_decimal_json(h.C)},
                    {"bound", h.bound.approximate},
                    {"min_margin", numeric::exact_decimal_json(h.min_margin)},
                    {"margins", margins}});
  }
  j["mod_heads"] = mods;
  nlohmann::json bounded_mods = nlohmann::json::array();
  for (const auto& h : c.bounded_mod_heads) bounded_mods.push_back(to_json(h));
  j["bounded_mod_heads"] = bounded_mods;
  nlohmann::json bounded = nlohmann::json::array();
  for (const auto& b : c.bounded_heads) {
    bounded.push_back({{"node", b.node},
                       {"k", b.k},
                       {"C", numeric::exact_decimal_json(b.C)},
                       {"n_max", b.n_max},
                       {"at_limit", b.at_limit}});
  }
  j["bounded_heads"] = bounded;
  j["certified_length"] =
      c.certified_length ? nlohmann::json(*c.certified_length) : nlohmann::json();
  j["certified_length_at_limit"] = c.certified_length_at_limit;
  return j;
}

}  // namespace ropesim::proofs
