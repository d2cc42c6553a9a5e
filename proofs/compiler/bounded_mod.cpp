// C4': the MOD_m^r atom on a block of a non-periodic schedule and its certified range
// N_max^MOD (THEORY §7 C4'; see bounded_mod.hpp for the construction and the argument).
#include "proofs/compiler/bounded_mod.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

#include "attention/realisations/realisation.hpp"
#include "attention/transformer/head_blocks.hpp"
#include "core/error.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/json_number.hpp"
#include "proofs/common/exact_trig.hpp"
#include "proofs/compiler/component.hpp"
#include "proofs/compiler/refusal.hpp"

namespace ropesim::proofs {

using attention::Matrix;
using numeric::Format;
using numeric::Value;

bool periodic_schedule_p(const attention::Schedule& schedule) {
  return std::all_of(schedule.blocks.begin(), schedule.blocks.end(),
                     [](const attention::RotaryBlock& b) { return b.turn.has_value(); });
}

std::size_t periodic_mod_block(const attention::Schedule& schedule, std::uint64_t m,
                               std::uint64_t r) {
  const mpq_class want(1, m);
  std::vector<std::string> turns;
  for (std::size_t d = 0; d < schedule.blocks.size(); ++d) {
    const auto& turn = schedule.blocks[d].turn;
    if (!turn) continue;
    mpq_class t(turn->a, turn->m);
    t.canonicalize();
    if (t == want) return d;
    const std::string text = t.get_str();
    if (std::find(turns.begin(), turns.end(), text) == turns.end()) turns.push_back(text);
  }
  std::string listed;
  for (std::size_t k = 0; k < turns.size() && k < 8; ++k) listed += (k ? ", " : "") + turns[k];
  if (turns.size() > 8) listed += fmt::format(", ... ({} turns)", turns.size());
  throw Refusal(
      RefusalReason::mod_period,
      fmt::format("MOD_{}^{} atom refused under the periodic schedule '{}': C4 tests residues "
                  "mod {} on a rotary block of turn 1/{} (theta = 2*pi/{}), and the schedule's "
                  "turns are {} (THEORY §7 C4); add that block (e.g. periodic:m={}) or leave "
                  "--schedule unset (the atom then uses a periodic table of its own)",
                  m, r, schedule.spec, m, m, m, listed.empty() ? "none" : listed, m));
}

namespace {

mpq_class exact_of(const Value& v) { return attention::exact_rational(v); }

std::string decimal(const Value& v) { return numeric::exact_decimal(v); }

std::string atom_name(std::uint64_t m, std::uint64_t r) {
  return "MOD_" + std::to_string(m) + "^" + std::to_string(r);
}

/// The turn 2πa/m (gcd(a, m) = 1) nearest θ, and ε = θ − 2πa/m reduced into (−π, π], in binary64
/// (the choice of the block only; the range is measured exactly).
struct NearestTurn {
  std::uint64_t a = 1;
  double epsilon = 0;
};

NearestTurn nearest_turn(double theta, std::uint64_t m) {
  const double two_pi = 2 * std::numbers::pi;
  const double x = std::fmod(std::fmod(theta / two_pi, 1.0) + 1.0, 1.0) * static_cast<double>(m);
  const auto md = static_cast<std::int64_t>(m);
  const auto residue = [&](std::int64_t a) { return ((a % md) + md) % md; };
  const auto coprime = [&](std::int64_t a) {
    const std::int64_t ra = residue(a);
    return ra != 0 && std::gcd(ra, md) == 1;
  };
  // The nearest integers below and above x with gcd(a, m) = 1 (m ≥ 2: a = 1 always qualifies,
  // so both searches end within m steps).
  auto lo = static_cast<std::int64_t>(std::floor(x));
  while (!coprime(lo)) --lo;
  auto hi = static_cast<std::int64_t>(std::ceil(x));
  while (!coprime(hi)) ++hi;
  const std::int64_t a = (x - static_cast<double>(lo) <= static_cast<double>(hi) - x) ? lo : hi;
  NearestTurn out;
  out.a = static_cast<std::uint64_t>(residue(a));
  out.epsilon =
      std::remainder(theta - two_pi * static_cast<double>(out.a) / static_cast<double>(m), two_pi);
  return out;
}

/// Head coordinates: block d's pair at 2d, 2d + 1 (adjacent layout), the baseline pair after the
/// rotary coordinates (the schedule's first unrotated pair, or the appended one).
struct Layout {
  std::size_t head_dim = 0, block0 = 0, baseline = 0;
  bool appended = false;
};

Layout layout_of(const attention::Schedule& s, std::size_t block) {
  Layout l;
  l.block0 = 2 * block;
  l.baseline = 2 * s.blocks.size();
  l.appended = s.unrotated_pairs == 0;
  l.head_dim = s.dimension() + (l.appended ? 2 : 0);
  return l;
}

/// The C4' head on `schedule` (every block by r1) with block `block` carrying the residue test.
attention::AttentionHead build_head(const attention::Schedule& schedule, std::size_t block,
                                    const ModWiringIndices& w,
                                    const attention::EvaluationPolicy& policy,
                                    const Value& query_cos, const Value& query_sin, const Value& C,
                                    const Value& key_weight) {
  const attention::Arithmetic f = numeric::arithmetic(policy);
  const Layout l = layout_of(schedule, block);
  attention::AttentionHead h;
  h.head_dim = l.head_dim;
  h.value_dim = 1;
  h.query = Matrix::zeros(l.head_dim, w.d_model);
  h.key = Matrix::zeros(l.head_dim, w.d_model);
  h.key.at(l.block0, w.bos) = C;
  h.key.at(l.baseline, w.top) = key_weight;
  h.value = Matrix::zeros(1, w.d_model);
  h.value.at(0, w.bos) = f.one();
  h.output = Matrix::zeros(w.d_model, 1);
  h.output.at(w.output, 0) = f.one();
  h.query_bias.assign(l.head_dim, f.zero());
  h.query_bias[l.block0] = query_cos;
  h.query_bias[l.block0 + 1] = query_sin;
  h.query_bias[l.baseline] = f.one();
  h.key_bias.assign(l.head_dim, f.zero());
  attention::RotarySegment rotary;
  rotary.schedule = schedule;
  const attention::Realisation r1 = attention::parse_realisation("r1", policy);
  rotary.realisations.assign(schedule.blocks.size(), r1);
  rotary.layout = attention::PairLayout::adjacent;
  h.rotary.push_back(std::move(rotary));
  if (l.appended) {
    attention::RotarySegment unrotated;
    unrotated.schedule = attention::unrotated_schedule(1);
    h.rotary.push_back(std::move(unrotated));
  }
  return h;
}

/// The scan of one block for several C at once: queries 2..max_length + 1, streamed in chunks,
/// each C dropped at its first failing query. The scan head is the C4' head restricted to the
/// block and the baseline pair (head_dim 4): the other blocks' query and key coordinates are zero
/// in the full head, so they add only signed zeros to each sequential dot product and the
/// realised scores are the same (checked against the full head by make_bounded_mod_head).
struct BlockScan {
  struct Lane {
    Value C, w;
    attention::AttentionHead head;
    std::vector<Value> k_bos, k_other;
    std::uint64_t n_max = 0;
    bool alive = true;
    std::optional<std::uint64_t> fail_query;
    Value fail_bos, fail_other;
  };
  std::vector<Lane> lanes;
};

constexpr std::uint64_t kChunk = 4096;

void scan_block(BlockScan& scan, const attention::Schedule& schedule, std::size_t block,
                std::uint64_t m, std::uint64_t r, std::uint64_t max_length,
                const mpq_class& f_large, const attention::EvaluationPolicy& policy,
                const ModWiringIndices& w) {
  const attention::Schedule one = attention::detail::block_schedule(schedule, block);
  const attention::Realisation r1 = attention::parse_realisation("r1", policy);
  const attention::Arithmetic f = numeric::arithmetic(policy);
  std::vector<Value> x_bos(w.d_model, f.zero()), x_top(w.d_model, f.zero());
  x_bos[w.bos] = f.one();
  x_top[w.top] = f.one();
  {
    const attention::HeadRotations first =
        attention::realise_head(scan.lanes.at(0).head, 2, policy);
    for (auto& lane : scan.lanes) {
      lane.k_bos = attention::head_key(lane.head, first, 0, x_bos, policy);
      lane.k_other = attention::head_key(lane.head, first, 1, x_top, policy);
    }
  }
  const std::uint64_t last = max_length + 1;  // the last query
  std::size_t alive = scan.lanes.size();
  for (std::uint64_t begin = 2; begin <= last && alive > 0; begin += kChunk) {
    const std::uint64_t end = std::min(last + 1, begin + kChunk);
    // The chunk's rotations, presented to head_query as positions 0..end − begin − 1.
    attention::HeadRotations rotations;
    rotations.positions = end - begin;
    rotations.blocks.push_back(attention::realise_block(one, r1, 0, begin, end));
    for (std::uint64_t i = begin; i < end && alive > 0; ++i) {
      const bool bos_wins = i % m == r;
      // q depends on the lane only through nothing: the query bias is the same in every lane.
      const std::vector<Value> q =
          attention::head_query(scan.lanes.front().head, rotations, i - begin, x_top, policy);
      for (auto& lane : scan.lanes) {
        if (!lane.alive) continue;
        const Value bos = attention::head_score(lane.head, q, lane.k_bos, policy);
        const Value other = attention::head_score(lane.head, q, lane.k_other, policy);
        bool passes = bos.is_finite() && other.is_finite();
        if (passes) {
          const mpq_class lead =
              bos_wins ? exact_of(bos) - exact_of(other) : exact_of(other) - exact_of(bos);
          passes = lead >= f_large;
        }
        if (passes) {
          lane.n_max = i - 1;  // queries 2..i pass: words of length ≤ i − 1
          continue;
        }
        lane.alive = false;
        lane.fail_query = i;
        lane.fail_bos = bos;
        lane.fail_other = other;
        --alive;
      }
    }
  }
}

/// The candidate scales: the given C, or the powers of two from 2^floor(log2(f_large/(1 −
/// cos(π/m)))) up to 2^(p+4) times that, finite in F.
std::vector<Value> scale_candidates(const BoundedModSpec& spec, const Value& f_large) {
  const attention::Arithmetic f = numeric::arithmetic(spec.policy);
  const Format& F = spec.policy.format;
  if (spec.C) {
    const Value c = f.from_rational(*spec.C);
    if (!c.is_finite() || sgn(exact_of(c)) <= 0) {
      throw InvalidArgument("C = " + spec.C->get_str() + " is not a positive finite value of " +
                            F.name + " (largest finite " + decimal(numeric::max_finite(F)) +
                            "); accepted: a positive decimal or auto");
    }
    return {c};
  }
  const double bound =
      exact_of(f_large).get_d() / (1 - std::cos(std::numbers::pi / static_cast<double>(spec.m)));
  const int e0 = static_cast<int>(std::floor(std::log2(bound)));
  std::vector<Value> out;
  for (int e = e0; e <= e0 + static_cast<int>(F.precision) + 4; ++e) {
    mpq_class p = 1;
    if (e >= 0)
      mpz_mul_2exp(p.get_num_mpz_t(), p.get_num_mpz_t(), static_cast<mp_bitcnt_t>(e));
    else
      mpz_mul_2exp(p.get_den_mpz_t(), p.get_den_mpz_t(), static_cast<mp_bitcnt_t>(-e));
    const Value c = f.from_rational(p);
    if (!c.is_finite() || exact_of(c) != p) continue;
    out.push_back(c);
  }
  if (out.empty()) {
    throw Refusal(
        RefusalReason::mod_schedule,
        fmt::format("{} atom refused in {}: no power of two near f_large/(1 - cos(pi/{})) "
                    "~ {:.6g} is finite in {} (THEORY §7, MOD under a non-periodic "
                    "schedule)",
                    atom_name(spec.m, spec.r), F.name, spec.m, bound, F.name));
  }
  return out;
}

/// The exact-arithmetic drift bound (file comment), binary64.
double drift_bound(std::uint64_t m, double epsilon, double f_over_C) {
  const double half = std::numbers::pi / static_cast<double>(m);
  const double b = std::cos(half);
  if (b + f_over_C > 1) return -1;
  const double right = std::acos(b + f_over_C);
  const double wrong = 2 * half - std::acos(std::max(-1.0, b - f_over_C));
  const double drift = std::min(right, wrong);
  if (drift < 0) return -1;
  if (epsilon == 0) return std::numeric_limits<double>::infinity();
  return std::floor(drift / std::fabs(epsilon)) - 1;
}

}  // namespace

BoundedModHead make_bounded_mod_head(const BoundedModSpec& spec, const ModWiring& wiring) {
  const std::uint64_t m = spec.m, r = spec.r;
  if (m < 2) throw InvalidArgument("the C4' head needs m >= 2, got m = " + std::to_string(m));
  if (r >= m) {
    throw InvalidArgument("the residue r must satisfy 0 <= r < m = " + std::to_string(m) +
                          ", got r = " + std::to_string(r));
  }
  const attention::Schedule& s = spec.schedule;
  if (s.is_multi_axis()) {
    throw InvalidArgument("schedule '" + s.spec +
                          "' has several position axes; a MOD atom reads one position axis");
  }
  if (s.blocks.empty()) {
    throw InvalidArgument("schedule '" + s.spec +
                          "' has no rotary block; a MOD atom under it needs one (THEORY §7 C4')");
  }
  const ModWiringIndices w = resolve(wiring);
  const Format& F = spec.policy.format;
  const std::optional<Value> fl = f_large_or_refuse(spec.policy);
  const mpq_class f_large = exact_of(*fl);
  const std::uint64_t max_length = spec.max_length == 0 ? kBoundedModMaxLength : spec.max_length;
  const std::vector<Value> scales = scale_candidates(spec, *fl);
  const attention::Arithmetic f = numeric::arithmetic(spec.policy);
  const auto& engine = spec.policy.arithmetic_engine();
  const auto rounding = spec.policy.rounding;

  // The blocks, nearest turn first (the smaller index on ties); the three nearest are measured.
  struct Choice {
    std::size_t block;
    NearestTurn turn;
    double theta;
  };
  std::vector<Choice> choices;
  for (std::size_t d = 0; d < s.blocks.size(); ++d) {
    const double theta = s.blocks[d].theta.to_double();
    choices.push_back({d, nearest_turn(theta, m), theta});
  }
  std::stable_sort(choices.begin(), choices.end(), [](const Choice& x, const Choice& y) {
    return std::fabs(x.turn.epsilon) < std::fabs(y.turn.epsilon);
  });
  if (choices.size() > 3) choices.resize(3);

  // b̂ = round_F(cos(π/m)): the turn 1/(2m) at n = 1.
  const BlockAngle half_turn(
      attention::periodic_schedule({attention::RationalTurn{1, 2 * m}}).blocks[0]);
  const Value b = round_scaled_trig(F, rounding, half_turn, 1, false, mpq_class(1), engine);

  BoundedModHead out;
  out.policy = spec.policy;
  out.m = m;
  out.r = r;
  out.schedule = s.spec;
  out.f_large = *fl;
  out.b = b;
  out.auto_C = !spec.C;
  out.max_length = max_length;
  bool have_best = false;
  BlockScan::Lane best_lane;
  Choice best_choice{};
  Value best_qc, best_qs;
  for (const Choice& choice : choices) {
    // φ = 2πar/m: the turn (a·r mod m)/m at n = 1, exactly.
    const BlockAngle target(
        attention::periodic_schedule({attention::RationalTurn{choice.turn.a, m}}).blocks[0]);
    const auto n = static_cast<std::int64_t>(r);
    const Value qc = round_scaled_trig(F, rounding, target, n, false, mpq_class(1), engine);
    const Value qs = round_scaled_trig(F, rounding, target, n, true, mpq_class(-1), engine);
    BlockScan scan;
    const attention::Schedule one = attention::detail::block_schedule(s, choice.block);
    for (const Value& C : scales) {
      BlockScan::Lane lane;
      lane.C = C;
      lane.w = f.mul(C, b);
      lane.head = build_head(one, 0, w, spec.policy, qc, qs, C, lane.w);
      scan.lanes.push_back(std::move(lane));
    }
    scan_block(scan, s, choice.block, m, r, max_length, f_large, spec.policy, w);
    for (auto& lane : scan.lanes) {
      out.candidates.push_back(
          {choice.block, choice.turn.a, lane.C, lane.n_max, !lane.fail_query.has_value()});
      if (!have_best || lane.n_max > best_lane.n_max) {
        have_best = true;
        best_lane = lane;
        best_choice = choice;
        best_qc = qc;
        best_qs = qs;
      }
    }
  }
  if (best_lane.n_max < 2 * m) {
    const Choice& nearest = choices.front();
    throw Refusal(
        RefusalReason::mod_schedule,
        fmt::format(
            "{} atom refused under schedule '{}' in {}: no bounded MOD simulation, the "
            "best certified range N_max^MOD = {} is below 2m = {} (block {}, C = {}); the "
            "nearest block {} turns {:.6g} rad per position, {:.6g} rad from the turn "
            "2*pi*{}/{}, and the residue test allows a drift below pi/{} (THEORY §7, MOD "
            "under a non-periodic schedule); use a periodic schedule (periodic:m={}) for an "
            "exact MOD atom",
            atom_name(m, r), s.spec, F.name, best_lane.n_max, 2 * m, best_choice.block,
            decimal(best_lane.C), nearest.block, nearest.theta, std::fabs(nearest.turn.epsilon),
            nearest.turn.a, m, m, m));
  }
  out.block = best_choice.block;
  out.a = best_choice.turn.a;
  out.theta = best_choice.theta;
  out.epsilon = best_choice.turn.epsilon;
  out.C = best_lane.C;
  out.key_weight = best_lane.w;
  out.query_cos = best_qc;
  out.query_sin = best_qs;
  out.n_max = best_lane.n_max;
  out.at_limit = !best_lane.fail_query.has_value();
  out.fail_query = best_lane.fail_query;
  out.fail_bos_score = best_lane.fail_bos;
  out.fail_other_score = best_lane.fail_other;
  out.drift_bound = drift_bound(m, out.epsilon, mpq_class(f_large / exact_of(out.C)).get_d());
  out.head = build_head(s, out.block, w, spec.policy, best_qc, best_qs, out.C, out.key_weight);
  out.head.name = atom_name(m, r);
  out.baseline = layout_of(s, out.block).baseline;

  // The full head scores as the scan head did (its other blocks add signed zeros only): checked
  // at the first queries and, when near, the failing one.
  const std::uint64_t check_to =
      std::min<std::uint64_t>(out.fail_query.value_or(out.n_max + 1), 2 * m + 2);
  if (check_to >= 2) {
    const std::uint64_t positions =
        (out.fail_query && *out.fail_query < 4096 ? *out.fail_query : check_to) + 1;
    const attention::HeadRotations rot = attention::realise_head(out.head, positions, out.policy);
    std::vector<Value> x_bos(w.d_model, f.zero()), x_top(w.d_model, f.zero());
    x_bos[w.bos] = f.one();
    x_top[w.top] = f.one();
    const auto k_bos = attention::head_key(out.head, rot, 0, x_bos, out.policy);
    const auto k_other = attention::head_key(out.head, rot, 1, x_top, out.policy);
    for (std::uint64_t i = 2; i < positions; ++i) {
      const auto q = attention::head_query(out.head, rot, i, x_top, out.policy);
      const Value bos = attention::head_score(out.head, q, k_bos, out.policy);
      const Value other = attention::head_score(out.head, q, k_other, out.policy);
      const bool bos_wins = i % m == r;
      const bool passes =
          bos.is_finite() && other.is_finite() &&
          (bos_wins ? exact_of(bos) - exact_of(other) : exact_of(other) - exact_of(bos)) >= f_large;
      const bool expected = !out.fail_query || i < *out.fail_query;
      if (passes != expected) {
        throw std::logic_error(
            fmt::format("C4' head {}: the full head and the block scan disagree at query {}",
                        out.head.name, i));
      }
    }
  }
  return out;
}

nlohmann::json to_json(const BoundedModHead& h) {
  nlohmann::json j;
  j["m"] = h.m;
  j["r"] = h.r;
  j["schedule"] = h.schedule;
  j["realization"] = "r1";
  j["block"] = h.block;
  j["a"] = h.a;
  j["theta"] = h.theta;
  j["epsilon"] = h.epsilon;
  j["C"] = numeric::exact_decimal_json(h.C);
  j["C_auto"] = h.auto_C;
  j["b"] = numeric::exact_decimal_json(h.b);
  j["key_weight"] = numeric::exact_decimal_json(h.key_weight);
  j["query_bias"] = {numeric::exact_decimal_json(h.query_cos),
                     numeric::exact_decimal_json(h.query_sin)};
  j["f_large"] = numeric::exact_decimal_json(h.f_large);
  j["n_max"] = h.n_max;
  j["at_limit"] = h.at_limit;
  j["max_length"] = h.max_length;
  j["fail_query"] = h.fail_query ? nlohmann::json(*h.fail_query) : nlohmann::json();
  j["fail_bos_score"] =
      h.fail_query ? (numeric::exact_decimal_json(h.fail_bos_score)) : nlohmann::json();
  j["fail_other_score"] =
      h.fail_query ? (numeric::exact_decimal_json(h.fail_other_score)) : nlohmann::json();
  j["drift_bound"] =
      std::isfinite(h.drift_bound) ? nlohmann::json(h.drift_bound) : nlohmann::json();
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& c : h.candidates) {
    candidates.push_back({{"block", c.block},
                          {"a", c.a},
                          {"C", decimal(c.C)},
                          {"n_max", c.n_max},
                          {"at_limit", c.at_limit}});
  }
  j["candidates"] = candidates;
  return j;
}

}  // namespace ropesim::proofs
