// The binary64 first step of the realisation fast path (numeric/trig/fast_trig.hpp;
// NUMERIC §2). The error argument of every step is stated beside it (CORE-MATH habit).
//
// Notation: u = 2^-53, RN = binary64 round-to-nearest-even (ropesim never changes the mode;
// -ffp-contract=off keeps the compiler from fusing operations, std::fma is the one explicit
// fused operation). Error-free transformations: TwoSum (Knuth, TAOCP 2 §4.2.2 Thm B), FastTwoSum
// (Dekker, |a| ≥ |b| or a = 0), TwoProd via fma (exact when the product's error term is
// representable: no underflow — the operands below keep products ≥ 2^-900 or exactly 0), the
// remainder of a correctly rounded quotient (Boldo–Daumas; Muller et al., Handbook of FP
// Arithmetic 2nd ed. §4.7.2). Polynomial evaluation bound: Higham, Accuracy and Stability of
// Numerical Algorithms 2nd ed. §5.1 (Horner: |p̂(z) − p(z)| ≤ γ_2n·Σ|a_k||z|^k, γ_n = nu/(1−nu)).
//
// Path of an angle: (1) its turns f (angle / 2π mod 1) as fh + fl with an error bound ef —
// turns_of_ratio (r/m of a rational block: exact quotient + exact remainder), turns_of_product
// (θ·i: τ = θ/2π in double-double), turns_of_radians (an exact double angle: 1/2π in three
// doubles); (2) cos_sin_turns: quadrant, y = 2π·g in double-double, Taylor polynomials in
// binary64 at yh, first-order correction for yl; (3) round_decided: the interval test.
#include "numeric/trig/fast_trig.hpp"

#include <mpfr.h>

#include <bit>
#include <cmath>
#include <limits>

#include "numeric/exact_real.hpp"
#include "numeric/mpfr_util.hpp"
#include "numeric/trig/eft.hpp"

namespace ropesim::numeric::trig {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using Sum = SumOf<double>;

/// floor(x) for |x| < 2^62, exactly (the integer conversion truncates toward zero).
inline double floor_small(double x) {
  const double t = static_cast<double>(static_cast<std::int64_t>(x));
  return t > x ? t - 1.0 : t;
}
/// An integer nearest to x (ties either way) for |x| < 2^62.
inline double nearest_small(double x) {
  return static_cast<double>(static_cast<std::int64_t>(x < 0 ? x - 0.5 : x + 0.5));
}

}  // namespace

TrigConstants::TrigConstants() {
  using numeric::Mpfr;
  Mpfr x(400), t(400);
  mpfr_const_pi(x, MPFR_RNDN);
  mpfr_mul_2ui(x, x, 1, MPFR_RNDN);
  two_pi_hi = mpfr_get_d(x, MPFR_RNDN);
  mpfr_sub_d(x, x, two_pi_hi, MPFR_RNDN);
  two_pi_lo = mpfr_get_d(x, MPFR_RNDN);
  mpfr_const_pi(x, MPFR_RNDN);
  mpfr_mul_2ui(x, x, 1, MPFR_RNDN);
  mpfr_ui_div(x, 1, x, MPFR_RNDN);
  double* parts[3] = {&inv_hi, &inv_mid, &inv_lo};
  for (double* p : parts) {
    *p = mpfr_get_d(x, MPFR_RNDN);
    mpfr_sub_d(x, x, *p, MPFR_RNDN);
  }
  for (unsigned k = 1; k <= 9; ++k) {
    mpfr_fac_ui(t, 2 * k, MPFR_RNDN);
    mpfr_ui_div(x, 1, t, MPFR_RNDN);
    c[k] = (k % 2 ? -1 : 1) * mpfr_get_d(x, MPFR_RNDN);
    if (k <= 8) {
      mpfr_fac_ui(t, 2 * k + 1, MPFR_RNDN);
      mpfr_ui_div(x, 1, t, MPFR_RNDN);
      s[k] = (k % 2 ? -1 : 1) * mpfr_get_d(x, MPFR_RNDN);
    }
  }
}

const TrigConstants& trig_constants() {
  static const TrigConstants k;
  return k;
}

FastPathFault& fast_path_fault() {
  static FastPathFault fault;
  return fault;
}

bool cos_sin_turns(double fh, double fl, double ef, Approx& c, Approx& s) {
  const TrigConstants& k = trig_constants();
  // (1) Quadrant. q = an integer nearest 4·fh (ties either way), |q| ≤ 8. gh = fh − q/4 is exact:
  // for q = 0 trivially; otherwise |fh| ≥ 1/8 and |q/4 − fh| ≤ 1/8 put q/4 within [fh/2, 2·fh]
  // (Sterbenz). Then g = gh + fl renormalised by TwoSum (exact): |g| ≤ 1/8 + 2^-50, |gl| ≤
  // ulp(gh)/2 ≤ u·|gh|.
  const double q = nearest_small(4.0 * fh);
  const Sum g = two_sum(fh - 0.25 * q, fl);
  if (g.hi != 0 && std::fabs(g.hi) < 0x1p-900) return false;  // keeps TwoProd's error exact
  // (2) y = 2π·g in double-double. p + e = gh·Th exactly (TwoProd); t = RN(RN(gh·Tl) +
  // RN(gl·Th)); (yh, yl) = FastTwoSum(p, RN(e + t)) (|p| ≥ |e + t| or p = 0).
  // Errors, with |g| ≤ 0.126, |gl| ≤ 2^-56: 2π's own error |g|·2^-104 ≤ 2^-107; dropped gl·Tl
  // ≤ 2^-107; RN(gh·Tl) ≤ u·2^-3·2^-51 = 2^-107; RN(gl·Th) ≤ u·2^-56·8 = 2^-106; the sum t
  // (|t| ≤ 2^-52) ≤ 2^-105; RN(e + t) (|e| ≤ u·0.8) ≤ 2^-105. Total E_y ≤ 2^-102, plus the
  // input's error 2π·ef ≤ 6.3·ef. |yh| ≤ 2π·(1/8 + 2^-50) < 0.7855, |yl| ≤ u·|yh|.
  const double p = g.hi * k.two_pi_hi;
  const double e = two_prod_error(g.hi, k.two_pi_hi, p);
  const double t = g.hi * k.two_pi_lo + g.lo * k.two_pi_hi;
  const Sum y = fast_two_sum(p, e + t);
  const double ey = 0x1p-102 + 6.3 * ef;
  // (3) Polynomials at yh. z = RN(yh²) = yh²(1 + δ), |δ| ≤ u, z ≤ 0.617.
  // sin: S = RN(yh + RN(yh·T)), T = z·(s1 + z(s2 + … + z·s8)) by Horner (8 multiplications,
  // 7 additions: γ_16 ≤ 16.01u). Truncation of the Taylor series after yh^17: ≤ |yh|^19/19!
  // ≤ |yh|·0.7855^18/19! < |yh|·2^-62. Horner: γ_16·Σ z^k/(2k+1)! ≤ 16.01u·0.105; the
  // coefficients' rounding ≤ u·0.105; z's rounding ≤ u·z·|T'(z)| ≤ 0.111u: |T̂ − T| ≤ 2u.
  // Then RN(yh·T̂) ≤ 0.106u|yh| and the final addition ≤ u|S|; sin(y)/y ≥ 0.89 on |y| ≤ 0.7855
  // gives |yh| ≤ 1.13|S|: |S − sin yh| ≤ (1.13·2.2 + 1)u|S| + 2^-62|yh| ≤ 3.6u·|S|.
  // cos: C = RN(1 + Tc), Tc = z·(c1 + z(c2 + … + z·c9)) (γ_18 ≤ 18.01u); truncation after
  // yh^18: ≤ 0.7855^20/20! < 2^-68; Horner γ_18·(cosh(0.7855) − 1) ≤ 18.01u·0.325 = 5.86u;
  // coefficients ≤ 0.325u; z's rounding ≤ z·|Tc'(z)|·u ≤ 0.33u; the final addition ≤ u:
  // |C − cos yh| ≤ 7.6u (absolute; C ∈ [0.70, 1]).
  const double z = y.hi * y.hi;
  double ts = k.s[8];
  for (int j = 7; j >= 1; --j) ts = ts * z + k.s[j];
  ts = ts * z;
  double tc = k.c[9];
  for (int j = 8; j >= 1; --j) tc = tc * z + k.c[j];
  tc = tc * z;
  const double S = y.hi + y.hi * ts;
  const double C = 1.0 + tc;
  // (4) The low part: sin(yh + yl) = sin yh + yl·cos yh − (yl²/2)·sin ξ and cos(yh + yl) =
  // cos yh − yl·sin yh − (yl²/2)·cos ξ. With |yl| ≤ u·0.7855: using C, S for cos yh, sin yh in
  // the correction costs ≤ |yl|·8u < 2^-108, its rounding ≤ u·|yl| < 2^-106, yl²/2 < 2^-107;
  // the final additions ≤ u·|result|. Hence (|S| ≤ |sn|(1 + 2^-50)):
  //   |sn − sin y| ≤ 4.7u·|sn| + 2^-104 + E_y,   |cs − cos y| ≤ 8.7u + 2^-104 + E_y,
  // stated with margin as 12u·|sn| and 16u = 2^-49, plus 2^-100 + E_y, rounded up by (1 + 2^-40).
  const double sn = S + y.lo * C;
  const double cs = C - y.lo * S;
  const double common = (0x1p-100 + ey) * (1 + 0x1p-40);
  const double es = 0x1.8p-50 * std::fabs(sn) + common;
  const double ec = 0x1p-49 + common;
  // (5) Quadrant q: (cos, sin)(2πf) = (cos, sin)(y + qπ/2), exact negations and swaps.
  switch (static_cast<long>(q) & 3) {
    case 0:
      c = {cs, ec};
      s = {sn, es};
      break;
    case 1:
      c = {-sn, es};
      s = {cs, ec};
      break;
    case 2:
      c = {-cs, ec};
      s = {-sn, es};
      break;
    default:
      c = {sn, es};
      s = {-cs, ec};
      break;
  }
  const FastPathFault& fault = fast_path_fault();
  if (fault.perturbation != 0) {
    for (Approx* a : {&c, &s}) {
      a->v *= 1 + fault.perturbation;
      if (fault.cover) a->err += 2 * std::fabs(a->v * fault.perturbation);
    }
  }
  return true;
}

bool turns_of_ratio(std::uint64_t r, std::uint64_t m, double& fh, double& fl, double& ef) {
  if (m >= (std::uint64_t{1} << 53) || r >= m) return false;
  // R, M exact doubles; fh = RN(R/M) ∈ [0, 1); the remainder e = R − fh·M is a double and
  // fma computes it exactly (Boldo–Daumas; R ≥ 1 keeps it far from underflow);
  // fl = RN(e/M): |fl − e/M| ≤ u·|fl|; |fl| ≤ ulp(fh)/2 ≤ 2^-54.
  const double R = static_cast<double>(r), M = static_cast<double>(m);
  fh = R / M;
  const double e = R - fh * M - two_prod_error(fh, M, fh * M);  // R − fh·M: exact (Sterbenz)
  fl = e / M;
  ef = std::fabs(fl) * 0x1p-52;
  return true;
}

/// τ = θ/(2π) as a double-double with a proven error bound (fast_trig.hpp Turn): θ enclosed at
/// 320 bits, |θ − mid| ≤ (hi − lo); τ' = mid/(2π) at 320 bits (relative error ≤ 2^-318);
/// τh = RN(τ'), τl = RN(τ' − τh); err = |τ' − τh − τl| + (hi − lo)/6 + 2^-300·|τ'| rounded up.
Turn turn_of(const numeric::ExactReal& theta) {
  Turn t;
  numeric::Mpfr lo(320), hi(320), mid(320), two_pi(320), w(320), r(320);
  theta.enclose(lo, hi);
  if (!mpfr_number_p(lo) || !mpfr_number_p(hi)) return t;
  mpfr_add(mid, lo, hi, MPFR_RNDN);
  mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
  mpfr_const_pi(two_pi, MPFR_RNDN);
  mpfr_mul_2ui(two_pi, two_pi, 1, MPFR_RNDN);
  mpfr_div(mid, mid, two_pi, MPFR_RNDN);
  t.hi = mpfr_get_d(mid, MPFR_RNDN);
  mpfr_sub_d(r, mid, t.hi, MPFR_RNDN);
  t.lo = mpfr_get_d(r, MPFR_RNDN);
  mpfr_sub_d(r, r, t.lo, MPFR_RNDN);
  mpfr_abs(r, r, MPFR_RNDU);
  mpfr_sub(w, hi, lo, MPFR_RNDU);
  mpfr_div_ui(w, w, 6, MPFR_RNDU);
  mpfr_add(r, r, w, MPFR_RNDU);
  mpfr_abs(w, mid, MPFR_RNDU);
  mpfr_mul_2si(w, w, -300, MPFR_RNDU);
  mpfr_add(r, r, w, MPFR_RNDU);
  t.err = mpfr_get_d(r, MPFR_RNDU);
  const double a = std::fabs(t.hi);
  t.valid = a >= 0x1p-900 && a <= 0x1p20 && t.err <= a * 0x1p-100;
  return t;
}

bool turns_of_product(const Turn& tau, std::uint64_t i, double& fh, double& fl, double& ef) {
  if (!tau.valid || i >= (std::uint64_t{1} << 53)) return false;
  // I = i exactly. p + e = I·τh exactly (TwoProd: |I·τh| ≥ 2^-900 or I = 0). For |p| < 2^50,
  // n = floor(p) and ph = p − n ∈ [0, 1) are exact (both multiples of ulp(p), ph < 1 has at
  // most 53 bits). lo = RN(e + RN(I·τl)): errors ≤ u·|I·τl| + u·|lo|. (fh, fl) = TwoSum(ph,
  // lo), exact. f = I·τ mod 1 differs from fh + fl by ≤ I·τ.err + u·(|I·τl| + |lo|); stated
  // as (I·err + 2u·(|I·τl| + |lo|))·(1 + 2^-50) (the bound's own roundings).
  const double I = static_cast<double>(i);
  const double p = I * tau.hi;
  if (!(std::fabs(p) < 0x1p50)) return false;
  const double e = two_prod_error(I, tau.hi, p);
  const double ph = p - floor_small(p);
  const double itl = I * tau.lo;
  const double lo = e + itl;
  const Sum f = two_sum(ph, lo);
  fh = f.hi;
  fl = f.lo;
  ef = (I * tau.err + (std::fabs(itl) + std::fabs(lo)) * 0x1p-52) * (1 + 0x1p-50);
  return true;
}

bool turns_of_radians(double x, double& fh, double& fl, double& ef) {
  if (!(std::fabs(x) < 0x1p50)) return false;  // also NaN
  if (x != 0 && std::fabs(x) < 0x1p-800) return false;
  const TrigConstants& k = trig_constants();
  // p + e = x·c0 exactly (TwoProd; |x·c0| ≥ 2^-803 or 0); |p| < 2^48 so ph = p − floor(p) is
  // exact (as in turns_of_product). lo = RN(e + RN(RN(x·c1) + RN(x·c2))): errors ≤
  // u·(|x·c1| + |x·c2|) + u·|x·c1 + x·c2|(1 + u) + u·|lo| ≤ u·(2.1·|x·c1| + |lo|) (|c2| ≤
  // 2^-52·|c1|); the constant's truncation ≤ |x|·2^-160. Stated as (|x|·2^-158 +
  // 2u·(2|x·c1| + |lo|))·(1 + 2^-50).
  const double p = x * k.inv_hi;
  const double e = two_prod_error(x, k.inv_hi, p);
  const double ph = p - floor_small(p);
  const double xc1 = x * k.inv_mid;
  const double lo = e + (xc1 + x * k.inv_lo);
  const Sum f = two_sum(ph, lo);
  fh = f.hi;
  fl = f.lo;
  ef = (std::fabs(x) * 0x1p-158 + (2 * std::fabs(xc1) + std::fabs(lo)) * 0x1p-52) * (1 + 0x1p-50);
  return true;
}

bool round_decided(const numeric::Binary64Rounding& f, const Approx& a, double& out) {
  if (!(a.err < kInf) || !std::isfinite(a.v)) return false;
  // RN(v ∓ err) is within u·|·| of the exact end; moving it outward by d = 2^-51·|·| + 2^-1074
  // (≥ two ulps of it, or the least subnormal) keeps RN(lo − d) below lo − d + ulp/2, so below
  // the exact end; likewise above. Then round_F is monotone.
  double lo = a.v - a.err, hi = a.v + a.err;
  lo = lo - (std::fabs(lo) * 0x1p-51 + 0x1p-1074);
  hi = hi + (std::fabs(hi) * 0x1p-51 + 0x1p-1074);
  const double rl = f.round(lo), rh = f.round(hi);
  if (std::bit_cast<std::uint64_t>(rl) != std::bit_cast<std::uint64_t>(rh) || !std::isfinite(rl))
    return false;
  out = rl;
  return true;
}

}  // namespace ropesim::numeric::trig
