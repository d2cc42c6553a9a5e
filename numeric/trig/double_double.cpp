#include "numeric/trig/double_double.hpp"

#include <mpfr.h>

#include <array>
#include <cmath>

#include "numeric/mpfr_util.hpp"

namespace ropesim::numeric {

namespace {

using DD = DoubleDouble;

inline DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}
inline DD fast_two_sum(double a, double b) {  // |a| ≥ |b| or a = 0
  const double s = a + b;
  const double e = b - (s - a);
  return {s, e};
}
inline DD two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}
/// AccurateDWPlusDW (JMP 2017 Alg. 6): relative error ≤ 3u² + 13u³.
inline DD add(DD a, DD b) {
  DD s = two_sum(a.hi, b.hi);
  const DD t = two_sum(a.lo, b.lo);
  s.lo += t.hi;
  s = fast_two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return fast_two_sum(s.hi, s.lo);
}
inline DD neg(DD a) { return {-a.hi, -a.lo}; }
/// DWTimesDW2-like (JMP 2017 Alg. 11/12): relative error ≤ 7u².
inline DD mul(DD a, DD b) {
  DD p = two_prod(a.hi, b.hi);
  const double t = a.hi * b.lo;
  const double t2 = std::fma(a.lo, b.hi, t);
  p.lo += t2;
  return fast_two_sum(p.hi, p.lo);
}

struct Constants {
  double c1, c2, c3;  // π/2 = c1 + c2 + c3 + O(2^-158)
  double two_over_pi;
  std::array<DD, 34> inv_factorial;  // 1/n! as double-double
  Constants() {
    Mpfr x(400), t(400);
    mpfr_const_pi(x, MPFR_RNDN);
    mpfr_div_2ui(x, x, 1, MPFR_RNDN);
    double* parts[3] = {&c1, &c2, &c3};
    for (double* p : parts) {
      *p = mpfr_get_d(x, MPFR_RNDN);
      mpfr_sub_d(x, x, *p, MPFR_RNDN);
    }
    mpfr_const_pi(x, MPFR_RNDN);
    mpfr_ui_div(x, 2, x, MPFR_RNDN);
    two_over_pi = mpfr_get_d(x, MPFR_RNDN);
    for (unsigned n = 0; n < inv_factorial.size(); ++n) {
      mpfr_fac_ui(t, n, MPFR_RNDN);
      mpfr_ui_div(x, 1, t, MPFR_RNDN);
      const double hi = mpfr_get_d(x, MPFR_RNDN);
      mpfr_sub_d(x, x, hi, MPFR_RNDN);
      inv_factorial[n] = {hi, mpfr_get_d(x, MPFR_RNDN)};
    }
  }
};

const Constants& constants() {
  static const Constants c;
  return c;
}

}  // namespace

DoubleDouble dd_mul_uint(DoubleDouble theta, std::uint64_t i) {
  return mul(theta, DD{static_cast<double>(i), 0.0});
}

bool dd_cos_sin(DoubleDouble x, DoubleDouble& c, DoubleDouble& s) {
  if (!std::isfinite(x.hi) || !std::isfinite(x.lo) ||
      std::fabs(x.hi) >= kDoubleDoubleTrigMaxArgument) {
    return false;
  }
  const Constants& k = constants();
  const double q = std::nearbyint(x.hi * k.two_over_pi);  // |q| < 2^28: exact integer
  DD r = add(x, neg(two_prod(q, k.c1)));
  r = add(r, neg(two_prod(q, k.c2)));
  r = add(r, DD{-(q * k.c3), 0.0});
  const DD z = mul(r, r);
  // cos r = Σ (-1)^n z^n/(2n)!, sin r = r·Σ (-1)^n z^n/(2n+1)!, n = 0..15
  DD cs = neg(k.inv_factorial[30]);  // n = 15: (-1)^15/30!
  DD sn = neg(k.inv_factorial[31]);  //         (-1)^15/31!
  for (int n = 14; n >= 0; --n) {
    const DD cc = (n % 2 == 0) ? k.inv_factorial[2 * n] : neg(k.inv_factorial[2 * n]);
    const DD sc = (n % 2 == 0) ? k.inv_factorial[2 * n + 1] : neg(k.inv_factorial[2 * n + 1]);
    cs = add(mul(cs, z), cc);
    sn = add(mul(sn, z), sc);
  }
  sn = mul(sn, r);
  // quadrant
  const long quadrant = static_cast<long>(q) & 3;
  switch (quadrant) {
    case 0:
      c = cs;
      s = sn;
      break;
    case 1:
      c = neg(sn);
      s = cs;
      break;
    case 2:
      c = neg(cs);
      s = neg(sn);
      break;
    default:
      c = sn;
      s = neg(cs);
      break;
  }
  return true;
}

}  // namespace ropesim::numeric
