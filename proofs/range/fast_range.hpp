#pragma once
/// The certified range N_max^(k) of a fixed-offset head without the quadratic scan
/// (THEORY §6, RoPE-X eq. 10): only competitors whose ideal score comes within
/// f_large + 2E of the target's can break the gap, E a rigorous bound on the rounding error of
/// every realised score. Their offsets n are the near-returns of n·θ modulo 2π (one frequency)
/// or the offsets where S(n) comes close to S(0) (several frequencies); they are enumerated,
/// their realised scores evaluated exactly in F (the same arithmetic as the scan), and every
/// other competitor is proven safe by the bound.
///
/// Soundness argument (the domain is chosen so that each step holds):
///  1. Every realised score is within E of its ideal value: |Ŝ_{i,j} − C·S(i−k−j)| ≤ E for all
///     i, j ≥ 0, where C is C in F and S(n) = Σ_d w_d·cos(n·θ_d) over the B rotary blocks
///     (realised_score_error_bound: a forward error analysis in exact rationals with
///     |round(x) − x| ≤ ε|x| + η for every x of magnitude ≤ max finite, applied to every
///     rounding of the realisation, rotation and dot product, the latter in the policy's own
///     summation order over all head_dim terms; unrotated pairs are zero in q and k and add
///     exactly 0; no intermediate can overflow, so no score is ±inf or NaN). The bound holds
///     for every position because r1 and r3 round cos and sin of the exact angle once: r2
///     forms the angle in F, whose error grows with the position, so it keeps the scan.
///     Pipelines (`hf`: the angle in fp32) have no E either; for them the per-query bounds
///     (THEORY §6 "Pipelines") use the measured deviation of every realised key from
///     (cos jθ_d, sin jθ_d), maximised over the keys a query sees, every offset is a
///     candidate, and the per-query thresholds alone exclude competitors.
///  2. Hence for a competitor at offset n ≠ 0, Ŝ_{i,i−k} − Ŝ_{i,j} ≥ C·(S(0) − S(n)) − 2E, which
///     is ≥ f_large when S(n) ≤ T = S(0) − (f_large + 2E)/C: such a competitor never breaks the
///     gap of any query. The other offsets (S(n) > T, or undecided) are the candidates.
///  3. The candidates are found by a binary64 pre-filter with a proven error margin
///     (over-inclusive) — on ||n·θ/2π|| for one block with w > 0, on S(n) itself (a filtered
///     scan, O(B) per offset) otherwise — then decided exactly (CosineSum::compare).
///  4. At a failing query the scan's witness (the largest competitor score, first j on ties)
///     has a gap < f_large; every non-candidate has gap ≥ f_large, so a strictly smaller score:
///     the witness is the largest candidate score, first j on ties. So N_max, the failing
///     query, competitor, offset, gap and both scores equal the scan's.
/// When E is large (e.g. fp16 with 64 blocks) almost every offset is a candidate and the
/// work approaches the scan's (never more than it, plus the O(B) filter per offset); the
/// result is the same either way, so there is no separate fall-back.
#include <gmpxx.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proofs/range/fixed_offset_head.hpp"

namespace ropesim::proofs {

/// Default L_max of the candidate algorithm for one rotary block when the caller gives none:
/// 10^7 positions. With B blocks the quick limit is 64·10^6/B positions (realising a position
/// costs about B correctly rounded cos/sin pairs): 10^6 for the 64 blocks of llama2-7b and
/// llama3, about a minute on one thread (docs/PERFORMANCE.md).
inline constexpr std::uint64_t kFastRangeDefaultLength = 10'000'000;
/// Realised (position, block) pairs in the candidate algorithm's quick limit.
inline constexpr std::uint64_t kFastRangeQuickPairs = 64'000'000;

/// The candidate algorithm's quick limit for `head`: min(kFastRangeDefaultLength,
/// kFastRangeQuickPairs/B), B the rotary blocks (10^7 for one block, 10^6 for the 64 blocks of
/// llama2-7b). For several frequencies (or w ≤ 0) it
/// is lowered where the candidates are dense: with ρ the fraction of candidate offsets among
/// the first min(limit, 250000), the work is about ρ·L²/2 scores, capped as the scan's:
/// L ≤ max(Ls, Ls/sqrt(ρ)), Ls = scan_length_limit(head) (large E, e.g. fp16 with many
/// blocks and a large C, makes almost every offset a candidate: then L = Ls, as the scan).
/// Cost: the candidate pre-filter over the probe (O(B) binary64 operations per offset).
std::uint64_t fast_range_length_limit(const FixedOffsetHead& head);

/// Why certified_range_fast does not apply to `head`, or std::nullopt when it does. The
/// domain: any schedule (one or several rotary blocks, unrotated pairs as zero coordinates,
/// any weights w_d), realisation r1 or r3 (cos and sin of the exact angle correctly rounded
/// into F; rotation in F with THEORY §2.1's arithmetic) or a pipeline whose table, rotation
/// and output are the activation format F (`hf`, `resonance-table`: measured key deviations,
/// THEORY §6 "Pipelines"), F a floating format whose values are doubles
/// (Format::fits_double), sequential / pairwise / wide-accumulator (floating A) / exact
/// summation, no score scale, and no intermediate of the error analysis able to overflow (C
/// small enough; for pipelines with table entries up to detail::table_bound). Outside it (r2,
/// whose angle error grows with the position; pipelines with an fp32 table or rotation such as
/// llamacpp-cpu; fixed point; p > 53) the scan is used.
std::optional<std::string> fast_range_refusal(const FixedOffsetHead& head);

/// E: a rigorous bound on |Ŝ_{i,j} − C·S(i−k−j)| over all positions i, j (exact rational),
/// from the forward error analysis described above; std::nullopt outside the domain of
/// fast_range_refusal and for pipelines (no position-independent bound exists: their keys'
/// deviations are measured). Per rounding into a floating format of precision p with smallest
/// normal 2^emin: ε = 2^-p, η = 2^(emin−p) (nearest) or ε = 2^(1−p), η = 2^(emin−p+1)
/// (directed), η = 2^emin without subnormals.
std::optional<mpq_class> realised_score_error_bound(const FixedOffsetHead& head);

/// The candidate offsets n, 1 ≤ n ≤ max_offset, for which S(n) > S(0) − (f_large + 2E)/C is
/// not excluded (sorted increasing; S is even, so −n is a candidate iff n is). Cost
/// O(B·max_offset) binary64 operations (B rotary blocks) plus an exact decision per n
/// within the pre-filter's margin (one block with w > 0: ||n·θ/2π|| against arccos of the
/// threshold; otherwise S(n) evaluated in binary64 with |S̃(n) − S(n)| ≤ 2·(W·(2^-50 +
/// (B+3)·2^-53) + n·Σ_d |w_d|·(e_d + 2^-53·|θ̂_d|)), W = Σ|w_d|, e_d the error of θ_d's
/// double θ̂_d, assuming the libm cos errs by ≤ 2^-50). Throws InvalidArgument outside the
/// domain.
std::vector<std::uint64_t> candidate_offsets(const FixedOffsetHead& head, const mpq_class& E,
                                             std::uint64_t max_offset);

/// The certified range by the candidate algorithm (see the file comment): the same
/// CertifiedRange as certified_range(head, options) — n_max, at_limit, the failure witness
/// and scores — except that `smallest_passing_gap` is left unset, `algorithm` is
/// "candidates" and `scores_evaluated` counts the scores actually evaluated. Cost: one
/// realisation and two rotations per block and position up to min(N_max, max_length) + 2,
/// O(B) binary64 operations per offset (candidate_offsets), plus one score per (query,
/// active candidate offset), and the realisation of older keys a candidate offset needs. Throws
/// InvalidArgument outside the domain (fast_range_refusal's reason) and unless
/// 1 ≤ max_length ≤ kMaxScanLength.
///
/// How (THEORY §6 unchanged; only the order of work differs from a plain one-thread loop over
/// the queries, which tests/proofs/fast_range_reference.hpp keeps as the second implementation
/// every field is compared with): the
/// positions are taken in chunks, each chunk's rotations realised once (realise_block per
/// block over the chunk) and its queries and keys formed from the position-independent biases
/// (binary64 with exact re-rounding into F where NUMERIC §2 allows, attention::rotate
/// otherwise); the chunks of a batch run on `options.threads` threads (numeric::parallel_for,
/// in position order; once a chunk fails the later chunks of its batch stop, their work being
/// speculative) and the first failing query in position order is taken, so the result does not
/// depend on the thread count. Keys are kept up to 256 MB; the keys of older positions that a
/// candidate offset needs are realised again, one window of positions per chunk and offset. Memory:
/// at most 256 MB of keys plus the batch's buffers and 8 bytes per candidate offset, whatever
/// max_length is.
CertifiedRange certified_range_fast(const FixedOffsetHead& head, const ScanOptions& options = {});

/// What certified_range_fast is expected to cost up to max_length (no failing query before
/// it: an early failure stops sooner).
struct RangeEstimate {
  double seconds = 0;               ///< wall seconds on the given threads
  double bytes = 0;                 ///< peak memory of keys, queries and candidate offsets
  double seconds_per_position = 0;  ///< measured: realisation and both rotations, one thread
  double candidate_density = 0;     ///< candidate offsets (global E) per offset over the probe
  double scored_density = 0;        ///< offsets above the probe's per-query threshold
  double scores = 0;                ///< expected scores (targets and competitors)
  bool fails_in_probe = false;      ///< a query of the probe fails: the run stops there
  double seconds_per_offset = 0;    ///< measured: candidate filter and u(n) per offset
};

/// Estimates certified_range_fast(head, {max_length, threads}) from a probe measured now:
/// the realisation and rotation of the first 256 positions (timed); their queries' per-query
/// thresholds σ_i (THEORY §6) and every competitor of theirs scored (timed, and whether one
/// already fails); the time of a score through the kernel the algorithm uses (Binary32Dot's
/// dot8 where it applies); the candidate offsets among the first min(max_length, 20000) and
/// those with u(n) above the probe's smallest σ. Then scores ≈ L + Σ_n (L − k − n) over those
/// offsets, plus their density over the probe's second half times (L − 20000)²/2 beyond it;
/// seconds ≈ [L·(t_position + t_offset + t_query + density·t_split) + scores·t_score + keys
/// realised again] / threads (t_query: the query's error bounds err_i and R_i; t_split: the
/// split bound's A(n) of one candidate offset, timed on up to 1024 of the probe's candidates,
/// since the run computes it for every candidate offset), or only the probe's when a probe
/// query fails. bytes ≈ min(L, K)·8·head_dim + the batch's
/// buffers + 16·L (offset index and counts). Cost: a few hundredths of a second for llama2-7b.
/// Throws InvalidArgument outside the domain (fast_range_refusal's reason).
RangeEstimate estimate_certified_range_fast(const FixedOffsetHead& head, std::uint64_t max_length,
                                            unsigned threads);

}  // namespace ropesim::proofs
