// detail::BlockEvaluator (evaluator.hpp): the members' groups (evaluator_groups.hpp), the fast
// path in batches of positions with the exact path for what it leaves, and the counters.
#include "attention/detail/evaluator.hpp"

#include <algorithm>
#include <atomic>
#include <bit>

#include "attention/detail/evaluator_groups.hpp"
#include "core/error.hpp"

namespace ropesim::attention::detail {

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
          groups_.push_back(make_r1_group(b, engine));
          break;
        case Realisation::Kind::r2:
          groups_.push_back(make_r2_group(b, r, engine));
          break;
        case Realisation::Kind::pipeline:
          groups_.push_back(make_pipeline_group(s, block, r, engine));
          break;
      }
    }
    member_slot_.emplace_back(g, groups_[g]->add(r));
  }
}

BlockEvaluator::~BlockEvaluator() = default;

namespace {

std::atomic<std::uint64_t> total_evaluations{0}, total_fallbacks{0}, total_exact_cases{0},
    total_exact_only{0}, total_batched{0};

}  // namespace

FastPathStats fast_path_totals() {
  FastPathStats s;
  s.evaluations = total_evaluations.load(std::memory_order_relaxed);
  s.fallbacks = total_fallbacks.load(std::memory_order_relaxed);
  s.exact_cases = total_exact_cases.load(std::memory_order_relaxed);
  s.exact_only = total_exact_only.load(std::memory_order_relaxed);
  s.batched = total_batched.load(std::memory_order_relaxed);
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
  const std::size_t ng = groups_.size();
  std::vector<std::size_t> offset(ng + 1, 0);
  for (std::size_t g = 0; g < ng; ++g) offset[g + 1] = offset[g] + groups_[g]->slots();
  scratch_.resize(offset.back());
  std::vector<char> capable(ng);
  for (std::size_t g = 0; g < ng; ++g) capable[g] = fast_enabled_ && groups_[g]->fast_capable();
  batches_.resize(ng);
  for (std::size_t g = 0; g < ng; ++g) batches_[g].resize(groups_[g]->slots());
  FastPathStats local;
  for (std::uint64_t chunk = begin; chunk < end; chunk += kBatch) {
    const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(kBatch, end - chunk));
    // the fast path in a batch, then the exact path for the positions it left, group by group
    // (groups are independent), the exact pairs kept in the batch's `slow` in position order
    for (std::size_t g = 0; g < ng; ++g) {
      Group::Batch& batch = batches_[g];
      const std::size_t slots = groups_[g]->slots();
      if (capable[g]) {
        const bool batched = batch_enabled_
                                 ? groups_[g]->compute_fast_batch(chunk, len, batch)
                                 : groups_[g]->Group::compute_fast_batch(chunk, len, batch);
        local.evaluations += len;
        if (batched) local.batched += len;
      } else {
        std::fill(batch.status.begin(), batch.status.begin() + len, Group::Fast::undecided);
        local.exact_only += len;
      }
      batch.slow.clear();
      for (std::size_t k = 0; k < len; ++k) {
        const Group::Fast verdict = batch.status[k];
        if (verdict == Group::Fast::decided) continue;
        if (capable[g]) {
          local.exact_cases += verdict == Group::Fast::exact_case;
          local.fallbacks += verdict == Group::Fast::undecided;
        }
        groups_[g]->compute(chunk + k, scratch_.data() + offset[g], nullptr);
        batch.slow_index[k] = static_cast<std::uint32_t>(batch.slow.size() / slots);
        batch.slow.insert(batch.slow.end(),
                          scratch_.begin() + static_cast<std::ptrdiff_t>(offset[g]),
                          scratch_.begin() + static_cast<std::ptrdiff_t>(offset[g] + slots));
      }
    }
    for (std::size_t m = 0; m < member_slot_.size(); ++m) {
      const auto [g, slot] = member_slot_[m];
      const Group::Batch& batch = batches_[g];
      const std::size_t slots = groups_[g]->slots();
      const double* cos = batch.cos.data() + slot * kBatch;
      const double* sin = batch.sin.data() + slot * kBatch;
      const std::uint8_t* flags = batch.flags.data() + slot * kBatch;
      const std::size_t base = chunk - begin;
      for (std::size_t k = 0; k < len; ++k) {
        if (batch.status[k] == Group::Fast::decided) {
          emit(m, base + k, true, FastPair{cos[k], sin[k], flags[k], batch.angle[k]}, scratch_[0]);
        } else {
          emit(m, base + k, false, FastPair{}, batch.slow[batch.slow_index[k] * slots + slot]);
        }
      }
    }
  }
  stats_ += local;
  total_evaluations.fetch_add(local.evaluations, std::memory_order_relaxed);
  total_fallbacks.fetch_add(local.fallbacks, std::memory_order_relaxed);
  total_exact_cases.fetch_add(local.exact_cases, std::memory_order_relaxed);
  total_exact_only.fetch_add(local.exact_only, std::memory_order_relaxed);
  total_batched.fetch_add(local.batched, std::memory_order_relaxed);
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

void BlockEvaluator::evaluate_with_angles(std::size_t member, std::uint64_t begin,
                                          std::uint64_t end, std::vector<RealisedPair>& out,
                                          std::vector<double>& angle,
                                          std::vector<std::uint8_t>& fast) {
  const std::size_t n = end >= begin ? end - begin : 0;
  out.resize(n);
  angle.resize(n);
  fast.resize(n);
  run(begin, end,
      [&](std::size_t m, std::size_t k, bool decided, const FastPair& f, const RealisedPair& p) {
        if (m != member) return;
        fast[k] = decided ? 1 : 0;
        if (decided) {
          RealisedPair& o = out[k];
          o.cos = Value::from_double_exact(f.cos);
          o.sin = Value::from_double_exact(f.sin);
          o.flags = f.flags;
          angle[k] = f.angle;
        } else {
          out[k] = p;
        }
      });
}

FastAngle BlockEvaluator::fast_angle(std::size_t member) const {
  return groups_[member_slot_.at(member).first]->fast_angle();
}

bool BlockEvaluator::fast_capable(std::size_t member) {
  return fast_enabled_ && groups_[member_slot_.at(member).first]->fast_capable();
}

RealisedPair BlockEvaluator::evaluate_one(std::size_t member, std::uint64_t position,
                                          Steps* steps) {
  const auto [g, slot] = member_slot_.at(member);
  scratch_.resize(groups_[g]->slots());
  groups_[g]->compute(position, scratch_.data(), steps);
  return scratch_[slot];
}

}  // namespace ropesim::attention::detail

namespace ropesim::attention {

FastPathStats realisation_fast_path_counters() { return detail::fast_path_totals(); }

}  // namespace ropesim::attention
