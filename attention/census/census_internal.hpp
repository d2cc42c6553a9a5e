#pragma once
/// Internal: the parts of the rotation census (attention/census/census.hpp) shared by its files:
/// the exact per-block keys of realised (cos, sin) pairs and the 64-bit fingerprints that sum
/// them over the blocks (this header), the source of a block's realised pairs along the census
/// line (census_source.cpp), the per-block distinct count and smallest period, gathered while
/// the positions stream (census_block.cpp), the exact classes and the results derived from
/// them (census_verify.cpp), and the driver (census.cpp).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention/census/census.hpp"
#include "attention/detail/evaluator.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"

namespace ropesim::attention::census_impl {

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// The fingerprint function set by detail::set_census_fingerprint_for_testing (nullptr: mix).
extern std::atomic<detail::CensusFingerprint> g_fingerprint;
/// False when detail::set_census_verification_for_testing switched verification off.
extern std::atomic<bool> g_verify;

/// Block b's share of a position's fingerprint: a position's fingerprint is the sum (mod 2^64,
/// bits 0-1 cleared) of its blocks' terms, so the blocks may be folded in any order, or into
/// partial sums on different threads that are added afterwards (add_fingerprints), with the same
/// result.
inline std::uint64_t fingerprint_term(std::uint64_t key, std::size_t block) {
  if (const auto hook = g_fingerprint.load(std::memory_order_relaxed)) return hook(key, block);
  return mix(key + 0x9e3779b97f4a7c15ULL * (block + 1));
}

constexpr std::uint64_t kFlagBits = 3;  // bit 0 overflow, bit 1 NaN (in the fingerprint word)
inline std::uint64_t flag_bits(std::uint8_t flags) {
  return ((flags & flag_overflow) ? 1u : 0u) | ((flags & flag_nan) ? 2u : 0u);
}

/// Adds block b's term of `key` and the block's overflow/NaN flags to fingerprint word f (bits
/// 2-63: the sum of the terms' bits 2-63; bits 0-1: the flags of any block).
inline void add_term(std::uint64_t& f, std::uint64_t key, std::size_t block, std::uint8_t flags) {
  f = (((f & ~kFlagBits) + fingerprint_term(key, block)) & ~kFlagBits) | (f & kFlagBits) |
      flag_bits(flags);
}

/// Two partial fingerprint words of the same position (disjoint sets of blocks) as one.
inline std::uint64_t add_fingerprints(std::uint64_t a, std::uint64_t b) {
  return (((a & ~kFlagBits) + (b & ~kFlagBits)) & ~kFlagBits) | ((a | b) & kFlagBits);
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

inline KeyKind key_kind(const Format& f) {
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

/// The exact key of a format beyond binary64: both entries' hex text ("nan" for NaN).
std::string wide_key(const RealisedPair& p);

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

/// Positions per chunk: the unit in which blocks are realised, keys hashed and verified.
inline constexpr std::uint64_t kChunk = 4096;

/// How a block's realised pairs are produced along the census line (census.hpp
/// CensusOptions::axis): streamed at scalar positions S.. (one-axis schedules, and blocks
/// reading the line's moving axis or the diagonal), constant (a block reading an axis that
/// stays at `at`), or per tuple (blocks mixing axes).
class LineSource {
 public:
  LineSource(const Schedule& s, std::size_t b, const std::vector<Realisation>& members,
             const CensusOptions& options);
  /// values[m][k] = member m's pair at window index begin + k (absolute S + begin + k).
  void evaluate(std::uint64_t begin, std::uint64_t end,
                std::vector<std::vector<RealisedPair>>& values);
  /// What the census reads narrow formats through: bits[m][k] = member m's pair at window
  /// index begin + k as binary64 bit patterns (Value::bits_key). Streamed blocks come from the
  /// realisation's BlockEvaluator::evaluate_bits (its fast path, no Values built); constant and
  /// mixed-axis blocks are converted from evaluate().
  void evaluate_bits(std::uint64_t begin, std::uint64_t end,
                     std::vector<std::vector<PairBits>>& bits);

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

/// The distinct packed keys of one block, gathered by the position tasks as they store the
/// keys: open addressing over `atomic<K>` slots (0 marks an empty slot; the key 0 has a flag of
/// its own), filled concurrently with compare-and-swap, at load ≤ 1/2 up to `budget` keys.
/// Every key is inserted once whatever the thread count or order, so count() is the exact
/// number of distinct keys unless overflowed() (more than `budget` distinct keys: the caller
/// then counts by sorting).
template <class K>
class KeySet {
 public:
  /// Room for `budget` keys (slots: the power of two ≥ 2·budget, at least 64; a few more keys
  /// than `budget` may land while other threads see the overflow, never enough to fill it).
  void reserve(std::size_t budget) {
    budget_ = budget;
    std::size_t cap = 64;
    while (cap < 2 * budget) cap *= 2;
    slots_ = std::make_unique<std::atomic<K>[]>(cap);
    mask_ = cap - 1;
    clear();
  }
  /// Bytes of the slot table.
  std::size_t bytes() const { return slots_ ? (mask_ + 1) * sizeof(K) : 0; }
  void release() {
    slots_.reset();
    mask_ = 0;
  }
  /// Empties the set (single-threaded).
  void clear() {
    for (std::size_t i = 0; slots_ && i <= mask_; ++i)
      slots_[i].store(0, std::memory_order_relaxed);
    count_.store(0);
    overflow_.store(false);
    zero_.store(false);
  }
  /// Adds k (thread-safe against other insert calls).
  void insert(K k) {
    if (overflow_.load(std::memory_order_relaxed)) return;
    if (k == 0) {
      if (!zero_.exchange(true, std::memory_order_relaxed)) added();
      return;
    }
    std::size_t slot = mix(static_cast<std::uint64_t>(k) + 0x632be59bd9b4e019ULL) & mask_;
    for (;;) {
      K seen = slots_[slot].load(std::memory_order_relaxed);
      if (seen == k) return;
      if (seen == 0) {
        if (slots_[slot].compare_exchange_strong(seen, k, std::memory_order_relaxed)) {
          added();
          return;
        }
        if (seen == k) return;
      }
      slot = (slot + 1) & mask_;
    }
  }
  bool overflowed() const { return overflow_.load(); }
  std::uint64_t count() const { return count_.load(); }

 private:
  void added() {
    if (count_.fetch_add(1, std::memory_order_relaxed) + 1 > budget_)
      overflow_.store(true, std::memory_order_relaxed);
  }
  std::unique_ptr<std::atomic<K>[]> slots_;
  std::size_t mask_ = 0, budget_ = 0;
  std::atomic<std::uint64_t> count_{0};
  std::atomic<bool> overflow_{false}, zero_{false};
};

/// One member's census state. Per position: `fp`, a 64-bit fingerprint of the whole realised
/// rotation so far (bits 2-63: the sum of the blocks' fingerprint_term; bits 0-1: the
/// overflow/NaN flags of any block), and the current block's exact keys (one of key16, key32,
/// key2, ids by KeyKind). Per block, gathered while its positions stream: the distinct packed
/// keys (set16, set32) and one polynomial hash per chunk of positions (chunk_hash, for the
/// period search).
struct Member {
  KeyKind kind = KeyKind::pack32;
  std::vector<std::uint64_t> fp;
  std::vector<std::uint32_t> key16;
  std::vector<std::uint64_t> key32;  // also the wide ids
  std::vector<Key2> key2;
  std::map<std::string, std::uint32_t> wide;  // per block (wide formats only)
  KeySet<std::uint32_t> set16;
  KeySet<std::uint64_t> set32;
  std::vector<std::uint64_t> chunk_hash;
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
  add_term(mem.fp[i], k, b, p.flags);
}

// ---- per-block distinct count and period (census_block.cpp) ----------------------------------

/// Sizes mem's per-block tables for n positions (the distinct-key set of a packed kind, the
/// chunk hashes) and counts them in `meter`.
void reserve_block_tables(Member& mem, std::uint64_t n, Meter& meter);
/// Frees what reserve_block_tables allocated.
void release_block_tables(Member& mem, Meter& meter);
/// Starts a block: empties the distinct-key set (and the wide ids).
void begin_block(Member& mem);
/// After mem's keys of window indices [begin, end) are stored (begin a multiple of kChunk, end
/// the chunk's end): adds them to the distinct-key set and stores the chunk's hash. Safe to
/// call concurrently for different chunks.
void record_chunk(Member& mem, std::uint64_t begin, std::uint64_t end);
/// The block's number of distinct keys, exact (the set's count, or by sorting the keys in place
/// when it overflowed or for pair keys; `keys` are then left in an unspecified order).
std::uint64_t block_distinct(Member& mem, unsigned threads, Meter& meter);
/// The block's smallest period P ≤ N/2 (keys[i+P] = keys[i] for all i < N-P), from the chunk
/// hashes and the keys, on `threads` threads. Call before block_distinct (which may reorder).
std::optional<std::uint64_t> block_period(const Member& mem, unsigned threads);

// ---- exact classes and results (census_verify.cpp) ------------------------------------------

/// Turns the fingerprints into exact classes: rep[i] = the smallest position (window index)
/// whose realised rotation equals R̂_i. Positions are grouped by fingerprint (an index sort);
/// then every group of ≥ 2 positions is verified by re-realising its members block by block
/// under `realisation` (this member's alone, whatever else its census_many evaluates) and
/// comparing their bit patterns with the group's first position (unless verification is
/// switched off by the test hook); a group that fails is split exactly by the full rotations
/// of its members. Frees `mem.fp`.
std::vector<std::uint32_t> exact_classes(const Schedule& s, const Realisation& realisation,
                                         const CensusOptions& options, Member& mem,
                                         unsigned threads, Meter& meter, FastPathStats& fast_path);

/// The census results derived from exact classes rep (rep[i] = smallest window index with
/// the same realised rotation): distinct count, first repeat, largest class, period and
/// witnesses (z-function over rep).
void finish(CensusResult& r, std::vector<std::uint32_t>& rep, std::uint64_t p_max, Meter& meter);

}  // namespace ropesim::attention::census_impl
