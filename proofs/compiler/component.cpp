#include "proofs/compiler/component.hpp"

#include "numeric/exact_decimal.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/common/f_large.hpp"

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
  try {
    return require_f_large(policy.format, policy.rounding);
  } catch (const FLargeUndefined& e) {
    throw Refusal(RefusalReason::no_f_large, e.what());
  }
}

}  // namespace ropesim::proofs
