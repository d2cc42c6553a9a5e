// The census's memory design (census.hpp; docs/PERFORMANCE.md "Census memory"): fingerprints
// whose collisions are verified exactly, results independent of the thread count, per-block
// counts and periods against a direct recomputation, and the bytes a position it holds.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "attention/census/census.hpp"

using namespace ropesim::attention;

namespace {

CensusOptions opts(std::uint64_t n, unsigned threads = 1) {
  CensusOptions o;
  o.positions = n;
  o.threads = threads;
  return o;
}

/// The census's results without its fast-path counters (work done, not results: a forced
/// fingerprint collision makes the census verify, and so evaluate, more).
nlohmann::json science(const CensusResult& r) {
  auto j = to_json(r, true);
  j.erase("fast_path");
  return j;
}

/// Restores the default fingerprint and verification when a test ends (also on failure).
struct HookGuard {
  ~HookGuard() {
    detail::set_census_fingerprint_for_testing(nullptr);
    detail::set_census_verification_for_testing(true);
  }
};

/// Every position gets one fingerprint: all N positions collide.
std::uint64_t constant_fingerprint(std::uint64_t, std::size_t) { return 0; }
/// Keeps only the lowest bit of each block's key: many unequal rotations collide.
std::uint64_t weak_fingerprint(std::uint64_t key, std::size_t) { return (key & 1) << 2; }

/// Per block, directly from realise_block: distinct (cos, sin) bit patterns and the smallest
/// period P ≤ N/2 (brute force, O(N²) at worst: small N only).
struct BlockBrute {
  std::uint64_t distinct = 0;
  std::optional<std::uint64_t> period;
};
BlockBrute block_brute(const Schedule& s, const Realisation& r, std::size_t b, std::uint64_t n) {
  const auto v = realise_block(s, r, b, 0, n);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> k;
  for (const auto& p : v) k.emplace_back(p.cos.bits_key(), p.sin.bits_key());
  BlockBrute out;
  out.distinct = std::set(k.begin(), k.end()).size();
  for (std::uint64_t p = 1; p <= n / 2 && !out.period; ++p) {
    bool ok = true;
    for (std::uint64_t i = 0; i + p < n && ok; ++i) ok = k[i] == k[i + p];
    if (ok) out.period = p;
  }
  return out;
}

}  // namespace

TEST_CASE("forced fingerprint collisions are found and split: results stay exact",
          "[census][memory]") {
  const HookGuard guard;
  struct Case {
    const char* schedule;
    const char* realisation;
    Format format;
    std::uint64_t n;
  };
  // r2 at bf16 repeats a lot (few exact classes), r1 at fp32 hardly at all, fp64 uses the
  // pair keys, periodic:m=... is periodic: every kind of class structure meets the collisions
  const std::vector<Case> cases = {
      {"conventional:base=10000,dim=8", "r2", Format::bf16(), 3000},
      {"conventional:base=10000,dim=8", "r1", Format::fp32(), 2000},
      {"conventional:base=10000,dim=8", "hf", Format::fp64(), 1500},
      {"periodic:m=2,3,12", "r1", Format::fp16(), 500},
  };
  for (const auto& c : cases) {
    INFO(c.schedule << " " << c.realisation << " " << c.format.name);
    const Schedule s = parse_schedule(c.schedule);
    const Realisation r = parse_realisation(c.realisation, c.format);
    const auto exact = census(s, r, opts(c.n));
    for (auto hook : {&constant_fingerprint, &weak_fingerprint}) {
      detail::set_census_fingerprint_for_testing(hook);
      CHECK(science(census(s, r, opts(c.n))) == science(exact));
      CHECK(science(census(s, r, opts(c.n, 3))) == science(exact));
    }
    detail::set_census_fingerprint_for_testing(nullptr);
  }
  // Without the verification the constant fingerprint merges every position into one class:
  // the census would report one rotation, repeated from position 1, and period 1.
  const Schedule s = parse_schedule("conventional:base=10000,dim=8");
  const Realisation r = parse_realisation("r1", Format::fp32());
  const auto exact = census(s, r, opts(2000));
  REQUIRE(exact.distinct_rotations == 2000);
  REQUIRE_FALSE(exact.first_repeat);
  detail::set_census_fingerprint_for_testing(&constant_fingerprint);
  detail::set_census_verification_for_testing(false);
  const auto wrong = census(s, r, opts(2000));
  CHECK(wrong.distinct_rotations == 1);
  CHECK(wrong.period == std::optional<std::uint64_t>(1));
  CHECK(wrong.first_repeat);
  detail::set_census_verification_for_testing(true);
  CHECK(census(s, r, opts(2000)).distinct_rotations == 2000);
}

TEST_CASE("census results do not depend on the thread count", "[census][threads]") {
  // N spans several position tasks (65536 each) and ends inside one; 1..5 threads
  const std::uint64_t n = 3 * 65536 + 123;
  const Schedule s = parse_schedule("conventional:base=10000,dim=8");
  for (const auto& [spec, f] : std::vector<std::pair<const char*, Format>>{
           {"r2", Format::bf16()}, {"r1", Format::fp32()}}) {
    INFO(spec << " " << f.name);
    const Realisation r = parse_realisation(spec, f);
    const auto one = science(census(s, r, opts(n, 1)));
    for (unsigned t : {2u, 3u, 5u}) {
      INFO(t << " threads");
      CHECK(science(census(s, r, opts(n, t))) == one);
    }
  }
}

TEST_CASE("short lines on several threads: blocks in lanes, results as on one thread",
          "[census][threads]") {
  // 16 blocks and N ≤ 2^20: on 2-4 threads whole blocks are the tasks, each thread's lane
  // summing its blocks' fingerprint terms apart; every key kind (pack16 bf16, pack32 fp16/fp32,
  // pair fp64) in one census_many, whose results must equal one thread's, fast-path counters
  // included, also with the weak fingerprint forcing collisions across lanes.
  const HookGuard guard;
  const Schedule s = parse_schedule("conventional:base=10000,dim=32");
  REQUIRE(s.blocks.size() == 16);
  const std::vector<Realisation> rs = {
      parse_realisation("r2", Format::bf16()), parse_realisation("r2", Format::fp16()),
      parse_realisation("hf", Format::fp32()), parse_realisation("r1", Format::fp64())};
  const std::uint64_t n = 5000;
  auto all = [&](unsigned threads) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : census_many(s, rs, opts(n, threads))) j.push_back(to_json(r, true));
    return j;
  };
  const auto one = all(1);
  // the lines repeat: r2 at bf16 has far fewer distinct rotations than positions
  REQUIRE(one[0]["distinct"].get<std::uint64_t>() < n);
  REQUIRE(one[3]["distinct"].get<std::uint64_t>() == n);
  for (unsigned t : {2u, 3u, 4u}) {
    INFO(t << " threads");
    CHECK(all(t) == one);
  }
  detail::set_census_fingerprint_for_testing(&weak_fingerprint);
  auto strip = [](nlohmann::json j) {
    for (auto& r : j) r.erase("fast_path");  // the collisions make the census verify more
    return j;
  };
  CHECK(strip(all(2)) == strip(one));
  CHECK(strip(all(3)) == strip(one));
}

TEST_CASE("per-block distinct counts and periods equal a direct recomputation",
          "[census][memory]") {
  // pack16 (bf16), pack32 (fp16, fp32), pair (fp64) keys; periodic and non-periodic blocks
  struct Case {
    const char* schedule;
    const char* realisation;
    Format format;
    std::uint64_t n;
  };
  const std::vector<Case> cases = {
      {"conventional:base=10000,dim=16", "r2", Format::bf16(), 2500},
      {"conventional:base=10000,dim=16", "r1", Format::fp16(), 2500},
      {"periodic:m=2,3,12,7", "r1", Format::fp32(), 301},
      {"periodic:m=2,3,12,7", "r1", Format::fp64(), 300},
      {"single:g=0.015625", "r2", Format::bf16(), 3000},
  };
  for (const auto& c : cases) {
    INFO(c.schedule << " " << c.realisation << " " << c.format.name);
    const Schedule s = parse_schedule(c.schedule);
    const Realisation r = parse_realisation(c.realisation, c.format);
    const auto got = census(s, r, opts(c.n, 2));
    REQUIRE(got.distinct_per_block.size() == s.blocks.size());
    for (std::size_t b = 0; b < s.blocks.size(); ++b) {
      INFO("block " << b);
      const auto want = block_brute(s, r, b, c.n);
      CHECK(got.distinct_per_block[b] == want.distinct);
      CHECK(got.period_per_block[b] == want.period);
    }
  }
}

TEST_CASE("census memory: at most 16 bytes a position at bf16, 20 at fp32", "[census][memory]") {
  // llama2-7b's 64 blocks, hf: the bench's configuration at a test-sized N. working_bytes
  // counts the census's per-position arrays at their peak (fingerprints 8, one block's keys
  // 4 (bf16) or 8 (fp32), the distinct-count tables 2, then the class sort's index and ids).
  const std::uint64_t n = 1 << 14;
  const Schedule s = preset_schedule("llama2-7b");
  const auto bf16 = census(s, parse_realisation("hf", Format::bf16()), opts(n, 1));
  CHECK(bf16.working_bytes > 12 * n);  // the fingerprints and keys are really counted
  CHECK(bf16.working_bytes <= 16 * n);
  const auto fp32 = census(s, parse_realisation("hf", Format::fp32()), opts(n, 1));
  CHECK(fp32.working_bytes > 16 * n);
  CHECK(fp32.working_bytes <= 20 * n);
  // On 2 threads this short line runs its blocks in 2 lanes, each streaming with its own
  // fingerprints, keys and tables: 2 · (8 + 4 + 2) at bf16, 2 · (8 + 8 + 2) at fp32, and one
  // 8-byte hash a chunk of 4096 positions each.
  const std::uint64_t hashes = 8 * ((n + 4095) / 4096);
  const auto bf16_lanes = census(s, parse_realisation("hf", Format::bf16()), opts(n, 2));
  CHECK(bf16_lanes.working_bytes > 24 * n);
  CHECK(bf16_lanes.working_bytes <= 2 * (14 * n + hashes));
  const auto fp32_lanes = census(s, parse_realisation("hf", Format::fp32()), opts(n, 2));
  CHECK(fp32_lanes.working_bytes > 32 * n);
  CHECK(fp32_lanes.working_bytes <= 2 * (18 * n + hashes));
}

TEST_CASE("per-block periods and distinct counts at every thread count, periods in every part",
          "[census][threads]") {
  // N = 100003: P ≤ 50001, and the period search splits that range into 3 parts scanned on the
  // threads. periodic:m = 2, 20000, 40000, 50001, 50002 under r1 has block periods 2 (first
  // part), 20000 (second), 40000 (third), 50001 (the last P of the last part) and none
  // (50002 > N/2), and as many distinct pairs as m in fp32 (more than the distinct-key set's
  // N/8 budget for m ≥ 20000: counted by sorting) — all recomputed directly here. bf16 and fp64
  // take the 4-byte set and the pair keys.
  const std::uint64_t n = 100003;
  const Schedule s = parse_schedule("periodic:m=2,20000,40000,50001,50002");
  for (const Format& f : {Format::fp32(), Format::bf16(), Format::fp64()}) {
    INFO(f.name);
    const Realisation r = parse_realisation("r1", f);
    std::vector<BlockBrute> want;
    for (std::size_t b = 0; b < s.blocks.size(); ++b) want.push_back(block_brute(s, r, b, n));
    if (f.name == "fp32") {
      const std::vector<std::uint64_t> m = {2, 20000, 40000, 50001, 50002};
      for (std::size_t b = 0; b < m.size(); ++b) {
        CHECK(want[b].distinct == m[b]);
        CHECK(want[b].period ==
              (m[b] <= n / 2 ? std::optional<std::uint64_t>(m[b]) : std::nullopt));
      }
    }
    for (unsigned t : {1u, 2u, 3u}) {
      INFO(t << " threads");
      const auto got = census(s, r, opts(n, t));
      REQUIRE(got.distinct_per_block.size() == s.blocks.size());
      for (std::size_t b = 0; b < s.blocks.size(); ++b) {
        INFO("block " << b);
        CHECK(got.distinct_per_block[b] == want[b].distinct);
        CHECK(got.period_per_block[b] == want[b].period);
      }
    }
  }
}
