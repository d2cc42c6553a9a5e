// The census result as JSON (census.hpp to_json).
#include "attention/census/census.hpp"

namespace ropesim::attention {

void put_census_counts(nlohmann::json& j, std::uint64_t distinct,
                       const std::optional<FirstRepeat>& first_repeat,
                       const LargestClass& largest_class, const FlagSummary& overflow,
                       const FlagSummary& nan) {
  using nlohmann::json;
  auto opt = [](const auto& o) { return o ? json(*o) : json(nullptr); };
  j["distinct"] = distinct;
  j["first_repeat"] =
      first_repeat ? json::array({first_repeat->earlier, first_repeat->later}) : json(nullptr);
  j["largest_class"] = largest_class.size;
  j["largest_class_position"] = largest_class.position;
  j["overflow_positions"] = overflow.count;
  j["first_overflow"] = opt(overflow.first);
  j["nan_positions"] = nan.count;
  j["first_nan"] = opt(nan.first);
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
  put_census_counts(j, r.distinct_rotations, r.first_repeat, r.largest_class, r.overflow, r.nan);
  j["distinct_per_block"] = r.distinct_per_block;
  json periods = json::array();
  for (const auto& p : r.period_per_block) periods.push_back(opt(p));
  j["period_per_block"] = periods;
  j["periodic"] = r.period.has_value();
  j["period"] = opt(r.period);
  j["max_period"] = r.max_period;
  j["max_witness"] = opt(r.largest_witness_position);
  j["max_witness_period"] = opt(r.largest_witness_period);
  std::uint64_t witnessed = 0;
  for (auto w : r.witnesses) witnessed += w >= 0 ? 1 : 0;
  j["witnessed"] = r.period ? json(nullptr) : json(witnessed);
  if (include_witnesses) j["witnesses"] = r.witnesses;
  j["fast_path"] = {{"evaluations", r.fast_path.evaluations},
                    {"fallbacks", r.fast_path.fallbacks},
                    {"exact_cases", r.fast_path.exact_cases},
                    {"exact_only", r.fast_path.exact_only}};
  return j;
}

}  // namespace ropesim::attention
