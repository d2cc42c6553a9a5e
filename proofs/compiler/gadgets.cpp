#include "proofs/compiler/gadgets.hpp"

#include "core/error.hpp"

namespace ropesim::proofs {

namespace {

using Reads = std::vector<std::pair<std::string, mpq_class>>;

HiddenUnit unit(Reads reads, const std::string& out, const mpq_class& weight) {
  return HiddenUnit{std::move(reads), {{out, weight}}};
}

}  // namespace

std::vector<HiddenUnit> negation_units(const std::string& x, const std::string& out) {
  return {unit({{"top", 1}, {x, -1}}, out, 1)};
}

std::vector<HiddenUnit> conjunction_units(const std::string& x, const std::string& y,
                                          const std::string& out) {
  return {unit({{x, 1}, {y, 1}, {"top", -1}}, out, 1)};
}

std::vector<HiddenUnit> disjunction_units(const std::string& x, const std::string& y,
                                          const std::string& out) {
  return {unit({{x, 1}, {y, 1}}, out, 1), unit({{x, 1}, {y, 1}, {"top", -1}}, out, -1)};
}

std::vector<HiddenUnit> rebinarise_units(const std::string& h, const std::string& out,
                                         const mpq_class& f1, const mpq_class& f2) {
  if (!(0 < f1 && f1 < f2)) {
    throw InvalidArgument("re-binarisation needs thresholds 0 < f1 < f2, got f1 = " + f1.get_str() +
                          ", f2 = " + f2.get_str());
  }
  const mpq_class scale = 1 / (f2 - f1);
  return {unit({{h, 1}, {"top", -f1}}, out, scale), unit({{h, 1}, {"top", -f2}}, out, -scale)};
}

std::vector<HiddenUnit> first_position_units(const std::string& raw, const std::string& count,
                                             const std::string& out, bool holds_at_1) {
  std::vector<HiddenUnit> units = {unit({{raw, 1}}, out, 1)};
  if (!holds_at_1) units.push_back(unit({{raw, 1}, {count, 2}, {"top", -2}}, out, -1));
  return units;
}

attention::FeedForward assemble_feed_forward(const std::vector<HiddenUnit>& units,
                                             const ResidualSpace& space,
                                             const numeric::Arithmetic& arithmetic) {
  if (units.empty())
    throw InvalidArgument("a feed-forward sublayer needs at least one hidden unit");
  const auto d = static_cast<Eigen::Index>(space.size());
  const auto hidden = static_cast<Eigen::Index>(units.size());
  ExactMatrix w1 = ExactMatrix::Zero(hidden, d);
  ExactMatrix w2 = ExactMatrix::Zero(d, hidden);
  for (Eigen::Index u = 0; u < hidden; ++u) {
    for (const auto& [name, weight] : units[static_cast<std::size_t>(u)].reads) {
      w1(u, static_cast<Eigen::Index>(space.index(name))) += weight;
    }
    for (const auto& [name, weight] : units[static_cast<std::size_t>(u)].writes) {
      w2(static_cast<Eigen::Index>(space.index(name)), u) += weight;
    }
  }
  attention::FeedForward ffn;
  ffn.w1 = round_once(w1, arithmetic);
  ffn.w2 = round_once(w2, arithmetic);
  return ffn;
}

attention::AttentionHead past_head(const ResidualSpace& space, const std::string& psi,
                                   const std::string& out, const numeric::Value& f_large,
                                   const numeric::Arithmetic& arithmetic, const std::string& name) {
  const auto d = static_cast<Eigen::Index>(space.size());
  const auto psi_index = static_cast<Eigen::Index>(space.index(psi));
  ExactMatrix key = ExactMatrix::Zero(1, d), value = ExactMatrix::Zero(1, d);
  ExactMatrix output = ExactMatrix::Zero(d, 1);
  key(0, psi_index) = attention::exact_rational(f_large);
  value(0, psi_index) = 1;
  output(static_cast<Eigen::Index>(space.index(out)), 0) = 1;
  attention::AttentionHead h;
  h.name = name;
  h.head_dim = 1;
  h.value_dim = 1;
  h.query = round_once(ExactMatrix(ExactMatrix::Zero(1, d)), arithmetic);
  h.query_bias = {arithmetic.one()};
  h.key = round_once(key, arithmetic);
  h.value = round_once(value, arithmetic);
  h.output = round_once(output, arithmetic);
  return h;
}

attention::AttentionHead counting_head(const ResidualSpace& space, const std::string& bos,
                                       const std::string& out,
                                       const numeric::Arithmetic& arithmetic) {
  const auto d = static_cast<Eigen::Index>(space.size());
  ExactMatrix value = ExactMatrix::Zero(1, d), output = ExactMatrix::Zero(d, 1);
  value(0, static_cast<Eigen::Index>(space.index(bos))) = 1;
  output(static_cast<Eigen::Index>(space.index(out)), 0) = 1;
  attention::AttentionHead h;
  h.name = "count";
  h.head_dim = 1;
  h.value_dim = 1;
  h.query = round_once(ExactMatrix(ExactMatrix::Zero(1, d)), arithmetic);
  h.key = h.query;
  h.value = round_once(value, arithmetic);
  h.output = round_once(output, arithmetic);
  return h;
}

}  // namespace ropesim::proofs
