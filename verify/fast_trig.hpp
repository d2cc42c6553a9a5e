// Included by ropesim_verify.cpp inside its anonymous namespace after fast_f.hpp (needs Block,
// Interval, enclose, set_q, interval_mul, Mp, FastF from there).
//
// cos and sin of θ·n in binary64 with a proven error bound: the first step of the horizon
// check's realised table (realised_table: round_F(cos θ_d n), round_F(sin θ_d n) for every
// position n and block d). Ziv's strategy: v approximates cos (or sin) with |v − cos| ≤ 2^−48;
// when both ends of [v − 2^−48, v + 2^−48] round to the same element of F, so does cos
// (rounding is monotone); otherwise the caller falls back to MPFR. Written for this checker
// alone (ropesim's numeric/trig is not used, nor read: a second implementation).
//
// THE TURN. τ = θ/(2π) is enclosed once at 320 bits (θ by enclose, 2π by MPFR's π with
// directed rounding; a turn block's τ = a/m exactly) and scaled by 2^128; when the enclosure
// [lo, hi] of τ·2^128 satisfies ceil(hi) − floor(lo) ≤ 2, the integer T = floor(lo) + 1 has
// |τ·2^128 − T| ≤ 1, and T mod 2^128 is kept (the integer part of τ adds whole turns n·⌊τ⌋).
// For a position n < 2^32 the product t = n·T mod 2^128 (unsigned 128-bit arithmetic, exact)
// is the turn of θ·n to within n·2^−128 ≤ 2^−96 turns, modulo 1.
//
// THE REDUCTION (exact). j = the nearest quarter, ⌊(t + 2^125)/2^126⌋ mod 4, and
// f = t − j·2^126 as a signed 128-bit integer, |f| ≤ 2^125: θn = 2π(j/4 + f·2^−128) + 2πm
// + (the turn's error), so cos θn = (cos r, −sin r, −cos r, sin r)[j] and
// sin θn = (sin r, cos r, −sin r, −cos r)[j] with r = 2π·f·2^−128, |r| ≤ π/4.
//
// THE ERROR BOUND (u = 2^−53, binary64 with round-to-nearest, no FMA contraction).
// 1. fh = double(⌊f/2^64⌋)·2^−64: the floor loses < 2^−64 turns and the int64 → double
//    conversion (|⌊f/2^64⌋| ≤ 2^61) at most u·2^−3, so |fh − f·2^−128| < 2^−64 + 2^−56; |fh| ≤ 1/8.
// 2. r̂ = RN(K·fh), K = RN(2π) (|K − 2π| ≤ 2^−51, from MPFR): |r̂| ≤ K/8 < π/4, and
//    |r̂ − r_true| ≤ 2^−54 (RN of a value below 1) + 2^−51·2^−3 (K) + 2π(2^−64 + 2^−56) (fh)
//    + 2π·2^−96 (the turn) < 1.8·2^−53 ≤ 2u: since |cos′|, |sin′| ≤ 1, the argument costs ≤ 2u.
// 3. ẑ = RN(r̂²) = r̂²(1 + δ), |δ| ≤ u, ẑ ≤ 0.617. cos r̂ ≈ P(ẑ) = Σ_{i=0..8} c_i ẑ^i and
//    sin r̂ ≈ r̂·Q(ẑ), Q = Σ_{i=0..8} s_i ẑ^i, with ĉ_i = RN((−1)^i/(2i)!) and
//    ŝ_i = RN((−1)^i/(2i+1)!) (MPFR from the exact rationals: |ĉ_i − c_i| ≤ u|c_i|), both by
//    Horner's rule. Horner in binary64 on the coefficients ĉ at the point ẑ errs by at most
//    γ_16·Σ|ĉ_i|ẑ^i (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 5.3:
//    degree 8, 16 roundings; γ_16 = 16u/(1 − 16u) ≤ 16.001u; no underflow: ẑ is 0 or
//    ≥ 2^−124 and every partial value stays near a coefficient ≥ 2^−49), and the rounded
//    coefficients move the value by at most u·Σ|c_i|ẑ^i. With Σ|c_i|ẑ^i ≤ cosh(0.786) ≤ 1.325
//    and Σ|s_i|ẑ^i ≤ sinh(0.786)/0.786 ≤ 1.107: |P̂ − P(ẑ)| ≤ 17.01u·1.325 ≤ 22.6u and
//    |Q̂ − Q(ẑ)| ≤ 17.01u·1.107 ≤ 18.9u. The point: |P′| ≤ sinh(√z)/(2√z) ≤ 0.56 and
//    |Q′| ≤ 0.18 on [0, 0.62], times |ẑ − r̂²| ≤ 0.617u: ≤ 0.35u and ≤ 0.12u. Truncation:
//    |cos r̂ − P(r̂²)| ≤ r̂^18/18! < 0.02u and |sin r̂ − r̂·Q(r̂²)| ≤ r̂^19/19! < 0.001u.
//    The sine's last product RN(r̂·Q̂) adds ≤ u/2 (|r̂·Q̂| < 1) to |r̂|·(18.9 + 0.12 + 0.001)u
//    ≤ 15.0u. So |ĉ − cos r̂| ≤ 23.0u and |ŝ − sin r̂| ≤ 15.5u.
// 4. Total with step 2: 25.0u and 17.5u, below kTrigError = 32u = 2^−48 for both; the
//    quadrant's sign changes and swaps are exact.
// The check (`ropesim-verify --self-test-trig N`, tests/cli/test_verify.cpp) compares the
// table built this way with the MPFR table bit for bit on real heads in bf16, fp16, fp32, p=5
// and p=44 (where the bound decides often), and prints the largest |v − cos| seen.

__extension__ typedef unsigned __int128 U128;
__extension__ typedef __int128 I128;

/// The proven bound on |v − cos θn| and |v − sin θn| of cos_sin_of_turn (header, step 4).
constexpr double kTrigError = 0x1p-48;

/// θ/(2π) mod 1 as T·2^−128 with |τ·2^128 − T| ≤ 1 (mod 2^128); not valid when the 320-bit
/// enclosure is too wide (|τ| beyond about 2^180) or θ cannot be enclosed.
struct TurnFraction {
  U128 T = 0;
  bool valid = false;
};

TurnFraction turn_fraction(const Block& b) {
  constexpr mpfr_prec_t w = 320;
  Interval tau(w);
  if (b.turn) {
    set_q(tau, *b.turn);
  } else {
    Interval theta(w), inv(w);
    if (!enclose(*b.theta, theta)) return {};
    Mp two_pi(w);  // 1/(2π) enclosed: [1/(2π)⁺, 1/(2π)⁻]
    mpfr_const_pi(two_pi, MPFR_RNDU);
    mpfr_mul_2ui(two_pi, two_pi, 1, MPFR_RNDU);
    mpfr_ui_div(inv.lo, 1, two_pi, MPFR_RNDD);
    mpfr_const_pi(two_pi, MPFR_RNDD);
    mpfr_mul_2ui(two_pi, two_pi, 1, MPFR_RNDD);
    mpfr_ui_div(inv.hi, 1, two_pi, MPFR_RNDU);
    interval_mul(tau, theta, inv);
  }
  mpfr_mul_2ui(tau.lo, tau.lo, 128, MPFR_RNDD);  // exact
  mpfr_mul_2ui(tau.hi, tau.hi, 128, MPFR_RNDU);
  if (!mpfr_number_p(tau.lo) || !mpfr_number_p(tau.hi)) return {};
  mpz_class lo, hi;
  mpfr_get_z(lo.get_mpz_t(), tau.lo, MPFR_RNDD);
  mpfr_get_z(hi.get_mpz_t(), tau.hi, MPFR_RNDU);
  if (hi - lo > 2) return {};
  mpz_class T = lo + 1;
  mpz_fdiv_r_2exp(T.get_mpz_t(), T.get_mpz_t(), 128);  // T mod 2^128, in [0, 2^128)
  mpz_class high;
  mpz_fdiv_q_2exp(high.get_mpz_t(), T.get_mpz_t(), 64);
  mpz_fdiv_r_2exp(T.get_mpz_t(), T.get_mpz_t(), 64);
  TurnFraction out;
  out.T = (static_cast<U128>(mpz_get_ui(high.get_mpz_t())) << 64) |
          static_cast<U128>(mpz_get_ui(T.get_mpz_t()));  // unsigned long is 64 bits (LP64)
  out.valid = true;
  return out;
}

/// The constants of cos_sin_of_turn, rounded once to binary64 by MPFR from exact values.
struct TrigCoefficients {
  double two_pi = 0;            ///< RN(2π)
  double c[9] = {}, s[9] = {};  ///< RN((−1)^i/(2i)!), RN((−1)^i/(2i+1)!)
  TrigCoefficients() {
    Mp x(53);
    mpfr_const_pi(x, MPFR_RNDN);
    two_pi = 2 * mpfr_get_d(x, MPFR_RNDN);  // RN(2π) = 2·RN(π): scaling by 2 is exact
    mpz_class fact = 1;
    for (int i = 0; i < 9; ++i) {
      for (int k : {2 * i, 2 * i + 1}) {
        if (k > 0) fact *= k;
        mpq_class q(i % 2 == 0 ? 1 : -1, 1);
        q /= fact;
        mpfr_set_q(x, q.get_mpq_t(), MPFR_RNDN);  // one rounding to 53 bits
        (k == 2 * i ? c : s)[i] = mpfr_get_d(x, MPFR_RNDN);
      }
    }
  }
};

const TrigCoefficients& trig_coefficients() {
  static const TrigCoefficients k;
  return k;
}

/// cos and sin of 2π·t·2^−128 (t: the turn of θ·n from turn_fraction, n < 2^32), each within
/// kTrigError of the exact cos θn, sin θn (header).
void cos_sin_of_turn(U128 t, double& cos_out, double& sin_out) {
  const TrigCoefficients& K = trig_coefficients();
  const unsigned j = static_cast<unsigned>((t + (U128{1} << 125)) >> 126) & 3u;
  const I128 f = static_cast<I128>(t - (static_cast<U128>(j) << 126));  // |f| ≤ 2^125
  const double fh = static_cast<double>(static_cast<std::int64_t>(f >> 64)) * 0x1p-64;
  const double r = K.two_pi * fh;
  const double z = r * r;
  double p = K.c[8], q = K.s[8];
  for (int i = 7; i >= 0; --i) {
    p = K.c[i] + z * p;
    q = K.s[i] + z * q;
  }
  const double c = p, s = r * q;
  switch (j) {
    case 0:
      cos_out = c;
      sin_out = s;
      break;
    case 1:
      cos_out = -s;
      sin_out = c;
      break;
    case 2:
      cos_out = -c;
      sin_out = -s;
      break;
    default:
      cos_out = s;
      sin_out = -c;
      break;
  }
}
