#include "attention/census/bounded_census.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"

namespace ropesim::attention {

namespace {

/// ±0 as one value (the census compares values as reals here).
std::uint64_t value_bits(double v) { return std::bit_cast<std::uint64_t>(v == 0 ? 0.0 : v); }

void append(std::string& key, std::uint64_t v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

/// Key of one entry: the one value of a fixed box, else the argument (file comment).
void append_entry_key(std::string& key, const TrigBox& b) {
  if (b.fixed()) {
    key.push_back('v');
    append(key, value_bits(b.cos_lo));
    append(key, value_bits(b.sin_lo));
  } else {
    key.push_back('a');
    append(key, std::bit_cast<std::uint32_t>(*b.argument));
  }
}

/// The greedy piercing of intervals [lo, hi] (sorted by right end; a new point at the right
/// end of each interval not yet hit): the minimum number of points hitting all of them, and
/// the indices of its picks (pairwise disjoint intervals).
std::pair<std::uint64_t, std::vector<std::size_t>> piercing(
    const std::vector<std::pair<double, double>>& intervals) {
  std::vector<std::size_t> order(intervals.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return intervals[a].second < intervals[b].second ||
           (intervals[a].second == intervals[b].second && a < b);
  });
  std::uint64_t count = 0;
  double last = -std::numeric_limits<double>::infinity();
  std::vector<std::size_t> picks;
  for (const auto k : order) {
    if (intervals[k].first > last) {
      ++count;
      last = intervals[k].second;
      if (picks.size() < 2) picks.push_back(k);
    }
  }
  return {count, picks};
}

/// Whether some implementation realises positions a and b equal: one binary32 value per group
/// of arguments that must agree (the arguments of a and b in the same block, and an argument
/// met in several blocks) inside the allowed results of every argument of the group, for cos
/// and for sin. Blocks without an argument hold the same (1, 0)-derived values everywhere.
bool can_merge(const std::vector<std::vector<TrigBox>>& boxes, std::size_t a, std::size_t b) {
  // union-find over the arguments met
  std::map<std::uint32_t, std::uint32_t> parent;
  std::map<std::uint32_t, const TrigBox*> box_of;
  auto find = [&](std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto add = [&](const TrigBox& t) {
    const auto k = std::bit_cast<std::uint32_t>(*t.argument);
    if (parent.emplace(k, k).second) box_of[k] = &t;
    return k;
  };
  for (std::size_t d = 0; d < boxes.size(); ++d) {
    const TrigBox &x = boxes[d][a], &y = boxes[d][b];
    if (!x.argument || !y.argument) {
      if (x.argument.has_value() != y.argument.has_value()) return false;
      continue;
    }
    const auto kx = add(x), ky = add(y);
    parent[find(kx)] = find(ky);
  }
  // intersect the allowed results over each group
  struct Range {
    float clo = -INFINITY, chi = INFINITY, slo = -INFINITY, shi = INFINITY;
  };
  std::map<std::uint32_t, Range> groups;
  for (const auto& [k, t] : box_of) {
    Range& r = groups[find(k)];
    r.clo = std::max(r.clo, t->raw_cos_lo);
    r.chi = std::min(r.chi, t->raw_cos_hi);
    r.slo = std::max(r.slo, t->raw_sin_lo);
    r.shi = std::min(r.shi, t->raw_sin_hi);
  }
  for (const auto& [k, r] : groups) {
    if (r.clo > r.chi || r.slo > r.shi) return false;
  }
  return true;
}

}  // namespace

BoundedCensus bounded_census(const Schedule& s, const BoundedRealisation& r, std::uint64_t start,
                             std::uint64_t positions) {
  check_bounded_applicable(s, r);
  const std::size_t nb = s.blocks.size();
  if (positions < 2)
    throw InvalidArgument("--positions: N must be at least 2, got " + std::to_string(positions));
  if (positions > kMaxBoundedCensusEntries / std::max<std::size_t>(nb, 1)) {
    throw InvalidArgument("bounded census: N·blocks = " + std::to_string(positions) + "·" +
                          std::to_string(nb) + " exceeds " +
                          std::to_string(kMaxBoundedCensusEntries) + " entries; accepted: N <= " +
                          std::to_string(kMaxBoundedCensusEntries / std::max<std::size_t>(nb, 1)));
  }
  const std::uint64_t max_last = (std::uint64_t{1} << 63) - 1;
  if (start > max_last - (positions - 1))
    throw InvalidArgument("--start: the last position exceeds 2^63 - 1");

  BoundedCensus c;
  c.schedule = s.spec;
  c.realisation = r.name();
  c.model = r.model.name;
  c.model_source = r.model.source;
  c.format = r.base.format;
  c.table_format = r.base.table_format();
  c.start = start;
  c.positions = positions;

  std::vector<std::vector<TrigBox>> boxes(nb);
  for (std::size_t d = 0; d < nb; ++d) boxes[d] = trig_boxes(s, r, d, start, start + positions);

  c.fewest_per_block.assign(nb, 0);
  c.most_per_block.assign(nb, 0);
  c.uncertain_per_block.assign(nb, 0);
  // per block: intervals, uncertain entries, keys, undocumented entries, largest argument
  for (std::size_t d = 0; d < nb; ++d) {
    std::vector<std::pair<double, double>> cos_iv, sin_iv;
    cos_iv.reserve(positions);
    sin_iv.reserve(positions);
    std::unordered_set<std::string> keys;
    for (std::uint64_t k = 0; k < positions; ++k) {
      const TrigBox& b = boxes[d][k];
      cos_iv.emplace_back(b.cos_lo, b.cos_hi);
      sin_iv.emplace_back(b.sin_lo, b.sin_hi);
      if (!b.fixed()) ++c.uncertain_per_block[d];
      std::string key;
      append_entry_key(key, b);
      keys.insert(std::move(key));
      if (!b.documented) {
        ++c.undocumented_entries;
        if (!c.first_undocumented || start + k < *c.first_undocumented)
          c.first_undocumented = start + k;
      }
      if (b.argument && std::fabs(static_cast<double>(*b.argument)) > c.max_argument) {
        c.max_argument = std::fabs(static_cast<double>(*b.argument));
        c.max_argument_position = start + k;
        c.max_argument_block = d;
      }
    }
    c.most_per_block[d] = keys.size();
    for (const bool is_cos : {true, false}) {
      const auto [count, picks] = piercing(is_cos ? cos_iv : sin_iv);
      c.fewest_per_block[d] = std::max(c.fewest_per_block[d], count);
      if (count > c.piercing) {
        c.piercing = count;
        c.piercing_block = d;
        c.piercing_is_cos = is_cos;
        if (picks.size() == 2) {
          c.must_differ = PositionPair{start + std::min(picks[0], picks[1]),
                                       start + std::max(picks[0], picks[1])};
        } else {
          c.must_differ.reset();
        }
      }
    }
  }
  // rotation keys: most, forced equal classes; fixed rotations
  std::unordered_map<std::string, std::pair<std::uint64_t, std::uint64_t>> classes;  // first, size
  std::unordered_set<std::string> fixed;
  std::vector<std::string> key_of(positions);
  for (std::uint64_t k = 0; k < positions; ++k) {
    std::string key;
    bool all_fixed = true;
    for (std::size_t d = 0; d < nb; ++d) {
      append_entry_key(key, boxes[d][k]);
      all_fixed = all_fixed && boxes[d][k].fixed();
    }
    auto [it, inserted] = classes.emplace(key, std::make_pair(k, std::uint64_t{0}));
    ++it->second.second;
    if (!inserted && !c.forced_equal)
      c.forced_equal = PositionPair{start + it->second.first, start + k};
    if (it->second.second > c.largest_forced_class ||
        (it->second.second == c.largest_forced_class &&
         start + it->second.first < c.largest_forced_class_position)) {
      c.largest_forced_class = it->second.second;
      c.largest_forced_class_position = start + it->second.first;
    }
    if (all_fixed) {
      ++c.fixed_positions;
      fixed.insert(key);  // a fixed position's key is its values
    }
    key_of[k] = std::move(key);
  }
  c.most = classes.size();
  c.fixed_distinct = fixed.size();
  c.fewest = std::max(c.fixed_distinct, c.piercing);
  c.exact = c.fixed_positions == positions;
  if (c.exact) c.fewest = c.most;  // every key is the rotation itself
  // a pair some implementation realises equal: neighbours in block 0's box order
  if (nb > 0 && !c.exact) {
    std::vector<std::uint64_t> order(positions);
    for (std::uint64_t k = 0; k < positions; ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) {
      const TrigBox &x = boxes[0][a], &y = boxes[0][b];
      if (x.cos_lo != y.cos_lo) return x.cos_lo < y.cos_lo;
      if (x.sin_lo != y.sin_lo) return x.sin_lo < y.sin_lo;
      return a < b;
    });
    constexpr std::size_t kWindow = 8;
    for (std::size_t m = 0; m < order.size() && !c.can_be_equal; ++m) {
      for (std::size_t n = m + 1; n < std::min(order.size(), m + 1 + kWindow); ++n) {
        const auto a = order[m], b = order[n];
        if (key_of[a] == key_of[b]) continue;
        if (can_merge(boxes, a, b)) {
          c.can_be_equal = PositionPair{start + std::min(a, b), start + std::max(a, b)};
          break;
        }
      }
    }
  }
  return c;
}

nlohmann::json to_json(const BoundedCensus& c) {
  auto pair = [](const std::optional<PositionPair>& p) {
    return p ? nlohmann::json::array({p->earlier, p->later}) : nlohmann::json(nullptr);
  };
  nlohmann::json j;
  j["schedule"] = c.schedule;
  j["realization"] = c.realisation;
  j["model"] = c.model;
  j["model_source"] = c.model_source;
  j["format"] = c.format.name;
  j["table_format"] = c.table_format.name;
  j["start"] = c.start;
  j["positions"] = c.positions;
  j["distinct_fewest"] = c.fewest;
  j["distinct_most"] = c.most;
  j["exact"] = c.exact;
  j["fixed_distinct"] = c.fixed_distinct;
  j["fixed_positions"] = c.fixed_positions;
  j["piercing"] = c.piercing;
  j["piercing_block"] = c.piercing_block;
  j["piercing_coordinate"] = c.piercing_is_cos ? "cos" : "sin";
  j["fewest_per_block"] = c.fewest_per_block;
  j["most_per_block"] = c.most_per_block;
  j["uncertain_per_block"] = c.uncertain_per_block;
  j["forced_equal"] = pair(c.forced_equal);
  j["largest_forced_class"] = c.largest_forced_class;
  j["largest_forced_class_position"] = c.largest_forced_class_position;
  j["must_differ"] = pair(c.must_differ);
  j["can_be_equal"] = pair(c.can_be_equal);
  j["undocumented_entries"] = c.undocumented_entries;
  j["first_undocumented"] =
      c.first_undocumented ? nlohmann::json(*c.first_undocumented) : nlohmann::json(nullptr);
  j["max_argument"] = c.max_argument;
  j["max_argument_position"] = c.max_argument_position;
  j["max_argument_block"] = c.max_argument_block;
  return j;
}

std::string to_text(const BoundedCensus& c) {
  auto list = [](const std::vector<std::uint64_t>& v) {
    std::string out;
    for (std::size_t k = 0; k < v.size() && k < 16; ++k)
      out += (k ? " " : "") + std::to_string(v[k]);
    if (v.size() > 16) out += fmt::format(" ... ({} blocks)", v.size());
    return out;
  };
  auto pair = [](const std::optional<PositionPair>& p, const char* none) {
    return p ? fmt::format("{} and {}", p->earlier, p->later) : std::string(none);
  };
  std::string out;
  out += fmt::format("schedule      {}\n", c.schedule);
  out += fmt::format("realization   {} (table format {})\n", c.realisation, c.table_format.name);
  out += fmt::format("trig model    {}{}\n", c.model,
                     c.model_source.empty() ? "" : " (" + c.model_source + ")");
  out += fmt::format("format        {}\n", c.format.name);
  out += fmt::format("positions     {}..{}\n", c.start, c.start + (c.positions - 1));
  if (c.exact) {
    out += fmt::format("distinct      {} realised rotations in every implementation (exact)\n",
                       c.most);
  } else {
    out += fmt::format(
        "distinct      [{}, {}] realised rotations over every implementation (bounds)\n", c.fewest,
        c.most);
  }
  out += fmt::format(
      "fewest from   {} distinct among {} positions fixed in every block; piercing {} (block {} "
      "{})\n",
      c.fixed_distinct, c.fixed_positions, c.piercing, c.piercing_block,
      c.piercing_is_cos ? "cos" : "sin");
  out += fmt::format("per block     fewest {}\n", list(c.fewest_per_block));
  out += fmt::format("              most   {}\n", list(c.most_per_block));
  out += fmt::format("uncertain     {} entries per block\n", list(c.uncertain_per_block));
  out += fmt::format("forced equal  {}\n", pair(c.forced_equal, "none (every key distinct)"));
  out += fmt::format("largest class {} positions forced equal (the smallest is {})\n",
                     c.largest_forced_class, c.largest_forced_class_position);
  out += fmt::format("must differ   {}\n", pair(c.must_differ, "-"));
  out += fmt::format("can be equal  {}\n", pair(c.can_be_equal, "none found"));
  out += fmt::format("max argument  {:.9g} (position {}, block {})\n", c.max_argument,
                     c.max_argument_position, c.max_argument_block);
  out += fmt::format("undocumented  {} entries{}\n", c.undocumented_entries,
                     c.first_undocumented ? fmt::format(" (first at position {}: box [-1, 1])",
                                                        *c.first_undocumented)
                                          : std::string());
  return out;
}

void refuse_bounded_census_option(const std::string& flag) {
  throw InvalidArgument(flag +
                        ": not available with a bounded-error cos_sin step (the census over "
                        "every implementation); accepted with it: --schedule --realization "
                        "--format --rounding --engine --positions --start --json --out");
}

}  // namespace ropesim::attention
