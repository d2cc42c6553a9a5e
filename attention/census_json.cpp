// The census result as JSON (census.hpp to_json).
#include "attention/census.hpp"

namespace ropesim::attention {

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

}  // namespace ropesim::attention
