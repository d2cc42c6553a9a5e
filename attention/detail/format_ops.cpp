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

}  // namespace

FormatOps::FormatOps(const Format& f, Rounding r, const numeric::Engine& engine)
    : f_(f), r_(r), engine_(engine), arithmetic_(f, r, engine), fast_(f, r) {
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

template <class Exact>
Value FormatOps::flag(const Value& result, const Exact& exact_flags, std::uint8_t& flags) const {
  if (result.is_nan()) {
    flags |= kNaN;
  } else if (result.is_inf() || at_max(result)) {
    // the only results that can carry IEEE overflow; decided by numeric::Arithmetic
    if (exact_flags().test(numeric::Flag::overflow)) flags |= kOverflow;
  }
  return result;
}

Value FormatOps::nan() const { return Value::from_double_exact(std::numeric_limits<double>::quiet_NaN()); }

Value FormatOps::from_uint(std::uint64_t i, std::uint8_t& flags) const {
  if (fast_.fast_rounding() && i < (std::uint64_t{1} << 53)) {
    // round-to-nearest-even with infinities: ±inf is exactly the overflow
    const double r = fast_.round(static_cast<double>(i));
    if (std::isinf(r)) flags |= kOverflow;
    return Value::from_double_exact(r);
  }
  const mpz_class n(std::to_string(i));
  const Value v = arithmetic_.from_integer(n);
  return flag(v, [&] { return arithmetic_.flags_of(v, mpq_class(n)); }, flags);
}

Value FormatOps::from_rational(const mpq_class& q, std::uint8_t& flags) const {
  const Value v = arithmetic_.from_rational(q);
  return flag(v, [&] { return arithmetic_.flags_of(v, q); }, flags);
}

Value FormatOps::round_real(const ExactReal& x, std::uint8_t& flags) const {
  if (auto q = x.as_rational()) return from_rational(*q, flags);
  const numeric::RealApproximation oracle = x.oracle();
  const Value v = arithmetic_.round_real(oracle);
  return flag(v, [&] { return arithmetic_.flags_of(v, oracle); }, flags);
}

Value FormatOps::convert(const Value& v, std::uint8_t& flags) const {
  if (fast_.fast_rounding() && !v.is_wide()) {
    const double r = fast_.round(v.narrow());
    if (std::isnan(r)) flags |= kNaN;
    if (std::isinf(r) && std::isfinite(v.narrow())) flags |= kOverflow;
    return Value::from_double_exact(r);
  }
  const Value res = arithmetic_.convert(v);
  return flag(res, [&] {
    numeric::Flags f;
    arithmetic_.convert(v, f);
    return f;
  }, flags);
}

#define ROPESIM_FLAGGED_OP(NAME)                                                   \
  Value FormatOps::NAME(const Value& a, const Value& b, std::uint8_t& flags) const { \
    const Value r = arithmetic_.NAME(a, b);                                        \
    return flag(r, [&] {                                                           \
      numeric::Flags f;                                                            \
      arithmetic_.NAME(a, b, f);                                                   \
      return f;                                                                    \
    }, flags);                                                                     \
  }

ROPESIM_FLAGGED_OP(mul)
ROPESIM_FLAGGED_OP(div)
ROPESIM_FLAGGED_OP(add)
ROPESIM_FLAGGED_OP(sub)

#undef ROPESIM_FLAGGED_OP

Value FormatOps::pow(const Value& a, const Value& b, std::uint8_t& flags) const {
  numeric::Flags f;
  const Value r = arithmetic_.pow(a, b, f);
  if (r.is_nan()) flags |= kNaN;
  if (f.test(numeric::Flag::overflow)) flags |= kOverflow;
  return r;
}

std::optional<bool> FormatOps::overflow_on(const Value& out, mpfr_srcptr lo, mpfr_srcptr hi) const {
  if (!mpfr_number_p(lo) || !mpfr_number_p(hi)) return out.is_inf();
  mpq_class ql, qh;
  mpfr_get_q(ql.get_mpq_t(), lo);
  mpfr_get_q(qh.get_mpq_t(), hi);
  const bool l = arithmetic_.flags_of(out, ql).test(numeric::Flag::overflow);
  const bool h = arithmetic_.flags_of(out, qh).test(numeric::Flag::overflow);
  if (l != h) return std::nullopt;
  return l;
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
  if (out->is_inf() || at_max(*out)) {
    // overflow after rounding is monotone in |x| on each side of zero: equal flags at the ends
    // decide it for every real in between
    const std::optional<bool> overflow = overflow_on(*out, lo, hi);
    if (!overflow) return std::nullopt;
    if (*overflow) flags |= kOverflow;
  }
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
