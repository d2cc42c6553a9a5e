#include "attention/census.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <thread>
#include <unordered_map>

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

/// Open-addressing interner: key → dense id in order of first appearance.
template <class Key, class Hash>
class Interner {
 public:
  void reset(std::size_t expected) {
    std::size_t cap = 16;
    while (cap < 2 * expected + 2) cap *= 2;
    if (keys_.size() != cap) keys_.assign(cap, Key{});
    ids_.assign(cap, kEmpty);  // keys are only read where ids_ is set
    mask_ = cap - 1;
    count_ = 0;
  }
  std::uint32_t intern(const Key& k) {
    std::size_t h = Hash{}(k)&mask_;
    while (ids_[h] != kEmpty) {
      if (keys_[h] == k) return ids_[h];
      h = (h + 1) & mask_;
    }
    keys_[h] = k;
    ids_[h] = count_;
    return count_++;
  }
  std::uint32_t size() const { return count_; }

 private:
  static constexpr std::uint32_t kEmpty = 0xffffffffu;
  std::vector<Key> keys_;
  std::vector<std::uint32_t> ids_;
  std::size_t mask_ = 0;
  std::uint32_t count_ = 0;
};

struct PairKey {
  std::uint64_t c = 0, s = 0;
  bool operator==(const PairKey&) const = default;
};
struct PairHash {
  std::size_t operator()(const PairKey& k) const {
    return mix(k.c ^ mix(k.s + 0x9e3779b97f4a7c15ULL));
  }
};
struct U64Hash {
  std::size_t operator()(std::uint64_t k) const { return mix(k); }
};

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

/// One block's contribution to one member's census.
struct BlockIds {
  std::vector<std::uint32_t> ids;
  std::vector<std::uint8_t> flags;
  std::uint64_t distinct = 0;
  std::optional<std::uint64_t> period;
};

constexpr std::uint64_t kChunk = 4096;

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

 private:
  const Schedule& s_;
  std::size_t b_;
  const std::vector<Realisation>& members_;
  const CensusOptions& options_;
  std::unique_ptr<detail::BlockEvaluator> ev_;  // unset for a block mixing axes
  bool mixed_ = false, is_constant_ = false;
  std::vector<std::vector<RealisedPair>> constant_;
};

/// Evaluates block b for all members and interns the (cos, sin) bit patterns.
void run_block(const Schedule& s, std::size_t b, const std::vector<Realisation>& members,
               const CensusOptions& options, std::uint64_t n, std::vector<BlockIds>& out) {
  // engines differ in speed only: the first member's serves all
  LineSource ev(s, b, members, options);
  const std::size_t m = members.size();
  // buffers keep their capacity across blocks (out is reused by the caller; the interners
  // are per thread): no allocation per block, so memory stays flat and fast
  out.resize(m);
  thread_local std::vector<Interner<PairKey, PairHash>> narrow;
  narrow.resize(std::max(narrow.size(), m));
  std::vector<std::map<std::string, std::uint32_t>> wide(m);
  for (std::size_t k = 0; k < m; ++k) {
    out[k].ids.resize(n);
    out[k].flags.resize(n);
    out[k].distinct = 0;
    out[k].period.reset();
    narrow[k].reset(std::min<std::uint64_t>(n, 1u << 20));
  }
  std::vector<char> use_wide(m);
  for (std::size_t k = 0; k < m; ++k) use_wide[k] = !members[k].table_format().fits_double();
  std::vector<std::vector<RealisedPair>> values;
  for (std::uint64_t begin = 0; begin < n; begin += kChunk) {
    const std::uint64_t end = std::min(n, begin + kChunk);
    ev.evaluate(begin, end, values);
    for (std::size_t k = 0; k < m; ++k) {
      auto& ids = out[k].ids;
      auto& fl = out[k].flags;
      for (std::uint64_t i = begin; i < end; ++i) {
        const RealisedPair& p = values[k][i - begin];
        fl[i] = p.flags;
        if (!use_wide[k]) {
          ids[i] = narrow[k].intern(PairKey{p.cos.bits_key(), p.sin.bits_key()});
        } else {
          const std::string key = (p.cos.is_nan() ? "nan" : p.cos.to_hex()) + "|" +
                                  (p.sin.is_nan() ? "nan" : p.sin.to_hex());
          auto it = wide[k].find(key);
          if (it == wide[k].end()) {
            it = wide[k].emplace(key, static_cast<std::uint32_t>(wide[k].size())).first;
          }
          ids[i] = it->second;
        }
      }
    }
  }
  for (std::size_t k = 0; k < m; ++k) {
    out[k].distinct = narrow[k].size() + wide[k].size();
    thread_local std::vector<std::uint32_t> z;
    z_function(out[k].ids, z);
    out[k].period = smallest_period(z);
  }
}

/// Running census of one member.
struct Member {
  std::vector<std::uint32_t> global;
  std::vector<std::uint8_t> flags;
  Interner<std::uint64_t, U64Hash> pairs;
  CensusResult result;

  std::uint64_t distinct = 0;  // number of global ids so far

  void combine(const BlockIds& b, bool first) {
    const std::size_t n = global.size();
    if (first) {
      global = b.ids;
      distinct = b.distinct;
    } else if (distinct < n) {
      // (ids are in order of first appearance; when all N are already distinct, refining by
      // another block cannot change them: global[i] = i stays)
      pairs.reset(n);
      for (std::size_t i = 0; i < n; ++i) {
        global[i] = pairs.intern((static_cast<std::uint64_t>(global[i]) << 32) | b.ids[i]);
      }
      distinct = pairs.size();
    }
    for (std::size_t i = 0; i < n; ++i) flags[i] |= b.flags[i];
    result.distinct_per_block.push_back(b.distinct);
    result.period_per_block.push_back(b.period);
  }

  void finish(std::uint64_t p_max) {
    CensusResult& r = result;
    const std::uint64_t s0 = r.start;  // ids are indexed from 0; positions are s0 + index
    const std::size_t n = global.size();
    std::uint32_t distinct = 0;
    for (std::size_t i = 0; i < n; ++i) distinct = std::max(distinct, global[i] + 1);
    r.distinct_rotations = distinct;
    // ids are in order of first appearance: id k first occurs at the k-th new index, so the
    // first repeat is the first j with id ≠ j, and the largest class is the smallest id of
    // the largest count (its first index is then the smallest among equal-size classes)
    for (std::size_t j = 0; j < n; ++j) {
      if (global[j] != j) {
        // the earlier index of id global[j] is its first occurrence, which is global[j]
        r.first_repeat = FirstRepeat{s0 + global[j], s0 + j};
        break;
      }
    }
    {
      std::vector<std::uint32_t> count(distinct, 0);
      std::vector<std::uint64_t> first(distinct, 0);
      for (std::size_t i = n; i-- > 0;) {
        ++count[global[i]];
        first[global[i]] = i;
      }
      std::uint32_t best = 0;
      for (std::uint32_t k = 1; k < distinct; ++k) {
        if (count[k] > count[best]) best = k;
      }
      if (distinct > 0) r.largest_class = LargestClass{count[best], s0 + first[best]};
    }
    std::vector<std::uint32_t> z;
    z_function(global, z);
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
    for (std::size_t i = 0; i < n; ++i) {
      if (flags[i] & flag_overflow) {
        if (!r.overflow.first) r.overflow.first = s0 + i;
        ++r.overflow.count;
      }
      if (flags[i] & flag_nan) {
        if (!r.nan.first) r.nan.first = s0 + i;
        ++r.nan.count;
      }
    }
  }
};

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
  std::vector<Member> members(m);
  for (std::size_t k = 0; k < m; ++k) {
    members[k].global.assign(n, 0);
    members[k].flags.assign(n, 0);
    CensusResult& r = members[k].result;
    r.schedule = s.spec;
    r.realisation = realisations[k].name();
    r.format = realisations[k].format;
    r.table_format = realisations[k].table_format();
    r.positions = n;
    r.start = options.start;
    if (s.is_multi_axis()) {
      r.axis = options.axis ? s.position_axes[*options.axis] : "diagonal";
      r.at = options.at.empty() ? PositionTuple(s.position_axes.size(), 0) : options.at;
      if (options.axis) r.at[*options.axis] = 0;
    }
  }
  const std::size_t nb = s.blocks.size();
  const unsigned threads = options.threads;
  if (nb == 0) {
    for (auto& mem : members) mem.global.assign(n, 0);
  }
  // Blocks in windows of `threads`: each worker evaluates one block of the window, then the
  // members are combined in block order (member k by worker k mod threads), so memory stays
  // O(threads · members · N) and the result does not depend on the thread count. The workers
  // live for the whole census (their buffers are reused from block to block).
  std::vector<std::vector<BlockIds>> window(threads);
  std::vector<std::exception_ptr> errors(threads);
  std::atomic<bool> failed{false};
  std::barrier sync(static_cast<std::ptrdiff_t>(threads));
  auto worker = [&](unsigned t) {
    for (std::size_t b0 = 0; b0 < nb; b0 += threads) {
      const std::size_t count = std::min<std::size_t>(threads, nb - b0);
      if (t < count && !failed) {
        try {
          run_block(s, b0 + t, realisations, options, n, window[t]);
        } catch (...) {
          errors[t] = std::current_exception();
          failed = true;
        }
      }
      sync.arrive_and_wait();
      if (!failed) {
        for (std::size_t k = t; k < m; k += threads) {
          for (std::size_t w = 0; w < count; ++w) members[k].combine(window[w][k], b0 + w == 0);
        }
      }
      sync.arrive_and_wait();
    }
  };
  {
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) {
      pool.emplace_back([&worker, t] {
        const numeric::ThreadCacheRelease release;  // this thread's MPFR caches, at its end
        worker(t);
      });
    }
    worker(0);
    for (auto& th : pool) th.join();
  }
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  numeric::parallel_for(threads, m, [&](std::size_t k) { members[k].finish(p_max); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<CensusResult> out;
  for (auto& mem : members) {
    mem.result.seconds = m ? seconds / static_cast<double>(m) : 0;
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
  j["distinct_rotations"] = r.distinct_rotations;
  j["largest_class"] = {{"size", r.largest_class.size}, {"position", r.largest_class.position}};
  j["distinct_per_block"] = r.distinct_per_block;
  json periods = json::array();
  for (const auto& p : r.period_per_block) periods.push_back(opt(p));
  j["period_per_block"] = periods;
  j["first_repeat"] =
      r.first_repeat ? json{{"earlier", r.first_repeat->earlier}, {"later", r.first_repeat->later}}
                     : json(nullptr);
  j["period"] = opt(r.period);
  j["max_period"] = r.max_period;
  j["largest_witness"] = r.largest_witness_period ? json{{"period", *r.largest_witness_period},
                                                         {"position", *r.largest_witness_position}}
                                                  : json(nullptr);
  std::uint64_t with = 0;
  for (auto w : r.witnesses) with += w >= 0;
  j["periods_with_witness"] = with;
  if (include_witnesses) j["witnesses"] = r.witnesses;
  j["overflow"] = {{"count", r.overflow.count}, {"first", opt(r.overflow.first)}};
  j["nan"] = {{"count", r.nan.count}, {"first", opt(r.nan.first)}};
  j["seconds"] = r.seconds;
  return j;
}

WorkEstimate census_work(const Schedule& s, const CensusOptions& options, std::size_t cells) {
  WorkEstimate e;
  e.what = "realised (position, block) pairs";
  const double blocks = static_cast<double>(std::max<std::size_t>(1, s.blocks.size()));
  e.units = static_cast<double>(options.positions) * blocks * static_cast<double>(cells);
  e.units_per_second = 2e6 * static_cast<double>(std::max(1u, options.threads));
  e.bytes = static_cast<double>(options.positions) * 64;
  return e;
}

}  // namespace ropesim::attention
