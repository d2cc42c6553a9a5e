#pragma once
// A second, deliberately simple implementation of the Y^k head's realised scores (THEORY §6,
// RoPE-X App D) for the tests: R1 realisation, THEORY §2.1 rotation arithmetic, sequential dot
// product, round-to-nearest-even — every operation done exactly in MPFR at 4096 bits and
// rounded into F by scaling to the quantum and mpfr_rint (ties to even). It shares no code with
// numeric/, attention/ or proofs/ (only MPFR/GMP), so values it produces are independent
// derivations (STYLE: "a test asserts a value that was derived independently").
#include <gmpxx.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace ropesim::test {

struct MiniFormat {
  int p;     // precision incl. hidden bit
  int emin;  // smallest normal exponent
  int emax;  // largest exponent
};

inline MiniFormat mini_fp16() { return {11, -14, 15}; }
inline MiniFormat mini_bf16() { return {8, -126, 127}; }
inline MiniFormat mini_fp8e5m2() { return {3, -14, 15}; }
inline MiniFormat mini_tf32() { return {11, -126, 127}; }
inline MiniFormat mini_fp32() { return {24, -126, 127}; }

class Mini {
 public:
  static constexpr mpfr_prec_t kPrec = 4096;
  explicit Mini(MiniFormat f) : f_(f) {}

  /// round_F(x), RNE, subnormals, overflow to ±inf; x exact at kPrec.
  double round(mpfr_srcptr x) const {
    if (mpfr_zero_p(x)) return mpfr_signbit(x) ? -0.0 : 0.0;
    mpfr_t y;
    mpfr_init2(y, kPrec);
    const long e = static_cast<long>(mpfr_get_exp(x)) - 1;  // |x| in [2^e, 2^(e+1))
    const long q = std::max<long>(e, f_.emin) - (f_.p - 1);
    mpfr_mul_2si(y, x, -q, MPFR_RNDN);  // exact
    mpfr_rint(y, y, MPFR_RNDN);         // nearest integer, ties to even
    mpfr_mul_2si(y, y, q, MPFR_RNDN);
    double d = mpfr_get_d(y, MPFR_RNDN);  // exact: ≤ 24 bits, in double's range
    mpfr_clear(y);
    const double max = std::ldexp(2.0 - std::ldexp(1.0, 1 - f_.p), f_.emax);
    if (std::fabs(d) > max) d = std::copysign(HUGE_VAL, d);
    if (d == 0) d = mpfr_signbit(x) ? -0.0 : 0.0;
    return d;
  }
  double mul(double a, double b) const { return op(a, b, 0); }
  double add(double a, double b) const { return op(a, b, 1); }
  double sub(double a, double b) const { return op(a, b, 2); }
  /// round_F(K·cos(g·n)) or round_F(K·sin(g·n)), g rational (via mpfr at kPrec; cos of an
  /// exact argument, correctly rounded at 4096 bits, then rounded into F).
  double trig(const mpq_class& g, long n, bool sine, const mpq_class& K) const {
    mpfr_t x;
    mpfr_init2(x, 1024);  // cos correctly rounded at 1024 bits, then rounded to ≤ 24 bits
    const mpq_class angle = g * n;
    mpfr_set_q(x, angle.get_mpq_t(), MPFR_RNDN);
    if (sine) {
      mpfr_sin(x, x, MPFR_RNDN);
    } else {
      mpfr_cos(x, x, MPFR_RNDN);
    }
    mpfr_mul_q(x, x, K.get_mpq_t(), MPFR_RNDN);
    const double d = round(x);
    mpfr_clear(x);
    return d;
  }

 private:
  double op(double a, double b, int which) const {
    mpfr_t x, y;
    mpfr_init2(x, kPrec);
    mpfr_init2(y, kPrec);
    mpfr_set_d(x, a, MPFR_RNDN);
    mpfr_set_d(y, b, MPFR_RNDN);
    if (which == 0) mpfr_mul(x, x, y, MPFR_RNDN);
    if (which == 1) mpfr_add(x, x, y, MPFR_RNDN);
    if (which == 2) mpfr_sub(x, x, y, MPFR_RNDN);
    const double d = round(x);
    mpfr_clear(x);
    mpfr_clear(y);
    return d;
  }
  MiniFormat f_;
};

/// The certified-range scan of RoPE-X eq. 10 on the mini emulator (single frequency g, R1).
struct MiniRange {
  std::uint64_t n_max = 0;
  bool at_limit = false;
  std::uint64_t fail_query = 0, fail_competitor = 0;
  bool finite = true;  // both failing scores finite (then gap is set)
  mpq_class gap;
};

inline MiniRange mini_certified_range(MiniFormat fmt, const mpq_class& g, const mpq_class& C,
                                      std::uint64_t k, const mpq_class& f_large,
                                      std::uint64_t max_length) {
  const Mini m(fmt);
  // C rounded into F first (it is a parameter in F).
  mpfr_t c;
  mpfr_init2(c, Mini::kPrec);
  mpfr_set_q(c, C.get_mpq_t(), MPFR_RNDN);
  const mpq_class CF(m.round(c));
  mpfr_clear(c);
  const double b0 = m.trig(g, static_cast<long>(k), false, CF);
  const double b1 = m.trig(g, static_cast<long>(k), true, -CF);
  std::vector<double> cs, sn, q0, q1;
  for (std::uint64_t p = 0; p <= max_length + 1; ++p) {
    const double c_p = m.trig(g, static_cast<long>(p), false, 1),
                 s_p = m.trig(g, static_cast<long>(p), true, 1);
    cs.push_back(c_p);
    sn.push_back(s_p);
    q0.push_back(m.sub(m.mul(c_p, b0), m.mul(s_p, b1)));
    q1.push_back(m.add(m.mul(s_p, b0), m.mul(c_p, b1)));
  }
  auto score = [&](std::uint64_t i, std::uint64_t j) {
    // k_j = R̂_j (1, 0) = (c_j, s_j); sequential dot: rnd(rnd(q0·c) + rnd(q1·s))
    return m.add(m.mul(q0[i], cs[j]), m.mul(q1[i], sn[j]));
  };
  MiniRange out;
  for (std::uint64_t i = k + 1; i <= max_length + 1; ++i) {
    const double t = score(i, i - k);
    double best = -HUGE_VAL;
    std::uint64_t arg = 0;
    bool have = false, nan = false;
    for (std::uint64_t j = 0; j < i && !nan; ++j) {
      if (j == i - k) continue;
      const double s = score(i, j);
      if (std::isnan(s) || !have || s > best) {
        best = s;
        arg = j;
        have = true;
        nan = std::isnan(s);
      }
    }
    // A lead of ≥ f_large needs a finite target and a finite (or -inf) competitor.
    bool pass =
        !nan && std::isfinite(t) &&
        (best == -HUGE_VAL || (std::isfinite(best) && mpq_class(t) - mpq_class(best) >= f_large));
    if (!pass) {
      out.n_max = i - 2;
      out.fail_query = i;
      out.fail_competitor = arg;
      out.finite = std::isfinite(t) && std::isfinite(best);
      if (out.finite) out.gap = mpq_class(t) - mpq_class(best);
      return out;
    }
  }
  out.n_max = max_length;
  out.at_limit = true;
  return out;
}

}  // namespace ropesim::test
