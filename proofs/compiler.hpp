#pragma once
/// The formula → transformer compiler (THEORY §7 C1, C4; LC25 App B.3; RoPE-X App C.3): an
/// LTL[P,MOD] formula becomes an F-transformer over a residual space with one named coordinate
/// per subformula, built from the gadgets of proofs/gadgets.hpp, with every constant computed
/// in F and every exactness claim checked on the realised (rounded) model.
///
/// Residual space: `bos` (1 at BOS only), `top` (⊤: 1 at every token but BOS), `sym:a` per
/// alphabet symbol and formula atom, one coordinate per compiled subformula
/// (`f<id>:<text>`; atoms use `sym:a`, ⊤ and mod(1,0) use `top`), `raw:<id>` for a head's
/// output before re-binarisation / correction, and `count` (the counting head) when the formula
/// has a MOD atom with m ≥ 2. Embeddings: BOS = e_bos, symbol a = e_top + e_sym:a, EOS = e_top.
///
/// Layers (ASAP schedule over the DAG): in each layer the attention sublayer holds a head for
/// every Pψ / MOD node whose operand is ready, and the FFN re-binarises those heads (P), applies
/// the first-position correction (MOD) and computes every Boolean node whose operands were
/// ready when the layer began (one ReLU level). Classifier: root − 1/2 > 0 at EOS.
///
/// Exactness (THEORY §7 C1): every subformula coordinate is exactly 0 or 1 at every token and
/// exactly 0 at BOS, for every word of length ≤ certified_length:
///   - Boolean gadgets: integer sums of {0,1} values, exact in every binary format with p ≥ 2;
///   - Pψ head: the scores are f_large·ψ_j, so the non-ψ keys get weight exactly 0 (definition
///     of f_large) and the output h depends only on the number c of earlier ψ positions; the
///     compiler computes h(c) in F for every c (certify_past_head) and evaluates the realised
///     re-binarisation FFN on every distinct h, accepting a length only if all give exactly 1.
///     Patch 1 of C1 (also computing P(ψ ∧ Pψ) when every weight underflows) is not needed
///     under sequential summation: Z_c stops growing at most at 2^p (THEORY §1), so the weight
///     round_F(1/Z_c) ≥ 2^−p never underflows, and once Z_c and h(c) stop changing the
///     certificate covers every length (fp16 and bf16 reach that point; fp32 and fp64 are
///     certified up to the checked count). A failing count would lower certified_length (and
///     refuse at count 1) rather than add the patch;
///   - MOD head: the realised margins of every residue (make_mod_atom_head); the counting head
///     gives exactly 1 at position 1 and ≤ 1/2 later (Z ≥ 2 under sequential summation).
///   - Y^k ψ (C5, a BOUNDED operator): the fixed-offset head of proofs/fixed_offset_head.hpp
///     (single:g=1, realisation r1, C = auto as `ropesim horizon` chooses it) reads ψ and
///     writes raw:<id>; the gate P^k⊤ (k P heads, added to the DAG) switches it off at i ≤ k:
///     out = ReLU(raw + 2·P^k⊤ − 2·⊤). Exact only for words of length ≤ N_max^(k) (the head's
///     certified range, THEORY §6), which bounds certified_length.
/// Not compiled (refused with one line): `S` (not in LTL[P,MOD]); summation policies other than
/// sequential (the P-head certificate is derived for sequential sums).
#include <gmpxx.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attention/model_spec.hpp"
#include "attention/transformer.hpp"
#include "logic/formula.hpp"
#include "numeric/budget.hpp"
#include "proofs/mod_atom.hpp"
#include "proofs/residual_space.hpp"

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

/// What to compile.
struct CompileOptions {
  attention::EvaluationPolicy policy;  ///< F, rounding, summation (sequential only)
  /// Counts checked by certify_past_head (the certified word length of P heads is at most
  /// this unless h(c) provably stagnates first).
  std::uint64_t certify_limit = 10000;
  /// On refusal, search the presets (fp8e4m3, fp8e5m2, bf16, fp16, tf32, fp32, fp64) for the
  /// smallest that compiles the formula, and name it in the message.
  bool suggest_format = true;
  /// Post-LN with the LayerNorm mirror (THEORY §2 post-LN, §7 C1 "add a mirror 1 − x for every
  /// coordinate so LN can be the identity"): see LayerNormMirror. Off: no LayerNorm.
  bool layer_norm = false;
  /// The RoPE schedule of every Y^k head (THEORY §6, C5): single:g=1 by default (the weakest
  /// conventional head, one frequency of 1 rad per position); any schedule `horizon` accepts
  /// (a model preset, conventional:base=B,dim=D, hf-config:PATH; one position axis) gives a
  /// multi-frequency head with equal weights, certified by the same range scan. Must have at
  /// least one rotary block.
  attention::Schedule offset_schedule = attention::single_schedule(1);
  /// L_max of every Y^k head's range scan (HorizonSpec::max_length); 0 = horizon's default.
  /// The refusal hint's trial compilations cap it (kHintScanLength) so that a hint costs
  /// seconds, not the minute a full fp64 scan takes.
  std::uint64_t offset_max_length = 0;
  /// Called now and then with (counts certified, certify_limit) while P heads are certified
  /// (the long part of `compile --certify N`); unset: no calls. Output does not depend on it.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  /// The largest model compile() builds (numeric/budget.hpp): at most max_model_numbers
  /// numbers as `ropesim run` counts them (attention::spec_number_count) and at most
  /// max_spec_bytes of spec text (attention::spec_min_bytes before building, the written text
  /// after), i.e. a model `ropesim run` loads without --allow-large.
  std::uint64_t max_model_numbers = kMaxModelNumbers;
  std::uint64_t max_spec_bytes = kMaxInputFileBytes;
};

/// The model compile() would build, estimated from the formula's DAG alone in time linear in
/// its size (no constant is computed): d_model, layers (the ASAP schedule's depth), the heads'
/// head_dim/value_dim and the hidden units. Exact for a model without the LayerNorm mirror
/// (the compiler's layout: bos, top, sym:a, per P/MOD/Y^k node a coordinate and a raw one, per
/// Boolean node one, count with a MOD atom; the gates P^j⊤ of Y^k nodes included); with
/// layer_norm a lower bound (2·d_model, no padding). Numbers are doubles: a formula such as
/// Y^18446744073709551615 a has an estimate but no model.
struct CompileEstimate {
  attention::ModelShape shape;
  double numbers = 0;    ///< attention::spec_number_count(shape)
  double min_bytes = 0;  ///< attention::spec_min_bytes(shape)
  /// The largest modulus m of a mod(m,r) atom (0 if none) and the atom's text.
  std::uint64_t largest_modulus = 0;
  std::string largest_modulus_atom;
  /// True when the model has P heads (P nodes, or the gates P^j⊤ of Y^k nodes), so that
  /// compile() runs certify_past_head.
  bool past_heads = false;
};
CompileEstimate estimate_compile(const ltl::Formula& formula,
                                 const std::vector<std::string>& alphabet,
                                 const CompileOptions& options);

/// Throws BudgetExceeded (one line naming the formula, the estimate and the limit) when a
/// mod(m,r) atom has m > kMaxModulus or the estimated model exceeds options.max_model_numbers
/// or options.max_spec_bytes. compile() calls it before building anything.
void check_compile_budget(const ltl::Formula& formula, const std::vector<std::string>& alphabet,
                          const CompileOptions& options);

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

/// One head or FFN of a compiled layer, described by the named coordinates it reads and writes.
struct GadgetDescription {
  std::string kind;  ///< "P", "MOD", "Y^k", "count", "not", "and", "or", "rebinarise",
                     ///< "first-position", "gate"
  std::string node;  ///< the subformula it computes (empty for count)
  std::vector<std::string> reads;
  std::vector<std::string> writes;
  nlohmann::json constants;  ///< exact decimal strings
};

/// A compiled layer.
struct LayerDescription {
  std::vector<GadgetDescription> heads;
  std::vector<GadgetDescription> ffn;
};

/// The compiler's result.
struct CompiledModel {
  attention::Model model;
  ResidualSpace space;
  std::string formula;  ///< the formula's text (ltl::to_string)
  std::vector<std::string> alphabet;
  /// Per NodeId, the coordinate holding the subformula (empty for nodes the root does not reach).
  std::vector<std::string> node_coordinates;
  std::vector<LayerDescription> layers;
  numeric::Value f_large;
  /// Present when the formula has a P node.
  std::optional<PastCertificate> past;
  /// The C4 heads, in node order.
  std::vector<ModAtomHead> mod_heads;
  /// A bounded Y^k head (C5): its subformula, k, C and certified range N_max^(k).
  struct BoundedHead {
    std::string node;
    std::uint64_t k = 1;
    numeric::Value C;
    std::uint64_t n_max = 0;
    bool at_limit = false;  ///< the range scan stopped at its length limit (N_max ≥ n_max)
  };
  std::vector<BoundedHead> bounded_heads;
  /// The word length up to which every coordinate is certified exact (nullopt = every length).
  std::optional<std::uint64_t> certified_length;
  /// Present when compiled with CompileOptions::layer_norm.
  std::optional<LayerNormMirror> layer_norm;
};

/// Compiles `formula` over `alphabet` (symbols; formula atoms outside it are false everywhere)
/// into an F-transformer under options.policy (see the file comment). Throws InvalidArgument
/// with one line when: the alphabet is empty or repeats a symbol; the formula uses S; a Y^k
/// head certifies no length ≥ k;
/// the policy is not sequential; F lacks f_large (round-up) or one of the exact constants
/// 1/4, 1/2, 4 of the gadgets; with layer_norm, a check of the LayerNorm mirror fails (F is
/// fixed point, d_model > 2^p, an absorption or a head-output image fails: the message names it); a
/// MOD head fails its realised margins (make_mod_atom_head's message); the P head's re-binarisation
/// fails at some count ≤ 1. With suggest_format the message ends with the smallest preset format
/// that compiles the formula (or says none does). Throws BudgetExceeded (an InvalidArgument, never
/// retried in other formats) before building when check_compile_budget refuses, and after building
/// when the model's exact spec_number_count exceeds options.max_model_numbers (the writer checks
/// the text's size).
CompiledModel compile(const ltl::Formula& formula, const std::vector<std::string>& alphabet,
                      const CompileOptions& options);

/// The compiler's report (for --explain and the model file's "_construction"): formula,
/// alphabet, format, rounding, f_large, coordinates (names in index order), node coordinates,
/// layers (per head / FFN gadget: kind, node, reads, writes, constants), the P-head
/// certificate, the bounded Y^k heads (node k C n_max at_limit), the MOD heads (m, r, C, min
/// margin, per-residue margins) and the certified length (null = every length). Values are exact
/// decimal strings. Does not print.
nlohmann::json to_json(const CompiledModel& compiled);

}  // namespace ropesim::proofs
