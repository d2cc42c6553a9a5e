// Item (iii) of [RRWG]: a q, k whose RoPE score does not decay with distance (see the header).
#include "proofs/literature/no_decay.hpp"

#include "core/error.hpp"
#include "numeric/json_number.hpp"
#include "proofs/range/records.hpp"

namespace ropesim::proofs {

CosineSum alignment_sum(const attention::Schedule& s) {
  if (s.blocks.empty())
    throw InvalidArgument("no-decay: the schedule '" + s.spec + "' has no rotary block");
  CosineSum sum;
  for (const auto& block : s.blocks) {
    sum.blocks.emplace_back(block);
    sum.weights.emplace_back(1);
  }
  return sum;
}

numeric::Value realised_alignment_score(const attention::Schedule& s,
                                        const attention::Realisation& realisation,
                                        std::uint64_t query_position, std::uint64_t key_position,
                                        const numeric::EvaluationPolicy& policy) {
  if (!(realisation.format == policy.format)) {
    throw InvalidArgument("no-decay: the realisation's format " + realisation.format.name +
                          " differs from the policy's " + policy.format.name);
  }
  const numeric::Arithmetic f = numeric::arithmetic(policy);
  // q = k = (1, 0) on every rotary block, 0 on the unrotated pairs.
  std::vector<numeric::Value> unit(s.dimension(), f.from_rational(0));
  for (std::size_t b = 0; b < s.blocks.size(); ++b) unit[2 * b] = f.from_rational(1);
  const auto q =
      attention::apply_rotation(attention::realise(s, realisation, query_position), unit,
                                attention::PairLayout::adjacent, policy.arithmetic_engine());
  const auto k =
      attention::apply_rotation(attention::realise(s, realisation, key_position), unit,
                                attention::PairLayout::adjacent, policy.arithmetic_engine());
  return numeric::dot(q, k, policy);
}

numeric::Value realised_alignment_score(const attention::Schedule& s,
                                        const attention::Realisation& realisation,
                                        std::uint64_t query_position, std::uint64_t key_position) {
  numeric::EvaluationPolicy policy;
  policy.format = realisation.format;
  return realised_alignment_score(s, realisation, query_position, key_position, policy);
}

std::vector<NoDecayRow> no_decay_study(const NoDecayOptions& options) {
  const auto& s = options.schedule;
  for (const auto& r : options.realisations) attention::check_applicable(s, r);
  const auto sum = alignment_sum(s);
  std::vector<std::uint64_t> distances{0};
  for (const auto& r : record_distances(sum, static_cast<std::int64_t>(options.max_length)))
    distances.push_back(static_cast<std::uint64_t>(r.n));
  std::vector<NoDecayRow> rows;
  for (const auto n : distances) {
    NoDecayRow row;
    row.n = n;
    double error = 0;
    row.exact = sum.approximate(static_cast<std::int64_t>(n), &error);
    for (const auto& r : options.realisations) {
      row.realised.push_back(
          realised_alignment_score(s, r, options.key_position + n, options.key_position));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::json to_json(const std::vector<NoDecayRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : rows) {
    nlohmann::json j = {{"n", row.n}, {"exact", row.exact}};
    nlohmann::json realised = nlohmann::json::array();
    for (const auto& v : row.realised) {
      nlohmann::json cell;
      numeric::put_value(cell, "value", v);
      realised.push_back(cell["value"]);
    }
    j["realised"] = std::move(realised);
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace ropesim::proofs
