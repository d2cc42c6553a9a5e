#pragma once
/// Random small F-transformers for tests and properties (THEORY §2, §3): random weights drawn
/// from a small set of values exactly representable in every preset format, one or two layers,
/// heads with RoPE_P periodic-table rotations (R3, RoPE-X eq. 7), conventional RoPE (R1) or
/// none (NoPE), and the architecture switches of ModelOptions. Used by the prefix-oracle tests
/// and by the `extract-rope-p` property (RoPE-X Lemma 3.1: a RoPE_P transformer's language is
/// in LTL[P,MOD]).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "attention/transformer/transformer.hpp"

namespace ropesim::attention {

/// The rotary positional encoding of every head of a random model.
enum class RandomRotary {
  none,          ///< NoPE
  periodic,      ///< schedule periodic:m=m_1,..., m_d ∈ [2, max_period], realisation r3 (RoPE_P)
  conventional,  ///< schedule conventional:base=10000,dim=head_dim, realisation r1 (RoPE_NP)
};

/// The shape of a random model.
struct RandomModelOptions {
  numeric::Format format = numeric::Format::fp16();
  std::size_t alphabet_size = 2;  ///< symbols "a", "b", ... (1..26)
  std::size_t layers = 1;         ///< 1..8
  std::size_t heads = 1;          ///< per layer, 1..8
  std::size_t d_model = 4;        ///< 1..64
  std::size_t head_dim = 4;       ///< even, 2..64 (value_dim = head_dim)
  RandomRotary rotary = RandomRotary::periodic;
  std::uint64_t max_period = 6;        ///< for periodic: largest table period m, ≥ 2
  bool ffn = true;                     ///< an FFN (hidden width d_model) in every layer
  std::optional<NormPlacement> norms;  ///< LayerNorms (ε = 1/4) at this placement; none if unset
  ModelOptions options;  ///< BOS, masking, softmax variant (norm placement from `norms`)
};

/// A random model of the given shape; every weight, bias and embedding entry is k/4 for an
/// integer k ∈ [-8, 8] (exact in fp8 E4M3 and every wider preset). Deterministic in `seed`
/// (std::mt19937_64). Throws InvalidArgument naming the option when a size is out of range.
Model random_model(const RandomModelOptions& options, std::uint64_t seed);

}  // namespace ropesim::attention
