// The r2 evaluator group (evaluator_groups.hpp): θ̂ and î rounded, their product rounded, then
// cos and sin of that value rounded (THEORY §3 R2). No fast path: every step is in F.
#include "attention/detail/evaluator_groups.hpp"

namespace ropesim::attention::detail {

namespace {

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

}  // namespace

std::unique_ptr<Group> make_r2_group(const RotaryBlock& b, const Realisation& r,
                                     const numeric::Engine& engine) {
  return std::make_unique<R2Group>(b, r, engine);
}

}  // namespace ropesim::attention::detail
