// The candidate offsets of the candidate algorithm (proofs/range/fast_range.hpp, THEORY §6): the
// offsets n whose ideal score C·S(n) may come within f_large + 2E of the target's, found by a
// binary64 pre-filter with a proven margin and decided exactly within it; and the quick limit
// that their density sets.
#include <mpfr.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/mpfr_util.hpp"
#include "proofs/range/fast_range.hpp"
#include "proofs/range/fast_range_detail.hpp"

namespace ropesim::proofs {

using numeric::Mpfr;

namespace detail {

CandidateEnumerator::CandidateEnumerator(const FixedOffsetHead& head,
                                         const std::optional<mpq_class>& E)
    : S_(head.ideal) {
  if (!E) {
    all_ = true;  // no global bound (pipelines): the per-query bounds alone exclude
    return;
  }
  T_ = S_.weight_sum() - (head.f_large_exact + 2 * *E) / head.C_exact;
  if (S_.blocks.size() == 1 && sgn(S_.weights[0]) > 0) {
    init_near_returns();
  } else {
    init_filtered_sum();
  }
}

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
void CandidateEnumerator::init_filtered_sum() {
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

IdealDoubles::IdealDoubles(const CosineSum& S) {
  // as init_filtered_sum: θ̂_d the double nearest the centre of θ_d's enclosure, e_d the
  // enclosure's distance to it (rounded up)
  constexpr double u = 0x1p-53;
  constexpr mpfr_prec_t P = 256;
  Mpfr lo(P), hi(P), err(P);
  for (std::size_t d = 0; d < S.blocks.size(); ++d) {
    const double wd = S.weights[d].get_d();
    S.blocks[d].theta().enclose(lo, hi);
    mpfr_add(err, lo, hi, MPFR_RNDN);
    mpfr_div_2ui(err, err, 1, MPFR_RNDN);
    const double th = mpfr_get_d(err, MPFR_RNDN);
    mpfr_sub_d(err, hi, th, MPFR_RNDU);
    double ed = mpfr_get_d(err, MPFR_RNDU);
    mpfr_d_sub(err, th, lo, MPFR_RNDU);
    ed = std::max(ed, mpfr_get_d(err, MPFR_RNDU));
    w.push_back(wd);
    theta.push_back(th);
    e.push_back(ed);
    W += std::fabs(wd);
    slope += std::fabs(wd) * (ed + u * std::fabs(th));
  }
}

double IdealDoubles::upper(std::uint64_t n) const {
  // |S̃(n) − S(n)| ≤ W·(2^-50 + (B+3)·2^-53) + n·slope (init_filtered_sum's argument; the
  // weights' doubles err by ≤ 2^-53·|w_d| relative); the factor 2 covers the evaluation of
  // the margin itself, and the final sum is rounded up
  const double nd = static_cast<double>(n);  // exact: n < 2^53
  double s = 0;
  for (std::size_t d = 0; d < theta.size(); ++d) s += w[d] * std::cos(nd * theta[d]);
  const double B = static_cast<double>(theta.size());
  const double margin = 2 * (W * (0x1p-50 + (B + 3) * 0x1p-53) + B * 0x1p-1000) + 2 * nd * slope;
  return std::nextafter(s + margin, HUGE_VAL);
}

OffsetIndex::OffsetIndex(double W) : buckets_(4096), lo_(-W - 1), scale_(4096 / (2 * W + 2)) {}

bool CandidateEnumerator::filtered_candidate(std::uint64_t n) const {
  const double nd = static_cast<double>(n);  // exact: n < 2^53
  double s = 0;
  for (std::size_t d = 0; d < theta_d_.size(); ++d) s += weights_d_[d] * std::cos(nd * theta_d_[d]);
  const double margin = margin0_ + nd * margin1_;
  if (s <= T_d_ - margin) return false;  // S(n) ≤ T: safe
  if (s > T_d_ + margin) return true;    // S(n) > T
  bool undecided = false;
  const int c = S_.compare(static_cast<std::int64_t>(n), T_, 4096, &undecided);
  return c > 0 || undecided;
}

void CandidateEnumerator::init_near_returns() {
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

bool CandidateEnumerator::candidate(std::uint64_t n) const {
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

}  // namespace detail

std::vector<std::uint64_t> candidate_offsets(const FixedOffsetHead& head, const mpq_class& E,
                                             std::uint64_t max_offset) {
  if (auto why = detail::structural_refusal(head))
    throw InvalidArgument("candidate offsets: " + *why);
  if (max_offset > kMaxScanLength)
    throw InvalidArgument("candidate offsets: max_offset beyond " + std::to_string(kMaxScanLength));
  detail::CandidateEnumerator e(head, E);
  std::vector<std::uint64_t> out;
  e.extend(max_offset, out);
  return out;
}

std::uint64_t fast_range_length_limit(const FixedOffsetHead& head) {
  const std::uint64_t B = std::max<std::uint64_t>(1, head.ideal.blocks.size());
  const std::uint64_t memory_limit = std::min(kFastRangeDefaultLength, kFastRangeQuickPairs / B);
  const bool one_frequency = head.ideal.blocks.size() == 1 && sgn(head.ideal.weights.at(0)) > 0;
  if (one_frequency || fast_range_refusal(head)) return memory_limit;
  // pipelines: every offset is a candidate (no global E), so the scan's quick limit; longer
  // runs go by their estimate (the per-query bounds usually exclude almost every offset)
  if (detail::measured_keys(head)) return std::min(memory_limit, scan_length_limit(head));
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

}  // namespace ropesim::proofs
