#include "numeric/real_rounding.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "numeric/format_properties.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::numeric {

namespace {

bool same_double_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// RealRounding: one format
// ---------------------------------------------------------------------------------------------

RealRounding::RealRounding(const Format& f, Rounding r, const Engine& engine)
    : arithmetic_(f, r, engine), binary64_(f, r) {
  const Value max = max_finite(f);
  max_finite_d_ = max.to_double();
  mpfr_init2(max_mp_, std::max<mpfr_prec_t>(f.precision + 8, 64));
  max.to_mpfr(max_mp_);
  mpfr_abs(max_mp_, max_mp_, MPFR_RNDN);
}

RealRounding::~RealRounding() { mpfr_clear(max_mp_); }

bool RealRounding::at_max(const Value& v) const {
  if (!v.is_finite()) return false;
  if (!v.is_wide()) return std::fabs(v.narrow()) == max_finite_d_;
  return mpfr_cmpabs(v.wide(), max_mp_) == 0;
}

Value RealRounding::rational(const mpq_class& q, Flags& flags) const {
  const Value v = arithmetic_.from_rational(q);
  // the only results that can carry IEEE overflow: decided by Arithmetic for them only
  if ((v.is_inf() || at_max(v)) && arithmetic_.flags_of(v, q).test(Flag::overflow)) {
    flags |= Flag::overflow;
  }
  return v;
}

Value RealRounding::real(const ExactReal& x, Flags& flags) const {
  if (auto q = x.as_rational()) return rational(*q, flags);
  const RealApproximation oracle = x.oracle();
  const Value v = arithmetic_.round_real(oracle);
  if ((v.is_inf() || at_max(v)) && arithmetic_.flags_of(v, oracle).test(Flag::overflow)) {
    flags |= Flag::overflow;
  }
  return v;
}

std::optional<bool> RealRounding::overflow_on(const Value& out, mpfr_srcptr lo,
                                              mpfr_srcptr hi) const {
  if (!mpfr_number_p(lo) || !mpfr_number_p(hi)) return out.is_inf();
  mpq_class ql, qh;
  mpfr_get_q(ql.get_mpq_t(), lo);
  mpfr_get_q(qh.get_mpq_t(), hi);
  const bool l = arithmetic_.flags_of(out, ql).test(Flag::overflow);
  const bool h = arithmetic_.flags_of(out, qh).test(Flag::overflow);
  if (l != h) return std::nullopt;
  return l;
}
std::optional<Value> RealRounding::interval(mpfr_srcptr lo, mpfr_srcptr hi, Flags& flags) const {
  std::optional<Value> out;
  if (binary64_.is_binary64() && mpfr_cmpabs_ui(lo, 0) != 0) {
    // mpfr_get_d with RNDN is binary64 rounding; keep away from the subnormal range
    const double l = mpfr_get_d(lo, MPFR_RNDN), h = mpfr_get_d(hi, MPFR_RNDN);
    if (std::fabs(l) >= 0x1p-1000 && std::fabs(h) >= 0x1p-1000) {
      if (!same_double_bits(l, h)) return std::nullopt;
      out = Value::from_double_exact(l);
    }
  }
  if (!out && binary64_.fast_rounding() && !binary64_.is_binary64() && precision() <= 51) {
    // lo' ≤ lo ≤ x ≤ hi ≤ hi' and rounding is monotone: equal roundings of lo', hi' decide.
    const double l = binary64_.round(mpfr_get_d(lo, MPFR_RNDD));
    const double h = binary64_.round(mpfr_get_d(hi, MPFR_RNDU));
    // Equal: decided. Different: the double grid (53 bits) may be too coarse to separate
    // [lo, hi] from a rounding boundary of F however narrow the interval gets (a value within
    // 2^-53 of a boundary, about one value in 2^(52-p)); fall through to the exact rounding of
    // lo and hi, which refinement can always decide. (Returning "undecided" here threw
    // "undecided at 65536 bits" for p = 48..51 and, rarely, for any p.)
    if (same_double_bits(l, h)) out = Value::from_double_exact(l);
  }
  if (!out) {
    const Value l = engine().from_mpfr(format(), lo, rounding());
    const Value h = engine().from_mpfr(format(), hi, rounding());
    if (!l.same_bits(h)) return std::nullopt;
    out = l;
  }
  if (out->is_inf() || at_max(*out)) {
    // overflow after rounding is monotone in |x| on each side of zero: equal flags at the ends
    // decide it for every real in between
    const std::optional<bool> overflow = overflow_on(*out, lo, hi);
    if (!overflow) return std::nullopt;
    if (*overflow) flags |= Flag::overflow;
  }
  return out;
}

std::optional<Value> RealRounding::double_double(const DoubleDouble& y, double e,
                                                 Flags& flags) const {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (!std::isfinite(y.hi) || std::fabs(y.hi) < 0x1p-900) return std::nullopt;
  double r = 0;
  if (binary64_.is_binary64()) {
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
    const double rl = binary64_.round(lo), rh = binary64_.round(hi);
    if (!same_double_bits(rl, rh)) return std::nullopt;
    r = rl;
  }
  if (std::isinf(r)) flags |= Flag::overflow;
  return Value::from_double_exact(r);
}

// ---------------------------------------------------------------------------------------------
// cos and sin of exact angles
// ---------------------------------------------------------------------------------------------

AngleEnclosure::AngleEnclosure(ExactReal theta) : theta_(std::move(theta)) {
  mpfr_init2(mid_, 64);
  mpfr_init2(err_, 64);
  ensure(192);
}

AngleEnclosure::~AngleEnclosure() {
  mpfr_clear(mid_);
  mpfr_clear(err_);
}

void AngleEnclosure::ensure(mpfr_prec_t prec) {
  if (prec <= prec_) return;
  Mpfr lo(prec), hi(prec);
  theta_.enclose(lo, hi);
  mpfr_set_prec(mid_, prec + 1);
  mpfr_add(mid_, lo, hi, MPFR_RNDN);
  mpfr_div_2ui(mid_, mid_, 1, MPFR_RNDN);  // exact at prec + 1 bits when lo, hi share a binade
  // err ≥ max(hi - mid, mid - lo)
  Mpfr d(64);
  mpfr_sub(err_, hi, mid_, MPFR_RNDU);
  mpfr_sub(d, mid_, lo, MPFR_RNDU);
  mpfr_max(err_, err_, d, MPFR_RNDU);
  // double-double copy: |θ - (hi + lo)| ≤ err + |mid - hi - lo| ≤ err + 2^-104·|θ|
  dd_.hi = mpfr_get_d(mid_, MPFR_RNDN);
  mpfr_set_prec(d, prec + 1);
  mpfr_sub_d(d, mid_, dd_.hi, MPFR_RNDN);  // exact
  dd_.lo = mpfr_get_d(d, MPFR_RNDN);
  dd_error_ = mpfr_get_d(err_, MPFR_RNDU) + std::fabs(dd_.hi) * 0x1p-104;
  prec_ = prec;
}

CosSinRounder::CosSinRounder(std::vector<const RealRounding*> targets, bool allow_fast)
    : targets_(std::move(targets)) {
  fast_ = allow_fast;
  for (const auto* t : targets_) {
    max_precision_ = std::max(max_precision_, t->precision());
    fast_ = fast_ && t->fast_double_double();
  }
  fast_out_.resize(targets_.size());
  mpfr_inits2(64, a_, ea_, c_, s_, e_, lo_, hi_, t_, static_cast<mpfr_ptr>(nullptr));
}

CosSinRounder::~CosSinRounder() {
  mpfr_clears(a_, ea_, c_, s_, e_, lo_, hi_, t_, static_cast<mpfr_ptr>(nullptr));
}

template <class AngleAt>
void CosSinRounder::run(AngleAt&& angle_at, RoundedCosSin* out, bool want_cos, bool want_sin) {
  ++fallbacks_;
  const std::size_t n = targets_.size();
  std::vector<char> done_cos(n, !want_cos), done_sin(n, !want_sin);
  for (mpfr_prec_t w = max_precision_ + 24; w <= (1 << 16); w *= 2) {
    angle_at(w);  // sets a_ and ea_ (absolute error bound of a_, 64 bits, rounded up)
    mpfr_set_prec(c_, w);
    mpfr_set_prec(s_, w);
    // The angle is exactly 0 at position 0 (and for unrotated blocks): then cos = 1 and sin = 0
    // exactly (ternary 0, no angle error) and the interval below is the point itself. Without
    // this, sin = 0 was "refined" up to 65536 bits and thrown on (p=48..51 with e=11, where the
    // double-double fast path is off), and cos = 1 was undecided under directed rounding.
    const bool exact = mpfr_sin_cos(s_, c_, a_, MPFR_RNDN) == 0 && mpfr_zero_p(ea_);
    bool all = true;
    for (int comp = 0; comp < 2; ++comp) {
      mpfr_ptr v = comp == 0 ? c_ : s_;
      auto& done = comp == 0 ? done_cos : done_sin;
      if (std::all_of(done.begin(), done.end(), [](char d) { return d != 0; })) continue;
      // E = E_a + ulp_w(v) (a full ulp bounds the correctly rounded result's error)
      if (mpfr_zero_p(v) && !exact) {  // an inexact zero cannot happen for these angles; refine
        all = false;
        continue;
      }
      if (exact) {
        mpfr_set_zero(e_, 1);
      } else {
        mpfr_set_ui_2exp(e_, 1, mpfr_get_exp(v) - w, MPFR_RNDU);
        mpfr_add(e_, e_, ea_, MPFR_RNDU);
      }
      mpfr_set_prec(lo_, w + 8);
      mpfr_set_prec(hi_, w + 8);
      mpfr_sub(lo_, v, e_, MPFR_RNDD);
      mpfr_add(hi_, v, e_, MPFR_RNDU);
      for (std::size_t k = 0; k < n; ++k) {
        if (done[k]) continue;
        Flags fl;
        auto r = targets_[k]->interval(lo_, hi_, fl);
        if (!r) {
          all = false;
          continue;
        }
        (comp == 0 ? out[k].cos : out[k].sin) = *r;
        out[k].flags |= fl;
        done[k] = 1;
      }
    }
    if (all) return;
  }
  throw std::runtime_error("CosSinRounder: rounding of cos/sin undecided at 65536 bits");
}

bool CosSinRounder::fast(const DoubleDouble& x, double angle_error, RoundedCosSin* out,
                         bool want_cos, bool want_sin) {
  DoubleDouble c, s;
  if (!dd_cos_sin(x, c, s)) return false;
  const double e = angle_error + kDoubleDoubleTrigError;
  for (std::size_t k = 0; k < targets_.size(); ++k) {
    fast_out_[k].flags = Flags();
    if (want_cos) {
      auto r = targets_[k]->double_double(c, e, fast_out_[k].flags);
      if (!r) return false;
      fast_out_[k].cos = *r;
    }
    if (want_sin) {
      auto r = targets_[k]->double_double(s, e, fast_out_[k].flags);
      if (!r) return false;
      fast_out_[k].sin = *r;
    }
  }
  for (std::size_t k = 0; k < targets_.size(); ++k) {
    if (want_cos) out[k].cos = fast_out_[k].cos;
    if (want_sin) out[k].sin = fast_out_[k].sin;
    out[k].flags |= fast_out_[k].flags;
  }
  return true;
}

void CosSinRounder::of_value(const Value& a, RoundedCosSin* out) {
  if (fast_ && !a.is_wide() && fast(DoubleDouble{a.narrow(), 0.0}, 0.0, out, true, true)) return;
  const mpfr_prec_t pa = a.is_wide() ? mpfr_get_prec(a.wide()) : 53;
  run(
      [&](mpfr_prec_t) {
        mpfr_set_prec(a_, pa);
        a.to_mpfr(a_);  // exact
        mpfr_set_zero(ea_, 1);
      },
      out, true, true);
}

void CosSinRounder::of_product(AngleEnclosure& theta, std::uint64_t i, RoundedCosSin* out,
                               bool want_cos, bool want_sin) {
  if (fast_ && i < (std::uint64_t{1} << 53)) {
    const DoubleDouble x = dd_mul_uint(theta.dd(), i);
    // |x - θi| ≤ i·dd_error + 7u²|x| (dd product), rounded up generously
    const double err =
        static_cast<double>(i) * theta.dd_error() * (1 + 0x1p-40) + std::fabs(x.hi) * 0x1p-100;
    if (fast(x, err, out, want_cos, want_sin)) return;
  }
  const int ibits = std::bit_width(i);
  run(
      [&](mpfr_prec_t w) {
        // a = mid·i at w_a bits: |a - θi| ≤ err·i + ulp(a)/2. Keep θ's enclosure ≥ w_a + 16.
        const mpfr_prec_t wa = w + ibits + 8;
        theta.ensure(wa + ibits + 16);
        mpfr_set_prec(a_, wa);
        mpfr_mul_ui(a_, theta.mid(), i, MPFR_RNDN);
        mpfr_mul_ui(ea_, theta.err(), i, MPFR_RNDU);
        if (!mpfr_zero_p(a_)) {
          mpfr_set_ui_2exp(t_, 1, mpfr_get_exp(a_) - wa, MPFR_RNDU);
          mpfr_add(ea_, ea_, t_, MPFR_RNDU);
        }
      },
      out, want_cos, want_sin);
}

// ---------------------------------------------------------------------------------------------
// K·x and reals known by comparisons
// ---------------------------------------------------------------------------------------------

Value round_scaled(const Arithmetic& F, const mpq_class& K, const std::optional<mpq_class>& exact,
                   const Enclosure& enclose_x, const std::string& what) {
  if (sgn(K) == 0) return F.from_rational(mpq_class(0));
  if (exact) return F.from_rational(K * *exact);
  // x irrational: K·x is too (K ≠ 0), so Ziv's loop on the scaled enclosure terminates
  const mpq_class k = K;
  const Enclosure enclose = enclose_x;
  return F.round_real(enclosure_oracle(
      [k, enclose](mpfr_ptr lo, mpfr_ptr hi) {
        const mpfr_prec_t W = mpfr_get_prec(lo) + 16;
        Mpfr tlo(W), thi(W);
        enclose(tlo, thi);
        interval_mul_q(lo, hi, tlo, thi, k);  // k ≠ 0; outward at lo's precision
      },
      what));
}

std::optional<Value> round_by_comparison(const Format& F, Rounding r, double approximation,
                                         const std::function<int(const mpq_class&)>& sign_minus,
                                         const Engine& engine) {
  const Value max = max_finite(F);
  if (sign_minus(exact_rational(max)) > 0) return std::nullopt;
  Value lo = engine.from_rational(F, mpq_class(approximation), Rounding::nearest_even);
  if (!lo.is_finite()) lo = max;
  while (sign_minus(exact_rational(lo)) < 0) lo = next_down(F, lo);
  for (;;) {
    const Value up = next_up(F, lo);
    if (!up.is_finite() || compare(up, max) > 0) break;
    if (sign_minus(exact_rational(up)) >= 0) {
      lo = up;
    } else {
      break;
    }
  }
  const int at_lo = sign_minus(exact_rational(lo));
  if (at_lo == 0) return lo;  // only for rational x; kept for safety
  const Value hi = next_up(F, lo);
  switch (r) {
    case Rounding::downward:
    case Rounding::toward_zero:
      return lo;  // x > 0
    case Rounding::upward:
      return hi;
    case Rounding::nearest_even:
    case Rounding::nearest_away: {
      const mpq_class mid = (exact_rational(lo) + exact_rational(hi)) / 2;
      const int s = sign_minus(mid);
      if (s < 0) return lo;
      if (s > 0) return hi;
      return engine.from_rational(F, mid, r);  // a tie: only for rational x
    }
  }
  return lo;
}

}  // namespace ropesim::numeric
