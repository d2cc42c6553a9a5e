#include "proofs/compiler/mod_component.hpp"

#include <fmt/format.h>

#include "numeric/exact_decimal.hpp"
#include "numeric/json_number.hpp"
#include "proofs/compiler/bounded_mod.hpp"

namespace ropesim::proofs {

using numeric::exact_decimal;

namespace {

/// The C4 head of mod(m,r) on its periodic table (make_mod_atom_head).
Component periodic_head(const ResidualSpace& space, std::uint64_t m, std::uint64_t r,
                        const std::string& raw, const std::string& node,
                        const attention::EvaluationPolicy& policy) {
  ModAtomSpec spec;
  spec.m = m;
  spec.r = r;
  spec.policy = policy;
  ModWiring wiring;
  wiring.space = space;
  wiring.bos = "bos";
  wiring.top = "top";
  wiring.output = raw;
  ModAtomHead built = make_mod_atom_head(spec, wiring);
  built.head.name = node;
  Component head;
  head.sublayer = Sublayer::attention;
  head.head = built.head;
  head.description = {"MOD",
                      node,
                      {"bos", "top"},
                      {raw},
                      {{"C", numeric::exact_decimal_json(built.C)},
                       {"f_large", numeric::exact_decimal_json(built.f_large)},
                       {"min_margin", numeric::exact_decimal_json(built.min_margin)}}};
  head.mod_head = std::move(built);
  return head;
}

}  // namespace

std::vector<Component> mod_components(const ResidualSpace& space, std::uint64_t m, std::uint64_t r,
                                      const std::string& raw, const std::string& count,
                                      const std::string& out, const std::string& node,
                                      const attention::EvaluationPolicy& policy,
                                      const std::optional<attention::Schedule>& schedule,
                                      std::uint64_t max_length) {
  const numeric::Arithmetic a = numeric::arithmetic(policy);
  Component head;
  if (schedule && !periodic_schedule_p(*schedule)) {
    // C4': the residue test on a block of the named schedule, exact up to N_max^MOD.
    BoundedModSpec spec;
    spec.m = m;
    spec.r = r;
    spec.schedule = *schedule;
    spec.max_length = max_length;
    spec.policy = policy;
    ModWiring wiring;
    wiring.space = space;
    wiring.output = raw;
    BoundedModHead built = make_bounded_mod_head(spec, wiring);
    built.head.name = node;
    head.sublayer = Sublayer::attention;
    head.head = built.head;
    head.description = {
        "MOD (bounded)",
        node,
        {"bos", "top"},
        {raw},
        {{"schedule", schedule->spec},
         {"realisation", "r1"},
         {"block", numeric::number_text(fmt::format("{}", built.block))},
         {"turn", numeric::number_text(fmt::format("{}/{}", built.a, m))},
         {"C", numeric::exact_decimal_json(built.C)},
         {"f_large", numeric::exact_decimal_json(built.f_large)},
         {"certified_range", numeric::number_text(fmt::format("{}", built.n_max))}}};
    head.bounded_mod_head = std::move(built);
  } else {
    // C4 on a periodic schedule: its block of turn 1/m (refused when it has none)
    const std::size_t block = schedule ? periodic_mod_block(*schedule, m, r) : 0;
    head = periodic_head(space, m, r, raw, node, policy);
    if (schedule) {
      head.description.constants["schedule"] = schedule->spec;
      head.description.constants["block"] = numeric::number_text(fmt::format("{}", block));
    }
  }
  head.raw_outputs = {{raw, a.zero(), a.zero(), RawOutputRange::Want::zero},
                      {raw, a.one(), a.one(), RawOutputRange::Want::one}};
  // Position 1 sees only BOS, where the head outputs 1: switch it off there unless 1 ≡ r.
  const bool at_1 = mod_formula(m, r, 1);
  Component first;
  first.sublayer = Sublayer::feed_forward;
  first.units = first_position_units(raw, count, out, at_1);
  first.description = {
      "first-position",
      node,
      at_1 ? std::vector<std::string>{raw} : std::vector<std::string>{raw, count, "top"},
      {out},
      {{"value_at_position_1", numeric::number_text(at_1 ? "1" : "0")}}};
  return {std::move(head), std::move(first)};
}

Component counting_component(const ResidualSpace& space, const std::string& bos,
                             const std::string& count, const numeric::Arithmetic& a) {
  Component c;
  c.sublayer = Sublayer::attention;
  c.head = counting_head(space, bos, count, a);
  c.description = {"count", "", {bos}, {count}, {{"value_weight", numeric::number_text("1")}}};
  c.raw_outputs = {
      {count, a.one(), a.one(), RawOutputRange::Want::one},  // position 1
      {count, a.zero(), a.from_rational(mpq_class(1, 2)), RawOutputRange::Want::at_most_half}};
  return c;
}

}  // namespace ropesim::proofs
