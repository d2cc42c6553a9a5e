#pragma once
/// Internal: correctly rounded cos and sin into several formats at once (Ziv's strategy,
/// NUMERIC §2), from one MPFR evaluation per attempt.
///
/// The angle is given as an approximation a with an absolute error bound E_a (0 for an exact
/// angle). mpfr_sin_cos at w bits returns c, s correctly rounded, so |c - cos x| ≤ E_a +
/// ulp_w(c) (cos and sin are 1-Lipschitz); the interval [c - E, c + E] is rounded to each
/// format and accepted when both ends round to the same element (rounding is monotone).
/// Otherwise w doubles. Exact zeros never occur except where handled exactly by the caller.
///
/// First step (when every target is a fast binary64-backed format): the same interval test
/// on a double-double evaluation (dd_trig.hpp, error ≤ 2^-72 + the angle's error); MPFR is
/// used only when that interval straddles a rounding boundary of some target. Tests check the
/// two paths bit for bit.
#include <mpfr.h>

#include <cstdint>
#include <vector>

#include "attention/detail/dd_trig.hpp"
#include "attention/detail/format_ops.hpp"
#include "numeric/exact_real.hpp"
#include "attention/realisation.hpp"

namespace ropesim::attention::detail {

/// θ enclosed at some precision: |θ - mid| ≤ err. Refined on demand.
class ThetaEnclosure {
 public:
  explicit ThetaEnclosure(ExactReal theta);
  ~ThetaEnclosure();
  ThetaEnclosure(const ThetaEnclosure&) = delete;
  ThetaEnclosure& operator=(const ThetaEnclosure&) = delete;
  /// Makes the enclosure at least `prec` bits wide.
  void ensure(mpfr_prec_t prec);
  mpfr_prec_t precision() const { return prec_; }
  mpfr_srcptr mid() const { return mid_; }
  mpfr_srcptr err() const { return err_; }
  /// θ ≈ dd.hi + dd.lo with |θ - dd| ≤ dd_error (a double, rounded up).
  const DoubleDouble& dd() const { return dd_; }
  double dd_error() const { return dd_error_; }
  const ExactReal& theta() const { return theta_; }

 private:
  ExactReal theta_;
  mpfr_prec_t prec_ = 0;
  mpfr_t mid_, err_;
  DoubleDouble dd_;
  double dd_error_ = 0;
};

class CosSinRounder {
 public:
  /// `allow_fast` = false forces MPFR for every evaluation (tests compare both).
  explicit CosSinRounder(std::vector<const FormatOps*> targets, bool allow_fast = true);
  ~CosSinRounder();
  CosSinRounder(const CosSinRounder&) = delete;
  CosSinRounder& operator=(const CosSinRounder&) = delete;

  const std::vector<const FormatOps*>& targets() const { return targets_; }

  /// cos and sin of the exact finite non-zero angle `a` (a value of any format) into every
  /// target: out[k] for targets()[k]; flags OR-ed into out[k].flags.
  void of_value(const Value& a, RealisedPair* out);
  /// cos and sin of θ·i, θ enclosed by `theta`, i ≥ 1. `want_cos`/`want_sin` select the
  /// components computed (the other is left untouched).
  void of_product(ThetaEnclosure& theta, std::uint64_t i, RealisedPair* out,
                  bool want_cos = true, bool want_sin = true);

 private:
  template <class AngleAt>
  void run(AngleAt&& angle_at, RealisedPair* out, bool want_cos, bool want_sin);
  /// The double-double first step; true when every wanted component of every target was
  /// decided (out written), false to fall back to MPFR (out untouched).
  bool fast(const DoubleDouble& x, double angle_error, RealisedPair* out, bool want_cos,
            bool want_sin);

  std::vector<const FormatOps*> targets_;
  int max_precision_ = 0;
  bool fast_ = false;
  std::vector<RealisedPair> fast_out_;
  mpfr_t a_, ea_, c_, s_, e_, lo_, hi_, t_;
};

}  // namespace ropesim::attention::detail
