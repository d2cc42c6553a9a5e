#pragma once
/// Gadgets of the formula → transformer compiler (THEORY §7 C1, C4): pieces of a layer that
/// read and write named coordinates of a ResidualSpace. Every weight is an exact rational
/// assembled into an ExactMatrix and rounded once into F.
///
/// Conventions (THEORY §2, §7 C1): `top` (⊤) is 1 at every token but BOS and 0 at BOS; every
/// Boolean coordinate is exactly 0 or 1 at tokens and exactly 0 at BOS. Gadgets use ⊤ instead
/// of a constant bias, so that every value they write is 0 at BOS (all inputs are 0 there).
///
/// Feed-forward gadgets (one ReLU level each; on {0,1} inputs every sum is a small integer, so
/// every rounding in F is exact):
///   ¬x      = ReLU(⊤ − x)
///   x ∧ y   = ReLU(x + y − ⊤)
///   x ∨ y   = ReLU(x + y) − ReLU(x + y − ⊤)
///   rebinarise(h) = (ReLU(h − f1·⊤) − ReLU(h − f2·⊤)) / (f2 − f1)   (C1 Patch 2)
///   first-position correction of a MOD head (see first_position_units).
/// Attention gadgets: the Pψ head (C1, NoPE), the counting head (RoPE-X App C.3) and the C4
/// MOD head (proofs/compiler/mod_atom.hpp), wired through named coordinates.
#include <gmpxx.h>

#include <string>
#include <utility>
#include <vector>

#include "attention/transformer/transformer.hpp"
#include "proofs/common/residual_space.hpp"

namespace ropesim::proofs {

/// One hidden ReLU unit of a feed-forward sublayer over named coordinates:
/// hidden = ReLU(Σ reads[k].second · x[reads[k].first]); x[writes[k].first] += writes[k].second ·
/// hidden.
struct HiddenUnit {
  std::vector<std::pair<std::string, mpq_class>> reads;
  std::vector<std::pair<std::string, mpq_class>> writes;
};

/// ¬x = ReLU(⊤ − x) into `out`.
std::vector<HiddenUnit> negation_units(const std::string& x, const std::string& out);
/// x ∧ y = ReLU(x + y − ⊤) into `out`.
std::vector<HiddenUnit> conjunction_units(const std::string& x, const std::string& y,
                                          const std::string& out);
/// x ∨ y = ReLU(x + y) − ReLU(x + y − ⊤) into `out`.
std::vector<HiddenUnit> disjunction_units(const std::string& x, const std::string& y,
                                          const std::string& out);
/// Re-binarisation (THEORY §7 C1 Patch 2): (ReLU(h − f1·⊤) − ReLU(h − f2·⊤))/(f2 − f1) into
/// `out`. Throws InvalidArgument unless 0 < f1 < f2.
std::vector<HiddenUnit> rebinarise_units(const std::string& h, const std::string& out,
                                         const mpq_class& f1, const mpq_class& f2);
/// The first-position correction of a MOD_m^r head (RoPE-X App C.3): position 1 sees only BOS,
/// where the head's output `raw` is 1; `count` = round_F(1/#keys) is 1 exactly at position 1
/// and ≤ 1/2 at every later position (0 at BOS). Writes into `out`
///   holds_at_1:   ReLU(raw)
///   otherwise:    ReLU(raw) − ReLU(raw + 2·count − 2·⊤)
/// (at position 1 the second unit is ReLU(raw) = raw, elsewhere raw + 2·count ≤ 2 so it is 0).
std::vector<HiddenUnit> first_position_units(const std::string& raw, const std::string& count,
                                             const std::string& out, bool holds_at_1);

/// The feed-forward sublayer of `units` over `space`: W1 (hidden × d) and W2 (d × hidden)
/// assembled exactly, rounded once into F; no biases. Throws InvalidArgument if `units` is
/// empty or names a coordinate `space` lacks.
attention::FeedForward assemble_feed_forward(const std::vector<HiddenUnit>& units,
                                             const ResidualSpace& space,
                                             const numeric::Arithmetic& arithmetic);

/// The Pψ head (THEORY §7 C1; LC25 App B.3): NoPE, head_dim 1, value_dim 1; query = bias 1,
/// key = f_large·ψ (K reads `psi`), value = ψ, output into `out`. The score of key j is
/// f_large·ψ_j, so the keys with ψ = 1 tie at the max and the others get round(exp(−f_large))
/// = 0 (THEORY §1): the output is 0 when no earlier position has ψ and otherwise the
/// sequential sum of c copies of round(1/Z_c) (c the number of ψ keys), which
/// certify_past_head bounds.
attention::AttentionHead past_head(const ResidualSpace& space, const std::string& psi,
                                   const std::string& out, const numeric::Value& f_large,
                                   const numeric::Arithmetic& arithmetic, const std::string& name);

/// The counting head (RoPE-X App C.3): NoPE, Q = K = 0 (every visible key scores 0), value 1
/// at BOS (reads `bos`), output round_F(1/Z) into `out`: exactly 1 at position 1 (only BOS is
/// visible), ≤ 1/2 at every later position under sequential summation, 0 at BOS.
attention::AttentionHead counting_head(const ResidualSpace& space, const std::string& bos,
                                       const std::string& out,
                                       const numeric::Arithmetic& arithmetic);

}  // namespace ropesim::proofs
