#pragma once
/// The MOD_m^r component of the compiler (THEORY §7 C4; RoPE-X App C.3): the C4 head of
/// proofs/compiler/mod_atom.hpp wired to named coordinates, its first-position correction, and the
/// counting head that the correction reads (one per layer holding MOD heads).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention/transformer/transformer.hpp"
#include "numeric/engine.hpp"
#include "proofs/common/residual_space.hpp"
#include "proofs/compiler/component.hpp"

namespace ropesim::proofs {

/// The components of mod(m,r), m ≥ 2, over `space`: the MOD head (reads `bos` and `top`, writes
/// `raw`) and the first-position correction FFN (reads `raw`, `count`, `top`; writes `out`),
/// named `node`. The head is C4's on its periodic table (C = auto, certified by its realised
/// margins per residue, make_mod_atom_head; the component carries the ModAtomHead) when
/// `schedule` is unset, or periodic (periodic_schedule_p) with a block of turn 1/m
/// (periodic_mod_block, which refuses otherwise; its description then names the schedule and
/// the block), and C4' on the named non-periodic
/// schedule otherwise (make_bounded_mod_head with range limit `max_length`, 0 = its default; the
/// component carries the BoundedModHead, whose N_max^MOD bounds the model's certified length).
/// Throws what those throw (Refusal(mod_margin) / Refusal(mod_schedule) / Refusal(mod_period)
/// naming m, r, F, and the best margin or the nearest block), and InvalidArgument when a name is
/// not a coordinate of `space`. Source: THEORY §7 C4, C4'; RoPE-X App C.3.
std::vector<Component> mod_components(const ResidualSpace& space, std::uint64_t m, std::uint64_t r,
                                      const std::string& raw, const std::string& count,
                                      const std::string& out, const std::string& node,
                                      const attention::EvaluationPolicy& policy,
                                      const std::optional<attention::Schedule>& schedule = {},
                                      std::uint64_t max_length = 0);

/// The counting head (RoPE-X App C.3; proofs/compiler/gadgets.hpp counting_head) as a component:
/// reads `bos`, writes `count` = round_F(1/#keys), exactly 1 at position 1 and in [0, 1/2] later.
Component counting_component(const ResidualSpace& space, const std::string& bos,
                             const std::string& count, const numeric::Arithmetic& arithmetic);

}  // namespace ropesim::proofs
