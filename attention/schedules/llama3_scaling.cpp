// Llama 3's frequency scaling of a schedule (rope_type llama3; THEORY §3).
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"

namespace ropesim::attention {

Schedule apply_llama3_scaling(Schedule s, const Llama3Scaling& l) {
  if (l.factor <= 0 || l.high_freq_factor == l.low_freq_factor ||
      l.original_max_position_embeddings <= 0 || l.low_freq_factor <= 0 ||
      l.high_freq_factor <= 0) {
    throw InvalidArgument(
        "llama3 scaling needs factor > 0, low_freq_factor > 0, high_freq_factor > 0, "
        "high_freq_factor ≠ low_freq_factor, original_max_position_embeddings > 0");
  }
  const mpq_class& L = l.original_max_position_embeddings;
  const ExactReal two_pi = ExactReal::pi_times(2);
  for (auto& b : s.blocks) {
    if (b.theta.is_zero()) continue;
    const ExactReal& theta = b.theta;
    // wavelen = 2π/θ; low = L/low_ff; high = L/high_ff (θ > 0).
    // wavelen > low  ⟺  2π·low_ff > L·θ;   wavelen < high  ⟺  2π·high_ff < L·θ.
    const ExactReal Ltheta = ExactReal::rational(L) * theta;
    if (compare(ExactReal::pi_times(2 * l.low_freq_factor), Ltheta) > 0) {
      b.theta = theta * ExactReal::rational(1 / l.factor);
    } else if (compare(ExactReal::pi_times(2 * l.high_freq_factor), Ltheta) < 0) {
      // high-frequency band: unchanged
    } else {
      // smooth = (L/wavelen - low_ff)/(high_ff - low_ff), L/wavelen = L·θ/(2π)
      const ExactReal smooth = (Ltheta / two_pi - ExactReal::rational(l.low_freq_factor)) *
                               ExactReal::rational(1 / (l.high_freq_factor - l.low_freq_factor));
      b.theta = (ExactReal::rational(1) - smooth) * theta * ExactReal::rational(1 / l.factor) +
                smooth * theta;
    }
    b.turn.reset();
  }
  s.llama3 = l;
  return s;
}

}  // namespace ropesim::attention
