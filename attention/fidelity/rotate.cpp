#include "attention/fidelity/rotate.hpp"

#include <cmath>
#include <limits>
#include <random>

#include "attention/fidelity/compare.hpp"
#include "core/error.hpp"
#include "numeric/json_number.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::attention {

using numeric::Mpfr;

QueryKey random_query_key(const Format& f, std::size_t dimension, std::uint64_t seed) {
  if (dimension == 0) throw InvalidArgument("random_query_key: dimension 0; accepted: ≥ 2");
  std::mt19937_64 generator(seed);
  auto draw = [&]() {
    const auto k = static_cast<long>(generator() % 129) - 64;  // -64..64
    return numeric::mpfr_engine().from_rational(f, mpq_class(k, 64), Rounding::nearest_even);
  };
  QueryKey out;
  for (std::size_t j = 0; j < dimension; ++j) out.query.push_back(draw());
  for (std::size_t j = 0; j < dimension; ++j) out.key.push_back(draw());
  return out;
}

namespace {

constexpr mpfr_prec_t kScorePrecision = 384;

/// Coordinates (i0, i1) of rotary pair d of `nb` pairs under `layout` (apply_rotation's).
std::pair<std::size_t, std::size_t> pair_of(PairLayout layout, std::size_t d, std::size_t nb) {
  return layout == PairLayout::adjacent ? std::pair{2 * d, 2 * d + 1} : std::pair{d, d + nb};
}

}  // namespace

namespace {

/// exact_score at kScorePrecision bits into `sum`.
void exact_score_into(const Schedule& s, PairLayout layout, std::span<const Value> q,
                      std::span<const Value> k, std::uint64_t offset, mpfr_ptr sum) {
  const std::size_t dim = s.dimension();
  if (q.size() != dim || k.size() != dim) {
    throw InvalidArgument("exact_score: q has " + std::to_string(q.size()) + " and k " +
                          std::to_string(k.size()) + " coordinates; '" + s.spec + "' needs " +
                          std::to_string(dim));
  }
  const std::size_t nb = s.blocks.size();
  Mpfr term(kScorePrecision), dot(kScorePrecision), cross(kScorePrecision), t(kScorePrecision),
      angle(ExactBlockRotation::kPrecision), c(ExactBlockRotation::kPrecision),
      sn(ExactBlockRotation::kPrecision), q0(kScorePrecision), q1(kScorePrecision),
      k0(kScorePrecision), k1(kScorePrecision);
  mpfr_set_zero(sum, 1);
  for (std::size_t d = 0; d < nb; ++d) {
    const auto [i0, i1] = pair_of(layout, d, nb);
    q[i0].to_mpfr(q0);
    q[i1].to_mpfr(q1);
    k[i0].to_mpfr(k0);
    k[i1].to_mpfr(k1);
    ExactBlockRotation exact(s.blocks[d]);
    exact.at(offset, angle, c, sn);
    // cos(nθ)(q0k0 + q1k1) + sin(nθ)(q0k1 - q1k0): the pair's xᵀ Rot(-nθ) y
    mpfr_mul(dot, q0, k0, MPFR_RNDN);
    mpfr_mul(t, q1, k1, MPFR_RNDN);
    mpfr_add(dot, dot, t, MPFR_RNDN);
    mpfr_mul(cross, q0, k1, MPFR_RNDN);
    mpfr_mul(t, q1, k0, MPFR_RNDN);
    mpfr_sub(cross, cross, t, MPFR_RNDN);
    mpfr_mul(term, dot, c, MPFR_RNDN);
    mpfr_add(sum, sum, term, MPFR_RNDN);
    mpfr_mul(term, cross, sn, MPFR_RNDN);
    mpfr_add(sum, sum, term, MPFR_RNDN);
  }
  for (std::size_t u = 2 * nb; u < dim; ++u) {
    q[u].to_mpfr(q0);
    k[u].to_mpfr(k0);
    mpfr_mul(term, q0, k0, MPFR_RNDN);
    mpfr_add(sum, sum, term, MPFR_RNDN);
  }
}

}  // namespace

double exact_score(const Schedule& s, PairLayout layout, std::span<const Value> q,
                   std::span<const Value> k, std::uint64_t offset) {
  Mpfr sum(kScorePrecision);
  exact_score_into(s, layout, q, k, offset, sum);
  return mpfr_get_d(sum, MPFR_RNDN);
}

RotateResult rotate_scores(const Schedule& s, const Realisation& r, std::span<const Value> q,
                           std::span<const Value> k, std::uint64_t offset,
                           const std::vector<std::uint64_t>& positions,
                           numeric::Summation summation, const Format& accumulator) {
  check_applicable(s, r);
  const std::size_t dim = s.dimension();
  if (q.size() != dim || k.size() != dim) {
    throw InvalidArgument("rotate: q has " + std::to_string(q.size()) + " and k " +
                          std::to_string(k.size()) + " coordinates; '" + s.spec +
                          "' has dimension " + std::to_string(dim) +
                          "; accepted: " + std::to_string(dim) + " values each");
  }
  if (positions.empty() || positions.size() > kMaxRotatePositions) {
    throw InvalidArgument("rotate: " + std::to_string(positions.size()) +
                          " query positions; accepted: 1.." + std::to_string(kMaxRotatePositions));
  }
  constexpr std::uint64_t max_position = (std::uint64_t{1} << 63) - 1;
  for (std::uint64_t p : positions) {
    if (p < offset || p > max_position) {
      throw InvalidArgument("rotate: query position " + std::to_string(p) + " with offset " +
                            std::to_string(offset) + " has no key position p - n ≥ 0; accepted: " +
                            std::to_string(offset) + " ≤ p ≤ 2^63 - 1");
    }
  }
  const numeric::Engine& engine = r.arithmetic_engine();
  RotateResult out;
  out.schedule = s.spec;
  out.realisation = r.name();
  out.format = r.format;
  out.summation = summation;
  out.accumulator = accumulator;
  out.layout = r.layout;
  out.query.assign(q.begin(), q.end());
  out.key.assign(k.begin(), k.end());
  out.offset = offset;
  Mpfr exact(kScorePrecision), x(kScorePrecision), lo(kScorePrecision), hi(kScorePrecision);
  exact_score_into(s, r.layout, q, k, offset, exact);
  if (carries_attention_factor(s, r)) {
    // like with like: both rotated vectors carry s, so the exact score carries s²
    out.attention_factor = *s.attention_scaling;
    const mpq_class square = *s.attention_scaling * *s.attention_scaling;
    mpfr_mul_q(exact, exact, square.get_mpq_t(), MPFR_RNDN);
  }
  out.exact = mpfr_get_d(exact, MPFR_RNDN);
  numeric::EvaluationPolicy policy;
  static_cast<numeric::FormatBinding&>(policy) = r;  // the realisation's F, rounding, engine
  policy.summation = summation;
  policy.accumulator = accumulator;
  bool any = false;
  for (std::uint64_t p : positions) {
    ScoreAtPosition row;
    row.position = p;
    row.key_position = p - offset;
    const RealisedRotation rq = realise(s, r, p);
    const RealisedRotation rk = realise(s, r, p - offset);
    row.flags = rq.flags() | rk.flags();
    auto into_f = [&](std::vector<Value> v, const Format& from) {
      if (from == r.format) return v;
      for (auto& x : v) x = engine.convert(r.format, x, r.rounding);
      return v;
    };
    row.rotated_query = into_f(apply_rotation(rq, q, r.layout, engine), rq.output_format);
    row.rotated_key = into_f(apply_rotation(rk, k, r.layout, engine), rk.output_format);
    row.score = numeric::dot(row.rotated_query, row.rotated_key, policy);
    if (row.score.is_finite()) {
      row.score.to_mpfr(x);
      mpfr_sub(x, x, exact, MPFR_RNDN);
      mpfr_abs(x, x, MPFR_RNDN);
      row.absolute_error = mpfr_get_d(x, MPFR_RNDN);
      if (mpfr_zero_p(x)) {
        row.relative_error = 0;
      } else if (mpfr_zero_p(exact)) {
        row.relative_error = std::numeric_limits<double>::infinity();
      } else {
        mpfr_div(x, x, exact, MPFR_RNDN);
        row.relative_error = std::fabs(mpfr_get_d(x, MPFR_RNDN));
      }
      row.score.to_mpfr(x);
      if (!any || mpfr_less_p(x, lo)) mpfr_set(lo, x, MPFR_RNDN);
      if (!any || mpfr_greater_p(x, hi)) mpfr_set(hi, x, MPFR_RNDN);
      any = true;
    } else {
      row.absolute_error = row.relative_error = std::numeric_limits<double>::quiet_NaN();
    }
    out.scores.push_back(std::move(row));
  }
  if (any) {
    mpfr_sub(x, hi, lo, MPFR_RNDN);
    out.drift = mpfr_get_d(x, MPFR_RNDN);
  }
  return out;
}

nlohmann::json to_json(const RotateResult& r) {
  auto number = [](double d) -> nlohmann::json {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    return d;
  };
  // A value of F as a JSON number; beside it its exact value when binary64 cannot hold it
  // (formats wider than fp64). Non-finite values as "nan", "inf", "-inf".
  auto put_value = [&](nlohmann::json& out, const std::string& key, const Value& x) {
    if (!x.is_finite()) {
      out[key] = number(x.to_double());
      return;
    }
    numeric::put_exact(out, key, numeric::exact_rational(x));
  };
  auto put_values = [&](nlohmann::json& out, const std::string& key, const std::vector<Value>& v) {
    nlohmann::json numbers = nlohmann::json::array(), exact = nlohmann::json::array();
    bool all_binary64 = true;
    for (const auto& x : v) {
      nlohmann::json one;
      put_value(one, "v", x);
      numbers.push_back(one["v"]);
      exact.push_back(one.contains("v_exact") ? one["v_exact"] : one["v"]);
      all_binary64 = all_binary64 && !one.contains("v_exact");
    }
    out[key] = numbers;
    if (!all_binary64) out[key + "_exact"] = exact;
  };
  nlohmann::json j;
  j["schedule"] = r.schedule;
  j["realization"] = r.realisation;
  j["format"] = r.format.name;
  j["summation"] = std::string(numeric::to_string(r.summation));
  j["accumulator"] = r.summation == numeric::Summation::wide_accumulator
                         ? nlohmann::json(r.accumulator.name)
                         : nlohmann::json(nullptr);
  j["layout"] = std::string(to_string(r.layout));
  j["offset"] = r.offset;
  if (r.attention_factor)
    numeric::put_exact(j, "attention_factor", *r.attention_factor);
  else
    j["attention_factor"] = nullptr;
  put_values(j, "query", r.query);
  put_values(j, "key", r.key);
  j["exact"] = number(r.exact);
  j["drift"] = number(r.drift);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& s : r.scores) {
    nlohmann::json row;
    row["position"] = s.position;
    row["key_position"] = s.key_position;
    row["score"] = {{"decimal", s.score.to_decimal(17)}, {"hex", s.score.to_hex()}};
    put_value(row["score"], "value", s.score);
    row["absolute_error"] = number(s.absolute_error);
    row["relative_error"] = number(s.relative_error);
    const numeric::Flags flags = numeric::Flags::from_bits(s.flags);
    row["overflow"] = flags.test(numeric::Flag::overflow);
    row["nan"] = flags.test(numeric::Flag::invalid);
    rows.push_back(row);
  }
  j["scores"] = rows;
  return j;
}

}  // namespace ropesim::attention
