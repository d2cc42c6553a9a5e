// One attention head (THEORY §2): its rotations, queries, keys, values, scores and one query's
// attention step. See transformer.hpp for the contracts.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "attention/transformer/head_blocks.hpp"
#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"

namespace ropesim::attention {

using detail::block_schedule;
using detail::rotary_block_count;

// ---------------------------------------------------------------------------------------------
// Heads and rotations
// ---------------------------------------------------------------------------------------------

Schedule unrotated_schedule(std::size_t pairs) {
  Schedule s;
  s.spec = "unrotated:pairs=" + std::to_string(pairs);
  s.kind = "unrotated";
  s.unrotated_pairs = pairs;
  s.head_dim = 2 * pairs;
  s.rotary_dim = 0;
  return s;
}

HeadRotations realise_head(const AttentionHead& head, std::uint64_t positions,
                           const EvaluationPolicy& policy) {
  (void)policy;
  HeadRotations out;
  out.positions = positions;
  out.blocks.reserve(rotary_block_count(head));
  for (const auto& seg : head.rotary) {
    if (seg.realisations.size() != seg.schedule.blocks.size()) {
      throw InvalidArgument("realise_head: segment '" + seg.schedule.spec + "' has " +
                            std::to_string(seg.schedule.blocks.size()) + " blocks but " +
                            std::to_string(seg.realisations.size()) + " realisations");
    }
    for (std::size_t b = 0; b < seg.schedule.blocks.size(); ++b) {
      if (!seg.realisations[b]) {
        out.blocks.emplace_back();
        continue;
      }
      out.blocks.push_back(
          realise_block(block_schedule(seg.schedule, b), *seg.realisations[b], 0, 0, positions));
    }
  }
  return out;
}

std::vector<Value> rotate(const AttentionHead& head, const HeadRotations& rotations,
                          std::uint64_t position, std::span<const Value> x,
                          const EvaluationPolicy& policy) {
  if (x.size() != head.head_dim) {
    throw InvalidArgument("rotate: vector of length " + std::to_string(x.size()) +
                          ", head_dim is " + std::to_string(head.head_dim));
  }
  std::vector<Value> y(x.begin(), x.end());
  if (head.rotary.empty()) return y;
  if (position >= rotations.positions) {
    throw InvalidArgument("rotate: position " + std::to_string(position) +
                          " not realised (positions 0.." + std::to_string(rotations.positions) +
                          " exclusive)");
  }
  if (rotations.blocks.size() != rotary_block_count(head)) {
    throw InvalidArgument("rotate: rotations of another head (" +
                          std::to_string(rotations.blocks.size()) + " blocks, expected " +
                          std::to_string(rotary_block_count(head)) + ")");
  }
  const Arithmetic f = numeric::arithmetic(policy);
  std::size_t offset = 0, global = 0;
  for (const auto& seg : head.rotary) {
    const std::size_t nb = seg.schedule.blocks.size();
    for (std::size_t d = 0; d < nb; ++d, ++global) {
      const auto& r = seg.realisations[d];
      if (!r) continue;
      const RealisedPair& pair = rotations.blocks[global][position];
      const std::size_t i0 = offset + (seg.layout == PairLayout::adjacent ? 2 * d : d);
      const std::size_t i1 = offset + (seg.layout == PairLayout::adjacent ? 2 * d + 1 : d + nb);
      const bool pipeline = r->kind == Realisation::Kind::pipeline;
      const Format& rot_format = pipeline ? r->steps.rotation.compute : r->format;
      const Format& out_format = pipeline ? r->steps.output : r->format;
      const auto arithmetic = pipeline ? r->steps.arithmetic : RotationArithmetic::theory;
      const Rounding rot_rounding =
          pipeline ? r->steps.rotation.rounding_or(r->rounding) : r->rounding;
      const Arithmetic a(rot_format, rot_rounding, policy.arithmetic_engine());
      const Value x0 = a.convert(x[i0]), x1 = a.convert(x[i1]);
      const Value c = a.convert(pair.cos), s = a.convert(pair.sin);
      Value y0, y1;
      if (arithmetic == RotationArithmetic::theory) {
        // THEORY §2.1: (rnd(rnd(c·x0) - rnd(s·x1)), rnd(rnd(s·x0) + rnd(c·x1)))
        y0 = a.sub(a.mul(c, x0), a.mul(s, x1));
        y1 = a.add(a.mul(s, x0), a.mul(c, x1));
      } else {
        // Hugging Face eager q·cos + rotate_half(q)·sin, rotate_half = (-x1, x0) (NUMERIC §3)
        y0 = a.add(a.mul(x0, c), a.mul(a.negate(x1), s));
        y1 = a.add(a.mul(x1, c), a.mul(x0, s));
      }
      if (!(out_format == rot_format)) {
        const Arithmetic o(out_format, r->rounding, policy.arithmetic_engine());
        y0 = o.convert(y0);
        y1 = o.convert(y1);
      }
      if (!(out_format == policy.format)) {
        y0 = f.convert(y0);
        y1 = f.convert(y1);
      }
      y[i0] = y0;
      y[i1] = y1;
    }
    offset += seg.dimension();
  }
  return y;
}

std::vector<Value> head_query(const AttentionHead& head, const HeadRotations& rotations,
                              std::uint64_t position, std::span<const Value> x,
                              const EvaluationPolicy& policy) {
  return rotate(head, rotations, position, matvec(head.query, x, head.query_bias, policy), policy);
}

std::vector<Value> head_key(const AttentionHead& head, const HeadRotations& rotations,
                            std::uint64_t position, std::span<const Value> x,
                            const EvaluationPolicy& policy) {
  return rotate(head, rotations, position, matvec(head.key, x, head.key_bias, policy), policy);
}

std::vector<Value> head_value(const AttentionHead& head, std::span<const Value> x,
                              const EvaluationPolicy& policy) {
  return matvec(head.value, x, head.value_bias, policy);
}

Value head_score(const AttentionHead& head, std::span<const Value> q, std::span<const Value> k,
                 const EvaluationPolicy& policy) {
  const Value s = dot(q, k, policy);
  if (!head.scale) return s;
  return numeric::arithmetic(policy).mul(s, *head.scale);
}

// ---------------------------------------------------------------------------------------------
// One token through one layer
// ---------------------------------------------------------------------------------------------

HeadStep head_step(const AttentionHead& head, std::span<const Value> query,
                   std::span<const std::vector<Value>> keys,
                   std::span<const std::vector<Value>> values, const EvaluationPolicy& policy,
                   SoftmaxVariant variant) {
  if (keys.size() != values.size()) {
    throw InvalidArgument("head_step: " + std::to_string(keys.size()) + " keys but " +
                          std::to_string(values.size()) + " value vectors");
  }
  HeadStep step;
  step.scores.resize(keys.size());
  // Scores through numeric::Binary64Dot when it applies (bit for bit numeric::dot, see
  // attend_binary64); a key with a wide or non-finite entry, or a non-finite score, takes the
  // general path.
  const auto kernel = query.empty() ? std::nullopt : numeric::Binary64Dot::for_policy(policy);
  std::vector<double> q;
  bool fast = kernel.has_value() &&
              (!head.scale || (!head.scale->is_wide() && std::isfinite(head.scale->narrow())));
  for (std::size_t i = 0; fast && i < query.size(); ++i) {
    fast = !query[i].is_wide() && std::isfinite(query[i].narrow());
    q.push_back(query[i].narrow());
  }
  std::vector<double> k(query.size());
  for (std::size_t u = 0; u < keys.size(); ++u) {
    bool key_fast = fast && keys[u].size() == query.size();
    for (std::size_t i = 0; key_fast && i < k.size(); ++i) {
      key_fast = !keys[u][i].is_wide() && std::isfinite(keys[u][i].narrow());
      k[i] = keys[u][i].narrow();
    }
    if (key_fast) {
      double score = (*kernel)(q.data(), k.data(), q.size());
      if (head.scale) {
        const double scale = head.scale->narrow();
        score = (*kernel)(&score, &scale, 1);
      }
      if (std::isfinite(score)) {
        step.scores[u] = Value::from_double_exact(score);
        continue;
      }
    }
    step.scores[u] = head_score(head, query, keys[u], policy);
  }
  step.attention = attend(step.scores, values, head.value_dim, policy, variant);
  return step;
}

}  // namespace ropesim::attention
