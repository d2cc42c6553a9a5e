#include "proofs/component.hpp"

#include "numeric/exact_decimal.hpp"
#include "numeric/format_properties.hpp"

namespace ropesim::proofs {

void require_exact(const numeric::Arithmetic& a, const mpq_class& q, const std::string& what,
                   RefusalReason reason) {
  const numeric::Value v = a.from_rational(q);
  if (!v.is_finite() || attention::exact_rational(v) != q) {
    throw Refusal(reason, "the compiler needs " + what + " = " + q.get_str() + " exactly in " +
                              a.format().name + ", which rounds it to " +
                              numeric::exact_decimal(v));
  }
}

numeric::Value f_large_or_refuse(const attention::EvaluationPolicy& policy) {
  const auto fl = numeric::f_large(policy.format, policy.rounding);
  if (!fl) {
    throw Refusal(RefusalReason::no_f_large,
                  "f_large(" + policy.format.name + ") is undefined under rounding " +
                      std::string(numeric::to_string(policy.rounding)) +
                      ": no finite score lead makes softmax select exactly, so no P or MOD head "
                      "works (THEORY §1); use nearest-even, nearest-away, toward-zero or downward");
  }
  return *fl;
}

}  // namespace ropesim::proofs
