#include "attention/census.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <exception>
#include <map>
#include <memory>

#include "attention/detail/evaluator.hpp"
#include "numeric/error.hpp"
#include "numeric/mpfr_thread.hpp"
#include "numeric/parallel.hpp"

namespace ropesim::attention {

namespace {

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// ---- test hooks (census.hpp detail::) --------------------------------------------------------
std::atomic<detail::CensusFingerprint> g_fingerprint{nullptr};
std::atomic<bool> g_verify{true};

/// Folds block b's exact key into a position's running fingerprint (bits 0-1 are left to the
/// caller: they hold the overflow/NaN flags).
inline std::uint64_t fold(std::uint64_t fingerprint, std::uint64_t key, std::size_t block) {
  if (const auto hook = g_fingerprint.load(std::memory_order_relaxed))
    return hook(fingerprint, key, block);
  return mix(fingerprint ^ mix(key + 0x9e3779b97f4a7c15ULL * (block + 1)));
}

constexpr std::uint64_t kFlagBits = 3;  // bit 0 overflow, bit 1 NaN (in the fingerprint word)
inline std::uint64_t flag_bits(std::uint8_t flags) {
  return ((flags & flag_overflow) ? 1u : 0u) | ((flags & flag_nan) ? 2u : 0u);
}

/// A block's exact key per position for table formats stored as binary64 but not packable:
/// both bit patterns.
struct Key2 {
  std::uint64_t cos = 0, sin = 0;
  auto operator<=>(const Key2&) const = default;
};

/// How a member's per-block (cos, sin) is keyed exactly (key(i) == key(j) ⟺ same bits):
/// pack16 — every value of the table format has ≤ 8 significant bits inside binary32's range
/// (bf16, fp8): the binary32 bit pattern's top 16 bits, cos·2^16 + sin in 32 bits;
/// pack32 — the table format fits binary32 (fp16, fp32): cos·2^32 + sin binary32 patterns;
/// pair — other binary64-stored formats (fp64, fixed point): both binary64 patterns;
/// wide — formats beyond binary64: dense ids interned from the exact hex text, in position order.
enum class KeyKind { pack16, pack32, pair, wide };

KeyKind key_kind(const Format& f) {
  if (!f.fits_double()) return KeyKind::wide;
  if (f.is_fixed_point()) return KeyKind::pair;
  if (f.precision <= 24 && f.emin >= -126 && f.emax <= 127)
    return f.precision <= 8 ? KeyKind::pack16 : KeyKind::pack32;
  return KeyKind::pair;
}

constexpr std::uint64_t kNanKey = 0x7ff8000000000001ULL;  // Value::bits_key of every NaN

inline std::uint32_t binary32_bits(std::uint64_t bits) {
  if (bits == kNanKey) return 0x7fc00001u;
  return std::bit_cast<std::uint32_t>(static_cast<float>(std::bit_cast<double>(bits)));
}
inline std::uint32_t key16(const PairBits& p) {
  return (binary32_bits(p.cos) >> 16 << 16) | (binary32_bits(p.sin) >> 16);
}
inline std::uint64_t key32(const PairBits& p) {
  return (static_cast<std::uint64_t>(binary32_bits(p.cos)) << 32) | binary32_bits(p.sin);
}
inline std::uint64_t key_hash(std::uint64_t k) { return k; }
inline std::uint64_t key_hash(std::uint32_t k) { return k; }
inline std::uint64_t key_hash(const Key2& k) {
  return mix(k.cos) ^ (k.sin * 0x9e3779b97f4a7c15ULL);
}

std::string wide_key(const RealisedPair& p) {
  return (p.cos.is_nan() ? "nan" : p.cos.to_hex()) + "|" +
         (p.sin.is_nan() ? "nan" : p.sin.to_hex());
}

/// Z-function: z[P] = length of the longest common prefix of ids and ids[P..] (z[0] = N).
void z_function(const std::vector<std::uint32_t>& s, std::vector<std::uint32_t>& z) {
  const std::size_t n = s.size();
  z.assign(n, 0);
  if (n == 0) return;
  z[0] = static_cast<std::uint32_t>(n);
  std::size_t l = 0, r = 0;
  for (std::size_t i = 1; i < n; ++i) {
    std::size_t k = 0;
    if (i < r) k = std::min<std::size_t>(r - i, z[i - l]);
    while (i + k < n && s[k] == s[i + k]) ++k;
    z[i] = static_cast<std::uint32_t>(k);
    if (i + k > r) {
      l = i;
      r = i + k;
    }
  }
}

/// Smallest P ≤ N/2 with ids[i+P] = ids[i] for all i < N-P.
std::optional<std::uint64_t> smallest_period(const std::vector<std::uint32_t>& z) {
  const std::size_t n = z.size();
  for (std::size_t p = 1; p <= n / 2; ++p) {
    if (z[p] >= n - p) return p;
  }
  return std::nullopt;
}

/// The smallest P ≤ N/2 with s[i+P] = s[i] for all i < N-P, in O(N) time and O(1) memory:
/// P is N - L for the longest border L ≥ N - N/2 (prefix of length L = suffix of length L).
/// Borders are found by comparing polynomial hashes (mod 2^64, odd base, so the base is
/// invertible and both hashes can be stepped from L to L-1); every hash match is confirmed by
/// comparing the keys exactly, so a hash collision costs time, never a wrong period.
template <class K>
std::optional<std::uint64_t> smallest_period_of(const std::vector<K>& s) {
  const std::size_t n = s.size();
  if (n < 2) return std::nullopt;
  constexpr std::uint64_t x = 0x9e3779b97f4a7c15ULL;  // odd
  std::uint64_t xi = x;                               // x^-1 mod 2^64 by Newton's iteration
  for (int k = 0; k < 6; ++k) xi *= 2 - x * xi;
  auto v = [&](std::size_t i) { return mix(key_hash(s[i])); };
  // pre = Σ_{i<L} v_i x^i, suf = Σ_{k<L} v_{N-L+k} x^k at L = N-1; xp = x^(L-1)
  std::uint64_t pre = 0, suf = 0, xp = 1;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    pre += v(i) * xp;
    suf += v(i + 1) * xp;
    if (i + 2 < n) xp *= x;
  }
  const std::size_t lmin = n - n / 2;
  for (std::size_t len = n - 1; len >= lmin; --len) {
    if (pre == suf && std::equal(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(len),
                                 s.begin() + static_cast<std::ptrdiff_t>(n - len)))
      return n - len;
    pre -= v(len - 1) * xp;  // xp = x^(len-1)
    xp *= xi;
    suf = (suf - v(n - len)) * xi;  // suf(L) = v_{N-L} + x·suf(L-1)
  }
  return std::nullopt;
}

/// Bytes held by the census's per-position arrays: current and peak (CensusResult::
/// working_bytes).
struct Meter {
  std::atomic<std::uint64_t> now{0}, peak{0};
  void add(std::uint64_t b) {
    const std::uint64_t v = now += b;
    std::uint64_t p = peak.load();
    while (v > p && !peak.compare_exchange_weak(p, v)) {
    }
  }
  void sub(std::uint64_t b) { now -= b; }
};

template <class T>
void release(std::vector<T>& v, Meter& meter) {
  meter.sub(v.capacity() * sizeof(T));
  std::vector<T>().swap(v);
}
template <class T>
void allocate(std::vector<T>& v, std::size_t n, const T& fill, Meter& meter) {
  release(v, meter);
  v.assign(n, fill);
  meter.add(v.capacity() * sizeof(T));
}

/// Number of distinct keys (exact). Open addressing over `threads` hash partitions (part t
/// takes the keys whose hash is t mod parts), bounded together to N/8 keys (at least 1024) at
/// load ≤ 1/2, so the tables take (key size + 1)/4 bytes a position; a block with more distinct
/// keys sorts `keys` in place instead (parts sorted in parallel, then one merged walk). `keys` is
/// left in an unspecified order.
template <class K>
std::uint64_t count_distinct(std::vector<K>& keys, unsigned threads, Meter& meter) {
  const std::size_t n = keys.size();
  const std::size_t parts = std::max<std::size_t>(1, std::min<std::size_t>(threads, 16));
  const std::size_t budget = std::max<std::size_t>(1024, n / 8) / parts;
  std::vector<std::uint64_t> counts(parts, 0);
  std::atomic<bool> overflow{false};
  std::size_t cap = 16;
  while (cap < 2 * budget) cap *= 2;
  const std::uint64_t table_bytes = std::min<std::size_t>(threads, parts) * cap * (sizeof(K) + 1);
  meter.add(table_bytes);
  numeric::parallel_for(threads, parts, [&](std::size_t t) {
    std::vector<K> table(cap);
    std::vector<std::uint8_t> used(cap, 0);
    const std::size_t mask = cap - 1;
    std::uint64_t count = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t h = mix(key_hash(keys[i]) + 0x632be59bd9b4e019ULL);
      if (h % parts != t) continue;
      std::size_t slot = (h / parts) & mask;
      while (used[slot] && !(table[slot] == keys[i])) slot = (slot + 1) & mask;
      if (used[slot]) continue;
      if (++count > budget || overflow.load(std::memory_order_relaxed)) {
        overflow = true;
        return;
      }
      used[slot] = 1;
      table[slot] = keys[i];
    }
    counts[t] = count;
  });
  meter.sub(table_bytes);
  if (!overflow) {
    std::uint64_t total = 0;
    for (auto c : counts) total += c;
    return total;
  }
  std::vector<std::size_t> bound(parts + 1);
  for (std::size_t t = 0; t <= parts; ++t) bound[t] = n * t / parts;
  numeric::parallel_for(threads, parts, [&](std::size_t t) {
    std::sort(keys.begin() + static_cast<std::ptrdiff_t>(bound[t]),
              keys.begin() + static_cast<std::ptrdiff_t>(bound[t + 1]));
  });
  std::vector<std::size_t> head(bound.begin(), bound.end() - 1);
  std::uint64_t count = 0;
  const K* last = nullptr;
  for (;;) {
    std::size_t best = parts;
    for (std::size_t t = 0; t < parts; ++t) {
      if (head[t] < bound[t + 1] && (best == parts || keys[head[t]] < keys[head[best]])) best = t;
    }
    if (best == parts) break;
    const K& k = keys[head[best]++];
    if (!last || !(*last == k)) ++count;
    last = &k;
  }
  return count;
}

constexpr std::uint64_t kChunk = 4096;

/// Positions per task of one block's pass: a multiple of kChunk, about N / (8·threads) so that
/// every thread gets several tasks at any N (2^16 positions on 2 threads: 16 tasks of 4096),
/// at most 16·kChunk. Each position's key and fingerprint are a function of that position
/// alone, so the split does not change any result.
std::uint64_t task_positions(std::uint64_t n, unsigned threads) {
  const std::uint64_t want = n / (8 * std::uint64_t{std::max(1u, threads)});
  const std::uint64_t chunks = std::clamp<std::uint64_t>((want + kChunk - 1) / kChunk, 1, 16);
  return chunks * kChunk;
}

/// How a block's realised pairs are produced along the census line (census.hpp
/// CensusOptions::axis): streamed at scalar positions S.. (one-axis schedules, and blocks
/// reading the line's moving axis or the diagonal), constant (a block reading an axis that
/// stays at `at`), or per tuple (blocks mixing axes).
class LineSource {
 public:
  LineSource(const Schedule& s, std::size_t b, const std::vector<Realisation>& members,
             const CensusOptions& options)
      : s_(s), b_(b), members_(members), options_(options) {
    const RotaryBlock& block = s.blocks[b];
    mixed_ = s.is_multi_axis() && block.axis_angles.size() > 1;
    if (mixed_) return;
    ev_ = std::make_unique<detail::BlockEvaluator>(s, b, members,
                                                   members.front().arithmetic_engine());
    if (!s.is_multi_axis()) return;
    if (block.axis_angles.empty() ||
        (options.axis && block.axis_angles.front().axis != *options.axis)) {
      // reads an axis fixed at `at` (or none: θ = 0, realised at 0 as realise() does): one
      // value for the whole window
      const std::uint64_t q = block.axis_angles.empty() || options.at.empty()
                                  ? 0
                                  : options.at[block.axis_angles.front().axis];
      ev_->evaluate(q, q + 1, constant_);
      is_constant_ = true;
    }
  }
  /// values[m][k] = member m's pair at window index begin + k (absolute S + begin + k).
  void evaluate(std::uint64_t begin, std::uint64_t end,
                std::vector<std::vector<RealisedPair>>& values) {
    const std::uint64_t start = options_.start;
    if (is_constant_) {
      values.resize(members_.size());
      for (std::size_t m = 0; m < members_.size(); ++m)
        values[m].assign(end - begin, constant_[m][0]);
      return;
    }
    if (!mixed_) return ev_->evaluate(start + begin, start + end, values);
    values.resize(members_.size());
    PositionTuple p = options_.at.empty() ? PositionTuple(s_.position_axes.size(), 0) : options_.at;
    for (std::size_t m = 0; m < members_.size(); ++m) values[m].resize(end - begin);
    for (std::uint64_t i = begin; i < end; ++i) {
      if (options_.axis) {
        p[*options_.axis] = start + i;
      } else {
        std::fill(p.begin(), p.end(), start + i);
      }
      for (std::size_t m = 0; m < members_.size(); ++m) {
        values[m][i - begin] =
            detail::evaluate_mixed(s_.blocks[b_], members_[m], p, s_.position_axes, nullptr);
      }
    }
  }
  /// What the census reads narrow formats through: bits[m][k] = member m's pair at window
  /// index begin + k as binary64 bit patterns (Value::bits_key). Streamed blocks come from the
  /// realisation's BlockEvaluator::evaluate_bits (its fast path, no Values built); constant and
  /// mixed-axis blocks are converted from evaluate().
  void evaluate_bits(std::uint64_t begin, std::uint64_t end,
                     std::vector<std::vector<PairBits>>& bits) {
    if (!is_constant_ && !mixed_) {
      ev_->evaluate_bits(options_.start + begin, options_.start + end, bits);
      return;
    }
    evaluate(begin, end, scratch_);
    bits.resize(scratch_.size());
    for (std::size_t m = 0; m < scratch_.size(); ++m) {
      bits[m].resize(scratch_[m].size());
      for (std::size_t k = 0; k < scratch_[m].size(); ++k) {
        const RealisedPair& p = scratch_[m][k];
        bits[m][k] = PairBits{p.cos.bits_key(), p.sin.bits_key(), p.flags};
      }
    }
  }

  /// What the fast path did in this source's evaluate / evaluate_bits calls: a function of the
  /// positions asked for (a constant block's one evaluation in the constructor and mixed-axis
  /// blocks are not counted), so sums over tasks do not depend on how positions were split.
  FastPathStats fast_path_stats() const {
    return ev_ && !is_constant_ ? ev_->fast_path_stats() : FastPathStats{};
  }

 private:
  const Schedule& s_;
  std::size_t b_;
  const std::vector<Realisation>& members_;
  const CensusOptions& options_;
  std::unique_ptr<detail::BlockEvaluator> ev_;  // unset for a block mixing axes
  bool mixed_ = false, is_constant_ = false;
  std::vector<std::vector<RealisedPair>> constant_;
  std::vector<std::vector<RealisedPair>> scratch_;
};

/// One member's census state. Per position: `fp`, a 64-bit fingerprint of the whole realised
/// rotation so far (bits 2-63: the blocks' exact keys folded in block order; bits 0-1: the
/// overflow/NaN flags of any block), and the current block's exact keys (one of key16, key32,
/// key2, ids by KeyKind).
struct Member {
  KeyKind kind = KeyKind::pack32;
  std::vector<std::uint64_t> fp;
  std::vector<std::uint32_t> key16;
  std::vector<std::uint64_t> key32;  // also the wide ids
  std::vector<Key2> key2;
  std::map<std::string, std::uint32_t> wide;  // per block (wide formats only)
  CensusResult result;
};

/// Stores member m's exact key of position i and folds it into the fingerprint.
inline void put_key(Member& mem, std::uint64_t i, const PairBits& p, std::size_t b) {
  std::uint64_t k = 0;
  switch (mem.kind) {
    case KeyKind::pack16: {
      const std::uint32_t k16 = key16(p);
      mem.key16[i] = k16;
      k = k16;
      break;
    }
    case KeyKind::pack32:
      k = mem.key32[i] = key32(p);
      break;
    case KeyKind::pair:
      mem.key2[i] = Key2{p.cos, p.sin};
      k = key_hash(mem.key2[i]);
      break;
    case KeyKind::wide:
      break;
  }
  std::uint64_t& f = mem.fp[i];
  f = (fold(f & ~kFlagBits, k, b) & ~kFlagBits) | (f & kFlagBits) | flag_bits(p.flags);
}

/// The exact key a verification pass compares (wide: the hex text).
struct ExactKey {
  std::uint64_t cos = 0, sin = 0;
  std::string wide;
  bool operator==(const ExactKey&) const = default;
};
ExactKey exact_key(KeyKind kind, const RealisedPair& p) {
  if (kind == KeyKind::wide) return ExactKey{0, 0, wide_key(p)};
  return ExactKey{p.cos.bits_key(), p.sin.bits_key(), {}};
}

constexpr std::uint32_t kHasMembers = 0x80000000u;  // rep[i]: i leads a class of ≥ 2 positions
constexpr std::uint32_t kRepMask = 0x7fffffffu;

/// Turns the fingerprints into exact classes: rep[i] = the smallest position (window index)
/// whose realised rotation equals R̂_i. Positions are grouped by fingerprint (an index sort);
/// then every group of ≥ 2 positions is verified by re-realising its members block by block
/// and comparing their bit patterns with the group's first position (unless verification is
/// switched off by the test hook); a group that fails is split exactly by the full rotations
/// of its members. Frees `mem.fp`.
std::vector<std::uint32_t> exact_classes(const Schedule& s, const std::vector<Realisation>& rs,
                                         const CensusOptions& options, std::size_t member,
                                         Member& mem, unsigned threads, Meter& meter,
                                         FastPathStats& fast_path) {
  const std::size_t n = mem.fp.size();
  std::vector<std::uint32_t> idx;
  allocate(idx, n, std::uint32_t{0}, meter);
  for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<std::uint32_t>(i);
  const auto& fp = mem.fp;
  auto less = [&](std::uint32_t a, std::uint32_t b) {
    return fp[a] != fp[b] ? fp[a] < fp[b] : a < b;
  };
  {
    // parts by fingerprint range (partitioned in place), sorted on the threads: the order is
    // (fingerprint, position) whatever the thread count, and no merge buffer is needed
    const std::size_t parts = std::max<std::size_t>(1, std::min<std::size_t>(threads, n / 4096));
    std::vector<std::size_t> bound{0};
    auto first = idx.begin();
    for (std::size_t t = 1; t < parts; ++t) {
      const std::uint64_t cut = (~std::uint64_t{0} / parts) * t;
      first = std::partition(first, idx.end(), [&](std::uint32_t i) { return fp[i] < cut; });
      bound.push_back(static_cast<std::size_t>(first - idx.begin()));
    }
    bound.push_back(n);
    numeric::parallel_for(threads, parts, [&](std::size_t t) {
      std::sort(idx.begin() + static_cast<std::ptrdiff_t>(bound[t]),
                idx.begin() + static_cast<std::ptrdiff_t>(bound[t + 1]), less);
    });
  }
  std::vector<std::uint32_t> rep;
  allocate(rep, n, std::uint32_t{0}, meter);
  std::size_t groups = 0;
  for (std::size_t a = 0; a < n;) {
    std::size_t b = a + 1;
    while (b < n && fp[idx[b]] == fp[idx[a]]) ++b;
    const std::uint32_t first = idx[a];
    for (std::size_t k = a; k < b; ++k) rep[idx[k]] = first;
    if (b - a > 1) {
      rep[first] |= kHasMembers;
      ++groups;
    }
    a = b;
  }
  release(idx, meter);
  release(mem.fp, meter);
  if (groups == 0 || !g_verify.load()) {
    for (auto& r : rep) r &= kRepMask;
    return rep;
  }

  // the leaders of groups in position order; a group's slot is its leader's index here
  std::vector<std::uint32_t> leaders;
  leaders.reserve(groups);
  for (std::size_t i = 0; i < n; ++i)
    if (rep[i] & kHasMembers) leaders.push_back(static_cast<std::uint32_t>(i));
  meter.add(leaders.capacity() * sizeof(std::uint32_t));
  auto slot = [&](std::uint32_t leader) {
    return static_cast<std::size_t>(std::lower_bound(leaders.begin(), leaders.end(), leader) -
                                    leaders.begin());
  };
  std::vector<std::atomic<std::uint8_t>> broken(groups);
  for (auto& b : broken) b.store(0);
  const KeyKind kind = mem.kind;
  const bool narrow = kind != KeyKind::wide;
  // one task per block; positions in increasing order, so a leader's key is stored before
  // its members are compared with it
  // a leader's key: the packed key (pack16, pack32: 8 bytes), both patterns (pair: 16) or the
  // hex text (wide)
  const bool packed = kind == KeyKind::pack16 || kind == KeyKind::pack32;
  const std::size_t slot_bytes =
      packed ? sizeof(std::uint64_t) : (narrow ? sizeof(Key2) : sizeof(ExactKey));
  meter.add(std::min<std::size_t>(threads, s.blocks.size()) * groups * slot_bytes);
  std::vector<FastPathStats> block_stats(s.blocks.size());
  numeric::parallel_for(threads, s.blocks.size(), [&](std::size_t b) {
    LineSource src(s, b, rs, options);
    std::vector<std::uint64_t> packed_keys(packed ? groups : 0);
    std::vector<Key2> pair_keys(narrow && !packed ? groups : 0);
    std::vector<ExactKey> wide_keys(narrow ? 0 : groups);
    std::vector<std::vector<RealisedPair>> values;
    std::vector<std::vector<PairBits>> bits;
    auto check = [&](auto& keys, std::size_t g, bool lead, auto&& k) {
      if (lead) {
        keys[g] = std::move(k);
      } else if (!(keys[g] == k)) {
        broken[g].store(1, std::memory_order_relaxed);
      }
    };
    for (std::uint64_t begin = 0; begin < n; begin += kChunk) {
      const std::uint64_t end = std::min<std::uint64_t>(n, begin + kChunk);
      bool any = false;
      for (std::uint64_t i = begin; i < end && !any; ++i) any = rep[i] != i;
      if (!any) continue;
      if (narrow) {
        src.evaluate_bits(begin, end, bits);
      } else {
        src.evaluate(begin, end, values);
      }
      for (std::uint64_t i = begin; i < end; ++i) {
        const std::uint32_t r = rep[i];
        if (r == i) continue;  // a class of its own
        const bool lead = (r & kHasMembers) != 0;
        const std::size_t g = slot(lead ? static_cast<std::uint32_t>(i) : r);
        if (kind == KeyKind::pack16) {
          check(packed_keys, g, lead, std::uint64_t{key16(bits[member][i - begin])});
        } else if (kind == KeyKind::pack32) {
          check(packed_keys, g, lead, key32(bits[member][i - begin]));
        } else if (narrow) {
          const PairBits& p = bits[member][i - begin];
          check(pair_keys, g, lead, Key2{p.cos, p.sin});
        } else {
          check(wide_keys, g, lead, exact_key(kind, values[member][i - begin]));
        }
      }
    }
    block_stats[b] = src.fast_path_stats();
  });
  for (const auto& st : block_stats) fast_path += st;
  meter.sub(std::min<std::size_t>(threads, s.blocks.size()) * groups * slot_bytes);
  // split the groups that failed: the members' full rotations, compared exactly
  std::vector<std::uint32_t> members_of_broken;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t r = rep[i];
    if (r == i) continue;
    const std::uint32_t leader = (r & kHasMembers) ? static_cast<std::uint32_t>(i) : r;
    if (broken[slot(leader)].load()) members_of_broken.push_back(static_cast<std::uint32_t>(i));
  }
  if (!members_of_broken.empty()) {
    std::vector<std::string> rotation(members_of_broken.size());
    std::vector<std::vector<RealisedPair>> values;
    for (std::size_t b = 0; b < s.blocks.size(); ++b) {
      LineSource src(s, b, rs, options);
      for (std::size_t k = 0; k < members_of_broken.size(); ++k) {
        const std::uint64_t i = members_of_broken[k];
        src.evaluate(i, i + 1, values);
        const ExactKey e = exact_key(kind, values[member][0]);
        rotation[k] += e.wide.empty() ? fmt::format("{:x},{:x};", e.cos, e.sin) : e.wide + ";";
      }
      fast_path += src.fast_path_stats();
    }
    // positions increase along members_of_broken: the first of each exact class is its
    // smallest position
    std::map<std::pair<std::uint32_t, std::string>, std::uint32_t> first;
    for (std::size_t k = 0; k < members_of_broken.size(); ++k) {
      const std::uint32_t i = members_of_broken[k];
      const std::uint32_t leader = (rep[i] & kHasMembers) ? i : rep[i];
      const auto it = first.emplace(std::make_pair(leader, rotation[k]), i).first;
      rep[i] = it->second;
    }
  }
  meter.sub(leaders.capacity() * sizeof(std::uint32_t));
  for (auto& r : rep) r &= kRepMask;
  return rep;
}

/// The census results derived from exact classes rep (rep[i] = smallest window index with
/// the same realised rotation): distinct count, first repeat, largest class, period and
/// witnesses (z-function over rep).
void finish(CensusResult& r, std::vector<std::uint32_t>& rep, std::uint64_t p_max, Meter& meter) {
  const std::uint64_t s0 = r.start;  // rep is indexed from 0; positions are s0 + index
  const std::size_t n = rep.size();
  std::uint64_t distinct = 0;
  for (std::size_t i = 0; i < n; ++i) distinct += rep[i] == i;
  r.distinct_rotations = distinct;
  for (std::size_t j = 0; j < n; ++j) {
    if (rep[j] != j) {
      r.first_repeat = FirstRepeat{s0 + rep[j], s0 + j};
      break;
    }
  }
  {
    std::vector<std::uint32_t> count;
    allocate(count, n, std::uint32_t{0}, meter);
    for (std::size_t i = 0; i < n; ++i) ++count[rep[i]];
    std::size_t best = 0;
    for (std::size_t k = 1; k < n; ++k)
      if (count[k] > count[best]) best = k;
    if (n > 0) r.largest_class = LargestClass{count[best], s0 + best};
    release(count, meter);
  }
  std::vector<std::uint32_t> z;
  meter.add(n * sizeof(std::uint32_t));
  z_function(rep, z);
  r.period = smallest_period(z);
  r.max_period = p_max;
  const std::uint64_t upto = r.period ? *r.period - 1 : p_max;
  r.witnesses.assign(upto, -1);
  std::int64_t best = -1;
  for (std::uint64_t p = 1; p <= upto; ++p) {
    if (z[p] < n - p) {
      r.witnesses[p - 1] = static_cast<std::int64_t>(s0 + z[p]);
      if (static_cast<std::int64_t>(z[p]) > best) {
        best = z[p];
        r.largest_witness_period = p;
        r.largest_witness_position = s0 + z[p];
      }
    }
  }
  meter.sub(n * sizeof(std::uint32_t));
}

void check_options(const CensusOptions& o) {
  if (o.positions == 0 || o.positions > kMaxCensusPositions) {
    throw InvalidArgument("census: positions N = " + std::to_string(o.positions) +
                          "; accepted: 1..2147483648");
  }
  if (o.start > kMaxCensusLastPosition - (o.positions - 1)) {
    throw InvalidArgument("census: the last position S + N - 1 = " + std::to_string(o.start) +
                          " + " + std::to_string(o.positions - 1) +
                          " exceeds 2^63 - 1; accepted: S + N - 1 ≤ " +
                          std::to_string(kMaxCensusLastPosition));
  }
  if (o.max_period && (*o.max_period >= o.positions)) {
    throw InvalidArgument("census: max period " + std::to_string(*o.max_period) +
                          " must be < N = " + std::to_string(o.positions));
  }
  if (o.threads == 0) throw InvalidArgument("census: threads must be ≥ 1, got 0");
}

/// The census line fits the schedule: an axis only on a multi-axis schedule, `at` with one
/// coordinate per axis and only with an axis.
void check_line(const Schedule& s, const CensusOptions& o) {
  if (!s.is_multi_axis()) {
    if (o.axis || !o.at.empty()) {
      throw InvalidArgument("census: schedule '" + s.spec +
                            "' has scalar positions; accepted: no axis "
                            "and no --at for it (axes belong to axial2d, mrope, hirope, liere)");
    }
    return;
  }
  const std::size_t k = s.position_axes.size();
  std::string names;
  for (std::size_t a = 0; a < k; ++a) names += (a ? ", " : "") + s.position_axes[a];
  if (o.axis && *o.axis >= k) {
    throw InvalidArgument("census: axis index " + std::to_string(*o.axis) +
                          " out of range; accepted: " + names);
  }
  if (!o.at.empty() && !o.axis) {
    throw InvalidArgument(
        "census: fixed coordinates (at) need an axis to run along; accepted: one of " + names);
  }
  if (!o.at.empty() && o.at.size() != k) {
    throw InvalidArgument("census: at has " + std::to_string(o.at.size()) +
                          " coordinates; accepted: " + std::to_string(k) + " (" + names + ")");
  }
  for (const auto c : o.at) {
    if (c > kMaxCensusLastPosition) {
      throw InvalidArgument("census: at coordinates must be ≤ 2^63 - 1");
    }
  }
}

}  // namespace

namespace detail {

void set_census_fingerprint_for_testing(CensusFingerprint fingerprint) {
  g_fingerprint.store(fingerprint);
}

void set_census_verification_for_testing(bool verify) { g_verify.store(verify); }

}  // namespace detail

std::vector<CensusResult> census_many(const Schedule& s,
                                      const std::vector<Realisation>& realisations,
                                      const CensusOptions& options) {
  check_options(options);
  check_line(s, options);
  for (const auto& r : realisations) check_applicable(s, r);
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t n = options.positions;
  const std::uint64_t p_max = options.max_period.value_or(n / 2);
  const std::size_t m = realisations.size();
  const unsigned threads = options.threads;
  Meter meter;
  std::vector<Member> members(m);
  bool any_wide = false;
  for (std::size_t k = 0; k < m; ++k) {
    Member& mem = members[k];
    mem.kind = key_kind(realisations[k].table_format());
    any_wide = any_wide || mem.kind == KeyKind::wide;
    allocate(mem.fp, n, std::uint64_t{0}, meter);
    switch (mem.kind) {
      case KeyKind::pack16:
        allocate(mem.key16, n, std::uint32_t{0}, meter);
        break;
      case KeyKind::pack32:
      case KeyKind::wide:
        allocate(mem.key32, n, std::uint64_t{0}, meter);
        break;
      case KeyKind::pair:
        allocate(mem.key2, n, Key2{}, meter);
        break;
    }
    CensusResult& r = mem.result;
    r.schedule = s.spec;
    r.realisation = realisations[k].name();
    r.format = realisations[k].format;
    r.table_format = realisations[k].table_format();
    r.rounding = realisations[k].rounding;
    r.positions = n;
    r.start = options.start;
    if (s.is_multi_axis()) {
      r.axis = options.axis ? s.position_axes[*options.axis] : "diagonal";
      r.at = options.at.empty() ? PositionTuple(s.position_axes.size(), 0) : options.at;
      if (options.axis) r.at[*options.axis] = 0;
    }
  }
  // Blocks one after the other; within a block, positions in tasks (task_positions) spread over
  // the threads (each task writes its own positions' keys and fingerprints, which fold the blocks
  // in block order), so nothing depends on the thread count. Wide formats intern their keys
  // in position order: their blocks run on one thread.
  const std::uint64_t task = task_positions(n, threads);
  const std::uint64_t tasks = (n + task - 1) / task;
  FastPathStats fast_path;  // summed from per-task counters: independent of the thread count
  std::vector<FastPathStats> task_stats(tasks);
  for (std::size_t b = 0; b < s.blocks.size(); ++b) {
    for (auto& mem : members) mem.wide.clear();
    numeric::parallel_for(any_wide ? 1 : threads, tasks, [&](std::size_t t) {
      LineSource src(s, b, realisations, options);
      std::vector<std::vector<PairBits>> bits;
      std::vector<std::vector<RealisedPair>> values;
      const std::uint64_t last = std::min<std::uint64_t>(n, (t + 1) * task);
      for (std::uint64_t begin = t * task; begin < last; begin += kChunk) {
        const std::uint64_t end = std::min(last, begin + kChunk);
        if (!any_wide) {
          src.evaluate_bits(begin, end, bits);
        } else {
          src.evaluate(begin, end, values);
          bits.resize(m);
          for (std::size_t k = 0; k < m; ++k) {
            bits[k].resize(end - begin);
            for (std::uint64_t i = begin; i < end; ++i) {
              const RealisedPair& p = values[k][i - begin];
              bits[k][i - begin] = PairBits{p.cos.bits_key(), p.sin.bits_key(), p.flags};
            }
          }
        }
        for (std::size_t k = 0; k < m; ++k) {
          Member& mem = members[k];
          for (std::uint64_t i = begin; i < end; ++i) {
            const PairBits& p = bits[k][i - begin];
            if (mem.kind != KeyKind::wide) {
              put_key(mem, i, p, b);
              continue;
            }
            const std::string key = wide_key(values[k][i - begin]);
            const auto it =
                mem.wide.emplace(key, static_cast<std::uint32_t>(mem.wide.size())).first;
            mem.key32[i] = it->second;
            std::uint64_t& f = mem.fp[i];
            f = (fold(f & ~kFlagBits, it->second, b) & ~kFlagBits) | (f & kFlagBits) |
                flag_bits(p.flags);
          }
        }
      }
      task_stats[t] = src.fast_path_stats();
    });
    for (const auto& st : task_stats) fast_path += st;
    for (auto& mem : members) {
      CensusResult& r = mem.result;
      switch (mem.kind) {
        case KeyKind::pack16:
          r.period_per_block.push_back(smallest_period_of(mem.key16));
          r.distinct_per_block.push_back(count_distinct(mem.key16, threads, meter));
          break;
        case KeyKind::pack32:
          r.period_per_block.push_back(smallest_period_of(mem.key32));
          r.distinct_per_block.push_back(count_distinct(mem.key32, threads, meter));
          break;
        case KeyKind::pair:
          r.period_per_block.push_back(smallest_period_of(mem.key2));
          r.distinct_per_block.push_back(count_distinct(mem.key2, threads, meter));
          break;
        case KeyKind::wide:
          r.period_per_block.push_back(smallest_period_of(mem.key32));
          r.distinct_per_block.push_back(mem.wide.size());
          break;
      }
    }
  }
  for (std::size_t k = 0; k < m; ++k) {
    Member& mem = members[k];
    release(mem.key16, meter);
    release(mem.key32, meter);
    release(mem.key2, meter);
    mem.wide.clear();
    CensusResult& r = mem.result;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t f = mem.fp[i];
      if (f & 1) {
        if (!r.overflow.first) r.overflow.first = options.start + i;
        ++r.overflow.count;
      }
      if (f & 2) {
        if (!r.nan.first) r.nan.first = options.start + i;
        ++r.nan.count;
      }
      mem.fp[i] = f & ~kFlagBits;
    }
    auto rep = exact_classes(s, realisations, options, k, mem, threads, meter, fast_path);
    finish(r, rep, p_max, meter);
    release(rep, meter);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<CensusResult> out;
  for (auto& mem : members) {
    mem.result.seconds = m ? seconds / static_cast<double>(m) : 0;
    mem.result.working_bytes = meter.peak.load();
    mem.result.fast_path = fast_path;
    out.push_back(std::move(mem.result));
  }
  return out;
}

CensusResult census(const Schedule& s, const Realisation& r, const CensusOptions& options) {
  auto v = census_many(s, {r}, options);
  return std::move(v[0]);
}

SweepGrid default_sweep_grid() {
  SweepGrid g;
  for (const auto& name : model_preset_names()) g.schedules.push_back(preset_schedule(name));
  g.realisations = {"r1", "r2", "hf"};
  g.formats = {Format::bf16(), Format::fp16(), Format::fp32(), Format::fp64()};
  return g;
}

std::vector<CensusResult> sweep(const SweepGrid& grid, const CensusOptions& options,
                                const CensusProgress& progress,
                                const std::function<bool(std::size_t)>& selected) {
  check_options(options);
  // parse every cell first: a bad spec fails before any work
  std::vector<Realisation> all;
  for (const auto& spec : grid.realisations) {
    for (const auto& f : grid.formats) {
      all.push_back(parse_realisation(spec, numeric::FormatBinding{f, grid.rounding, grid.engine}));
    }
  }
  std::vector<CensusResult> out;
  std::size_t total = 0;
  for (std::size_t cell = 0; cell < grid.schedules.size() * all.size(); ++cell) {
    total += !selected || selected(cell) ? 1 : 0;
  }
  for (std::size_t si = 0; si < grid.schedules.size(); ++si) {
    const Schedule& s = grid.schedules[si];
    std::vector<Realisation> ok;
    std::vector<std::size_t> where;
    std::vector<std::size_t> chosen;
    std::vector<CensusResult> cells(all.size());
    for (std::size_t k = 0; k < all.size(); ++k) {
      if (selected && !selected(si * all.size() + k)) continue;
      chosen.push_back(k);
      try {
        check_applicable(s, all[k]);
        ok.push_back(all[k]);
        where.push_back(k);
      } catch (const InvalidArgument& e) {
        cells[k].schedule = s.spec;
        cells[k].realisation = all[k].name();
        cells[k].format = all[k].format;
        cells[k].table_format = all[k].table_format();
        cells[k].rounding = all[k].rounding;
        cells[k].positions = options.positions;
        cells[k].start = options.start;
        cells[k].not_applicable = e.what();
      }
    }
    if (!ok.empty()) {
      auto results = census_many(s, ok, options);
      for (std::size_t k = 0; k < ok.size(); ++k) cells[where[k]] = std::move(results[k]);
    }
    for (std::size_t k : chosen) {
      out.push_back(std::move(cells[k]));
      if (progress) progress(out.size(), total, out.back());
    }
  }
  return out;
}

nlohmann::json to_json(const CensusResult& r, bool include_witnesses) {
  using nlohmann::json;
  auto opt = [](const auto& o) { return o ? json(*o) : json(nullptr); };
  json j;
  j["schedule"] = r.schedule;
  j["realization"] = r.realisation;
  j["format"] = r.format.name;
  j["table_format"] = r.table_format.name;
  j["rounding"] = std::string(numeric::to_string(r.rounding));
  j["positions"] = r.positions;
  if (r.start != 0) j["start"] = r.start;
  if (!r.axis.empty()) {
    j["axis"] = r.axis;
    j["at"] = r.at;
  }
  if (!r.not_applicable.empty()) {
    j["not_applicable"] = r.not_applicable;
    return j;
  }
  j["distinct"] = r.distinct_rotations;
  j["largest_class"] = r.largest_class.size;
  j["largest_class_position"] = r.largest_class.position;
  j["distinct_per_block"] = r.distinct_per_block;
  json periods = json::array();
  for (const auto& p : r.period_per_block) periods.push_back(opt(p));
  j["period_per_block"] = periods;
  j["first_repeat"] = r.first_repeat ? json::array({r.first_repeat->earlier, r.first_repeat->later})
                                     : json(nullptr);
  j["periodic"] = r.period.has_value();
  j["period"] = opt(r.period);
  j["max_period"] = r.max_period;
  j["max_witness"] = opt(r.largest_witness_position);
  j["max_witness_period"] = opt(r.largest_witness_period);
  std::uint64_t witnessed = 0;
  for (auto w : r.witnesses) witnessed += w >= 0 ? 1 : 0;
  j["witnessed"] = r.period ? json(nullptr) : json(witnessed);
  if (include_witnesses) j["witnesses"] = r.witnesses;
  j["overflow_positions"] = r.overflow.count;
  j["first_overflow"] = opt(r.overflow.first);
  j["nan_positions"] = r.nan.count;
  j["first_nan"] = opt(r.nan.first);
  j["fast_path"] = {{"evaluations", r.fast_path.evaluations},
                    {"fallbacks", r.fast_path.fallbacks},
                    {"exact_cases", r.fast_path.exact_cases},
                    {"exact_only", r.fast_path.exact_only}};
  return j;
}

WorkEstimate census_work(const Schedule& s, const CensusOptions& options, std::size_t cells) {
  WorkEstimate e;
  e.what = "realised (position, block) pairs";
  const double blocks = static_cast<double>(std::max<std::size_t>(1, s.blocks.size()));
  e.units = static_cast<double>(options.positions) * blocks * static_cast<double>(cells);
  e.units_per_second = 2e6 * static_cast<double>(std::max(1u, options.threads));
  e.bytes = static_cast<double>(options.positions) * 24;
  return e;
}

}  // namespace ropesim::attention
