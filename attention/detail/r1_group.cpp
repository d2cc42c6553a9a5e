// The r1/r3 evaluator group (evaluator_groups.hpp): the exact angle θ·i or the rational turn
// r/m, cos and sin rounded once per target format; the fast path position by position
// (fast_trig.hpp) and in lanes (fast_trig_batch.hpp).
#include <mpfr.h>

#include <algorithm>
#include <numeric>

#include "attention/detail/evaluator_groups.hpp"
#include "numeric/binary64_rounding.hpp"
#include "numeric/mpfr_util.hpp"
#include "numeric/trig/fast_trig.hpp"

namespace ropesim::attention::detail {

namespace {

/// Whether r's target can take the fast path (prepare(): binary64's fast rounding into F, p ≤
/// 25). One group holds targets of one kind only: a target outside (fp64) would otherwise send
/// every target of the group down the exact path, and a sweep of several formats would cost
/// more than its formats apart (issue 34, item 7).
bool fast_target(const Realisation& r) {
  return numeric::Binary64Rounding(r.format, r.rounding).fast_rounding() &&
         r.format.precision <= 25;
}

/// r1 and r3: round_F(cos θi), round_F(sin θi) of the exact angle (THEORY §3 R1, R3).
/// For rational blocks θ = 2πa/m the angle is reduced exactly to 2π·r/m, r = a·i mod m, so
/// the values are T_d(i mod m) of R3 [RoPE-X eq. 7]; cos/sin that are rational (0, ±1/2,
/// ±1) are set exactly.
class R1Group final : public Group {
 public:
  R1Group(const RotaryBlock& b, const numeric::Engine& engine) : block_(b), engine_(engine) {}

  std::size_t slots() const override { return targets_.size(); }
  bool matches(const Realisation& r) const override {
    return (r.kind == Realisation::Kind::r1 || r.kind == Realisation::Kind::r3) &&
           (targets_.empty() || fast_target(r) == fast_targets_);
  }
  std::size_t add(const Realisation& r) override {
    if (targets_.empty()) fast_targets_ = fast_target(r);
    return find_ops(targets_, r.format, r.rounding, engine_);
  }

  void compute(std::uint64_t i, RealisedPair* out, Steps*) override {
    prepare();
    const std::size_t n = targets_.size();
    for (std::size_t k = 0; k < n; ++k) out[k].flags = 0;
    if (i == 0 || block_.theta.is_zero()) return set_exact(out, 0);
    if (unit_) {
      const std::uint64_t r = static_cast<std::uint64_t>((static_cast<u128>(a_) * (i % m_)) % m_);
      if (r == 0) return set_exact(out, 0);
      auto it = memo_.find(r);
      if (it != memo_.end()) {
        std::copy(it->second.begin(), it->second.end(), out);
        return;
      }
      // rational cos/sin: angle = 2π·k/12 with k = 12r/m
      bool exact_cos = false, exact_sin = false;
      int k12 = -1;
      if ((static_cast<u128>(r) * 12) % m_ == 0) {
        k12 = static_cast<int>((static_cast<u128>(r) * 12) / m_);
        // cos rational at k ∈ {0,2,3,4,6,8,9,10}; sin rational at k ∈ {0,1,3,5,6,7,9,11}
        exact_cos = (k12 == 0 || k12 == 2 || k12 == 3 || k12 == 4 || k12 == 6 || k12 == 8 ||
                     k12 == 9 || k12 == 10);
        exact_sin = (k12 == 0 || k12 == 1 || k12 == 3 || k12 == 5 || k12 == 6 || k12 == 7 ||
                     k12 == 9 || k12 == 11);
      }
      if (!exact_cos || !exact_sin) rounder_->of_product(*unit_, r, out, !exact_cos, !exact_sin);
      if (exact_cos || exact_sin) {
        static const int cos_twice[12] = {2, 0, 1, 0, -1, 0, -2, 0, -1, 0, 1, 0};
        static const int sin_twice[12] = {0, 1, 0, 2, 0, 1, 0, -1, 0, -2, 0, -1};
        for (std::size_t t = 0; t < n; ++t) {
          if (exact_cos)
            out[t].cos = targets_[t]->from_rational(mpq_class(cos_twice[k12], 2), out[t].flags);
          if (exact_sin)
            out[t].sin = targets_[t]->from_rational(mpq_class(sin_twice[k12], 2), out[t].flags);
        }
      }
      if (memo_.size() < (1u << 20)) memo_.emplace(r, std::vector<RealisedPair>(out, out + n));
      return;
    }
    rounder_->of_product(*theta_, i, out);
  }

  bool fast_capable() override {
    prepare();
    return fast_ok_;
  }

  // The angle's turns, exactly as compute() forms the angle: r/m of a rational turn (r = a·i
  // mod m, the same r), else τ·i with τ = θ/2π; then cos_sin_turns and the rounding test per
  // target (numeric/trig/fast_trig.hpp). i = 0, θ = 0, r = 0 and the rational cos/sin of
  // 12r ≡ 0 (mod m) stay with compute() (exact values).
  // r1/r3 form no angle step (compute() records no steps)
  FastAngle fast_angle() const override { return FastAngle::none; }

  Fast compute_fast(std::uint64_t i, FastPair* out) override {
    if (i == 0 || block_.theta.is_zero()) return Fast::exact_case;
    double fh = 0, fl = 0, ef = 0;
    if (unit_) {
      const std::uint64_t r =
          m_ <= (std::uint64_t{1} << 32)
              ? (a_ * (i % m_)) % m_
              : static_cast<std::uint64_t>((static_cast<u128>(a_) * (i % m_)) % m_);
      if (r == 0 || (static_cast<u128>(r) * 12) % m_ == 0) return Fast::exact_case;
      if (!numeric::trig::turns_of_ratio(r, m_, fh, fl, ef)) return Fast::undecided;
    } else if (!numeric::trig::turns_of_product(tau_, i, fh, fl, ef)) {
      return Fast::undecided;
    }
    numeric::trig::Approx c, s;
    if (!numeric::trig::cos_sin_turns(fh, fl, ef, c, s)) return Fast::undecided;
    for (std::size_t k = 0; k < targets_.size(); ++k) {
      const numeric::Binary64Rounding& f = targets_[k]->real().binary64();
      if (!numeric::trig::round_decided(f, c, out[k].cos) ||
          !numeric::trig::round_decided(f, s, out[k].sin))
        return Fast::undecided;
      out[k].flags = 0;  // finite cos/sin of a finite angle: no overflow, no NaN
    }
    return Fast::decided;
  }

  // compute_fast over a run of positions by the batched kernel (fast_trig_batch.hpp): the
  // residues r = a·i mod m advance by a per position (r and r mod m/gcd(m, 12), whose zero
  // marks the rational cos/sin, kept without a division), the exact cases are set aside, the
  // rest go through r1_batch in lanes; θ·i beyond 2^53 takes the scalar loop.
  bool compute_fast_batch(std::uint64_t begin, std::size_t n, Batch& b) override {
    const bool product_ok = n <= (std::uint64_t{1} << 53) && begin <= (std::uint64_t{1} << 53) - n;
    if (!kernel_ || block_.theta.is_zero() || (!unit_ && !product_ok)) {
      return Group::compute_fast_batch(begin, n, b);
    }
    double* x = b.input.data();
    if (unit_) {
      std::uint64_t r = static_cast<std::uint64_t>((static_cast<u128>(a_) * (begin % m_)) % m_);
      std::uint64_t r12 = r % step12_;
      for (std::size_t k = 0; k < n; ++k) {
        const bool exact = r12 == 0;  // r = 0 (i ≡ 0) or 12r ≡ 0 (mod m)
        b.status[k] = exact ? Fast::exact_case : Fast::decided;
        x[k] = exact ? 1.0 : static_cast<double>(r);
        r += a_;
        if (r >= m_) r -= m_;
        r12 += a12_;
        if (r12 >= step12_) r12 -= step12_;
      }
    } else {
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint64_t i = begin + k;
        b.status[k] = i == 0 ? Fast::exact_case : Fast::decided;
        x[k] = i == 0 ? 1.0 : static_cast<double>(i);
      }
    }
    for (std::size_t k = n; k % kBatchLanes != 0; ++k) x[k] = 1.0;
    r1_batch(*kernel_, x, n, b.cos.data(), b.sin.data(), b.decided.data());
    for (std::size_t k = 0; k < n; ++k) {
      if (b.status[k] == Fast::decided && b.decided[k] == 0) b.status[k] = Fast::undecided;
    }
    return true;
  }

 private:
  void prepare() {
    if (rounder_) return;
    std::vector<const FormatOps*> t;
    for (const auto& o : targets_) t.push_back(o.get());
    rounder_ = std::make_unique<PairRounder>(t);
    if (block_.turn && block_.turn->m.fits_ulong_p() &&
        block_.turn->m < mpz_class("18446744073709551615")) {
      m_ = block_.turn->m.get_ui();
      a_ = mpz_class(block_.turn->a % block_.turn->m).get_ui();
      unit_ = std::make_unique<numeric::AngleEnclosure>(ExactReal::pi_times(mpq_class(2, m_)));
    } else if (!block_.theta.is_zero()) {
      theta_ = std::make_unique<numeric::AngleEnclosure>(block_.theta);
      tau_ = numeric::trig::turn_of(block_.theta);
    }
    // The fast domain: every target rounds doubles the fast way (nearest-even, IEEE-style,
    // Binary64Rounding::fast_rounding) with p ≤ 25 (binary64's ~2^-50 relative bound then
    // decides all but ~2^-24 of the roundings); rational turns need m < 2^53.
    fast_ok_ =
        !targets_.empty() && (!unit_ || m_ < (std::uint64_t{1} << 53)) && (unit_ || tau_.valid);
    for (const auto& t : targets_) fast_ok_ = fast_ok_ && t->fast_round() && t->precision() <= 25;
    if (!fast_ok_) return;
    R1Kernel k;
    k.ratio = unit_ != nullptr;
    k.tau = tau_;
    k.m = static_cast<double>(m_);
    for (const auto& t : targets_) {
      const auto r = BatchRounding::of(t.get());
      if (!r) return;
      k.targets.push_back(*r);
    }
    if (unit_) {
      step12_ = m_ / std::gcd(m_, std::uint64_t{12});
      a12_ = a_ % step12_;
    }
    kernel_ = std::make_unique<R1Kernel>(std::move(k));
  }
  void set_exact(RealisedPair* out, int) {
    for (std::size_t k = 0; k < targets_.size(); ++k) {
      out[k].cos = targets_[k]->one();
      out[k].sin = targets_[k]->zero();
      out[k].flags = targets_[k]->one_flags();
    }
  }

  const RotaryBlock& block_;
  const numeric::Engine& engine_;
  std::vector<std::unique_ptr<FormatOps>> targets_;
  std::unique_ptr<PairRounder> rounder_;
  bool fast_ok_ = false;
  bool fast_targets_ = false;  ///< fast_target() of every member
  numeric::trig::Turn tau_;    ///< θ/(2π) in double-double (the θ·i case)
  std::unique_ptr<numeric::AngleEnclosure> theta_, unit_;
  std::uint64_t m_ = 0, a_ = 0;
  std::uint64_t step12_ = 1, a12_ = 0;  ///< m/gcd(m, 12) and a mod it (the batch's exact cases)
  std::unique_ptr<R1Kernel> kernel_;    ///< the batched kernel (null: the scalar loop)
  std::unordered_map<std::uint64_t, std::vector<RealisedPair>> memo_;
};

}  // namespace

std::unique_ptr<Group> make_r1_group(const RotaryBlock& b, const numeric::Engine& engine) {
  return std::make_unique<R1Group>(b, engine);
}

}  // namespace ropesim::attention::detail
