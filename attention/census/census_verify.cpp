// The census's exact classes (verification of equal fingerprints, census.hpp) and the results
// derived from them: distinct rotations, first repeat, largest class, period and witnesses.
#include <fmt/format.h>

#include "attention/census/census_internal.hpp"
#include "numeric/parallel.hpp"

namespace ropesim::attention::census_impl {

namespace {

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

}  // namespace

std::vector<std::uint32_t> exact_classes(const Schedule& s, const Realisation& realisation,
                                         const CensusOptions& options, Member& mem,
                                         unsigned threads, Meter& meter, FastPathStats& fast_path) {
  // This member's realisation alone: re-realising only its own pairs keeps its verification as
  // cheap inside census_many as in its own census (evaluating every member here made each of a
  // sweep's k cells re-realise all k cells in every chunk holding a repeat: issue 34 item 7).
  const std::vector<Realisation> rs{realisation};
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
          check(packed_keys, g, lead, std::uint64_t{key16(bits[0][i - begin])});
        } else if (kind == KeyKind::pack32) {
          check(packed_keys, g, lead, key32(bits[0][i - begin]));
        } else if (narrow) {
          const PairBits& p = bits[0][i - begin];
          check(pair_keys, g, lead, Key2{p.cos, p.sin});
        } else {
          check(wide_keys, g, lead, exact_key(kind, values[0][i - begin]));
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
        const ExactKey e = exact_key(kind, values[0][0]);
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

}  // namespace ropesim::attention::census_impl
