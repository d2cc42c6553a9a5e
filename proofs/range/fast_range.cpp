// The candidate algorithm's evaluation (proofs/range/fast_range.hpp certified_range_fast, THEORY
// §6): positions in chunks, each chunk's queries and keys realised once, its queries scored against
// the target and the candidate offsets on the threads, the first failing query in position
// order taken; and the estimate of its cost. The domain and E are in fast_range_error.cpp, the
// candidate offsets in fast_range_candidates.cpp, the realised queries and keys in
// fast_range_realised.cpp.
#include "proofs/range/fast_range.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"
#include "core/stopwatch.hpp"
#include "numeric/binary32_arithmetic.hpp"
#include "numeric/exact.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/parallel.hpp"
#include "proofs/range/fast_range_detail.hpp"

namespace ropesim::proofs {

using detail::CandidateEnumerator;
using detail::KeyBlock;
using detail::KeyStore;
using detail::RealisedHead;
using numeric::Value;

namespace {

/// The outcome of the queries of one chunk: the scores evaluated up to its first failing
/// query (all of them when none fails) and that failure.
struct ChunkOutcome {
  std::uint64_t scores = 0;
  std::optional<std::uint64_t> fail_query, fail_competitor;
  Value target, competitor;
};

/// For each offset, the first query (plus one; 0: none) that scored it, set concurrently by the
/// chunks' threads; grown (copied) only between batches.
struct FirstScored {
  std::unique_ptr<std::atomic<std::uint64_t>[]> v;
  std::uint64_t size = 0;
  void grow(std::uint64_t n) {
    if (n <= size) return;
    const std::uint64_t m = std::max(n, 2 * size);
    std::unique_ptr<std::atomic<std::uint64_t>[]> w(new std::atomic<std::uint64_t>[m]());
    for (std::uint64_t x = 0; x < size; ++x)
      w[x].store(v[x].load(std::memory_order_relaxed), std::memory_order_relaxed);
    v = std::move(w);
    size = m;
  }
};

}  // namespace

CertifiedRange certified_range_fast(const FixedOffsetHead& head, const ScanOptions& options) {
  if (options.max_length < 1 || options.max_length > kMaxScanLength) {
    throw InvalidArgument("the certified range's max_length must be in 1.." +
                          std::to_string(kMaxScanLength) + ", got " +
                          std::to_string(options.max_length));
  }
  if (auto why = fast_range_refusal(head))
    throw InvalidArgument("the candidate algorithm does not apply: " + *why);
  const auto start = std::chrono::steady_clock::now();
  // E: the global bound (r1, r3); none for pipelines, whose keys' deviations are measured
  const std::optional<mpq_class> E = realised_score_error_bound(head);
  CertifiedRange out;
  out.algorithm = "candidates";
  out.error_bound = E;
  out.max_length = options.max_length;
  const unsigned threads = std::max(1u, options.threads);
  const std::uint64_t k = head.k;
  const std::uint64_t last = options.max_length + 1;
  CandidateEnumerator enumerate(head, E);
  std::vector<std::uint64_t> positive, negative;
  enumerate.extend(k - 1, negative);
  positive = negative;
  const RealisedHead realised(head);
  const std::size_t D = realised.dim();
  const auto kernel = options.use_fast_kernel ? ScoreKernel::make(head) : std::nullopt;
  out.fast_kernel = kernel.has_value();
  // the binary32 kernel where it applies (p ≤ 11, NUMERIC §2.1): the same bits as `kernel`
  const auto kernel32 = kernel && options.use_binary32_kernel
                            ? numeric::Binary32Dot::for_policy(head.policy)
                            : std::nullopt;
  out.binary32_kernel = kernel32.has_value();
  const double f_double = head.f_large.to_double();  // exact: F fits a double
  const mpq_class& f = head.f_large_exact;
  auto score = [&](const double* q, const double* kj) -> Value {
    if (kernel) return Value::from_double_exact(kernel->dot(q, kj, D));
    std::vector<Value> qv(D), kv(D);
    for (std::size_t c = 0; c < D; ++c) {
      qv[c] = Value::from_double_exact(q[c]);
      kv[c] = Value::from_double_exact(kj[c]);
    }
    return attention::head_score(head.head, qv, kv, head.policy);
  };
  auto finite_or_throw = [](const Value& v) {
    if (!v.is_finite())
      throw std::logic_error("certified_range_fast: a score is not finite inside the domain");
  };
  const double target_ideal = numeric::nearest_double(head.C_exact * head.ideal.weight_sum());
  const double target_slack =
      E ? numeric::nearest_double(*E) * (1 + 0x1p-40) + std::fabs(target_ideal) * 0x1p-50
        : HUGE_VAL;

  // Positive candidate offsets up to `upto`, enumerated over sub-ranges on the threads and
  // appended in increasing order (the same list as one enumerator's), each entered into the
  // index with its upper bound u(n) ≥ S(n).
  const detail::IdealDoubles ideal(head.ideal);
  const detail::QueryBound query_bound(head, E);
  const double C_double = head.C.to_double();  // exact: F fits a double
  // Pipelines (THEORY §6 "Pipelines"): the keys' measured deviations, maximised over segments
  // of 64 positions and every earlier segment (detail::KeyDeviations); chunks start at
  // multiples of 64, so the bounds do not depend on the thread count
  const bool measured = query_bound.measured();
  detail::KeyDeviations key_deviations(query_bound);
  // every realised table entry is table_bound rounded into F at most: ≤ T·(1 + 2^(1−p)) +
  // 2^(emin−p+1) (any rounding mode), with slack for the doubles
  const double table_max = measured ? (numeric::nearest_double(detail::table_bound(head)) *
                                           (1 + std::ldexp(1.0, 1 - head.policy.format.precision)) +
                                       std::ldexp(1.0, static_cast<int>(head.policy.format.emin) +
                                                           1 - head.policy.format.precision)) *
                                          (1 + 0x1p-40)
                                    : 0;
  // the split bound (THEORY §6 "Split bounds"): offsets indexed by u2(n) ≥ S(n) + A(n)/C,
  // each carrying u(n) (index: by u(n), when the split bound does not apply)
  const bool split = query_bound.has_split();
  auto upper2 = [&](std::uint64_t n, double u) {
    const double a = std::nextafter(query_bound.offset_error(n) / C_double, HUGE_VAL);
    return std::nextafter(u + a, HUGE_VAL);
  };
  detail::OffsetIndex index(split ? ideal.W + query_bound.offset_error_max() / C_double + 1
                                  : ideal.W);
  std::vector<double> positive_u;  // u(n) of positive[x]
  auto extend_positive = [&](std::uint64_t upto) {
    const std::uint64_t from = enumerate.done();
    if (upto <= from) return;
    const std::size_t old_size = positive.size();
    const std::uint64_t span = upto - from;
    if (threads == 1 || span < 8192) {
      enumerate.extend(upto, positive);
    } else {
      const std::size_t parts = 4 * threads;
      std::vector<std::vector<std::uint64_t>> found(parts);
      numeric::parallel_for(threads, parts, [&](std::size_t t) {
        const std::uint64_t lo = from + span * t / parts, hi = from + span * (t + 1) / parts;
        CandidateEnumerator e(head, E);
        e.start_after(lo);
        e.extend(hi, found[t]);
      });
      for (const auto& v : found) positive.insert(positive.end(), v.begin(), v.end());
      enumerate.start_after(upto);
    }
    const std::size_t added = positive.size() - old_size;
    std::vector<double> u(added), u2(added);
    const std::size_t parts = added < 1024 ? 1 : 4 * threads;
    numeric::parallel_for(threads, parts, [&](std::size_t t) {
      for (std::size_t x = added * t / parts; x < added * (t + 1) / parts; ++x) {
        const std::uint64_t n = positive[old_size + x];
        u[x] = ideal.upper(n);
        if (split) u2[x] = upper2(n, u[x]);
      }
    });
    positive_u.insert(positive_u.end(), u.begin(), u.end());
    for (std::size_t x = 0; x < added; ++x) {
      if (split) {
        index.add(positive[old_size + x], u2[x], u[x]);
      } else {
        index.add(positive[old_size + x], u[x]);
      }
    }
  };
  // the offsets n < k are enumerated once for both signs (positive = negative above):
  // (n, u(n), u2(n)), u2 = +inf without the split bound
  struct Negative {
    std::uint64_t n;
    double u, u2;
  };
  std::vector<Negative> negative_u;
  for (const std::uint64_t n : negative) {
    const double u = ideal.upper(n);
    positive_u.push_back(u);
    negative_u.push_back({n, u, split ? upper2(n, u) : HUGE_VAL});
    if (split) {
      index.add(n, negative_u.back().u2, u);
    } else {
      index.add(n, u);
    }
  }
  // the first query (plus one; 0: none) that scored offset n exactly (n > 0 by n, n < 0 by
  // −n): speculative queries after the failing one are not counted
  // (grown between batches to the offsets the batch can reach: an early failure allocates
  // little whatever max_length is)
  FirstScored scored_before, scored_after;
  scored_after.grow(k);
  auto note = [](std::atomic<std::uint64_t>& first, std::uint64_t i) {
    std::uint64_t seen = first.load(std::memory_order_relaxed);
    while ((seen == 0 || seen > i + 1) &&
           !first.compare_exchange_weak(seen, i + 1, std::memory_order_relaxed)) {
    }
  };

  // The queries i in [a, b) (k + 1 ≤ a), in order, until the first failing one: the target
  // j = i − k, its exact score t and the query's error bound err_i give σ_i (THEORY §6,
  // per-query bounds); the competitors j = i − k − n (candidate n > 0 with n ≤ i − k) and
  // j = i − k + n (negative candidates) whose u(n) > σ_i are scored exactly, in decreasing
  // u(n) (the order of the ideal score gap), the largest score kept (first j on ties); every
  // other competitor scores at most t − f_large.
  KeyStore store;
  std::vector<double> sigma_all;  // σ_i of query i at [i − k − 1] (scores_per_query_bound)
  // `cancelled()` is asked before each query: once an earlier chunk of the batch has failed,
  // this chunk's outcome is never read and its remaining queries are skipped.
  auto evaluate = [&](std::uint64_t a, std::uint64_t b, const std::vector<double>& queries,
                      std::uint64_t query_begin, const auto& cancelled) -> ChunkOutcome {
    ChunkOutcome o;
    if (cancelled()) return o;
    const std::uint64_t kept = store.begin();
    // the targets (kept: the store keeps every key from the batch's first target on) and σ_i
    std::vector<Value> targets(b - a);
    std::vector<double> sigma(b - a), sigma2(b - a, -HUGE_VAL);
    double sigma_min = HUGE_VAL, sigma2_min = HUGE_VAL;
    auto target_key = [&](std::uint64_t i) {
      const double* kt = store.find(i - k, D);
      if (!kt) throw std::logic_error("certified_range_fast: a target key was not kept");
      return kt;
    };
    if (kernel32) {
      // the targets eight queries at a time (dot8_pairs: queries and keys transposed)
      std::vector<float> xt(8 * D), kt8(8 * D);
      float out8[8];
      for (std::uint64_t g = a; g < b; g += 8) {
        const std::uint64_t lanes = std::min<std::uint64_t>(8, b - g);
        for (std::size_t l = 0; l < 8; ++l) {
          const std::uint64_t i = g + std::min<std::uint64_t>(l, lanes - 1);
          const double* q = &queries[D * (i - query_begin)];
          const double* kt = target_key(i);
          for (std::size_t c = 0; c < D; ++c) {
            xt[8 * c + l] = static_cast<float>(q[c]);
            kt8[8 * c + l] = static_cast<float>(kt[c]);
          }
        }
        kernel32->dot8_pairs(xt.data(), kt8.data(), D, out8);
        for (std::uint64_t l = 0; l < lanes; ++l)
          targets[g + l - a] = Value::from_double_exact(static_cast<double>(out8[l]));
      }
    }
    for (std::uint64_t i = a; i < b; ++i) {
      const double* q = &queries[D * (i - query_begin)];
      const Value t = kernel32 ? targets[i - a] : score(q, target_key(i));
      finite_or_throw(t);
      if (!(std::fabs(t.to_double() - target_ideal) <= target_slack))
        throw std::logic_error(
            "certified_range_fast: a target score is farther than E from C·S(0)");
      targets[i - a] = t;
      // (an empty index and no negative offset: nothing to exclude, R_i is not needed)
      const double* kd = measured ? key_deviations.for_query(i) : nullptr;
      const auto [err, R] = query_bound.error_and_split(i, q, index.size() > 0, kd);
      if (measured && !(std::fabs(t.to_double() - target_ideal) <=
                        err * (1 + 0x1p-40) + std::fabs(target_ideal) * 0x1p-50))
        throw std::logic_error(
            "certified_range_fast: a target score is farther than err_i from C·S(0)");
      sigma[i - a] = detail::prune_threshold(t.to_double(), f_double, err, C_double);
      sigma_all[i - k - 1] = sigma[i - a];
      sigma_min = std::min(sigma_min, sigma[i - a]);
      if (split && index.size() > 0) {
        sigma2[i - a] = detail::prune_threshold(t.to_double(), f_double, R, C_double);
        sigma2_min = std::min(sigma2_min, sigma2[i - a]);
      }
    }
    // a competitor at offset n is scored iff u(n) > σ_i and (split bound) u2(n) > σ2_i; the
    // index is by u2 (carrying u) or by u
    auto visit = [&](double s, double s2, std::uint64_t max_n, auto&& f) {
      if (!split) {
        index.for_each_above(s, max_n, f);
        return;
      }
      index.for_each_above(s2, max_n, [&](const detail::OffsetIndex::Entry& e) {
        if (e.v > s) f(e);
      });
    };
    // keys older than the store that some query may score: realised again, once per merged
    // window of offsets
    std::vector<KeyBlock> far;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;
    if (b - 1 > k) {
      visit(sigma_min, sigma2_min, b - 1 - k, [&](const detail::OffsetIndex::Entry& e) {
        const std::uint64_t n = e.n;
        const std::uint64_t lo = std::max(a, k + n) - k - n, hi = b - k - n;
        if (lo < kept) windows.emplace_back(lo, std::min(hi, kept));
      });
    }
    std::sort(windows.begin(), windows.end());
    for (std::size_t w = 0; w < windows.size();) {
      std::uint64_t lo = windows[w].first, hi = windows[w].second;
      for (++w; w < windows.size() && windows[w].first <= hi; ++w)
        hi = std::max(hi, windows[w].second);
      far.push_back(realised.keys(lo, hi));
    }
    auto key = [&](std::uint64_t j) -> const double* {
      const double* p = j >= kept ? store.find(j, D) : detail::find_key(far, j, D);
      if (!p) throw std::logic_error("certified_range_fast: a key was not realised");
      return p;
    };
    std::vector<std::uint64_t> competitors;
    std::vector<float> qf(kernel32 ? D : 0), yt(kernel32 ? 8 * D : 0);
    float out8[8];
    for (std::uint64_t i = a; i < b; ++i) {
      if (cancelled()) break;
      const double* q = &queries[D * (i - query_begin)];
      const std::uint64_t target = i - k;
      const Value& t = targets[i - a];
      const double s_i = sigma[i - a], s2_i = sigma2[i - a];
      ++o.scores;
      Value m;
      std::uint64_t arg = 0;
      bool have = false;
      auto take = [&](std::uint64_t j, const Value& s) {
        finite_or_throw(s);
        ++o.scores;
        const int c = kernel ? (s.narrow() > m.narrow()    ? 1
                                : s.narrow() == m.narrow() ? 0
                                                           : -1)
                             : (have ? numeric::compare(s, m) : 1);
        if (!have || c > 0 || (c == 0 && j < arg)) {
          m = s;
          arg = j;
          have = true;
        }
      };
      // the competitors this query scores: j = target − n (candidates with u(n) > σ_i, in
      // decreasing u(n)), then j = target + n
      competitors.clear();
      visit(s_i, s2_i, target, [&](const detail::OffsetIndex::Entry& e) {
        competitors.push_back(target - e.n);
        note(scored_before.v[e.n], i);
      });
      for (const Negative& e : negative_u) {
        if (!(e.u > s_i && e.u2 > s2_i)) continue;
        competitors.push_back(target + e.n);
        note(scored_after.v[e.n], i);
      }
      if (kernel32) {
        // eight competitors at a time through the binary32 kernel (NUMERIC §2.1): q and the
        // keys as floats (elements of F: exact), the keys transposed
        for (std::size_t c = 0; c < D; ++c) qf[c] = static_cast<float>(q[c]);
        for (std::size_t g = 0; g < competitors.size(); g += 8) {
          const std::size_t lanes = std::min<std::size_t>(8, competitors.size() - g);
          for (std::size_t l = 0; l < 8; ++l) {
            const double* kj = key(competitors[g + std::min(l, lanes - 1)]);
            for (std::size_t c = 0; c < D; ++c) yt[8 * c + l] = static_cast<float>(kj[c]);
          }
          kernel32->dot8(qf.data(), yt.data(), D, out8);
          for (std::size_t l = 0; l < lanes; ++l)
            take(competitors[g + l], Value::from_double_exact(static_cast<double>(out8[l])));
        }
      } else {
        for (const std::uint64_t j : competitors) take(j, score(q, key(j)));
      }
      if (!have) continue;
      const bool pass = kernel ? detail::lead_at_least(t.narrow(), m.narrow(), f_double)
                               : (exact_rational(t) - exact_rational(m) >= f);
      if (pass) continue;
      o.fail_query = i;
      o.fail_competitor = arg;
      o.target = t;
      o.competitor = m;
      break;
    }
    return o;
  };

  // Batches of chunks: each chunk's positions realised once (queries and keys), then its
  // queries scored, the chunks of a batch on the threads; the first failing query is the
  // first in position order, whatever the thread count. Chunks grow from 64 positions to
  // max_chunk (a failing query often comes early). The threads take the chunks in position
  // order; once a chunk fails, the later chunks of its batch stop (their work is speculative:
  // only chunks before the failing one count), so a second thread costs at most the chunk it
  // is running when the failure is found.
  // (chunk sizes are multiples of KeyDeviations::kSegment = 64: every chunk starts a segment)
  const std::uint64_t max_chunk =
      std::max<std::uint64_t>(64, 131072 / std::max<std::size_t>(D, 1) / 64 * 64);
  const std::size_t chunks_per_batch = 4 * threads;
  bool failed = false;
  std::uint64_t last_query = 0;
  for (std::uint64_t begin = 0, chunk = 64; begin <= last && !failed;
       chunk = std::min(2 * chunk, max_chunk)) {
    if (options.abandon && options.abandon()) break;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks;
    for (std::size_t c = 0; c < chunks_per_batch && begin <= last; ++c) {
      const std::uint64_t end = std::min(last + 1, begin + chunk);
      chunks.emplace_back(begin, end);
      begin = end;
    }
    const std::uint64_t batch_begin = chunks.front().first, batch_end = chunks.back().second;
    if (batch_end - 1 > k) extend_positive(batch_end - 1 - k);
    scored_before.grow(batch_end > k ? batch_end - k : 1);
    if (batch_end > k + 1) sigma_all.resize(batch_end - k - 1);
    std::vector<std::vector<double>> queries(chunks.size());
    std::vector<KeyBlock> keys(chunks.size());
    // measured key deviations: each chunk's segments' maxima (pipelines)
    std::vector<std::vector<double>> segments(chunks.size());
    std::atomic<bool> table_too_large{false};
    numeric::parallel_for(threads, chunks.size(), [&](std::size_t c) {
      const auto [a, b] = chunks[c];
      const auto pairs = realised.realise(a, b);
      const std::uint64_t qa = std::max(a, std::min(b, k + 1));
      queries[c].assign(D * (b - qa), 0.0);
      keys[c] = KeyBlock{a, b, std::vector<double>(D * (b - a))};
      for (std::uint64_t p = a; p < b; ++p)
        realised.rotate(pairs, p - a, p >= qa ? &queries[c][D * (p - qa)] : nullptr,
                        &keys[c].keys[D * (p - a)]);
      if (!measured) return;
      for (const auto& block : pairs) {
        for (const auto& pr : block) {
          if (!(std::fabs(pr.cos.to_double()) <= table_max) ||
              !(std::fabs(pr.sin.to_double()) <= table_max))
            table_too_large = true;
        }
      }
      segments[c] = key_deviations.segments(a, b - a, keys[c].keys.data(), D);
    });
    if (table_too_large)
      throw std::logic_error(
          "certified_range_fast: a realised table entry exceeds the overflow analysis' bound");
    for (std::size_t c = 0; c < chunks.size() && measured; ++c)
      key_deviations.append(chunks[c].first, segments[c]);
    for (auto& kb : keys) store.append(std::move(kb));
    store.evict(options.key_store_bytes, batch_begin > k ? batch_begin - k : 0);
    std::vector<ChunkOutcome> outcomes(chunks.size());
    std::atomic<std::size_t> first_failed{chunks.size()};
    numeric::parallel_for(threads, chunks.size(), [&](std::size_t c) {
      const auto [a, b] = chunks[c];
      const std::uint64_t qa = std::max(a, std::min(b, k + 1));
      if (qa >= b) return;
      outcomes[c] =
          evaluate(qa, b, queries[c], qa, [&first_failed, c] { return first_failed.load() < c; });
      if (!outcomes[c].fail_query) return;
      std::size_t seen = first_failed.load();
      while (c < seen && !first_failed.compare_exchange_weak(seen, c)) {
      }
    });
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const auto [a, b] = chunks[c];
      const ChunkOutcome& o = outcomes[c];
      out.scores_evaluated += o.scores;
      if (b > k + 1) last_query = b - 1;
      if (!o.fail_query) continue;
      const std::uint64_t i = *o.fail_query;
      last_query = i;
      out.n_max = i - 2;
      out.fail_query = i;
      out.fail_competitor = o.fail_competitor;
      out.fail_offset = static_cast<std::int64_t>(i) - static_cast<std::int64_t>(k) -
                        static_cast<std::int64_t>(*o.fail_competitor);
      out.target_score = o.target;
      out.competitor_score = o.competitor;
      out.gap = exact_rational(o.target) - exact_rational(o.competitor);
      failed = true;
      break;
    }
  }
  const std::uint64_t reach = last_query > k ? last_query - k : 0;
  out.candidate_offsets =
      negative.size() +
      static_cast<std::uint64_t>(std::upper_bound(positive.begin(), positive.end(), reach) -
                                 positive.begin());
  out.offsets_scored = 0;
  auto counted = [&](const std::atomic<std::uint64_t>& first) {
    const std::uint64_t v = first.load(std::memory_order_relaxed);
    return v != 0 && v - 1 <= last_query ? 1u : 0u;
  };
  for (std::uint64_t n = 1; n <= reach && n < scored_before.size; ++n)
    out.offsets_scored += counted(scored_before.v[n]);
  for (std::uint64_t n = 1; n < k; ++n) out.offsets_scored += counted(scored_after.v[n]);
  // scores_per_query_bound: one target per query and the competitors with u(n) > σ_i, counted
  // with a Fenwick tree over the ranks of u (offsets n ≤ i − k inserted as i grows)
  {
    const std::size_t m = positive.size();
    std::vector<double> sorted(positive_u.begin(), positive_u.begin() + m);
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> after;
    for (const Negative& e : negative_u) after.push_back(e.u);
    std::sort(after.begin(), after.end());
    std::vector<std::uint64_t> tree(m + 1, 0);
    std::uint64_t inserted = 0, total = 0;
    std::size_t next = 0;
    for (std::uint64_t i = k + 1; i <= last_query && i - k - 1 < sigma_all.size(); ++i) {
      for (; next < m && positive[next] <= i - k; ++next, ++inserted) {
        const auto r = static_cast<std::size_t>(
            std::lower_bound(sorted.begin(), sorted.end(), positive_u[next]) - sorted.begin());
        for (std::size_t x = r + 1; x <= m; x += x & (~x + 1)) ++tree[x];
      }
      const double s = sigma_all[i - k - 1];
      const auto le = static_cast<std::size_t>(std::upper_bound(sorted.begin(), sorted.end(), s) -
                                               sorted.begin());
      std::uint64_t at_most = 0;  // inserted offsets with u ≤ σ_i
      for (std::size_t x = le; x > 0; x -= x & (~x + 1)) at_most += tree[x];
      const auto above_after =
          static_cast<std::uint64_t>(after.end() - std::upper_bound(after.begin(), after.end(), s));
      total += 1 + (inserted - at_most) + above_after;
    }
    out.scores_per_query_bound = total;
  }
  if (!failed) {
    out.n_max = options.max_length;
    out.at_limit = true;
  }
  out.seconds = ropesim::seconds_since(start);
  return out;
}

RangeEstimate estimate_certified_range_fast(const FixedOffsetHead& head, std::uint64_t max_length,
                                            unsigned threads) {
  if (auto why = fast_range_refusal(head))
    throw InvalidArgument("the candidate algorithm does not apply: " + *why);
  const std::optional<mpq_class> E = realised_score_error_bound(head);
  const RealisedHead realised(head);
  const std::size_t D = realised.dim();
  const double Dd = static_cast<double>(D);
  const std::uint64_t k = head.k;
  const double L = static_cast<double>(max_length) + 2;
  RangeEstimate est;
  // realisation and rotation of a probe of positions
  const std::uint64_t probe = std::min<std::uint64_t>(256, max_length + 2);
  auto t0 = std::chrono::steady_clock::now();
  const auto pairs = realised.realise(0, probe);
  std::vector<double> q(D * probe), kk(D * probe);
  for (std::uint64_t p = 0; p < probe; ++p) realised.rotate(pairs, p, &q[D * p], &kk[D * p]);
  est.seconds_per_position = ropesim::seconds_since(t0) / static_cast<double>(probe);
  // the probe's queries: σ_i (per-query bounds) and every competitor scored, timed (the
  // kernel the algorithm uses)
  const auto kernel = ScoreKernel::make(head);
  const auto kernel32 = kernel ? numeric::Binary32Dot::for_policy(head.policy) : std::nullopt;
  auto score = [&](const double* a, const double* b) -> double {
    if (kernel) return kernel->dot(a, b, D);
    std::vector<Value> av(D), bv(D);
    for (std::size_t c = 0; c < D; ++c) {
      av[c] = Value::from_double_exact(a[c]);
      bv[c] = Value::from_double_exact(b[c]);
    }
    return attention::head_score(head.head, av, bv, head.policy).to_double();
  };
  const detail::QueryBound bound(head, E);
  const double f = head.f_large.to_double();
  double sigma = HUGE_VAL, sigma2 = HUGE_VAL;
  // pipelines: the key deviations grow with the position, so the probe's thresholds are taken
  // with those of the last 256 positions before L (an estimate: the run measures its own)
  std::vector<double> kd;
  std::vector<double> late_q, late_k;
  std::uint64_t late_begin = 0;
  if (bound.measured()) {
    kd.assign(bound.blocks() + 1, 0.0);
    std::vector<double> dev(kd.size());
    auto widen = [&](std::uint64_t p, const double* key) {
      bound.key_deviation(p, key, dev.data());
      for (std::size_t x = 0; x < kd.size(); ++x) kd[x] = std::max(kd[x], dev[x]);
    };
    for (std::uint64_t p = 0; p < probe; ++p) widen(p, &kk[D * p]);
    const std::uint64_t end = max_length + 2;
    if (end >= 2 * probe + k) {
      late_begin = end - probe;
      const auto late = realised.realise(late_begin, end);
      late_q.assign(D * probe, 0.0);
      late_k.assign(D * probe, 0.0);
      for (std::uint64_t p = 0; p < probe; ++p) {
        realised.rotate(late, p, &late_q[D * p], &late_k[D * p]);
        widen(late_begin + p, &late_k[D * p]);
      }
      for (std::uint64_t i = late_begin + k; i < end; ++i) {
        const double* qi = &late_q[D * (i - late_begin)];
        const double t = score(qi, &late_k[D * (i - k - late_begin)]);
        const auto [err, R] = bound.error_and_split(i, qi, true, kd.data());
        sigma = std::min(sigma, detail::prune_threshold(t, f, err, head.C.to_double()));
        if (bound.has_split())
          sigma2 = std::min(sigma2, detail::prune_threshold(t, f, R, head.C.to_double()));
      }
    }
  }
  const double* kdp = bound.measured() ? kd.data() : nullptr;
  std::uint64_t probe_scores = 0;
  double bound_seconds = 0;
  t0 = std::chrono::steady_clock::now();
  for (std::uint64_t i = k + 1; i < probe; ++i) {
    const double t = score(&q[D * i], &kk[D * (i - k)]);
    const auto tb = std::chrono::steady_clock::now();
    const double err = bound.error(i, &q[D * i], kdp);
    if (bound.has_split()) {
      sigma2 = std::min(sigma2, detail::prune_threshold(t, f, bound.split_error(i, &q[D * i], kdp),
                                                        head.C.to_double()));
    }
    bound_seconds += ropesim::seconds_since(tb);
    sigma = std::min(sigma, detail::prune_threshold(t, f, err, head.C.to_double()));
    for (std::uint64_t j = 0; j < i; ++j) {
      if (j == i - k) continue;
      const double s = score(&q[D * i], &kk[D * j]);
      ++probe_scores;
      if (!est.fails_in_probe && !detail::lead_at_least(t, s, f)) est.fails_in_probe = true;
    }
  }
  double t_score = probe_scores ? (ropesim::seconds_since(t0) - bound_seconds) /
                                      static_cast<double>(probe_scores)
                                : 2e-9 * Dd;
  const double t_query = probe > k + 1 ? bound_seconds / static_cast<double>(probe - k - 1) : 0;
  // eight at a time through the binary32 kernel: measured on the probe's keys too
  if (kernel32 && probe > k + 1 && probe >= 8) {
    std::vector<float> qf(D), yt(8 * D);
    for (std::size_t c = 0; c < D; ++c) qf[c] = static_cast<float>(q[D * (probe - 1) + c]);
    float out8[8];
    const std::uint64_t groups = std::max<std::uint64_t>(1, probe / 8) * 8;
    t0 = std::chrono::steady_clock::now();
    for (std::uint64_t g = 0; g < groups; ++g) {
      for (std::size_t l = 0; l < 8; ++l) {
        const double* kj = &kk[D * ((8 * g + l) % probe)];
        for (std::size_t c = 0; c < D; ++c) yt[8 * c + l] = static_cast<float>(kj[c]);
      }
      kernel32->dot8(qf.data(), yt.data(), D, out8);
    }
    t_score = ropesim::seconds_since(t0) / static_cast<double>(8 * groups);
  }
  if (!(sigma < HUGE_VAL)) sigma = -HUGE_VAL;  // no probe query: every candidate
  if (!(sigma2 < HUGE_VAL)) sigma2 = -HUGE_VAL;
  // the candidate offsets over a probe of offsets, and those above the probe's σ
  const std::uint64_t offsets = std::min<std::uint64_t>(20000, max_length);
  t0 = std::chrono::steady_clock::now();
  CandidateEnumerator e(head, E);
  const detail::IdealDoubles ideal(head.ideal);
  std::vector<std::uint64_t> found;
  e.extend(offsets, found);
  std::vector<std::uint64_t> scored;
  for (const std::uint64_t n : found) {
    const double u = ideal.upper(n);
    if (!(u > sigma)) continue;
    if (bound.has_split()) {
      const double a = std::nextafter(bound.offset_error(n) / head.C.to_double(), HUGE_VAL);
      if (!(std::nextafter(u + a, HUGE_VAL) > sigma2)) continue;
    }
    scored.push_back(n);
  }
  const double per_offset = ropesim::seconds_since(t0) / static_cast<double>(offsets);
  est.seconds_per_offset = per_offset;
  est.candidate_density = static_cast<double>(found.size()) / static_cast<double>(offsets);
  // the split bound's A(n) (O(blocks), a libm cos per block) is computed for EVERY candidate
  // offset when the run indexes them by u2(n) (certified_range_fast's extend_positive), not
  // only for those the probe's σ keeps: timed on up to 1024 candidates spread over the probe
  // of offsets, charged to each candidate (for bf16 heads every offset is one)
  double t_offset_error = 0;
  if (bound.has_split() && !found.empty()) {
    const std::size_t sample = std::min<std::size_t>(1024, found.size());
    double sink = 0;
    t0 = std::chrono::steady_clock::now();
    for (std::size_t x = 0; x < sample; ++x)
      sink += bound.offset_error(found[x * found.size() / sample]);
    t_offset_error = ropesim::seconds_since(t0) / static_cast<double>(sample);
    if (!(sink >= 0)) t_offset_error = 0;  // keeps the loop (A(n) ≥ 0 always)
  }
  // scores: one target per query, and each scored offset n at the queries i ≥ n + k; beyond
  // the probe of offsets, the density of scored offsets over its second half
  double competitor_scores = 0;
  for (const std::uint64_t n : scored)
    competitor_scores += std::max(0.0, L - static_cast<double>(k + n));
  const double O = static_cast<double>(offsets);
  std::size_t tail = 0;
  for (const std::uint64_t n : scored) tail += 2 * n > offsets ? 1 : 0;
  const double rho_tail = O >= 2 ? static_cast<double>(tail) / (O / 2) : 0;
  if (L > O) competitor_scores += rho_tail * (L - O) * (L - O) / 2;
  est.scores = L + competitor_scores;
  est.scored_density = static_cast<double>(scored.size()) / O;
  const double kept = static_cast<double>(detail::kKeyStoreBytes) / (8 * Dd);
  const double far = L > kept ? rho_tail * (L - kept) * (L - kept) / 2 : 0;  // realised again
  const double work = L * (est.seconds_per_position + per_offset + t_query +
                           est.candidate_density * t_offset_error) +
                      far * est.seconds_per_position / 2 + est.scores * t_score;
  est.seconds = work / std::max(1u, threads);
  if (est.fails_in_probe) {
    // a query of the probe fails: the run stops there (its first chunks)
    est.seconds = std::min(
        est.seconds, 512 * est.seconds_per_position + static_cast<double>(probe_scores) * t_score);
  }
  const double batch =
      4.0 * std::max(1u, threads) *
      static_cast<double>(std::max<std::uint64_t>(64, 131072 / std::max<std::size_t>(D, 1)));
  // the keys kept (at most kKeyStoreBytes) and a batch's queries and keys, then what grows
  // with L, fitted to peak RSS (docs/PERFORMANCE.md): per position σ_i and the first scored
  // query (arrays grown by doubling), about 56 bytes; per candidate offset u(n), its index
  // entry, and the final count's sorted copy and tree, about 200 bytes; and 64 MB. Measured
  // (llama3-8b, 2 threads): fp32, C = 5000.74512, no candidate offset: 437 MB at L = 10^6,
  // 539 MB at 3·10^6; bf16, C = 16384, every offset a candidate: 155 MB at 10^5, 425 MB at
  // 4·10^5, 464 MB at 6·10^5. A query of the probe failing, the run stops in its first batch.
  const double grown = est.fails_in_probe ? std::min(L, batch) : L;
  est.bytes = std::min(grown, kept) * 8 * Dd + batch * 16 * Dd +
              (56 + 200 * est.candidate_density) * grown + 64e6;
  return est;
}

}  // namespace ropesim::proofs
