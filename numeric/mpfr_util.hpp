#pragma once
/// Internal RAII helpers around MPFR (not part of the public API).
#include <mpfr.h>

namespace ropesim::numeric::detail {

/// An owned mpfr_t of a given precision.
class Mpfr {
 public:
  explicit Mpfr(mpfr_prec_t precision) { mpfr_init2(x_, precision < MPFR_PREC_MIN ? MPFR_PREC_MIN : precision); }
  ~Mpfr() { mpfr_clear(x_); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;
  mpfr_ptr get() { return x_; }
  mpfr_srcptr get() const { return x_; }
  operator mpfr_ptr() { return x_; }
  // For MPFR macros such as mpfr_sgn(x), which expand to x->_mpfr_sign.
  mpfr_ptr operator->() { return x_; }
  mpfr_srcptr operator->() const { return x_; }
  operator mpfr_srcptr() const { return x_; }

 private:
  mpfr_t x_;
};

/// Sets MPFR's (thread-local) exponent range for a scope and restores it afterwards.
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

}  // namespace ropesim::numeric::detail
