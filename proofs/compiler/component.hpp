#pragma once
/// A component of a compiled transformer (THEORY §7 C1, C4, C5; STYLE: Tracr's model components):
/// one attention head or one group of FFN hidden units of a layer, over named residual
/// coordinates, with the description the compiler's report shows and the certificate that makes
/// it exact at F. Each construction is a file producing components
/// (proofs/compiler/past_component.hpp, mod_component.hpp, offset_component.hpp,
/// boolean_component.hpp); the assembly pass (proofs/compiler/compiler_assemble.hpp) turns a
/// layer's components into an attention::Layer, and the LayerNorm mirror
/// (proofs/compiler/layer_norm_mirror.hpp) rewrites the assembled model.
#include <gmpxx.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attention/transformer/transformer.hpp"
#include "numeric/engine.hpp"
#include "numeric/value.hpp"
#include "proofs/compiler/bounded_mod.hpp"
#include "proofs/compiler/gadgets.hpp"
#include "proofs/compiler/mod_atom.hpp"
#include "proofs/compiler/refusal.hpp"

namespace ropesim::proofs {

/// One head or FFN of a compiled layer, described by the named coordinates it reads and writes.
struct GadgetDescription {
  std::string kind;  ///< "P", "MOD", "Y^k", "count", "not", "and", "or", "rebinarise",
                     ///< "first-position", "gate", "mirror", "reset"
  std::string node;  ///< the subformula it computes (empty for count)
  std::vector<std::string> reads;
  std::vector<std::string> writes;
  /// name → value: numbers as exact decimal strings (numeric::number_text, marked as numbers
  /// under a numeric::NumberTextMarking), text (a schedule, a realisation) as strings
  nlohmann::json constants;
};

/// A compiled layer, as the report describes it: its heads, then its FFN gadgets.
struct LayerDescription {
  std::vector<GadgetDescription> heads;
  std::vector<GadgetDescription> ffn;
};

/// The range of a head's output written into a raw coordinate, before the LayerNorm mirror's
/// scaling: the attention output o lies in [lo, hi] (lo = hi for exact outputs); `want` is what
/// LN1 must make of every r = round_F(ε·o): exactly 1, exactly 0, or a value in [0, 1/2] (the
/// count head after position 1, read only through `raw + 2·count − 2·⊤ ≤ 0` and reset).
/// Source: THEORY §7 C1 (LayerNorm mirror); proofs/compiler/layer_norm_mirror.hpp.
struct RawOutputRange {
  std::string coordinate;
  numeric::Value lo, hi;
  enum class Want { one, zero, at_most_half } want;
};

/// A bounded Y^k head (C5; THEORY §6): its subformula, k, the scale C (an element of F) and its
/// certified range N_max^(k) (word lengths).
struct BoundedHead {
  std::string node;
  std::uint64_t k = 1;
  numeric::Value C;
  std::uint64_t n_max = 0;
  bool at_limit = false;  ///< the range scan stopped at its length limit (N_max ≥ n_max)
};

/// The sublayer a component belongs to.
enum class Sublayer { attention, feed_forward };

/// One component: an attention head (sublayer attention, `head` set) or FFN hidden units
/// (sublayer feed_forward, `units` non-empty), with its description, the raw output ranges the
/// LayerNorm mirror must map (heads), and its certificate at F where it has one of its own (the
/// P heads share one PastCertificate, kept by the compiler).
struct Component {
  Sublayer sublayer = Sublayer::feed_forward;
  GadgetDescription description;
  std::optional<attention::AttentionHead> head;
  std::vector<HiddenUnit> units;
  std::vector<RawOutputRange> raw_outputs;
  std::optional<ModAtomHead> mod_head;      ///< the C4 head and its realised margins
  std::optional<BoundedHead> bounded_head;  ///< the Y^k head and its certified range
  /// The C4' MOD head on a non-periodic schedule and its certified range N_max^MOD.
  std::optional<BoundedModHead> bounded_mod_head;
};

/// The components of one layer, in the order the layer holds them: heads in plan order (then the
/// counting head), FFN gadgets in plan order (then the Boolean nodes).
using LayerComponents = std::vector<Component>;

/// Throws Refusal(reason) "the compiler needs WHAT = q exactly in F, which rounds it to …"
/// unless the rational q rounds to itself in `arithmetic`'s F (a finite value).
void require_exact(const numeric::Arithmetic& arithmetic, const mpq_class& q,
                   const std::string& what, RefusalReason reason = RefusalReason::exact_constant);

/// f_large(F) under the policy's rounding (THEORY §1). Throws Refusal(no_f_large) with
/// require_f_large's message (proofs/common/f_large.hpp) when it is undefined.
numeric::Value f_large_or_refuse(const attention::EvaluationPolicy& policy);

}  // namespace ropesim::proofs
