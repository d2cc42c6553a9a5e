// Looking inside a model, head by head (proofs/reports/head_analysis.hpp; THEORY §6, "Looking
// inside a model"): block usage, the fixed-offset test and its certified range, and the decisions
// that differ between F and a reference format.
#include "proofs/reports/head_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "attention/transformer/prefix_oracle.hpp"
#include "attention/transformer/run.hpp"
#include "core/error.hpp"
#include "proofs/common/f_large.hpp"

namespace ropesim::proofs {

namespace {

using attention::AttentionHead;
using attention::Model;
using numeric::Value;

/// The head's 2-coordinate blocks (rotary blocks of each segment, then its unrotated pairs)
/// with their static measures: θ, realisation and the norms of the rows of [Q | b_q], [K | b_k].
std::vector<BlockUsage> head_blocks(const AttentionHead& head) {
  const auto row_squares = [](const attention::Matrix& w, const std::vector<Value>& b,
                              std::size_t r) {
    double s = 0;
    for (std::size_t c = 0; c < w.cols; ++c) s += w.at(r, c).to_double() * w.at(r, c).to_double();
    if (!b.empty()) s += b[r].to_double() * b[r].to_double();
    return s;
  };
  std::vector<BlockUsage> out;
  std::size_t offset = 0;
  for (std::size_t s = 0; s < head.rotary.size(); ++s) {
    const auto& seg = head.rotary[s];
    const std::size_t B = seg.schedule.blocks.size();
    const bool adjacent = seg.layout == attention::PairLayout::adjacent;
    for (std::size_t j = 0; j < B + seg.schedule.unrotated_pairs; ++j) {
      BlockUsage u;
      u.segment = s;
      u.index = out.size();
      if (j < B) {
        u.coordinates[0] = offset + (adjacent ? 2 * j : j);
        u.coordinates[1] = offset + (adjacent ? 2 * j + 1 : j + B);
        u.theta = seg.schedule.blocks[j].theta.to_double();
        u.realisation = seg.realisations[j] ? seg.realisations[j]->name() : "none";
      } else {
        u.coordinates[0] = offset + 2 * j;
        u.coordinates[1] = offset + 2 * j + 1;
        u.realisation = "unrotated";
      }
      for (const std::size_t c : u.coordinates) {
        u.query_weight_norm += row_squares(head.query, head.query_bias, c);
        u.key_weight_norm += row_squares(head.key, head.key_bias, c);
      }
      u.query_weight_norm = std::sqrt(u.query_weight_norm);
      u.key_weight_norm = std::sqrt(u.key_weight_norm);
      out.push_back(u);
    }
    offset += seg.dimension();
  }
  return out;
}

/// The index of the first largest weight (numeric::compare; a NaN never wins over a number),
/// and whether another weight equals it; none for no weight.
std::optional<std::size_t> first_argmax(const std::vector<Value>& w, bool* tied = nullptr) {
  if (w.empty()) return std::nullopt;
  std::size_t best = 0;
  for (std::size_t j = 1; j < w.size(); ++j)
    if ((w[best].is_nan() && !w[j].is_nan()) || numeric::compare(w[j], w[best]) == 1) best = j;
  if (tied) {
    *tied = false;
    for (std::size_t j = 0; j < w.size(); ++j)
      if (j != best && numeric::compare(w[j], w[best]) == 0) *tied = true;
  }
  return best;
}

/// What one head gathers over the words.
struct HeadState {
  std::size_t layer = 0, index = 0;
  const AttentionHead* head = nullptr;
  attention::HeadRotations rotations;
  std::vector<BlockUsage> blocks;
  std::uint64_t tokens = 0;
  bool finite = true;                         ///< every pre-rotation q, k finite
  std::vector<mpq_class> query_sum, key_sum;  ///< exact sums of Q x + b_q, K x + b_k
  struct Query {
    std::uint64_t position, first_key, last_key;
    std::optional<std::int64_t> offset;  ///< none: tied
  };
  std::vector<Query> queries;
};

double block_dot(const std::vector<Value>& q, const std::vector<Value>& k, const BlockUsage& b) {
  return q[b.coordinates[0]].to_double() * k[b.coordinates[0]].to_double() +
         q[b.coordinates[1]].to_double() * k[b.coordinates[1]].to_double();
}

double block_norm(const std::vector<Value>& v, const BlockUsage& b) {
  return std::hypot(v[b.coordinates[0]].to_double(), v[b.coordinates[1]].to_double());
}

/// Adds one word's run (traced at every position) to the head's state.
void gather(HeadState& s, const Model& model, const attention::RunResult& run) {
  const auto& layer = model.layers[s.layer];
  const auto& traces = run.layers[s.layer];
  const std::uint64_t first = run.positions.front();
  std::vector<std::vector<Value>> queries, keys;
  for (const auto& pt : traces) {
    const auto x = attention::attention_input(model, layer, pt.input);
    const auto q = attention::matvec(s.head->query, x, s.head->query_bias, model.policy);
    const auto k = attention::matvec(s.head->key, x, s.head->key_bias, model.policy);
    // BlockUsage holds the sums of the norms until analyse_heads divides them
    for (std::size_t b = 0; b < s.blocks.size(); ++b) {
      s.blocks[b].query_norm += block_norm(q, s.blocks[b]);
      s.blocks[b].key_norm += block_norm(k, s.blocks[b]);
    }
    for (std::size_t c = 0; c < q.size(); ++c) {
      if (!q[c].is_finite() || !k[c].is_finite()) {
        s.finite = false;
        continue;
      }
      s.query_sum[c] += numeric::exact_rational(q[c]);
      s.key_sum[c] += numeric::exact_rational(k[c]);
    }
    ++s.tokens;
    queries.push_back(attention::rotate(*s.head, s.rotations, pt.position, q, model.policy));
    keys.push_back(attention::rotate(*s.head, s.rotations, pt.position, k, model.policy));
  }
  for (std::size_t t = 0; t < traces.size(); ++t) {
    const auto& ht = traces[t].heads[s.index];
    for (const std::uint64_t j : ht.keys) {
      for (auto& b : s.blocks) b.score_mass += std::fabs(block_dot(queries[t], keys[j - first], b));
    }
    if (ht.keys.size() < 2) continue;
    bool tied = false;
    const std::size_t best = *first_argmax(ht.weights, &tied);
    HeadState::Query query{traces[t].position, ht.keys.front(), ht.keys.back(), std::nullopt};
    if (!tied) {
      query.offset =
          static_cast<std::int64_t>(traces[t].position) - static_cast<std::int64_t>(ht.keys[best]);
    }
    s.queries.push_back(query);
  }
}

/// The fixed-offset test of THEORY §6, "Looking inside a model" (see PositionalTest).
PositionalTest positional_test(const HeadState& s, const mpq_class& share) {
  PositionalTest t;
  t.queries = s.queries.size();
  std::map<std::int64_t, std::uint64_t> counts;
  for (const auto& q : s.queries) {
    if (q.offset) {
      ++counts[*q.offset];
    } else {
      ++t.tied;
    }
  }
  std::uint64_t most = 0;
  for (const auto& [offset, count] : counts) {
    if (count > most) {
      most = count;
      t.offset = offset;
    }
  }
  if (!t.offset) return t;
  for (const auto& q : s.queries) {
    const std::int64_t target = static_cast<std::int64_t>(q.position) - *t.offset;
    if (target < static_cast<std::int64_t>(q.first_key) ||
        target > static_cast<std::int64_t>(q.last_key))
      continue;
    ++t.eligible;
    if (q.offset == t.offset) ++t.at_offset;
  }
  t.positional = t.eligible > 0 && mpq_class(t.at_offset, t.eligible) >= share;
  return t;
}

/// The certified range of the head's positional component (PositionalRange), or the reason
/// there is none in `note`.
std::optional<PositionalRange> positional_range(const HeadState& s, const Model& model,
                                                std::uint64_t k,
                                                const std::optional<std::uint64_t>& max_length,
                                                std::string& note) {
  const AttentionHead& head = *s.head;
  if (head.rotary.size() != 1) {
    note = fmt::format("the head has {} rotary segments; the range is measured for one",
                       head.rotary.size());
    return std::nullopt;
  }
  const auto& seg = head.rotary.front();
  if (seg.schedule.blocks.empty() || seg.schedule.is_multi_axis()) {
    note = "its schedule '" + seg.schedule.spec + "' has no rotary block or several position axes";
    return std::nullopt;
  }
  for (std::size_t j = 0; j < seg.realisations.size(); ++j) {
    if (!seg.realisations[j]) {
      note = fmt::format("its rotary block {} is not realised (identity)", j);
      return std::nullopt;
    }
  }
  const auto zero = [](const AttentionHead& h) {
    for (const auto* m : {&h.query, &h.key})
      for (const auto& v : m->entries)
        if (!v.is_zero()) return false;
    return true;
  };
  PositionalRange r;
  r.k = k;
  r.content_independent = zero(head);
  if (!r.content_independent && (!s.finite || s.tokens == 0)) {
    note = "a query or key is not finite on the words analysed";
    return std::nullopt;
  }
  FixedOffsetHead fh;
  fh.policy = model.policy;
  fh.k = k;
  fh.schedule = seg.schedule;
  fh.realisation = *seg.realisations.front();
  try {
    fh.f_large = require_f_large(model.policy.format, model.policy.rounding);
  } catch (const InvalidArgument& e) {
    note = e.what();
    return std::nullopt;
  }
  fh.f_large_exact = numeric::exact_rational(fh.f_large);
  fh.head = head;
  fh.head.query = attention::Matrix::zeros(head.head_dim, head.query.cols);
  fh.head.key = attention::Matrix::zeros(head.head_dim, head.key.cols);
  const auto& engine = model.policy.arithmetic_engine();
  const auto mean = [&](const std::vector<mpq_class>& sum, const std::vector<Value>& bias) {
    if (r.content_independent) return bias.empty() ? std::vector<Value>(head.head_dim) : bias;
    std::vector<Value> out;
    for (const auto& x : sum) {
      out.push_back(engine.from_rational(model.policy.format, x / s.tokens, model.policy.rounding));
    }
    return out;
  };
  fh.head.query_bias = r.query_bias = mean(s.query_sum, head.query_bias);
  fh.head.key_bias = r.key_bias = mean(s.key_sum, head.key_bias);
  ScanOptions scan;
  scan.max_length = max_length ? *max_length : scan_length_limit(fh);
  r.range = certified_range(fh, scan);
  return r;
}

/// The first place the two traced runs attend differently (AttentionDifference).
std::optional<AttentionDifference> first_difference(const attention::RunResult& a,
                                                    const attention::RunResult& b) {
  for (std::size_t t = 0; t < a.positions.size(); ++t) {
    for (std::size_t l = 0; l < a.layers.size(); ++l) {
      for (std::size_t h = 0; h < a.layers[l][t].heads.size(); ++h) {
        const auto& x = a.layers[l][t].heads[h];
        const auto& y = b.layers[l][t].heads[h];
        const auto key = [](const attention::HeadTrace& ht) -> std::optional<std::uint64_t> {
          const auto best = first_argmax(ht.weights);
          if (!best) return std::nullopt;
          return ht.keys[*best];
        };
        if (key(x) != key(y)) return AttentionDifference{a.positions[t], l, h, key(x), key(y)};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

HeadAnalysis analyse_heads(const HeadAnalysisOptions& o,
                           const std::function<void(std::size_t, std::size_t)>& progress) {
  const Model& model = o.model;
  HeadAnalysis out;
  out.model_file = o.model_file;
  out.model_name = model.name;
  out.format = model.policy.format.name;
  out.reference_format = o.reference.policy.format.name;
  out.rounding = std::string(numeric::to_string(model.policy.rounding));
  out.words = o.words;
  out.word_source = o.word_source;
  out.lengths = o.lengths;
  out.per_length = o.per_length;
  out.seed = o.seed;
  out.positional_share = o.positional_share;

  std::uint64_t longest = 0;
  for (const auto& w : o.words)
    longest = std::max<std::uint64_t>(longest, attention::tokenize(model, w).size());
  std::vector<HeadState> heads;
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    for (std::size_t h = 0; h < model.layers[l].heads.size(); ++h) {
      HeadState s;
      s.layer = l;
      s.index = h;
      s.head = &model.layers[l].heads[h];
      s.rotations = attention::realise_head(*s.head, longest + 2, model.policy);
      s.blocks = head_blocks(*s.head);
      s.query_sum.assign(s.head->head_dim, 0);
      s.key_sum.assign(s.head->head_dim, 0);
      heads.push_back(std::move(s));
    }
  }
  const attention::PrefixOracle in_f(model), in_reference(o.reference);
  attention::RunOptions all;
  all.trace_all = true;
  for (std::size_t w = 0; w < o.words.size(); ++w) {
    const std::string& word = o.words[w];
    const attention::RunResult run = attention::run(model, word, all);
    for (auto& s : heads) gather(s, model, run);
    const auto a = in_f.run(word), b = in_reference.run(word);
    ++out.decisions_compared;
    if (a.accept.back() != b.accept.back()) {
      Flip f;
      f.word = word;
      f.length = a.accept.size() - 1;
      f.output = a.outputs.back();
      f.reference_output = b.outputs.back();
      f.accept = a.accept.back();
      f.reference_accept = b.accept.back();
      while (a.accept[f.first_prefix] == b.accept[f.first_prefix]) ++f.first_prefix;
      f.first_attention_difference = first_difference(run, attention::run(o.reference, word, all));
      out.flips.push_back(std::move(f));
    }
    if (progress) progress(w + 1, o.words.size());
  }
  for (auto& s : heads) {
    HeadReport r;
    r.layer = s.layer;
    r.head = s.index;
    r.name = s.head->name;
    double mass = 0;
    for (auto& b : s.blocks) {
      if (s.tokens) {
        b.query_norm /= static_cast<double>(s.tokens);
        b.key_norm /= static_cast<double>(s.tokens);
      }
      mass += b.score_mass;
    }
    for (auto& b : s.blocks)
      if (mass > 0) b.score_share = b.score_mass / mass;
    r.blocks = s.blocks;
    r.test = positional_test(s, o.positional_share);
    if (r.test.positional && *r.test.offset < 1) {
      r.range_note = "offset k = 0: N_max^(k) is defined for k >= 1 (THEORY §6)";
    } else if (r.test.positional) {
      r.range = positional_range(s, model, static_cast<std::uint64_t>(*r.test.offset), o.max_length,
                                 r.range_note);
    }
    out.heads.push_back(std::move(r));
  }
  return out;
}

}  // namespace ropesim::proofs
