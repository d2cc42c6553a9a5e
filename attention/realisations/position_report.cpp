// The per-position report of a realisation: every block's realised pair, its intermediate
// steps and its error in ulps against the exact cos/sin (attention/realisations/realisation.hpp
// query_position, PositionReport).
#include <cmath>
#include <limits>

#include "attention/detail/evaluator.hpp"
#include "attention/realisations/realisation.hpp"
#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/json_number.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::attention {

using numeric::Mpfr;

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
      p = detail::realise_block_at(s, r, b, tuple, &steps, &br.constant_flags);
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
    nlohmann::json o = {
        {"decimal", v.is_finite()
                        ? numeric::number_text(decimal(v), numeric::NumberText::rounded_decimal)
                        : nlohmann::json(decimal(v))},
        {"hex", v.to_hex()}};
    numeric::put_value(o, "value", v);
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

nlohmann::json to_json(const PositionReport& report, const numeric::FormatBinding& binding) {
  nlohmann::json j = to_json(report);
  j["format"] = binding.format.name;
  j["rounding"] = std::string(numeric::to_string(binding.rounding));
  return j;
}

}  // namespace ropesim::attention
