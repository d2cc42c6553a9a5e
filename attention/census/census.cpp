// The census driver (census.hpp): options, the block-by-block streaming of the realised
// pairs on the threads, the per-member results, sweeps and the work estimate.
#include "attention/census/census.hpp"

#include <chrono>

#include "attention/census/census_internal.hpp"
#include "core/error.hpp"
#include "numeric/parallel.hpp"

namespace ropesim::attention {

namespace census_impl {

// ---- test hooks (census.hpp detail::) --------------------------------------------------------
std::atomic<detail::CensusFingerprint> g_fingerprint{nullptr};
std::atomic<bool> g_verify{true};

}  // namespace census_impl

void check_census_limits(std::uint64_t positions, std::uint64_t start,
                         std::optional<std::uint64_t> max_period) {
  if (positions < kMinCensusPositions) {
    throw InvalidArgument("--positions: N must be at least 2, got " + std::to_string(positions));
  }
  if (positions > kMaxCensusPositions) {
    throw InvalidArgument("--positions: N = " + std::to_string(positions) +
                          "; accepted: 2..2147483648");
  }
  if (max_period && (*max_period < 1 || *max_period >= positions)) {
    throw InvalidArgument("--max-period: P_max must be in 1..N-1 = 1.." +
                          std::to_string(positions - 1));
  }
  if (start > kMaxCensusLastPosition - (positions - 1)) {
    throw InvalidArgument("--start: the last position S + N - 1 = " + std::to_string(start) +
                          " + " + std::to_string(positions - 1) +
                          " exceeds 2^63 - 1; accepted: S <= " +
                          std::to_string(kMaxCensusLastPosition - (positions - 1)));
  }
}

namespace {

using namespace census_impl;

/// Positions per task of one block's pass: a multiple of kChunk, about N / (8·threads) so that
/// every thread gets several tasks at any N (2^16 positions on 2 threads: 16 tasks of 4096),
/// at most 16·kChunk. Each position's key and fingerprint are a function of that position
/// alone, so the split does not change any result.
std::uint64_t task_positions(std::uint64_t n, unsigned threads) {
  const std::uint64_t want = n / (8 * std::uint64_t{std::max(1u, threads)});
  const std::uint64_t chunks = std::clamp<std::uint64_t>((want + kChunk - 1) / kChunk, 1, 16);
  return chunks * kChunk;
}

/// Positions up to which a census on several threads takes whole blocks as its tasks (one
/// lane a thread, each holding its own keys, per-block tables and partial fingerprints) instead
/// of splitting each block's positions over the threads: at 2^16 positions a block is a few
/// milliseconds of work, too short to share without the threads waiting on each other (two
/// joins a block) and contending for one distinct-key set (docs/PERFORMANCE.md, "Short lines on
/// several threads": 1.27 → 1.78 at 2^16 and 1.66 → 1.91 at 2^19 on two threads). The extra
/// lanes cost at most 24 bytes a position each, tens of MiB at this size.
constexpr std::uint64_t kBlockLanePositions = std::uint64_t{1} << 20;

/// The lanes of a census of n positions over `blocks` blocks on `threads` threads: 1 (blocks
/// one after the other, positions split) unless n ≤ kBlockLanePositions and there are at least
/// two blocks a thread to share out.
unsigned block_lanes(std::uint64_t n, std::size_t blocks, unsigned threads) {
  if (threads <= 1 || n > kBlockLanePositions || blocks < 2 * std::size_t{threads}) return 1;
  return threads;
}

/// Allocates mem's per-position arrays for n positions (the fingerprints, zero, and the keys of
/// its kind) and its per-block tables, counted in `meter`.
void allocate_lane(Member& mem, std::uint64_t n, Meter& meter) {
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
  reserve_block_tables(mem, n, meter);
}

/// Frees what allocate_lane allocated (the fingerprints only when `fingerprints`).
void release_lane(Member& mem, Meter& meter, bool fingerprints) {
  release_block_tables(mem, meter);
  release(mem.key16, meter);
  release(mem.key32, meter);
  release(mem.key2, meter);
  mem.wide.clear();
  if (fingerprints) release(mem.fp, meter);
}

/// Streams block b's window indices [first, last) from `src` into every member of `into`, a
/// chunk of kChunk at a time: each position's exact key and fingerprint term, then the chunk's
/// keys into the block's distinct-key set and its hash for the period search (record_chunk).
/// `first` is a multiple of kChunk. Wide members intern their keys in position order.
void stream_block(LineSource& src, std::vector<Member>& into, std::size_t b, std::uint64_t first,
                  std::uint64_t last) {
  const std::size_t m = into.size();
  const bool any_wide = std::any_of(into.begin(), into.end(),
                                    [](const Member& mem) { return mem.kind == KeyKind::wide; });
  std::vector<std::vector<PairBits>> bits;
  std::vector<std::vector<RealisedPair>> values;
  for (std::uint64_t begin = first; begin < last; begin += kChunk) {
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
      Member& mem = into[k];
      for (std::uint64_t i = begin; i < end; ++i) {
        const PairBits& p = bits[k][i - begin];
        if (mem.kind != KeyKind::wide) {
          put_key(mem, i, p, b);
          continue;
        }
        const std::string key = wide_key(values[k][i - begin]);
        const auto it = mem.wide.emplace(key, static_cast<std::uint32_t>(mem.wide.size())).first;
        mem.key32[i] = it->second;
        add_term(mem.fp[i], it->second, b, p.flags);
      }
      record_chunk(mem, begin, end);
    }
  }
}

void check_options(const CensusOptions& o) {
  check_census_limits(o.positions, o.start, o.max_period);
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
  FastPathStats fast_path;  // summed from per-task counters: independent of the thread count
  const std::size_t blocks = s.blocks.size();
  const unsigned lanes = block_lanes(n, blocks, any_wide ? 1 : threads);
  if (lanes <= 1) {
    // Blocks one after the other; within a block, positions in tasks (task_positions) spread
    // over the threads (each task writes its own positions' keys and fingerprints, adds the
    // keys to the block's distinct-key set and hashes each chunk for the period search), so
    // nothing depends on the thread count. Then the block's period is sought on the threads,
    // and its distinct count read from the set (or counted by sorting). Wide formats intern
    // their keys in position order: their blocks' positions run on one thread.
    for (auto& mem : members) allocate_lane(mem, n, meter);
    const std::uint64_t task = task_positions(n, threads);
    const std::uint64_t tasks = (n + task - 1) / task;
    std::vector<FastPathStats> task_stats(tasks);
    for (std::size_t b = 0; b < blocks; ++b) {
      for (auto& mem : members) begin_block(mem);
      numeric::parallel_for(any_wide ? 1 : threads, tasks, [&](std::size_t t) {
        LineSource src(s, b, realisations, options);
        stream_block(src, members, b, t * task, std::min<std::uint64_t>(n, (t + 1) * task));
        task_stats[t] = src.fast_path_stats();
      });
      for (const auto& st : task_stats) fast_path += st;
      for (auto& mem : members) {
        CensusResult& r = mem.result;
        r.period_per_block.push_back(block_period(mem, threads));
        r.distinct_per_block.push_back(block_distinct(mem, threads, meter));
      }
    }
    for (auto& mem : members) release_lane(mem, meter, false);
  } else {
    // Short lines (block_lanes): whole blocks are the tasks, taken in turn by `lanes` lanes,
    // each with its own keys, per-block tables and partial fingerprints (the sum of the terms
    // of the blocks it took), added together afterwards: the sum, and so every result, does not
    // depend on which lane took which block.
    std::vector<std::vector<Member>> lane(lanes);
    for (auto& l : lane) {
      l = std::vector<Member>(m);
      for (std::size_t k = 0; k < m; ++k) {
        l[k].kind = members[k].kind;
        allocate_lane(l[k], n, meter);
      }
    }
    std::vector<std::optional<std::uint64_t>> period(blocks * m);
    std::vector<std::uint64_t> distinct(blocks * m);
    std::vector<FastPathStats> block_stats(blocks);
    std::atomic<std::size_t> next{0};
    numeric::parallel_for(lanes, lanes, [&](std::size_t l) {
      for (std::size_t b = next++; b < blocks; b = next++) {
        for (auto& mem : lane[l]) begin_block(mem);
        LineSource src(s, b, realisations, options);
        stream_block(src, lane[l], b, 0, n);
        block_stats[b] = src.fast_path_stats();
        for (std::size_t k = 0; k < m; ++k) {
          period[b * m + k] = block_period(lane[l][k], 1);
          distinct[b * m + k] = block_distinct(lane[l][k], 1, meter);
        }
      }
    });
    for (const auto& st : block_stats) fast_path += st;
    for (std::size_t k = 0; k < m; ++k) {
      Member& mem = members[k];
      mem.fp = std::move(lane[0][k].fp);
      for (unsigned l = 1; l < lanes; ++l) {
        const auto& part = lane[l][k].fp;
        for (std::uint64_t i = 0; i < n; ++i) mem.fp[i] = add_fingerprints(mem.fp[i], part[i]);
      }
      for (auto& l : lane) release_lane(l[k], meter, true);
      for (std::size_t b = 0; b < blocks; ++b) {
        mem.result.period_per_block.push_back(period[b * m + k]);
        mem.result.distinct_per_block.push_back(distinct[b * m + k]);
      }
    }
  }
  for (std::size_t k = 0; k < m; ++k) {
    Member& mem = members[k];
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
    auto rep = exact_classes(s, realisations[k], options, mem, threads, meter, fast_path);
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
WorkEstimate census_work(const Schedule& s, const CensusOptions& options, std::size_t cells) {
  WorkEstimate e;
  e.what = "realised (position, block) pairs";
  const double blocks = static_cast<double>(std::max<std::size_t>(1, s.blocks.size()));
  e.units = static_cast<double>(options.positions) * blocks * static_cast<double>(cells);
  e.units_per_second = 2e6 * static_cast<double>(std::max(1u, options.threads));
  e.bytes = static_cast<double>(options.positions) * 24 *
            block_lanes(options.positions, s.blocks.size(), std::max(1u, options.threads));
  return e;
}

}  // namespace ropesim::attention
