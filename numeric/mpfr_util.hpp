#pragma once
/// RAII and interval helpers around MPFR, shared by numeric/, attention/ and proofs/.
#include <gmpxx.h>
#include <mpfr.h>

namespace ropesim::numeric {

/// An owned mpfr_t (RAII): `mpfr_init2` on construction, `mpfr_clear` on destruction.
///
/// The precision is in bits (MPFR's mpfr_prec_t, significand incl. the leading bit); values
/// below MPFR_PREC_MIN are raised to it. The number starts as NaN (MPFR's convention) until a
/// function sets it. An Mpfr converts implicitly to mpfr_ptr / mpfr_srcptr, so it is passed to
/// MPFR functions as it is (`mpfr_add(s, a, b, MPFR_RNDN)`), and has operator-> so that MPFR's
/// function-like macros that dereference their argument (`mpfr_sgn(x)`, `mpfr_get_prec(x)`,
/// `mpfr_get_exp(x)`, which expand to `x->_mpfr_…`) accept it too. Neither copyable nor
/// movable (an mpfr_t holds a pointer to its own limbs). Throws nothing; MPFR aborts if it
/// cannot allocate.
class Mpfr {
 public:
  explicit Mpfr(mpfr_prec_t precision) {
    mpfr_init2(x_, precision < MPFR_PREC_MIN ? MPFR_PREC_MIN : precision);
  }
  ~Mpfr() { mpfr_clear(x_); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;

  mpfr_ptr get() { return x_; }
  mpfr_srcptr get() const { return x_; }
  operator mpfr_ptr() { return x_; }
  operator mpfr_srcptr() const { return x_; }
  /// For MPFR macros such as mpfr_sgn(x), which expand to x->_mpfr_sign.
  mpfr_ptr operator->() { return x_; }
  mpfr_srcptr operator->() const { return x_; }

 private:
  mpfr_t x_;
};

/// Interval times a rational, rounded outward: sets [lo, hi] ⊇ [l, h] · q (l ≤ h), each end
/// rounded once at the precision of lo and hi (RNDD for lo, RNDU for hi); for q < 0 the ends
/// swap. lo/hi may alias l/h. Used by the exact-real enclosures (numeric::ExactReal, the
/// block-angle cosines of proofs/common/exact_trig). Throws nothing.
inline void interval_mul_q(mpfr_ptr lo, mpfr_ptr hi, mpfr_srcptr l, mpfr_srcptr h,
                           const mpq_class& q) {
  if (sgn(q) >= 0) {
    mpfr_mul_q(lo, l, q.get_mpq_t(), MPFR_RNDD);
    mpfr_mul_q(hi, h, q.get_mpq_t(), MPFR_RNDU);
  } else {
    // lo/hi may alias l/h: compute both ends into temporaries of the same precision first
    Mpfr tl(mpfr_get_prec(lo)), th(mpfr_get_prec(hi));
    mpfr_mul_q(tl, h, q.get_mpq_t(), MPFR_RNDD);
    mpfr_mul_q(th, l, q.get_mpq_t(), MPFR_RNDU);
    mpfr_set(lo, tl, MPFR_RNDD);
    mpfr_set(hi, th, MPFR_RNDU);
  }
}

namespace detail {

/// Sets MPFR's (thread-local) exponent range for a scope and restores it afterwards.
/// Internal to the numeric engines (NUMERIC §1's emin/emax recipe).
class ExponentRange {
 public:
  ExponentRange(mpfr_exp_t emin, mpfr_exp_t emax)
      : saved_emin_(mpfr_get_emin()), saved_emax_(mpfr_get_emax()) {
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
  }
  ~ExponentRange() {
    mpfr_set_emin(saved_emin_);
    mpfr_set_emax(saved_emax_);
  }
  ExponentRange(const ExponentRange&) = delete;
  ExponentRange& operator=(const ExponentRange&) = delete;

 private:
  mpfr_exp_t saved_emin_, saved_emax_;
};

}  // namespace detail

}  // namespace ropesim::numeric
