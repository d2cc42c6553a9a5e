// The RoPE schedule families (THEORY §3; the papers each cites): conventional, single, periodic,
// partial, p-RoPE, Resonance, axial 2-D, M-RoPE, HiRoPE, LieRE, HoPE and FoPE.
#include <mpfr.h>

#include <algorithm>

#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::attention {

namespace {

std::string text_of(const mpq_class& q) { return q.get_str(); }

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

}  // namespace

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

}  // namespace ropesim::attention
