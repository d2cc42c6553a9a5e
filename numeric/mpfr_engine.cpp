// The exact reference engine (NUMERIC §1–2).
//
// Every operation is done in two steps:
//  1. the exact result x is computed by MPFR into q ≥ p + 2 bits with round-to-odd (RNDZ,
//     then the last bit set when inexact), in MPFR's wide default exponent range, where no
//     format of ropesim overflows or underflows;
//  2. that value is rounded into the target format by `round_into`: the emin/emax recipe of
//     NUMERIC §1 (mpfr_set at precision p, then mpfr_check_range and mpfr_subnormalize with the
//     ternary value), saturation where the format has no infinity, and a fixed-point grid.
// Step 2 applied to a round-to-odd value at ≥ p + 2 bits gives the correctly rounded result
// for every rounding direction and every smaller precision, subnormal precisions included
// (Boldo & Melquiond, IEEE TC 57(4) 2008, Thm 1). Round-to-odd also keeps exact ties
// recognisable, which is how roundTiesToAway is done (MPFR has no general RNDNA).
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::numeric {

namespace {

using detail::ExponentRange;

mpfr_rnd_t directed_mpfr(Rounding mode) {
  switch (mode) {
    case Rounding::nearest_even:
      return MPFR_RNDN;
    case Rounding::nearest_away:
      return MPFR_RNDN;  // ties handled in round_into
    case Rounding::toward_zero:
      return MPFR_RNDZ;
    case Rounding::upward:
      return MPFR_RNDU;
    case Rounding::downward:
      return MPFR_RNDD;
  }
  return MPFR_RNDN;
}

/// Bits of the round-to-odd intermediate for format f (≥ p + 2; fixed point: the whole grid
/// below 2^(I+1) plus two bits).
mpfr_prec_t working_precision(const Format& f) {
  return f.is_fixed_point() ? f.integer_bits + f.fraction_bits + 3 : f.precision + 2;
}

/// The operand as an MPFR number: wide values directly, narrow ones in a 53-bit copy.
class Operand {
 public:
  explicit Operand(const Value& v) {
    if (v.is_wide()) {
      ptr_ = v.wide();
    } else {
      mpfr_init2(local_, 53);
      mpfr_set_d(local_, v.narrow(), MPFR_RNDN);  // exact
      ptr_ = local_;
      owns_ = true;
    }
  }
  ~Operand() {
    if (owns_) mpfr_clear(local_);
  }
  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;
  mpfr_srcptr get() const { return ptr_; }

 private:
  mpfr_t local_;
  mpfr_srcptr ptr_ = nullptr;
  bool owns_ = false;
};

/// Makes the RNDZ result `out` with ternary `inex` round-to-odd: when inexact, the last bit
/// is set (moving one ulp away from zero if it was 0; an underflowed zero becomes the
/// smallest MPFR number of the right sign, which no format can tell apart from x).
void make_odd(mpfr_ptr out, int inex) {
  if (inex == 0 || mpfr_nan_p(out) || mpfr_inf_p(out)) return;
  if (mpfr_zero_p(out) || mpfr_min_prec(out) < mpfr_get_prec(out)) {
    if (inex < 0) {
      mpfr_nextabove(out);
    } else {
      mpfr_nextbelow(out);
    }
  }
}

Value finish(const Format& f, mpfr_srcptr y) {
  if (f.fits_double()) return Value::from_double_exact(mpfr_get_d(y, MPFR_RNDN));
  return Value::from_mpfr_exact(y);
}

/// True when r is exactly halfway between two neighbours of F at r's magnitude (subnormal
/// spacing included), i.e. where roundTiesToAway and roundTiesToEven can differ.
bool is_midpoint(const Format& f, mpfr_srcptr r) {
  const long e = static_cast<long>(mpfr_get_exp(r)) - 1;  // IEEE exponent of |r|
  const long bits = static_cast<long>(mpfr_min_prec(r));
  if (e >= f.emin) return bits == f.precision + 1;
  if (!f.subnormals) return e == f.emin - 1 && bits == 1;  // halfway between 0 and 2^emin
  const long effective = f.precision - (f.emin - e);
  if (effective < 0) return false;
  return bits == effective + 1;
}

void set_max_finite(const Format& f, mpfr_ptr y, int sign) {
  max_finite(f).to_mpfr(y);
  if (sign < 0) mpfr_neg(y, y, MPFR_RNDN);
}

Value round_into_floating(const Format& f, mpfr_srcptr r, Rounding mode) {
  Mpfr y(f.precision);
  if (mpfr_nan_p(r)) {
    mpfr_set_nan(y);
    return finish(f, y);
  }
  if (mpfr_inf_p(r)) {
    if (f.has_infinity) {
      mpfr_set_inf(y, mpfr_sgn(r));
    } else {
      set_max_finite(f, y, mpfr_sgn(r));
    }
    return finish(f, y);
  }
  if (mpfr_zero_p(r)) {
    mpfr_set(y, r, MPFR_RNDN);  // keeps the sign of zero
    return finish(f, y);
  }
  mpfr_rnd_t rnd = directed_mpfr(mode);
  if (mode == Rounding::nearest_away && is_midpoint(f, r)) rnd = MPFR_RNDA;
  int inex = mpfr_set(y, r, rnd);  // precision p, unbounded exponent range
  {
    // NUMERIC §1: MPFR's significand is in [1/2, 1), so IEEE emax ↔ emax + 1 and the smallest
    // subnormal 2^(emin-p+1) ↔ MPFR exponent emin - p + 2.
    ExponentRange range(f.subnormals ? f.emin - f.precision + 2 : f.emin + 1, f.emax + 1);
    inex = mpfr_check_range(y, inex, rnd);
    if (f.subnormals) inex = mpfr_subnormalize(y, inex, rnd);
  }
  if (!f.has_infinity || f.reserved_top_codes > 0) {
    Mpfr max(f.precision);
    set_max_finite(f, max, 1);
    if (mpfr_inf_p(y) || mpfr_cmpabs(y, max) > 0) {
      if (f.has_infinity) {
        mpfr_set_inf(y, mpfr_sgn(y));  // only reached when the top codes are reserved
      } else {
        set_max_finite(f, y, mpfr_sgn(y));
      }
    }
  }
  return finish(f, y);
}

Value round_into_fixed(const Format& f, mpfr_srcptr r, Rounding mode) {
  const long grid_bits = f.integer_bits + f.fraction_bits;
  Mpfr y(grid_bits + 1);
  if (mpfr_nan_p(r)) {
    mpfr_set_nan(y);
    return finish(f, y);
  }
  if (mpfr_inf_p(r)) {
    set_max_finite(f, y, mpfr_sgn(r));
    return finish(f, y);
  }
  if (mpfr_zero_p(r)) {
    mpfr_set_zero(y, 1);  // fixed point has one zero
    return finish(f, y);
  }
  // Scaled value s = r · 2^F; anything at or beyond 2^(I+F) saturates.
  if (mpfr_get_exp(r) + f.fraction_bits > grid_bits + 1) {
    set_max_finite(f, y, mpfr_sgn(r));
    return finish(f, y);
  }
  Mpfr scaled(mpfr_get_prec(r));
  mpfr_mul_2si(scaled, r, f.fraction_bits, MPFR_RNDN);  // exact
  Mpfr integer(grid_bits + 2);
  switch (mode) {
    case Rounding::nearest_even:
      mpfr_rint(integer, scaled, MPFR_RNDN);
      break;
    case Rounding::nearest_away:
      mpfr_round(integer, scaled);
      break;
    case Rounding::toward_zero:
      mpfr_rint(integer, scaled, MPFR_RNDZ);
      break;
    case Rounding::upward:
      mpfr_rint(integer, scaled, MPFR_RNDU);
      break;
    case Rounding::downward:
      mpfr_rint(integer, scaled, MPFR_RNDD);
      break;
  }
  Mpfr limit(grid_bits + 2);
  mpfr_set_ui_2exp(limit, 1, grid_bits, MPFR_RNDN);
  if (mpfr_cmpabs(integer, limit) >= 0) {
    set_max_finite(f, y, mpfr_sgn(integer));
    return finish(f, y);
  }
  mpfr_mul_2si(y, integer, -f.fraction_bits, MPFR_RNDN);  // exact: |integer| < 2^(I+F)
  if (mpfr_zero_p(y)) mpfr_set_zero(y, 1);
  return finish(f, y);
}

/// Step 2: rounds r — exact, or round-to-odd with at least working_precision(f) bits — into f.
Value round_into(const Format& f, mpfr_srcptr r, Rounding mode) {
  return f.is_fixed_point() ? round_into_fixed(f, r, mode) : round_into_floating(f, r, mode);
}

/// Step 1 + 2 for an MPFR operation `op(out, rnd) -> ternary`. For sums (`exact_zero_sign`),
/// an exact zero result is recomputed in the target direction so that x + (−x) is −0 under
/// downward and +0 otherwise (IEEE 754 §6.3).
template <class Op>
Value compute(const Format& f, Rounding mode, Op&& op, bool exact_zero_sign = false) {
  Mpfr odd(working_precision(f));
  int inex = op(odd.get(), MPFR_RNDZ);
  if (exact_zero_sign && inex == 0 && mpfr_zero_p(odd) && mode == Rounding::downward) {
    op(odd.get(), MPFR_RNDD);
  }
  make_odd(odd, inex);
  return round_into(f, odd, mode);
}

std::string too_hard_message(mpfr_prec_t max_precision) {
  return "round_real: the rounding could not be decided below " + std::to_string(max_precision) +
         " bits (the value may be exactly a rounding boundary; give an exact oracle)";
}

class MpfrEngine final : public Engine {
 public:
  std::string_view name() const override { return "mpfr"; }

  Value add(const Format& f, const Value& a, const Value& b, Rounding r) const override {
    Operand x(a), y(b);
    return compute(
        f, r, [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_add(out, x.get(), y.get(), rnd); },
        true);
  }
  Value sub(const Format& f, const Value& a, const Value& b, Rounding r) const override {
    Operand x(a), y(b);
    return compute(
        f, r, [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_sub(out, x.get(), y.get(), rnd); },
        true);
  }
  Value mul(const Format& f, const Value& a, const Value& b, Rounding r) const override {
    Operand x(a), y(b);
    return compute(
        f, r, [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_mul(out, x.get(), y.get(), rnd); });
  }
  Value div(const Format& f, const Value& a, const Value& b, Rounding r) const override {
    Operand x(a), y(b);
    return compute(
        f, r, [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_div(out, x.get(), y.get(), rnd); });
  }
  Value fma(const Format& f, const Value& a, const Value& b, const Value& c,
            Rounding r) const override {
    Operand x(a), y(b), z(c);
    return compute(
        f, r,
        [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_fma(out, x.get(), y.get(), z.get(), rnd); },
        true);
  }
  Value sqrt(const Format& f, const Value& a, Rounding r) const override {
    Operand x(a);
    return compute(f, r,
                   [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_sqrt(out, x.get(), rnd); });
  }
  Value exp(const Format& f, const Value& a, Rounding r) const override {
    Operand x(a);
    return compute(f, r, [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_exp(out, x.get(), rnd); });
  }
  Value log(const Format& f, const Value& a, Rounding r) const override {
    Operand x(a);
    return compute(f, r, [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_log(out, x.get(), rnd); });
  }
  Value cos(const Format& f, const Value& a, Rounding r) const override {
    Operand x(a);
    return compute(f, r, [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_cos(out, x.get(), rnd); });
  }
  Value sin(const Format& f, const Value& a, Rounding r) const override {
    Operand x(a);
    return compute(f, r, [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_sin(out, x.get(), rnd); });
  }
  std::pair<Value, Value> cos_sin(const Format& f, const Value& a, Rounding r) const override {
    Operand x(a);
    Mpfr s(working_precision(f)), c(working_precision(f));
    // mpfr_sin_cos returns both ternaries: sin in the low two bits (0, 1 = rounded up,
    // 2 = rounded down), cos in the next two (MPFR manual, mpfr_sin_cos).
    const int both = mpfr_sin_cos(s, c, x.get(), MPFR_RNDZ);
    auto ternary = [](int code) { return code == 0 ? 0 : (code == 1 ? 1 : -1); };
    make_odd(s, ternary(both & 3));
    make_odd(c, ternary((both >> 2) & 3));
    return {round_into(f, c, r), round_into(f, s, r)};
  }
  Value convert(const Format& f, const Value& a, Rounding r) const override {
    Operand x(a);
    return round_into(f, x.get(), r);  // x is exact
  }
  Value from_integer(const Format& f, const mpz_class& n, Rounding r) const override {
    return compute(
        f, r, [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_set_z(out, n.get_mpz_t(), rnd); });
  }
  Value from_rational(const Format& f, const mpq_class& q, Rounding r) const override {
    return compute(
        f, r, [&](mpfr_ptr out, mpfr_rnd_t rnd) { return mpfr_set_q(out, q.get_mpq_t(), rnd); });
  }
  Value from_mpfr(const Format& f, mpfr_srcptr x, Rounding r) const override {
    return round_into(f, x, r);  // x is exact
  }

  Value round_real(const Format& f, const RealApproximation& x, Rounding r,
                   mpfr_prec_t max_precision) const override {
    for (mpfr_prec_t prec = working_precision(f) + 40; prec <= max_precision; prec *= 2) {
      Mpfr y(prec);
      const std::uint64_t error_ulps = x(y, prec);
      if (error_ulps == 0 || mpfr_nan_p(y) || mpfr_inf_p(y)) return round_into(f, y, r);
      if (mpfr_zero_p(y)) continue;  // cannot tell the sign yet
      const int error_bits = error_ulps <= 1 ? 0 : 64 - std::countl_zero(error_ulps - 1);
      const mpfr_prec_t correct_bits = prec - error_bits;
      // Decide the truncation of x to k bits, where k - 1 bits already resolve every rounding
      // boundary of f at x's magnitude (p for floating formats; the fixed grid otherwise).
      long k = f.precision + 1;
      if (f.is_fixed_point()) {
        k = std::max<long>(2, static_cast<long>(mpfr_get_exp(y)) + f.fraction_bits + 1);
      }
      if (correct_bits <= k + 1) continue;
      if (mpfr_can_round(y, correct_bits, MPFR_RNDN, MPFR_RNDZ, k) == 0) continue;
      // x lies strictly inside (z, z + ulp_k(z)) for z = RNDZ_k(y): its midpoint, a (k+1)-bit
      // odd number, rounds like x in every direction at every precision below k.
      Mpfr odd(k + 1);
      mpfr_set(odd, y, MPFR_RNDZ);
      mpfr_prec_round(odd, k, MPFR_RNDZ);
      mpfr_prec_round(odd, k + 1, MPFR_RNDZ);  // exact: widen back
      if (mpfr_sgn(odd) > 0 || (mpfr_zero_p(odd) && mpfr_sgn(y) > 0)) {
        mpfr_nextabove(odd);
      } else {
        mpfr_nextbelow(odd);
      }
      return round_into(f, odd, r);
    }
    throw std::runtime_error(too_hard_message(max_precision));
  }
};

}  // namespace

const Engine& mpfr_engine() {
  static const MpfrEngine engine;
  return engine;
}

namespace {

/// v ± ε with ε below a quarter of F's smallest spacing, exactly, then rounded outward.
Value step(const Format& f, const Value& v, int direction) {
  if (v.is_nan()) return v;
  if (v.is_inf()) {
    const bool positive = !v.sign_bit();
    if (positive == (direction > 0)) return v;  // next_up(+inf) = +inf
    // next_up(-inf) = -max, next_down(+inf) = +max.
    Mpfr m(f.is_fixed_point() ? f.precision + 1 : f.precision);
    set_max_finite(f, m, positive ? 1 : -1);
    return finish(f, m);
  }
  const long tiny_exponent = f.is_fixed_point() ? -f.fraction_bits - 2 : f.emin - f.precision - 1;
  Operand x(v);
  const long top = v.is_zero() ? tiny_exponent : static_cast<long>(mpfr_get_exp(x.get()));
  Mpfr sum(top - tiny_exponent + 4);
  mpfr_set_si_2exp(sum, direction, tiny_exponent, MPFR_RNDN);
  mpfr_add(sum, sum, x.get(), MPFR_RNDN);  // exact at this precision
  return mpfr_engine().from_mpfr(f, sum, direction > 0 ? Rounding::upward : Rounding::downward);
}

}  // namespace

Value next_up(const Format& f, const Value& v) { return step(f, v, +1); }
Value next_down(const Format& f, const Value& v) { return step(f, v, -1); }

long ulp_exponent(const Format& f, const Value& v) {
  if (!v.is_finite()) throw InvalidArgument("ulp of an infinity or NaN is undefined");
  if (f.is_fixed_point()) return -f.fraction_bits;
  long e = f.emin;
  if (!v.is_zero()) {
    Operand x(v);
    e = std::max<long>(f.emin, static_cast<long>(mpfr_get_exp(x.get())) - 1);
  }
  return e - f.precision + 1;
}

void for_each_finite_value(const Format& f, const std::function<void(const Value&)>& visit) {
  if (!f.fits_double()) {
    throw InvalidArgument("format " + f.name +
                          " does not fit in a double; enumeration needs p <= 53");
  }
  if (f.is_fixed_point()) {
    if (f.precision > 31) throw InvalidArgument("format " + f.name + " has more than 2^32 values");
    const long long limit = (1LL << f.precision) - 1;
    for (long long k = -limit; k <= limit; ++k) {
      visit(Value::from_double_exact(std::ldexp(static_cast<double>(k), -f.fraction_bits)));
    }
    return;
  }
  const double binades = static_cast<double>(f.emax) - f.emin + 1;
  if (binades * std::ldexp(1.0, f.precision - 1) > std::ldexp(1.0, 31)) {
    throw InvalidArgument("format " + f.name + " has more than 2^32 values");
  }
  // Generated, not stored (fp32 has 4.3·10^9 values): the positive values in increasing order
  // are the subnormals k·2^(emin-p+1), then each binade's significands m·2^(e-p+1).
  const long long half = 1LL << (f.precision - 1);
  const int quantum_min = f.emin - f.precision + 1;
  auto positives = [&](bool descending, double sign) {
    auto visit_binade = [&](int e) {
      const long long top = (e == f.emax) ? 2 * half - f.reserved_top_codes : 2 * half;
      const int quantum = e - f.precision + 1;
      if (descending) {
        for (long long m = top - 1; m >= half; --m)
          visit(Value::from_double_exact(sign * std::ldexp(static_cast<double>(m), quantum)));
      } else {
        for (long long m = half; m < top; ++m)
          visit(Value::from_double_exact(sign * std::ldexp(static_cast<double>(m), quantum)));
      }
    };
    auto visit_subnormals = [&]() {
      if (!f.subnormals) return;
      if (descending) {
        for (long long m = half - 1; m >= 1; --m)
          visit(Value::from_double_exact(sign * std::ldexp(static_cast<double>(m), quantum_min)));
      } else {
        for (long long m = 1; m < half; ++m)
          visit(Value::from_double_exact(sign * std::ldexp(static_cast<double>(m), quantum_min)));
      }
    };
    if (descending) {
      for (int e = f.emax; e >= f.emin; --e) visit_binade(e);
      visit_subnormals();
    } else {
      visit_subnormals();
      for (int e = f.emin; e <= f.emax; ++e) visit_binade(e);
    }
  };
  positives(true, -1.0);
  visit(Value::from_double_exact(0.0));
  positives(false, 1.0);
}

}  // namespace ropesim::numeric
