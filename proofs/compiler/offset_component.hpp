#pragma once
/// The Y^k ψ component of the compiler (C5; THEORY §6, RoPE-X App D): a BOUNDED operator. The
/// fixed-offset head of proofs/range/fixed_offset_head.hpp (realisation r1, C = auto as `ropesim
/// horizon` chooses it) reads ψ and writes a raw coordinate; the gate P^k⊤ switches it off at
/// i ≤ k: out = ReLU(raw + 2·P^k⊤ − 2·⊤). Exact only on words of length ≤ N_max^(k), the head's
/// certified range.
#include <cstdint>
#include <string>
#include <vector>

#include "attention/schedules/schedule.hpp"
#include "attention/transformer/transformer.hpp"
#include "proofs/common/residual_space.hpp"
#include "proofs/compiler/component.hpp"
#include "proofs/range/fixed_offset_head.hpp"
#include "proofs/range/horizon.hpp"

namespace ropesim::proofs {

/// The certificate of a Y^k head at F (THEORY §6).
struct OffsetCertificate {
  /// `horizon`'s report: C (an element of F), N_max^(k) = report.range.n_max, at_limit.
  HorizonReport report;
  mpq_class C;  ///< report.C exactly: the scale the compiled head is built with
};

/// Certifies the Y^k head on `schedule` at F: `horizon` with offset k, realisation r1, C = auto
/// and range scan limit `max_length` (0 = horizon's default). Throws Refusal(offset_head) "Y^k
/// head refused in F: its certified range N_max^(k) = N < k (THEORY §6)" when no length ≥ k is
/// certified, and what horizon throws.
OffsetCertificate certify_offset_head(std::uint64_t k, const attention::Schedule& schedule,
                                      std::uint64_t max_length,
                                      const attention::EvaluationPolicy& policy);

/// The components of Y^k ψ over `space`, named `node`: the head on `schedule` with offset k,
/// realisation r1 and the certificate's C (reads `psi`, writes `raw`) and the gate FFN (reads
/// `raw`, `gate` = P^k⊤ and `top`; writes `out`). The head component carries the BoundedHead (k, C,
/// N_max^(k)). Throws InvalidArgument when a name is not a coordinate of `space`, and what
/// make_fixed_offset_head throws.
std::vector<Component> offset_components(const ResidualSpace& space, const std::string& psi,
                                         const std::string& raw, const std::string& gate,
                                         const std::string& out, const std::string& node,
                                         std::uint64_t k, const attention::Schedule& schedule,
                                         const OffsetCertificate& certificate,
                                         const attention::EvaluationPolicy& policy);

}  // namespace ropesim::proofs
