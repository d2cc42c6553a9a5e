#pragma once
/// Item (i) of "Round and Round We Go" [RRWG, Barbero et al. 2024, arXiv 2410.06205]: RoPE
/// builds a positional (previous-token) head from its highest frequency, a head without
/// positions (NoPE) cannot — here both in a finite format F (docs/BOUNDS.md §4).
///
///  * The positional head is the fixed-offset head of THEORY §6 / construction C5 on the
///    highest conventional RoPE frequency θ_1 = 1 rad/token (`single:g=1`), offset k (k = 1:
///    the previous-token head; RRWG's diagonal head attends to j = i, which strict causal
///    masking hides, THEORY §2), built by proofs/range/fixed_offset_head and measured by
///    proofs/range/horizon (C = auto): its certified range N_max^(k) [RoPE-X eq. 10] is the length
///    up to which it puts weight exactly 1 on position i − k.
///  * The NoPE impossibility [RRWG; LC25 for NoPE = LTL[P]]: without positions, a causal head's
///    output at query position n is, in exact arithmetic, a function of the query token and of
///    the multiset of the keys (BOS and the prefix): two words whose prefixes are permutations
///    of each other with different previous tokens get the same output, so no NoPE head can
///    read the previous token. In F the scores, the max and every exp(S_j − M) are computed
///    per key and are the same multiset; only the two sums of the softmax and of the output
///    depend on the key order. nope_previous_token_check measures what survives.
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "numeric/summation.hpp"
#include "proofs/range/horizon.hpp"

namespace ropesim::proofs {

/// The previous-token head (offset k ≥ 1) on θ_1 = 1 rad/token in format F under
/// `realisation`, round-to-nearest-even, sequential sums, C = auto: the horizon report of
/// proofs/range/horizon (certified range N_max^(k), the exact δ bound, the tie distance). Throws
/// InvalidArgument like make_fixed_offset_head (k = 0, an unknown realisation, round-up).
HorizonReport previous_token_head(const numeric::Format& F, const std::string& realisation,
                                  std::uint64_t k = 1);

/// What to compare: word pairs over {a, b, c} with permuted prefixes (see
/// nope_previous_token_check).
struct NopeCheckSpec {
  /// F, rounding (nearest-even only) and summation (sequential, pairwise or exact).
  numeric::EvaluationPolicy policy;
  std::uint64_t seed = 1;    ///< the head's weights and the words (deterministic)
  std::size_t trials = 200;  ///< word pairs (≥ 1)
  std::size_t length = 16;   ///< query position n (≥ 3): prefix x_1..x_{n-1}, query x_n
};

/// The result: over `pairs` word pairs (w, w') whose prefixes are permutations of each other,
/// w ending in a (ψ = 1 at n − 1) and w' not (ψ = 0), the NoPE head's outputs o, o' at n.
struct NopeCheck {
  std::size_t pairs = 0;
  std::size_t identical = 0;     ///< pairs with o and o' bit for bit equal
  mpq_class max_difference = 0;  ///< max |o − o'| (exact)
  /// The a-priori bound B on |o − o'| (exact; see nope_previous_token_check); it holds for
  /// the pairs where no attention weight is subnormal (`underflows` counts the others).
  mpq_class bound = 0;
  std::size_t underflows = 0;
  std::size_t keys = 0;  ///< N = n keys per query (BOS and x_1..x_{n-1})
  /// The margin the task needs: inside its certified range the previous-token head puts
  /// weight exactly 1 on j = n − 1, so its outputs on w and w' are ψ = 1 and 0 and a read-out
  /// at 1/2 separates them with margin 1/2 on each side; a NoPE head's differ by ≤ bound.
  mpq_class margin = mpq_class(1, 2);

  /// The check's verdict: no weight was subnormal and every difference is within the bound.
  bool bound_holds() const { return underflows == 0 && max_difference <= bound; }
};

/// The NoPE head on the previous-token task, in F. Alphabet {a, b, c} one-hot in d = 4 (with
/// a BOS coordinate); Q, K: 2 × 4 with entries drawn (seeded) from the multiples of 1/4 in
/// [−1, 1] (exact in every binary format with p ≥ 3), so |S| ≤ 2 and every exp(S_j − M) ≥
/// e^−4; values ψ(x_j) = [x_j = a], 0 at BOS. Per pair: a random prefix u ending in a with
/// some other letter, u' = u with its last letter swapped with an earlier non-a letter, the
/// same query letter; scores q·k_j (numeric::dot), weights and output by attention::attend
/// (stable softmax, THEORY §2) under the policy.
///
/// The bound (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §4.2, positive
/// terms): the softmax sum is Z = L(1 + η), |η| ≤ γ, L = Σ_j p_j exactly; α_j = (p_j/Z)(1 + δ_j),
/// |δ_j| ≤ u; the output sums the α_j with ψ_j = 1 (products by 0 and 1 are exact) with a
/// relative error ≤ γ. So o = r·ρ with r = Σ_{ψ_j=1} p_j / L (the same for both words) and
/// ρ ∈ [(1−u)(1−γ)/(1+γ), (1+u)(1+γ)/(1−γ)], hence |o − o'| ≤ B = (1+u)(1+γ)/(1−γ) −
/// (1−u)(1−γ)/(1+γ) (r ≤ 1). u = 2^−p; γ = γ_m = m·u/(1 − m·u) with m = N − 1 (sequential),
/// ⌈log2 N⌉ (pairwise), 1 (exact: one rounding of each sum, and then o = o' bit for bit).
/// Throws InvalidArgument for trials = 0, length < 3, a rounding other than nearest-even or
/// the wide-accumulator summation.
NopeCheck nope_previous_token_check(const NopeCheckSpec& spec);

}  // namespace ropesim::proofs
