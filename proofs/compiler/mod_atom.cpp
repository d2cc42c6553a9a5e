#include "proofs/compiler/mod_atom.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <numbers>
#include <stdexcept>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/json_number.hpp"
#include "numeric/real_rounding.hpp"
#include "proofs/common/exact_trig.hpp"
#include "proofs/common/f_large.hpp"
#include "proofs/common/residual_space.hpp"
#include "proofs/compiler/gadgets.hpp"

namespace ropesim::proofs {

using attention::Matrix;
using numeric::Format;
using numeric::Rounding;
using numeric::Value;

namespace {

mpq_class exact_of(const Value& v) { return attention::exact_rational(v); }

std::string decimal(const Value& v) { return numeric::exact_decimal(v); }

/// A double for messages and descriptions (8 significant digits).
std::string approx_text(double d) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.8g", d);
  return buffer;
}

/// The block θ = 2π/m with its exact trigonometry (Niven values exactly, enclosures otherwise).
CosineSum cos_step(std::uint64_t m) {
  const attention::Schedule s = attention::periodic_schedule({attention::RationalTurn{1, m}});
  CosineSum c;
  c.blocks.emplace_back(s.blocks[0]);
  c.weights.emplace_back(1);
  return c;
}

/// sign(cos(2π/m) − t), decided exactly (throws if undecidable, which Lindemann excludes).
int compare_cos(const CosineSum& c, const mpq_class& t) {
  bool undecided = false;
  const int s = c.compare(1, t, 1 << 14, &undecided);
  if (undecided) throw std::runtime_error("mod_atom: cos(2π/m) could not be compared exactly");
  return s;
}

/// round_F(b_m), b_m = (1 + cos 2π/m)/2 = 1 − δ_m/2 (THEORY §7 C4).
Value round_b(const CosineSum& c, std::uint64_t m, const Format& F, Rounding r,
              const numeric::Engine& engine) {
  if (const auto e = c.exact(1)) return engine.from_rational(F, (1 + *e) / 2, r);
  const double approx = std::pow(std::cos(std::numbers::pi / static_cast<double>(m)), 2);
  const auto v = numeric::round_by_comparison(
      F, r, approx, [&](const mpq_class& t) { return compare_cos(c, 2 * t - 1); }, engine);
  return *v;  // b_m ∈ (0, 1]: always finite
}

std::string atom_name(std::uint64_t m, std::uint64_t r) {
  return "MOD_" + std::to_string(m) + "^" + std::to_string(r);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The scale bound (THEORY §7 C4)
// ---------------------------------------------------------------------------------------------

ModScaleBound mod_scale_bound(std::uint64_t m, const Format& F, Rounding rounding,
                              const numeric::Engine& engine) {
  if (m < 2) {
    throw InvalidArgument("the C4 scale bound needs m >= 2 (MOD_1^0 is ⊤), got m = " +
                          std::to_string(m));
  }
  const Value fl = require_f_large(F, rounding);
  const mpq_class f = exact_of(fl);
  const CosineSum c = cos_step(m);
  ModScaleBound out;
  const double s = std::sin(std::numbers::pi / static_cast<double>(m));
  out.approximate = f.get_d() / (s * s);  // 2f/δ_m with δ_m = 2 sin²(π/m)
  if (const auto e = c.exact(1)) {
    out.exact = 2 * f / (1 - *e);
    out.exact->canonicalize();
    out.approximate = out.exact->get_d();
    out.rounded_up = engine.from_rational(F, *out.exact, Rounding::upward);
    out.finite = *out.exact <= exact_of(numeric::max_finite(F));
    return out;
  }
  // x = 2f/(1 − c) > t (t > 0) ⟺ c > 1 − 2f/t.
  const auto v = numeric::round_by_comparison(
      F, Rounding::upward, out.approximate,
      [&](const mpq_class& t) {
        if (sgn(t) <= 0) return 1;
        return compare_cos(c, 1 - 2 * f / t);
      },
      engine);
  if (!v) {
    out.finite = false;
    out.rounded_up =
        engine.from_rational(F, 2 * exact_of(numeric::max_finite(F)), Rounding::upward);
  } else {
    out.rounded_up = *v;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The realised margins (THEORY §7 C4, compiler criterion)
// ---------------------------------------------------------------------------------------------

namespace {

/// The margins with precomputed rotations and queries (the C-independent part).
struct MarginContext {
  const attention::AttentionHead* head = nullptr;
  std::uint64_t m = 2, r = 0;
  const attention::EvaluationPolicy* policy = nullptr;
  attention::HeadRotations rotations;
  std::vector<Value> x_bos, x_top;
  std::vector<std::vector<Value>> queries;  // residue s: q at position m + s

  MarginContext(const attention::AttentionHead& h, std::uint64_t m_, std::uint64_t r_,
                const ModWiringIndices& w, const attention::EvaluationPolicy& p)
      : head(&h), m(m_), r(r_), policy(&p) {
    rotations = attention::realise_head(h, 2 * m, p);
    const attention::Arithmetic f = numeric::arithmetic(p);
    x_bos.assign(w.d_model, f.zero());
    x_top.assign(w.d_model, f.zero());
    x_bos[w.bos] = f.one();
    x_top[w.top] = f.one();
    for (std::uint64_t s = 0; s < m; ++s) {
      queries.push_back(attention::head_query(h, rotations, m + s, x_top, p));
    }
  }

  /// Margins of the head as it is now (its key weights may have changed since construction).
  std::vector<ResidueMargin> margins(const mpq_class& f_large) const {
    const auto& p = *policy;
    const std::vector<Value> k_bos = attention::head_key(*head, rotations, 0, x_bos, p);
    std::vector<std::vector<Value>> others;  // distinct non-BOS keys (by bits)
    for (std::uint64_t j = 1; j <= m; ++j) {
      auto k = attention::head_key(*head, rotations, j, x_top, p);
      bool seen = false;
      for (const auto& o : others) {
        bool same = o.size() == k.size();
        for (std::size_t c = 0; same && c < k.size(); ++c) same = o[c].same_bits(k[c]);
        seen = seen || same;
      }
      if (!seen) others.push_back(std::move(k));
    }
    std::vector<ResidueMargin> out;
    for (std::uint64_t s = 0; s < m; ++s) {
      ResidueMargin rm;
      rm.residue = s;
      rm.bos_wins = s == r;
      rm.bos_score = attention::head_score(*head, queries[s], k_bos, p);
      bool finite = rm.bos_score.is_finite();
      for (std::size_t o = 0; o < others.size(); ++o) {
        const Value sc = attention::head_score(*head, queries[s], others[o], p);
        finite = finite && sc.is_finite();
        if (o == 0 || numeric::compare(sc, rm.other_min) < 0) rm.other_min = sc;
        if (o == 0 || numeric::compare(sc, rm.other_max) > 0) rm.other_max = sc;
      }
      if (finite) {
        rm.margin = rm.bos_wins ? exact_of(rm.bos_score) - exact_of(rm.other_max)
                                : exact_of(rm.other_min) - exact_of(rm.bos_score);
        rm.passes = *rm.margin >= f_large;
      }
      out.push_back(std::move(rm));
    }
    return out;
  }
};

/// Sets the head's C-dependent weights: the BOS key Ĉ and the non-BOS key weight w.
void set_scale(attention::AttentionHead& h, const ModWiringIndices& w, const Value& C,
               const Value& key_weight) {
  h.key.at(0, w.bos) = C;
  h.key.at(2, w.top) = key_weight;
}

std::optional<mpq_class> min_margin(const std::vector<ResidueMargin>& margins) {
  std::optional<mpq_class> best;
  for (const auto& rm : margins) {
    if (!rm.margin) return std::nullopt;
    if (!best || *rm.margin < *best) best = *rm.margin;
  }
  return best;
}

}  // namespace

std::vector<ResidueMargin> mod_atom_margins(const attention::AttentionHead& head, std::uint64_t m,
                                            std::uint64_t r, const ModWiring& wiring,
                                            const attention::EvaluationPolicy& policy,
                                            const mpq_class& f_large) {
  if (m < 2 || r >= m) {
    throw InvalidArgument("mod_atom_margins: need m >= 2 and 0 <= r < m, got m = " +
                          std::to_string(m) + ", r = " + std::to_string(r));
  }
  return MarginContext(head, m, r, resolve(wiring), policy).margins(f_large);
}

// ---------------------------------------------------------------------------------------------
// Construction (THEORY §7 C4; RoPE-X App C.3)
// ---------------------------------------------------------------------------------------------

ModAtomHead make_mod_atom_head(const ModAtomSpec& spec, const ModWiring& named) {
  const std::uint64_t m = spec.m, r = spec.r;
  if (m < 2) {
    throw InvalidArgument("the C4 head needs m >= 2, got m = " + std::to_string(m) +
                          " (MOD_1^0 is ⊤: mod_model builds it without a head)");
  }
  if (r >= m) {
    throw InvalidArgument("the residue r must satisfy 0 <= r < m = " + std::to_string(m) +
                          ", got r = " + std::to_string(r));
  }
  if (sgn(spec.slack) <= 0) throw InvalidArgument("the C = auto slack must be positive");
  const ModWiringIndices wiring = resolve(named);
  const Format& F = spec.policy.format;
  const Rounding rnd = spec.policy.rounding;
  const auto& engine = spec.policy.arithmetic_engine();
  const attention::Arithmetic f = numeric::arithmetic(spec.policy);

  ModAtomHead h;
  h.policy = spec.policy;
  h.m = m;
  h.r = r;
  h.f_large = require_f_large(F, rnd);
  h.f_large_exact = exact_of(h.f_large);
  h.bound = mod_scale_bound(m, F, rnd, engine);

  // Given C: rounded once into F with the policy's rounding; must be positive and finite.
  std::optional<Value> given;
  if (spec.C) {
    const Value c = engine.from_rational(F, *spec.C, rnd);
    if (!c.is_finite()) {
      throw InvalidArgument("C = " + spec.C->get_str() + " is not finite in " + F.name +
                            " (largest finite " + decimal(numeric::max_finite(F)) + ")");
    }
    if (sgn(exact_of(c)) <= 0) {
      throw InvalidArgument("C must be positive in " + F.name + ", got " + spec.C->get_str() +
                            " (rounds to " + decimal(c) + ")");
    }
    given = c;
  } else if (!h.bound.finite) {
    throw Refusal(RefusalReason::mod_margin,
                  atom_name(m, r) + " atom refused in " + F.name + " for m = " + std::to_string(m) +
                      ", r = " + std::to_string(r) +
                      ": the exact-arithmetic bound 2*f_large/delta_m ~ " +
                      approx_text(h.bound.approximate) + " exceeds the largest finite value " +
                      decimal(numeric::max_finite(F)) + " (THEORY §7 C4)");
  }

  // The head (THEORY §7 C4): rotary pair (head dimensions 0, 1) by r3 on periodic 1/m, then one
  // unrotated pair (2, 3).
  const attention::Schedule schedule =
      attention::periodic_schedule({attention::RationalTurn{1, m}});
  const BlockAngle angle(schedule.blocks[0]);
  const CosineSum step = cos_step(m);
  const Value zero = f.zero(), one = f.one();
  attention::AttentionHead& a = h.head;
  a.name = atom_name(m, r);
  a.head_dim = 4;
  a.value_dim = 1;
  a.query = Matrix::zeros(4, wiring.d_model);
  a.key = Matrix::zeros(4, wiring.d_model);
  a.value = Matrix::zeros(1, wiring.d_model);
  a.value.at(0, wiring.bos) = one;
  a.output = Matrix::zeros(wiring.d_model, 1);
  a.output.at(wiring.output, 0) = one;
  const auto n = static_cast<std::int64_t>(r);
  h.query_cos = round_scaled_trig(F, rnd, angle, n, false, mpq_class(1), engine);
  h.query_sin = round_scaled_trig(F, rnd, angle, n, true, mpq_class(-1), engine);
  a.query_bias = {h.query_cos, h.query_sin, one, zero};
  a.key_bias.assign(4, zero);
  attention::RotarySegment rotary;
  rotary.schedule = schedule;
  rotary.realisations = {attention::parse_realisation("r3", spec.policy)};
  rotary.layout = attention::PairLayout::adjacent;
  a.rotary.push_back(std::move(rotary));
  attention::RotarySegment unrotated;
  unrotated.schedule = attention::unrotated_schedule(1);
  a.rotary.push_back(std::move(unrotated));
  h.b = round_b(step, m, F, rnd, engine);

  const MarginContext context(a, m, r, wiring, spec.policy);
  for (std::uint64_t s = 0; s < m; ++s) h.table.push_back(context.rotations.blocks[0][s]);

  auto try_C = [&](const Value& C) {
    const Value w = f.mul(C, h.b);
    set_scale(a, wiring, C, w);
    ModCandidate cand;
    cand.C = C;
    auto margins = context.margins(h.f_large_exact);
    cand.min_margin = min_margin(margins);
    cand.passes = cand.min_margin && *cand.min_margin >= h.f_large_exact;
    h.candidates.push_back(cand);
    if (cand.passes || given) {
      h.C = C;
      h.C_exact = exact_of(C);
      h.key_weight = w;
      h.margins = std::move(margins);
      h.min_margin = cand.min_margin.value_or(mpq_class(0));
    }
    return cand.passes;
  };

  bool ok = false;
  if (given) {
    ok = try_C(*given);
  } else {
    h.auto_C = true;
    const Value C0 = h.bound.rounded_up;
    const mpq_class C0_exact = exact_of(C0);
    mpq_class cap = C0_exact;
    mpz_class two_power;
    mpz_ui_pow_ui(two_power.get_mpz_t(), 2, static_cast<unsigned long>(F.precision + 4));
    cap *= two_power;
    Value C = C0;
    while (C.is_finite() && exact_of(C) <= cap) {
      if ((ok = try_C(C))) break;
      Value next = engine.from_rational(F, exact_of(C) * (1 + spec.slack), Rounding::upward);
      if (next.is_finite() && numeric::compare(next, C) <= 0) next = numeric::next_up(F, C);
      if (!next.is_finite() || numeric::compare(next, numeric::max_finite(F)) > 0) break;
      C = next;
    }
  }
  if (!ok) {
    // The best candidate: the largest min margin (the first on ties).
    const ModCandidate* best = nullptr;
    for (const auto& c : h.candidates) {
      if (c.min_margin && (!best || !best->min_margin || *c.min_margin > *best->min_margin))
        best = &c;
    }
    std::string detail = "no finite margin";
    if (best) {
      set_scale(a, wiring, best->C, f.mul(best->C, h.b));
      const auto margins = context.margins(h.f_large_exact);
      std::uint64_t worst = 0;
      for (const auto& rm : margins) {
        if (rm.margin && *rm.margin == *best->min_margin) {
          worst = rm.residue;
          break;
        }
      }
      detail = "best margin found " + numeric::exact_decimal(*best->min_margin) + " (~" +
               approx_text(best->min_margin->get_d()) + ") at C = " + decimal(best->C) +
               ", query residue " + std::to_string(worst);
    }
    const std::string tried = given ? "with C = " + decimal(*given)
                                    : "with every C tried (" + std::to_string(h.candidates.size()) +
                                          " candidates from " + decimal(h.bound.rounded_up) +
                                          " up to " + decimal(h.candidates.back().C) + ")";
    throw Refusal(RefusalReason::mod_margin,
                  atom_name(m, r) + " atom refused in " + F.name + " for m = " + std::to_string(m) +
                      ", r = " + std::to_string(r) + ": " + tried +
                      ", some query residue's winner leads by less than f_large = " +
                      decimal(h.f_large) + "; " + detail +
                      " (realised table, biases and C; THEORY §7 C4; exact bound 2*f_large/"
                      "delta_m ~ " +
                      approx_text(h.bound.approximate) + ")");
  }
  set_scale(a, wiring, h.C, h.key_weight);
  return h;
}

bool mod_formula(std::uint64_t m, std::uint64_t r, std::uint64_t position) {
  if (m == 0) throw InvalidArgument("mod_formula: m must be at least 1");
  return position >= 1 && position % m == r % m;
}

namespace {

constexpr ropesim::Spelling<ModReadout> mod_readout_names[] = {{ModReadout::length, "length"},
                                                               {ModReadout::eos, "eos"}};
constexpr ropesim::Spelling<ModReadout> mod_readout_aliases[] = {{ModReadout::eos, "atom"}};
constexpr ropesim::EnumNames<ModReadout> mod_readout_table{
    .what = "readout",
    .names = mod_readout_names,
    .aliases = mod_readout_aliases,
    .accepted = "length (accept iff N = r mod m), eos (accept iff MOD_m^r holds at N + 1)",
    .suggest = false,
    .suggestions = {}};

}  // namespace

std::string_view to_string(ModReadout readout) { return name_of(mod_readout_table, readout); }

ModReadout parse_mod_readout(std::string_view text) { return parse_name(mod_readout_table, text); }

// ---------------------------------------------------------------------------------------------
// The whole model
// ---------------------------------------------------------------------------------------------

void require_mod_f_large(const ModModelSpec& spec, const std::string& rounding_name) {
  const auto& policy = spec.atom.policy;
  if (spec.atom.m > 1) (void)require_f_large(policy.format, policy.rounding, rounding_name);
}

ResidualSpace mod_model_space() {
  return ResidualSpace{"top", "bos", "mod_head", "count", "first", "out"};
}

ModModel mod_model(const ModModelSpec& spec) {
  const std::uint64_t m = spec.atom.m, r = spec.atom.r;
  if (m < 1) throw InvalidArgument("the modulus m must be at least 1, got 0");
  if (r >= m) {
    throw InvalidArgument("the residue r must satisfy 0 <= r < m = " + std::to_string(m) +
                          ", got r = " + std::to_string(r));
  }
  const std::uint64_t a = spec.readout == ModReadout::length ? (r + 1) % m : r;
  const attention::Arithmetic f = numeric::arithmetic(spec.atom.policy);
  const Value zero = f.zero(), one = f.one();
  // The named residual space (the compiler's gadgets read and write it;
  // proofs/compiler/gadgets.hpp).
  const ResidualSpace space = mod_model_space();
  const std::size_t d = space.size();
  // The first-position flag and the classifier use 1/2, 3/4, 4 (and ±1): they must be exact.
  for (const mpq_class& c : {mpq_class(1, 2), mpq_class(3, 4), mpq_class(4)}) {
    const Value v = f.from_rational(c);
    if (!v.is_finite() || exact_of(v) != c) {
      throw InvalidArgument("the MOD model needs " + c.get_str() + " exactly in " +
                            spec.atom.policy.format.name +
                            " (first-position flag; THEORY §7 C1 "
                            "Patch 2), which rounds it to " +
                            decimal(v));
    }
  }

  ModModel out;
  out.atom_residue = a;
  attention::Model& model = out.model;
  model.policy = spec.atom.policy;
  model.d_model = d;
  model.embedding.alphabet = spec.alphabet;
  std::vector<Value> top(d, zero), bos(d, zero);
  top[space.index("top")] = one;
  bos[space.index("bos")] = one;
  model.embedding.symbols.assign(spec.alphabet.size(), top);
  model.embedding.eos = top;
  model.embedding.bos = bos;
  const std::string layout =
      "residual coordinates [top, bos, mod_head, count = 1/#keys, first, out]; accept iff out > "
      "1/2";
  model.name = spec.readout == ModReadout::length
                   ? "N = " + std::to_string(r) + " (mod " + std::to_string(m) + ")"
                   : atom_name(m, r) + " at EOS";

  model.coordinates = space.names();
  if (m == 1) {
    attention::Layer layer;
    layer.ffn = assemble_feed_forward({HiddenUnit{{{"top", 1}}, {{"out", 1}}}}, space, f);
    model.layers.push_back(std::move(layer));
    model.description =
        "MOD_1^0 = top (THEORY §7 C4: m = 1 needs no attention); out = ReLU(top); " + layout;
  } else {
    ModAtomSpec atom = spec.atom;
    atom.r = a;
    ModWiring wiring;
    wiring.space = space;
    wiring.bos = "bos";
    wiring.top = "top";
    wiring.output = "mod_head";
    const bool bounded = spec.schedule && !periodic_schedule_p(*spec.schedule);
    std::size_t periodic_block = 0;  // set when a periodic schedule is named
    try {
      if (bounded) {
        BoundedModSpec b;
        b.m = m;
        b.r = a;
        b.schedule = *spec.schedule;
        b.C = atom.C;
        b.max_length = spec.max_length;
        b.policy = atom.policy;
        out.bounded = make_bounded_mod_head(b, wiring);
      } else {
        // a periodic --schedule: C4 on its block of turn 1/m, refused when it has none
        if (spec.schedule) periodic_block = periodic_mod_block(*spec.schedule, m, a);
        out.atom = make_mod_atom_head(atom, wiring);
      }
    } catch (const InvalidArgument& e) {
      if (spec.readout != ModReadout::length) throw;
      throw InvalidArgument("the length test N = r (mod m) with m = " + std::to_string(m) +
                            ", r = " + std::to_string(r) + " reads the atom " + atom_name(m, a) +
                            " at EOS: " + e.what());
    }
    const attention::AttentionHead& head = bounded ? out.bounded->head : out.atom->head;

    // Layer 1: the C4 head and the counting head; FFN: the first-position flag.
    attention::Layer layer1;
    layer1.heads.push_back(head);
    attention::AttentionHead count = counting_head(space, "bos", "count", f);
    count.name = "count 1/#keys";
    layer1.heads.push_back(std::move(count));
    // first = 4·(ReLU(u − ⊤/2) − ReLU(u − 3⊤/4)): the re-binarisation gadget with f1 = 1/2,
    // f2 = 3/4 (THEORY §7 C1 Patch 2); u = 1 at position 1, ≤ 1/2 later, 0 at BOS.
    layer1.ffn = assemble_feed_forward(
        rebinarise_units("count", "first", mpq_class(1, 2), mpq_class(3, 4)), space, f);
    model.layers.push_back(std::move(layer1));

    // Layer 2: out = ReLU(head − first) unless position 1 satisfies the atom.
    const bool one_satisfies = 1 % m == a;
    attention::Layer layer2;
    HiddenUnit gate{{{"mod_head", 1}}, {{"out", 1}}};
    if (!one_satisfies) gate.reads.emplace_back("first", -1);
    layer2.ffn = assemble_feed_forward({gate}, space, f);
    model.layers.push_back(std::move(layer2));

    const std::string tail = "; count head 1/#keys gives first = [position 1]; out = ReLU(head" +
                             std::string(one_satisfies ? ")" : " - first)") + "; " + layout;
    if (bounded) {
      const BoundedModHead& h = *out.bounded;
      model.description = "C4' MOD atom " + atom_name(m, a) + " under the non-periodic schedule " +
                          h.schedule + " (THEORY §7 C4'): head " + h.head.name + " on block " +
                          std::to_string(h.block) + " (r1, turn " + std::to_string(h.a) + "/" +
                          std::to_string(m) + "), C = " + decimal(h.C) +
                          (h.auto_C ? " (auto)" : "") + ", f_large = " + decimal(h.f_large) +
                          ", exact on words of length <= N_max^MOD = " + std::to_string(h.n_max) +
                          (h.at_limit ? " (the scan's limit)" : "") + tail;
    } else {
      const ModAtomHead& h = *out.atom;
      model.description =
          "C4 MOD atom " + atom_name(m, a) + " (THEORY §7, RoPE-X App C.3): head " + h.head.name +
          " with r3 table periodic 1/" + std::to_string(m) +
          (spec.schedule ? " (block " + std::to_string(periodic_block) +
                               " of the periodic schedule " + spec.schedule->spec + ")"
                         : std::string()) +
          ", C = " + decimal(h.C) + (h.auto_C ? " (auto)" : "") +
          ", f_large = " + decimal(h.f_large) + ", smallest lead " +
          approx_text(h.min_margin.get_d()) + tail;
    }
  }
  model.classifier.weights.assign(d, zero);
  model.classifier.weights[space.index("out")] = one;
  model.classifier.bias = f.from_rational(mpq_class(-1, 2));
  model.validate();
  return out;
}

nlohmann::json to_json(const ModModel& model, const ModModelSpec& spec) {
  nlohmann::json j;
  j["m"] = spec.atom.m;
  j["r"] = spec.atom.r;
  j["atom_residue"] = model.atom_residue;
  j["readout"] = std::string(to_string(spec.readout));
  j["format"] = spec.atom.policy.format.name;
  j["rounding"] = std::string(numeric::to_string(spec.atom.policy.rounding));
  if (model.bounded) {
    j["construction"] = "C4'";
    j["bounded"] = to_json(*model.bounded);
    j["certified_length"] = model.bounded->n_max;
    return j;
  }
  if (!model.atom) {
    j["note"] = "m = 1: MOD_1^0 is top; no attention head and no C";
    return j;
  }
  const ModAtomHead& h = *model.atom;
  j["f_large"] = decimal(h.f_large);
  j["C"] = decimal(h.C);
  j["C_auto"] = h.auto_C;
  nlohmann::json bound;
  bound["rounded_up"] = decimal(h.bound.rounded_up);
  bound["approximate"] = h.bound.approximate;
  bound["exact"] = h.bound.exact ? (numeric::exact_decimal_json(*h.bound.exact)) : nlohmann::json();
  bound["finite"] = h.bound.finite;
  j["bound"] = bound;
  j["query_bias"] = {decimal(h.query_cos), decimal(h.query_sin)};
  j["b"] = decimal(h.b);
  j["key_weight"] = decimal(h.key_weight);
  nlohmann::json table = nlohmann::json::array();
  for (const auto& t : h.table) table.push_back({decimal(t.cos), decimal(t.sin)});
  j["table"] = table;
  nlohmann::json margins = nlohmann::json::array();
  for (const auto& rm : h.margins) {
    margins.push_back(
        {{"residue", rm.residue},
         {"bos_wins", rm.bos_wins},
         {"bos_score", decimal(rm.bos_score)},
         {"other_score", decimal(rm.bos_wins ? rm.other_max : rm.other_min)},
         {"margin", rm.margin ? (numeric::exact_decimal_json(*rm.margin)) : nlohmann::json()},
         {"passes", rm.passes}});
  }
  j["margins"] = margins;
  j["min_margin"] = numeric::exact_decimal_json(h.min_margin);
  j["candidates_tried"] = h.candidates.size();
  return j;
}

}  // namespace ropesim::proofs
