#pragma once
/// The MOD_m^r component of the compiler (THEORY §7 C4; RoPE-X App C.3): the C4 head of
/// proofs/mod_atom.hpp wired to named coordinates, its first-position correction, and the
/// counting head that the correction reads (one per layer holding MOD heads).
#include <cstdint>
#include <string>
#include <vector>

#include "attention/transformer.hpp"
#include "numeric/engine.hpp"
#include "proofs/component.hpp"
#include "proofs/residual_space.hpp"

namespace ropesim::proofs {

/// The components of mod(m,r), m ≥ 2, over `space`: the C4 head (reads `bos` and `top`, writes
/// `raw`; C = auto, certified by its realised margins per residue, make_mod_atom_head) and the
/// first-position correction FFN (reads `raw`, `count`, `top`; writes `out`), named `node`. The
/// head component carries the ModAtomHead (its certificate at F). Throws what
/// make_mod_atom_head throws (Refusal(mod_margin) naming m, r, F and the best margin when F
/// cannot hold the atom), and InvalidArgument when a name is not a coordinate of `space`.
std::vector<Component> mod_components(const ResidualSpace& space, std::uint64_t m, std::uint64_t r,
                                      const std::string& raw, const std::string& count,
                                      const std::string& out, const std::string& node,
                                      const attention::EvaluationPolicy& policy);

/// The counting head (RoPE-X App C.3; proofs/gadgets.hpp counting_head) as a component: reads
/// `bos`, writes `count` = round_F(1/#keys), exactly 1 at position 1 and in [0, 1/2] later.
Component counting_component(const ResidualSpace& space, const std::string& bos,
                             const std::string& count, const numeric::Arithmetic& arithmetic);

}  // namespace ropesim::proofs
