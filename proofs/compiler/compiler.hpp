#pragma once
/// The formula → transformer compiler (THEORY §7 C1, C4; LC25 App B.3; RoPE-X App C.3): an
/// LTL[P,MOD] formula becomes an F-transformer over a residual space with one named coordinate
/// per subformula, built from the gadgets of proofs/compiler/gadgets.hpp, with every constant
/// computed in F and every exactness claim checked on the realised (rounded) model.
///
/// Residual space: `bos` (1 at BOS only), `top` (⊤: 1 at every token but BOS), `sym:a` per
/// alphabet symbol and formula atom, one coordinate per compiled subformula
/// (`f<id>:<text>`; atoms use `sym:a`, ⊤ and mod(1,0) use `top`), `raw:<id>` for a head's
/// output before re-binarisation / correction, and `count` (the counting head) when the formula
/// has a MOD atom with m ≥ 2. Embeddings: BOS = e_bos, symbol a = e_top + e_sym:a, EOS = e_top.
///
/// Layers (the ASAP layer plan over the DAG): in each layer the attention sublayer holds a head
/// for every Pψ, Y^kψ and MOD node whose operands are ready (a Y^k node also waits for its gate),
/// and the FFN re-binarises those heads (P), gates them (Y^k), applies the first-position
/// correction (MOD) and computes every Boolean node whose operands were ready when the layer
/// began (one ReLU level). Classifier: root − 1/2 > 0 at EOS.
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
///   - Y^k ψ (C5, a BOUNDED operator): the fixed-offset head of proofs/range/fixed_offset_head.hpp
///     (single:g=1, realisation r1, C = auto as `ropesim horizon` chooses it) reads ψ and
///     writes raw:<id>; the gate P^k⊤ (k P heads, added to the DAG) switches it off at i ≤ k:
///     out = ReLU(raw + 2·P^k⊤ − 2·⊤). Exact only for words of length ≤ N_max^(k) (the head's
///     certified range, THEORY §6), which bounds certified_length.
/// Not compiled (refused with one line): `S` (not in LTL[P,MOD]); summation policies other than
/// sequential (the P-head certificate is derived for sequential sums).
///
/// Passes (STYLE: Tracr's program → graph → components → assembled model), each in its file:
///   plan      formula → layer plan over named subformulas and residual coordinates
///             (proofs/compiler/layer_plan.hpp);
///   certify   each component's certificate at F: the P-head certificate
///             (proofs/compiler/past_component.hpp), the Y^k head's certified range
///             (proofs/compiler/offset_component.hpp), the MOD head's realised margins
///             (make_mod_atom_head);
///   components  one file per construction, each producing components over named coordinates:
///             P head (past_component), MOD atom and counting head (mod_component), Y^k head
///             (offset_component), Boolean FFN (boolean_component);
///   assemble  components → attention::Model (proofs/compiler/compiler_assemble.hpp), then the
///   LayerNorm
///             mirror (proofs/compiler/layer_norm_mirror.hpp) when asked;
///   report    the description, certificates and certified length derived from the component
///             list, and its JSON (proofs/compiler/compiler_report.hpp).
/// compiler.cpp is the driver that runs them; a refusal is retried in the preset formats for the
/// hint (proofs/compiler/compiler_hint.hpp).
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attention/transformer/model_spec.hpp"
#include "attention/transformer/transformer.hpp"
#include "core/budget.hpp"
#include "logic/formula.hpp"
#include "proofs/common/residual_space.hpp"
#include "proofs/compiler/component.hpp"
#include "proofs/compiler/layer_norm_mirror.hpp"
#include "proofs/compiler/mod_atom.hpp"
#include "proofs/compiler/past_component.hpp"

namespace ropesim::proofs {

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
  /// The RoPE schedule of every MOD atom (THEORY §7 C4, C4'): unset (the default) gives C4's
  /// exact head on its own periodic table; periodic (every block a rational turn,
  /// periodic_schedule_p) C4 on its block of turn 1/m, or a Refusal(mod_period) naming the
  /// schedule's turns when it has none (periodic_mod_block); a non-periodic schedule gives C4', the
  /// residue test on the block of that schedule nearest a turn 2πa/m, exact only up to its
  /// certified range N_max^MOD (which then bounds certified_length), or a Refusal(mod_schedule)
  /// when no block certifies a range ≥ 2m. `ropesim compile --schedule S` sets both offset_schedule
  /// and mod_schedule: one schedule for every rotary head.
  std::optional<attention::Schedule> mod_schedule;
  /// L_max of every Y^k head's range scan (HorizonSpec::max_length; 0 = horizon's default) and of
  /// every C4' head's (BoundedModSpec::max_length; 0 = kBoundedModMaxLength).
  /// The refusal hint's trial compilations cap it (kHintScanLength) so that a hint costs
  /// seconds, not the minute a full fp64 scan takes.
  std::uint64_t offset_max_length = 0;
  /// Called now and then with (counts certified, certify_limit) while P heads are certified
  /// (the long part of `compile --certify N`); unset: no calls. Output does not depend on it.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  /// The largest model compile() builds (core/budget.hpp): at most max_model_numbers
  /// numbers as `ropesim run` counts them (attention::spec_number_count) and at most
  /// max_spec_bytes of spec text (attention::spec_min_bytes before building, the written text
  /// after), i.e. a model `ropesim run` loads without --allow-large.
  std::uint64_t max_model_numbers = kMaxModelNumbers;
  std::uint64_t max_spec_bytes = kMaxInputFileBytes;
};

/// The model compile() would build, estimated from the formula's DAG alone in time linear in
/// its size (no constant is computed): d_model, layers (the ASAP layer plan's depth), the heads'
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
  /// The C4' heads (MOD atoms under a non-periodic mod_schedule), in layer order, with their
  /// certified ranges N_max^MOD.
  std::vector<BoundedModHead> bounded_mod_heads;
  /// The bounded Y^k heads (C5), in layer order: subformula, k, C and N_max^(k).
  using BoundedHead = proofs::BoundedHead;
  std::vector<BoundedHead> bounded_heads;
  /// The word length up to which every coordinate is certified exact: the minimum of the P
  /// heads' certified count, the Y^k heads' N_max^(k) and the C4' heads' N_max^MOD (nullopt =
  /// every length).
  std::optional<std::uint64_t> certified_length;
  /// True when certified_length is where a check stopped at its limit without a failure (the
  /// binding range scan's max_length, or the P head's last checked count): the model may be
  /// exact further, and a larger limit may certify more. False when a failure sets it.
  bool certified_length_at_limit = false;
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
/// margin, per-residue margins), the certified length (null = every length) and
/// certified_length_at_limit. Values are exact
/// decimal strings. Does not print.
nlohmann::json to_json(const CompiledModel& compiled);

}  // namespace ropesim::proofs
