#pragma once
/// Internal: the evaluator groups behind detail::BlockEvaluator (evaluator.hpp) — one group
/// per realisation kind, sharing work between the members it serves (THEORY §3; NUMERIC §3):
/// R1Group (r1, r3; r1_group.cpp), R2Group (r2_group.cpp), PipelineGroup (framework pipelines;
/// pipeline_group.cpp) — and what they share: the exact cos/sin roundings (PairRounder,
/// CosSinOfValue) and the fast path's per-batch outputs (GroupBatch).
#include <gmpxx.h>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "attention/detail/evaluator.hpp"
#include "attention/detail/fast_trig_batch.hpp"
#include "attention/detail/format_ops.hpp"
#include "numeric/real_rounding.hpp"

namespace ropesim::attention::detail {

__extension__ typedef unsigned __int128 u128;  // exact a·r mod m for 64-bit m

/// Appends (name, v) to `steps` when it is not null.
inline void add_step(Steps* steps, const char* name, const Value& v) {
  if (steps != nullptr) steps->emplace_back(name, v);
}

/// Finds or creates the FormatOps for (format, rounding) in `list`; returns its index.
inline std::size_t find_ops(std::vector<std::unique_ptr<FormatOps>>& list, const Format& f,
                            Rounding r, const numeric::Engine& engine) {
  for (std::size_t k = 0; k < list.size(); ++k) {
    if (list[k]->format() == f && list[k]->rounding() == r) return k;
  }
  list.push_back(std::make_unique<FormatOps>(f, r, engine));
  return list.size() - 1;
}

/// numeric::CosSinRounder (the one rounding of cos/sin of exact angles, numeric/real_rounding.hpp)
/// over FormatOps targets, writing RealisedPair: components set, overflow OR-ed in as
/// flag_overflow.
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
      if (buffer_[k].flags.test(numeric::Flag::overflow)) out[k].flags |= flag_overflow;
    }
  }

  numeric::CosSinRounder rounder_;
  std::vector<numeric::RoundedCosSin> buffer_;
};

/// The fast path's verdict for one position (Group::compute_fast).
enum class FastVerdict { decided, exact_case, undecided };

/// The fast path over positions begin .. begin + n − 1 (n ≤ kBatch), slot-major:
/// cos/sin/flags[slot·kBatch + k] for position begin + k where status[k] is `decided`.
struct BlockEvaluator::GroupBatch {
  std::vector<double> cos, sin;
  std::vector<std::uint8_t> flags;
  std::vector<double> angle;  // the angle step per position (Group::fast_angle: value)
  std::vector<FastVerdict> status;
  std::vector<double> input;              // the kernels' per-position input
  std::vector<std::uint8_t> decided;      // the kernels' verdicts
  std::vector<FastPair> pairs;            // one position's slots (the scalar loop)
  std::vector<RealisedPair> slow;         // the exact path's pairs, `slots` per position left
  std::vector<std::uint32_t> slow_index;  // position k's first pair in `slow` / slots
  void resize(std::size_t slots) {
    cos.resize(slots * kBatch);
    sin.resize(slots * kBatch);
    flags.assign(slots * kBatch, 0);
    angle.assign(kBatch, 0.0);
    status.resize(kBatch);
    input.assign(kBatch, 1.0);
    decided.resize(kBatch);
    pairs.resize(slots);
    slow_index.resize(kBatch);
  }
};

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

  using Fast = FastVerdict;
  using Batch = GroupBatch;
  /// True when compute_fast may be called (every slot's format in the fast domain).
  virtual bool fast_capable() { return false; }
  /// out[slot] for position i by the binary64 fast path (numeric/trig/fast_trig.hpp):
  /// `decided` — out written, the same elements as compute(); `exact_case` — an angle whose
  /// cos/sin are known exactly, left to compute(); `undecided` — the rounding test failed
  /// (a fallback). Precondition: fast_capable().
  virtual Fast compute_fast(std::uint64_t, FastPair*) { return Fast::undecided; }
  /// What compute_fast and compute_fast_batch report of the angle step of the positions they
  /// decide (FastAngle; FastPair::angle and Batch::angle hold it when `value`).
  virtual FastAngle fast_angle() const { return FastAngle::unknown; }

  /// compute_fast for each of the n positions (groups with a batched kernel override this with
  /// the same verdicts and values). Returns true when a batched kernel did it, false for the
  /// per-position loop. Precondition: fast_capable(), b.resize(slots()) done.
  virtual bool compute_fast_batch(std::uint64_t begin, std::size_t n, Batch& b) {
    const std::size_t slots = this->slots();
    for (std::size_t k = 0; k < n; ++k) {
      b.status[k] = compute_fast(begin + k, b.pairs.data());
      if (b.status[k] != Fast::decided) continue;
      if (slots > 0) b.angle[k] = b.pairs[0].angle;
      for (std::size_t t = 0; t < slots; ++t) {
        b.cos[t * kBatch + k] = b.pairs[t].cos;
        b.sin[t * kBatch + k] = b.pairs[t].sin;
        b.flags[t * kBatch + k] = b.pairs[t].flags;
      }
    }
    return false;
  }
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
      p.flags = flag_nan;
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

using Group = BlockEvaluator::Group;

/// The group for r1 and r3 members of block `b` (b must outlive it).
std::unique_ptr<Group> make_r1_group(const RotaryBlock& b, const numeric::Engine& engine);
/// The group of one r2 realisation (format and rounding) of block `b`.
std::unique_ptr<Group> make_r2_group(const RotaryBlock& b, const Realisation& r,
                                     const numeric::Engine& engine);
/// The group of the pipelines that differ from `r` only in their table format, for block
/// `block` of `s`. Throws what the pipeline's constants throw (numeric::require_sleef_avx2).
std::unique_ptr<Group> make_pipeline_group(const Schedule& s, std::size_t block,
                                           const Realisation& r, const numeric::Engine& engine);

}  // namespace ropesim::attention::detail
