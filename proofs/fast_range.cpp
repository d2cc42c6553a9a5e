#include "proofs/fast_range.hpp"

#include <mpfr.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <stdexcept>

#include "numeric/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/mpfr_util.hpp"
#include "numeric/parallel.hpp"
#include "numeric/stopwatch.hpp"

namespace ropesim::proofs {

using numeric::Format;
using numeric::Mpfr;
using numeric::Value;

namespace {

mpq_class pow2(long e) {
  mpz_class p = 1;
  mpz_mul_2exp(p.get_mpz_t(), p.get_mpz_t(), static_cast<unsigned long>(e < 0 ? -e : e));
  return e >= 0 ? mpq_class(p) : mpq_class(mpz_class(1), p);
}

/// The error model of one rounding into a floating format: |round(x) − x| ≤ ε|x| + η for
/// every real x with |x| ≤ max (max = the largest finite value: no overflow, no saturation).
/// Normal range: |x| ∈ [2^e, 2^(e+1)) has spacing 2^(e−p+1) ≤ 2^(1−p)|x|; a nearest rounding
/// errs by at most half of it (ε = 2^-p), a directed one by less than all of it (ε = 2^(1−p)).
/// Below 2^emin: the subnormal spacing 2^(emin−p+1) (half of it for nearest), or without
/// subnormals the gap to 2^emin (η = 2^emin covers every mode).
struct RoundingModel {
  mpq_class eps, eta, max;
};

std::optional<RoundingModel> rounding_model(const Format& f, numeric::Rounding r) {
  if (f.is_fixed_point()) return std::nullopt;
  const bool nearest = r == numeric::Rounding::nearest_even || r == numeric::Rounding::nearest_away;
  const long p = f.precision;
  RoundingModel m;
  m.eps = nearest ? pow2(-p) : pow2(1 - p);
  if (f.subnormals) {
    m.eta = nearest ? pow2(f.emin - p) : pow2(f.emin - p + 1);
  } else {
    m.eta = pow2(f.emin);
  }
  m.max = exact_rational(numeric::max_finite(f));
  return m;
}

/// A computed quantity x̂ against its ideal real x*: |x*| ≤ M and |x̂ − x*| ≤ D.
struct Err {
  mpq_class M, D;
};

/// Forward error propagation in exact rationals; `overflow` is set when some rounded
/// argument could exceed the format's largest finite value (the model would not hold).
struct Propagation {
  bool overflow = false;
  Err round(const Err& x, const RoundingModel& r) {
    const mpq_class mag = x.M + x.D;  // |x̂| ≤ M + D
    if (mag >= r.max) overflow = true;
    return {x.M, x.D + r.eps * mag + r.eta};
  }
  static Err mul(const Err& x, const Err& y) {
    return {x.M * y.M, x.M * y.D + y.M * x.D + x.D * y.D};
  }
  static Err add(const Err& x, const Err& y) { return {x.M + y.M, x.D + y.D}; }
};

/// Exact t − m ≥ f for finite doubles (TwoSum; as in the scan).
bool lead_at_least(double t, double m, double f) {
  const double s = t - m;
  const double bb = s - t;
  const double e = (t - (s - bb)) + (-m - bb);
  return s > f || (s == f && e >= 0);
}

std::optional<std::string> structural_refusal(const FixedOffsetHead& head) {
  using Kind = attention::Realisation::Kind;
  if (head.realisation.kind != Kind::r1 && head.realisation.kind != Kind::r3)
    return "realisation " + head.realisation.name() +
           " forms its angle in F, so its error grows with the position and no "
           "position-independent bound E exists (the candidate algorithm covers r1 and r3)";
  if (!(head.realisation.format == head.policy.format))
    return "the realisation's format differs from the policy's";
  const Format& F = head.policy.format;
  if (F.is_fixed_point() || !F.fits_double())
    return "format " + F.name + " is not a floating format inside binary64";
  if (head.policy.summation == attention::Summation::wide_accumulator &&
      head.policy.accumulator.is_fixed_point())
    return "accumulator " + head.policy.accumulator.name + " is fixed point";
  if (head.head.scale) return "the head scales its scores";
  if (head.head.head_dim != head.schedule.dimension() ||
      head.ideal.blocks.size() != head.schedule.blocks.size())
    return "the head's dimension does not match its schedule";
  if (!numeric::f_large(F, head.policy.rounding)) return "f_large is undefined";
  return std::nullopt;
}

/// The coordinates (c0, c1) of rotary block d in a head of B blocks (attention's pair
/// layout: adjacent (2d, 2d+1), rotate-half (d, d+B); unrotated pairs come after).
std::pair<std::size_t, std::size_t> block_coordinates(const FixedOffsetHead& head, std::size_t d) {
  const std::size_t B = head.ideal.blocks.size();
  if (head.realisation.layout == attention::PairLayout::adjacent) return {2 * d, 2 * d + 1};
  return {d, d + B};
}

/// The bound and whether an intermediate could overflow (structural domain assumed).
/// The score is Σ_c q_c·k_c over the head's D coordinates; a coordinate outside the rotary
/// blocks (an unrotated pair) holds 0 in both q and k, its product is exactly 0 and so is
/// every addition of 0 (x + 0 = x in every rounding mode), so only the 2B block products
/// are rounded; the summation order (sequential left to right, pairwise's tree over all D
/// terms, the accumulator's sequential sums) is followed exactly, zeros included.
std::pair<mpq_class, bool> error_analysis(const FixedOffsetHead& head) {
  const auto& policy = head.policy;
  const RoundingModel F = *rounding_model(policy.format, policy.rounding);
  const bool wide = policy.summation == attention::Summation::wide_accumulator;
  const RoundingModel A = wide ? *rounding_model(policy.accumulator, policy.rounding) : F;
  Propagation P;
  // matvec(Q = 0, x = 0, b): zero products (exactly 0 in every mode) plus the bias, an
  // element of F, summed under the policy: exact (0 + b = b) for sequential, pairwise and
  // exact sums; under the wide accumulator b is converted into A, summed there and stored
  // into F (each step taken as a rounding: A need not contain F).
  auto bias_path = [&](const Err& b) {
    if (!wide) return b;
    return P.round(P.round(P.round(b, A), A), F);
  };
  // r1 / r3: cos and sin of the exact angle (r3: of 2π·a·(i mod m)/m, the same real)
  // correctly rounded into F
  const Err c = P.round({1, 0}, F), s = P.round({1, 0}, F);
  // THEORY §2.1: (rnd(rnd(c·x0) − rnd(s·x1)), rnd(rnd(s·x0) + rnd(c·x1))) in F
  auto rotate = [&](const Err& x0, const Err& x1) {
    const Err y0 = P.round(
        Propagation::add(P.round(Propagation::mul(c, x0), F), P.round(Propagation::mul(s, x1), F)),
        F);
    const Err y1 = P.round(
        Propagation::add(P.round(Propagation::mul(s, x0), F), P.round(Propagation::mul(c, x1), F)),
        F);
    return std::make_pair(y0, y1);
  };
  // the D products q_c·k_c (zero outside the rotary blocks), as computed under the policy:
  // rounded into F (sequential, pairwise), into A from operands converted into A (wide), or
  // exact (exact summation)
  const std::size_t D = head.head.head_dim;
  std::vector<Err> terms(D, Err{0, 0});
  std::vector<bool> zero(D, true);
  for (std::size_t d = 0; d < head.ideal.blocks.size(); ++d) {
    const mpq_class Cw = head.C_exact * abs(head.ideal.weights[d]);
    // query bias: round_F(C·w·cos kθ), round_F(−C·w·sin kθ) from the exact reals
    const Err a0 = bias_path(P.round({Cw, 0}, F)), a1 = bias_path(P.round({Cw, 0}, F));
    const auto [q0, q1] = rotate(a0, a1);
    // the key bias (1, 0) passes the matvec exactly (1 is in every floating A and F) and its
    // rotation is (rnd(ĉ·1 − rnd(ŝ·0)), rnd(rnd(ŝ·1) + rnd(ĉ·0))) = (ĉ, ŝ) exactly
    const Err kk0 = c, kk1 = s;
    const auto [c0, c1] = block_coordinates(head, d);
    switch (policy.summation) {
      case attention::Summation::sequential:
      case attention::Summation::pairwise:
        terms[c0] = P.round(Propagation::mul(q0, kk0), F);
        terms[c1] = P.round(Propagation::mul(q1, kk1), F);
        break;
      case attention::Summation::wide_accumulator:
        terms[c0] = P.round(Propagation::mul(P.round(q0, A), P.round(kk0, A)), A);
        terms[c1] = P.round(Propagation::mul(P.round(q1, A), P.round(kk1, A)), A);
        break;
      case attention::Summation::exact:
        terms[c0] = Propagation::mul(q0, kk0);
        terms[c1] = Propagation::mul(q1, kk1);
        break;
    }
    zero[c0] = zero[c1] = false;
  }
  // one addition: exact when a side is the exact 0 of a zero coordinate (or a sum of them)
  struct Partial {
    Err e;
    bool zero;
  };
  auto add = [&](const Partial& x, const Partial& y, const RoundingModel& into) -> Partial {
    if (x.zero) return y;
    if (y.zero) return x;
    return {P.round(Propagation::add(x.e, y.e), into), false};
  };
  auto sequential = [&](const RoundingModel& into) {
    Partial acc{{0, 0}, true};
    for (std::size_t t = 0; t < D; ++t) acc = add(acc, {terms[t], zero[t]}, into);
    return acc;
  };
  // sum(t[lo..hi)) = sum(t[lo..lo+⌊n/2⌋)) + sum(t[lo+⌊n/2⌋..hi)) (numeric/summation.hpp)
  auto pairwise = [&](auto&& self, std::size_t lo, std::size_t hi) -> Partial {
    if (hi - lo == 1) return {terms[lo], zero[lo]};
    const std::size_t mid = lo + (hi - lo) / 2;
    return add(self(self, lo, mid), self(self, mid, hi), F);
  };
  Partial score;
  switch (policy.summation) {
    case attention::Summation::sequential:
      score = sequential(F);
      break;
    case attention::Summation::pairwise:
      score = pairwise(pairwise, 0, D);
      break;
    case attention::Summation::wide_accumulator:
      score = sequential(A);
      score.e = P.round(score.e, F);
      break;
    case attention::Summation::exact: {
      Err total{0, 0};
      for (std::size_t t = 0; t < D; ++t) total = Propagation::add(total, terms[t]);
      score = {P.round(total, F), false};
      break;
    }
  }
  return {score.e.D, P.overflow};
}

}  // namespace

std::optional<std::string> fast_range_refusal(const FixedOffsetHead& head) {
  if (auto why = structural_refusal(head)) return why;
  if (error_analysis(head).second)
    return "C = " + head.C.to_decimal(9) +
           " is so large that an intermediate of a score could "
           "overflow in " +
           head.policy.format.name;
  return std::nullopt;
}

std::uint64_t fast_range_length_limit(const FixedOffsetHead& head) {
  const std::uint64_t B = std::max<std::uint64_t>(1, head.ideal.blocks.size());
  const std::uint64_t memory_limit = std::min(kFastRangeDefaultLength, kFastRangeQuickPairs / B);
  const bool one_frequency = head.ideal.blocks.size() == 1 && sgn(head.ideal.weights.at(0)) > 0;
  if (one_frequency || fast_range_refusal(head)) return memory_limit;
  // several frequencies: a candidate density ρ costs about ρ·L²/2 scores, as many as the
  // scan's quick limit Ls allows (Ls²/2) at L = Ls/sqrt(ρ)
  const std::uint64_t probe = std::min<std::uint64_t>(memory_limit, 250'000);
  const auto E = realised_score_error_bound(head);
  const auto found = candidate_offsets(head, *E, probe).size();
  if (found == 0) return memory_limit;
  const double rho = static_cast<double>(found) / static_cast<double>(probe);
  const double scan_limit = static_cast<double>(scan_length_limit(head));
  const double L = std::max(scan_limit, std::floor(scan_limit / std::sqrt(rho)));
  return std::min(memory_limit, static_cast<std::uint64_t>(L));
}

std::optional<mpq_class> realised_score_error_bound(const FixedOffsetHead& head) {
  if (structural_refusal(head)) return std::nullopt;
  auto [E, overflow] = error_analysis(head);
  if (overflow) return std::nullopt;
  return E;
}

namespace {

/// Enumerates the candidate offsets n = 1, 2, … in increasing order, on demand (a failing
/// query usually comes long before max_length, and near the threshold every n may be one).
/// One block with w > 0: the near-returns of n·θ/2π (a pre-filter on ||n·θ/2π||). Otherwise
/// (several blocks, any weights): a filtered scan of S(n) in binary64 with a proven margin
/// (see filtered_candidate).
class CandidateEnumerator {
 public:
  CandidateEnumerator(const FixedOffsetHead& head, const mpq_class& E) : S_(head.ideal) {
    T_ = S_.weight_sum() - (head.f_large_exact + 2 * E) / head.C_exact;
    if (S_.blocks.size() == 1 && sgn(S_.weights[0]) > 0) {
      init_near_returns();
    } else {
      init_filtered_sum();
    }
  }

  /// Appends the candidates n in (done(), upto] to `out`, increasing.
  void extend(std::uint64_t upto, std::vector<std::uint64_t>& out) {
    for (std::uint64_t n = done_ + 1; n <= upto; ++n) {
      if (all_ || (filtered_ ? filtered_candidate(n) : candidate(n))) out.push_back(n);
    }
    done_ = std::max(done_, upto);
  }
  std::uint64_t done() const { return done_; }
  /// Starts the enumeration after offset n (the offsets up to n are another enumerator's).
  void start_after(std::uint64_t n) { done_ = n; }

 private:
  /// The filtered scan for several frequencies. S̃(n) = Σ_d ŵ_d ⊗ cos(n ⊗ θ̂_d), summed left
  /// to right in binary64 (u = 2^-53), with ŵ_d = w_d to double (|ŵ_d − w_d| ≤ 2u|w_d|) and
  /// θ̂_d the double nearest θ_d's enclosure, |θ̂_d − θ_d| ≤ e_d (from the enclosure, rounded
  /// up). Per block: the argument n ⊗ θ̂_d errs by ≤ n·e_d + u·n·|θ̂_d| from n·θ_d, cos is
  /// 1-Lipschitz, and the libm cos is taken to err by ≤ 2^-50 absolute (4 ulps at 1; glibc
  /// documents ≤ 1 ulp, with exact argument reduction; CosineSum::approximate assumes the
  /// same). The weights' doubles add 2u·W, the B products and B − 1 additions ≤ (B+1)·u·W
  /// (W = Σ|w_d|, |cos| ≤ 1). So
  ///   |S̃(n) − S(n)| ≤ margin(n) = W·(2^-50 + (B+3)·u) + n·Σ_d |w_d|·(e_d + u·|θ̂_d|),
  /// evaluated here with a factor 2 of slack (which also covers the rounding of the margin's
  /// own evaluation and of T to double). Offsets with S̃(n) ≤ T̂ − margin are safe, those
  /// with S̃(n) > T̂ + margin are candidates, the rest are decided by CosineSum::compare.
  void init_filtered_sum() {
    filtered_ = true;
    constexpr double u = 0x1p-53;
    double W = 0, slope = 0;
    constexpr mpfr_prec_t P = 256;
    Mpfr lo(P), hi(P), err(P);
    for (std::size_t d = 0; d < S_.blocks.size(); ++d) {
      const double w = S_.weights[d].get_d();
      S_.blocks[d].theta().enclose(lo, hi);
      mpfr_add(err, lo, hi, MPFR_RNDN);
      mpfr_div_2ui(err, err, 1, MPFR_RNDN);
      const double theta = mpfr_get_d(err, MPFR_RNDN);
      // e_d = max(hi − θ̂, θ̂ − lo), rounded up
      mpfr_sub_d(err, hi, theta, MPFR_RNDU);
      double e = mpfr_get_d(err, MPFR_RNDU);
      mpfr_d_sub(err, theta, lo, MPFR_RNDU);
      e = std::max(e, mpfr_get_d(err, MPFR_RNDU));
      weights_d_.push_back(w);
      theta_d_.push_back(theta);
      W += std::fabs(w);
      slope += std::fabs(w) * (e + u * std::fabs(theta));
    }
    const double B = static_cast<double>(S_.blocks.size());
    // (B·2^-1000 covers weights too small for a normal double)
    margin0_ = 2 * (W * (0x1p-50 + (B + 3) * u) + std::fabs(numeric::nearest_double(T_)) * u +
                    B * 0x1p-1000);
    margin1_ = 2 * slope;
    T_d_ = numeric::nearest_double(T_);
    // nothing is excluded when T < −W ≤ min S (every offset is a candidate)
    mpq_class W_exact = 0;
    for (const auto& w : S_.weights) W_exact += abs(w);
    if (T_ < -W_exact) all_ = true;
  }

  bool filtered_candidate(std::uint64_t n) const {
    const double nd = static_cast<double>(n);  // exact: n < 2^53
    double s = 0;
    for (std::size_t d = 0; d < theta_d_.size(); ++d)
      s += weights_d_[d] * std::cos(nd * theta_d_[d]);
    const double margin = margin0_ + nd * margin1_;
    if (s <= T_d_ - margin) return false;  // S(n) ≤ T: safe
    if (s > T_d_ + margin) return true;    // S(n) > T
    bool undecided = false;
    const int c = S_.compare(static_cast<std::int64_t>(n), T_, 4096, &undecided);
    return c > 0 || undecided;
  }

  void init_near_returns() {
    const mpq_class w = S_.weights[0];
    // safe iff S(n) ≤ T; as a cosine: cos(nθ) ≤ τ = T/w
    const mpq_class tau = T_ / w;
    if (tau <= -1) {  // nothing is excluded
      all_ = true;
      return;
    }
    constexpr mpfr_prec_t P = 256;
    // [r_lo, r_up] ∋ r = arccos(τ)/2π, the largest ||nθ/2π|| of a candidate (arccos decreasing)
    Mpfr t(P), r(P), two_pi_lo(P), two_pi_hi(P);
    mpfr_const_pi(two_pi_lo, MPFR_RNDD);
    mpfr_mul_2ui(two_pi_lo, two_pi_lo, 1, MPFR_RNDD);
    mpfr_const_pi(two_pi_hi, MPFR_RNDU);
    mpfr_mul_2ui(two_pi_hi, two_pi_hi, 1, MPFR_RNDU);
    mpfr_set_q(t, tau.get_mpq_t(), MPFR_RNDD);
    if (mpfr_cmp_si(t, -1) < 0) mpfr_set_si(t, -1, MPFR_RNDN);
    mpfr_acos(r, t, MPFR_RNDU);
    mpfr_div(r, r, two_pi_lo, MPFR_RNDU);
    r_up_ = mpfr_get_d(r, MPFR_RNDU);
    mpfr_set_q(t, tau.get_mpq_t(), MPFR_RNDU);
    if (mpfr_cmp_si(t, 1) > 0) mpfr_set_si(t, 1, MPFR_RNDN);
    mpfr_acos(r, t, MPFR_RNDD);
    mpfr_div(r, r, two_pi_hi, MPFR_RNDD);
    r_lo_ = mpfr_get_d(r, MPFR_RNDD);
    // α = |θ|/2π in [lo, hi]; α ≈ ah + al (doubles) with |α − ah − al| ≤ err_a
    Mpfr lo(P), hi(P), tmp(P), e2(P), err(P);
    S_.blocks[0].theta().enclose(lo, hi);
    if (mpfr_sgn(hi) <= 0) {  // θ ≤ 0: use −θ
      mpfr_neg(tmp, lo, MPFR_RNDN);
      mpfr_neg(lo, hi, MPFR_RNDN);
      mpfr_set(hi, tmp, MPFR_RNDN);
    } else if (mpfr_sgn(lo) < 0) {  // straddles 0: |θ| ∈ [0, max(−lo, hi)]
      mpfr_neg(tmp, lo, MPFR_RNDN);
      mpfr_max(hi, hi, tmp, MPFR_RNDU);
      mpfr_set_zero(lo, 1);
    }
    mpfr_div(lo, lo, two_pi_hi, MPFR_RNDD);
    mpfr_div(hi, hi, two_pi_lo, MPFR_RNDU);
    ah_ = mpfr_get_d(lo, MPFR_RNDN);
    mpfr_sub_d(tmp, lo, ah_, MPFR_RNDN);  // exact (ah is within half an ulp_53 of lo)
    al_ = mpfr_get_d(tmp, MPFR_RNDN);
    mpfr_sub_d(e2, tmp, al_, MPFR_RNDU);  // exact likewise
    mpfr_abs(e2, e2, MPFR_RNDU);
    mpfr_sub(err, hi, lo, MPFR_RNDU);
    mpfr_add(err, err, e2, MPFR_RNDU);
    err_a_ = mpfr_get_d(err, MPFR_RNDU);
  }

  bool candidate(std::uint64_t n) const {
    // n·α = n·ah + n·al + n·δ; n·ah = ph + pl exactly (FMA); ph − rint(ph) is exact.
    const double nd = static_cast<double>(n);  // exact: n < 2^53
    const double ph = nd * ah_;
    const double pl = std::fma(nd, ah_, -ph);
    const double fi = ph - std::nearbyint(ph);
    const double t1 = nd * al_;
    const double t2 = pl + t1;
    const double x = fi + t2;
    const double d = std::fabs(x - std::nearbyint(x));  // the subtraction is exact
    // three roundings of relative error 2^-53 each (|x| ≤ 1 + |t2|), with a factor 2 of
    // slack, plus the error of α: |d − ||nα||| ≤ margin
    const double margin = 0x1p-50 * (std::fabs(t1) + std::fabs(t2) + 1.0) + 2 * nd * err_a_;
    if (d > r_up_ + margin) return false;  // ||nα|| > r: S(n) < T, safe
    if (d + margin < r_lo_) return true;   // ||nα|| < r: S(n) > T
    bool undecided = false;
    const int c = S_.compare(static_cast<std::int64_t>(n), T_, 4096, &undecided);
    return c > 0 || undecided;
  }

  const CosineSum& S_;
  mpq_class T_;
  bool all_ = false;
  // the filtered scan (several frequencies)
  bool filtered_ = false;
  std::vector<double> weights_d_, theta_d_;
  double margin0_ = 0, margin1_ = 0, T_d_ = 0;
  double r_up_ = 0.5, r_lo_ = 0, ah_ = 0, al_ = 0, err_a_ = 0;
  std::uint64_t done_ = 0;
};

}  // namespace

std::vector<std::uint64_t> candidate_offsets(const FixedOffsetHead& head, const mpq_class& E,
                                             std::uint64_t max_offset) {
  if (auto why = structural_refusal(head)) throw InvalidArgument("candidate offsets: " + *why);
  if (max_offset > kMaxScanLength)
    throw InvalidArgument("candidate offsets: max_offset beyond " + std::to_string(kMaxScanLength));
  CandidateEnumerator e(head, E);
  std::vector<std::uint64_t> out;
  e.extend(max_offset, out);
  return out;
}

CertifiedRange certified_range_fast_reference(const FixedOffsetHead& head,
                                              const ScanOptions& options) {
  if (options.max_length < 1 || options.max_length > kMaxScanLength) {
    throw InvalidArgument("the certified range's max_length must be in 1.." +
                          std::to_string(kMaxScanLength) + ", got " +
                          std::to_string(options.max_length));
  }
  if (auto why = fast_range_refusal(head))
    throw InvalidArgument("the candidate algorithm does not apply: " + *why);
  const auto start = numeric::Clock::now();
  const mpq_class E = *realised_score_error_bound(head);
  CertifiedRange out;
  out.algorithm = "candidates";
  out.error_bound = E;
  out.max_length = options.max_length;
  const std::uint64_t k = head.k;
  const std::uint64_t last = options.max_length + 1;
  // offsets n = i − k − j of competitors: 1 − k ≤ n ≤ i − k, n ≠ 0. Negative ones (j > i − k)
  // up to k − 1 at once; positive ones as the queries advance.
  CandidateEnumerator enumerate(head, E);
  std::vector<std::uint64_t> positive, negative;
  enumerate.extend(k - 1, negative);
  positive = negative;
  const auto kernel = options.use_fast_kernel ? ScoreKernel::make(head) : std::nullopt;
  out.fast_kernel = kernel.has_value();
  const double f_double = head.f_large.to_double();  // exact: F fits a double
  const mpq_class& f = head.f_large_exact;
  const std::vector<Value> zero_input(head.head.query.cols, Value());
  const std::size_t D = head.head.head_dim;
  const std::size_t B = head.ideal.blocks.size();
  std::vector<double> keys;  // D per position
  std::vector<double> queries;
  // positions are realised in chunks growing from 64 to 65536 / (D/2) (a failing query often
  // comes early; later chunks amortise the realisation's per-call setup)
  std::uint64_t chunk = 64;
  const std::uint64_t max_chunk = std::max<std::uint64_t>(64, 131072 / D);
  std::vector<Value> qv(D), kv(D);
  auto score = [&](const double* q, std::uint64_t j) -> Value {
    const double* kj = &keys[D * j];
    if (kernel) return Value::from_double_exact(kernel->dot(q, kj, D));
    for (std::size_t c = 0; c < D; ++c) {
      qv[c] = Value::from_double_exact(q[c]);
      kv[c] = Value::from_double_exact(kj[c]);
    }
    return attention::head_score(head.head, qv, kv, head.policy);
  };
  auto finite_or_throw = [](const Value& v) {
    if (!v.is_finite())
      throw std::logic_error("certified_range_fast: a score is not finite inside the domain");
  };
  const double target_ideal = numeric::nearest_double(head.C_exact * head.ideal.weight_sum());
  const double target_slack =
      numeric::nearest_double(E) * (1 + 0x1p-40) + std::fabs(target_ideal) * 0x1p-50;
  attention::HeadRotations one;
  one.positions = 1;
  one.blocks.resize(B);
  bool failed = false;
  std::uint64_t last_query = 0;
  std::vector<std::vector<attention::RealisedPair>> pairs(B);
  for (std::uint64_t begin = 0, end = 0; begin <= last && !failed;
       begin = end, chunk = std::min<std::uint64_t>(2 * chunk, max_chunk)) {
    end = std::min(last + 1, begin + chunk);
    for (std::size_t b = 0; b < B; ++b)
      pairs[b] = attention::realise_block(head.schedule, head.realisation, b, begin, end);
    queries.assign(D * (end - begin), 0.0);
    for (std::uint64_t p = begin; p < end; ++p) {
      for (std::size_t b = 0; b < B; ++b) one.blocks[b].assign(1, pairs[b][p - begin]);
      const auto q = attention::head_query(head.head, one, 0, zero_input, head.policy);
      const auto key = attention::head_key(head.head, one, 0, zero_input, head.policy);
      for (std::size_t c = 0; c < D; ++c) {
        queries[D * (p - begin) + c] = q[c].narrow();
        keys.push_back(key[c].narrow());
      }
    }
    if (end - 1 > k) enumerate.extend(end - 1 - k, positive);
    for (std::uint64_t i = std::max(begin, k + 1); i < end; ++i) {
      const double* q = &queries[D * (i - begin)];
      const std::uint64_t target = i - k;
      const Value t = score(q, target);
      finite_or_throw(t);
      // Defence in depth: the target's realised score must lie within E of C·S(0) (step 1 of the
      // soundness argument, checked on every query; the slack covers the doubles here).
      if (!(std::fabs(t.narrow() - target_ideal) <= target_slack))
        throw std::logic_error(
            "certified_range_fast: a target score is farther than E from C·S(0)");
      ++out.scores_evaluated;
      Value m;
      std::uint64_t arg = 0;
      bool have = false;
      last_query = i;
      auto consider = [&](std::uint64_t j) {
        const Value s = score(q, j);
        finite_or_throw(s);
        ++out.scores_evaluated;
        const bool larger = kernel ? s.narrow() > m.narrow() : numeric::compare(s, m) > 0;
        if (!have || larger) {
          m = s;
          arg = j;
          have = true;
        }
      };
      // j = i − k − n increasing: positive n decreasing, then negative offsets −n, n increasing
      const auto stop = std::upper_bound(positive.begin(), positive.end(), target);
      for (auto it = stop; it != positive.begin();) consider(target - *--it);
      for (const std::uint64_t n : negative) consider(target + n);
      if (!have) continue;  // every competitor proven safe
      const bool pass = kernel ? lead_at_least(t.narrow(), m.narrow(), f_double)
                               : (exact_rational(t) - exact_rational(m) >= f);
      if (pass) continue;
      out.n_max = i - 2;
      out.fail_query = i;
      out.fail_competitor = arg;
      out.fail_offset = static_cast<std::int64_t>(i) - static_cast<std::int64_t>(k) -
                        static_cast<std::int64_t>(arg);
      out.target_score = t;
      out.competitor_score = m;
      out.gap = exact_rational(t) - exact_rational(m);
      failed = true;
      break;
    }
  }
  // the signed offsets the last query examined could see
  out.candidate_offsets =
      negative.size() +
      static_cast<std::uint64_t>(
          std::upper_bound(positive.begin(), positive.end(), last_query > k ? last_query - k : 0) -
          positive.begin());
  if (!failed) {
    out.n_max = options.max_length;
    out.at_limit = true;
  }
  out.seconds = numeric::seconds_since(start);
  return out;
}

namespace {

/// Keys k_j of positions [begin, end), head_dim doubles each (elements of F).
struct KeyBlock {
  std::uint64_t begin = 0, end = 0;
  std::vector<double> keys;
};

/// The head's realised queries and keys from its realised rotations, each position's rotation
/// realised once (realise_block over a range of positions). The biases pass the matvec once
/// (Q = K = 0, so q_p = R̂_p(b̃_q) and k_p = R̂_p(b̃_k) with b̃ = matvec(0, 0, b) independent of
/// p); each rotation is then THEORY §2.1's (rnd(rnd(c·x0) − rnd(s·x1)), rnd(rnd(s·x0) +
/// rnd(c·x1))) in F, computed in binary64 with numeric::Binary64Rounding where that is exact
/// (round-to-nearest-even, p ≤ 25 or binary64: NUMERIC §2) and by attention::rotate
/// otherwise. Both give head_query / head_key's values bit for bit (tests/proofs:
/// certified_range_fast against certified_range_fast_reference, which calls them).
class RealisedHead {
 public:
  explicit RealisedHead(const FixedOffsetHead& head)
      : head_(head),
        D_(head.head.head_dim),
        B_(head.ideal.blocks.size()),
        R_(head.policy.format, head.policy.rounding) {
    const std::vector<Value> zero(head.head.query.cols, Value());
    bq_ = attention::matvec(head.head.query, zero, head.head.query_bias, head.policy);
    bk_ = attention::matvec(head.head.key, zero, head.head.key_bias, head.policy);
    fast_ = R_.fast_arithmetic() && head.head.rotary.size() == 1 && bq_.size() == D_ &&
            bk_.size() == D_;
    if (fast_) {
      const auto& seg = head.head.rotary[0];
      fast_ = seg.dimension() == D_ && seg.realisations.size() == B_ &&
              seg.layout == head.realisation.layout;
      for (const auto& r : seg.realisations) {
        fast_ = fast_ && r && r->kind != attention::Realisation::Kind::pipeline &&
                r->format == head.policy.format && r->rounding == head.policy.rounding;
      }
    }
    for (std::size_t d = 0; d < B_; ++d) coords_.push_back(block_coordinates(head, d));
    for (std::size_t c = 0; c < bq_.size(); ++c) bq_d_.push_back(bq_[c].narrow());
    for (std::size_t c = 0; c < bk_.size(); ++c) bk_d_.push_back(bk_[c].narrow());
  }

  std::size_t dim() const { return D_; }

  /// The realised pairs of every block at positions [begin, end): pairs[b][p − begin].
  std::vector<std::vector<attention::RealisedPair>> realise(std::uint64_t begin,
                                                            std::uint64_t end) const {
    std::vector<std::vector<attention::RealisedPair>> pairs(B_);
    for (std::size_t b = 0; b < B_; ++b)
      pairs[b] = attention::realise_block(head_.schedule, head_.realisation, b, begin, end);
    return pairs;
  }

  /// q (when `q` is not null) and k (when `k` is not null) at the position of pairs[·][index],
  /// D doubles each.
  void rotate(const std::vector<std::vector<attention::RealisedPair>>& pairs, std::size_t index,
              double* q, double* k) const {
    if (fast_) {
      if (q) std::copy(bq_d_.begin(), bq_d_.end(), q);
      if (k) std::copy(bk_d_.begin(), bk_d_.end(), k);
      for (std::size_t b = 0; b < B_; ++b) {
        const double c = pairs[b][index].cos.narrow(), s = pairs[b][index].sin.narrow();
        const auto [i0, i1] = coords_[b];
        for (double* y : {q, k}) {
          if (!y) continue;
          const double* x = y == q ? bq_d_.data() : bk_d_.data();
          y[i0] = R_.sub(R_.mul(c, x[i0]), R_.mul(s, x[i1]));
          y[i1] = R_.add(R_.mul(s, x[i0]), R_.mul(c, x[i1]));
        }
      }
      return;
    }
    attention::HeadRotations one;
    one.positions = 1;
    one.blocks.resize(B_);
    for (std::size_t b = 0; b < B_; ++b) one.blocks[b].assign(1, pairs[b][index]);
    if (q) {
      const auto v = attention::rotate(head_.head, one, 0, bq_, head_.policy);
      for (std::size_t c = 0; c < D_; ++c) q[c] = v[c].narrow();
    }
    if (k) {
      const auto v = attention::rotate(head_.head, one, 0, bk_, head_.policy);
      for (std::size_t c = 0; c < D_; ++c) k[c] = v[c].narrow();
    }
  }

  /// The keys of positions [begin, end).
  KeyBlock keys(std::uint64_t begin, std::uint64_t end) const {
    KeyBlock out{begin, end, std::vector<double>(D_ * (end - begin))};
    const auto pairs = realise(begin, end);
    for (std::uint64_t p = begin; p < end; ++p)
      rotate(pairs, p - begin, nullptr, &out.keys[D_ * (p - begin)]);
    return out;
  }

 private:
  const FixedOffsetHead& head_;
  std::size_t D_, B_;
  numeric::Binary64Rounding R_;
  bool fast_ = false;
  std::vector<Value> bq_, bk_;
  std::vector<double> bq_d_, bk_d_;
  std::vector<std::pair<std::size_t, std::size_t>> coords_;
};

/// The keys kept between batches: consecutive KeyBlocks covering [begin(), end()), the oldest
/// dropped once they exceed the byte cap and no query still to come needs them as a target or
/// a negative-offset competitor (older keys a candidate offset needs are realised again).
class KeyStore {
 public:
  std::uint64_t begin() const { return blocks_.empty() ? end_ : blocks_.front().begin; }
  void append(KeyBlock&& b) {
    bytes_ += b.keys.size() * sizeof(double);
    end_ = b.end;
    blocks_.push_back(std::move(b));
  }
  /// Drops the oldest blocks while over `cap` bytes and ending at or before `keep_from`.
  void evict(std::size_t cap, std::uint64_t keep_from) {
    while (bytes_ > cap && !blocks_.empty() && blocks_.front().end <= keep_from) {
      bytes_ -= blocks_.front().keys.size() * sizeof(double);
      blocks_.pop_front();
    }
  }
  /// k_j for begin() ≤ j < end().
  const double* find(std::uint64_t j, std::size_t D) const { return find_in(blocks_, j, D); }

  template <typename Blocks>
  static const double* find_in(const Blocks& blocks, std::uint64_t j, std::size_t D) {
    auto it = std::upper_bound(blocks.begin(), blocks.end(), j,
                               [](std::uint64_t v, const KeyBlock& b) { return v < b.begin; });
    if (it == blocks.begin()) return nullptr;
    --it;
    if (j >= it->end) return nullptr;
    return &it->keys[D * (j - it->begin)];
  }

 private:
  std::deque<KeyBlock> blocks_;
  std::uint64_t end_ = 0;
  std::size_t bytes_ = 0;
};

/// Keys kept between batches before the oldest are dropped (256 MB: 262,144 positions of
/// llama2-7b's head_dim 128).
constexpr std::size_t kKeyStoreBytes = std::size_t{1} << 28;

/// The outcome of the queries of one chunk: the scores evaluated up to its first failing
/// query (all of them when none fails) and that failure.
struct ChunkOutcome {
  std::uint64_t scores = 0;
  std::optional<std::uint64_t> fail_query, fail_competitor;
  Value target, competitor;
};

}  // namespace

CertifiedRange certified_range_fast(const FixedOffsetHead& head, const ScanOptions& options) {
  if (options.max_length < 1 || options.max_length > kMaxScanLength) {
    throw InvalidArgument("the certified range's max_length must be in 1.." +
                          std::to_string(kMaxScanLength) + ", got " +
                          std::to_string(options.max_length));
  }
  if (auto why = fast_range_refusal(head))
    throw InvalidArgument("the candidate algorithm does not apply: " + *why);
  const auto start = std::chrono::steady_clock::now();
  const mpq_class E = *realised_score_error_bound(head);
  CertifiedRange out;
  out.algorithm = "candidates";
  out.error_bound = E;
  out.max_length = options.max_length;
  const unsigned threads = std::max(1u, options.threads);
  const std::uint64_t k = head.k;
  const std::uint64_t last = options.max_length + 1;
  CandidateEnumerator enumerate(head, E);
  std::vector<std::uint64_t> positive, negative;
  enumerate.extend(k - 1, negative);
  positive = negative;
  const RealisedHead realised(head);
  const std::size_t D = realised.dim();
  const auto kernel = options.use_fast_kernel ? ScoreKernel::make(head) : std::nullopt;
  out.fast_kernel = kernel.has_value();
  const double f_double = head.f_large.to_double();  // exact: F fits a double
  const mpq_class& f = head.f_large_exact;
  auto score = [&](const double* q, const double* kj) -> Value {
    if (kernel) return Value::from_double_exact(kernel->dot(q, kj, D));
    std::vector<Value> qv(D), kv(D);
    for (std::size_t c = 0; c < D; ++c) {
      qv[c] = Value::from_double_exact(q[c]);
      kv[c] = Value::from_double_exact(kj[c]);
    }
    return attention::head_score(head.head, qv, kv, head.policy);
  };
  auto finite_or_throw = [](const Value& v) {
    if (!v.is_finite())
      throw std::logic_error("certified_range_fast: a score is not finite inside the domain");
  };
  const double target_ideal = numeric::nearest_double(head.C_exact * head.ideal.weight_sum());
  const double target_slack =
      numeric::nearest_double(E) * (1 + 0x1p-40) + std::fabs(target_ideal) * 0x1p-50;

  // Positive candidate offsets up to `upto`, enumerated over sub-ranges on the threads and
  // appended in increasing order (the same list as one enumerator's).
  auto extend_positive = [&](std::uint64_t upto) {
    const std::uint64_t from = enumerate.done();
    if (upto <= from) return;
    const std::uint64_t span = upto - from;
    if (threads == 1 || span < 8192) {
      enumerate.extend(upto, positive);
      return;
    }
    const std::size_t parts = 4 * threads;
    std::vector<std::vector<std::uint64_t>> found(parts);
    numeric::parallel_for(threads, parts, [&](std::size_t t) {
      const std::uint64_t lo = from + span * t / parts, hi = from + span * (t + 1) / parts;
      CandidateEnumerator e(head, E);
      e.start_after(lo);
      e.extend(hi, found[t]);
    });
    for (const auto& v : found) positive.insert(positive.end(), v.begin(), v.end());
    enumerate.start_after(upto);
  };

  // The queries i in [a, b) (k + 1 ≤ a), in order, until the first failing one: the target
  // j = i − k against the competitors j = i − k − n (candidate n > 0 with n ≤ i − k, j
  // increasing) and j = i − k + n (negative candidates), the largest score kept (first j on
  // ties), as the reference does.
  KeyStore store;
  auto evaluate = [&](std::uint64_t a, std::uint64_t b, const std::vector<double>& queries,
                      std::uint64_t query_begin) -> ChunkOutcome {
    ChunkOutcome o;
    // keys older than the store: realised again, once per merged window of offsets
    std::vector<KeyBlock> far;
    const std::uint64_t kept = store.begin();
    std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;
    const auto active_end = std::upper_bound(positive.begin(), positive.end(), b - 1 - k);
    for (auto it = positive.begin(); it != active_end; ++it) {
      const std::uint64_t n = *it;
      const std::uint64_t lo = std::max(a, k + n) - k - n, hi = b - k - n;
      if (lo < kept) windows.emplace_back(lo, std::min(hi, kept));
    }
    std::sort(windows.begin(), windows.end());
    for (std::size_t w = 0; w < windows.size();) {
      std::uint64_t lo = windows[w].first, hi = windows[w].second;
      for (++w; w < windows.size() && windows[w].first <= hi; ++w)
        hi = std::max(hi, windows[w].second);
      far.push_back(realised.keys(lo, hi));
    }
    auto key = [&](std::uint64_t j) -> const double* {
      const double* p = j >= kept ? store.find(j, D) : KeyStore::find_in(far, j, D);
      if (!p) throw std::logic_error("certified_range_fast: a key was not realised");
      return p;
    };
    for (std::uint64_t i = a; i < b; ++i) {
      const double* q = &queries[D * (i - query_begin)];
      const std::uint64_t target = i - k;
      const Value t = score(q, key(target));
      finite_or_throw(t);
      if (!(std::fabs(t.narrow() - target_ideal) <= target_slack))
        throw std::logic_error(
            "certified_range_fast: a target score is farther than E from C·S(0)");
      ++o.scores;
      Value m;
      std::uint64_t arg = 0;
      bool have = false;
      auto consider = [&](std::uint64_t j) {
        const Value s = score(q, key(j));
        finite_or_throw(s);
        ++o.scores;
        const bool larger = kernel ? s.narrow() > m.narrow() : numeric::compare(s, m) > 0;
        if (!have || larger) {
          m = s;
          arg = j;
          have = true;
        }
      };
      const auto stop = std::upper_bound(positive.begin(), positive.end(), target);
      for (auto it = stop; it != positive.begin();) consider(target - *--it);
      for (const std::uint64_t n : negative) consider(target + n);
      if (!have) continue;
      const bool pass = kernel ? lead_at_least(t.narrow(), m.narrow(), f_double)
                               : (exact_rational(t) - exact_rational(m) >= f);
      if (pass) continue;
      o.fail_query = i;
      o.fail_competitor = arg;
      o.target = t;
      o.competitor = m;
      break;
    }
    return o;
  };

  // Batches of chunks: each chunk's positions realised once (queries and keys), then its
  // queries scored, the chunks of a batch on the threads; the first failing query is the
  // first in position order, whatever the thread count. Chunks grow from 64 positions to
  // max_chunk (a failing query often comes early).
  const std::uint64_t max_chunk = std::max<std::uint64_t>(64, 131072 / std::max<std::size_t>(D, 1));
  const std::size_t chunks_per_batch = 4 * threads;
  bool failed = false;
  std::uint64_t last_query = 0;
  for (std::uint64_t begin = 0, chunk = 64; begin <= last && !failed;
       chunk = std::min(2 * chunk, max_chunk)) {
    if (options.abandon && options.abandon()) break;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks;
    for (std::size_t c = 0; c < chunks_per_batch && begin <= last; ++c) {
      const std::uint64_t end = std::min(last + 1, begin + chunk);
      chunks.emplace_back(begin, end);
      begin = end;
    }
    const std::uint64_t batch_begin = chunks.front().first, batch_end = chunks.back().second;
    if (batch_end - 1 > k) extend_positive(batch_end - 1 - k);
    std::vector<std::vector<double>> queries(chunks.size());
    std::vector<KeyBlock> keys(chunks.size());
    numeric::parallel_for(threads, chunks.size(), [&](std::size_t c) {
      const auto [a, b] = chunks[c];
      const auto pairs = realised.realise(a, b);
      const std::uint64_t qa = std::max(a, std::min(b, k + 1));
      queries[c].assign(D * (b - qa), 0.0);
      keys[c] = KeyBlock{a, b, std::vector<double>(D * (b - a))};
      for (std::uint64_t p = a; p < b; ++p)
        realised.rotate(pairs, p - a, p >= qa ? &queries[c][D * (p - qa)] : nullptr,
                        &keys[c].keys[D * (p - a)]);
    });
    for (auto& kb : keys) store.append(std::move(kb));
    store.evict(options.key_store_bytes, batch_begin > k ? batch_begin - k : 0);
    std::vector<ChunkOutcome> outcomes(chunks.size());
    numeric::parallel_for(threads, chunks.size(), [&](std::size_t c) {
      const auto [a, b] = chunks[c];
      const std::uint64_t qa = std::max(a, std::min(b, k + 1));
      if (qa < b) outcomes[c] = evaluate(qa, b, queries[c], qa);
    });
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const auto [a, b] = chunks[c];
      const ChunkOutcome& o = outcomes[c];
      out.scores_evaluated += o.scores;
      if (b > k + 1) last_query = b - 1;
      if (!o.fail_query) continue;
      const std::uint64_t i = *o.fail_query;
      last_query = i;
      out.n_max = i - 2;
      out.fail_query = i;
      out.fail_competitor = o.fail_competitor;
      out.fail_offset = static_cast<std::int64_t>(i) - static_cast<std::int64_t>(k) -
                        static_cast<std::int64_t>(*o.fail_competitor);
      out.target_score = o.target;
      out.competitor_score = o.competitor;
      out.gap = exact_rational(o.target) - exact_rational(o.competitor);
      failed = true;
      break;
    }
  }
  out.candidate_offsets =
      negative.size() +
      static_cast<std::uint64_t>(
          std::upper_bound(positive.begin(), positive.end(), last_query > k ? last_query - k : 0) -
          positive.begin());
  if (!failed) {
    out.n_max = options.max_length;
    out.at_limit = true;
  }
  out.seconds = numeric::seconds_since(start);
  return out;
}

RangeEstimate estimate_certified_range_fast(const FixedOffsetHead& head, std::uint64_t max_length,
                                            unsigned threads) {
  if (auto why = fast_range_refusal(head))
    throw InvalidArgument("the candidate algorithm does not apply: " + *why);
  const mpq_class E = *realised_score_error_bound(head);
  const RealisedHead realised(head);
  const double D = static_cast<double>(realised.dim());
  const double L = static_cast<double>(max_length) + 2;
  RangeEstimate est;
  // realisation and rotation of a probe of positions
  const std::uint64_t probe = std::min<std::uint64_t>(256, max_length + 2);
  auto t0 = std::chrono::steady_clock::now();
  {
    const auto pairs = realised.realise(0, probe);
    std::vector<double> q(realised.dim()), kk(realised.dim());
    for (std::uint64_t p = 0; p < probe; ++p) realised.rotate(pairs, p, q.data(), kk.data());
  }
  est.seconds_per_position = numeric::seconds_since(t0) / static_cast<double>(probe);
  // candidate density over a probe of offsets
  const std::uint64_t offsets = std::min<std::uint64_t>(20000, max_length);
  t0 = std::chrono::steady_clock::now();
  CandidateEnumerator e(head, E);
  std::vector<std::uint64_t> found;
  e.extend(offsets, found);
  const double per_offset = numeric::seconds_since(t0) / static_cast<double>(offsets);
  est.candidate_density = static_cast<double>(found.size()) / static_cast<double>(offsets);
  const double rho = est.candidate_density;
  const double kept = static_cast<double>(kKeyStoreBytes) / (8 * D);
  const double far = L > kept ? rho * (L - kept) * (L - kept) / 2 : 0;  // keys realised again
  const double score_seconds = 2e-9 * D;
  const double work = L * (est.seconds_per_position + per_offset) +
                      far * est.seconds_per_position / 2 + (L + rho * L * L / 2) * score_seconds;
  est.seconds = work / std::max(1u, threads);
  const double batch = 4.0 * std::max(1u, threads) *
                       static_cast<double>(std::max<std::uint64_t>(64, 131072 / std::max(1.0, D)));
  est.bytes = std::min(L, kept) * 8 * D + batch * 16 * D + 8 * rho * L;
  return est;
}

}  // namespace ropesim::proofs
