#include "attention/detail/cos_sin.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "numeric/mpfr_util.hpp"

namespace ropesim::attention::detail {

ThetaEnclosure::ThetaEnclosure(ExactReal theta) : theta_(std::move(theta)) {
  mpfr_init2(mid_, 64);
  mpfr_init2(err_, 64);
  ensure(192);
}

ThetaEnclosure::~ThetaEnclosure() {
  mpfr_clear(mid_);
  mpfr_clear(err_);
}

void ThetaEnclosure::ensure(mpfr_prec_t prec) {
  if (prec <= prec_) return;
  numeric::Mpfr lo(prec), hi(prec);
  theta_.enclose(lo, hi);
  mpfr_set_prec(mid_, prec + 1);
  mpfr_add(mid_, lo, hi, MPFR_RNDN);
  mpfr_div_2ui(mid_, mid_, 1, MPFR_RNDN);  // exact at prec + 1 bits when lo, hi share a binade
  // err ≥ max(hi - mid, mid - lo)
  numeric::Mpfr d(64);
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

CosSinRounder::CosSinRounder(std::vector<const FormatOps*> targets, bool allow_fast)
    : targets_(std::move(targets)) {
  fast_ = allow_fast;
  for (const auto* t : targets_) {
    max_precision_ = std::max(max_precision_, t->precision());
    fast_ = fast_ && t->fast_dd_decision();
  }
  fast_out_.resize(targets_.size());
  mpfr_inits2(64, a_, ea_, c_, s_, e_, lo_, hi_, t_, static_cast<mpfr_ptr>(nullptr));
}

CosSinRounder::~CosSinRounder() {
  mpfr_clears(a_, ea_, c_, s_, e_, lo_, hi_, t_, static_cast<mpfr_ptr>(nullptr));
}

template <class AngleAt>
void CosSinRounder::run(AngleAt&& angle_at, RealisedPair* out, bool want_cos, bool want_sin) {
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
        std::uint8_t fl = 0;
        auto r = targets_[k]->round_interval(lo_, hi_, fl);
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

bool CosSinRounder::fast(const DoubleDouble& x, double angle_error, RealisedPair* out,
                         bool want_cos, bool want_sin) {
  DoubleDouble c, s;
  if (!dd_cos_sin(x, c, s)) return false;
  const double e = angle_error + kDoubleDoubleTrigError;
  for (std::size_t k = 0; k < targets_.size(); ++k) {
    fast_out_[k].flags = 0;
    if (want_cos) {
      auto r = targets_[k]->round_dd(c, e, fast_out_[k].flags);
      if (!r) return false;
      fast_out_[k].cos = *r;
    }
    if (want_sin) {
      auto r = targets_[k]->round_dd(s, e, fast_out_[k].flags);
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

void CosSinRounder::of_value(const Value& a, RealisedPair* out) {
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

void CosSinRounder::of_product(ThetaEnclosure& theta, std::uint64_t i, RealisedPair* out,
                               bool want_cos, bool want_sin) {
  if (fast_ && i < (std::uint64_t{1} << 53)) {
    const DoubleDouble x = dd_mul_uint(theta.dd(), i);
    // |x - θi| ≤ i·dd_error + 7u²|x| (dd product), rounded up generously
    const double err = static_cast<double>(i) * theta.dd_error() * (1 + 0x1p-40) +
                       std::fabs(x.hi) * 0x1p-100;
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

}  // namespace ropesim::attention::detail
