#pragma once
/// The fixed-offset head Y^k and its certified range (THEORY §6; construction C5 of §7;
/// [RoPE-X] App D and eq. 10).
///
/// The head: Q = K = 0; on each rotary block d the query bias is
/// (round_F(C·w_d·cos kθ_d), round_F(−C·w_d·sin kθ_d)), each rounded once from the exact real,
/// and the key bias (1, 0), so that q_i = R̂_i(b_q) and k_j = R̂_j(1, 0) is the realised
/// rotation's first column. In exact arithmetic Ŝ_{i,j} = q_i·k_j = C·Σ_d w_d cos(θ_d(i−k−j)),
/// maximal at j = i − k. One block with w = 1 and θ = g is the single-frequency Y^k head of
/// RoPE-X App D; several blocks with weights w_d give the multi-frequency ("diagonal")
/// positional head of THEORY §6 / [RRWG Thm 5.3].
///
/// Certified range N_max^(k) [RoPE-X eq. 10; THEORY §6]: the largest L such that for every
/// query k+1 ≤ i ≤ L+1 the realised score of j = i − k exceeds every other realised score
/// Ŝ_{i,j}, 0 ≤ j < i, j ≠ i − k, by at least f_large(F) (the gap is the exact real difference
/// of two elements of F). Then stable softmax puts weight exactly 1 on j = i − k (THEORY §1),
/// and Cor 4.1 gives L-simulation of Y^k for k ≤ L ≤ N_max.
#include <gmpxx.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "attention/transformer/transformer.hpp"
#include "numeric/binary64_rounding.hpp"
#include "numeric/format.hpp"
#include "numeric/summation.hpp"
#include "numeric/value.hpp"
#include "proofs/common/exact_trig.hpp"
#include "proofs/common/residual_space.hpp"

namespace ropesim::proofs {

/// What to build: the head's frequencies, weights, scale, offset, realisation and policy.
struct FixedOffsetSpec {
  /// The rotary blocks of the head: `single:g=G` for the Y^k head of frequency g; any
  /// schedule (e.g. a model preset) for a multi-frequency head. Unrotated pairs of the
  /// schedule are kept as zero coordinates.
  attention::Schedule schedule = attention::single_schedule(1);
  /// w_d per rotary block (exact); empty = equal weights 1/B over the B blocks, so that the
  /// ideal score at offset 0 is C in every case.
  std::vector<mpq_class> weights;
  /// The scale C (exact rational); rounded once into F with the policy's rounding.
  mpq_class C = 1;
  /// The offset k ≥ 1.
  std::uint64_t k = 1;
  /// Realisation spec (attention::parse_realisation), parsed with the policy's F, rounding
  /// and engine (its FormatBinding).
  std::string realisation = "r1";
  /// F, rounding, summation (THEORY §2.1). Default: fp32, nearest-even, sequential.
  attention::EvaluationPolicy policy;
};

/// Where the head reads ψ and writes its output, by name in a model's residual space (one
/// value coordinate; THEORY §7 C1: gadgets address named coordinates, never indices). The head's
/// matrices have space.size() columns (d_model). The default is a stand-alone head: a
/// one-coordinate space `psi` that is both the source and the target.
struct HeadWiring {
  ResidualSpace space{"psi"};
  std::string value_source = "psi";   ///< the coordinate holding ψ (0 at BOS)
  std::string output_target = "psi";  ///< the coordinate receiving the head's output
};

/// The constructed head and everything the scans need.
struct FixedOffsetHead {
  attention::AttentionHead head;  ///< Q = K = 0, biases as above, V selects ψ, 1 value dim
  attention::EvaluationPolicy policy;
  /// Parsed from policy's FormatBinding (attention::parse_realisation(spec, policy)), so its
  /// F, rounding and engine are the policy's by construction.
  attention::Realisation realisation;
  attention::Schedule schedule;
  std::uint64_t k = 1;
  numeric::Value C;        ///< C rounded into F (finite, > 0)
  mpq_class C_exact;       ///< its exact value
  numeric::Value f_large;  ///< f_large(F) under the policy's rounding
  mpq_class f_large_exact;
  CosineSum ideal;  ///< S(n)/C = Σ_d w_d cos(θ_d·n)
};

/// Builds the head (THEORY §6; RoPE-X App D).
/// Throws ropesim::InvalidArgument (one line) if k < 1; C ≤ 0 or C not finite once rounded
/// into F; f_large(F) is undefined under the rounding (round-up); the realisation spec is
/// unknown or does not apply to the schedule; the schedule has no rotary block; the weights
/// do not match the blocks; the wiring names a coordinate its space lacks.
FixedOffsetHead make_fixed_offset_head(const FixedOffsetSpec& spec, const HeadWiring& wiring = {});

/// round_F(C), the scale C (exact rational > 0) rounded once into `binding`'s F under its
/// rounding (THEORY §6: the head's scale is an element of F), when that is finite. Throws
/// ropesim::InvalidArgument otherwise, with the one line "C = <C_text> is not finite in <F>
/// (largest finite <max F, 9 digits>); accepted: a positive decimal or 'auto'" (C_text is the
/// user's spelling of C; 'auto' is HorizonSpec::auto_C). A saturating F (fp8e4m3) rounds every
/// C to a finite value and never refuses.
numeric::Value require_finite_scale(const mpq_class& C, const numeric::FormatBinding& binding,
                                    const std::string& C_text);

/// The binary64 score kernel: Ŝ = q·k under the head's policy, computed by
/// numeric::Binary64Dot (binary64 and re-rounding into F and A, bit for bit the value of
/// attention::head_score wherever it is built: round-to-nearest-even, floating formats inside
/// binary64 with p ≤ 25 or binary64 itself, sequential / pairwise / wide-accumulator sums;
/// NUMERIC §2). Used by RealisedScores and the candidate algorithm (certified_range_fast).
class ScoreKernel {
 public:
  /// The kernel for `head`'s policy, or std::nullopt where it is not exact (exact
  /// summation, a scaled head, another rounding, a format outside the domain above).
  static std::optional<ScoreKernel> make(const FixedOffsetHead& head);
  /// Ŝ = q·k for q, k of length `dim` ≥ 1 (elements of F as doubles).
  double dot(const double* q, const double* k, std::size_t dim) const { return dot_(q, k, dim); }
  /// out[t] = dot(q, ks + t·stride, dim) for t < count (numeric::Binary64Dot::dots: in lanes
  /// under sequential summation, the same values).
  void dots(const double* q, const double* ks, std::size_t stride, std::size_t count,
            std::size_t dim, double* out) const {
    dot_.dots(q, ks, stride, count, dim, out);
  }

 private:
  explicit ScoreKernel(const numeric::Binary64Dot& dot) : dot_(dot) {}
  numeric::Binary64Dot dot_;
};

/// The realised rotations, queries, keys and scores of a head at positions [0, P), grown on
/// demand. Scores use the policy's dot product (attention::head_score); when the policy's
/// format and summation allow it, a binary64 kernel computes the same bits much faster
/// (round-to-nearest-even, floating formats inside binary64 with p ≤ 25 or binary64 itself,
/// sequential / pairwise / wide-accumulator sums: exact products, innocuous double rounding of
/// sums, NUMERIC §2). Tests cross-check both bit for bit.
class RealisedScores {
 public:
  /// `use_fast_kernel = false` forces the reference path (attention::head_score). Keeps a
  /// pointer to `head`, which must outlive this object.
  explicit RealisedScores(const FixedOffsetHead& head, bool use_fast_kernel = true);
  ~RealisedScores();
  RealisedScores(const RealisedScores&) = delete;
  RealisedScores& operator=(const RealisedScores&) = delete;

  /// Realises positions [0, positions) (no-op if already there). Cost: realise_block per
  /// block plus one rotation of each bias per position.
  void ensure(std::uint64_t positions);
  /// Positions realised so far.
  std::uint64_t positions() const;
  /// ensure() grows geometrically; it never realises more than max(requested, `positions`)
  /// once this is set (the scan sets it to max_length + 2).
  void set_growth_limit(std::uint64_t positions);
  /// True when the binary64 kernel is used.
  bool fast() const;
  /// Ŝ_{i,j} = q_i·k_j (i, j < positions()), through the kernel when fast().
  numeric::Value score(std::uint64_t i, std::uint64_t j) const;
  /// Ŝ_{i,j} through attention::head_score (always the reference path).
  numeric::Value reference_score(std::uint64_t i, std::uint64_t j) const;
  /// q_i and k_j (head_dim values of F).
  const std::vector<numeric::Value>& query(std::uint64_t i) const;
  const std::vector<numeric::Value>& key(std::uint64_t j) const;

  /// Internal state (kernel, storage); opaque.
  struct State;
  /// Internal access for the scan.
  const State& state() const { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

/// The largest L_max a scan accepts (2^32 − 1): positions 0..L_max+1 are realised, so every
/// position index stays far from 2^64 (a larger request wrapped around and "certified" a
/// range after scanning nothing).
inline constexpr std::uint64_t kMaxScanLength = 0xFFFFFFFFu;

/// Options of the certified-range scan.
struct ScanOptions {
  /// L_max: queries k+1 ≤ i ≤ L_max + 1 are checked (positions 0..L_max+1 realised).
  std::uint64_t max_length = 20000;
  /// Use the binary64 kernel where it is exact (false: reference path only).
  bool use_fast_kernel = true;
  /// Candidate algorithm: score competitors through numeric::Binary32Dot (eight at a time,
  /// AVX2 where available) where it applies — formats with p ≤ 11 under nearest-even
  /// (NUMERIC §2.1) — and use_fast_kernel is set; the same bits either way.
  bool use_binary32_kernel = true;
  /// May be empty. Asked before each query; once it returns true the scan stops and its result
  /// is incomplete, to be discarded (for a caller that runs several heads at once and no longer
  /// needs one of them).
  std::function<bool()> abandon;
  /// Worker threads of the candidate algorithm (certified_range_fast: position chunks on
  /// numeric::parallel_for); ≥ 1. The result does not depend on it. The scan ignores it.
  unsigned threads = 1;
  /// Candidate algorithm: bytes of realised keys kept between batches (default 256 MB); keys
  /// older than that which a candidate offset needs are realised again. The result does not
  /// depend on it (tests lower it to reach the re-realisation).
  std::size_t key_store_bytes = std::size_t{1} << 28;
};

/// Result of the quadratic scan (THEORY §6, RoPE-X eq. 10).
struct CertifiedRange {
  /// N_max^(k): the largest certified L. With a failing query i, N_max = i − 2 (a value
  /// below k means no length is certified); when no query up to max_length + 1 fails,
  /// N_max = max_length and `at_limit` is set (the true N_max is ≥ that).
  std::uint64_t n_max = 0;
  bool at_limit = false;
  std::uint64_t max_length = 0;
  /// The first failing query i, the competitor j with the largest realised score other
  /// than j = i − k (the first such j on ties; a NaN or +inf score fails at once), the
  /// offset i − k − j, and the exact gap Ŝ_{i,i−k} − Ŝ_{i,j} (nullopt when a score is not
  /// finite).
  std::optional<std::uint64_t> fail_query;
  std::optional<std::uint64_t> fail_competitor;
  std::optional<std::int64_t> fail_offset;
  std::optional<mpq_class> gap;
  /// The two realised scores at the failure.
  std::optional<numeric::Value> target_score, competitor_score;
  /// The smallest gap over all certified queries (exact), and the query it occurred at
  /// (scan only: the candidate algorithm does not evaluate every competitor, so it leaves
  /// both unset).
  std::optional<mpq_class> smallest_passing_gap;
  std::optional<std::uint64_t> smallest_passing_gap_query;
  /// Work done: realised scores evaluated, wall time of the scan (s), and whether the
  /// binary64 kernel was used.
  std::uint64_t scores_evaluated = 0;
  double seconds = 0;
  bool fast_kernel = false;
  /// Candidates only: competitors were scored by numeric::Binary32Dot (NUMERIC §2.1).
  bool binary32_kernel = false;
  /// "scan" (certified_range) or "candidates" (certified_range_fast, proofs/range/fast_range.hpp).
  std::string algorithm = "scan";
  /// Candidates only: the offsets n (both signs) whose competitors were evaluated, and the
  /// rounding-error bound E of every realised score (exact; see realised_score_error_bound).
  std::uint64_t candidate_offsets = 0;
  std::optional<mpq_class> error_bound;
  /// Candidates only: the offsets n (both signs) at which at least one query scored a
  /// competitor exactly — those whose per-query bound could not exclude them (THEORY §6,
  /// per-query bounds); the rest of the candidate offsets were excluded at every query.
  std::uint64_t offsets_scored = 0;
  /// Candidates only: the scores the per-query bound err_i alone would evaluate — one target
  /// per query and every competitor with u(n) > σ_i (THEORY §6), counted, not scored, up to
  /// the last query examined. ropesim-verify excludes competitors by a bound of that form, so
  /// this sets its expected work (proofs/reports/certificate.cpp); scores_evaluated is smaller
  /// where the split bounds exclude more.
  std::uint64_t scores_per_query_bound = 0;
};

/// The certified range of a constructed head by a quadratic scan over queries
/// i = k+1, …, max_length + 1 (stops at the first failing query). Cost ≈ N²/2 score
/// evaluations, N = min(N_max, max_length) + 2. Throws InvalidArgument unless
/// 1 ≤ max_length ≤ kMaxScanLength.
CertifiedRange certified_range(const FixedOffsetHead& head, const ScanOptions& options = {});

/// certified_range(g, C, k, F, realisation) of THEORY §6 for the single-frequency Y^k head
/// (sequential sums, nearest-even unless `rounding` says otherwise). Throws like
/// make_fixed_offset_head.
CertifiedRange certified_range(const mpq_class& g, const mpq_class& C, std::uint64_t k,
                               const numeric::Format& F, const std::string& realisation = "r1",
                               const ScanOptions& options = {},
                               numeric::Rounding rounding = numeric::Rounding::nearest_even);

/// The largest max_length the scan runs for this head without the user opting in to a slow
/// run: 2·10^4 for one rotary block with the binary64 kernel (about 2·10^8 scores, seconds),
/// scaled by 1/sqrt(blocks) for multi-frequency heads and by 1/10 on the reference path.
std::uint64_t scan_length_limit(const FixedOffsetHead& head);

}  // namespace ropesim::proofs
