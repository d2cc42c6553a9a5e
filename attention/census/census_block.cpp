// The census's per-block statistics (census.hpp CensusResult::distinct_per_block and
// period_per_block): the distinct count and the smallest period of one block's exact keys,
// gathered while the block's positions stream (a concurrent set, per-chunk hashes) and finished
// on the threads.
#include <algorithm>
#include <limits>

#include "attention/census/census_internal.hpp"
#include "numeric/parallel.hpp"

namespace ropesim::attention::census_impl {

namespace {

/// The polynomial hash's base (odd, so invertible mod 2^64) and its inverse.
constexpr std::uint64_t kBase = 0x9e3779b97f4a7c15ULL;
constexpr std::uint64_t base_inverse() {
  std::uint64_t xi = kBase;  // Newton's iteration doubles the correct low bits each step
  for (int k = 0; k < 6; ++k) xi *= 2 - kBase * xi;
  return xi;
}
constexpr std::uint64_t kBaseInverse = base_inverse();
static_assert(kBase * kBaseInverse == 1);

/// kBase^e mod 2^64.
std::uint64_t base_power(std::uint64_t e) {
  std::uint64_t r = 1, b = kBase;
  for (; e; e >>= 1, b *= b)
    if (e & 1) r *= b;
  return r;
}

/// The value a key contributes to the polynomial hash.
template <class K>
inline std::uint64_t hash_value(const K& k) {
  return mix(key_hash(k));
}

/// Σ_{k<len} v(s[k])·x^k (x = kBase, mod 2^64).
template <class K>
std::uint64_t chunk_hash(const K* s, std::size_t len) {
  std::uint64_t h = 0, xp = 1;
  for (std::size_t k = 0; k < len; ++k) {
    h += hash_value(s[k]) * xp;
    xp *= kBase;
  }
  return h;
}

/// The smallest P ≤ N/2 with s[i+P] = s[i] for all i < N-P, from the chunk hashes
/// (hashes[c] = chunk_hash of positions [c·kChunk, (c+1)·kChunk)), in O(N/threads) time per
/// thread and O(N/kChunk) memory. With pre(q) = Σ_{i<q} v_i x^i and T = pre(N), P is a period
/// exactly when the prefix of length N-P equals the suffix from P, whose hashes are
/// x^P·pre(N-P) and T - pre(P). The P range is cut into parts scanned on the threads, each
/// starting from pre() rebuilt out of the chunk hashes; every hash match is confirmed by
/// comparing the keys exactly, so a hash collision costs time, never a wrong period. The
/// smallest confirmed P over the parts is the result, whatever the thread count.
template <class K>
std::optional<std::uint64_t> smallest_period_of(const std::vector<K>& s,
                                                const std::vector<std::uint64_t>& hashes,
                                                unsigned threads) {
  const std::size_t n = s.size();
  if (n < 2) return std::nullopt;
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  // before[c] = pre(c·kChunk)
  std::vector<std::uint64_t> before(chunks + 1);
  {
    const std::uint64_t step = base_power(kChunk);
    std::uint64_t acc = 0, xc = 1;
    for (std::size_t c = 0; c < chunks; ++c) {
      before[c] = acc;
      acc += hashes[c] * xc;
      xc *= step;
    }
    before[chunks] = acc;
  }
  const std::uint64_t total = before[chunks];
  auto pre = [&](std::size_t q) {
    const std::size_t c = q / kChunk;
    std::uint64_t h = before[c], xp = base_power(c * kChunk);
    for (std::size_t i = c * kChunk; i < q; ++i) {
      h += hash_value(s[i]) * xp;
      xp *= kBase;
    }
    return h;
  };
  const std::size_t p_max = n / 2;
  const std::size_t parts =
      std::clamp<std::size_t>(p_max / (4 * kChunk), 1, 4 * std::max(1u, threads));
  constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
  std::atomic<std::uint64_t> best{kNone};
  numeric::parallel_for(threads, parts, [&](std::size_t part) {
    const std::size_t lo = 1 + p_max * part / parts, hi = 1 + p_max * (part + 1) / parts;
    if (lo >= best.load(std::memory_order_relaxed)) return;
    // a = pre(P), b = pre(N-P), xp = x^P, xq = x^(N-P-1)
    std::uint64_t a = pre(lo), b = pre(n - lo), xp = base_power(lo), xq = base_power(n - lo - 1);
    for (std::size_t p = lo; p < hi; ++p) {
      if (xp * b == total - a &&
          std::equal(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n - p),
                     s.begin() + static_cast<std::ptrdiff_t>(p))) {
        std::uint64_t seen = best.load();
        while (p < seen && !best.compare_exchange_weak(seen, p)) {
        }
        return;
      }
      if ((p & (kChunk - 1)) == 0 && best.load(std::memory_order_relaxed) < p) return;
      a += hash_value(s[p]) * xp;
      b -= hash_value(s[n - p - 1]) * xq;
      xp *= kBase;
      xq *= kBaseInverse;
    }
  });
  if (best.load() == kNone) return std::nullopt;
  return best.load();
}

/// Number of distinct keys (exact), for keys the concurrent set does not take (pair keys) or
/// after it overflowed. Open addressing over `threads` hash partitions (part t takes the keys
/// whose hash is t mod parts), bounded together to N/8 keys (at least 1024) at load ≤ 1/2, so
/// the tables take (key size + 1)/4 bytes a position; a block with more distinct keys sorts
/// `keys` in place instead (parts sorted in parallel, then one merged walk). `keys` is left in
/// an unspecified order. `try_tables` false goes to the sort at once.
template <class K>
std::uint64_t count_distinct(std::vector<K>& keys, unsigned threads, Meter& meter,
                             bool try_tables) {
  const std::size_t n = keys.size();
  const std::size_t parts = std::max<std::size_t>(1, std::min<std::size_t>(threads, 16));
  if (try_tables) {
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

/// The concurrent set's key budget for N positions: N/4 packed 4-byte keys (2 bytes a
/// position of slots), N/8 8-byte keys (2 bytes a position), at least 1024.
std::size_t set_budget(KeyKind kind, std::uint64_t n) {
  const std::uint64_t share = kind == KeyKind::pack16 ? n / 4 : n / 8;
  return static_cast<std::size_t>(std::max<std::uint64_t>(1024, share));
}

}  // namespace

void reserve_block_tables(Member& mem, std::uint64_t n, Meter& meter) {
  if (mem.kind == KeyKind::pack16) {
    mem.set16.reserve(set_budget(mem.kind, n));
    meter.add(mem.set16.bytes());
  } else if (mem.kind == KeyKind::pack32) {
    mem.set32.reserve(set_budget(mem.kind, n));
    meter.add(mem.set32.bytes());
  }
  allocate(mem.chunk_hash, static_cast<std::size_t>((n + kChunk - 1) / kChunk), std::uint64_t{0},
           meter);
}

void release_block_tables(Member& mem, Meter& meter) {
  meter.sub(mem.set16.bytes() + mem.set32.bytes());
  mem.set16.release();
  mem.set32.release();
  release(mem.chunk_hash, meter);
}

void begin_block(Member& mem) {
  mem.wide.clear();
  if (mem.kind == KeyKind::pack16) mem.set16.clear();
  if (mem.kind == KeyKind::pack32) mem.set32.clear();
}

void record_chunk(Member& mem, std::uint64_t begin, std::uint64_t end) {
  const std::size_t c = static_cast<std::size_t>(begin / kChunk);
  const std::size_t len = static_cast<std::size_t>(end - begin);
  switch (mem.kind) {
    case KeyKind::pack16: {
      const std::uint32_t* k = mem.key16.data() + begin;
      for (std::size_t i = 0; i < len; ++i) mem.set16.insert(k[i]);
      mem.chunk_hash[c] = chunk_hash(k, len);
      break;
    }
    case KeyKind::pack32: {
      const std::uint64_t* k = mem.key32.data() + begin;
      for (std::size_t i = 0; i < len; ++i) mem.set32.insert(k[i]);
      mem.chunk_hash[c] = chunk_hash(k, len);
      break;
    }
    case KeyKind::pair:
      mem.chunk_hash[c] = chunk_hash(mem.key2.data() + begin, len);
      break;
    case KeyKind::wide:
      mem.chunk_hash[c] = chunk_hash(mem.key32.data() + begin, len);
      break;
  }
}

std::uint64_t block_distinct(Member& mem, unsigned threads, Meter& meter) {
  switch (mem.kind) {
    case KeyKind::pack16:
      if (!mem.set16.overflowed()) return mem.set16.count();
      return count_distinct(mem.key16, threads, meter, false);
    case KeyKind::pack32:
      if (!mem.set32.overflowed()) return mem.set32.count();
      return count_distinct(mem.key32, threads, meter, false);
    case KeyKind::pair:
      return count_distinct(mem.key2, threads, meter, true);
    case KeyKind::wide:
      return mem.wide.size();
  }
  return 0;
}

std::optional<std::uint64_t> block_period(const Member& mem, unsigned threads) {
  switch (mem.kind) {
    case KeyKind::pack16:
      return smallest_period_of(mem.key16, mem.chunk_hash, threads);
    case KeyKind::pack32:
    case KeyKind::wide:
      return smallest_period_of(mem.key32, mem.chunk_hash, threads);
    case KeyKind::pair:
      return smallest_period_of(mem.key2, mem.chunk_hash, threads);
  }
  return std::nullopt;
}

}  // namespace ropesim::attention::census_impl
