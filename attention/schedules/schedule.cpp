// The RoPE schedule itself (THEORY §3): its axes, rationality and JSON form. The families are in
// schedule_families.cpp, the preset registry in schedule_presets.cpp, the spec parser in
// schedule_parser.cpp, FoPE's generator in schedule_rng.cpp, Llama 3 scaling in llama3_scaling.cpp.
#include "attention/schedules/schedule.hpp"

#include <algorithm>

#include "core/enum_names.hpp"
#include "core/error.hpp"

namespace ropesim::attention {

namespace {

constexpr ropesim::Spelling<PositionAxis> position_axis_names[] = {
    {PositionAxis::temporal, "temporal"},
    {PositionAxis::height, "height"},
    {PositionAxis::width, "width"}};
constexpr ropesim::EnumNames<PositionAxis> position_axis_table{.what = "position axis",
                                                               .names = position_axis_names};

}  // namespace

// name_of's texts are the literals above, so .data() is NUL-terminated
const char* to_string(PositionAxis axis) {
  return ropesim::name_of(position_axis_table, axis).data();
}

bool Schedule::is_rational() const {
  return std::all_of(blocks.begin(), blocks.end(),
                     [](const RotaryBlock& b) { return b.turn.has_value(); });
}

std::size_t Schedule::axis_index(std::string_view name) const {
  if (position_axes.empty()) {
    throw InvalidArgument("schedule '" + spec +
                          "' has scalar positions (one axis); accepted: no axis "
                          "for it, or a multi-axis schedule (axial2d, mrope, hirope, liere)");
  }
  std::string names;
  for (std::size_t a = 0; a < position_axes.size(); ++a) {
    if (position_axes[a] == name || std::to_string(a) == name) return a;
    names += (a ? ", " : "") + position_axes[a];
  }
  throw InvalidArgument("unknown position axis '" + std::string(name) + "' of '" + spec +
                        "'; accepted: " + names + " (or the index 0.." +
                        std::to_string(position_axes.size() - 1) + ")");
}

bool wavelength_exceeds(const ExactReal& theta, std::uint64_t length) {
  if (theta.is_zero()) return true;
  // 2π/θ > T  ⟺  θ·T < 2π  (θ > 0, T > 0)
  const ExactReal theta_length = ExactReal::rational(mpq_class(mpz_class(length))) * theta;
  return compare(theta_length, ExactReal::pi_times(2)) < 0;
}

nlohmann::json to_json(const Schedule& s) {
  nlohmann::json j;
  j["spec"] = s.spec;
  j["kind"] = s.kind;
  j["head_dim"] = s.head_dim;
  j["rotary_dim"] = s.rotary_dim;
  j["rotary_blocks"] = s.blocks.size();
  j["unrotated_pairs"] = s.unrotated_pairs;
  j["base"] = s.base ? nlohmann::json(s.base->get_str()) : nlohmann::json(nullptr);
  j["exponent_dim"] = s.exponent_dim ? nlohmann::json(*s.exponent_dim) : nlohmann::json(nullptr);
  j["partial_rotary_factor"] = s.partial_rotary_factor
                                   ? nlohmann::json(s.partial_rotary_factor->get_str())
                                   : nlohmann::json(nullptr);
  j["prope_p"] = s.prope_p ? nlohmann::json(s.prope_p->get_str()) : nlohmann::json(nullptr);
  if (s.train_len) j["train_len"] = *s.train_len;
  if (s.hope_activated) j["hope_activated"] = *s.hope_activated;
  if (s.fope_sigma && s.fope_seed) {
    std::size_t clipped = 0;
    for (const auto& b : s.blocks) clipped += b.dropped;
    j["fope"] = {{"sigma", s.fope_sigma->get_str()},
                 {"seed", *s.fope_seed},
                 {"clipped", clipped},
                 {"coefficients",
                  "a[k][m] = [k=m] + sigma*z[k][m], z: SplitMix64 + Box-Muller "
                  "in binary64 (attention/schedules/schedule.hpp fope_coefficient)"}};
  }
  if (s.llama3) {
    j["llama3"] = {
        {"factor", s.llama3->factor.get_str()},
        {"low_freq_factor", s.llama3->low_freq_factor.get_str()},
        {"high_freq_factor", s.llama3->high_freq_factor.get_str()},
        {"original_max_position_embeddings", s.llama3->original_max_position_embeddings.get_str()}};
  } else {
    j["llama3"] = nullptr;
  }
  if (s.rope_scaling) {
    const RopeScaling& r = *s.rope_scaling;
    nlohmann::json js;
    js["type"] = r.type;
    auto put = [&js](const char* key, const std::optional<mpq_class>& q) {
      if (q) js[key] = q->get_str();
    };
    put("factor", r.factor);
    put("original_max_position_embeddings", r.original_max_position_embeddings);
    put("low_freq_factor", r.low_freq_factor);
    put("high_freq_factor", r.high_freq_factor);
    put("beta_fast", r.beta_fast);
    put("beta_slow", r.beta_slow);
    put("mscale", r.mscale);
    put("mscale_all_dim", r.mscale_all_dim);
    put("attention_factor", r.attention_factor);
    if (r.type == "yarn") {
      js["truncate"] = r.truncate;
      js["correction_range"] = {r.yarn_low, r.yarn_high};
    }
    if (r.type == "dynamic" || r.type == "longrope") js["seq_len"] = r.seq_len;
    if (r.type == "longrope") js["factors"] = r.long_factors ? "long_factor" : "short_factor";
    if (r.type == "mrope") {
      js["mrope_section"] = r.mrope_section;
      js["mrope_interleaved"] = r.mrope_interleaved;
    }
    j["rope_scaling"] = js;
  } else {
    j["rope_scaling"] = nullptr;
  }
  j["attention_scaling"] = s.attention_scaling ? nlohmann::json(s.attention_scaling->get_str())
                                               : nlohmann::json(nullptr);
  j["attention_scaling_text"] =
      s.attention_scaling ? nlohmann::json(s.attention_scaling_text) : nlohmann::json(nullptr);
  j["max_position_embeddings"] = s.max_position_embeddings
                                     ? nlohmann::json(*s.max_position_embeddings)
                                     : nlohmann::json(nullptr);
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& b : s.blocks) {
    nlohmann::json jb;
    jb["index"] = b.index;
    jb["theta"] = b.theta.to_string();
    jb["theta_double"] = b.theta.to_double();
    jb["turn"] = b.turn ? nlohmann::json(b.turn->a.get_str() + "/" + b.turn->m.get_str())
                        : nlohmann::json(nullptr);
    jb["dropped"] = b.dropped;
    if (b.axis) jb["axis"] = to_string(*b.axis);
    if (s.is_multi_axis()) {
      // θ_{d,a} per axis read (theta above is Σ_a θ_{d,a}, the diagonal angle)
      nlohmann::json terms = nlohmann::json::array();
      for (const auto& t : b.axis_angles) {
        terms.push_back(
            {{"axis", s.position_axes[t.axis]},
             {"theta", t.theta.to_string()},
             {"theta_double", t.theta.to_double()},
             {"turn", t.turn ? nlohmann::json(t.turn->a.get_str() + "/" + t.turn->m.get_str())
                             : nlohmann::json(nullptr)}});
      }
      jb["axis_angles"] = terms;
    }
    blocks.push_back(jb);
  }
  j["blocks"] = blocks;
  if (s.is_multi_axis()) j["position_axes"] = s.position_axes;
  return j;
}

}  // namespace ropesim::attention
