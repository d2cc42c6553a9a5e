#pragma once
/// Internal: evaluates the realised (cos, sin) of one rotary block over a range of
/// positions, for several realisations at once, sharing work between them (THEORY §3;
/// NUMERIC §3): r1/r3 members share one high-precision cos/sin per position across formats
/// (the formats of the binary64 fast path in one group, the others such as fp64 in another, so
/// that one exact-only format does not send the rest down the exact path);
/// identical r2 members share everything; pipelines that differ only in the table format
/// share the cos/sin-format table. Per-block constants (θ's enclosure, θ̂, inv_freq) are
/// computed once; cos/sin are memoised by angle bit pattern where angles repeat (p ≤ 16).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "numeric/engine.hpp"

namespace ropesim::attention::detail {

/// Named intermediate values of one position (for PositionReport).
using Steps = std::vector<std::pair<std::string, Value>>;

/// A realised pair on the fast path: the elements as doubles (formats that fit a double).
struct FastPair {
  double cos = 0, sin = 0;
  std::uint8_t flags = 0;
  /// The angle step's value (the pipeline's stored "angle") where the group's fast path
  /// reports one (BlockEvaluator::Group::fast_angle() == FastAngle::value); else unspecified.
  double angle = 0;
};

/// What a group's fast path says of the angle step (BlockReport::steps "angle") of the entries
/// it decides: `none` — compute() forms no angle step there; `value` — FastPair::angle is the
/// step's value; `unknown` — only compute() with steps can say.
enum class FastAngle { unknown, none, value };

class BlockEvaluator {
 public:
  /// `members` must outlive the evaluator and be applicable to `s` (check_applicable).
  BlockEvaluator(const Schedule& s, std::size_t block, const std::vector<Realisation>& members,
                 const numeric::Engine& engine);
  ~BlockEvaluator();
  BlockEvaluator(const BlockEvaluator&) = delete;
  BlockEvaluator& operator=(const BlockEvaluator&) = delete;

  /// out[m][k] = realised pair of member m at position begin + k (out is resized). Members in
  /// the fast domain go through the binary64 fast path (numeric/trig/fast_trig.hpp),
  /// kBatch positions at a time in lanes where the group has a batched kernel
  /// (fast_trig_batch.hpp), and fall back to the exact path, position by position, where its
  /// rounding test cannot decide: the same values. Throws InvalidArgument when end < begin.
  void evaluate(std::uint64_t begin, std::uint64_t end,
                std::vector<std::vector<RealisedPair>>& out);
  /// out[m][k] = the bits of member m's realised pair at position begin + k (PairBits: the
  /// same bit patterns and flags as evaluate(), Value::bits_key()), without building Values
  /// on the fast path. out is resized. Throws what evaluate() throws.
  void evaluate_bits(std::uint64_t begin, std::uint64_t end,
                     std::vector<std::vector<PairBits>>& out);
  /// What the fast path did in this evaluator's evaluate / evaluate_bits calls so far.
  const FastPathStats& fast_path_stats() const { return stats_; }
  /// Forces the exact path for every evaluation (the tests compare both paths bit for bit).
  void set_fast_path(bool enabled) { fast_enabled_ = enabled; }
  /// With false, the fast path goes position by position (the scalar functions of
  /// fast_trig.hpp) instead of the batched kernels (fast_trig_batch.hpp); the values are the
  /// same (the tests compare all three paths).
  void set_batch(bool enabled) { batch_enabled_ = enabled; }
  /// Flags raised by member m's position-independent constants (a pipeline's exponent,
  /// power, inv_freq / theta_scale): reported apart, not in the per-position flags.
  std::uint8_t constant_flags(std::size_t member) const;
  /// Member m at one position, with its intermediate steps.
  RealisedPair evaluate_one(std::size_t member, std::uint64_t position, Steps* steps);
  /// Member m at positions begin..end-1 as evaluate() gives them (out[k], resized), and what
  /// its fast path knows of the angle step: fast[k] = 1 where the fast path decided entry k,
  /// and then angle[k] is the step's value when fast_angle(m) is FastAngle::value (resized).
  /// Entries with fast[k] = 0 came from the exact path without their steps (evaluate_one gives
  /// them). Throws what evaluate() throws.
  void evaluate_with_angles(std::size_t member, std::uint64_t begin, std::uint64_t end,
                            std::vector<RealisedPair>& out, std::vector<double>& angle,
                            std::vector<std::uint8_t>& fast);
  /// What member m's group's fast path reports of the angle step (FastAngle).
  FastAngle fast_angle(std::size_t member) const;
  /// Whether member m's group may take the fast path at all (else every entry goes through
  /// the exact path).
  bool fast_capable(std::size_t member);

  struct Group;
  struct GroupBatch;

 private:
  std::vector<std::unique_ptr<Group>> groups_;
  // member m → (group index, slot within the group's outputs)
  std::vector<std::pair<std::size_t, std::size_t>> member_slot_;
  std::vector<RealisedPair> scratch_;
  std::vector<GroupBatch> batches_;  ///< per group: the fast path's outputs over one batch
  FastPathStats stats_;
  bool fast_enabled_ = true;
  bool batch_enabled_ = true;

  template <class Emit>
  void run(std::uint64_t begin, std::uint64_t end, Emit&& emit);
};

/// The totals behind attention::realisation_fast_path_counters().
FastPathStats fast_path_totals();

/// The realised pair of a block whose angle mixes axes (LieRE / RoPE-Mixed: several
/// schedule.hpp AxisAngle terms) at the tuple p, for r1, r2 or r3 (pipelines are refused by
/// check_applicable). r1/r3: the exact angle Σ_a θ_{d,a}·p_a (turns reduced exactly mod 1:
/// 2π·frac(Σ_a a_a p_a / m_a), so r1 = r3 = the table T_d at that residue), cos and sin
/// correctly rounded once. r2: φ = rnd(... rnd(rnd(θ̂_1·p̂_1) + rnd(θ̂_2·p̂_2)) ...), the
/// terms in axis order, θ̂_a = rnd(θ_{d,a}), p̂_a = rnd(p_a), as RoPE-Mixed's code forms
/// freqs_x + freqs_y (arXiv 2403.13298, compute_mixed_cis); then rnd(cos φ), rnd(sin φ).
/// Steps (r2): "theta_hat_<axis>", "p_hat_<axis>", "phi". `axes` names the axes.
RealisedPair evaluate_mixed(const RotaryBlock& block, const Realisation& r,
                            const std::vector<std::uint64_t>& position,
                            const std::vector<std::string>& axes, Steps* steps);

/// Block b of `s` at the tuple p (multi-axis schedules): one-axis blocks by the one-axis
/// evaluator at p_a (a block with no term has θ = 0 and is realised at 0), mixed blocks by
/// evaluate_mixed; `steps` (may be null) receives the intermediate steps, `constant_flags`
/// (may be null) the pipeline constants' flags. Throws what BlockEvaluator and
/// evaluate_mixed throw. Defined in attention/realisations/realisation.cpp (realise,
/// query_position).
RealisedPair realise_block_at(const Schedule& s, const Realisation& r, std::size_t b,
                              const PositionTuple& p, Steps* steps, std::uint8_t* constant_flags);

}  // namespace ropesim::attention::detail
