// The rotation census (THEORY §3 Prop 2.2, Prop 4.1, Def 2.1): hand-worked examples, brute
// force re-computation on small N from directly realised values, and the 'done means' items.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "attention/census/census.hpp"
#include "core/error.hpp"

using namespace ropesim::attention;
using ropesim::InvalidArgument;

namespace {

CensusOptions opts(std::uint64_t n, unsigned threads = 1) {
  CensusOptions o;
  o.positions = n;
  o.threads = threads;
  return o;
}

/// Brute force on the realised rotations of all blocks: distinct count, first repeat,
/// smallest period ≤ N/2, witnesses (O(N²), small N only).
struct Brute {
  std::uint64_t distinct = 0;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> first_repeat;
  std::optional<std::uint64_t> period;
  std::vector<std::int64_t> witnesses;  // P = 1..N/2
};

Brute brute(const Schedule& s, const Realisation& r, std::uint64_t n) {
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> rows(n);
  for (std::size_t b = 0; b < s.blocks.size(); ++b) {
    const auto v = realise_block(s, r, b, 0, n);
    for (std::uint64_t i = 0; i < n; ++i)
      rows[i].emplace_back(v[i].cos.bits_key(), v[i].sin.bits_key());
  }
  Brute out;
  std::map<std::vector<std::pair<std::uint64_t, std::uint64_t>>, std::uint64_t> first;
  for (std::uint64_t j = 0; j < n; ++j) {
    auto [it, fresh] = first.emplace(rows[j], j);
    if (!fresh && !out.first_repeat) out.first_repeat = {it->second, j};
  }
  out.distinct = first.size();
  for (std::uint64_t p = 1; p <= n / 2; ++p) {
    std::int64_t w = -1;
    for (std::uint64_t i = 0; i + p < n; ++i) {
      if (rows[i] != rows[i + p]) {
        w = static_cast<std::int64_t>(i);
        break;
      }
    }
    out.witnesses.push_back(w);
    if (w < 0 && !out.period) out.period = p;
  }
  return out;
}

}  // namespace

TEST_CASE("hand example: periodic:m=4 at fp32 first repeats at (0, 4)", "[census]") {
  const auto c =
      census(parse_schedule("periodic:m=4"), parse_realisation("r1", Format::fp32()), opts(40));
  REQUIRE(c.distinct_rotations == 4);  // Rot(0), Rot(π/2), Rot(π), Rot(3π/2)
  REQUIRE(c.first_repeat.has_value());
  REQUIRE(c.first_repeat->earlier == 0);
  REQUIRE(c.first_repeat->later == 4);
  REQUIRE(c.period == std::optional<std::uint64_t>(4));
  // witnesses for P = 1, 2, 3 (hand): R̂_1 ≠ R̂_0 etc., all at i = 0
  REQUIRE(c.witnesses == std::vector<std::int64_t>{0, 0, 0});
  REQUIRE(c.overflow.count == 0);
  REQUIRE(c.nan.count == 0);

  // θ = 0: every rotation is the identity: first repeat (0, 1), period 1
  const auto z =
      census(parse_schedule("single:g=0"), parse_realisation("r2", Format::bf16()), opts(10));
  REQUIRE(z.distinct_rotations == 1);
  REQUIRE(z.first_repeat->later == 1);
  REQUIRE(z.period == std::optional<std::uint64_t>(1));
}

TEST_CASE("r3 on periodic:m=2,3,12 has period 12 at every preset format", "[census][r3]") {
  const Schedule s = parse_schedule("periodic:m=2,3,12");
  for (const auto& name : ropesim::numeric::preset_format_names()) {
    const Format f = ropesim::numeric::parse_format(name);
    INFO(name);
    const auto c = census(s, parse_realisation("r3", f), opts(200));
    REQUIRE(c.period == std::optional<std::uint64_t>(12));  // lcm(2, 3, 12) [THEORY Def 2.1]
    REQUIRE(c.distinct_rotations == 12);
    REQUIRE(c.first_repeat->earlier == 0);
    REQUIRE(c.first_repeat->later == 12);
    REQUIRE(c.period_per_block == std::vector<std::optional<std::uint64_t>>{2, 3, 12});
    REQUIRE(c.distinct_per_block == std::vector<std::uint64_t>{2, 3, 12});
  }
}

TEST_CASE("single:g=1 under r1 is non-periodic: witnesses for every P <= 10^4 at N = 65536",
          "[census][r1]") {
  // RoPE-X Prop 4.1: g/2π irrational ⇒ i ↦ round_F(Rot(g i)) non-periodic.
  const Schedule s = parse_schedule("single:g=1");
  const std::vector<Realisation> rs = {parse_realisation("r1", Format::bf16()),
                                       parse_realisation("r1", Format::fp32())};
  const auto cs = census_many(s, rs, opts(65536, 2));
  for (const auto& c : cs) {
    INFO(c.table_format.name);
    REQUIRE_FALSE(c.period.has_value());
    REQUIRE(c.max_period == 32768);
    REQUIRE(c.witnesses.size() == 32768);
    for (std::uint64_t p = 1; p <= 10000; ++p) {
      INFO("P = " << p);
      REQUIRE(c.witnesses[p - 1] >= 0);
      REQUIRE(static_cast<std::uint64_t>(c.witnesses[p - 1]) + p < 65536);
    }
    REQUIRE(c.largest_witness_position.has_value());
  }
  // bf16 has few (cos, sin) pairs near the unit circle, so some R̂ repeats before 65536
  REQUIRE(cs[0].first_repeat.has_value());
  REQUIRE(cs[0].distinct_rotations < 65536);
}

TEST_CASE("census agrees with brute force on small N", "[census]") {
  const std::vector<std::string> schedules = {"single:g=1", "conventional:base=10000,dim=8",
                                              "periodic:1/5,2/7", "prope:base=100,dim=8,p=0.5"};
  for (const auto& spec : schedules) {
    const Schedule s = parse_schedule(spec);
    for (const std::string rs : {"r1", "r2", "hf"}) {
      for (const Format& f : {Format::bf16(), Format::fp8e5m2(), Format::fp16()}) {
        const Realisation r = parse_realisation(rs, f);
        INFO(spec << " " << rs << " " << f.name);
        const auto c = census(s, r, opts(400));
        const Brute b = brute(s, r, 400);
        REQUIRE(c.distinct_rotations == b.distinct);
        REQUIRE(c.first_repeat.has_value() == b.first_repeat.has_value());
        if (b.first_repeat) {
          REQUIRE(c.first_repeat->earlier == b.first_repeat->first);
          REQUIRE(c.first_repeat->later == b.first_repeat->second);
        }
        REQUIRE(c.period == b.period);
        const std::size_t upto = b.period ? *b.period - 1 : 200;
        REQUIRE(c.witnesses.size() == upto);
        for (std::size_t p = 0; p < upto; ++p) REQUIRE(c.witnesses[p] == b.witnesses[p]);
      }
    }
  }
}

TEST_CASE("r2 at fp16 flags positions >= 65520", "[census][r2]") {
  const auto c = census(parse_schedule("conventional:base=10000,dim=8"),
                        parse_realisation("r2", Format::fp16()), opts(66000, 2));
  REQUIRE(c.overflow.count == 66000 - 65520);
  REQUIRE(c.overflow.first == std::optional<std::uint64_t>(65520));
  REQUIRE(c.nan.count == 66000 - 65520);
  REQUIRE(c.nan.first == std::optional<std::uint64_t>(65520));
  // from 65520 on every entry is (NaN, NaN): one rotation, equal by bits
  REQUIRE(c.first_repeat.has_value());
}

TEST_CASE("census_many equals separate censuses and does not depend on threads", "[census]") {
  const Schedule s = parse_schedule("partial:base=10000,dim=24,factor=0.5");
  std::vector<Realisation> rs;
  for (const std::string spec : {"r1", "r2", "hf", "llamacpp-cpu", "llamacpp-cuda"}) {
    for (const Format& f : {Format::bf16(), Format::fp16(), Format::fp32()})
      rs.push_back(parse_realisation(spec, f));
  }
  const auto many = census_many(s, rs, opts(3000, 2));
  for (std::size_t k = 0; k < rs.size(); ++k) {
    INFO(rs[k].name() << " " << rs[k].format.name);
    const auto one = census(s, rs[k], opts(3000, 1));
    REQUIRE(nlohmann::json(to_json(one, true)).dump().size() > 0);
    auto a = to_json(one, true), b = to_json(many[k], true);
    a.erase("seconds");
    b.erase("seconds");
    // census_many evaluates its realisations together: its results carry the shared call's
    // fast-path counters (CensusResult::fast_path), not one realisation's
    a.erase("fast_path");
    b.erase("fast_path");
    REQUIRE(a == b);
  }
}

TEST_CASE("a multi-format sweep gives the rows of its single-format sweeps", "[census][sweep]") {
  // The README's sweep evaluates every realisation × format of a schedule together
  // (census_many); each cell must be what the sweep of its format alone gives, and what the
  // census of that one realisation gives. r2 at bf16 and fp16 repeats from i = 256 and 2048 on
  // (î = round_F(i)), so their fingerprint classes are verified and split against their own
  // realisation; r1 bf16 shares r1's group with fp64 (the exact path) and hf's members share
  // the fp32 table.
  SweepGrid g;
  g.schedules = {parse_schedule("conventional:base=10000,dim=8"), parse_schedule("periodic:m=3,5")};
  g.realisations = {"r1", "r2", "hf"};
  g.formats = {Format::bf16(), Format::fp16(), Format::fp32(), Format::fp64()};
  const std::uint64_t n = 5000;
  const auto together = sweep(g, opts(n, 2));
  REQUIRE(together.size() == g.schedules.size() * g.realisations.size() * g.formats.size());
  auto json = [](const CensusResult& c) {
    auto j = to_json(c, true);
    j.erase("fast_path");  // the counters are the whole call's (census_many), not one cell's
    return j;
  };
  for (std::size_t f = 0; f < g.formats.size(); ++f) {
    SweepGrid one = g;
    one.formats = {g.formats[f]};
    const auto apart = sweep(one, opts(n, 1));
    REQUIRE(apart.size() == g.schedules.size() * g.realisations.size());
    for (std::size_t k = 0; k < apart.size(); ++k) {
      // cell (s, r) of the one-format grid is cell (s, r, f) of the full grid
      const auto& a = together[k * g.formats.size() + f];
      INFO(a.schedule << " " << a.realisation << " " << a.format.name);
      CHECK(json(a) == json(apart[k]));
      const Realisation alone =
          parse_realisation(g.realisations[k % g.realisations.size()], g.formats[f]);
      CHECK(json(a) == json(census(g.schedules[k / g.realisations.size()], alone, opts(n, 1))));
    }
  }
  // By hand, conventional r2 (φ = round_F(θ̂·î), î = round_F(i); equal î, equal rotation; block
  // θ = 1 tells different î apart): bf16 (8 significant bits) rounds 257 to 256 first, and in
  // [4096, 8192) (spacing 32) î = 4160 takes 4144..4176 (both ties go to the even 130·32): 33
  // positions. fp16 (11 bits): 2049 → 2048 first; in spacing 4, î = 4104 takes 4102..4106.
  const auto& bf16 = together[4];  // (conventional, r2, bf16)
  const auto& fp16 = together[5];
  REQUIRE(bf16.realisation == "r2");
  REQUIRE(bf16.format.name == "bf16");
  REQUIRE(fp16.format.name == "fp16");
  REQUIRE(bf16.first_repeat.has_value());
  CHECK(bf16.first_repeat->earlier == 256);
  CHECK(bf16.first_repeat->later == 257);
  CHECK(bf16.largest_class.size == 33);
  CHECK(bf16.largest_class.position == 4144);
  REQUIRE(fp16.first_repeat.has_value());
  CHECK(fp16.first_repeat->earlier == 2048);
  CHECK(fp16.first_repeat->later == 2049);
  CHECK(fp16.largest_class.size == 5);
  CHECK(fp16.largest_class.position == 4102);
}

TEST_CASE("census option errors", "[census]") {
  const Schedule s = parse_schedule("single:g=1");
  const Realisation r = parse_realisation("r1", Format::fp32());
  REQUIRE_THROWS_AS(census(s, r, opts(0)), InvalidArgument);
  // One rule for every caller (check_census_limits): a census compares positions, so N >= 2
  // (N = 1 has no pair and no period in 1..N-1), and P_max in 1..N-1 (0 names no period).
  REQUIRE_THROWS_WITH(census(s, r, opts(1)), "--positions: N must be at least 2, got 1");
  CHECK(census(s, r, opts(2)).distinct_rotations == 2);  // cos 0 = 1 and cos 1 < 1 differ
  CensusOptions zero = opts(10);
  zero.max_period = 0;
  REQUIRE_THROWS_WITH(census(s, r, zero), "--max-period: P_max must be in 1..N-1 = 1..9");
  CensusOptions o = opts(10);
  o.max_period = 10;
  REQUIRE_THROWS_AS(census(s, r, o), InvalidArgument);
  REQUIRE_THROWS_AS(census(s, parse_realisation("r3", Format::fp32()), opts(10)), InvalidArgument);
  // P_max > N/2: periodic:m=7 at N = 10 has no period ≤ 5; P = 7 has no witness (-1)
  o.max_period = 9;
  const auto z = census(parse_schedule("periodic:m=7"), r, o);
  REQUIRE_FALSE(z.period.has_value());
  REQUIRE(z.witnesses == std::vector<std::int64_t>{0, 0, 0, 0, 0, 0, -1, 0, 0});
}

TEST_CASE("sweep marks inapplicable cells", "[census][sweep]") {
  SweepGrid g;
  g.schedules = {parse_schedule("single:g=1"), parse_schedule("periodic:m=3")};
  g.realisations = {"r1", "r3"};
  g.formats = {Format::bf16()};
  std::size_t calls = 0;
  const auto cells =
      sweep(g, opts(100, 2), [&](std::size_t done, std::size_t total, const CensusResult&) {
        ++calls;
        REQUIRE(total == 4);
        REQUIRE(done <= total);
      });
  REQUIRE(calls == 4);
  REQUIRE(cells.size() == 4);
  REQUIRE(cells[0].not_applicable.empty());
  REQUIRE_FALSE(cells[1].not_applicable.empty());  // r3 on single:g=1
  REQUIRE(cells[3].period == std::optional<std::uint64_t>(3));
  REQUIRE(default_sweep_grid().schedules.size() == 13);  // every preset of data/models.json
}

TEST_CASE("sweep with selected cells: those cells, in grid order, each as in the full sweep",
          "[census][sweep]") {
  SweepGrid g;
  g.schedules = {parse_schedule("single:g=1"), parse_schedule("periodic:m=3")};
  g.realisations = {"r1", "r3"};
  g.formats = {Format::bf16(), Format::fp16()};
  const auto all = sweep(g, opts(300, 2));
  REQUIRE(all.size() == 8);
  // cell (s, r, f) = (s·2 + r)·2 + f: pick 1 = (single, r1, fp16), 2 = (single, r3, bf16: not
  // applicable), 5 = (periodic:m=3, r1, fp16) and 6 = (periodic:m=3, r3, bf16)
  const std::vector<std::size_t> pick = {1, 2, 5, 6};
  std::size_t last_total = 0;
  const auto some = sweep(
      g, opts(300, 1),
      [&](std::size_t, std::size_t total, const CensusResult&) { last_total = total; },
      [&](std::size_t cell) { return std::find(pick.begin(), pick.end(), cell) != pick.end(); });
  CHECK(last_total == 4);
  REQUIRE(some.size() == 4);
  for (std::size_t k = 0; k < pick.size(); ++k) {
    const auto& a = all[pick[k]];
    const auto& b = some[k];
    INFO(k);
    CHECK(b.schedule == a.schedule);
    CHECK(b.realisation == a.realisation);
    CHECK(b.format.name == a.format.name);
    CHECK(b.not_applicable == a.not_applicable);
    CHECK(b.distinct_rotations == a.distinct_rotations);
    CHECK(b.distinct_per_block == a.distinct_per_block);
    CHECK(b.period == a.period);
    CHECK(b.witnesses == a.witnesses);
  }
  CHECK(some[0].format.name == "fp16");
  CHECK_FALSE(some[1].not_applicable.empty());               // r3 on an irrational schedule
  CHECK(some[3].period == std::optional<std::uint64_t>(3));  // r3 of 2π/3: period 3 (THEORY §3)
}
