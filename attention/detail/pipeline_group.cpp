// The framework-pipeline evaluator group (evaluator_groups.hpp; NUMERIC §3): per block the
// constants (exponent, power, inv_freq or theta_scale), per position the angle by the recipe and
// cos/sin, each step rounded into its formats; the fast path position by position and in lanes
// (pipeline_batch).
#include <cmath>
#include <optional>

#include "attention/detail/evaluator_groups.hpp"
#include "attention/detail/hf_scaling.hpp"
#include "numeric/exact.hpp"
#include "numeric/libm.hpp"
#include "numeric/trig/fast_trig.hpp"

namespace ropesim::attention::detail {

namespace {

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
    const double stored_angle = a;  // the "angle" step
    if (!angle_in_cs_) a = cs_->round_double(a);
    if (!std::isfinite(a)) return Fast::undecided;
    double c = 1.0, sn = a;  // cos(±0) = 1 (one() is 1 here: decide_fast), sin(±0) = ±0
    if (a != 0) {
      double fh = 0, fl = 0, ef = 0;
      if (!numeric::trig::turns_of_radians(a, fh, fl, ef)) return Fast::undecided;
      numeric::trig::Approx ca, sa;
      if (!numeric::trig::cos_sin_turns(fh, fl, ef, ca, sa)) return Fast::undecided;
      const numeric::Binary64Rounding& f = cs_->real().binary64();
      if (!numeric::trig::round_decided(f, ca, c) || !numeric::trig::round_decided(f, sa, sn))
        return Fast::undecided;
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
      out[k].angle = stored_angle;
    }
    return Fast::decided;
  }

  // a θ = 0 block forms no angle step (compute() takes cos_sin's one and zero)
  FastAngle fast_angle() const override { return zero_angle_ ? FastAngle::none : FastAngle::value; }

  // compute_fast over a run of positions by pipeline_batch (fast_trig_batch.hpp); θ = 0 blocks
  // and positions beyond 2^53 take the scalar loop.
  bool compute_fast_batch(std::uint64_t begin, std::size_t n, Batch& b) override {
    const bool in_range =
        tile_ != 0 || (n <= (std::uint64_t{1} << 53) && begin <= (std::uint64_t{1} << 53) - n);
    if (!kernel_ || zero_angle_ || !in_range) return Group::compute_fast_batch(begin, n, b);
    double* t = b.input.data();
    std::uint64_t index = tile_ != 0 ? begin % tile_ : begin;
    for (std::size_t k = 0; k < n; ++k) {
      t[k] = static_cast<double>(index);
      if (++index == tile_) index = 0;
    }
    for (std::size_t k = n; k % kBatchLanes != 0; ++k) t[k] = 1.0;
    pipeline_batch(*kernel_, t, n, b.cos.data(), b.sin.data(), b.decided.data(), b.angle.data());
    for (std::size_t k = 0; k < n; ++k) {
      b.status[k] = b.decided[k] != 0 ? Fast::decided : Fast::undecided;
    }
    return true;
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
    if (std::isnan(result)) flags |= flag_nan;
    if (std::isinf(result) && std::isfinite(argument)) flags |= flag_overflow;
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
    if (ok && !zero_angle_) make_kernel();
  }

  /// The batched kernel of compute_fast's steps, when every rounding has a batched form
  /// (BatchRounding::of); else kernel_ stays null (the scalar loop).
  void make_kernel() {
    PipelineKernel k;
    bool ok = true;
    auto set = [&ok](BatchRounding& to, const FormatOps* ops) {
      const auto r = BatchRounding::of(ops);
      if (r) {
        to = *r;
      } else {
        ok = false;
      }
    };
    set(k.pos, &*pos_);
    set(k.pos_store, pos_.store_ops());
    if (operands_) {
      set(k.x_round, operands_.get());
    } else if (ang_->format() != x_format_of_position()) {
      set(k.x_round, &*ang_);
    }
    set(k.ang, &*ang_);
    set(k.ang_store, ang_.store_ops());
    if (!angle_in_cs_) set(k.cs_arg, &*cs_);
    set(k.cs, &*cs_);
    set(k.cs_store, cs_.store_ops());
    if (scale_) {
      k.scale = true;
      k.scale_value = scale_d_;
      set(k.scaling, &*scaling_);
      set(k.scaling_store, scaling_.store_ops());
    }
    switch (steps_.recipe) {
      case AngleRecipe::product:
      case AngleRecipe::power:
        k.recipe = PipelineKernel::Recipe::product;
        break;
      case AngleRecipe::quotient:
        k.recipe = PipelineKernel::Recipe::quotient;
        break;
      case AngleRecipe::chained:
        k.recipe = PipelineKernel::Recipe::chained;
        k.chain = chain_;
        break;
    }
    k.factor = factor_d_;
    for (const auto& t : tables_) {
      k.tables.emplace_back();
      set(k.tables.back(), t.get());
    }
    if (ok) kernel_ = std::make_unique<PipelineKernel>(std::move(k));
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
    if (std::isnan(result)) fl |= flag_nan;
    if (std::isinf(result) && std::isfinite(base) && std::isfinite(exponent)) fl |= flag_overflow;
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
          // the schedule's rope scaling (a Python float over a tensor as the steps say)
          inv = hf_scaled_inv_freq(*inv_, inv, p, s, b, fl, steps_.reciprocal_scalar_division);
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
  std::unique_ptr<PipelineKernel> kernel_;  ///< the batched kernel (null: the scalar loop)
  std::uint64_t tile_ = 0;  ///< Resonance table: λ of a tabulated block, 0 = not tabulated
  /// cos_sin=fp32:sleef-u10: this block's lane and the groups of its lane mates (null: own
  /// lane, or past the last block).
  std::size_t lane_ = 0;
  std::vector<std::unique_ptr<PipelineGroup>> mates_;
};

}  // namespace

std::unique_ptr<Group> make_pipeline_group(const Schedule& s, std::size_t block,
                                           const Realisation& r, const numeric::Engine& engine) {
  return std::make_unique<PipelineGroup>(s, block, r, engine);
}

}  // namespace ropesim::attention::detail
