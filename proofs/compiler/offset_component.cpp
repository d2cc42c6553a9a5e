#include "proofs/compiler/offset_component.hpp"

#include <fmt/format.h>

#include "numeric/exact_decimal.hpp"
#include "numeric/json_number.hpp"

namespace ropesim::proofs {

OffsetCertificate certify_offset_head(std::uint64_t k, const attention::Schedule& schedule,
                                      std::uint64_t max_length,
                                      const attention::EvaluationPolicy& policy) {
  HorizonSpec spec;
  spec.head.schedule = schedule;
  spec.head.k = k;
  spec.head.realisation = "r1";
  spec.head.policy = policy;
  spec.max_length = max_length;
  spec.auto_C = true;
  OffsetCertificate certificate;
  certificate.report = horizon(spec);
  certificate.C = attention::exact_rational(certificate.report.C);
  const std::uint64_t n_max = certificate.report.range.n_max;
  if (n_max < k) {
    throw Refusal(RefusalReason::offset_head,
                  fmt::format("Y^{} head refused in {}: its certified range N_max^({}) = {} < k "
                              "(THEORY §6)",
                              k, policy.format.name, k, n_max));
  }
  return certificate;
}

std::vector<Component> offset_components(const ResidualSpace& space, const std::string& psi,
                                         const std::string& raw, const std::string& gate,
                                         const std::string& out, const std::string& node,
                                         std::uint64_t k, const attention::Schedule& schedule,
                                         const OffsetCertificate& certificate,
                                         const attention::EvaluationPolicy& policy) {
  const numeric::Arithmetic a = numeric::arithmetic(policy);
  // The head that certify_offset_head measured, with its C.
  FixedOffsetSpec spec;
  spec.schedule = schedule;
  spec.k = k;
  spec.realisation = "r1";
  spec.policy = policy;
  spec.C = certificate.C;
  HeadWiring wiring;
  wiring.space = space;
  wiring.value_source = psi;
  wiring.output_target = raw;
  FixedOffsetHead built = make_fixed_offset_head(spec, wiring);
  built.head.name = node;
  const std::uint64_t n_max = certificate.report.range.n_max;
  Component head;
  head.sublayer = Sublayer::attention;
  head.head = built.head;
  head.description = {"Y^k",
                      node,
                      {psi},
                      {raw},
                      {{"k", numeric::number_text(fmt::format("{}", k))},
                       {"schedule", schedule.spec},
                       {"realisation", "r1"},
                       {"C", numeric::exact_decimal_json(built.C)},
                       {"certified_range", numeric::number_text(fmt::format("{}", n_max))}}};
  head.raw_outputs = {{raw, a.zero(), a.zero(), RawOutputRange::Want::zero},
                      {raw, a.one(), a.one(), RawOutputRange::Want::one}};
  head.bounded_head = BoundedHead{node, k, built.C, n_max, certificate.report.range.at_limit};
  Component gated;
  gated.sublayer = Sublayer::feed_forward;
  gated.units = {HiddenUnit{{{raw, 1}, {gate, 2}, {"top", -2}}, {{out, 1}}}};
  gated.description = {"gate", node, {raw, gate, "top"}, {out}, nlohmann::json::object()};
  return {std::move(head), std::move(gated)};
}

}  // namespace ropesim::proofs
