// detail::evaluate_mixed (evaluator.hpp): a block whose angle mixes position axes (LieRE /
// RoPE-Mixed), realised at a tuple.
#include <gmpxx.h>

#include <algorithm>
#include <optional>

#include "attention/detail/evaluator_groups.hpp"
#include "core/error.hpp"
#include "numeric/exact.hpp"

namespace ropesim::attention::detail {

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
  const auto group = make_r1_group(at, engine);
  group->add(r);
  RealisedPair out;
  group->compute(1, &out, steps);
  return out;
}

}  // namespace ropesim::attention::detail
