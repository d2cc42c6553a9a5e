#include "attention/detail/format_ops.hpp"

#include <bit>
#include <cmath>
#include <limits>

#include "numeric/format_properties.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::attention::detail {

namespace {

using numeric::Mpfr;

bool same_double_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

mpfr_prec_t value_precision(const Value& v) {
  return v.is_wide() ? mpfr_get_prec(v.wide()) : 53;
}

}  // namespace

FormatOps::FormatOps(const Format& f, Rounding r, const numeric::Engine& engine)
    : f_(f), r_(r), engine_(engine), fast_(f, r) {
  max_finite_ = numeric::max_finite(f);
  max_finite_d_ = max_finite_.to_double();
  mpfr_init2(max_mp_, std::max<mpfr_prec_t>(f.precision + 8, 64));
  max_finite_.to_mpfr(max_mp_);
  mpfr_abs(max_mp_, max_mp_, MPFR_RNDN);
  std::uint8_t fl = 0;
  one_ = from_uint(1, fl);
  one_flags_ = fl;
  zero_ = Value();
}

FormatOps::~FormatOps() { mpfr_clear(max_mp_); }

bool FormatOps::at_max(const Value& v) const {
  if (!v.is_finite()) return false;
  if (!v.is_wide()) return std::fabs(v.narrow()) == max_finite_d_;
  return mpfr_cmpabs(v.wide(), max_mp_) == 0;
}

bool FormatOps::beyond_max(mpfr_srcptr x) const {
  return mpfr_number_p(x) && mpfr_cmpabs(x, max_mp_) > 0;
}

Value FormatOps::finish(const Value& result, bool inputs_finite, mpfr_srcptr exact_away,
                        std::uint8_t& flags) const {
  if (result.is_nan()) {
    flags |= kNaN;
  } else if (result.is_inf()) {
    if (inputs_finite) flags |= kOverflow;
  } else if (exact_away != nullptr && beyond_max(exact_away)) {
    flags |= kOverflow;  // clamped (saturating format or directed rounding)
  }
  return result;
}

Value FormatOps::nan() const { return Value::from_double_exact(std::numeric_limits<double>::quiet_NaN()); }

Value FormatOps::from_uint(std::uint64_t i, std::uint8_t& flags) const {
  if (fast_.fast_rounding() && i < (std::uint64_t{1} << 53)) {
    const double r = fast_.round(static_cast<double>(i));
    if (std::isinf(r)) flags |= kOverflow;
    return Value::from_double_exact(r);
  }
  const Value v = engine_.from_integer(f_, mpz_class(std::to_string(i)), r_);
  if (at_max(v)) {
    Mpfr x(70);
    mpfr_set_uj(x, i, MPFR_RNDA);
    return finish(v, true, x, flags);
  }
  return finish(v, true, nullptr, flags);
}

Value FormatOps::from_rational(const mpq_class& q, std::uint8_t& flags) const {
  const Value v = engine_.from_rational(f_, q, r_);
  Mpfr x(std::max<mpfr_prec_t>(f_.precision + 8, 64));
  mpfr_set_q(x, q.get_mpq_t(), MPFR_RNDA);
  return finish(v, true, x, flags);
}

Value FormatOps::round_real(const ExactReal& x, std::uint8_t& flags) const {
  if (auto q = x.as_rational()) return from_rational(*q, flags);
  const Value v = engine_.round_real(f_, x.oracle(), r_);
  Mpfr lo(f_.precision + 64), hi(f_.precision + 64);
  x.enclose(lo, hi);
  // overflow iff |x| > max; decided on the enclosure (x is never exactly ±max here)
  mpfr_ptr far = mpfr_sgn(lo) >= 0 ? hi.get() : lo.get();
  return finish(v, true, far, flags);
}

Value FormatOps::convert(const Value& v, std::uint8_t& flags) const {
  if (fast_.fast_rounding() && !v.is_wide()) {
    const double r = fast_.round(v.narrow());
    if (std::isnan(r)) flags |= kNaN;
    if (std::isinf(r) && std::isfinite(v.narrow())) flags |= kOverflow;
    return Value::from_double_exact(r);
  }
  const Value res = engine_.convert(f_, v, r_);
  Mpfr x(std::max<mpfr_prec_t>(value_precision(v), 64));
  v.to_mpfr(x);
  return finish(res, v.is_finite(), x, flags);
}

namespace {
enum class Op { mul, div, add, sub };
}

#define ROPESIM_FAST_OP(OPER)                                                          \
  if (fast_.fast_arithmetic() && !a.is_wide() && !b.is_wide()) {                      \
    const double r = fast_.round(a.narrow() OPER b.narrow());                         \
    if (std::isnan(r)) flags |= kNaN;                                                 \
    if (std::isinf(r) && std::isfinite(a.narrow()) && std::isfinite(b.narrow()))      \
      flags |= kOverflow;                                                             \
    return Value::from_double_exact(r);                                               \
  }

Value FormatOps::mul(const Value& a, const Value& b, std::uint8_t& flags) const {
  ROPESIM_FAST_OP(*)
  const Value res = engine_.mul(f_, a, b, r_);
  if (!res.is_finite()) return finish(res, a.is_finite() && b.is_finite(), nullptr, flags);
  if (!at_max(res)) return res;
  Mpfr x(value_precision(a) + value_precision(b)), y(value_precision(a)), z(value_precision(b));
  a.to_mpfr(y);
  b.to_mpfr(z);
  mpfr_mul(x, y, z, MPFR_RNDA);  // exact
  return finish(res, true, x, flags);
}

Value FormatOps::div(const Value& a, const Value& b, std::uint8_t& flags) const {
  ROPESIM_FAST_OP(/)
  const Value res = engine_.div(f_, a, b, r_);
  if (!res.is_finite()) return finish(res, a.is_finite() && b.is_finite() && !b.is_zero(), nullptr, flags);
  if (!at_max(res)) return res;
  Mpfr x(f_.precision + 64), y(value_precision(a)), z(value_precision(b));
  a.to_mpfr(y);
  b.to_mpfr(z);
  mpfr_div(x, y, z, MPFR_RNDA);
  return finish(res, true, x, flags);
}

Value FormatOps::add(const Value& a, const Value& b, std::uint8_t& flags) const {
  ROPESIM_FAST_OP(+)
  const Value res = engine_.add(f_, a, b, r_);
  if (!res.is_finite()) return finish(res, a.is_finite() && b.is_finite(), nullptr, flags);
  if (!at_max(res)) return res;
  Mpfr x(f_.precision + 64), y(value_precision(a)), z(value_precision(b));
  a.to_mpfr(y);
  b.to_mpfr(z);
  mpfr_add(x, y, z, MPFR_RNDA);
  return finish(res, true, x, flags);
}

Value FormatOps::sub(const Value& a, const Value& b, std::uint8_t& flags) const {
  ROPESIM_FAST_OP(-)
  const Value res = engine_.sub(f_, a, b, r_);
  if (!res.is_finite()) return finish(res, a.is_finite() && b.is_finite(), nullptr, flags);
  if (!at_max(res)) return res;
  Mpfr x(f_.precision + 64), y(value_precision(a)), z(value_precision(b));
  a.to_mpfr(y);
  b.to_mpfr(z);
  mpfr_sub(x, y, z, MPFR_RNDA);
  return finish(res, true, x, flags);
}

#undef ROPESIM_FAST_OP

Value FormatOps::pow(const Value& a, const Value& b, std::uint8_t& flags) const {
  const mpfr_prec_t pa = value_precision(a), pb = value_precision(b);
  auto oracle = [a, b, pa, pb](mpfr_ptr y, mpfr_prec_t) -> std::uint64_t {
    Mpfr x(pa), e(pb);
    a.to_mpfr(x);
    b.to_mpfr(e);
    const int t = mpfr_pow(y, x, e, MPFR_RNDN);  // correctly rounded: error ≤ 1/2 ulp
    return t == 0 ? 0 : 1;
  };
  if (!a.is_finite() || !b.is_finite() || a.is_zero() || a.sign_bit()) {
    // not used by the pipelines (β > 0 finite); keep IEEE pow semantics via MPFR at 2p bits
    Mpfr y(2 * f_.precision + 8);
    oracle(y, 0);
    const Value res = engine_.from_mpfr(f_, y, r_);
    return finish(res, false, nullptr, flags);
  }
  const Value res = engine_.round_real(f_, oracle, r_);
  Mpfr y(f_.precision + 64);
  oracle(y, 0);
  return finish(res, true, y, flags);
}

std::optional<Value> FormatOps::round_interval(mpfr_srcptr lo, mpfr_srcptr hi,
                                               std::uint8_t& flags) const {
  std::optional<Value> out;
  if (fast_.is_binary64() && mpfr_cmpabs_ui(lo, 0) != 0) {
    // mpfr_get_d with RNDN is binary64 rounding; keep away from the subnormal range
    const double l = mpfr_get_d(lo, MPFR_RNDN), h = mpfr_get_d(hi, MPFR_RNDN);
    if (std::fabs(l) >= 0x1p-1000 && std::fabs(h) >= 0x1p-1000) {
      if (!same_double_bits(l, h)) return std::nullopt;
      out = Value::from_double_exact(l);
    }
  }
  if (!out && fast_.fast_rounding() && !fast_.is_binary64() && f_.precision <= 51) {
    // lo' ≤ lo ≤ x ≤ hi ≤ hi' and rounding is monotone: equal roundings of lo', hi' decide.
    const double l = fast_.round(mpfr_get_d(lo, MPFR_RNDD));
    const double h = fast_.round(mpfr_get_d(hi, MPFR_RNDU));
    // Equal: decided. Different: the double grid (53 bits) may be too coarse to separate
    // [lo, hi] from a rounding boundary of F however narrow the interval gets (a value within
    // 2^-53 of a boundary, about one value in 2^(52-p)); fall through to the exact rounding of
    // lo and hi, which refinement can always decide. (Returning "undecided" here threw
    // "undecided at 65536 bits" for p = 48..51 and, rarely, for any p.)
    if (same_double_bits(l, h)) out = Value::from_double_exact(l);
  }
  if (!out) {
    const Value l = engine_.from_mpfr(f_, lo, r_);
    const Value h = engine_.from_mpfr(f_, hi, r_);
    if (!l.same_bits(h)) return std::nullopt;
    out = l;
  }
  if (out->is_inf()) flags |= kOverflow;
  if (out->is_finite() && (beyond_max(lo) || beyond_max(hi))) flags |= kOverflow;
  return out;
}

std::optional<Value> FormatOps::round_dd(const DoubleDouble& y, double e,
                                         std::uint8_t& flags) const {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (!std::isfinite(y.hi) || std::fabs(y.hi) < 0x1p-900) return std::nullopt;
  double r = 0;
  if (fast_.is_binary64()) {
    // every real in [y - e, y + e] rounds to y.hi iff the interval stays strictly inside the
    // half-gaps around y.hi (|y.lo| ≤ ulp/2); the slack 2^-20·e absorbs the roundings of
    // y.lo ± e (≤ 2^-53 relative to values ≤ the half-gap).
    const double up = std::nextafter(y.hi, inf) - y.hi;
    const double down = y.hi - std::nextafter(y.hi, -inf);
    const double em = e + e * 0x1p-20 + 0x1p-1070;
    if (!(y.lo + em < 0.5 * up) || !(y.lo - em > -0.5 * down)) return std::nullopt;
    r = y.hi;
  } else {
    // s = RN(y.hi + RN(y.lo ∓ e)) is within 2^-52·|s| of the exact end; widen by 2^-50·|s|
    // and one more step outward, then rounding is monotone (as in round_interval).
    const double sl = y.hi + (y.lo - e), sh = y.hi + (y.lo + e);
    const double lo = std::nextafter(sl - std::fabs(sl) * 0x1p-50, -inf);
    const double hi = std::nextafter(sh + std::fabs(sh) * 0x1p-50, inf);
    const double rl = fast_.round(lo), rh = fast_.round(hi);
    if (!same_double_bits(rl, rh)) return std::nullopt;
    r = rl;
  }
  if (std::isinf(r)) flags |= kOverflow;
  return Value::from_double_exact(r);
}

}  // namespace ropesim::attention::detail
