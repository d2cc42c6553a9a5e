#include "attention/schedule.hpp"

#include <mpfr.h>

#include <algorithm>
#include <mutex>
#include <sstream>

#include "attention/hf_config.hpp"
#include "numeric/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/lists.hpp"
#include "numeric/mpfr_util.hpp"
#include "numeric/suggest.hpp"

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

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (k) s += sep;
    s += v[k];
  }
  return s;
}

[[noreturn]] void bad_spec(std::string_view spec, const std::string& problem) {
  throw InvalidArgument("bad schedule '" + std::string(spec) + "': " + problem +
                        "; accepted: " + schedule_spellings());
}

std::string text_of(const mpq_class& q) { return q.get_str(); }

/// The items of one list inside `spec` (numeric::split_items: no empty item, as '1,,2' or a
/// trailing ',' would be); throws InvalidArgument through bad_spec.
std::vector<std::string> items_of(std::string_view spec, std::string_view text, char separator) {
  std::vector<std::string> items = numeric::split_pieces(text, separator);
  if (const auto fault = numeric::list_fault(items, text, separator, numeric::Repeats::allowed)) {
    bad_spec(spec, fault->problem + ", items are separated by single '" +
                       std::string(1, separator) + "'");
  }
  return items;
}

RotaryBlock block(std::size_t index, ExactReal theta) {
  RotaryBlock b;
  b.index = index;
  b.frequency_index = index;
  if (theta.is_zero()) b.turn = RationalTurn{0, 1};
  b.theta = std::move(theta);
  return b;
}

void finish(Schedule& s) {
  s.rotary_dim = 2 * s.blocks.size();
  s.head_dim = s.dimension();
}

std::size_t checked_dim(const mpq_class& d, const char* what) {
  // 65536 (32768 rotary blocks) is far beyond any model's head (≤ 256) and keeps a schedule's
  // exact angles within a few MB; 10^6 let one spec take about 1 GB (found by fuzz_schedule).
  if (d.get_den() != 1 || d < 2 || d > 65536 || d.get_num().get_ui() % 2 != 0) {
    throw InvalidArgument(std::string(what) + " must be an even integer in 2..65536, got " +
                          d.get_str());
  }
  return d.get_num().get_ui();
}

}  // namespace

const char* to_string(PositionAxis axis) {
  switch (axis) {
    case PositionAxis::temporal:
      return "temporal";
    case PositionAxis::height:
      return "height";
    case PositionAxis::width:
      return "width";
  }
  return "temporal";
}

bool Schedule::is_rational() const {
  return std::all_of(blocks.begin(), blocks.end(),
                     [](const RotaryBlock& b) { return b.turn.has_value(); });
}

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

std::string schedule_spellings() {
  return "conventional:base=B,dim=D | single:g=G (a decimal or a fraction P/Q) | "
         "periodic:m=M1,M2,... | "
         "periodic:A1/M1,A2/M2,... | partial:base=B,dim=D,factor=F | prope:base=B,dim=D,p=P | "
         "resonance:base=B,dim=D | "
         "resonance-yarn:base=B,dim=D,factor=S,original=L[,beta_fast=A,beta_slow=C] | "
         "axial2d:base=B,dim=D | mrope:base=B,dim=D,sections=T,H,W | "
         "hirope:base=B,dim=D,levels=L[,split=S1,...] | "
         "liere:axes=K,blocks=A|B|...,... (per block K angles: a/m turns or decimals) | "
         "hope:base=B,dim=D,train_len=T[,activated=K] | "
         "fope:base=B,dim=D,train_len=T[,sigma=S,seed=N] | "
         "hf-config:PATH | hf-config[seq_len=N]:PATH | a model preset (" +
         join(model_preset_names(), ", ") + ")";
}

Schedule conventional_schedule(const mpq_class& base, std::size_t dim) {
  if (base <= 0) throw InvalidArgument("base must be > 0, got " + base.get_str());
  if (dim < 2 || dim % 2 != 0) {
    throw InvalidArgument("dim must be an even integer ≥ 2, got " + std::to_string(dim));
  }
  Schedule s;
  s.kind = "conventional";
  s.spec = "conventional:base=" + text_of(base) + ",dim=" + std::to_string(dim);
  for (std::size_t k = 0; k < dim / 2; ++k) {
    mpq_class e(-2 * static_cast<long>(k), static_cast<long>(dim));
    e.canonicalize();
    s.blocks.push_back(block(k, ExactReal::power(base, e)));
  }
  s.base = base;
  s.exponent_dim = dim;
  finish(s);
  return s;
}

Schedule single_schedule(const mpq_class& g) {
  Schedule s;
  s.kind = "single";
  s.spec = "single:g=" + text_of(g);
  s.blocks.push_back(block(0, ExactReal::rational(g)));
  finish(s);
  return s;
}

Schedule periodic_schedule(const std::vector<RationalTurn>& turns) {
  if (turns.empty()) throw InvalidArgument("periodic schedule needs at least one a/m");
  Schedule s;
  s.kind = "periodic";
  s.spec = "periodic:";
  for (std::size_t k = 0; k < turns.size(); ++k) {
    const auto& t = turns[k];
    if (t.m < 1) {
      throw InvalidArgument("periodic schedule: m must be ≥ 1, got " + t.m.get_str());
    }
    mpq_class frac(t.a, t.m);
    frac.canonicalize();
    RotaryBlock b = block(k, ExactReal::pi_times(2 * frac));
    mpz_class a = frac.get_num() % frac.get_den();
    if (a < 0) a += frac.get_den();
    b.turn = RationalTurn{a, frac.get_den()};
    s.blocks.push_back(std::move(b));
    if (k) s.spec += ",";
    s.spec += t.a.get_str();
    s.spec += "/";
    s.spec += t.m.get_str();
  }
  finish(s);
  return s;
}

Schedule partial_schedule(const mpq_class& base, std::size_t dim, const mpq_class& factor) {
  if (factor <= 0 || factor > 1) {
    throw InvalidArgument("partial rotary factor must be in (0, 1], got " + factor.get_str());
  }
  if (dim < 2 || dim % 2 != 0) {
    throw InvalidArgument("dim must be an even integer ≥ 2, got " + std::to_string(dim));
  }
  mpq_class rd = factor * static_cast<long>(dim);
  mpz_class rotary = rd.get_num() / rd.get_den();  // floor, as Hugging Face's int(dim·factor)
  if (rotary < 2 || rotary % 2 != 0) {
    throw InvalidArgument("partial rotary: floor(dim·factor) = floor(" + std::to_string(dim) + "·" +
                          factor.get_str() + ") = " + rotary.get_str() + " must be even and ≥ 2");
  }
  const std::size_t rotary_dim = rotary.get_ui();
  Schedule s = conventional_schedule(base, rotary_dim);
  s.kind = "partial";
  s.spec = "partial:base=" + text_of(base) + ",dim=" + std::to_string(dim) +
           ",factor=" + text_of(factor);
  s.unrotated_pairs = (dim - rotary_dim) / 2;
  s.partial_rotary_factor = factor;
  finish(s);
  return s;
}

Schedule prope_schedule(const mpq_class& base, std::size_t dim, const mpq_class& p) {
  if (p < 0 || p > 1) throw InvalidArgument("p-RoPE p must be in [0, 1], got " + p.get_str());
  Schedule s = conventional_schedule(base, dim);
  s.kind = "prope";
  s.spec = "prope:base=" + text_of(base) + ",dim=" + std::to_string(dim) + ",p=" + text_of(p);
  // RRWG's implementation: rope_angles = int(p · dim // 2) highest frequencies kept.
  mpq_class kept_q = p * static_cast<long>(dim) / 2;
  const std::size_t kept = mpz_class(kept_q.get_num() / kept_q.get_den()).get_ui();
  for (std::size_t k = kept; k < s.blocks.size(); ++k) {
    s.blocks[k].theta = ExactReal();
    s.blocks[k].turn = RationalTurn{0, 1};
    s.blocks[k].dropped = true;
  }
  s.prope_p = p;
  return s;
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

namespace {

/// Makes `s` a multi-axis schedule whose block k reads axis reads[k] alone: axis_angles =
/// {(reads[k], θ_k, turn_k)}; θ and turn stay the block's (the diagonal angle of one term).
void read_axes(Schedule& s, std::vector<std::string> axes, const std::vector<std::size_t>& reads) {
  s.position_axes = std::move(axes);
  for (std::size_t k = 0; k < s.blocks.size(); ++k) {
    RotaryBlock& b = s.blocks[k];
    if (b.theta.is_zero()) continue;
    b.axis_angles.push_back(AxisAngle{reads[k], b.theta, b.turn});
  }
}

/// Section sizes → the axis of each block, in order.
std::vector<std::size_t> axes_of_sections(const std::vector<std::size_t>& sections) {
  std::vector<std::size_t> reads;
  for (std::size_t a = 0; a < sections.size(); ++a) reads.insert(reads.end(), sections[a], a);
  return reads;
}

std::string joined_sizes(const std::vector<std::size_t>& v) {
  std::string out;
  for (std::size_t k = 0; k < v.size(); ++k) out += (k ? "," : "") + std::to_string(v[k]);
  return out;
}

void check_train_len(std::uint64_t train_len) {
  if (train_len < 1) throw InvalidArgument("train_len must be an integer ≥ 1, got 0");
}

/// Sets block k to θ = 0 (dropped).
void drop_block(RotaryBlock& b) {
  b.theta = ExactReal();
  b.turn = RationalTurn{0, 1};
  b.dropped = true;
}

}  // namespace

namespace {

/// round(q) for a rational q, ties to even (torch.round, IEEE roundTiesToEven).
mpz_class round_half_even(const mpq_class& q) {
  mpz_class f;
  mpz_fdiv_q(f.get_mpz_t(), q.get_num_mpz_t(), q.get_den_mpz_t());  // floor
  const mpq_class frac = q - mpq_class(f);
  if (frac > mpq_class(1, 2)) return f + 1;
  if (frac < mpq_class(1, 2)) return f;
  return f % 2 == 0 ? f : f + 1;
}

}  // namespace

mpz_class resonance_wavelength(const ExactReal& theta) {
  if (theta.sign() <= 0) {
    throw InvalidArgument("resonance: the wavelength 2π/θ needs θ > 0, got θ = " +
                          theta.to_string());
  }
  if (const auto q = theta.as_pi_multiple()) return round_half_even(2 / *q);  // θ = qπ: 2π/θ = 2/q
  // 2π/θ is transcendental here (see the header), so it is never a half-integer and the
  // enclosure of x + 1/2 eventually lies strictly between two integers.
  const ExactReal x = ExactReal::pi_times(2) / theta;
  for (mpfr_prec_t p = 64; p <= 65536; p *= 2) {
    numeric::Mpfr lo(p), hi(p);
    x.enclose(lo, hi);
    mpfr_add_d(lo, lo, 0.5, MPFR_RNDD);
    mpfr_add_d(hi, hi, 0.5, MPFR_RNDU);
    mpz_class zl, zh;
    mpfr_get_z(zl.get_mpz_t(), lo, MPFR_RNDD);
    mpfr_get_z(zh.get_mpz_t(), hi, MPFR_RNDD);
    if (zl == zh) return zl;
  }
  throw std::runtime_error("resonance: round(2π/θ) undecided at 65536 bits for θ = " +
                           theta.to_string());
}

Schedule apply_resonance(Schedule s) {
  for (auto& b : s.blocks) {
    if (b.theta.is_zero()) continue;  // λ = ∞: the block stays θ = 0 (see the header)
    const mpz_class lambda = resonance_wavelength(b.theta);
    if (lambda == 0) {
      throw InvalidArgument("resonance: block " + std::to_string(b.index) +
                            " has θ = " + b.theta.to_string() +
                            " > 4π, so round(2π/θ) = 0 is no wavelength; "
                            "accepted: schedules with every θ ≤ 4π (base ≥ 1)");
    }
    b.theta = ExactReal::pi_times(mpq_class(2) / mpq_class(lambda));
    b.turn = lambda == 1 ? RationalTurn{0, 1} : RationalTurn{1, lambda};
  }
  // θ̃ is no power of β: framework pipelines form inv_freq from θ̃ itself (Schedule::base).
  s.base.reset();
  s.exponent_dim.reset();
  return s;
}

Schedule resonance_schedule(const mpq_class& base, std::size_t dim) {
  Schedule s = apply_resonance(conventional_schedule(base, dim));
  s.kind = "resonance";
  s.spec = "resonance:base=" + text_of(base) + ",dim=" + std::to_string(dim);
  return s;
}

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
  // The exact YaRN angles (config_schedule, attention/hf_config.cpp), then the rounding: the
  // reference's order (`yarn()` blends inv_freq, then `resonance_register(inv_freq)`).
  Schedule s = apply_resonance(config_schedule(c));
  s.kind = "resonance-yarn";
  s.spec = "resonance-yarn:base=" + text_of(base) + ",dim=" + std::to_string(dim) +
           ",factor=" + text_of(factor) + ",original=" + text_of(original);
  if (beta_fast) s.spec += ",beta_fast=" + text_of(*beta_fast);
  if (beta_slow) s.spec += ",beta_slow=" + text_of(*beta_slow);
  return s;
}

Schedule axial2d_schedule(const mpq_class& base, std::size_t dim) {
  if (dim < 4 || dim % 4 != 0) {
    throw InvalidArgument(
        "axial2d: dim must be a multiple of 4 (dim/4 frequencies per axis), got " +
        std::to_string(dim));
  }
  // θ_k = β^(-4k/dim) = β^(-2k/(dim/2)): the conventional schedule over dim/2, once per axis
  const Schedule half = conventional_schedule(base, dim / 2);
  Schedule s;
  s.kind = "axial2d";
  s.spec = "axial2d:base=" + text_of(base) + ",dim=" + std::to_string(dim);
  std::vector<std::size_t> reads;
  for (std::size_t axis = 0; axis < 2; ++axis) {
    for (const RotaryBlock& h : half.blocks) {
      RotaryBlock b = block(s.blocks.size(), h.theta);
      b.frequency_index = h.index;  // inv_freq_k = β^(-2k/(dim/2)), k = 0..dim/4-1
      s.blocks.push_back(std::move(b));
      reads.push_back(axis);
    }
  }
  s.base = base;
  s.exponent_dim = dim / 2;
  finish(s);
  read_axes(s, {"x", "y"}, reads);
  return s;
}

Schedule mrope_schedule(const mpq_class& base, std::size_t dim,
                        const std::vector<std::size_t>& sections) {
  if (sections.size() != 3) {
    throw InvalidArgument("mrope: sections must be three sizes T,H,W, got " +
                          std::to_string(sections.size()));
  }
  Schedule s = conventional_schedule(base, dim);
  if (sections[0] + sections[1] + sections[2] != s.blocks.size()) {
    throw InvalidArgument("mrope: sections " + joined_sizes(sections) +
                          " must sum to dim/2 = " + std::to_string(s.blocks.size()));
  }
  s.kind = "mrope";
  s.spec = "mrope:base=" + text_of(base) + ",dim=" + std::to_string(dim) +
           ",sections=" + joined_sizes(sections);
  read_axes(s, {"t", "h", "w"}, axes_of_sections(sections));
  return s;
}

Schedule hirope_schedule(const mpq_class& base, std::size_t dim, std::size_t levels,
                         const std::vector<std::size_t>& split) {
  if (levels < 2 || levels > 8) {
    throw InvalidArgument("hirope: levels must be in 2..8, got " + std::to_string(levels));
  }
  Schedule s = conventional_schedule(base, dim);
  const std::size_t nb = s.blocks.size();
  std::vector<std::size_t> sizes = split;
  const bool given = !split.empty();
  if (!given) {
    // dim/2 divided as equally as possible, the remainder to the last (coarsest) levels
    for (std::size_t l = 0; l < levels; ++l)
      sizes.push_back(nb / levels + (l >= levels - nb % levels ? 1 : 0));
  }
  std::size_t total = 0;
  for (auto v : sizes) total += v;
  if (sizes.size() != levels || total != nb) {
    throw InvalidArgument("hirope: split " + joined_sizes(sizes) + " must have " +
                          std::to_string(levels) +
                          " sizes summing to dim/2 = " + std::to_string(nb));
  }
  s.kind = "hirope";
  s.spec = "hirope:base=" + text_of(base) + ",dim=" + std::to_string(dim) +
           ",levels=" + std::to_string(levels) + (given ? ",split=" + joined_sizes(sizes) : "");
  std::vector<std::string> axes;
  for (std::size_t l = 1; l <= levels; ++l) axes.push_back("level" + std::to_string(l));
  read_axes(s, axes, axes_of_sections(sizes));
  return s;
}

Schedule liere_schedule(std::size_t axes, const std::vector<LieReBlock>& blocks) {
  if (axes < 1 || axes > 8)
    throw InvalidArgument("liere: axes must be in 1..8, got " + std::to_string(axes));
  if (blocks.empty()) throw InvalidArgument("liere: needs at least one block");
  Schedule s;
  s.kind = "liere";
  s.spec = "liere:axes=" + std::to_string(axes) + ",blocks=";
  for (std::size_t a = 1; a <= axes; ++a) s.position_axes.push_back("p" + std::to_string(a));
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const auto& angles = blocks[k].angles;
    if (angles.size() != axes) {
      throw InvalidArgument("liere: block " + std::to_string(k) + " has " +
                            std::to_string(angles.size()) + " angles, the schedule has " +
                            std::to_string(axes) + " axes");
    }
    const bool turns = std::holds_alternative<RationalTurn>(angles.front());
    RotaryBlock b;
    b.index = k;
    b.frequency_index = k;
    mpq_class turn_sum = 0, radian_sum = 0;
    std::string text;
    for (std::size_t a = 0; a < axes; ++a) {
      if (std::holds_alternative<RationalTurn>(angles[a]) != turns) {
        throw InvalidArgument("liere: block " + std::to_string(k) +
                              " mixes turns a/m and radians; "
                              "accepted: all angles of a block turns, or all decimals");
      }
      AxisAngle term;
      term.axis = a;
      if (turns) {
        const RationalTurn& t = std::get<RationalTurn>(angles[a]);
        if (t.m < 1) throw InvalidArgument("liere: m must be ≥ 1, got " + t.m.get_str());
        mpq_class frac(t.a, t.m);
        frac.canonicalize();
        text += (a ? "|" : "") + t.a.get_str() + "/" + t.m.get_str();
        if (frac == 0) continue;
        mpz_class r = frac.get_num() % frac.get_den();
        if (r < 0) r += frac.get_den();
        term.theta = ExactReal::pi_times(2 * frac);
        term.turn = RationalTurn{r, frac.get_den()};
        turn_sum += frac;
      } else {
        const mpq_class& q = std::get<mpq_class>(angles[a]);
        text += (a ? "|" : "") + text_of(q);
        if (q == 0) continue;
        term.theta = ExactReal::rational(q);
        radian_sum += q;
      }
      b.axis_angles.push_back(std::move(term));
    }
    s.spec += (k ? "," : "") + text;
    // the diagonal angle Σ_a θ_{d,a} (scalar position i = the tuple (i, ..., i))
    if (turns) {
      b.theta = turn_sum == 0 ? ExactReal() : ExactReal::pi_times(2 * turn_sum);
      mpq_class frac = turn_sum;
      mpz_class r = frac.get_num() % frac.get_den();
      if (r < 0) r += frac.get_den();
      b.turn = RationalTurn{r, frac.get_den()};
    } else {
      b.theta = radian_sum == 0 ? ExactReal() : ExactReal::rational(radian_sum);
      if (radian_sum == 0) b.turn = RationalTurn{0, 1};
    }
    s.blocks.push_back(std::move(b));
  }
  finish(s);
  return s;
}

Schedule along_axis(const Schedule& s, std::size_t axis) {
  if (!s.is_multi_axis()) {
    throw InvalidArgument("schedule '" + s.spec +
                          "' has scalar positions; accepted: a multi-axis schedule");
  }
  if (axis >= s.position_axes.size()) {
    throw InvalidArgument("axis index " + std::to_string(axis) + " out of range 0.." +
                          std::to_string(s.position_axes.size() - 1) + " of '" + s.spec + "'");
  }
  Schedule out = s;
  out.spec = s.spec + "@axis=" + s.position_axes[axis];
  out.position_axes.clear();
  out.blocks.clear();
  std::size_t dropped = 0;
  for (const RotaryBlock& b : s.blocks) {
    const auto term = std::find_if(b.axis_angles.begin(), b.axis_angles.end(),
                                   [&](const AxisAngle& t) { return t.axis == axis; });
    if (term == b.axis_angles.end()) {
      ++dropped;
      continue;
    }
    RotaryBlock kept = b;
    kept.index = out.blocks.size();
    kept.theta = term->theta;
    kept.turn = term->turn;
    kept.axis_angles.clear();
    out.blocks.push_back(std::move(kept));
  }
  if (out.blocks.empty()) {
    throw InvalidArgument("no block of '" + s.spec + "' reads axis " + s.position_axes[axis]);
  }
  out.unrotated_pairs = s.unrotated_pairs + dropped;
  out.rotary_dim = 2 * out.blocks.size();
  out.head_dim = out.dimension();
  return out;
}

Schedule hope_schedule(const mpq_class& base, std::size_t dim, std::uint64_t train_len,
                       std::size_t activated) {
  check_train_len(train_len);
  Schedule s = conventional_schedule(base, dim);
  s.kind = "hope";
  s.spec = "hope:base=" + text_of(base) + ",dim=" + std::to_string(dim) +
           ",train_len=" + std::to_string(train_len);
  if (activated > 0) s.spec += ",activated=" + std::to_string(activated);
  // θ_d decreases with d, so the blocks that complete a period within T come first.
  std::size_t kept = 0;
  for (auto& b : s.blocks) {
    if (wavelength_exceeds(b.theta, train_len)) {
      drop_block(b);
    } else {
      ++kept;
    }
  }
  if (activated > kept) {
    throw InvalidArgument(
        "hope: activated=" + std::to_string(activated) + " exceeds the " + std::to_string(kept) +
        " blocks whose wavelength fits in train_len=" + std::to_string(train_len));
  }
  for (std::size_t k = kept - activated; k < kept; ++k) drop_block(s.blocks[k]);
  s.train_len = train_len;
  s.hope_activated = activated;
  return s;
}

Schedule fope_schedule(const mpq_class& base, std::size_t dim, std::uint64_t train_len,
                       const mpq_class& sigma, std::uint64_t seed) {
  check_train_len(train_len);
  if (sigma < 0) throw InvalidArgument("fope sigma must be ≥ 0, got " + sigma.get_str());
  Schedule s = conventional_schedule(base, dim);
  s.kind = "fope";
  s.spec = "fope:base=" + text_of(base) + ",dim=" + std::to_string(dim) +
           ",train_len=" + std::to_string(train_len) + ",sigma=" + text_of(sigma) +
           ",seed=" + std::to_string(seed);
  // FoPE clips the components below the floor frequency 2π/T to zero frequency.
  for (auto& b : s.blocks) {
    if (wavelength_exceeds(b.theta, train_len)) drop_block(b);
  }
  s.train_len = train_len;
  s.fope_sigma = sigma;
  s.fope_seed = seed;
  return s;
}

namespace {

/// SplitMix64 output n (0-based) of the generator seeded with `seed` (Steele, Lea, Flood,
/// "Fast splittable pseudorandom number generators", OOPSLA 2014; Vigna's reference code).
std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t n) {
  std::uint64_t z = seed + (n + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// Box–Muller z = sqrt(-2 ln u1)·cos(2π u2), each operation rounded to nearest binary64 by
/// MPFR (correctly rounded: the same bits everywhere), returned exactly.
mpq_class box_muller(std::uint64_t x1, std::uint64_t x2) {
  mpfr_t u1, u2, a, b;
  mpfr_inits2(53, u1, u2, a, b, static_cast<mpfr_ptr>(nullptr));
  // u1 in (0, 1], u2 in [0, 1): 53-bit integers over 2^53, exact in binary64
  static_assert(sizeof(unsigned long) == 8, "53-bit integers are set through unsigned long");
  mpfr_set_ui(u1, static_cast<unsigned long>((x1 >> 11) + 1), MPFR_RNDN);  // ≤ 2^53: exact
  mpfr_div_2ui(u1, u1, 53, MPFR_RNDN);
  mpfr_set_ui(u2, static_cast<unsigned long>(x2 >> 11), MPFR_RNDN);
  mpfr_div_2ui(u2, u2, 53, MPFR_RNDN);
  mpfr_log(a, u1, MPFR_RNDN);        // ln u1 ≤ 0
  mpfr_mul_si(a, a, -2, MPFR_RNDN);  // exact (a power of two)
  mpfr_sqrt(a, a, MPFR_RNDN);
  mpfr_const_pi(b, MPFR_RNDN);
  mpfr_mul_2ui(b, b, 1, MPFR_RNDN);  // 2π rounded, doubling exact
  mpfr_mul(b, b, u2, MPFR_RNDN);
  mpfr_cos(b, b, MPFR_RNDN);
  mpfr_mul(a, a, b, MPFR_RNDN);
  mpq_class z;
  mpfr_get_q(z.get_mpq_t(), a);
  mpfr_clears(u1, u2, a, b, static_cast<mpfr_ptr>(nullptr));
  return z;
}

}  // namespace

mpq_class fope_coefficient(const Schedule& s, std::size_t component, std::size_t dimension) {
  if (s.kind != "fope" || !s.fope_sigma || !s.fope_seed) {
    throw InvalidArgument("fope_coefficient needs a fope schedule, got '" + s.spec + "'");
  }
  const std::size_t n = s.blocks.size();
  if (component >= n || dimension >= n) {
    throw InvalidArgument("fope_coefficient: component " + std::to_string(component) +
                          " and dimension " + std::to_string(dimension) + " must be < " +
                          std::to_string(n));
  }
  const std::uint64_t j = static_cast<std::uint64_t>(component) * n + dimension;
  const mpq_class z =
      box_muller(splitmix64(*s.fope_seed, 2 * j), splitmix64(*s.fope_seed, 2 * j + 1));
  mpq_class a = *s.fope_sigma * z;
  if (component == dimension) a += 1;
  return a;
}

Schedule apply_llama3_scaling(Schedule s, const Llama3Scaling& l) {
  if (l.factor <= 0 || l.high_freq_factor == l.low_freq_factor ||
      l.original_max_position_embeddings <= 0 || l.low_freq_factor <= 0 ||
      l.high_freq_factor <= 0) {
    throw InvalidArgument(
        "llama3 scaling needs factor > 0, low_freq_factor > 0, high_freq_factor > 0, "
        "high_freq_factor ≠ low_freq_factor, original_max_position_embeddings > 0");
  }
  const mpq_class& L = l.original_max_position_embeddings;
  const ExactReal two_pi = ExactReal::pi_times(2);
  for (auto& b : s.blocks) {
    if (b.theta.is_zero()) continue;
    const ExactReal& theta = b.theta;
    // wavelen = 2π/θ; low = L/low_ff; high = L/high_ff (θ > 0).
    // wavelen > low  ⟺  2π·low_ff > L·θ;   wavelen < high  ⟺  2π·high_ff < L·θ.
    const ExactReal Ltheta = ExactReal::rational(L) * theta;
    if (compare(ExactReal::pi_times(2 * l.low_freq_factor), Ltheta) > 0) {
      b.theta = theta * ExactReal::rational(1 / l.factor);
    } else if (compare(ExactReal::pi_times(2 * l.high_freq_factor), Ltheta) < 0) {
      // high-frequency band: unchanged
    } else {
      // smooth = (L/wavelen - low_ff)/(high_ff - low_ff), L/wavelen = L·θ/(2π)
      const ExactReal smooth = (Ltheta / two_pi - ExactReal::rational(l.low_freq_factor)) *
                               ExactReal::rational(1 / (l.high_freq_factor - l.low_freq_factor));
      b.theta = (ExactReal::rational(1) - smooth) * theta * ExactReal::rational(1 / l.factor) +
                smooth * theta;
    }
    b.turn.reset();
  }
  s.llama3 = l;
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
                        numeric::did_you_mean(name, model_preset_names()) +
                        "; accepted: " + join(model_preset_names(), ", "));
}

namespace {

/// `hf-config:PATH` or `hf-config[seq_len=N]:PATH` (PATH: everything after the first ':').
Schedule parse_hf_config_spec(std::string_view spec) {
  const auto colon = spec.find(':');
  const std::string_view head = spec.substr(0, colon);
  const std::string path(spec.substr(colon + 1));
  if (path.empty()) bad_spec(spec, "hf-config needs a path after ':'");
  std::uint64_t seq_len = 0;
  if (head != "hf-config") {
    const std::string_view prefix = "hf-config[seq_len=";
    if (head.substr(0, prefix.size()) != prefix || head.back() != ']') {
      bad_spec(spec, "expected hf-config:PATH or hf-config[seq_len=N]:PATH");
    }
    const std::string n(head.substr(prefix.size(), head.size() - prefix.size() - 1));
    try {
      seq_len = numeric::parse_integer(n, "seq_len", 1, UINT64_MAX);
    } catch (const InvalidArgument& e) {
      bad_spec(spec, e.what());
    }
  }
  return hf_config_schedule(path, seq_len);
}

}  // namespace

Schedule parse_schedule(std::string_view spec) {
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos) {
    for (const auto& p : model_presets()) {
      if (p.name == spec) return preset_schedule(spec);
    }
    bad_spec(spec,
             "unknown schedule or preset name" + numeric::did_you_mean(spec, model_preset_names()));
  }
  const std::string kind(spec.substr(0, colon));
  const std::string_view rest = spec.substr(colon + 1);
  try {
    if (kind.rfind("hf-config", 0) == 0) return parse_hf_config_spec(spec);
    if (kind == "periodic") {
      std::vector<RationalTurn> turns;
      if (rest.substr(0, 2) == "m=") {
        for (const auto& item : items_of(spec, rest.substr(2), ',')) {
          try {  // decimal digits only: not 2e0, not 2.0
            turns.push_back(
                {1, mpz_class(std::to_string(numeric::parse_integer(item, "m", 1, UINT64_MAX)))});
          } catch (const InvalidArgument& e) {
            bad_spec(spec, e.what());
          }
        }
      } else {
        for (const auto& item : items_of(spec, rest, ',')) {
          auto slash = item.find('/');
          if (slash == std::string::npos) bad_spec(spec, "expected a/m, got '" + item + "'");
          mpq_class a = numeric::parse_decimal_exact(item.substr(0, slash), "a");
          mpq_class m = numeric::parse_decimal_exact(item.substr(slash + 1), "m");
          if (a.get_den() != 1 || m.get_den() != 1 || m < 1) {
            bad_spec(spec, "a/m needs integers with m ≥ 1, got '" + item + "'");
          }
          turns.push_back({a.get_num(), m.get_num()});
        }
      }
      return periodic_schedule(turns);
    }
    // key=value lists
    std::vector<std::pair<std::string, std::string>> kv;
    for (const auto& item : items_of(spec, rest, ',')) {
      auto eq = item.find('=');
      if (eq == std::string::npos) {
        // list values (mrope sections=T,H,W; hirope split=S1,S2,...; liere blocks=T1,T2,...)
        // continue after a comma
        if (!kv.empty() && (kv.back().first == "sections" || kv.back().first == "split" ||
                            kv.back().first == "blocks")) {
          kv.back().second += "," + item;
          continue;
        }
        bad_spec(spec, "expected key=value, got '" + item + "'");
      }
      const std::string key = item.substr(0, eq);
      for (const auto& [earlier, value] : kv) {
        if (earlier == key) bad_spec(spec, "key '" + key + "' is given twice; give each key once");
      }
      kv.emplace_back(key, item.substr(eq + 1));
    }
    auto take_text = [&](const char* key) -> std::string {
      for (auto it = kv.begin(); it != kv.end(); ++it) {
        if (it->first == key) {
          std::string v = it->second;
          kv.erase(it);
          return v;
        }
      }
      bad_spec(spec, std::string("missing ") + key + "=");
    };
    // An integer key: decimal digits only (numeric::parse_integer; not 1e3, not 8.0).
    auto integer_of = [&](const char* key, const std::string& text, std::uint64_t lo,
                          std::uint64_t hi) {
      try {
        return numeric::parse_integer(text, key, lo, hi);
      } catch (const InvalidArgument& e) {
        bad_spec(spec, e.what());
      }
    };
    auto sizes = [&](const char* key, const std::string& text) {
      std::vector<std::size_t> out;
      for (const auto& item : items_of(spec, text, ',')) {
        out.push_back(static_cast<std::size_t>(integer_of(key, item, 0, 32768)));
      }
      return out;
    };
    auto take = [&](const char* key) -> mpq_class {
      for (auto it = kv.begin(); it != kv.end(); ++it) {
        if (it->first == key) {
          // A value is an exact decimal or a fraction of two decimals (`g=1/4`): the spec a
          // schedule prints for a non-decimal rational must parse back (model spec round trip).
          const std::string& text = it->second;
          if (text.find('/') != std::string::npos &&
              numeric::parse_decimal_exact(text.substr(text.find('/') + 1), key) == 0) {
            bad_spec(spec, std::string(key) + "=" + text + " divides by zero");
          }
          const mpq_class v = numeric::parse_rational_exact(text, key);
          kv.erase(it);
          return v;
        }
      }
      bad_spec(spec, std::string("missing ") + key + "=");
    };
    auto take_integer = [&](const char* key, std::uint64_t lo, std::uint64_t hi) {
      return integer_of(key, take_text(key), lo, hi);
    };
    // 65536 (32768 rotary blocks) is far beyond any model's head; checked_dim: even.
    auto take_dim = [&]() { return checked_dim(mpq_class(take_integer("dim", 2, 65536)), "dim"); };
    auto take_optional = [&](const char* key) -> std::optional<mpq_class> {
      for (const auto& item : kv) {
        if (item.first == key) return take(key);
      }
      return std::nullopt;
    };
    auto done = [&]() {
      if (!kv.empty()) bad_spec(spec, "unexpected key '" + kv.front().first + "'");
    };
    Schedule s;
    if (kind == "conventional") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      done();
      s = conventional_schedule(base, dim);
    } else if (kind == "single") {
      mpq_class g = take("g");
      done();
      s = single_schedule(g);
    } else if (kind == "partial") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      mpq_class factor = take("factor");
      done();
      s = partial_schedule(base, dim, factor);
    } else if (kind == "prope") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      mpq_class p = take("p");
      done();
      s = prope_schedule(base, dim, p);
    } else if (kind == "resonance") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      done();
      s = resonance_schedule(base, dim);
    } else if (kind == "resonance-yarn") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      mpq_class factor = take("factor");
      mpq_class original = take("original");
      const auto beta_fast = take_optional("beta_fast");
      const auto beta_slow = take_optional("beta_slow");
      done();
      s = resonance_yarn_schedule(base, dim, factor, original, beta_fast, beta_slow);
    } else if (kind == "axial2d") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      done();
      s = axial2d_schedule(base, dim);
    } else if (kind == "mrope") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      const std::vector<std::size_t> sections = sizes("sections", take_text("sections"));
      done();
      s = mrope_schedule(base, dim, sections);
    } else if (kind == "hirope") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      const std::uint64_t levels = take_integer("levels", 2, 8);
      std::vector<std::size_t> split_sizes;
      if (std::any_of(kv.begin(), kv.end(), [](const auto& p) { return p.first == "split"; })) {
        split_sizes = sizes("split", take_text("split"));
      }
      done();
      s = hirope_schedule(base, dim, levels, split_sizes);
    } else if (kind == "liere") {
      const std::uint64_t axes = take_integer("axes", 1, 8);
      const std::string text = take_text("blocks");
      done();
      std::vector<LieReBlock> blocks;
      for (const auto& item : items_of(spec, text, ',')) {
        LieReBlock b;
        for (const auto& angle : items_of(spec, item, '|')) {
          if (const auto slash = angle.find('/'); slash != std::string::npos) {
            const mpq_class a = numeric::parse_decimal_exact(angle.substr(0, slash), "a");
            const mpq_class m = numeric::parse_decimal_exact(angle.substr(slash + 1), "m");
            if (a.get_den() != 1 || m.get_den() != 1 || m < 1) {
              bad_spec(spec, "a turn a/m needs integers with m ≥ 1, got '" + angle + "'");
            }
            b.angles.emplace_back(RationalTurn{a.get_num(), m.get_num()});
          } else {
            b.angles.emplace_back(numeric::parse_decimal_exact(angle, "angle"));
          }
        }
        blocks.push_back(std::move(b));
      }
      s = liere_schedule(axes, blocks);
    } else if (kind == "hope" || kind == "fope") {
      // base, dim and train_len required; the optional keys of each kind after them
      const char* accepted =
          kind == "hope" ? "base, dim, train_len, activated" : "base, dim, train_len, sigma, seed";
      auto has = [&](const char* key) {
        return std::any_of(kv.begin(), kv.end(), [&](const auto& p) { return p.first == key; });
      };
      for (const auto& [key, value] : kv) {
        (void)value;
        const std::string keys = std::string(", ") + accepted + ",";
        if (keys.find(", " + key + ",") == std::string::npos) {
          bad_spec(spec, "unexpected key '" + key + "' (" + kind + " accepts " + accepted + ")");
        }
      }
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      const std::uint64_t train_len = take_integer("train_len", 1, UINT64_MAX);
      if (kind == "hope") {
        const std::uint64_t activated =
            has("activated") ? take_integer("activated", 0, UINT64_MAX) : 0;
        done();
        s = hope_schedule(base, dim, train_len, activated);
      } else {
        const mpq_class sigma = has("sigma") ? take("sigma") : mpq_class(3, 10);
        const std::uint64_t seed = has("seed") ? take_integer("seed", 0, UINT64_MAX) : 0;
        done();
        s = fope_schedule(base, dim, train_len, sigma, seed);
      }
    } else {
      bad_spec(spec, "unknown kind '" + kind + "'" +
                         numeric::did_you_mean(
                             kind, std::vector<std::string>{
                                       "conventional", "single", "partial", "prope", "periodic",
                                       "resonance", "resonance-yarn", "axial2d", "mrope", "hirope",
                                       "liere", "hope", "fope", "hf-config"}));
    }
    return s;
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    if (what.rfind("bad schedule", 0) == 0) throw;
    if (what.rfind("hf-config", 0) == 0) throw;  // already names the file
    bad_spec(spec, what);
  }
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
                  "in binary64 (attention/schedule.hpp fope_coefficient)"}};
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
