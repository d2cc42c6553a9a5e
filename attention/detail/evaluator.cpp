#include "attention/detail/evaluator.hpp"

#include <gmpxx.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "attention/detail/fast_trig.hpp"
#include "attention/detail/format_ops.hpp"
#include "attention/detail/hf_scaling.hpp"
#include "numeric/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/libm.hpp"
#include "numeric/mpfr_util.hpp"
#include "numeric/real_rounding.hpp"

namespace ropesim::attention::detail {

namespace {

__extension__ typedef unsigned __int128 u128;  // exact a·r mod m for 64-bit m

void add_step(Steps* steps, const char* name, const Value& v) {
  if (steps != nullptr) steps->emplace_back(name, v);
}

/// τ = θ/(2π) as a double-double with a proven error bound (fast_trig.hpp Turn): θ enclosed at
/// 320 bits, |θ − mid| ≤ (hi − lo); τ' = mid/(2π) at 320 bits (relative error ≤ 2^-318);
/// τh = RN(τ'), τl = RN(τ' − τh); err = |τ' − τh − τl| + (hi − lo)/6 + 2^-300·|τ'| rounded up.
Turn turn_of(const ExactReal& theta) {
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

/// Finds or creates the FormatOps for (format, rounding) in `list`; returns its index.
std::size_t find_ops(std::vector<std::unique_ptr<FormatOps>>& list, const Format& f, Rounding r,
                     const numeric::Engine& engine) {
  for (std::size_t k = 0; k < list.size(); ++k) {
    if (list[k]->format() == f && list[k]->rounding() == r) return k;
  }
  list.push_back(std::make_unique<FormatOps>(f, r, engine));
  return list.size() - 1;
}

/// numeric::CosSinRounder (the one rounding of cos/sin of exact angles, numeric/real_rounding.hpp)
/// over FormatOps targets, writing RealisedPair: components set, overflow OR-ed in as kOverflow.
class PairRounder {
 public:
  explicit PairRounder(const std::vector<const FormatOps*>& targets)
      : rounder_(reals(targets)), buffer_(targets.size()) {}

  void of_value(const Value& a, RealisedPair* out) {
    clear_flags();
    rounder_.of_value(a, buffer_.data());
    copy(out, true, true);
  }
  void of_product(numeric::AngleEnclosure& theta, std::uint64_t i, RealisedPair* out,
                  bool want_cos = true, bool want_sin = true) {
    clear_flags();
    rounder_.of_product(theta, i, buffer_.data(), want_cos, want_sin);
    copy(out, want_cos, want_sin);
  }

 private:
  static std::vector<const numeric::RealRounding*> reals(const std::vector<const FormatOps*>& t) {
    std::vector<const numeric::RealRounding*> r;
    for (const auto* o : t) r.push_back(&o->real());
    return r;
  }
  void clear_flags() {
    for (auto& b : buffer_) b.flags = numeric::Flags();
  }
  void copy(RealisedPair* out, bool want_cos, bool want_sin) {
    for (std::size_t k = 0; k < buffer_.size(); ++k) {
      if (want_cos) out[k].cos = std::move(buffer_[k].cos);
      if (want_sin) out[k].sin = std::move(buffer_[k].sin);
      if (buffer_[k].flags.test(numeric::Flag::overflow)) out[k].flags |= kOverflow;
    }
  }

  numeric::CosSinRounder rounder_;
  std::vector<numeric::RoundedCosSin> buffer_;
};

}  // namespace

struct BlockEvaluator::Group {
  virtual ~Group() = default;
  virtual std::size_t slots() const = 0;
  /// Can this group serve `r`?
  virtual bool matches(const Realisation& r) const = 0;
  /// Adds `r`; returns its slot.
  virtual std::size_t add(const Realisation& r) = 0;
  /// out[slot] for position i.
  virtual void compute(std::uint64_t i, RealisedPair* out, Steps* steps) = 0;
  /// Flags raised by the position-independent constants (pipelines; 0 otherwise).
  virtual std::uint8_t constant_flags() const { return 0; }

  /// The fast path's verdict for one position (compute_fast).
  enum class Fast { decided, exact_case, undecided };
  /// True when compute_fast may be called (every slot's format in the fast domain).
  virtual bool fast_capable() { return false; }
  /// out[slot] for position i by the binary64 fast path (attention/detail/fast_trig.hpp):
  /// `decided` — out written, the same elements as compute(); `exact_case` — an angle whose
  /// cos/sin are known exactly, left to compute(); `undecided` — the rounding test failed
  /// (a fallback). Precondition: fast_capable().
  virtual Fast compute_fast(std::uint64_t, FastPair*) { return Fast::undecided; }
};

namespace {

using Group = BlockEvaluator::Group;

/// r1 and r3: round_F(cos θi), round_F(sin θi) of the exact angle (THEORY §3 R1, R3).
/// For rational blocks θ = 2πa/m the angle is reduced exactly to 2π·r/m, r = a·i mod m, so
/// the values are T_d(i mod m) of R3 [RoPE-X eq. 7]; cos/sin that are rational (0, ±1/2,
/// ±1) are set exactly.
class R1Group final : public Group {
 public:
  R1Group(const RotaryBlock& b, const numeric::Engine& engine) : block_(b), engine_(engine) {}

  std::size_t slots() const override { return targets_.size(); }
  bool matches(const Realisation& r) const override {
    return r.kind == Realisation::Kind::r1 || r.kind == Realisation::Kind::r3;
  }
  std::size_t add(const Realisation& r) override {
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
  // target (attention/detail/fast_trig.hpp). i = 0, θ = 0, r = 0 and the rational cos/sin of
  // 12r ≡ 0 (mod m) stay with compute() (exact values).
  Fast compute_fast(std::uint64_t i, FastPair* out) override {
    if (i == 0 || block_.theta.is_zero()) return Fast::exact_case;
    double fh = 0, fl = 0, ef = 0;
    if (unit_) {
      const std::uint64_t r =
          m_ <= (std::uint64_t{1} << 32)
              ? (a_ * (i % m_)) % m_
              : static_cast<std::uint64_t>((static_cast<u128>(a_) * (i % m_)) % m_);
      if (r == 0 || (static_cast<u128>(r) * 12) % m_ == 0) return Fast::exact_case;
      if (!turns_of_ratio(r, m_, fh, fl, ef)) return Fast::undecided;
    } else if (!turns_of_product(tau_, i, fh, fl, ef)) {
      return Fast::undecided;
    }
    Approx c, s;
    if (!cos_sin_turns(fh, fl, ef, c, s)) return Fast::undecided;
    for (std::size_t k = 0; k < targets_.size(); ++k) {
      const numeric::Binary64Rounding& f = targets_[k]->real().binary64();
      if (!round_decided(f, c, out[k].cos) || !round_decided(f, s, out[k].sin))
        return Fast::undecided;
      out[k].flags = 0;  // finite cos/sin of a finite angle: no overflow, no NaN
    }
    return Fast::decided;
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
      tau_ = turn_of(block_.theta);
    }
    // The fast domain: every target rounds doubles the fast way (nearest-even, IEEE-style,
    // Binary64Rounding::fast_rounding) with p ≤ 25 (binary64's ~2^-50 relative bound then
    // decides all but ~2^-24 of the roundings); rational turns need m < 2^53.
    fast_ok_ =
        !targets_.empty() && (!unit_ || m_ < (std::uint64_t{1} << 53)) && (unit_ || tau_.valid);
    for (const auto& t : targets_) fast_ok_ = fast_ok_ && t->fast_round() && t->precision() <= 25;
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
  Turn tau_;  ///< θ/(2π) in double-double (the θ·i case)
  std::unique_ptr<numeric::AngleEnclosure> theta_, unit_;
  std::uint64_t m_ = 0, a_ = 0;
  std::unordered_map<std::uint64_t, std::vector<RealisedPair>> memo_;
};

/// Rounds cos/sin of an exact angle value in `ops`'s format, with a memo by bit pattern.
class CosSinOfValue {
 public:
  explicit CosSinOfValue(const FormatOps& ops)
      : ops_(ops),
        rounder_({&ops}),
        use_memo_(ops.precision() <= 16 && !ops.format().is_fixed_point()) {}

  RealisedPair operator()(const Value& angle) {
    std::uint64_t key = 0;
    if (use_memo_ && !angle.is_wide()) {
      key = angle.bits_key();
      auto it = memo_.find(key);
      if (it != memo_.end()) return it->second;
    }
    RealisedPair p;
    if (angle.is_nan() || angle.is_inf()) {
      // cos(±inf) = sin(±inf) = NaN (IEEE 754 invalid operation)
      p.cos = ops_.nan();
      p.sin = ops_.nan();
      p.flags = kNaN;
    } else if (angle.is_zero()) {
      p.cos = ops_.one();
      p.flags = ops_.one_flags();
      p.sin = angle;  // sin(±0) = ±0 exactly
    } else {
      rounder_.of_value(angle, &p);
    }
    if (use_memo_ && !angle.is_wide()) memo_.emplace(key, p);
    return p;
  }

 private:
  const FormatOps& ops_;
  PairRounder rounder_;
  bool use_memo_;
  std::unordered_map<std::uint64_t, RealisedPair> memo_;
};

/// r2: θ̂ = round_F(θ), î = round_F(i), φ = round_F(θ̂·î), round_F(cos φ), round_F(sin φ)
/// (THEORY §3 R2; RoPE-X §2.4).
class R2Group final : public Group {
 public:
  R2Group(const RotaryBlock& b, const Realisation& r, const numeric::Engine& engine)
      : ops_(r.format, r.rounding, engine), cos_sin_(ops_) {
    theta_hat_ = ops_.round_real(b.theta, theta_flags_);
  }
  std::size_t slots() const override { return 1; }
  bool matches(const Realisation& r) const override {
    return r.kind == Realisation::Kind::r2 && r.format == ops_.format() &&
           r.rounding == ops_.rounding();
  }
  std::size_t add(const Realisation&) override { return 0; }
  void compute(std::uint64_t i, RealisedPair* out, Steps* steps) override {
    std::uint8_t fl = theta_flags_;
    const Value i_hat = ops_.from_uint(i, fl);
    const Value phi = ops_.mul(theta_hat_, i_hat, fl);
    add_step(steps, "theta_hat", theta_hat_);
    add_step(steps, "i_hat", i_hat);
    add_step(steps, "phi", phi);
    *out = cos_sin_(phi);
    out->flags |= fl;
  }

 private:
  FormatOps ops_;
  CosSinOfValue cos_sin_;
  Value theta_hat_;
  std::uint8_t theta_flags_ = 0;
};

/// One pipeline step (realisation.hpp StepFormat): the arithmetic of its compute format and
/// rounding, and the cast into its storage format when it has one.
class StepOps {
 public:
  StepOps(const StepFormat& f, Rounding fallback, const numeric::Engine& engine)
      : compute_(f.compute, f.rounding_or(fallback), engine) {
    if (f.store) store_ = std::make_unique<FormatOps>(*f.store, f.rounding_or(fallback), engine);
  }
  /// The compute format's arithmetic.
  const FormatOps& operator*() const { return compute_; }
  const FormatOps* operator->() const { return &compute_; }
  /// The step's result as stored: cast into the storage format, if any.
  Value store(const Value& v, std::uint8_t& flags) const {
    return store_ ? store_->convert(v, flags) : v;
  }
  /// The storage format's arithmetic, or null when the result stays in the compute format.
  const FormatOps* store_ops() const { return store_.get(); }
  /// True when the compute and storage formats round doubles the fast way
  /// (Binary64Rounding::fast_rounding: nearest-even, IEEE-style).
  bool fast_round() const { return compute_.fast_round() && (!store_ || store_->fast_round()); }
  /// store() of an exact double on the fast path (precondition: fast_round()).
  double store_double(double v) const { return store_ ? store_->round_double(v) : v; }

 private:
  FormatOps compute_;
  std::unique_ptr<FormatOps> store_;
};

/// Framework pipelines (NUMERIC §3; realisation.hpp PipelineSteps): per block the constants
/// (exponent, power, inv_freq or theta_scale), per position t, the angle by the recipe and
/// cos/sin, each step rounded into its compute format then cast to its storage format; then
/// one cast per table format. A step's inputs are first converted to its compute format
/// (PyTorch type promotion / autocast), except the angle's GEMM operands, which are rounded
/// to angle_operands and multiplied exactly into the angle's compute format.
/// Flags of the constants are kept apart from the per-position flags: they do not depend
/// on the position (constant_flags()).
class PipelineGroup final : public Group {
 public:
  PipelineGroup(const Schedule& s, std::size_t block, const Realisation& r,
                const numeric::Engine& engine)
      : steps_(r.steps),
        rounding_(r.rounding),
        engine_(engine),
        exponent_(r.steps.exponent, r.rounding, engine),
        power_(r.steps.power, r.rounding, engine),
        inv_(r.steps.inv_freq, r.rounding, engine),
        pos_(r.steps.position, r.rounding, engine),
        ang_(r.steps.angle, r.rounding, engine),
        cs_(r.steps.cos_sin, r.rounding, engine),
        scaling_(r.steps.attention_scaling, r.rounding, engine),
        cos_sin_(*cs_) {
    if (r.steps.angle_operands) {
      operands_ = std::make_unique<FormatOps>(*r.steps.angle_operands, r.rounding, engine);
    }
    constants(s, s.blocks[block]);
    if (steps_.cos_sin.implementation == numeric::LibmImplementation::sleef_u10) {
      // The lane mates: blocks 8⌊d/8⌋ … 8⌊d/8⌋+7 at the same position share one SLEEF vector
      // (realisation.hpp StepFormat::implementation; check_applicable: nb % 8 == 0). Their
      // angles are formed by their own step lists; their cos/sin are not needed here.
      numeric::require_sleef_avx2();
      Realisation mate = r;
      mate.steps.cos_sin.implementation = numeric::LibmImplementation::correctly_rounded;
      const std::size_t first = block - block % numeric::kSleefLanes;
      lane_ = block - first;
      mates_.resize(numeric::kSleefLanes);
      for (std::size_t l = 0; l < numeric::kSleefLanes; ++l) {
        if (l != lane_ && first + l < s.blocks.size()) {
          mates_[l] = std::make_unique<PipelineGroup>(s, first + l, mate, engine);
        }
      }
    }
  }
  std::size_t slots() const override { return tables_.size(); }
  bool matches(const Realisation& r) const override {
    PipelineSteps a = r.steps, b = steps_;
    a.name = b.name = "";
    a.table = b.table = Format::fp32();
    a.rotation = b.rotation = StepFormat{};
    a.output = b.output = Format::fp32();
    a.arithmetic = b.arithmetic = RotationArithmetic::theory;
    return r.kind == Realisation::Kind::pipeline && r.rounding == rounding_ && a == b;
  }
  std::size_t add(const Realisation& r) override {
    return find_ops(tables_, r.steps.table, r.rounding, engine_);
  }
  std::uint8_t constant_flags() const override { return const_flags_; }

  bool fast_capable() override {
    if (!fast_decided_) decide_fast();
    return fast_ok_;
  }

  // The steps of compute() on doubles: every step's result is the exact result of its operation
  // rounded once into its format (Binary64Rounding::round of an exact double: products of
  // elements with p ≤ 26 are exact in binary64; ÷ and chained × of elements of one fast_arith
  // format are innocuous double roundings, numeric/binary64_rounding.hpp); cos and sin by
  // cos_sin_turns and the rounding test. Non-finite intermediates (overflow, NaN) and positions
  // ≥ 2^53 go to compute(), which raises the flags.
  Fast compute_fast(std::uint64_t i, FastPair* out) override {
    if (zero_angle_) {
      for (std::size_t k = 0; k < tables_.size(); ++k) out[k] = zero_out_[k];
      return Fast::decided;
    }
    const std::uint64_t t_index = tile_ != 0 ? i % tile_ : i;
    if (t_index >= (std::uint64_t{1} << 53)) return Fast::undecided;
    const double t = pos_.store_double(pos_->round_double(static_cast<double>(t_index)));
    const double x = operands_                                  ? operands_->round_double(t)
                     : ang_->format() == x_format_of_position() ? t
                                                                : ang_->round_double(t);
    double a = 0;
    switch (steps_.recipe) {
      case AngleRecipe::product:
      case AngleRecipe::power:
        a = ang_->round_double(factor_d_ * x);
        break;
      case AngleRecipe::quotient:
        a = ang_->round_double(x / factor_d_);
        break;
      case AngleRecipe::chained:
        a = x;
        for (std::size_t k = 0; k < chain_; ++k) a = ang_->round_double(a * factor_d_);
        break;
    }
    a = ang_.store_double(a);
    if (!angle_in_cs_) a = cs_->round_double(a);
    if (!std::isfinite(a)) return Fast::undecided;
    double c = 1.0, sn = a;  // cos(±0) = 1 (one() is 1 here: decide_fast), sin(±0) = ±0
    if (a != 0) {
      double fh = 0, fl = 0, ef = 0;
      if (!turns_of_radians(a, fh, fl, ef)) return Fast::undecided;
      Approx ca, sa;
      if (!cos_sin_turns(fh, fl, ef, ca, sa)) return Fast::undecided;
      const numeric::Binary64Rounding& f = cs_->real().binary64();
      if (!round_decided(f, ca, c) || !round_decided(f, sa, sn)) return Fast::undecided;
    }
    c = cs_.store_double(c);
    sn = cs_.store_double(sn);
    if (scale_) {
      c = scaling_.store_double(scaling_->round_double(scaling_->round_double(c) * scale_d_));
      sn = scaling_.store_double(scaling_->round_double(scaling_->round_double(sn) * scale_d_));
    }
    for (std::size_t k = 0; k < tables_.size(); ++k) {
      out[k].cos = tables_[k]->round_double(c);
      out[k].sin = tables_[k]->round_double(sn);
      if (!std::isfinite(out[k].cos) || !std::isfinite(out[k].sin)) return Fast::undecided;
      out[k].flags = 0;
    }
    return Fast::decided;
  }

  void compute(std::uint64_t i, RealisedPair* out, Steps* steps) override {
    RealisedPair c;
    std::uint8_t fl = 0;
    for (const auto& [name, v] : constant_steps_) add_step(steps, name.c_str(), v);
    if (zero_angle_) {
      c.cos = cs_->one();
      c.sin = cs_->zero();
      c.flags = cs_->one_flags();
    } else {
      const Value ac = angle_at(i, fl, steps);
      c = cos_sin_of(ac, i);
      c.cos = cs_.store(c.cos, c.flags);
      c.sin = cs_.store(c.sin, c.flags);
    }
    c.flags |= fl;
    add_step(steps, "cos_fp", c.cos);
    add_step(steps, "sin_fp", c.sin);
    if (scale_) {
      // Hugging Face: cos = emb.cos() * attention_scaling, sin likewise (then the table cast)
      c.cos = scaling_.store(scaling_->mul(scaling_->convert(c.cos, c.flags), *scale_, c.flags),
                             c.flags);
      c.sin = scaling_.store(scaling_->mul(scaling_->convert(c.sin, c.flags), *scale_, c.flags),
                             c.flags);
      add_step(steps, "cos_scaled", c.cos);
      add_step(steps, "sin_scaled", c.sin);
    }
    const Format& cs_stored = scale_ ? steps_.attention_scaling.stored() : steps_.cos_sin.stored();
    for (std::size_t k = 0; k < tables_.size(); ++k) {
      RealisedPair& o = out[k];
      o.flags = c.flags;
      if (tables_[k]->format() == cs_stored && tables_[k]->rounding() == rounding_) {
        o.cos = c.cos;
        o.sin = c.sin;
      } else {
        o.cos = tables_[k]->convert(c.cos, o.flags);
        o.sin = tables_[k]->convert(c.sin, o.flags);
      }
    }
  }

 private:
  /// The angle at position i by the recipe, stored, then converted into cos_sin's compute
  /// format (the argument of cos and sin).
  Value angle_at(std::uint64_t i, std::uint8_t& fl, Steps* steps) const {
    // Resonance table: a tabulated block reads entry i mod λ of its one-period table
    const std::uint64_t t_index = tile_ != 0 ? i % tile_ : i;
    const Value t = pos_.store(pos_->from_uint(t_index, fl), fl);
    add_step(steps, "t", t);
    Value angle;
    switch (steps_.recipe) {
      case AngleRecipe::product:
        angle = ang_->mul(factor_, operand(t, fl), fl);
        break;
      case AngleRecipe::quotient:
        angle = ang_->div(operand(t, fl), factor_, fl);
        break;
      case AngleRecipe::chained:
        angle = operand(t, fl);
        for (std::size_t k = 0; k < chain_; ++k) angle = ang_->mul(angle, factor_, fl);
        break;
      case AngleRecipe::power:
        angle = ang_->mul(operand(t, fl), factor_, fl);
        break;
    }
    angle = ang_.store(angle, fl);
    add_step(steps, "angle", angle);
    return angle_in_cs_ ? angle : cs_->convert(angle, fl);
  }

  /// This block's cos_sin argument at position i as a binary32 lane of a SLEEF vector (a
  /// dropped or θ = 0 block has the angle 0, as inv_freq = 0 gives in PyTorch).
  float lane_angle(std::uint64_t i) const {
    if (zero_angle_) return 0.0f;
    std::uint8_t fl = 0;
    return static_cast<float>(angle_at(i, fl, nullptr).to_double());
  }

  /// A binary32 library result as a Value, with the flags IEEE would raise.
  static Value library_value(float result, float argument, std::uint8_t& flags) {
    if (std::isnan(result)) flags |= kNaN;
    if (std::isinf(result) && std::isfinite(argument)) flags |= kOverflow;
    return Value::from_double_exact(static_cast<double>(result));
  }

  /// cos and sin of the argument `ac` (cos_sin's compute format) by the step's implementation.
  RealisedPair cos_sin_of(const Value& ac, std::uint64_t i) {
    using numeric::LibmImplementation;
    if (steps_.cos_sin.implementation == LibmImplementation::correctly_rounded) {
      return cos_sin_(ac);
    }
    const float x = static_cast<float>(ac.to_double());  // fp32 compute (parse_realisation)
    RealisedPair p;
    if (steps_.cos_sin.implementation == LibmImplementation::glibc) {
      p.cos = library_value(numeric::glibc_cosf(x), x, p.flags);
      p.sin = library_value(numeric::glibc_sinf(x), x, p.flags);
      return p;
    }
    numeric::SleefVector lanes{};
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      lanes[l] = l == lane_ ? x : (mates_[l] ? mates_[l]->lane_angle(i) : 0.0f);
    }
    p.cos = library_value(numeric::sleef_cosf8_u10(lanes)[lane_], x, p.flags);
    p.sin = library_value(numeric::sleef_sinf8_u10(lanes)[lane_], x, p.flags);
    return p;
  }

  /// Decides the fast domain (after add(): the tables are known). Every step rounds doubles
  /// the fast way (nearest-even, IEEE-style); the angle's operations are exact in binary64 or
  /// innocuous double roundings: without GEMM operands the angle format is fast_arith (p ≤ 25
  /// or binary64); with them, their format has p ≤ 26 and the recipe is one product (two
  /// ≤ 26-bit factors: exact); cos/sin in a format with p ≤ 25 by the correctly rounded step
  /// (library steps keep the exact path: their results are already binary values); the
  /// attention scaling's format is fast_arith. A θ = 0 block caches its constant output.
  void decide_fast() {
    fast_decided_ = true;
    bool ok = steps_.cos_sin.implementation == numeric::LibmImplementation::correctly_rounded &&
              !tables_.empty() && pos_.fast_round() && ang_.fast_round() && cs_.fast_round() &&
              cs_->precision() <= 25 && cs_->one().to_double() == 1.0 && cs_->one_flags() == 0;
    if (operands_) {
      ok = ok && operands_->fast_round() && operands_->precision() <= 26 &&
           ang_->precision() <= 26 &&
           (steps_.recipe == AngleRecipe::product || steps_.recipe == AngleRecipe::power);
    } else {
      ok = ok && ang_->fast_arith();
    }
    if (scale_) ok = ok && scaling_.fast_round() && scaling_->fast_arith();
    for (const auto& t : tables_) ok = ok && t->fast_round();
    if (ok && zero_angle_) {
      std::vector<RealisedPair> tmp(tables_.size());
      compute(0, tmp.data(), nullptr);
      for (const auto& p : tmp) {
        if (p.cos.is_wide() || p.sin.is_wide() || !p.cos.is_finite() || !p.sin.is_finite())
          ok = false;
        zero_out_.push_back({p.cos.to_double(), p.sin.to_double(), p.flags});
      }
    }
    if (ok && !zero_angle_) {
      ok = !factor_.is_wide() && std::isfinite(factor_.to_double()) &&
           (!scale_ || (!scale_->is_wide() && std::isfinite(scale_->to_double())));
      factor_d_ = factor_.to_double();
      if (scale_) scale_d_ = scale_->to_double();
    }
    fast_ok_ = ok;
  }

  /// An input of the angle step: the GEMM operand rounding, or the conversion into the
  /// angle's compute format.
  Value operand(const Value& x, std::uint8_t& fl) const {
    if (operands_) return operands_->convert(x, fl);
    return ang_->format() == x_format_of_position() ? x : ang_->convert(x, fl);
  }
  const Format& x_format_of_position() const { return steps_.position.stored(); }

  void constant(const char* name, const Value& v) { constant_steps_.emplace_back(name, v); }

  /// β̂ for the power step (PipelineSteps::base_exact / base_format).
  Value base_value(const Schedule& s, std::uint8_t& fl) const {
    const Value python = Value::from_double_exact(numeric::python_float(*s.base));
    if (steps_.base_format)
      return FormatOps(*steps_.base_format, rounding_, engine_).convert(python, fl);
    return power_->convert(python, fl);
  }
  /// p = β̂^e, rounded into power's compute format (or computed by the step's library), then
  /// stored. `element` is e's index in PyTorch's exponent tensor arange(0, D, 2) (the frequency
  /// index k; unset for llama.cpp's one theta_scale), which decides whether cpu_kernel_vec
  /// takes it in a SLEEF vector or in its scalar tail (StepFormat::implementation).
  Value power_of(const Schedule& s, const Value& e, std::uint8_t& fl,
                 std::optional<std::uint64_t> element) const {
    using numeric::LibmImplementation;
    if (steps_.base_exact && e.is_finite()) {
      return power_.store(
          power_->round_real(ExactReal::power(*s.base, numeric::exact_rational(e)), fl), fl);
    }
    if (steps_.power.implementation == LibmImplementation::correctly_rounded) {
      return power_.store(power_->pow(base_value(s, fl), e, fl), fl);
    }
    // fp32 compute (parse_realisation): the operands as the binary32 arguments of powf
    const float base = static_cast<float>(base_value(s, fl).to_double());
    const float exponent = static_cast<float>(power_->convert(e, fl).to_double());
    bool vector = steps_.power.implementation == LibmImplementation::sleef_u10;
    if (vector && element) {
      const std::uint64_t n = (*s.exponent_dim + 1) / 2;  // arange(0, D, 2).numel()
      const std::uint64_t block = 2 * numeric::kSleefLanes;
      vector = *element < n / block * block;
    }
    float result = 0;
    if (vector) {
      numeric::SleefVector x{}, y{};
      x.fill(base);
      y.fill(exponent);
      result = numeric::sleef_powf8_u10(x, y)[0];
    } else {
      result = numeric::glibc_powf(base, exponent);
    }
    if (std::isnan(result)) fl |= kNaN;
    if (std::isinf(result) && std::isfinite(base) && std::isfinite(exponent)) fl |= kOverflow;
    return power_.store(Value::from_double_exact(static_cast<double>(result)), fl);
  }

  void constants(const Schedule& s, const RotaryBlock& b) {
    angle_in_cs_ = steps_.angle.stored() == steps_.cos_sin.compute;
    std::uint8_t& fl = const_flags_;
    if (s.attention_scaling) {
      // the Python float s as the scalar operand of the fp32 tensor product
      scale_ = scaling_->from_rational(*s.attention_scaling, fl);
      constant("attention_scaling", *scale_);
    }
    if (b.dropped || b.theta.is_zero()) {
      zero_angle_ = true;  // p-RoPE dropped frequency / θ = 0: the table holds (1, 0)
      return;
    }
    if (steps_.resonance) return resonance_constants(b);
    const bool has_base = s.base.has_value() && s.exponent_dim.has_value();
    const bool chain_or_power =
        steps_.recipe == AngleRecipe::chained || steps_.recipe == AngleRecipe::power;
    Value factor;
    if (!chain_or_power) {
      Value p;  // the power β̂^e (quotient) or inv_freq (product)
      if (!has_base) {
        // no β: the exact per-position angle θ (product) or its reciprocal (quotient),
        // rounded once
        if (steps_.recipe == AngleRecipe::product) {
          p = inv_.store(inv_->round_real(b.theta, fl), fl);
          constant("inv_freq", p);
        } else {
          p = power_.store(power_->round_real(ExactReal::rational(1) / b.theta, fl), fl);
          constant("power", p);
        }
      } else {
        // hf: e = fp32(fp32(2k)/fp32(D)); p = fp32(β^e); inv_freq = fp32(1/p)
        const Value two_k = exponent_->from_uint(2 * b.frequency_index, fl);
        const Value dim = exponent_->from_uint(*s.exponent_dim, fl);
        const Value e = exponent_.store(exponent_->div(two_k, dim, fl), fl);
        constant("exponent", e);
        p = power_of(s, e, fl, b.frequency_index);
        constant("power", p);
        if (steps_.recipe == AngleRecipe::product) {
          Value inv = inv_->div(inv_->one(), inv_->convert(p, fl), fl);
          inv = hf_scaled_inv_freq(*inv_, inv, p, s, b, fl);  // the schedule's rope scaling
          p = inv_.store(inv, fl);
          constant("inv_freq", p);
        }
      }
      factor = p;
    } else {
      // llama.cpp: theta_scale = powf(β, -2.0f/n_dims)
      const Value minus_two = exponent_->convert(Value::from_double_exact(-2.0), fl);
      const Value dim = exponent_->from_uint(*s.exponent_dim, fl);
      const Value e = exponent_.store(exponent_->div(minus_two, dim, fl), fl);
      constant("exponent", e);
      const Value theta_scale = power_of(s, e, fl, std::nullopt);
      constant("theta_scale", theta_scale);
      if (steps_.recipe == AngleRecipe::chained) {
        chain_ = b.frequency_index;
        factor = theta_scale;
      } else {
        // powf(theta_scale, k) of a stored value and an integer exponent: an exact rational
        mpq_class q = numeric::exact_rational(theta_scale);
        mpz_class num, den;
        mpz_pow_ui(num.get_mpz_t(), q.get_num_mpz_t(), b.frequency_index);
        mpz_pow_ui(den.get_mpz_t(), q.get_den_mpz_t(), b.frequency_index);
        factor = inv_.store(inv_->from_rational(mpq_class(num, den), fl), fl);
        constant("inv_freq", factor);
      }
    }
    // The angle step's constant input: GEMM operand, or converted to the angle's format.
    factor_ = operands_ ? operands_->convert(factor, fl) : ang_->convert(factor, fl);
  }

  /// Resonance RoPE's reference (realisation.hpp ResonanceTable; sheryc/resonance_rope
  /// `resonance_register`, `compute_freqs`): λ = the block's wavelength (check_applicable
  /// guarantees θ = 2π/λ); r_inv_freq = fp32(fp32(1/λ)·fp32(2π)) in inv_freq's format (PyTorch
  /// `2 * math.pi / r_wavelengths` is reciprocal() * other); the block is tabulated (tile_ = λ)
  /// when λ ≤ seq_len or seq_len is unset.
  void resonance_constants(const RotaryBlock& b) {
    std::uint8_t& fl = const_flags_;
    const std::uint64_t lambda = b.turn->m.get_ui();
    const Value wavelength = inv_->from_uint(lambda, fl);
    constant("wavelength", wavelength);
    const Value reciprocal = inv_->div(inv_->one(), wavelength, fl);
    const Value two_pi = inv_->round_real(ExactReal::pi_times(2), fl);
    const Value r_inv_freq = inv_.store(inv_->mul(reciprocal, two_pi, fl), fl);
    constant("inv_freq", r_inv_freq);
    const auto& seq_len = steps_.resonance->seq_len;
    if (!seq_len || lambda <= *seq_len) tile_ = lambda;
    factor_ = operands_ ? operands_->convert(r_inv_freq, fl) : ang_->convert(r_inv_freq, fl);
  }

  PipelineSteps steps_;
  Rounding rounding_;
  const numeric::Engine& engine_;
  StepOps exponent_, power_, inv_, pos_, ang_, cs_, scaling_;
  std::unique_ptr<FormatOps> operands_;
  std::optional<Value> scale_;
  CosSinOfValue cos_sin_;
  std::vector<std::unique_ptr<FormatOps>> tables_;
  bool zero_angle_ = false, angle_in_cs_ = false;
  std::uint8_t const_flags_ = 0;
  Steps constant_steps_;
  Value factor_;
  std::size_t chain_ = 0;
  // fast path (decide_fast)
  bool fast_decided_ = false, fast_ok_ = false;
  double factor_d_ = 0, scale_d_ = 0;
  std::vector<FastPair> zero_out_;
  std::uint64_t tile_ = 0;  ///< Resonance table: λ of a tabulated block, 0 = not tabulated
  /// cos_sin=fp32:sleef-u10: this block's lane and the groups of its lane mates (null: own
  /// lane, or past the last block).
  std::size_t lane_ = 0;
  std::vector<std::unique_ptr<PipelineGroup>> mates_;
};

}  // namespace

BlockEvaluator::BlockEvaluator(const Schedule& s, std::size_t block,
                               const std::vector<Realisation>& members,
                               const numeric::Engine& engine) {
  if (block >= s.blocks.size()) {
    throw InvalidArgument("block index " + std::to_string(block) + " out of range 0.." +
                          std::to_string(s.blocks.size()) + " of " + s.spec);
  }
  const RotaryBlock& b = s.blocks[block];
  if (b.axis_angles.size() > 1) {
    // θ here would be the diagonal Σ_a θ_{d,a}: exact for r1/r3, but r2 and pipelines form the
    // angle per axis (evaluate_mixed), so they must not stream this block by scalar position
    for (const auto& r : members) {
      if (r.kind == Realisation::Kind::r2 || r.kind == Realisation::Kind::pipeline) {
        throw InvalidArgument("block " + std::to_string(block) + " of '" + s.spec +
                              "' mixes position axes: " + r.name() +
                              " forms its angle per axis; accepted: realise it at a tuple "
                              "(realise, query_position, census) or use r1/r3");
      }
    }
  }
  for (const auto& r : members) {
    std::size_t g = groups_.size();
    for (std::size_t k = 0; k < groups_.size(); ++k) {
      if (groups_[k]->matches(r)) {
        g = k;
        break;
      }
    }
    if (g == groups_.size()) {
      switch (r.kind) {
        case Realisation::Kind::r1:
        case Realisation::Kind::r3:
          groups_.push_back(std::make_unique<R1Group>(b, engine));
          break;
        case Realisation::Kind::r2:
          groups_.push_back(std::make_unique<R2Group>(b, r, engine));
          break;
        case Realisation::Kind::pipeline:
          groups_.push_back(std::make_unique<PipelineGroup>(s, block, r, engine));
          break;
      }
    }
    member_slot_.emplace_back(g, groups_[g]->add(r));
  }
}

BlockEvaluator::~BlockEvaluator() = default;

namespace {

std::atomic<std::uint64_t> total_evaluations{0}, total_fallbacks{0}, total_exact_cases{0},
    total_exact_only{0};

}  // namespace

FastPathStats fast_path_totals() {
  FastPathStats s;
  s.evaluations = total_evaluations.load(std::memory_order_relaxed);
  s.fallbacks = total_fallbacks.load(std::memory_order_relaxed);
  s.exact_cases = total_exact_cases.load(std::memory_order_relaxed);
  s.exact_only = total_exact_only.load(std::memory_order_relaxed);
  return s;
}

/// Positions begin..end-1: each group by compute_fast when it is fast-capable (and the fast path
/// is enabled), by compute() otherwise or when compute_fast does not decide; then
/// emit(member, k, fast, const FastPair&, const RealisedPair&): the FastPair when fast, else
/// the RealisedPair.
template <class Emit>
void BlockEvaluator::run(std::uint64_t begin, std::uint64_t end, Emit&& emit) {
  if (end < begin) {
    throw InvalidArgument("BlockEvaluator: end " + std::to_string(end) + " < begin " +
                          std::to_string(begin));
  }
  const std::size_t n = end - begin;
  const std::size_t ng = groups_.size();
  std::vector<std::size_t> offset(ng + 1, 0);
  for (std::size_t g = 0; g < ng; ++g) offset[g + 1] = offset[g] + groups_[g]->slots();
  scratch_.resize(offset.back());
  fast_scratch_.resize(offset.back());
  std::vector<char> capable(ng), fast(ng);
  for (std::size_t g = 0; g < ng; ++g) capable[g] = fast_enabled_ && groups_[g]->fast_capable();
  FastPathStats local;
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t i = begin + k;
    for (std::size_t g = 0; g < ng; ++g) {
      fast[g] = 0;
      if (capable[g]) {
        ++local.evaluations;
        switch (groups_[g]->compute_fast(i, fast_scratch_.data() + offset[g])) {
          case Group::Fast::decided:
            fast[g] = 1;
            break;
          case Group::Fast::exact_case:
            ++local.exact_cases;
            break;
          case Group::Fast::undecided:
            ++local.fallbacks;
            break;
        }
      } else {
        ++local.exact_only;
      }
      if (!fast[g]) groups_[g]->compute(i, scratch_.data() + offset[g], nullptr);
    }
    for (std::size_t m = 0; m < member_slot_.size(); ++m) {
      const auto [g, slot] = member_slot_[m];
      emit(m, k, fast[g] != 0, fast_scratch_[offset[g] + slot], scratch_[offset[g] + slot]);
    }
  }
  stats_ += local;
  total_evaluations.fetch_add(local.evaluations, std::memory_order_relaxed);
  total_fallbacks.fetch_add(local.fallbacks, std::memory_order_relaxed);
  total_exact_cases.fetch_add(local.exact_cases, std::memory_order_relaxed);
  total_exact_only.fetch_add(local.exact_only, std::memory_order_relaxed);
}

void BlockEvaluator::evaluate(std::uint64_t begin, std::uint64_t end,
                              std::vector<std::vector<RealisedPair>>& out) {
  const std::size_t n = end >= begin ? end - begin : 0;
  out.resize(member_slot_.size());
  for (auto& o : out) o.resize(n);
  run(begin, end,
      [&](std::size_t m, std::size_t k, bool fast, const FastPair& f, const RealisedPair& p) {
        if (fast) {
          RealisedPair& o = out[m][k];
          o.cos = Value::from_double_exact(f.cos);
          o.sin = Value::from_double_exact(f.sin);
          o.flags = f.flags;
        } else {
          out[m][k] = p;
        }
      });
}

void BlockEvaluator::evaluate_bits(std::uint64_t begin, std::uint64_t end,
                                   std::vector<std::vector<PairBits>>& out) {
  const std::size_t n = end >= begin ? end - begin : 0;
  out.resize(member_slot_.size());
  for (auto& o : out) o.resize(n);
  run(begin, end,
      [&](std::size_t m, std::size_t k, bool fast, const FastPair& f, const RealisedPair& p) {
        PairBits& o = out[m][k];
        if (fast) {
          // the fast path's results are finite doubles: bits_key() is their bit pattern
          o.cos = std::bit_cast<std::uint64_t>(f.cos);
          o.sin = std::bit_cast<std::uint64_t>(f.sin);
          o.flags = f.flags;
        } else {
          o.cos = p.cos.bits_key();
          o.sin = p.sin.bits_key();
          o.flags = p.flags;
        }
      });
}

std::uint8_t BlockEvaluator::constant_flags(std::size_t member) const {
  return groups_[member_slot_.at(member).first]->constant_flags();
}

RealisedPair BlockEvaluator::evaluate_one(std::size_t member, std::uint64_t position,
                                          Steps* steps) {
  const auto [g, slot] = member_slot_.at(member);
  scratch_.resize(groups_[g]->slots());
  groups_[g]->compute(position, scratch_.data(), steps);
  return scratch_[slot];
}

RealisedPair evaluate_mixed(const RotaryBlock& block, const Realisation& r,
                            const std::vector<std::uint64_t>& position,
                            const std::vector<std::string>& axes, Steps* steps) {
  const numeric::Engine& engine = r.arithmetic_engine();
  if (r.kind == Realisation::Kind::r2) {
    const FormatOps ops(r.format, r.rounding, engine);
    std::uint8_t fl = 0;
    std::optional<Value> phi;
    for (const AxisAngle& t : block.axis_angles) {
      const Value theta_hat = ops.round_real(t.theta, fl);
      const Value p_hat = ops.from_uint(position.at(t.axis), fl);
      const Value term = ops.mul(theta_hat, p_hat, fl);
      add_step(steps, ("theta_hat_" + axes.at(t.axis)).c_str(), theta_hat);
      add_step(steps, ("p_hat_" + axes.at(t.axis)).c_str(), p_hat);
      phi = phi ? ops.add(*phi, term, fl) : term;
    }
    if (!phi) phi = ops.zero();
    add_step(steps, "phi", *phi);
    CosSinOfValue cos_sin(ops);
    RealisedPair out = cos_sin(*phi);
    out.flags |= fl;
    return out;
  }
  if (r.kind == Realisation::Kind::pipeline) {
    throw InvalidArgument("realisation " + r.name() + ": block " + std::to_string(block.index) +
                          " mixes position axes; accepted: r1, r2, r3");
  }
  // r1 / r3: one block with the exact angle, realised at position 1
  RotaryBlock at;
  at.index = block.index;
  const bool turns = !block.axis_angles.empty() &&
                     std::all_of(block.axis_angles.begin(), block.axis_angles.end(),
                                 [](const AxisAngle& t) { return t.turn.has_value(); });
  if (turns) {
    mpq_class sum = 0;  // Σ_a a_a·p_a/m_a, reduced mod 1 below
    for (const AxisAngle& t : block.axis_angles) {
      sum += mpq_class(t.turn->a * mpz_class(std::to_string(position.at(t.axis))), t.turn->m);
    }
    sum.canonicalize();
    mpz_class residue = sum.get_num() % sum.get_den();
    if (residue < 0) residue += sum.get_den();
    const mpq_class frac(residue, sum.get_den());
    at.turn = RationalTurn{residue, sum.get_den()};
    at.theta = residue == 0 ? ExactReal() : ExactReal::pi_times(2 * frac);
  } else {
    mpq_class angle = 0;  // Σ_a θ_{d,a}·p_a, exactly (the θ_{d,a} are rationals here)
    for (const AxisAngle& t : block.axis_angles) {
      const auto q = t.theta.as_rational();
      if (!q) {
        throw InvalidArgument("block " + std::to_string(block.index) +
                              " mixes turns and radians; "
                              "accepted: all angles of a block turns a/m, or all decimals");
      }
      angle += *q * mpq_class(mpz_class(std::to_string(position.at(t.axis))));
    }
    at.theta = angle == 0 ? ExactReal() : ExactReal::rational(angle);
  }
  R1Group group(at, engine);
  group.add(r);
  RealisedPair out;
  group.compute(1, &out, steps);
  return out;
}

}  // namespace ropesim::attention::detail

namespace ropesim::attention {

FastPathStats realisation_fast_path_counters() { return detail::fast_path_totals(); }

}  // namespace ropesim::attention
