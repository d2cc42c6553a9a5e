// The filtered scan of a cosine sum S(n) = Σ_b w_b·cos(θ_b·n) (cosine_scan.hpp; THEORY §6).
// The error argument of every step is stated beside it (CORE-MATH habit).
//
// Notation: u = 2^-53, RN = binary64 round-to-nearest-even (ropesim never changes the mode;
// -ffp-contract=off keeps the compiler from fusing operations). Every binary64 operation below
// returns x(1 + δ), |δ| ≤ u, or, when the result is subnormal, x + η with |η| ≤ 2^-1075
// (Higham, Accuracy and Stability of Numerical Algorithms 2nd ed. §2.2); additions with a
// subnormal result are exact. γ_m = m·u/(1 − m·u).
#include "proofs/range/cosine_scan.hpp"

#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "numeric/exact.hpp"
#include "numeric/mpfr_util.hpp"
#include "numeric/parallel.hpp"
#include "numeric/trig/fast_trig.hpp"

namespace ropesim::proofs {

namespace {

using numeric::Mpfr;
using numeric::trig::Approx;
using numeric::trig::Turn;

constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();

/// q ≥ 0 rounded up to a double (MPFR at 53 bits, RNDU).
double up_double(const mpq_class& q) {
  Mpfr r(53);
  mpfr_set_q(r, q.get_mpq_t(), MPFR_RNDU);
  return mpfr_get_d(r, MPFR_RNDU);
}

/// |q − d| for the double d, rounded up to a double (the difference is exact as a rational).
double distance_up(const mpq_class& q, double d) { return up_double(abs(q - mpq_class(d))); }

/// cos and sin of 2π·τ·i for the Turn τ (the realisation fast path: turns_of_product, then
/// cos_sin_turns; their bounds hold for the exact values). False outside their domain.
bool cos_sin_at(const Turn& tau, std::uint64_t i, Approx& c, Approx& s) {
  double fh = 0, fl = 0, ef = 0;
  if (!numeric::trig::turns_of_product(tau, i, fh, fl, ef)) return false;
  return numeric::trig::cos_sin_turns(fh, fl, ef, c, s);
}

/// cos θ (sine = false) or sin θ of a block as the double d nearest the midpoint of a 128-bit
/// enclosure [lo, hi] (BlockAngle); returns max(hi − d, d − lo) rounded up, which bounds |d − x|.
double nearest_of_enclosure(const BlockAngle& angle, bool sine, double& d) {
  Mpfr lo(128), hi(128), mid(129), r(53), t(53);
  if (sine) {
    angle.enclose_sin(1, lo, hi);
  } else {
    angle.enclose_cos(1, lo, hi);
  }
  mpfr_add(mid, lo, hi, MPFR_RNDN);  // any point would do: the error is measured from d
  mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
  d = mpfr_get_d(mid, MPFR_RNDN);
  mpfr_sub_d(r, hi, d, MPFR_RNDU);
  mpfr_d_sub(t, d, lo, MPFR_RNDU);
  mpfr_max(r, r, t, MPFR_RNDU);
  return mpfr_get_d(r, MPFR_RNDU);
}

}  // namespace

int proven_sign(double value, double bound, double threshold, double threshold_error) {
  // x − y ≥ d − E and x − y ≤ d + E for d = value − threshold, E = bound + threshold_error.
  // d̂ = RN(d), X = RN(RN(E)·(1 + 2^-49)) (1 + 2^-49 is a double). If d̂ > max(X, 2^-1000),
  // d̂ is normal, so is d (RN is monotone), and d ≥ d̂/(1 + u) ≥ d̂(1 − u); when E is normal,
  // X ≥ E(1 − u)²(1 + 2^-49), so d > E(1 − u)³(1 + 2^-49) > E; when E is subnormal,
  // d > 2^-1000(1 − u) > E. Either way x − y > 0. The case d̂ < −max(X, 2^-1000) is the mirror
  // image. NaN or infinite inputs fail both tests (0).
  const double d = value - threshold;
  const double X = std::max((bound + threshold_error) * (1 + 0x1p-49), 0x1p-1000);
  if (d > X) return 1;
  if (d < -X) return -1;
  return 0;
}

CosineSumFilter::CosineSumFilter(const CosineSum& s) {
  mpq_class weight_error = 0;
  for (std::size_t b = 0; b < s.blocks.size(); ++b) {
    const mpq_class& w = s.weights[b];
    if (sgn(w) == 0) continue;  // as CosineSum::exact and enclose
    double wd = numeric::nearest_double(w);
    if (!std::isfinite(wd)) {
      usable_ = false;
      wd = 0;
    }
    weight_.push_back(wd);
    weight_error += abs(w - mpq_class(wd));
    const numeric::ExactReal& theta = s.blocks[b].theta();
    double rc = 1, rs = 0, re = 0, hi = 0, lo = 0, te = 0;
    if (!theta.is_zero()) {
      const Turn tau = numeric::trig::turn_of(theta);
      if (tau.valid) {
        // e^{iθ} to nearly binary64's precision: cos θ and sin θ enclosed at 128 bits
        // (BlockAngle), rounded to the nearest doubles; the error of each is the larger distance
        // from the double to an end of its enclosure, rounded up (about 2^-54 each).
        re = (nearest_of_enclosure(s.blocks[b], false, rc) +
              nearest_of_enclosure(s.blocks[b], true, rs)) *
             (1 + 0x1p-50);  // the sum rounded up
        hi = tau.hi;
        lo = tau.lo;
        te = tau.err;
      } else {
        usable_ = false;
      }
    }
    rot_cos_.push_back(rc);
    rot_sin_.push_back(rs);
    rot_error_ = std::max(rot_error_, re);
    turn_hi_.push_back(hi);
    turn_lo_.push_back(lo);
    turn_error_.push_back(te);
  }
  // Padding to a multiple of 4 (the four partial sums of evaluate): w = 0 and angle 0 add
  // exact zeros.
  padded_ = (weight_.size() + 3) / 4 * 4;
  weight_.resize(padded_, 0.0);
  rot_cos_.resize(padded_, 1.0);
  rot_sin_.resize(padded_, 0.0);
  turn_hi_.resize(padded_, 0.0);
  turn_lo_.resize(padded_, 0.0);
  turn_error_.resize(padded_, 0.0);
  mpq_class abs_sum = 0;
  for (double w : weight_) abs_sum += abs(mpq_class(w));
  weight_abs_ = up_double(abs_sum);
  weight_error_ = up_double(weight_error);
  // The bounds below need B'·u ≤ 2^-20 and a finite Σ|w|.
  if (padded_ > (std::size_t{1} << 20) || !std::isfinite(weight_abs_) ||
      !std::isfinite(weight_error_) || !(rot_error_ <= 0x1p-40))
    usable_ = false;
}

bool CosineSumFilter::evaluate(std::int64_t n0, std::size_t count, double* value,
                               double* bound) const {
  if (!usable_ || n0 < 0 || count > kRun) return false;
  if (count == 0) return true;
  const std::size_t B = padded_;
  // (1) Start: ẑ_b(0) = ĉ + i·ŝ ≈ e^{iθ_b·n0} by the realisation fast path, whose bounds
  // |ĉ − cos θ_b n0| ≤ ec, |ŝ − sin θ_b n0| ≤ es hold for the exact values (fast_trig.cpp:
  // θ_b/2π in double-double within turn_error, the product with n0 and its reduction mod 1 in
  // double-double, Taylor polynomials; about 2^-49 + n0·turn_error·2π). So
  // e_b(0) = |ẑ_b(0) − e^{iθ_b n0}| ≤ ec + es. θ_b = 0 (and the padding): ẑ = 1 exactly.
  std::vector<double> re(B, 1.0), im(B, 0.0);
  double e0 = 0;
  for (std::size_t b = 0; b < B; ++b) {
    if (turn_hi_[b] == 0) continue;
    Turn tau;
    tau.hi = turn_hi_[b];
    tau.lo = turn_lo_[b];
    tau.err = turn_error_[b];
    tau.valid = true;
    Approx c, s;
    if (!cos_sin_at(tau, static_cast<std::uint64_t>(n0), c, s)) return false;
    re[b] = c.v;
    im[b] = s.v;
    e0 = std::max(e0, (c.err + s.err) * (1 + 0x1p-50));  // the sum rounded up
  }
  // (2) Steps: ẑ_b(k+1) = fl(ẑ_b(k)·ρ̂_b), ρ̂_b = rot_cos + i·rot_sin, |ρ̂_b − e^{iθ_b}| ≤ ε
  // (rot_error_ ≤ 2^-40), the product in binary64: real part RN(RN(ac) − RN(bd)),
  // imaginary part RN(RN(ad) + RN(bc)) for ẑ = a + ib, ρ̂ = c + id. Real part: RN(ac) − RN(bd)
  // = ac(1 + δ1) − bd(1 + δ2), then (1 + δ3): error ≤ u(2 + u)(|ac| + |bd|) ≤ u(2 + u)|ẑ||ρ̂|
  // (Cauchy–Schwarz), likewise the imaginary part; the modulus ≤ √2·u(2 + u)|ẑ||ρ̂| ≤ 3u|ẑ||ρ̂|,
  // plus ≤ 3·2^-1075 per part where a result is subnormal (≤ 2^-1071 in all).
  // With e_k = |ẑ(k) − e^{iθ(n0+k)}| and |e^{iθ}| = 1:
  //   e_{k+1} ≤ 3u|ẑ(k)||ρ̂| + |ẑ(k)||ρ̂ − e^{iθ}| + |ẑ(k) − e^{iθ(n0+k)}| + 2^-1071
  //          ≤ e_k + (1 + e_k)(3u(1 + ε) + ε) + 2^-1071.
  // While e_k ≤ 2^-20 (checked below for the whole run): e_k ≤ e_0 + k·δ with
  // δ = (3u + ε)(1 + 2^-19) + 2^-1070. The cosine Re ẑ(k) has the same bound.
  const double delta = (3 * 0x1p-53 + rot_error_) * (1 + 0x1p-19) + 0x1p-1070;
  if (!(e0 + static_cast<double>(count) * delta <= 0x1p-21)) return false;
  // (3) The sum: p̂_b = RN(ŵ_b·Re ẑ_b), ŝ = ((a0 + a1) + (a2 + a3)), lane j summing the blocks
  // b ≡ j mod 4 in order (a tree of height ≤ B'/4 + 2 ≤ B', B' = padded blocks). Then
  //   |S − ŝ| ≤ Σ|w_b − ŵ_b|·|cos| + Σ|ŵ_b|·|cos − Re ẑ_b| + Σ|p_b − p̂_b| + |Σp̂_b − ŝ|
  //          ≤ Σ|w − ŵ| + A·e_k + u·A(1 + 2^-20) + γ_{B'}(1 + u)A(1 + 2^-20) + B'·2^-1074
  //          ≤ Σ|w − ŵ| + A·e_k + (B' + 1)·u·A·(1 + 2^-18) + 2^-1000,
  // A = Σ|ŵ_b| (padding: 0), using |Re ẑ| ≤ 1 + 2^-20, γ_{B'} ≤ B'u(1 + 2^-19) for
  // B'u ≤ 2^-20, B' ≤ 2^20. So with K0 = Σ|w − ŵ| + A·e_0 + (B' + 1)·u·A·(1 + 2^-18) + 2^-1000
  // and K1 = A·δ, E(k) = K0 + k·K1 bounds |S(n0 + k) − ŝ(k)|; computed in binary64 from
  // non-negative terms in at most 11 roundings, each ≥ (1 − u) times its exact value, so
  // the product with (1 + 2^-40) is ≥ E(k).
  const double A = weight_abs_;
  const double K0 = weight_error_ + A * e0 +
                    (static_cast<double>(B) + 1) * 0x1p-53 * A * (1 + 0x1p-18) + 0x1p-1000;
  const double K1 = A * delta;
  const double* w = weight_.data();
  const double* rc = rot_cos_.data();
  const double* rs = rot_sin_.data();
  double* x = re.data();
  double* y = im.data();
  for (std::size_t k = 0; k < count; ++k) {
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (std::size_t b = 0; b < B; b += 4) {
      a0 += w[b] * x[b];
      a1 += w[b + 1] * x[b + 1];
      a2 += w[b + 2] * x[b + 2];
      a3 += w[b + 3] * x[b + 3];
    }
    value[k] = (a0 + a1) + (a2 + a3);
    bound[k] = (K0 + static_cast<double>(k) * K1) * (1 + 0x1p-40);
    for (std::size_t b = 0; b < B; ++b) {
      const double c = x[b] * rc[b] - y[b] * rs[b];
      const double s = x[b] * rs[b] + y[b] * rc[b];
      x[b] = c;
      y[b] = s;
    }
  }
  return true;
}

std::optional<std::int64_t> first_reaching(const CosineSum& s, const mpq_class& t, bool inclusive,
                                           std::int64_t limit, const CosineScanOptions& options) {
  if (options.stats) *options.stats = {};
  if (limit < 1) return std::nullopt;
  const CosineSumFilter filter(s);
  const double nearest = numeric::nearest_double(t);
  // t beyond binary64's range (never for a threshold of S, |S| ≤ Σ|w|): every n exactly
  const bool comparable = std::isfinite(nearest);
  const double threshold = nearest + options.threshold_shift;
  const double threshold_error = comparable ? distance_up(t, nearest) : 0;
  auto exact_hit = [&](std::int64_t n) {
    const int c = s.compare(n, t);
    return c > 0 || (c == 0 && inclusive);
  };
  constexpr auto kRun = static_cast<std::int64_t>(CosineSumFilter::kRun);
  // Runs r = 0, 1, … hold n = 1 + r·kRun … (the last one shorter); task j holds a contiguous
  // block of runs. The answer is the first n with a hit, the minimum over the tasks' first hits:
  // a task stops at its first hit, and a run whose first n lies beyond a hit already found
  // cannot hold the answer and is skipped. A run at or before the answer is never skipped (every
  // hit found is ≥ the answer), so the task holding the answer finds it, whatever the thread
  // count.
  const std::int64_t runs = (limit - 1) / kRun + 1;
  const unsigned threads = std::max(1u, options.threads);
  const std::int64_t tasks =
      threads == 1 ? 1 : std::min<std::int64_t>(runs, std::int64_t{64} * threads);
  struct Slot {
    std::int64_t hit = kNone;
    CosineScanStats stats;
  };
  std::vector<Slot> slots(static_cast<std::size_t>(tasks));
  std::atomic<std::int64_t> found{kNone};
  const std::int64_t per = runs / tasks, extra = runs % tasks;
  numeric::parallel_for(threads, slots.size(), [&](std::size_t j) {
    const auto J = static_cast<std::int64_t>(j);
    const std::int64_t r0 = J * per + std::min(J, extra);
    const std::int64_t r1 = r0 + per + (J < extra ? 1 : 0);
    Slot& slot = slots[j];
    double value[CosineSumFilter::kRun], bound[CosineSumFilter::kRun];
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t n0 = 1 + r * kRun;
      if (found.load(std::memory_order_relaxed) < n0) return;
      const std::int64_t count = std::min(kRun, limit - n0 + 1);
      const bool filtered =
          comparable && filter.evaluate(n0, static_cast<std::size_t>(count), value, bound);
      for (std::int64_t k = 0; k < count; ++k) {
        const std::int64_t n = n0 + k;
        bool hit = false;
        int sign = 0;
        if (filtered) {
          ++slot.stats.filtered;
          sign = proven_sign(value[k], bound[k] * options.bound_scale, threshold, threshold_error);
        }
        if (sign > 0) {
          hit = true;
        } else if (sign == 0) {
          ++slot.stats.exact;
          hit = exact_hit(n);
        }
        if (hit) {
          slot.hit = n;
          std::int64_t seen = found.load();
          while (n < seen && !found.compare_exchange_weak(seen, n)) {
          }
          return;
        }
      }
    }
  });
  std::optional<std::int64_t> answer;
  CosineScanStats stats;
  for (const Slot& slot : slots) {  // tasks before the answer's ran in full
    stats.filtered += slot.stats.filtered;
    stats.exact += slot.stats.exact;
    if (slot.hit != kNone) {
      answer = slot.hit;
      break;
    }
  }
  if (options.stats) *options.stats = stats;
  return answer;
}

std::optional<std::int64_t> first_reaching_exact(const CosineSum& s, const mpq_class& t,
                                                 bool inclusive, std::int64_t limit) {
  for (std::int64_t n = 1; n <= limit; ++n) {
    const int c = s.compare(n, t);
    if (c > 0 || (c == 0 && inclusive)) return n;
  }
  return std::nullopt;
}

}  // namespace ropesim::proofs
