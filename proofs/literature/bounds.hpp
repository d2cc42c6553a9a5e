#pragma once
/// Bounds from the RoPE literature, decided exactly and re-evaluated at finite precision
/// (`ropesim table bounds`, docs/BOUNDS.md; THEORY §3 for the schedules, NUMERIC §3 for the
/// realisations).
///
///  * Base of RoPE bounds context length [Men et al. 2024, arXiv 2405.14591: the
///    "long-term decay of the ability to attend more to similar tokens", and Table 1]:
///        B_m(b) = Σ_{i=0}^{D/2-1} cos(m·θ_i),   θ_i = b^(-2i/D),
///    and the lower bound of the base for context length L is the smallest b with
///    B_m(b) ≥ 0 for every m = 0..L. B is not monotone in b, so the bound is searched on a
///    grid of candidate bases (base_grid_value) and every candidate is decided for all
///    m ≤ L (check_base_exact), see base_context_bounds for exactly what is proven.
///  * Critical dimension for extrapolation [Liu et al. 2023, "Scaling Laws of RoPE-based
///    Extrapolation", arXiv 2310.05209, the "critical dimension for extrapolation"]: d_extra =
///    2⌈(d/2)·log_b(T_train/2π)⌉ and T_extra = 2π·b^(d_extra/d) (critical_dimension).
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "numeric/exact_real.hpp"
#include "proofs/common/exact_trig.hpp"

namespace ropesim::proofs {

// ---------------------------------------------------------------------------------------------
// Base of RoPE bounds context length [Men et al. 2024]
// ---------------------------------------------------------------------------------------------

/// The grid of candidate bases: every integer with two significant digits, in increasing
/// order, b = (10 + i mod 90)·10^(i div 90): index 0 → 10, 1 → 11, …, 89 → 99, 90 → 100,
/// 91 → 110, … (the resolution of the paper's Table 1, whose bounds are printed as 4.3e3,
/// 1.6e4, …). Throws InvalidArgument for an index above kMaxBaseGridIndex.
mpz_class base_grid_value(std::uint64_t index);
/// The largest grid index accepted (b up to 9.9·10^19).
inline constexpr std::uint64_t kMaxBaseGridIndex = 90 * 19 - 1;
/// The smallest grid index whose base is ≥ b (b > 0). Throws InvalidArgument if b exceeds the
/// largest grid base.
std::uint64_t base_grid_index_at_least(const mpq_class& b);

/// B_m(b) as a CosineSum: the D/2 blocks θ_i = b^(-2i/D) of conventional:base=b,dim=D, each
/// with weight 1 [Men et al. 2024, B_{m,θ}; THEORY §3]. Throws InvalidArgument unless b > 0
/// and D is even and ≥ 2.
CosineSum base_context_sum(const mpq_class& base, std::size_t dim);

/// What a check decided about one candidate base.
enum class BaseVerdict {
  passes,     ///< B_m ≥ 0 proven for every m = 0..L
  fails,      ///< some m ≤ L with B_m < 0 proven (the witness)
  undecided,  ///< no witness, but some B_m's enclosure still straddles 0 at the precision cap
};
/// "passes", "fails", "undecided".
std::string to_string(BaseVerdict verdict);

/// One candidate base checked for m = 0..L.
struct BaseCheck {
  BaseVerdict verdict = BaseVerdict::passes;
  /// A position m ≤ L with B_m < 0 (fails): the smallest one when the check had no hints;
  /// with hints (positions that rejected earlier candidates, tried first) possibly another
  /// (any witness proves the rejection).
  std::optional<std::uint64_t> witness;
  /// Finite-precision checks only: the witness's sum is NaN (not ≥ 0), not a negative number.
  bool witness_is_nan = false;
  /// Exact checks: positions whose sign the double pre-filter could not decide and that were
  /// decided with MPFR enclosures (CosineSum::compare).
  std::uint64_t refined = 0;
  /// Exact checks: positions still undecided at the precision cap (first few).
  std::vector<std::uint64_t> undecided;
  /// Positions evaluated.
  std::uint64_t evaluated = 0;
};

/// Decides B_m ≥ 0 for m = 0..L exactly. Each m is first evaluated in double with the proven
/// error bound of CosineSum::approximate (B ≥ bound: nonnegative; B ≤ -bound: negative, a
/// witness); the rest are decided by CosineSum::compare (MPFR enclosures refined up to 4096
/// bits). `hints` are positions tried first (witnesses of earlier candidates); the scan then
/// runs m = 0, 1, …, L and stops at the first witness (without hints: the smallest witness).
/// `threads` ≥ 1 split the positions in chunks of 2^14, taken in waves; the witness is the first
/// one in scan order, so neither the verdict nor the witness depends on the thread count.
/// Throws InvalidArgument if threads = 0.
BaseCheck check_base_exact(const CosineSum& sum, std::uint64_t length,
                           std::span<const std::uint64_t> hints = {}, unsigned threads = 1);

/// B_m at finite precision: the realised cosines ĉ_i(m) of every block of `schedule` under
/// `realisation` (attention::realise_block; their format is the realisation's table format
/// F), summed in F sequentially in block order i = 0..D/2-1 (s ← ĉ_0, s ← round_F(s + ĉ_i),
/// round-to-nearest-even, numeric::Arithmetic). Fails at the first m ≤ L whose sum is negative
/// or NaN. `hints` as for check_base_exact. Throws InvalidArgument if the realisation does
/// not apply to the schedule.
BaseCheck check_base_realised(const attention::Schedule& schedule,
                              const attention::Realisation& realisation, std::uint64_t length,
                              std::span<const std::uint64_t> hints = {});

/// B_m at finite precision at one position m: the sum of check_base_realised (realised cosines
/// of every block, attention::realise, summed in the table format F sequentially in block
/// order, round-to-nearest-even). Throws InvalidArgument if the realisation does not apply.
numeric::Value realised_context_sum(const attention::Schedule& schedule,
                                    const attention::Realisation& realisation, std::uint64_t m);

/// The bound for one context length.
struct BaseBound {
  std::uint64_t length = 0;       ///< L
  std::optional<mpz_class> base;  ///< the smallest grid base that passes; nullopt: none
                                  ///< up to the last grid index searched
  std::uint64_t index = 0;        ///< its grid index (or the last index searched)
  /// The grid base just below the answer and the smallest m ≤ L that rejects it (when the
  /// search reached it: not for an answer at `first_index`).
  std::optional<mpz_class> rejected_base;
  std::optional<std::uint64_t> rejected_witness;
  bool rejected_witness_is_nan = false;
  std::vector<mpz_class> undecided;  ///< grid bases below the answer left undecided
  std::uint64_t candidates = 0;      ///< grid bases checked for this length
  std::uint64_t refined = 0;         ///< positions decided by MPFR refinement (exact search)
  double seconds = 0;                ///< wall time (not part of the science)
};

/// Checks one candidate base b for context length L (exact or at finite precision).
using BaseChecker = std::function<BaseCheck(const mpz_class& base, std::uint64_t length,
                                            std::span<const std::uint64_t> hints)>;

/// The smallest grid base passing `check` for every length in `lengths` (ascending, each
/// ≥ 1), searched upwards from grid index `first_index` to `last_index`.
///
/// What is proven: every grid base in [base_grid_value(first_index), answer) was checked and
/// fails (a witness m ≤ L with B_m < 0 — exactly, or in F) or is listed as undecided, and the
/// answer passes for every m = 0..L. Nothing is claimed between grid points (B is not
/// monotone in b: a non-grid base below the answer may pass, and a grid base above it may
/// fail). The search for length L starts at the answer for the previous (shorter) length:
/// a base that fails for L' < L fails for L (the same witness), so no grid base below it can
/// pass. Undecided bases are re-examined for the next length.
std::vector<BaseBound> base_context_bounds(const std::vector<std::uint64_t>& lengths,
                                           const BaseChecker& check, std::uint64_t first_index,
                                           std::uint64_t last_index = kMaxBaseGridIndex);

/// The lower bounds of the base printed in Men et al. 2024, Table 1 (D = 128), for
/// L = 1K, 2K, …, 1M, with K read as 1024 (L = 2^10 … 2^20) or as 1000 (L = 1000·2^k, and
/// 1M = 10^6): the paper's numbers as text ("4.3e3", …), or nullopt for other lengths.
/// Source of the numbers: the paper's row ("b*(原文)") as printed by J. Su, kexue.fm/archives/
/// 10122 (29 May 2024), which reproduces Table 1; docs/BOUNDS.md §1 explains which of them
/// satisfy the paper's own criterion and why the others may not.
std::optional<std::string> paper_base_bound(std::uint64_t length);

/// The head dimension D of Men et al. 2024's Table 1: its printed bases hold for D = 128 only.
inline constexpr std::size_t kPaperBaseDim = 128;

/// The paper's printed base for one context length, read exactly and checked exactly.
struct PaperBase {
  std::string printed;  ///< as printed, e.g. "4.3e3" (paper_base_bound)
  mpq_class value;      ///< its exact value (numeric::parse_decimal_exact), e.g. 4300
  /// check_base_exact of base_context_sum(value, kPaperBaseDim) for m = 0..L: whether the
  /// printed base satisfies the paper's own criterion B_m ≥ 0 (docs/BOUNDS.md §1).
  BaseCheck check;
};

/// The paper's base for context length `length` at rotary dimension `dim`, checked exactly
/// with `threads` workers: nullopt when dim ≠ kPaperBaseDim (the paper printed no other D)
/// or paper_base_bound(length) has no entry. Source: Men et al. 2024 (arXiv 2405.14591),
/// Table 1.
std::optional<PaperBase> check_paper_base(std::uint64_t length, std::size_t dim,
                                          unsigned threads = 1);

// ---------------------------------------------------------------------------------------------
// Critical dimension for extrapolation [Liu et al. 2023]
// ---------------------------------------------------------------------------------------------

/// d_extra and T_extra for base b, rotary dimension d and training length T_train.
struct CriticalDimension {
  mpq_class base;
  std::size_t dim = 0;             ///< d, the rotary dimension (exponent dimension)
  std::uint64_t train_length = 0;  ///< T_train
  double ratio = 0;                ///< (d/2)·log_b(T_train/2π), nearest double (display)
  std::uint64_t d_extra = 0;       ///< 2⌈(d/2)·log_b(T_train/2π)⌉ (decided exactly)
  /// The 0-based block d_extra/2: the first block whose period 2π·b^(2k/d) is ≥ T_train
  /// (nullopt when d_extra ≥ d: every block completes a period within T_train).
  std::optional<std::size_t> block;
  /// T_extra = 2π·b^(d_extra/d) exactly (the period of that block).
  numeric::ExactReal t_extra;
};

/// d_extra = 2⌈(d/2)·log_b(T/2π)⌉ [Liu et al. 2023], the ceiling decided with MPFR
/// enclosures of x = (d/2)·ln(T/2π)/ln b (directed rounding), doubling the precision until
/// no integer lies in the enclosure. This terminates: x is never an integer (x = k would give
/// π^(d/2) = T^(d/2)/(2^(d/2)·b^k), a rational, but π is transcendental). Throws
/// InvalidArgument unless b > 1, d is even and ≥ 2, and T > 2π (T ≥ 7).
CriticalDimension critical_dimension(const mpq_class& base, std::size_t dim,
                                     std::uint64_t train_length);

/// T_train of a model preset for the critical dimension, and where it comes from:
/// `original_max_position_embeddings` for presets with llama3 scaling (the length the unscaled
/// rope_theta was trained at), `max_position_embeddings` otherwise.
struct TrainingLength {
  std::uint64_t length = 0;
  std::string source;  ///< "max_position_embeddings" or "original_max_position_embeddings"
};
TrainingLength training_length(const attention::ModelPreset& preset);

/// The schedule `s` restricted to its block `block` (0-based): the one rotary block as the
/// model computes it (its exact θ, frequency index and the schedule's base, exponent
/// dimension and scaling metadata), no unrotated pairs, spec "<spec>[block k]". For a census
/// of one frequency under any realisation. Throws InvalidArgument for a block out of range.
attention::Schedule restrict_to_block(const attention::Schedule& s, std::size_t block);

// ---------------------------------------------------------------------------------------------
// Semantic drift of the low-frequency channels [Barbero et al. 2024]
// ---------------------------------------------------------------------------------------------

/// The low-frequency "semantic" channels of a schedule: the last ⌈R/4⌉ of its R rotary blocks
/// (the lowest frequencies; exactly the blocks p-RoPE with p = 0.75 sets to θ = 0 [Barbero et
/// al. 2024, "Round and Round We Go", arXiv 2410.06205]). 0-based block indices, ascending.
std::vector<std::size_t> semantic_channels(const attention::Schedule& s);

/// The drift of the score q·R_m k for q = k = the unit first coordinate of every channel block
/// (score S(m) = Σ_{i ∈ channels} cos(m·θ_i), S(0) = |channels|): the smallest m ≤ max_length
/// with S(m) < (1 - tolerance)·|channels|, i.e. the smallest context length at which the
/// channels move the score by more than `tolerance` of its value at m = 0.
struct DriftResult {
  std::optional<std::uint64_t> length;  ///< that m; nullopt: none up to max_length
  std::uint64_t max_length = 0;
  bool nan = false;  ///< finite precision: S(length) is NaN
};

/// Exact drift: each m decided by CosineSum::approximate's proven bound, refined with MPFR
/// (CosineSum::compare) near the threshold. Throws InvalidArgument unless 0 < tolerance < 1
/// and channels index blocks of `s`; std::runtime_error if a position is undecided at 4096
/// bits.
DriftResult semantic_drift_exact(const attention::Schedule& s,
                                 const std::vector<std::size_t>& channels,
                                 const mpq_class& tolerance, std::uint64_t max_length);

/// Drift at finite precision: S(m) = the realised cosines of the channel blocks (attention::
/// realise_block; table format F) summed in F in block order, round-to-nearest-even; drift
/// when S(m) < (1 - tolerance)·|channels| exactly, or S(m) is NaN.
DriftResult semantic_drift_realised(const attention::Schedule& s,
                                    const std::vector<std::size_t>& channels,
                                    const attention::Realisation& realisation,
                                    const mpq_class& tolerance, std::uint64_t max_length);

/// One p of p-RoPE [Barbero et al. 2024 §5, arXiv 2410.06205]: p as the user wrote it and
/// exactly. p-RoPE keeps the highest-frequency fraction p of the blocks and sets the rest to
/// θ = 0 (attention::prope_schedule).
struct PRopeFraction {
  std::string text;  ///< e.g. "0.75"
  mpq_class value;   ///< in [0, 1]
};

/// Reads p-RoPE fractions written as exact decimals or fractions ("0.75", "3/4"). Throws
/// InvalidArgument for a malformed number (naming `what`) or a p outside [0, 1] ("p-RoPE's p
/// must lie in [0, 1] (got 2)").
std::vector<PRopeFraction> parse_prope_fractions(const std::vector<std::string>& texts,
                                                 std::string_view what = "p");

/// One row of the semantic-drift comparison: a schedule (the model's own, or p-RoPE at one p
/// with the model's base and rotary dimension) with its drift over the model's channels.
struct SemanticDriftRow {
  std::string label;  ///< "none" (the model's schedule) or the p as written
  attention::Schedule schedule;
  std::vector<std::size_t> channels;  ///< semantic_channels(model): p-RoPE has the same blocks
  DriftResult exact;                  ///< semantic_drift_exact
  std::vector<DriftResult> realised;  ///< semantic_drift_realised per realisation, in order
};

/// The model's schedule and p-RoPE(base, model.rotary_dim, p) for each p, each with the drift
/// of the model's semantic channels, exactly and under each realisation. `progress`, when
/// set, is called with each row's label before it is computed. Throws InvalidArgument unless
/// 0 < tolerance < 1, or as semantic_drift_exact / prope_schedule do.
std::vector<SemanticDriftRow> semantic_drift_rows(
    const attention::Schedule& model, const mpq_class& base, const std::vector<PRopeFraction>& ps,
    const std::vector<attention::Realisation>& realisations, const mpq_class& tolerance,
    std::uint64_t max_length, const std::function<void(const std::string&)>& progress = {});

}  // namespace ropesim::proofs
