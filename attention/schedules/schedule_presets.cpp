// The schedules built from a Hugging Face rope config (config_schedule, hf_config.cpp): the
// registry of model presets (data/models.json, embedded) and Resonance-YaRN. They sit above
// hf_config.hpp, which builds on schedule.hpp; schedule.cpp does not call them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attention/schedules/hf_config.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "core/suggest.hpp"

namespace ropesim::attention {

namespace detail {
extern const std::string_view embedded_models_json;
}

namespace {

std::vector<ModelPreset> load_presets() {
  const std::string where = "embedded models.json";
  const nlohmann::json root = parse_json_exact(detail::embedded_models_json, where);
  std::vector<ModelPreset> out;
  for (const auto& m : root.at("models")) {
    ModelPreset p;
    p.name = m.at("name").get<std::string>();
    if (m.contains("source")) p.source = m.at("source").get<std::string>();
    // A preset is a config fragment: the keys and rope_scaling types of hf-config.
    p.config = hf_rope_config(m, where + ": model " + p.name);
    out.push_back(std::move(p));
  }
  return out;
}

std::string text_of(const mpq_class& q) { return q.get_str(); }

}  // namespace

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> presets = load_presets();
  return presets;
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const auto& p : model_presets()) names.push_back(p.name);
  return names;
}

std::string_view models_json_text() { return detail::embedded_models_json; }

Schedule resonance_yarn_schedule(const mpq_class& base, std::size_t dim, const mpq_class& factor,
                                 const mpq_class& original,
                                 const std::optional<mpq_class>& beta_fast,
                                 const std::optional<mpq_class>& beta_slow) {
  HfRopeConfig c;
  c.rope_theta = base;
  c.head_dim = dim;
  RopeScaling r;
  r.type = "yarn";
  r.factor = factor;
  r.original_max_position_embeddings = original;
  r.beta_fast = beta_fast;
  r.beta_slow = beta_slow;
  c.rope_scaling = r;
  // The exact YaRN angles (config_schedule, attention/schedules/hf_config.cpp), then the rounding:
  // the reference's order (`yarn()` blends inv_freq, then `resonance_register(inv_freq)`).
  Schedule s = apply_resonance(config_schedule(c));
  s.kind = "resonance-yarn";
  s.spec = "resonance-yarn:base=" + text_of(base) + ",dim=" + std::to_string(dim) +
           ",factor=" + text_of(factor) + ",original=" + text_of(original);
  if (beta_fast) s.spec += ",beta_fast=" + text_of(*beta_fast);
  if (beta_slow) s.spec += ",beta_slow=" + text_of(*beta_slow);
  return s;
}

Schedule preset_schedule(std::string_view name) {
  for (const auto& p : model_presets()) {
    if (p.name != name) continue;
    Schedule s = config_schedule(p.config);
    s.kind = "preset";
    s.spec = p.name;
    return s;
  }
  throw InvalidArgument("unknown model preset '" + std::string(name) + "'" +
                        ropesim::did_you_mean(name, model_preset_names()) +
                        "; accepted: " + fmt::format("{}", fmt::join(model_preset_names(), ", ")));
}

}  // namespace ropesim::attention
