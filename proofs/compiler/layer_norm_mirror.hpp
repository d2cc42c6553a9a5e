#pragma once
/// The LayerNorm mirror (THEORY §7 C1 "add a mirror 1 − x for every coordinate so LN can be the
/// identity"; LC25 App B.3): the pass that turns an assembled compiled model into its post-LN
/// form, checking every step of the construction in F.
#include <cstddef>
#include <vector>

#include "attention/transformer/transformer.hpp"
#include "numeric/engine.hpp"
#include "numeric/value.hpp"
#include "proofs/common/residual_space.hpp"
#include "proofs/compiler/component.hpp"

namespace ropesim::proofs {

/// The LayerNorm mirror of a compiled model (THEORY §7 C1; LC25 App B.3), as ropesim builds and
/// certifies it in F. Every coordinate x holding 0/1 gets a mirror `mirror:x` = 1 − x, so a
/// vector of such pairs has mean exactly 1/2 and variance exactly 1/4, and LN with ε = 0, γ = β =
/// 1/2 is exactly the identity (sums of 0/1 and of 1/4 are exact while d ≤ 2^p).
/// Head outputs are not 0/1 (a P head gives h(c) ≈ 1), so they are written SCALED into their
/// `raw:` / `count` coordinates: r = round_F(ε·h) with ε = 2^−p, and these coordinates come last,
/// after every pair (and `pad:k` pairs if needed), with a constant mirror 1. In post-LN
/// LN1(A(H) + H):
///   - the partial sum before a raw coordinate is the integer K of pairs, and round_F(K + r) = K
///     (absorbed), so μ = 1/2 exactly; likewise each rounded square (r − 1/2)² adds exactly 1/4
///     to the variance sum, so σ = 1/2 exactly and every 0/1 coordinate passes unchanged;
///   - a raw coordinate maps to round(round(round((r − 1/2)/σ)·γ_r) + β_r) with γ_r = β_r =
///     2^(p−1): r ∈ (0.75, 1.25)·2^−p gives exactly 1, r = 0 gives 0, and a count output
///     round_F(ε/Z), Z ≥ 2, gives 0 or 1/2;
///   - the FFN of the layer reads these exact values, writes each new coordinate's mirror
///     (−Δ) and resets the raw coordinates to 0 (a unit −ReLU(raw)), so LN2 is the identity.
/// The compiler does not rely on this argument alone: it checks every step of it in F (the
/// absorptions, the images of the head-output ranges, LN of the embeddings) and refuses with one
/// line naming the failing check when F cannot give it (e.g. d_model > 2^p in fp8).
struct LayerNormMirror {
  numeric::Value raw_scale;  ///< ε = 2^−p
  numeric::Value raw_gain;   ///< γ_r = β_r = 2^(p−1)
  std::size_t pairs = 0;     ///< K: coordinate/mirror pairs before the raw coordinates
  std::size_t padding = 0;   ///< `pad:k` pairs added so that the absorptions hold
  std::size_t raw = 0;       ///< raw coordinates (each with a constant mirror)
};

/// Rewrites `model` (assembled over `space`, described by `layers`) into its post-LN form with
/// the LayerNorm mirror (see LayerNormMirror): adds the mirrors (and `pad:k` pairs), moves the raw
/// coordinates named in `ranges` last, scales the heads' outputs by 2^−p, adds the mirror writes
/// and raw resets to every FFN (and to `layers`' descriptions), and sets LN1/LN2 and
/// NormPlacement::post; `space` becomes the new residual space. `ranges` are the head-output
/// ranges of the raw coordinates (Component::raw_outputs). Returns the mirror's parameters.
/// Throws Refusal(layer_norm_gain / layer_norm_mirror) with one line naming the failing check
/// (F fixed point, 2^−p or 2^(p−1) not in F, d_model > 2^p, an absorption, a head-output image,
/// LN of an embedding).
LayerNormMirror add_layer_norm_mirror(attention::Model& model, ResidualSpace& space,
                                      std::vector<LayerDescription>& layers,
                                      const std::vector<RawOutputRange>& ranges,
                                      const numeric::Arithmetic& arithmetic);

}  // namespace ropesim::proofs
