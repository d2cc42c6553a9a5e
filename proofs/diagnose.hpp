#pragma once
/// `ropesim diagnose`: one report on a model's RoPE at finite precision. For one
/// schedule (a Hugging Face config), an activation format A and a framework preset, and the
/// known ways that framework goes wrong (docs/FRAMEWORK_BUGS.md, NUMERIC §4), over positions
/// 0..N-1 of a context of N tokens:
///  - the error of the framework's correct path against the exact rotation per position band
///    (attention::compare; the attention factor is accounted for there);
///  - the error of each candidate bug against the correct path per band (attention::compare
///    with the correct path as B), and the candidates ranked by it;
///  - per path the rotation census (attention::census): distinct rotations, first collision,
///    overflow and NaN positions;
///  - per path the drift of a fixed-offset score with position: the previous-token score
///    ⟨R̂_p q, R̂_{p-1} k⟩ of one random q, k at positions spread over 1..N-1 against the exact
///    qᵀR_{-1}k (attention::rotate_scores, as `ropesim rotate`);
///  - the certified range of a previous-token head Y^1 on the highest frequency (block 0)
///    realised by the framework in A (proofs::horizon, C = auto);
///  - the base-context bound [Men et al. 2024] and the semantic drift [Barbero et al. 2024]
///    for this config (proofs/bounds.hpp).
/// Every number is the one the single command computes for the same settings (compare,
/// rotations, rotate, horizon, table bounds); this file only chooses the settings and ranks.
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attention/census.hpp"
#include "attention/compare.hpp"
#include "attention/realisation.hpp"
#include "attention/rotate.hpp"
#include "attention/schedule.hpp"
#include "numeric/budget.hpp"
#include "proofs/bounds.hpp"
#include "proofs/horizon.hpp"

namespace ropesim::proofs {

/// One known way a framework's RoPE goes wrong, as steps of its pipeline changed: the
/// candidate's realisation is the framework preset's `pipeline:` spec with `step=value` for
/// each step named (replacing the preset's value of that step, or added). `A` in `value` is
/// the activation format of the run. Keep one entry per bug report or framework mode (e.g.
/// PyTorch CPU's SLEEF library calls, which turn `hf` into `hf-torch-cpu`).
struct DiagnoseCandidate {
  std::string_view name;  ///< short name, e.g. "inv-freq-cast"
  /// The pipeline keys changed, comma-separated, e.g. "inv_freq" or "power,cos_sin" (each
  /// set to `value`); empty: `value` is a whole realisation spec measured as it is.
  std::string_view step;
  std::string_view value;   ///< the step's value, e.g. "fp32>A" (or the whole spec)
  std::string_view means;   ///< one sentence: what the framework then computes
  std::string_view report;  ///< the public bug report it matches (docs/FRAMEWORK_BUGS.md)
  std::string_view fix;     ///< one sentence: what restores the correct path
};

/// The candidates, in the order they are tried: inv_freq buffer cast to A, angle in bf16,
/// angle in fp16, positions in fp16, cos/sin cache in bf16, cos/sin cache in fp16, the angle
/// GEMM in TF32, PyTorch CPU's SLEEF pow/cos/sin (the framework's steps with `:sleef-u10`;
/// with `hf` this is the `hf-torch-cpu` preset's step list).
std::span<const DiagnoseCandidate> diagnose_candidates();

/// `framework_spec` (a `pipeline:` spec) with step `key` set to `value`: the item `key=...`
/// replaced when present, appended otherwise. Throws InvalidArgument when `framework_spec` does
/// not start with "pipeline:".
std::string with_pipeline_step(std::string_view framework_spec, std::string_view key,
                               std::string_view value);

/// The realisation spec of `candidate` for a framework preset's `pipeline:` spec: each step
/// named in candidate.step (comma-separated) set to candidate.value by with_pipeline_step, or
/// candidate.value itself when candidate.step is empty. Throws InvalidArgument as
/// with_pipeline_step does.
std::string candidate_realisation(std::string_view framework_spec,
                                  const DiagnoseCandidate& candidate);

/// The position bands of a context of N tokens: [0, 1024), then [2^k, 2^(k+1)) for k ≥ 10,
/// the last one cut at N (half-open, positions 0-based). N ≥ 1.
std::vector<std::pair<std::uint64_t, std::uint64_t>> diagnose_bands(std::uint64_t context);

/// The query positions p of the fixed-offset score drift in a context of N tokens at offset
/// n: up to 64 positions evenly spread over n..N-1 (both ends included, rounded down), plus
/// the first and last position of every diagnose_bands() band that is ≥ n; sorted, each
/// once. Empty when N - 1 < n. At most 64 + 2·(bands) ≤ 128 positions.
std::vector<std::uint64_t> diagnose_score_positions(std::uint64_t context, std::uint64_t offset);

/// The settings of the fixed-offset score drift (THEORY §2.1, §3; attention/rotate.hpp),
/// the same for every path: `ropesim rotate --seed S --offset n --positions P --summation …`.
struct DiagnoseScoreSettings {
  std::uint64_t offset = 1;  ///< n = 1: the previous-token score
  std::uint64_t seed = 1;    ///< q, k = attention::random_query_key(A, D, seed)
  /// The score's accumulation: the framework preset's (attention::framework_score_accumulation:
  /// fp32 wide accumulator for every preset), else sequential in A.
  numeric::Summation summation = numeric::Summation::sequential;
  numeric::Format accumulator = numeric::Format::fp32();
  std::vector<std::uint64_t> positions;  ///< diagnose_score_positions(N, offset)
  /// The exact score qᵀR_{-n}k (attention::exact_score; nearest double), the same at every p.
  double exact = 0;
};

/// One path's fixed-offset score along the positions (attention::rotate_scores).
struct DiagnoseScoreDrift {
  /// max - min of the finite realised scores over the positions (RotateResult::drift);
  /// exactly it would be 0.
  double drift = 0;
  double max_error = 0;                  ///< max over positions of |score - exact|
  std::uint64_t max_error_position = 0;  ///< the first p where it is reached
  std::uint64_t nonfinite = 0;           ///< positions whose score is not finite
};

/// One band's errors of one path against its reference (attention::compare over the band,
/// every block).
struct BandError {
  std::uint64_t start = 0, end = 0;  ///< positions [start, end)
  /// max over blocks and positions of |cos error| and |sin error| (absolute), and where
  attention::ErrorMaximum max_absolute;
  /// "typical": the median over blocks of each block's max(|cos error|, |sin error|) in
  /// the band (the lower median for an even count).
  double typical_absolute = 0;
  attention::ErrorMaximum max_ulps;  ///< in ulps of the path's table format
  double typical_ulps = 0;           ///< the median over blocks of each block's max ulps
  std::optional<attention::ErrorMaximum> max_angle;  ///< |angle error| in radians, if formed
  std::uint64_t differing = 0, entries = 0, nonfinite = 0;
};

/// The census of a path over 0..N-1 (attention::census).
struct DiagnoseCensus {
  std::uint64_t distinct = 0;  ///< distinct realised rotations
  std::optional<attention::FirstRepeat> first_repeat;
  attention::LargestClass largest_class;
  attention::FlagSummary overflow, nan;
};

/// One path: the framework's correct path (against the exact rotation) or a candidate
/// (against the correct path).
struct DiagnosePath {
  std::string name;         ///< "correct" or the candidate's name
  std::string realisation;  ///< the spec realised
  std::string against;      ///< "exact" or "correct"
  /// The candidate (nullptr for the correct path).
  const DiagnoseCandidate* candidate = nullptr;
  /// Set when the candidate realises the same step list as the correct path (nothing to
  /// measure) or does not apply to this framework (the parser's or check_applicable's
  /// message); bands and census are then empty.
  std::string skipped;
  std::vector<BandError> bands;
  BandError overall;  ///< the maxima over all bands (typical: over all positions' blocks)
  DiagnoseCensus census;
  /// The fixed-offset score along the positions (unset when the context has < 2 positions).
  std::optional<DiagnoseScoreDrift> score_drift;
  /// The start of the first band with an entry that differs from the reference's.
  std::optional<std::uint64_t> first_differing_band;
};

/// The previous-token head on the highest frequency.
struct DiagnoseHorizon {
  std::string realisation;  ///< the framework preset's name
  HorizonReport report;     ///< horizon() of Y^1 on block 0, realised in A, C = auto
  /// Set when the preset cannot realise block 0 alone (hf-torch-cpu: SLEEF's 8-lane calls
  /// need 8 blocks): the refusal; `report` is then empty.
  std::string skipped;
  std::optional<mpq_class> theta;  ///< θ_0 when rational (1 for every conventional schedule)
};

/// The base-context and semantic-drift bounds for this config.
struct DiagnoseBounds {
  /// Base-context [Men et al. 2024]: B_m = Σ_i cos(m·b^(-2i/D)) ≥ 0 for m = 0..N, with b the
  /// config's rope_theta and D its rotary dimension (unscaled: rope scaling is not part of
  /// the bound). Unset when the schedule has no base.
  std::optional<mpq_class> base;
  std::size_t dim = 0;
  std::optional<BaseCheck> config_check;  ///< the config's own base, exactly
  std::optional<BaseBound> bound;         ///< the smallest grid base that passes (L = N)
  /// Semantic drift [Barbero et al. 2024] of the lowest-frequency quarter of the blocks:
  /// exact and realised by the correct path, m = 0..N-1, tolerance `drift_tolerance`.
  std::vector<std::size_t> channels;
  mpq_class drift_tolerance;
  DriftResult drift_exact, drift_realised;
};

/// Options of diagnose().
struct DiagnoseOptions {
  std::uint64_t context = 0;  ///< N ≥ 1: positions 0..N-1
  /// Semantic drift's tolerance (as `table bounds --tolerance`, default 0.01).
  mpq_class drift_tolerance = mpq_class(1, 100);
  unsigned threads = 1;  ///< census and base-context worker threads (results do not depend on it)
  /// Called with (stage, done, total) between steps; may be empty.
  std::function<void(const std::string&, std::uint64_t, std::uint64_t)> progress;
};

/// The report.
struct DiagnoseReport {
  std::string schedule;   ///< Schedule::spec
  std::string framework;  ///< the preset's name
  std::string framework_spec;
  numeric::Format format;  ///< A
  std::uint64_t context = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> bands;
  DiagnosePath correct;
  /// The candidates in diagnose_candidates() order; `ranking` orders them.
  std::vector<DiagnosePath> candidates;
  /// Indices into `candidates` of the measured ones, by decreasing overall max absolute
  /// error against the correct path (ties: larger angle error, then list order).
  std::vector<std::size_t> ranking;
  DiagnoseScoreSettings score;  ///< the fixed-offset score drift's settings
  DiagnoseHorizon horizon;
  DiagnoseBounds bounds;
};

/// Computes the report for schedule `s`, activation format `format` (round to nearest-even)
/// and framework preset `framework` (attention::framework_preset). Throws InvalidArgument for
/// an unknown framework (listing the presets), context 0 or beyond attention::kMaxCensusPositions,
/// a multi-axis schedule, a schedule without rotary blocks, or a preset that does not apply.
DiagnoseReport diagnose(const attention::Schedule& s, const numeric::Format& format,
                        std::string_view framework, const DiagnoseOptions& options);

/// The work of diagnose() for check_budget: compares (every entry of the correct path against
/// exact, of every candidate against the correct path) and censuses, at their measured
/// rates; the bounds and the head are small beside them for N ≥ 10^3.
WorkEstimate diagnose_work(const attention::Schedule& s, std::uint64_t context);

/// The report as JSON (the same content as the text): {"schedule", "framework",
/// "framework_spec", "format", "context", "bands", "correct", "candidates", "ranking",
/// "score", "horizon" (with "skipped": null or the refusal), "bounds"}; each path has "score_drift"
/// {drift, max_error {value, position}, nonfinite} (null when unset); "score" holds the settings
/// {offset, seed, summation, accumulator (null unless wide-accumulator), positions, exact}. Errors
/// are numbers (the string "inf" when infinite). Does not print.
nlohmann::json to_json(const DiagnoseReport& report);

}  // namespace ropesim::proofs
