#pragma once
/// The MOD_m^r atom with periodic RoPE (construction C4 of THEORY §7; [RoPE-X] App C.3) and a
/// whole transformer that reads it at EOS (the length test N ≡ r (mod m), THEORY §4).
///
/// The head (head_dim 4: one rotary pair, then one unrotated pair; Q = 0, value_dim 1):
///   rotary pair    realised by the periodic table r3 of `periodic:m=M` (θ = 2π/m,
///                  T(s) = round_F(Rot(2πs/m)), R̂_i = T(i mod m); THEORY §3, RoPE-X eq. 7);
///   query bias     (round_F(cos 2πr/m), round_F(−sin 2πr/m)) on the rotary pair and (1, 0) on
///                  the unrotated pair, each rounded once into F from the exact real;
///   key            (Ĉ, 0) on the rotary pair at BOS (K reads the BOS coordinate), and
///                  (w, 0) on the unrotated pair at every other token (K reads the ⊤
///                  coordinate), with b̂ = round_F(b_m), b_m = 1 − δ_m/2 = (1 + cos 2π/m)/2,
///                  δ_m = 1 − cos(2π/m), and w = round_F(Ĉ·b̂) (the product a model computes);
///   value          1 at BOS, 0 elsewhere.
/// In exact arithmetic the query at i scores BOS with C·cos(2π(i − r)/m) and every other key
/// with C·b_m, so BOS leads by C·δ_m/2 when i ≡ r (mod m) and trails by at least C·δ_m/2
/// otherwise; C ≥ 2·f_large/δ_m makes stable softmax select exactly (THEORY §1), and the head
/// outputs 1 iff i ≡ r (mod m) — except at i = 1, which sees only BOS (handled by the model,
/// see mod_model).
///
/// A real binary format does not hold the table exactly (sin 2π/3, b_12), so the compiler
/// criterion of THEORY §7 is applied to the realised head: for each query residue s = i mod m
/// the realised scores Ŝ (attention::head_score under the policy) of BOS and of the non-BOS
/// keys are computed, and F is accepted only if the winner (BOS when s ≡ r, the non-BOS
/// baseline otherwise) leads by ≥ f_large(F) in every residue (the lead is the exact real
/// difference of two elements of F).
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attention/transformer/transformer.hpp"
#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"
#include "proofs/common/residual_space.hpp"
#include "proofs/compiler/bounded_mod.hpp"
#include "proofs/compiler/mod_wiring.hpp"
#include "proofs/compiler/refusal.hpp"

namespace ropesim::proofs {

/// The exact-arithmetic scale bound of C4 (THEORY §7): C ≥ 2·f_large/δ_m, δ_m = 1 − cos(2π/m).
struct ModScaleBound {
  /// 2·f_large/δ_m rounded up into F (the first C that C = auto tries); +inf (or max for
  /// saturating formats) when the bound exceeds F's largest finite value (then no finite C
  /// can work).
  numeric::Value rounded_up;
  /// The bound as a double for display: exact.get_d() when exact, else f_large / sin²(π/m)
  /// in binary64 (a few ulps).
  double approximate = 0;
  /// The bound exactly, when δ_m is rational (m = 2, 3, 4, 6; Niven); nullopt otherwise.
  std::optional<mpq_class> exact;
  /// False when the bound exceeds F's largest finite value.
  bool finite = true;
};

/// 2·f_large(F)/δ_m for m ≥ 2 (THEORY §7 C4), with f_large under `rounding`. Values for
/// nearest-even: m = 2: fp32 103.97, fp16 17.34375; m = 3: 138.63, 23.125; m = 4: 207.94,
/// 34.6875; m = 6: 415.89, 69.375; m = 12: 1552.1, 258.9. The round-up into F is decided
/// exactly (Niven values exactly; otherwise by exact comparisons of cos(2π/m) with rationals,
/// proofs::CosineSum::compare). Throws ropesim::InvalidArgument if m < 2 or f_large(F) is
/// undefined under `rounding` (round-up; THEORY §1).
ModScaleBound mod_scale_bound(std::uint64_t m, const numeric::Format& format,
                              numeric::Rounding rounding = numeric::Rounding::nearest_even,
                              const numeric::Engine& engine = numeric::default_engine());

/// What to build.
struct ModAtomSpec {
  /// The modulus m ≥ 2 for the head (m = 1 is ⊤ and has no head; mod_model handles it).
  std::uint64_t m = 2;
  /// The residue 0 ≤ r < m: the head says 1 at positions i ≡ r (mod m), i ≥ 2.
  std::uint64_t r = 0;
  /// The scale C (exact, rounded once into F with the policy's rounding); nullopt = auto:
  /// C_0 = mod_scale_bound(m).rounded_up, then C_{k+1} = round-up_F(C_k·(1 + slack)) (at least
  /// the next element of F), until a candidate passes, C is not finite, or C exceeds
  /// C_0·2^(p+4) (p the precision of F: beyond that, larger C only scales every realised
  /// score, and the margins with it, by a power of two).
  std::optional<mpq_class> C;
  /// Relative step of C = auto (> 0).
  mpq_class slack = mpq_class(1, 16);
  /// F, rounding, summation (THEORY §2.1). Default: fp32, nearest-even, sequential.
  attention::EvaluationPolicy policy;
};

/// The realised scores of one query residue s = i mod m (THEORY §7 compiler criterion).
struct ResidueMargin {
  std::uint64_t residue = 0;  ///< s
  bool bos_wins = false;      ///< s ≡ r: BOS must lead; otherwise the non-BOS keys must
  numeric::Value bos_score;   ///< Ŝ_{i,0}
  /// The smallest and largest realised score of a non-BOS key over the key residues 1..m
  /// (all equal in this construction: non-BOS keys live on the unrotated pair).
  numeric::Value other_min, other_max;
  /// The exact lead of the winner: bos − other_max when bos_wins, else other_min − bos;
  /// nullopt when a score is not finite.
  std::optional<mpq_class> margin;
  bool passes = false;  ///< margin ≥ f_large
};

/// One C tried (by C = auto, or the given C).
struct ModCandidate {
  numeric::Value C;
  /// min over residues of the margin; nullopt when some score is not finite.
  std::optional<mpq_class> min_margin;
  bool passes = false;
};

/// The constructed head, the chosen C and the evidence for it.
struct ModAtomHead {
  attention::AttentionHead head;  ///< head_dim 4, value_dim 1, wired as given
  attention::EvaluationPolicy policy;
  std::uint64_t m = 2, r = 0;
  numeric::Value C;  ///< chosen C (element of F)
  mpq_class C_exact;
  bool auto_C = false;
  numeric::Value f_large;  ///< f_large(F) under the policy's rounding
  mpq_class f_large_exact;
  ModScaleBound bound;  ///< 2·f_large/δ_m
  /// Realised parameters: the query bias (rotary pair), b̂ = round_F(b_m), the non-BOS key
  /// weight w = round_F(Ĉ·b̂), and the table T(s) = (cos, sin) for s = 0..m−1.
  numeric::Value query_cos, query_sin, b, key_weight;
  std::vector<attention::RealisedPair> table;
  /// Per query residue s = 0..m−1, with the chosen C.
  std::vector<ResidueMargin> margins;
  mpq_class min_margin;
  /// Every C tried, in order (the last one is the chosen C).
  std::vector<ModCandidate> candidates;
};

/// The realised margins of `head` as built (its C, biases and table), per query residue
/// s = 0..m−1, computed from attention::head_query / head_key / head_score under the head's
/// policy at query positions m..2m−1 and key positions 0 (BOS) and 1..m. `f_large` decides
/// `passes`. Source: THEORY §7 C4 (compiler criterion).
std::vector<ResidueMargin> mod_atom_margins(const attention::AttentionHead& head, std::uint64_t m,
                                            std::uint64_t r, const ModWiring& wiring,
                                            const attention::EvaluationPolicy& policy,
                                            const mpq_class& f_large);

/// Builds the MOD_m^r head (see the file comment; THEORY §7 C4, RoPE-X App C.3) and chooses or
/// checks C by the compiler criterion. Throws ropesim::InvalidArgument (one line) if m < 2,
/// r ≥ m, slack ≤ 0, the wiring names a coordinate its space lacks or has bos = top, f_large(F) is
/// undefined under the rounding (round-up), the given C is not positive or not finite in F, or F is
/// refused: the given C (or, with C = auto, every candidate) leaves some residue with a lead <
/// f_large. The refusal names m, r, F, f_large and the best margin found (with its C and residue).
ModAtomHead make_mod_atom_head(const ModAtomSpec& spec, const ModWiring& wiring = {});

/// MOD_m^r at position i (THEORY §4): i ≥ 1 and i ≡ r (mod m); false at BOS (i = 0).
bool mod_formula(std::uint64_t m, std::uint64_t r, std::uint64_t position);

/// What the model's classifier reads at EOS (position N + 1).
enum class ModReadout {
  /// Accept iff the word length N ≡ r (mod m): the atom MOD_m^((r+1) mod m) at N + 1
  /// (THEORY §4).
  length,
  /// Accept iff MOD_m^r holds at N + 1 (the atom itself, read at EOS).
  eos,
};
/// "length" / "eos".
std::string_view to_string(ModReadout readout);
/// Parses "length" or "eos" (also "atom"). Throws ropesim::InvalidArgument listing them.
ModReadout parse_mod_readout(std::string_view text);

/// What mod_model builds.
struct ModModelSpec {
  /// m ≥ 1, r < m (the residue of the readout), C, slack and policy. For readout == length
  /// the head is built for the atom residue (r + 1) mod m.
  ModAtomSpec atom;
  ModReadout readout = ModReadout::length;
  /// The alphabet (every symbol is embedded the same way: the language depends on N only).
  std::vector<std::string> alphabet = {"a", "b"};
  /// The RoPE schedule of the head: unset gives C4 on its own periodic table; a periodic one
  /// (periodic_schedule_p) C4 on its block of turn 1/m (periodic_mod_block; Refusal when it
  /// has none); a non-periodic schedule gives C4' (make_bounded_mod_head with atom.C and
  /// atom.policy), exact on words up to its certified range N_max^MOD (THEORY §7 C4').
  std::optional<attention::Schedule> schedule;
  /// The C4' range scan's limit (BoundedModSpec::max_length; 0 = its default).
  std::uint64_t max_length = 0;
};

/// The model and its head.
struct ModModel {
  attention::Model model;
  /// The atom residue the head tests: r for ModReadout::eos, (r + 1) mod m for length.
  std::uint64_t atom_residue = 0;
  /// The C4 head (nullopt for m = 1, where MOD_1^0 = ⊤ needs no attention, and under a
  /// non-periodic schedule).
  std::optional<ModAtomHead> atom;
  /// The C4' head under a non-periodic schedule, with its certified range N_max^MOD.
  std::optional<BoundedModHead> bounded;
};

/// The named residual space of mod_model (d_model = 6), in index order: `top` (⊤, 1 at every
/// token but BOS), `bos`, `mod_head` (the C4 head's output), `count` (the counting head's output
/// 1/#keys), `first` (the first-position flag), `out` (MOD_m^a, a = atom_residue, read by the
/// classifier). The model lists these names as its `coordinates`.
ResidualSpace mod_model_space();

/// Builds the transformer that computes MOD_m^a at every position (a = atom_residue) and
/// accepts by `readout` (THEORY §7 C4; RoPE-X App C.3):
///   layer 1  heads: the C4 head (make_mod_atom_head, reads bos/top, writes mod_head) and a
///            counting head (NoPE, head_dim 1, Q = K = 0 so every visible key scores 0 and
///            gets weight round_F(1/#keys); value 1 at BOS), whose output is 1 exactly when
///            the query sees one key (position 1 sees only BOS) and ≤ 1/2 otherwise;
///            FFN: first = 4·(ReLU(u − 1/2) − ReLU(u − 3/4)) of that output u (1 ↦ 1,
///            [0, 1/2] ↦ 0, THEORY §7 C1 Patch 2), the first-position flag.
///   layer 2  FFN: out = ReLU(head − first) when 1 ≢ a (mod m) (position 1 sees only BOS, so
///            the head reads 1 there and must be switched off), out = ReLU(head) when 1 ≡ a.
///   classifier  out − 1/2 > 0.
/// m = 1: no heads; one FFN layer out = ReLU(⊤), so the model accepts every word (⊤).
/// Embeddings: BOS = e_bos, every symbol and EOS = e_top. Every coordinate is 0 at BOS.
/// Built from the compiler's gadgets over a named residual space (proofs/compiler/gadgets.hpp): the
/// counting head is counting_head, the first-position flag is rebinarise_units with
/// f1 = 1/2, f2 = 3/4 (⊤ in place of a bias, so it is 0 at BOS by construction); the model
/// names its coordinates `top bos mod_head count first out` (run --trace prints them).
/// Throws like make_mod_atom_head (for the length readout the message names m, r and the atom
/// residue), and if m < 1, r ≥ m, F does not hold 1/2, 3/4 and 4 exactly (e.g. fixed point
/// with fewer than 2 fraction bits), or the alphabet is empty or has a bad symbol
/// (attention::Model::validate()).
ModModel mod_model(const ModModelSpec& spec);

/// Checks, before mod_model builds anything, that the MOD_m^r model of `spec` has an f_large
/// (THEORY §1, §7 C4): for m ≥ 2 the head needs a finite score lead f_large(F) under the
/// policy's rounding (m = 1 is ⊤ and needs none). Throws require_f_large's FLargeUndefined
/// (proofs/common/f_large.hpp: "f_large(F) is undefined under rounding R (exp(-f) never rounds up
/// to 0; THEORY §1); use nearest-even, nearest-away, toward-zero or downward", `rounding_name` the
/// spelling of R echoed); returns normally otherwise.
void require_mod_f_large(const ModModelSpec& spec, const std::string& rounding_name);

/// The report of a construction as JSON: `m r atom_residue readout format rounding f_large C
/// C_auto bound` (`bound`: `rounded_up approximate exact finite`), `query_bias` [cos, sin],
/// `b`, `key_weight`, `table` [[cos, sin], ...], `margins` [{`residue bos_wins bos_score
/// other_score margin passes`}], `min_margin`, `candidates_tried`; values are exact decimal
/// strings; for m = 1 only `m r atom_residue readout format note`. Does not print.
nlohmann::json to_json(const ModModel& model, const ModModelSpec& spec);

}  // namespace ropesim::proofs
