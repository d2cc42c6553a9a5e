#pragma once
/// The Pψ component of the compiler (THEORY §7 C1; LC25 App B.3): a NoPE head whose scores are
/// f_large·ψ_j (proofs/compiler/gadgets.hpp past_head), writing h into a raw coordinate, and the
/// re-binarisation FFN (C1 Patch 2) that turns h into exactly 0/1, with the certificate that
/// the realised re-binarisation gives exactly 1 for every count of earlier ψ positions it covers.
#include <gmpxx.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attention/transformer/transformer.hpp"
#include "core/budget.hpp"
#include "numeric/engine.hpp"
#include "numeric/value.hpp"
#include "proofs/common/residual_space.hpp"
#include "proofs/compiler/component.hpp"

namespace ropesim::proofs {

/// The realised behaviour of the Pψ head with re-binarisation in one policy (THEORY §7 C1
/// Patches 1, 2). h(c) = output of the head when c earlier positions carry ψ (sequential sum of
/// c copies of round_F(1/Z_c), Z_c the sequential sum of c ones).
struct PastCertificate {
  /// The thresholds of the re-binarisation (exact in F) and its scale 1/(f2 − f1).
  numeric::Value f1, f2;
  /// The largest count c_max ≤ limit such that for every 1 ≤ c ≤ c_max the realised
  /// re-binarisation of h(c) is exactly 1 (and that of 0 is exactly 0); nullopt = every count
  /// (Z and h both stopped changing below `limit`, so h(c) is constant from there on).
  std::optional<std::uint64_t> certified_count;
  /// The count where Z_c and then h(c) stopped changing (nullopt if not reached within limit).
  std::optional<std::uint64_t> stagnation_count;
  /// The smallest and largest h(c) over the certified counts.
  numeric::Value min_output, max_output;
  /// The first count whose re-binarised output is not 1 (nullopt if none up to limit).
  std::optional<std::uint64_t> first_failure;
  std::uint64_t limit = 0;  ///< counts checked: 1..limit (or until stagnation)
};

/// The compiler's re-binarisation thresholds (THEORY §7 C1 Patch 2): f1 = 1/4, f2 = 1/2, so
/// f2 − f1 = 1/4 is a power of two. For h in [1/2, 2) and p ≥ 3, h − 1/4 and h − 1/2 are exact
/// in F (Sterbenz-style), so 4·(h − 1/4) − 4·(h − 1/2) = 1 exactly; h = 0 gives 0. The compiler
/// does not rely on this argument: certify_past_head evaluates the realised FFN on every h.
mpq_class past_threshold_f1();
mpq_class past_threshold_f2();

/// Computes the PastCertificate for `policy` with re-binarisation thresholds f1 < f2 (exact
/// in F), checking counts 1..limit (stopping early once Z_c and h(c) are both constant).
/// Time O(min(limit, stagnation)²) additions in F; results are cached per (policy, f1, f2,
/// limit). Throws InvalidArgument if the summation is not sequential, f_large(F) is undefined,
/// or f1, f2 are not exact in F. `progress`, when set, is called now and then with (counts
/// checked, limit). Source: THEORY §7 C1 (Patch 2), §1 (f_large).
PastCertificate certify_past_head(
    const attention::EvaluationPolicy& policy, const mpq_class& f1, const mpq_class& f2,
    std::uint64_t limit, const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

/// The work of certify_past_head(policy, f1, f2, limit), for check_budget before it starts:
/// while the sequential sum Z_c of c ones is exact (c ≤ 2^p, p the precision of F) and has not
/// stagnated, h(c) is recomputed as a sum of c terms, min(limit, 2^p)²/2 additions in all (one
/// per count after that). The rate is the one measured on the reference machine (fp32: 30000
/// counts, 4.5e8 additions, in 6 s).
WorkEstimate certify_past_head_work(const attention::EvaluationPolicy& policy, std::uint64_t limit);

/// The certificate of the compiler's P heads at F: certify_past_head with the thresholds
/// past_threshold_f1/f2 up to `limit`. Throws Refusal(past_head) "P head refused in F: …" when
/// no count is certified (the re-binarisation of h(1), or of 0, is not exactly 1, 0), and what
/// certify_past_head throws.
PastCertificate certify_past_heads(
    const attention::EvaluationPolicy& policy, std::uint64_t limit,
    const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

/// The components of Pψ (THEORY §7 C1) over `space`: the head (reads `psi`, writes `raw`, key
/// weight f_large) and the re-binarisation FFN (reads `raw`, `top`; writes `out`), named `node`
/// (the subformula's text). `certificate` gives the thresholds and the output range [min, max]
/// of h that the LayerNorm mirror must map to 1. Throws InvalidArgument when a name is not a
/// coordinate of `space`.
std::vector<Component> past_components(const ResidualSpace& space, const std::string& psi,
                                       const std::string& raw, const std::string& out,
                                       const std::string& node, const numeric::Value& f_large,
                                       const PastCertificate& certificate,
                                       const numeric::Arithmetic& arithmetic);

}  // namespace ropesim::proofs
