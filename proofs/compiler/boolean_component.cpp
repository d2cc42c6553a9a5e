#include "proofs/compiler/boolean_component.hpp"

#include "core/error.hpp"

namespace ropesim::proofs {

Component boolean_component(ltl::Operator op, const std::string& left, const std::string& right,
                            const std::string& out, const std::string& node) {
  Component c;
  c.sublayer = Sublayer::feed_forward;
  c.description.node = node;
  c.description.writes = {out};
  c.description.constants = nlohmann::json::object();
  switch (op) {
    case ltl::Operator::negation:
      c.units = negation_units(left, out);
      c.description.kind = "not";
      c.description.reads = {"top", left};
      return c;
    case ltl::Operator::conjunction:
      c.units = conjunction_units(left, right, out);
      c.description.kind = "and";
      c.description.reads = {left, right, "top"};
      return c;
    case ltl::Operator::disjunction:
      c.units = disjunction_units(left, right, out);
      c.description.kind = "or";
      c.description.reads = {left, right, "top"};
      return c;
    default:
      throw InvalidArgument("boolean_component: '" + node + "' is not a negation, conjunction or " +
                            "disjunction");
  }
}

}  // namespace ropesim::proofs
