#pragma once
/// The converse of the characterizations as identities (THEORY §5 "The converse as
/// identities"): for a one-layer F-transformer and words u, x, y, v, the exact eventual
/// behaviour of n ↦ (accepts u(xy)^n x v, accepts u(xy)^n v), decided without running the
/// model on words of every length.
///
/// Why this decides the identity. LTL[P] languages are R-trivial (THEORY §5 T2): for each one
/// there is n0 with u(xy)^n x v ∈ L ⟺ u(xy)^n v ∈ L for all n ≥ n0. For LTL[P,MOD] with moduli
/// dividing M the same holds when |x| and |y| are multiples of M (every position of the
/// repeated block keeps its residue, and P-subformulas are monotone along the repetitions).
/// The analysis below shows that both acceptance sequences are eventually periodic and finds
/// a threshold n* and a common period L with both sequences periodic from n* on. A language
/// satisfying the identity has them equal at every n ≥ max(n*, n0), hence (by periodicity) at
/// every n ≥ n*. So a difference at some n in [n*, n* + L) recurs at n + kL for every k ≥ 0
/// and no n0 exists: the model's language is not in the class. Conversely equality on that
/// window is equality for every n ≥ n*. Nothing is sampled; the verdict is exact.
///
/// Why the sequences are eventually periodic (one layer, BOS, strict masking, stable softmax).
/// With one layer the EOS representation depends on the earlier tokens only through their
/// keys and values, which depend on the symbol and, with periodic tables (r3) of period
/// dividing |x| and |y|, on the position modulo the period: every copy of xy carries the same
/// key/value sequence B, the prefix BOS·u gives P and the suffix (x v or v) gives S. For each
/// head the EOS query q is the same for every n. Then, for n ≥ 1:
///   - the max score M is the max over P ∪ B ∪ S (independent of n);
///   - e_j = rnd(exp(rnd(s_j − M))) depends on the key only, and the max key gives e = 1;
///   - sequential summation: Z after P B^n is z_{n+1} = g(z_n), g = "add B's e_j in order",
///     a monotone map (e_j ≥ 0) on the finite set F, so z_n is non-decreasing and constant
///     from the first n with g(z_n) = z_n (found by iterating); Z = the fold of S from there.
///     With Z fixed, α_j = rnd(e_j/Z) and each output coordinate after P B^n is h^n(o_P),
///     h = "add B's rounded α_j·v_j in order": a map of a finite set into itself, hence
///     eventually periodic; its preperiod and period are found by iterating until a state
///     repeats (the states of all heads and coordinates together);
///   - exact summation (one rounding of the exact sum): Z(n) = rnd(E_P + n·E_B + E_S) is
///     constant when E_B = 0, and otherwise, for large n, +∞ (F with infinity) or max F
///     (saturating F); each output coordinate is rnd(O_P + n·O_B + O_S) with the α of that
///     Z, constant when O_B = 0 and ±∞ / ±max F for large n otherwise.
/// The FFN, LayerNorms and classifier act on the EOS vector alone. The thresholds are where
/// these iterations settle (exact summation: found by bisection on n, the rounding being
/// monotone in n).
///
/// What it does not cover: several layers (the keys of layer 2 at the repeated positions
/// vary with n before they settle; see docs/TESTING.md), pairwise summation (not a fold),
/// the online softmax, models without BOS or with non-strict masking, non-finite scores or
/// values (reported as undecided).
#include <gmpxx.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "attention/transformer/transformer.hpp"
#include "numeric/summation.hpp"
#include "properties/check.hpp"

namespace ropesim::properties {

/// The words of one instance of the identity: u(xy)^n x v against u(xy)^n v.
struct IdentityWords {
  std::string u, x, y, v;  ///< single-letter symbols of the model's alphabet; xy non-empty
};

/// The eventual behaviour of one instance.
struct EventualBehaviour {
  /// False when the analysis does not apply or an iteration hit its cap; `reason` says why.
  bool decided = false;
  std::string reason;
  /// n*: from n = n_star on, both acceptance sequences are periodic with `period` — the point
  /// from which the model's behaviour on this instance is provably what it is for every larger
  /// n (the class's, u(xy)^n x v ∈ L ⟺ u(xy)^n v ∈ L, when there is no witness). It is the n
  /// from which every running sum of the analysis has settled (the softmax denominators and the
  /// output sums: under exact sums the n where rnd(a + n·b) reaches its end value ±∞ or ±max F,
  /// under sequential sums the first fixed point of the denominator fold and the preperiod of
  /// the output folds), so it is proven, not necessarily the smallest such n. An integer: under
  /// exact summation in fp32 it is about max F / Σ e_j ≈ 10^38, far beyond any word one can run.
  mpz_class n_star = 0;
  std::uint64_t period = 1;
  /// The first n in [n_star, n_star + period) where the two words are told apart, if any (then
  /// they are told apart at witness + k·period for every k ≥ 0).
  std::optional<mpz_class> witness;
  /// Acceptance of u(xy)^n x v and of u(xy)^n v at n = witness (or at n = n_star).
  bool accept_with_x = false;
  bool accept_without_x = false;
};

/// Decides the eventual behaviour of `words` on a one-layer model (see the file comment).
/// The model must have one layer, BOS, strict masking, the stable softmax, sequential or
/// exact summation, no mixed-format heads, and rotations that are NoPE or r3 tables whose
/// periods divide |x| and |y| (checked: otherwise InvalidArgument). `max_blocks` caps the
/// iterations over copies of xy (and the common period); beyond it the result is undecided.
EventualBehaviour eventual_behaviour(const attention::Model& model, const IdentityWords& words,
                                     std::uint64_t max_blocks = 1u << 16);

/// The word u(xy)^n s.
std::string repeat_word(const IdentityWords& words, std::uint64_t n, bool with_x);

/// The classifier value of a one-layer model on `word`, computing only what the EOS token
/// needs (keys and values of every token, one query): O(N) instead of run()'s O(N²), with
/// the same steps as run() (attention/transformer/transformer.hpp, "One token through one layer"),
/// so the value is bit-identical to run(model, word).output. Throws InvalidArgument for a model
/// with more or fewer than one layer, without BOS, with non-strict masking or mixed-format
/// heads, or for a symbol not in the alphabet.
numeric::Value one_layer_output(const attention::Model& model, const std::string& word);

/// Makes a random model's weights degenerate the way counting needs (converse_property): each
/// entry of the embeddings, the attention matrices and biases, the FFN and the classifier is
/// set to 0 with probability 1/2, 2/3 or 3/4 (drawn first), the key matrix of each head
/// zeroed with probability 1/2 (deterministic in `seed`, std::mt19937_64), so heads with
/// K = 0 (every key equal: uniform attention) and exact zeros in the readout occur often; with
/// `mirror` the model becomes symmetric: bias-free (as LLaMA-style models are), BOS and EOS
/// embedded at 0, and the second letter embedded as the negation of the first (b = −a), so the
/// values of a and b cancel exactly (LayerNorm biases dropped too; gains kept). The model
/// stays valid.
void sparsify(attention::Model& model, std::uint64_t seed, bool mirror);

/// Which transformers the converse properties generate.
enum class ConverseClass {
  nope,    ///< no positional encoding: the identity of LTL[P] (T1 upper half)
  rope_p,  ///< r3 tables of random periods (lcm M): the identity with |x|, |y| ≡ 0 mod M (T5)
};

/// The hypotheses a converse run draws its models under (`ropesim check --summation`,
/// `--draw`, `--format`; THEORY §1, §2.1, §5 "The converse as identities").
struct ConverseSettings {
  ConverseClass kind = ConverseClass::nope;
  /// The summation of every sum of the drawn models (policy.summation). `exact` with an F
  /// that has ±∞ is the theorem's regime; `sequential` (THEORY §2.1's canonical policy) and a
  /// saturating F (`--format ...,overflow=saturate`) are outside it. `pairwise` and
  /// `wide_accumulator` (accumulator fp32) are not covered by eventual_behaviour (pairwise is
  /// not a fold; a wide fold settles only after ~2^24 copies): those runs decide on words
  /// actually run up to CheckOptions::max_length and say so (a bounded observation, no n*).
  numeric::Summation summation = numeric::Summation::exact;
  /// standard: the formats of the regime (converse_property); reachable: ieee(p, e) with
  /// p ∈ [3, 8], e ∈ [3, 4] (max F ≤ 255), so that n* is small, and every case is checked
  /// on the words u(xy)^n x v and u(xy)^n v actually run at n* ≤ n < n* + max(period, 4)
  /// (cases whose words there exceed max_length are discarded, with that reason).
  ConverseDraw draw = ConverseDraw::standard;
  /// Testing only (a deliberate break): the n from which the words are checked in the
  /// reachable draw is this function of the analysis's n* (unset: n* itself). A threshold told
  /// too small must be caught by the words run, not by the analysis.
  std::function<mpz_class(const mpz_class&)> n_star_for_testing;
};

/// The body of the converse properties `nope-ltlp` and `rope-p-ltlpmod` (theorems.cpp) under
/// `settings`: generates a random one-layer model (random_model: 1–2 heads, d_model 1–4,
/// head_dim 2 or 4, optional FFN and LayerNorm, weights k/4; a quarter of the models then
/// sparsified, half sparsified and made symmetric, see sparsify) and words u, x, y, v over
/// {a, b}, and
///   - exact / sequential summation: decides the eventual behaviour (eventual_behaviour) and
///     fails, with the witness n, n* and period, when the two words stay apart. Cases the
///     analysis cannot decide (non-finite scores, caps) are discarded with the reason. Where
///     the words at n* are short enough (≤ 20000 symbols; always in the reachable draw) the
///     prediction is confirmed by one_layer_output on the actual words, and in the reachable
///     draw the identity itself is checked on the words run at n* ≤ n < n* + max(period, 4):
///     a separation there fails the property by computation;
///   - pairwise / wide-accumulator summation: runs the words at up to 16 values of n in
///     [n_max/2, n_max] (n_max the largest n whose words fit in max_length) and fails when they
///     are told apart at every one (stated as a bounded observation: no eventual analysis).
/// Every passed case records its n*, its acceptance pattern on the 127 words of length ≤ 6
/// and whether it was checked by computation (converse_record; run_theorem collects them into
/// PropertyOutcome::thresholds). Run under RapidCheck (run_theorem).
void converse_property(const CheckOptions& options, const ConverseSettings& settings);

/// What one passed converse case measured (collected by run_theorem for successful trials only,
/// never for shrink steps).
struct ConverseCase {
  std::string regime;               ///< the hypotheses, e.g. "exact sums rounded once, ..."
  std::string decided_by;           ///< "eventual-behaviour analysis" or "words run ..."
  std::optional<mpz_class> n_star;  ///< from the analysis (none for pairwise/wide)
  std::string pattern;              ///< accept ('1') / reject ('0') on the words of length ≤ 6
  bool computed = false;            ///< checked on words actually run past n*
};

/// The case the running trial recorded (set by converse_property, taken by run_theorem's
/// listener when the trial succeeds, cleared otherwise). One process-wide slot: RapidCheck
/// runs one property at a time per process.
std::optional<ConverseCase>& converse_record();

}  // namespace ropesim::properties
