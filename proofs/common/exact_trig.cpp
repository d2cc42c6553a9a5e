#include "proofs/common/exact_trig.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/error.hpp"
#include "numeric/arithmetic.hpp"
#include "numeric/exact_real.hpp"
#include "numeric/mpfr_util.hpp"
#include "numeric/real_rounding.hpp"

namespace ropesim::proofs {

using numeric::Mpfr;

namespace {

/// frac(q) in [0, 1).
mpq_class fractional(const mpq_class& q) {
  mpz_class fl;
  mpz_fdiv_q(fl.get_mpz_t(), q.get_num_mpz_t(), q.get_den_mpz_t());
  mpq_class r = q - mpq_class(fl);
  r.canonicalize();
  return r;
}

/// cos(2π·t) (or sin) for t in [0, 1) when rational (Niven), else nullopt.
std::optional<mpq_class> niven(const mpq_class& t, bool sine) {
  // Work with 12·t: the rational values occur only at multiples of 1/12.
  mpq_class twelve = t * 12;
  twelve.canonicalize();
  if (twelve.get_den() != 1) return std::nullopt;
  const long k = twelve.get_num().get_si();  // 0..11
  // cos(2πk/12) = cos(kπ/6) for k = 0..11: 1, √3/2, 1/2, 0, -1/2, -√3/2, -1, -√3/2, -1/2, 0, 1/2,
  // √3/2 sin(kπ/6): 0, 1/2, √3/2, 1, √3/2, 1/2, 0, -1/2, -√3/2, -1, -√3/2, -1/2
  static const int cos_num[12] = {2, 0, 1, 0, -1, 0, -2, 0, -1, 0, 1, 0};
  static const bool cos_rational[12] = {true, false, true, true, true, false,
                                        true, false, true, true, true, false};
  static const int sin_num[12] = {0, 1, 0, 2, 0, 1, 0, -1, 0, -2, 0, -1};
  static const bool sin_rational[12] = {true, true, false, true, false, true,
                                        true, true, false, true, false, true};
  if (sine) {
    if (!sin_rational[k]) return std::nullopt;
    return mpq_class(sin_num[k], 2);
  }
  if (!cos_rational[k]) return std::nullopt;
  return mpq_class(cos_num[k], 2);
}

/// Number of bits of |x| above the binary point (≥ 0).
mpfr_prec_t magnitude_bits(double x) {
  const double a = std::fabs(x);
  if (!(a >= 1)) return 0;
  if (!std::isfinite(a)) return 4096;
  return static_cast<mpfr_prec_t>(std::ilogb(a)) + 1;
}

}  // namespace

BlockAngle::BlockAngle(const attention::RotaryBlock& block) : theta_(block.theta) {
  if (block.turn) {
    mpq_class t(block.turn->a, block.turn->m);
    t.canonicalize();
    turn_ = t;
  } else if (auto q = block.theta.as_pi_multiple()) {
    mpq_class t = *q / 2;
    t.canonicalize();
    turn_ = fractional(t);
  } else if (block.theta.is_zero()) {
    turn_ = mpq_class(0);
  }
  theta_double_ = block.theta.to_double();
}

std::optional<mpq_class> BlockAngle::exact_cos(std::int64_t n) const {
  if (n == 0) return mpq_class(1);
  if (!turn_) return std::nullopt;  // θ·n ≠ 0 not a rational multiple of π: irrational cos
  return niven(fractional(*turn_ * mpq_class(mpz_class(static_cast<long>(n)))), false);
}

std::optional<mpq_class> BlockAngle::exact_sin(std::int64_t n) const {
  if (n == 0) return mpq_class(0);
  if (!turn_) return std::nullopt;
  return niven(fractional(*turn_ * mpq_class(mpz_class(static_cast<long>(n)))), true);
}

void BlockAngle::enclose_cos(std::int64_t n, mpfr_ptr lo, mpfr_ptr hi) const {
  enclose(n, false, lo, hi);
}
void BlockAngle::enclose_sin(std::int64_t n, mpfr_ptr lo, mpfr_ptr hi) const {
  enclose(n, true, lo, hi);
}

void BlockAngle::enclose(std::int64_t n, bool sine, mpfr_ptr lo, mpfr_ptr hi) const {
  const auto exact = sine ? exact_sin(n) : exact_cos(n);
  if (exact) {
    mpfr_set_q(lo, exact->get_mpq_t(), MPFR_RNDD);
    mpfr_set_q(hi, exact->get_mpq_t(), MPFR_RNDU);
    return;
  }
  const mpfr_prec_t P = mpfr_get_prec(lo);
  // Working precision: enough that the absolute error of the angle stays below 2^-(P+16).
  const mpfr_prec_t W = P + 32 + magnitude_bits(static_cast<double>(n) * theta_double_);
  Mpfr alo(W), ahi(W);
  if (turn_) {
    // n·θ = 2π·frac(n·a/m): reduce exactly first, then enclose π.
    const mpq_class t = fractional(*turn_ * mpq_class(mpz_class(static_cast<long>(n)))) * 2;
    mpfr_const_pi(alo, MPFR_RNDD);
    mpfr_const_pi(ahi, MPFR_RNDU);
    mpfr_mul_q(alo, alo, t.get_mpq_t(), MPFR_RNDD);  // t ≥ 0
    mpfr_mul_q(ahi, ahi, t.get_mpq_t(), MPFR_RNDU);
  } else {
    const numeric::ExactReal angle =
        numeric::ExactReal::rational(mpq_class(mpz_class(static_cast<long>(n)))) * theta_;
    angle.enclose(alo, ahi);
  }
  // mid and a bound on the distance from mid to any point of [alo, ahi].
  Mpfr mid(W + 2), width(64), err(64), value(W), low(W), high(W);
  mpfr_add(mid, alo, ahi, MPFR_RNDN);
  mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
  mpfr_sub(width, ahi, alo, MPFR_RNDU);
  // |mid - x| ≤ width + ulp(mid) (mid's rounding); cos, sin are 1-Lipschitz.
  mpfr_set(err, width, MPFR_RNDU);
  if (!mpfr_zero_p(mid)) {
    Mpfr ulp(64);
    mpfr_set_ui_2exp(ulp, 1, mpfr_get_exp(mid) - (W + 2), MPFR_RNDU);
    mpfr_add(err, err, ulp, MPFR_RNDU);
  }
  if (sine) {
    mpfr_sin(value, mid, MPFR_RNDN);
  } else {
    mpfr_cos(value, mid, MPFR_RNDN);
  }
  // rounding of value: ≤ 2^-W (|value| ≤ 1)
  Mpfr r(64);
  mpfr_set_ui_2exp(r, 1, -W, MPFR_RNDU);
  mpfr_add(err, err, r, MPFR_RNDU);
  mpfr_sub(low, value, err, MPFR_RNDD);
  mpfr_add(high, value, err, MPFR_RNDU);
  if (mpfr_cmp_si(low, -1) < 0) mpfr_set_si(low, -1, MPFR_RNDD);
  if (mpfr_cmp_si(high, 1) > 0) mpfr_set_si(high, 1, MPFR_RNDU);
  mpfr_set(lo, low, MPFR_RNDD);
  mpfr_set(hi, high, MPFR_RNDU);
}

mpq_class CosineSum::weight_sum() const {
  mpq_class s = 0;
  for (const auto& w : weights) s += w;
  return s;
}

std::optional<mpq_class> CosineSum::exact(std::int64_t n) const {
  mpq_class s = 0;
  for (std::size_t d = 0; d < blocks.size(); ++d) {
    if (sgn(weights[d]) == 0) continue;
    const auto c = blocks[d].exact_cos(n);
    if (!c) return std::nullopt;
    s += weights[d] * *c;
  }
  return s;
}

void CosineSum::enclose(std::int64_t n, mpfr_ptr lo, mpfr_ptr hi) const {
  const mpfr_prec_t P = mpfr_get_prec(lo);
  const mpfr_prec_t W =
      P + 8 +
      static_cast<mpfr_prec_t>(std::ceil(std::log2(static_cast<double>(blocks.size()) + 1)));
  Mpfr slo(W), shi(W), tlo(W), thi(W), plo(W), phi(W);
  mpfr_set_zero(slo, 1);
  mpfr_set_zero(shi, 1);
  for (std::size_t d = 0; d < blocks.size(); ++d) {
    const mpq_class& w = weights[d];
    if (sgn(w) == 0) continue;
    blocks[d].enclose_cos(n, tlo, thi);
    numeric::interval_mul_q(plo, phi, tlo, thi, w);
    mpfr_add(slo, slo, plo, MPFR_RNDD);
    mpfr_add(shi, shi, phi, MPFR_RNDU);
  }
  mpfr_set(lo, slo, MPFR_RNDD);
  mpfr_set(hi, shi, MPFR_RNDU);
}

int CosineSum::compare(std::int64_t n, const mpq_class& t, mpfr_prec_t max_precision,
                       bool* undecided) const {
  if (undecided) *undecided = false;
  if (const auto e = exact(n)) return cmp(*e, t) < 0 ? -1 : (cmp(*e, t) > 0 ? 1 : 0);
  for (mpfr_prec_t P = 64; P <= max_precision; P *= 2) {
    Mpfr lo(P), hi(P);
    enclose(n, lo, hi);
    if (mpfr_cmp_q(hi, t.get_mpq_t()) < 0) return -1;
    if (mpfr_cmp_q(lo, t.get_mpq_t()) > 0) return 1;
  }
  if (undecided) *undecided = true;
  return 0;
}

std::vector<double> CosineSum::weight_doubles() const {
  std::vector<double> out;
  for (const auto& w : weights) out.push_back(w.get_d());
  return out;
}

double CosineSum::approximate(std::int64_t n, double* error_bound,
                              std::span<const double> weight_doubles) const {
  double s = 0, bound = 0, wsum = 0;
  const double nd = static_cast<double>(n);
  for (std::size_t d = 0; d < blocks.size(); ++d) {
    const double w = weight_doubles.empty() ? weights[d].get_d() : weight_doubles[d];
    const double angle = nd * blocks[d].theta_double();
    s += w * std::cos(angle);
    wsum += std::fabs(w);
    // θ's double (2^-53 relative), the product (2^-53 relative), cos (≤ 2^-50 absolute,
    // generous for glibc's ≤ 1 ulp), the weight's double (2^-53 relative).
    bound += std::fabs(w) * (std::fabs(angle) * 0x1p-51 + 0x1p-50);
  }
  bound += (static_cast<double>(blocks.size()) + 2) * wsum * 0x1p-51;  // summation
  if (error_bound) *error_bound = 4 * bound;
  return s;
}

numeric::Value round_scaled_trig(const numeric::Format& f, numeric::Rounding r,
                                 const BlockAngle& angle, std::int64_t n, bool sine,
                                 const mpq_class& K, const numeric::Engine& engine) {
  // rational values (Niven) exactly; otherwise irrational (Lindemann, see BlockAngle)
  const BlockAngle a = angle;
  return numeric::round_scaled(
      numeric::Arithmetic(f, r, engine), K, sine ? angle.exact_sin(n) : angle.exact_cos(n),
      [a, n, sine](mpfr_ptr lo, mpfr_ptr hi) {
        if (sine) {
          a.enclose_sin(n, lo, hi);
        } else {
          a.enclose_cos(n, lo, hi);
        }
      },
      std::string(sine ? "K*sin" : "K*cos") + "(n*theta) at n = " + std::to_string(n));
}

}  // namespace ropesim::proofs
