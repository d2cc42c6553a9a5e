#include "attention/realisation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "attention/detail/evaluator.hpp"
#include "attention/detail/format_ops.hpp"
#include "attention/framework_presets.hpp"
#include "numeric/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/json_number.hpp"
#include "numeric/lists.hpp"
#include "numeric/mpfr_util.hpp"
#include "numeric/suggest.hpp"

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

std::string_view arithmetic_name(RotationArithmetic a) {
  return a == RotationArithmetic::theory ? "theory" : "hf_eager";
}

}  // namespace

std::string_view to_string(PairLayout layout) {
  return layout == PairLayout::adjacent ? "adjacent" : "rotate_half";
}

PairLayout parse_pair_layout(std::string_view text) {
  if (text == "adjacent") return PairLayout::adjacent;
  if (text == "rotate_half" || text == "rotate-half") return PairLayout::rotate_half;
  throw InvalidArgument("unknown pair layout '" + std::string(text) +
                        "'; accepted: adjacent, rotate_half");
}

std::string_view to_string(AngleRecipe recipe) {
  switch (recipe) {
    case AngleRecipe::product:
      return "product";
    case AngleRecipe::quotient:
      return "quotient";
    case AngleRecipe::chained:
      return "chained";
    case AngleRecipe::power:
      return "power";
  }
  return "?";
}

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
         "may be A; base=exact|FORMAT; angle.operands=FORMAT; "
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
        seq_len = numeric::parse_integer(n, "seq_len", 1, UINT64_MAX);
      } catch (const InvalidArgument& e) {
        bad_realisation(spec, e.what());
      }
      r.steps.resonance->seq_len = seq_len;
      r.steps.name += "[seq_len=" + std::to_string(seq_len) + "]";
    }
    return r;
  }
  if (const FrameworkPreset* preset = find_framework_preset(spec)) {
    // a framework preset is its cited step list (attention/framework_presets.hpp)
    Realisation p = parse_realisation(preset->spec, binding);
    p.steps.name = std::string(preset->name);
    return p;
  }
  if (spec.substr(0, 9) != "pipeline:") {
    std::vector<std::string> names = {"r1", "r2", "r3", "resonance-table"};
    for (const auto name : framework_preset_names()) names.emplace_back(name);
    bad_realisation(spec, "unknown realisation" + numeric::did_you_mean(spec, names));
  }
  r.steps = hf_steps(format);
  r.steps.name = "pipeline";
  std::set<std::string> seen;
  // No empty step ('pipeline:;;;', a trailing ';'); a step given twice is refused below.
  const std::string body(spec.substr(9));
  const std::vector<std::string> items = numeric::split_pieces(body, ';');
  if (const auto fault = numeric::list_fault(items, body, ';', numeric::Repeats::allowed)) {
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
                          "angle.operands recipe arithmetic layout)");
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

std::uint8_t RealisedRotation::flags() const {
  std::uint8_t f = 0;
  for (const auto& b : blocks) f |= b.flags;
  return f;
}

PositionTuple position_tuple(const Schedule& s, std::uint64_t i) {
  return PositionTuple(s.is_multi_axis() ? s.position_axes.size() : 1, i);
}

void check_position(const Schedule& s, const PositionTuple& p) {
  const std::size_t k = s.is_multi_axis() ? s.position_axes.size() : 1;
  if (p.size() != k) {
    std::string names = "one scalar position";
    if (s.is_multi_axis()) {
      names = "(";
      for (std::size_t a = 0; a < k; ++a) names += (a ? "," : "") + s.position_axes[a];
      names += ") or one scalar i = (i, ..., i)";
    }
    throw InvalidArgument("position " + to_string(p) + " has " + std::to_string(p.size()) +
                          " coordinates, schedule '" + s.spec + "' takes " + std::to_string(k) +
                          "; accepted: " + names);
  }
  for (const auto c : p) {
    if (c > (std::uint64_t{1} << 63) - 1) {
      throw InvalidArgument("position " + to_string(p) + ": coordinates must be ≤ 2^63 - 1");
    }
  }
}

PositionTuple parse_position_tuple(std::string_view text) {
  std::string_view body = text;
  const auto bad = [&]() {
    throw InvalidArgument("bad position '" + std::string(text) +
                          "'; accepted: i, (t,h,w) or t,h,w with integers 0..2^63-1");
  };
  if (!body.empty() && body.front() == '(') {
    if (body.back() != ')') bad();
    body = body.substr(1, body.size() - 2);
  }
  PositionTuple out;
  std::vector<std::string> items;
  try {
    items = numeric::split_items(body, ',', "position");
  } catch (const InvalidArgument&) {
    bad();
  }
  for (std::string item : items) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 19)
      bad();
    const mpz_class v(item);
    if (v > mpz_class("9223372036854775807")) bad();
    out.push_back(std::stoull(item));
  }
  if (out.empty()) bad();
  return out;
}

std::string to_string(const PositionTuple& p) {
  if (p.size() == 1) return std::to_string(p[0]);
  std::string out = "(";
  for (std::size_t a = 0; a < p.size(); ++a) out += (a ? "," : "") + std::to_string(p[a]);
  return out + ")";
}

namespace {

/// Block b of `s` at the tuple p (multi-axis schedules): one-axis blocks by the one-axis
/// evaluator at p_a (a block with no term has θ = 0 and is realised at 0), mixed blocks by
/// detail::evaluate_mixed. `constant_flags` receives the pipeline constants' flags.
RealisedPair realise_block_at(const Schedule& s, const Realisation& r, std::size_t b,
                              const PositionTuple& p, detail::Steps* steps,
                              std::uint8_t* constant_flags) {
  const RotaryBlock& block = s.blocks[b];
  if (block.axis_angles.size() > 1) {
    if (constant_flags != nullptr) *constant_flags = 0;
    return detail::evaluate_mixed(block, r, p, s.position_axes, steps);
  }
  const std::uint64_t q = block.axis_angles.empty() ? 0 : p[block.axis_angles.front().axis];
  const std::vector<Realisation> members{r};
  detail::BlockEvaluator ev(s, b, members, r.arithmetic_engine());
  const RealisedPair out = ev.evaluate_one(0, q, steps);
  if (constant_flags != nullptr) *constant_flags = ev.constant_flags(0);
  return out;
}

/// The fields of a realised rotation that do not depend on the position.
RealisedRotation rotation_frame(const Schedule& s, const Realisation& r) {
  RealisedRotation rot;
  rot.unrotated_pairs = s.unrotated_pairs;
  rot.rounding = r.rounding;
  if (r.kind == Realisation::Kind::pipeline) {
    rot.rotation_format = r.steps.rotation.compute;
    rot.output_format = r.steps.output;
    rot.arithmetic = r.steps.arithmetic;
    rot.rounding = r.steps.rotation.rounding_or(r.rounding);
  } else {
    rot.rotation_format = r.format;
    rot.output_format = r.format;
    rot.arithmetic = RotationArithmetic::theory;
  }
  return rot;
}

}  // namespace

RealisedRotation realise(const Schedule& s, const Realisation& r, std::uint64_t position) {
  if (s.is_multi_axis()) {
    RealisedRotation rot = realise(s, r, position_tuple(s, position));
    rot.position = position;
    return rot;
  }
  check_applicable(s, r);
  RealisedRotation rot = rotation_frame(s, r);
  rot.position = position;
  const std::vector<Realisation> members{r};
  for (std::size_t b = 0; b < s.blocks.size(); ++b) {
    detail::BlockEvaluator ev(s, b, members, r.arithmetic_engine());
    rot.blocks.push_back(ev.evaluate_one(0, position, nullptr));
  }
  return rot;
}

RealisedRotation realise(const Schedule& s, const Realisation& r, const PositionTuple& position) {
  check_position(s, position);
  if (!s.is_multi_axis()) return realise(s, r, position.front());
  check_applicable(s, r);
  RealisedRotation rot = rotation_frame(s, r);
  rot.tuple = position;
  const bool diagonal = std::all_of(position.begin(), position.end(),
                                    [&](std::uint64_t c) { return c == position.front(); });
  rot.position = diagonal ? position.front() : 0;
  for (std::size_t b = 0; b < s.blocks.size(); ++b) {
    rot.blocks.push_back(realise_block_at(s, r, b, position, nullptr, nullptr));
  }
  return rot;
}

std::vector<RealisedPair> realise_block(const Schedule& s, const Realisation& r, std::size_t block,
                                        std::uint64_t begin, std::uint64_t end) {
  check_applicable(s, r);
  if (end < begin) {
    throw InvalidArgument("realise_block: end " + std::to_string(end) + " < begin " +
                          std::to_string(begin));
  }
  if (block < s.blocks.size() && s.blocks[block].axis_angles.size() > 1) {
    // a block mixing axes, on the diagonal (i, ..., i): per position, its angle per axis
    std::vector<RealisedPair> out;
    out.reserve(end - begin);
    for (std::uint64_t i = begin; i < end; ++i) {
      out.push_back(detail::evaluate_mixed(s.blocks[block], r, position_tuple(s, i),
                                           s.position_axes, nullptr));
    }
    return out;
  }
  const std::vector<Realisation> members{r};
  detail::BlockEvaluator ev(s, block, members, r.arithmetic_engine());
  std::vector<std::vector<RealisedPair>> out;
  ev.evaluate(begin, end, out);
  return std::move(out[0]);
}

std::vector<Value> apply_rotation(const RealisedRotation& rot, std::span<const Value> x,
                                  PairLayout layout, const numeric::Engine& engine) {
  const std::size_t nb = rot.blocks.size();
  const std::size_t dim = 2 * (nb + rot.unrotated_pairs);
  if (x.size() != dim) {
    throw InvalidArgument("apply_rotation: vector has " + std::to_string(x.size()) +
                          " coordinates, the rotation needs " + std::to_string(dim));
  }
  const Format& f = rot.rotation_format;
  const Format& out_f = rot.output_format;
  const Rounding rd = rot.rounding;
  std::vector<Value> y(x.begin(), x.end());
  for (std::size_t d = 0; d < nb; ++d) {
    const std::size_t i0 = layout == PairLayout::adjacent ? 2 * d : d;
    const std::size_t i1 = layout == PairLayout::adjacent ? 2 * d + 1 : d + nb;
    const Value x0 = engine.convert(f, x[i0], rd), x1 = engine.convert(f, x[i1], rd);
    const Value c = engine.convert(f, rot.blocks[d].cos, rd);
    const Value s = engine.convert(f, rot.blocks[d].sin, rd);
    Value y0, y1;
    if (rot.arithmetic == RotationArithmetic::theory) {
      // THEORY §2.1: (rnd(rnd(c·x0) - rnd(s·x1)), rnd(rnd(s·x0) + rnd(c·x1)))
      y0 = engine.sub(f, engine.mul(f, c, x0, rd), engine.mul(f, s, x1, rd), rd);
      y1 = engine.add(f, engine.mul(f, s, x0, rd), engine.mul(f, c, x1, rd), rd);
    } else {
      // HF eager q·cos + rotate_half(q)·sin, rotate_half(q) = (-x1, x0) on the pair
      y0 = engine.add(f, engine.mul(f, x0, c, rd), engine.mul(f, numeric::negate(x1), s, rd), rd);
      y1 = engine.add(f, engine.mul(f, x1, c, rd), engine.mul(f, x0, s, rd), rd);
    }
    y[i0] = out_f == f ? y0 : engine.convert(out_f, y0, rd);
    y[i1] = out_f == f ? y1 : engine.convert(out_f, y1, rd);
  }
  return y;
}

namespace {

/// (realised - exact)/ulp_F(round_F(exact)), exact given at high precision.
double error_ulps(const Format& f, const Value& realised, mpfr_ptr exact) {
  if (!realised.is_finite()) return std::numeric_limits<double>::quiet_NaN();
  const Value rounded = numeric::mpfr_engine().from_mpfr(f, exact, Rounding::nearest_even);
  if (!rounded.is_finite()) return std::numeric_limits<double>::quiet_NaN();
  const long e = numeric::ulp_exponent(f, rounded);
  Mpfr d(256), r(256);
  realised.to_mpfr(r);
  mpfr_sub(d, r, exact, MPFR_RNDN);
  mpfr_mul_2si(d, d, -e, MPFR_RNDN);
  return mpfr_get_d(d, MPFR_RNDN);
}

std::string decimal(const Value& v) { return v.to_decimal(17); }

}  // namespace

PositionReport query_position(const Schedule& s, const Realisation& r, std::uint64_t position) {
  if (s.is_multi_axis()) {
    PositionReport rep = query_position(s, r, position_tuple(s, position));
    rep.position = position;
    return rep;
  }
  return query_position(s, r, PositionTuple{position});
}

PositionReport query_position(const Schedule& s, const Realisation& r, const PositionTuple& tuple) {
  check_position(s, tuple);
  check_applicable(s, r);
  const bool multi = s.is_multi_axis();
  const std::uint64_t position = tuple.front();
  PositionReport rep;
  rep.schedule = s.spec;
  rep.realisation = r.name();
  rep.table_format = r.table_format();
  rep.position = position;
  if (multi) {
    rep.tuple = tuple;
    rep.axes = s.position_axes;
  }
  if (r.kind == Realisation::Kind::pipeline && s.attention_scaling) {
    rep.attention_factor = *s.attention_scaling;
    rep.attention_factor_text = s.attention_scaling_text;
  }
  const std::vector<Realisation> members{r};
  for (std::size_t b = 0; b < s.blocks.size(); ++b) {
    BlockReport br;
    br.block = b;
    // θ_d·i, or on a multi-axis schedule Σ_a θ_{d,a}·p_a (turns summed as one multiple of π)
    ExactReal angle;
    if (!multi) {
      angle =
          ExactReal::rational(mpq_class(mpz_class(std::to_string(position)))) * s.blocks[b].theta;
    } else {
      std::optional<mpq_class> pi_sum = mpq_class(0), rational_sum = mpq_class(0);
      for (const auto& t : s.blocks[b].axis_angles) {
        const mpq_class p(mpz_class(std::to_string(tuple[t.axis])));
        const auto pi_q = t.theta.as_pi_multiple();
        const auto q = t.theta.as_rational();
        if (pi_q && pi_sum)
          *pi_sum += *pi_q * p;
        else
          pi_sum.reset();
        if (q && rational_sum)
          *rational_sum += *q * p;
        else
          rational_sum.reset();
        angle = angle + ExactReal::rational(p) * t.theta;
      }
      if (pi_sum)
        angle = *pi_sum == 0 ? ExactReal() : ExactReal::pi_times(*pi_sum);
      else if (rational_sum)
        angle = ExactReal::rational(*rational_sum);
    }
    br.exact_angle_text = angle.to_string();
    // The reference cos/sin, accurate to far below a double's ulp: for an angle q·π the
    // argument is reduced exactly (q mod 2, so sin 6π is exactly 0); otherwise the enclosure
    // is taken with 192 bits below the angle's binary point, so that reduction mod 2π keeps
    // them (an angle of 3e150 needs about 500 bits before the point).
    Mpfr c(256), sn(256);
    Mpfr a(320);
    if (const auto q = angle.as_pi_multiple()) {
      mpz_class two_floor;
      mpz_fdiv_q(two_floor.get_mpz_t(), q->get_num_mpz_t(),
                 mpz_class(2 * q->get_den()).get_mpz_t());
      const mpq_class reduced = *q - mpq_class(2 * two_floor);  // in [0, 2)
      Mpfr t(320);
      mpfr_set_q(t, reduced.get_mpq_t(), MPFR_RNDN);
      mpfr_cospi(c, t, MPFR_RNDN);
      mpfr_sinpi(sn, t, MPFR_RNDN);
      mpfr_const_pi(a, MPFR_RNDN);
      Mpfr qq(320);
      mpfr_set_q(qq, q->get_mpq_t(), MPFR_RNDN);
      mpfr_mul(a, a, qq, MPFR_RNDN);
    } else {
      Mpfr lo0(64), hi0(64);
      angle.enclose(lo0, hi0);
      const long magnitude = mpfr_regular_p(hi0) ? std::max<long>(0, mpfr_get_exp(hi0)) : 0;
      const mpfr_prec_t prec = static_cast<mpfr_prec_t>(320 + magnitude);
      Mpfr lo(prec), hi(prec), mid(prec);
      angle.enclose(lo, hi);
      mpfr_add(mid, lo, hi, MPFR_RNDN);
      mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
      mpfr_sin_cos(sn, c, mid, MPFR_RNDN);
      mpfr_set(a, mid, MPFR_RNDN);
    }
    br.exact_angle = mpfr_get_d(a, MPFR_RNDN);
    br.exact_cos = mpfr_get_d(c, MPFR_RNDN);
    br.exact_sin = mpfr_get_d(sn, MPFR_RNDN);
    if (rep.attention_factor) {
      // like with like: the realised pair carries s (cos = emb.cos() * attention_scaling)
      mpfr_mul_q(c, c, rep.attention_factor->get_mpq_t(), MPFR_RNDN);
      mpfr_mul_q(sn, sn, rep.attention_factor->get_mpq_t(), MPFR_RNDN);
    }
    br.reference_cos = mpfr_get_d(c, MPFR_RNDN);
    br.reference_sin = mpfr_get_d(sn, MPFR_RNDN);
    detail::Steps steps;
    RealisedPair p;
    if (multi) {
      p = realise_block_at(s, r, b, tuple, &steps, &br.constant_flags);
    } else {
      detail::BlockEvaluator ev(s, b, members, r.arithmetic_engine());
      p = ev.evaluate_one(0, position, &steps);
      br.constant_flags = ev.constant_flags(0);
    }
    br.steps = std::move(steps);
    br.cos = p.cos;
    br.sin = p.sin;
    br.flags = p.flags;
    br.cos_error_ulps = error_ulps(rep.table_format, p.cos, c);
    br.sin_error_ulps = error_ulps(rep.table_format, p.sin, sn);
    rep.blocks.push_back(std::move(br));
  }
  return rep;
}

nlohmann::json to_json(const PositionReport& report) {
  nlohmann::json j;
  j["schedule"] = report.schedule;
  j["realization"] = report.realisation;
  j["table_format"] = report.table_format.name;
  if (report.tuple.empty()) {
    j["position"] = report.position;
  } else {
    j["position"] = report.tuple;
    j["position_axes"] = report.axes;
  }
  if (report.attention_factor) {
    nlohmann::json factor = {{"expression", report.attention_factor_text}};
    numeric::put_exact(factor, "value", *report.attention_factor);
    j["attention_factor"] = factor;
  } else {
    j["attention_factor"] = nullptr;
  }
  // a realised value: "value" its JSON number (with "value_exact" when binary64 cannot hold it;
  // "nan", "inf", "-inf" when not finite) beside its 17-digit "decimal" and its exact "hex"
  auto value_json = [](const Value& v) {
    nlohmann::json o = {{"decimal", decimal(v)}, {"hex", v.to_hex()}};
    if (v.is_finite()) {
      numeric::put_exact(o, "value", numeric::exact_rational(v));
    } else {
      o["value"] = v.is_nan() ? "nan" : (v.sign_bit() ? "-inf" : "inf");
    }
    return o;
  };
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& b : report.blocks) {
    nlohmann::json jb;
    jb["block"] = b.block;
    jb["exact_angle"] = b.exact_angle;
    jb["exact_angle_text"] = b.exact_angle_text;
    jb["exact_cos"] = b.exact_cos;
    jb["exact_sin"] = b.exact_sin;
    jb["reference_cos"] = b.reference_cos;
    jb["reference_sin"] = b.reference_sin;
    nlohmann::json steps = nlohmann::json::object();
    for (const auto& [name, v] : b.steps) steps[name] = value_json(v);
    jb["steps"] = steps;
    jb["cos"] = value_json(b.cos);
    jb["sin"] = value_json(b.sin);
    auto num = [](double d) {
      return std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(nullptr);
    };
    jb["cos_error_ulps"] = num(b.cos_error_ulps);
    jb["sin_error_ulps"] = num(b.sin_error_ulps);
    jb["overflow"] = (b.flags & flag_overflow) != 0;
    jb["nan"] = (b.flags & flag_nan) != 0;
    jb["constant_overflow"] = (b.constant_flags & flag_overflow) != 0;
    jb["constant_nan"] = (b.constant_flags & flag_nan) != 0;
    blocks.push_back(jb);
  }
  j["blocks"] = blocks;
  return j;
}

}  // namespace ropesim::attention
