// Realisation names and spellings, parse_realisation and check_applicable (THEORY §3;
// NUMERIC §3; attention/realisations/realisation.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "attention/detail/evaluator.hpp"
#include "attention/detail/format_ops.hpp"
#include "attention/realisations/framework_presets.hpp"
#include "attention/realisations/realisation.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "core/suggest.hpp"
#include "numeric/exact.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::attention {

using numeric::Mpfr;

namespace {

[[noreturn]] void bad_realisation(std::string_view spec, const std::string& problem) {
  throw InvalidArgument("bad realisation '" + std::string(spec) + "': " + problem +
                        "; accepted: " + realisation_spellings());
}

StepFormat step(const Format& f) {
  StepFormat s;
  s.compute = f;
  return s;
}

PipelineSteps hf_steps(const Format& a) {
  PipelineSteps s;
  s.name = "hf";
  s.recipe = AngleRecipe::product;
  s.table = a;
  s.rotation = step(a);
  s.output = a;
  s.arithmetic = RotationArithmetic::hf_eager;
  return s;
}

PipelineSteps llamacpp_steps(const Format& a, AngleRecipe recipe) {
  PipelineSteps s;
  s.name = recipe == AngleRecipe::chained ? "llamacpp-cpu" : "llamacpp-cuda";
  s.recipe = recipe;
  s.table = Format::fp32();
  s.rotation = step(Format::fp32());
  s.output = a;
  s.arithmetic = RotationArithmetic::theory;
  return s;
}

constexpr ropesim::Spelling<RotationArithmetic> arithmetic_names[] = {
    {RotationArithmetic::theory, "theory"}, {RotationArithmetic::hf_eager, "hf_eager"}};
constexpr ropesim::EnumNames<RotationArithmetic> arithmetic_table{.what = "rotation arithmetic",
                                                                  .names = arithmetic_names,
                                                                  .aliases = {},
                                                                  .accepted = {},
                                                                  .suggest = false,
                                                                  .suggestions = {}};

constexpr ropesim::Spelling<PairLayout> pair_layout_names[] = {
    {PairLayout::adjacent, "adjacent"}, {PairLayout::rotate_half, "rotate_half"}};
constexpr ropesim::Spelling<PairLayout> pair_layout_aliases[] = {
    {PairLayout::rotate_half, "rotate-half"}};
constexpr ropesim::EnumNames<PairLayout> pair_layout_table{.what = "pair layout",
                                                           .names = pair_layout_names,
                                                           .aliases = pair_layout_aliases,
                                                           .accepted = {},
                                                           .suggest = false,
                                                           .suggestions = {}};

constexpr ropesim::Spelling<AngleRecipe> angle_recipe_names[] = {
    {AngleRecipe::product, "product"},
    {AngleRecipe::quotient, "quotient"},
    {AngleRecipe::chained, "chained"},
    {AngleRecipe::power, "power"}};
constexpr ropesim::EnumNames<AngleRecipe> angle_recipe_table{.what = "angle recipe",
                                                             .names = angle_recipe_names,
                                                             .aliases = {},
                                                             .accepted = {},
                                                             .suggest = false,
                                                             .suggestions = {}};

std::string_view arithmetic_name(RotationArithmetic a) { return name_of(arithmetic_table, a); }

}  // namespace

std::string_view to_string(PairLayout layout) { return name_of(pair_layout_table, layout); }

PairLayout parse_pair_layout(std::string_view text) { return parse_name(pair_layout_table, text); }

std::string_view to_string(AngleRecipe recipe) { return name_of(angle_recipe_table, recipe); }

std::string StepFormat::spelling() const {
  std::string out = compute.name;
  if (store && *store != compute) out += ">" + store->name;
  if (rounding) out += "@" + std::string(numeric::to_string(*rounding));
  if (implementation != numeric::LibmImplementation::correctly_rounded)
    out += ":" + std::string(numeric::to_string(implementation));
  return out;
}

std::string Realisation::name() const {
  switch (kind) {
    case Kind::r1:
      return "r1";
    case Kind::r2:
      return "r2";
    case Kind::r3:
      return "r3";
    case Kind::pipeline:
      break;
  }
  if (steps.name != "pipeline") return steps.name;
  // The keys every pipeline had before per-step formats, in their old order; the newer keys
  // only when they differ from what the old spelling implied, so old names are unchanged.
  std::string out = "pipeline:inv_freq=" + steps.inv_freq.spelling() +
                    ";position=" + steps.position.spelling() + ";angle=" + steps.angle.spelling() +
                    ";cos_sin=" + steps.cos_sin.spelling() + ";table=" + steps.table.name +
                    ";rotation=" + steps.rotation.spelling() + ";output=" + steps.output.name +
                    ";recipe=" + std::string(to_string(steps.recipe)) +
                    ";arithmetic=" + std::string(arithmetic_name(steps.arithmetic)) +
                    ";layout=" + std::string(to_string(layout));
  const StepFormat implied = step(steps.inv_freq.compute);
  if (steps.exponent != implied) out += ";exponent=" + steps.exponent.spelling();
  if (steps.power != implied) out += ";power=" + steps.power.spelling();
  if (steps.base_exact) out += ";base=exact";
  if (steps.base_format) out += ";base=" + steps.base_format->name;
  if (steps.angle_operands) out += ";angle.operands=" + steps.angle_operands->name;
  if (steps.reciprocal_scalar_division) out += ";scalar_division=reciprocal";
  if (steps.attention_scaling != step(Format::fp32()))
    out += ";attention_scaling=" + steps.attention_scaling.spelling();
  return out;
}

const Format& Realisation::table_format() const {
  return kind == Kind::pipeline ? steps.table : format;
}

std::string realisation_spellings() {
  std::string presets;
  for (const auto name : framework_preset_names()) {
    if (name != "hf" && name != "llamacpp-cpu" && name != "llamacpp-cuda")
      presets += std::string(name) + " | ";
  }
  return "r1 | r2 | r3 | hf | llamacpp-cpu | llamacpp-cuda | resonance-table | "
         "resonance-table[seq_len=L] | " +
         presets +
         "pipeline:KEY=VALUE;... (steps exponent power inv_freq position angle cos_sin "
         "attention_scaling rotation = COMPUTE[>STORE][@MODE]; power and cos_sin may end in "
         ":cr|:glibc|:sleef-u10; table output = a format; a format "
         "may be A; base=exact|FORMAT; angle.operands=FORMAT; scalar_division=correct|reciprocal; "
         "recipe=product|quotient|chained|power; "
         "arithmetic=theory|hf_eager; layout=adjacent|rotate_half)";
}

namespace {

/// Splits COMPUTE[>STORE][@MODE][:IMPL] into the formats part and IMPL (empty when absent).
/// The last ':' starts IMPL unless it belongs to a `fixed:I.F` format.
std::pair<std::string, std::string> split_implementation(const std::string& value) {
  const auto colon = value.rfind(':');
  if (colon == std::string::npos) return {value, ""};
  const std::string head = value.substr(0, colon);
  if (head.size() >= 5 && head.compare(head.size() - 5, 5, "fixed") == 0) return {value, ""};
  return {head, value.substr(colon + 1)};
}

/// Parses the value of a step key: COMPUTE[>STORE][@MODE][:IMPL] (IMPL: power and cos_sin).
StepFormat parse_step_format(std::string_view spec, const std::string& key,
                             const std::string& full_value, const Format& activation,
                             bool allow_store,
                             Rounding realisation_rounding = Rounding::nearest_even) {
  StepFormat out;
  const auto [value, implementation] = split_implementation(full_value);
  if (!implementation.empty()) {
    if (key != "power" && key != "cos_sin") {
      bad_realisation(spec, "step " + key + " takes no math library ':" + implementation +
                                "' (only power and cos_sin do: :" +
                                numeric::libm_implementation_spellings() + ")");
    }
    try {
      out.implementation = numeric::parse_libm_implementation(implementation);
    } catch (const InvalidArgument& e) {
      bad_realisation(spec, "step " + key + ": " + e.what());
    }
  }
  std::string formats = value;
  if (const auto at = value.find('@'); at != std::string::npos) {
    formats = value.substr(0, at);
    try {
      out.rounding = numeric::parse_rounding(value.substr(at + 1));
    } catch (const InvalidArgument& e) {
      bad_realisation(spec, "step " + key + ": " + e.what());
    }
  }
  auto format = [&](const std::string& text) -> Format {
    if (text.empty()) {
      bad_realisation(spec, "step " + key + " has no format (expected " +
                                (allow_store ? "COMPUTE[>STORE][@MODE]" : "FORMAT or A") + ")");
    }
    if (text == "A") return activation;
    try {
      return numeric::parse_format(text);
    } catch (const InvalidArgument& e) {
      bad_realisation(spec, "step " + key + ": " + e.what());
    }
  };
  if (const auto gt = formats.find('>'); gt != std::string::npos) {
    if (!allow_store) {
      bad_realisation(spec, "step " + key + " takes no storage format ('>'); " +
                                (key == "rotation" ? "use output=FORMAT" : "give one format"));
    }
    out.compute = format(formats.substr(0, gt));
    out.store = format(formats.substr(gt + 1));
    if (*out.store == out.compute) out.store.reset();
  } else {
    out.compute = format(formats);
  }
  if (out.implementation != numeric::LibmImplementation::correctly_rounded) {
    const std::string impl(numeric::to_string(out.implementation));
    if (out.compute != Format::fp32()) {
      bad_realisation(spec, "step " + key + ":" + impl + " calls the binary32 library functions " +
                                "(cosf, sinf, powf); its compute format must be fp32, got " +
                                out.compute.name);
    }
    if (out.rounding_or(realisation_rounding) != Rounding::nearest_even) {
      bad_realisation(spec, "step " + key + ":" + impl +
                                " runs in the default rounding mode (nearest-even); drop @MODE " +
                                "or the directed rounding, or use :cr");
    }
  }
  return out;
}

}  // namespace

Realisation parse_realisation(std::string_view spec, const Format& format, Rounding rounding) {
  return parse_realisation(spec, numeric::FormatBinding{format, rounding, nullptr});
}

Realisation parse_realisation(std::string_view spec, const numeric::FormatBinding& binding) {
  const Format& format = binding.format;
  Realisation r;
  static_cast<numeric::FormatBinding&>(r) = binding;
  if (spec == "r1" || spec == "r2" || spec == "r3") {
    r.kind = spec == "r1" ? Realisation::Kind::r1
                          : (spec == "r2" ? Realisation::Kind::r2 : Realisation::Kind::r3);
    r.layout = PairLayout::adjacent;
    return r;
  }
  r.kind = Realisation::Kind::pipeline;
  r.layout = PairLayout::rotate_half;
  if (spec == "hf") {
    r.steps = hf_steps(format);
    return r;
  }
  if (spec == "llamacpp-cpu") {
    r.steps = llamacpp_steps(format, AngleRecipe::chained);
    return r;
  }
  if (spec == "llamacpp-cuda") {
    r.steps = llamacpp_steps(format, AngleRecipe::power);
    return r;
  }
  if (spec.substr(0, 15) == "resonance-table") {
    // Resonance RoPE's reference cache (realisation.hpp ResonanceTable): hf's fp32 steps
    r.steps = hf_steps(format);
    r.steps.resonance = ResonanceTable{};
    r.steps.name = "resonance-table";
    const std::string_view rest = spec.substr(15);
    if (!rest.empty()) {
      const std::string_view prefix = "[seq_len=";
      if (rest.substr(0, prefix.size()) != prefix || rest.back() != ']') {
        bad_realisation(spec, "expected resonance-table or resonance-table[seq_len=L]");
      }
      const std::string n(rest.substr(prefix.size(), rest.size() - prefix.size() - 1));
      std::uint64_t seq_len = 0;
      try {
        seq_len = ropesim::parse_integer(n, "seq_len", 1, UINT64_MAX);
      } catch (const InvalidArgument& e) {
        bad_realisation(spec, e.what());
      }
      r.steps.resonance->seq_len = seq_len;
      r.steps.name += "[seq_len=" + std::to_string(seq_len) + "]";
    }
    return r;
  }
  if (const FrameworkPreset* preset = find_framework_preset(spec)) {
    // a framework preset is its cited step list (attention/realisations/framework_presets.hpp)
    Realisation p = parse_realisation(preset->spec, binding);
    p.steps.name = std::string(preset->name);
    return p;
  }
  if (spec.substr(0, 9) != "pipeline:") {
    std::vector<std::string> names = {"r1", "r2", "r3", "resonance-table"};
    for (const auto name : framework_preset_names()) names.emplace_back(name);
    bad_realisation(spec, "unknown realisation" + ropesim::did_you_mean(spec, names));
  }
  r.steps = hf_steps(format);
  r.steps.name = "pipeline";
  std::set<std::string> seen;
  // No empty step ('pipeline:;;;', a trailing ';'); a step given twice is refused below.
  const std::string body(spec.substr(9));
  const std::vector<std::string> items = ropesim::split_pieces(body, ';');
  if (const auto fault = ropesim::list_fault(items, body, ';', ropesim::Repeats::allowed)) {
    bad_realisation(spec, "steps: " + fault->problem + ", steps are separated by single ';'");
  }
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) bad_realisation(spec, "expected KEY=VALUE, got '" + item + "'");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (!seen.insert(key).second) {
      bad_realisation(spec, "step " + key + " is given twice (each step has one format)");
    }
    auto plain = [&]() -> Format {
      if (value.find_first_of(">@") != std::string::npos) {
        bad_realisation(
            spec, "step " + key + " is a stored format: give one FORMAT or A, not '" + value + "'");
      }
      return parse_step_format(spec, key, value, format, false).compute;
    };
    auto stepf = [&](bool allow_store = true) {
      return parse_step_format(spec, key, value, format, allow_store, binding.rounding);
    };
    if (key == "exponent")
      r.steps.exponent = stepf();
    else if (key == "power")
      r.steps.power = stepf();
    else if (key == "inv_freq")
      r.steps.inv_freq = stepf();
    else if (key == "position")
      r.steps.position = stepf();
    else if (key == "angle")
      r.steps.angle = stepf();
    else if (key == "cos_sin")
      r.steps.cos_sin = stepf();
    else if (key == "attention_scaling")
      r.steps.attention_scaling = stepf();
    else if (key == "rotation")
      r.steps.rotation = stepf(false);
    else if (key == "table")
      r.steps.table = plain();
    else if (key == "output")
      r.steps.output = plain();
    else if (key == "angle.operands")
      r.steps.angle_operands = plain();
    else if (key == "base") {
      if (value == "exact")
        r.steps.base_exact = true;
      else
        r.steps.base_format = plain();
    } else if (key == "scalar_division") {
      if (value == "correct")
        r.steps.reciprocal_scalar_division = false;
      else if (value == "reciprocal")
        r.steps.reciprocal_scalar_division = true;
      else
        bad_realisation(spec, "scalar_division '" + value + "' (accepted: correct, reciprocal)");
    } else if (key == "recipe") {
      if (value == "product")
        r.steps.recipe = AngleRecipe::product;
      else if (value == "quotient")
        r.steps.recipe = AngleRecipe::quotient;
      else if (value == "chained")
        r.steps.recipe = AngleRecipe::chained;
      else if (value == "power")
        r.steps.recipe = AngleRecipe::power;
      else
        bad_realisation(spec,
                        "recipe '" + value + "' (accepted: product, quotient, chained, power)");
    } else if (key == "arithmetic") {
      if (value == "theory")
        r.steps.arithmetic = RotationArithmetic::theory;
      else if (value == "hf_eager")
        r.steps.arithmetic = RotationArithmetic::hf_eager;
      else
        bad_realisation(spec, "arithmetic '" + value + "' (accepted: theory, hf_eager)");
    } else if (key == "layout") {
      try {
        r.layout = parse_pair_layout(value);
      } catch (const InvalidArgument& e) {
        bad_realisation(spec, e.what());
      }
    } else {
      bad_realisation(spec,
                      "unknown step '" + key +
                          "' (steps: exponent power inv_freq position "
                          "angle cos_sin attention_scaling table rotation output; options: base "
                          "angle.operands scalar_division recipe arithmetic layout)");
    }
  }
  // The old spelling: inv_freq=X also meant the exponent and the power in X.
  if (seen.count("inv_freq") != 0) {
    if (seen.count("exponent") == 0) r.steps.exponent = step(r.steps.inv_freq.compute);
    if (seen.count("power") == 0) r.steps.power = step(r.steps.inv_freq.compute);
  }
  if (r.steps.base_exact &&
      r.steps.power.implementation != numeric::LibmImplementation::correctly_rounded) {
    bad_realisation(spec, "base=exact rounds β^e once, exactly; power=fp32:" +
                              std::string(numeric::to_string(r.steps.power.implementation)) +
                              " calls powf on the fp32 base: give one of them");
  }
  if (r.steps.angle_operands && r.steps.recipe != AngleRecipe::product) {
    bad_realisation(spec,
                    "step angle.operands: only the product recipe's inv_freq ⊗ t is a GEMM "
                    "(recipe=" +
                        std::string(to_string(r.steps.recipe)) + " is elementwise)");
  }
  return r;
}

void check_applicable(const Schedule& s, const Realisation& r) {
  if (r.kind == Realisation::Kind::r3) {
    for (const auto& b : s.blocks) {
      if (!b.turn) {
        throw InvalidArgument("r3 (periodic table) needs every angle of the form 2πa/m; block " +
                              std::to_string(b.index) + " of '" + s.spec +
                              "' has θ = " + b.theta.to_string() +
                              ", not a rational multiple of 2π; accepted: periodic:... "
                              "schedules, or use r1/r2");
      }
    }
  }
  if (r.kind == Realisation::Kind::pipeline && r.steps.resonance) {
    for (const auto& b : s.blocks) {
      const bool wavelength =
          b.turn && (b.turn->a == 1 || b.turn->m == 1) && b.turn->m <= (std::uint64_t{1} << 24);
      if (!wavelength) {
        throw InvalidArgument("realisation " + r.name() +
                              " tabulates one period of θ = 2π/λ "
                              "(integer λ ≤ 2^24); block " +
                              std::to_string(b.index) + " of '" + s.spec +
                              "' has θ = " + b.theta.to_string() +
                              "; accepted: resonance:..., resonance-yarn:... or periodic:m=... "
                              "schedules");
      }
    }
  }
  if (s.is_multi_axis()) {
    for (const auto& b : s.blocks) {
      if (r.kind == Realisation::Kind::r3) {
        for (const auto& t : b.axis_angles) {
          if (!t.turn) {
            throw InvalidArgument(
                "r3 (periodic table) needs every θ_{d,a} of the form 2πa/m; block " +
                std::to_string(b.index) + " of '" + s.spec + "' reads axis " +
                s.position_axes[t.axis] + " with θ = " + t.theta.to_string() +
                "; accepted: turns a/m, or use r1/r2");
          }
        }
      }
      if (r.kind == Realisation::Kind::pipeline && b.axis_angles.size() > 1) {
        throw InvalidArgument("realisation " + r.name() + ": block " + std::to_string(b.index) +
                              " of '" + s.spec +
                              "' mixes position axes (no framework step list is modelled "
                              "for it); accepted: r1, r2, r3");
      }
    }
  }
  if (r.kind == Realisation::Kind::pipeline &&
      r.steps.cos_sin.implementation == numeric::LibmImplementation::sleef_u10) {
    // PyTorch passes emb = cat(freqs, freqs) [L, 2·nb] to SLEEF in 8-lane vectors: with nb a
    // multiple of 8 each vector holds blocks 8j … 8j+7 of one position (StepFormat).
    if (s.is_multi_axis() || s.blocks.size() % numeric::kSleefLanes != 0) {
      throw InvalidArgument(
          "realisation " + r.name() + ": cos_sin=fp32:sleef-u10 computes 8 blocks per SLEEF " +
          "vector, as PyTorch does, and needs a one-axis schedule with a multiple of 8 rotary " +
          "blocks; '" + s.spec + "' has " + std::to_string(s.blocks.size()) +
          (s.is_multi_axis() ? " on several position axes" : "") +
          "; accepted: cos_sin=fp32:cr or cos_sin=fp32:glibc, or such a schedule");
    }
  }
  if (r.kind == Realisation::Kind::pipeline && r.steps.recipe != AngleRecipe::product) {
    if (!s.base || !s.exponent_dim) {
      throw InvalidArgument("realisation " + r.name() +
                            " (theta_scale = β^(-2/D)) needs a base-β "
                            "schedule; '" +
                            s.spec +
                            "' has none; accepted: conventional, "
                            "partial, prope or a model preset without llama3 scaling");
    }
    if (s.rope_scaling && s.rope_scaling->type != "mrope") {
      // the framework rescaling is modelled on inv_freq (product recipe) only
      throw InvalidArgument("realisation " + r.name() + ": the " + s.rope_scaling->type +
                            " rope scaling of '" + s.spec +
                            "' is modelled for the product recipe "
                            "only (recipe=" +
                            std::string(to_string(r.steps.recipe)) +
                            " has no inv_freq step to rescale); accepted: r1, r2, r3, hf, a "
                            "product-recipe pipeline, or a schedule without rope scaling");
    }
  }
}

}  // namespace ropesim::attention
