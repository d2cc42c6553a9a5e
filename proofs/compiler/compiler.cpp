// The compiler's driver (THEORY §7 C1, C4, C5): runs the passes of compiler.hpp in order —
// input and budget checks, plan, per layer each node's certificate and components, assembly,
// the LayerNorm mirror, the report — and, on a refusal, the preset formats for the hint.
#include "proofs/compiler/compiler.hpp"

#include <fmt/format.h>

#include "proofs/compiler/boolean_component.hpp"
#include "proofs/compiler/compiler_assemble.hpp"
#include "proofs/compiler/compiler_hint.hpp"
#include "proofs/compiler/compiler_report.hpp"
#include "proofs/compiler/layer_plan.hpp"
#include "proofs/compiler/mod_component.hpp"
#include "proofs/compiler/offset_component.hpp"

namespace ropesim::proofs {

using ltl::Operator;

namespace {

/// What every construction needs of F (THEORY §7 C1): sequential summation (the certificates
/// assume it), f_large (returned), and the gadget constants 1/2, 2, f1, f2, 4 exactly.
numeric::Value require_compiler_format(const attention::EvaluationPolicy& policy) {
  if (policy.summation != attention::Summation::sequential) {
    throw Refusal(RefusalReason::summation,
                  "the compiler certifies its heads under sequential summation only, got " +
                      std::string(numeric::to_string(policy.summation)));
  }
  const numeric::Arithmetic a = numeric::arithmetic(policy);
  const numeric::Value f_large = f_large_or_refuse(policy);
  for (const mpq_class& q :
       {mpq_class(1, 2), mpq_class(2), past_threshold_f1(), past_threshold_f2(), mpq_class(4)}) {
    require_exact(a, q, "the gadget constant");
  }
  return f_large;
}

/// The components of one planned layer over `space`: per head node its certificate and
/// components (in plan order), the counting head when the layer has a MOD head, then the Boolean
/// nodes.
LayerComponents layer_components(const PlannedLayer& layer, const ResidualSpace& space,
                                 const CompileOptions& options, const numeric::Value& f_large,
                                 const std::optional<PastCertificate>& past) {
  const attention::EvaluationPolicy& policy = options.policy;
  const numeric::Arithmetic a = numeric::arithmetic(policy);
  LayerComponents out;
  bool has_mod = false;
  for (const PlannedNode& node : layer.heads) {
    std::vector<Component> parts;
    if (node.op == Operator::past) {
      parts =
          past_components(space, node.operand, node.raw, node.out, node.text, f_large, *past, a);
    } else if (node.op == Operator::yesterday) {
      const OffsetCertificate range =
          certify_offset_head(node.k, options.offset_schedule, options.offset_max_length, policy);
      parts = offset_components(space, node.operand, node.raw, node.gate, node.out, node.text,
                                node.k, options.offset_schedule, range, policy);
    } else {  // modulo, m ≥ 2
      has_mod = true;
      parts = mod_components(space, node.m, node.r, node.raw, "count", node.out, node.text, policy,
                             options.mod_schedule, options.offset_max_length);
    }
    for (Component& c : parts) out.push_back(std::move(c));
  }
  if (has_mod) out.push_back(counting_component(space, "bos", "count", a));
  for (const PlannedNode& node : layer.boolean) {
    out.push_back(boolean_component(node.op, node.operand, node.right, node.out, node.text));
  }
  return out;
}

CompiledModel compile_in(const ltl::Formula& formula, const std::vector<std::string>& alphabet,
                         const CompileOptions& options) {
  // The input, the model's size and F, before anything is built.
  check_compilable(formula, alphabet);
  check_compile_budget(formula, alphabet, options);
  const numeric::Value f_large = require_compiler_format(options.policy);
  // Plan: formula -> layers over named subformulas.
  const LayerPlan plan = plan_layers(formula, alphabet);

  CompiledModel out;
  out.formula = plan.text;
  out.alphabet = alphabet;
  out.f_large = f_large;
  out.node_coordinates = plan.node_coordinates;
  out.space = plan.space;
  // Certify and build: the P heads' shared certificate, then each layer's components.
  if (plan.has_past) {
    out.past = certify_past_heads(options.policy, options.certify_limit, options.progress);
  }
  std::vector<LayerComponents> layers;
  for (const PlannedLayer& layer : plan.planned) {
    layers.push_back(layer_components(layer, plan.space, options, f_large, out.past));
  }
  // Assemble, report, and the LayerNorm mirror (which rewrites both).
  out.model = assemble_model(plan, layers, alphabet, options.policy, out.formula);
  describe_components(out, layers);
  if (options.layer_norm) {
    out.layer_norm =
        add_layer_norm_mirror(out.model, out.space, out.layers, raw_output_ranges(layers),
                              numeric::arithmetic(options.policy));
  }
  out.model.validate();
  const attention::Model& model = out.model;
  if (const double numbers = attention::spec_number_count(attention::shape_of(model));
      numbers > static_cast<double>(options.max_model_numbers)) {
    throw BudgetExceeded(fmt::format(
        "cannot compile '{}': its model has d_model {} and {} layers, {:.3g} numbers; "
        "accepted: models that ropesim run reads (at most {} numbers)",
        out.formula, model.d_model, model.layers.size(), numbers, options.max_model_numbers));
  }
  return out;
}

}  // namespace

CompiledModel compile(const ltl::Formula& formula, const std::vector<std::string>& alphabet,
                      const CompileOptions& options) {
  try {
    return compile_in(formula, alphabet, options);
  } catch (const Refusal& e) {
    if (!options.suggest_format) throw;
    throw with_format_hint(e, options, [&](const CompileOptions& trial) {
      return compile_in(formula, alphabet, trial);
    });
  }
}

}  // namespace ropesim::proofs
