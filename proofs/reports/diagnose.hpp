#pragma once
/// `ropesim diagnose`: one report on a model's RoPE at finite precision. For one
/// schedule (a Hugging Face config), an activation format A and a framework preset, and the
/// known ways that framework goes wrong (docs/FRAMEWORK_BUGS.md, NUMERIC §4), over positions
/// 0..N-1 of a context of N tokens:
///  - the error of the framework's correct path against the exact rotation per position band
///    (attention::compare; the attention factor is accounted for there);
///  - the error of each candidate bug against the correct path per band (attention::compare
///    with the correct path as B);
///  - per path the rotation census (attention::census): distinct rotations, first collision,
///    overflow and NaN positions;
///  - per path the realised score ⟨R̂_p q, R̂_{p-n} k⟩ of one random q, k against the exact
///    score (attention factor s² on both sides when the path carries s) at the offsets n that
///    matter (1, 64, 4096, N - 1), maximised over every query position p = n..N-1 and per band,
///    with the arg-max (attention::rotate_scores, as `ropesim rotate`); the candidates ranked
///    by the largest relative score error, then angle error, then collisions;
///  - the certified range of the model's own previous-token head Y^1 (every block) realised
///    by the framework in A (proofs::horizon, C = auto, the default limit: N_max or "≥ L");
///  - the base-context bound [Men et al. 2024] and the semantic drift [Barbero et al. 2024]
///    for this config (proofs/literature/bounds.hpp).
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

#include "attention/census/census.hpp"
#include "attention/fidelity/compare.hpp"
#include "attention/fidelity/rotate.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/budget.hpp"
#include "proofs/literature/bounds.hpp"
#include "proofs/range/horizon.hpp"

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
  /// The step's value, e.g. "fp32>A", for every key; or one value per key, comma-separated in
  /// the keys' order ("fp32:sleef-u10,fp32:sleef-u10,reciprocal"); or the whole spec.
  std::string_view value;
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

/// The context a config serves: max(max_position_embeddings, factor × original_max_position_
/// embeddings) when the schedule has rope scaling with both (YaRN configs such as
/// Qwen2.5-YaRN state the pre-scaling 32768 as max_position_embeddings and serve factor ×
/// 32768), rounded down; max_position_embeddings otherwise; nullopt when there is none.
std::optional<std::uint64_t> diagnose_default_context(const attention::Schedule& s);

/// The offsets n of the score check in a context of N tokens: `requested` when non-empty,
/// else 1 (the previous token), 64, 4096 and N - 1 (the farthest pair); the offsets < N kept,
/// sorted, each once. Throws InvalidArgument when a requested offset is ≥ N (naming it and
/// the accepted range 1..N-1) or is 0.
std::vector<std::uint64_t> diagnose_offsets(std::uint64_t context,
                                            std::span<const std::uint64_t> requested);

/// The settings of the score check (THEORY §2.1, §3; attention/fidelity/rotate.hpp), the same
/// for every path: `ropesim rotate --seed S --offset n --position p --summation …`.
struct DiagnoseScoreSettings {
  /// The seeds of the q, k draws: 1..K (DiagnoseOptions::draws); draw k is
  /// attention::random_query_key(A, D, seed k), q then k, as `rotate --seed`.
  std::vector<std::uint64_t> seeds;
  /// The score's accumulation: the framework preset's (attention::framework_score_accumulation:
  /// fp32 wide accumulator for every preset), else sequential in A.
  numeric::Summation summation = numeric::Summation::sequential;
  numeric::Format accumulator = numeric::Format::fp32();
  std::vector<std::uint64_t> offsets;  ///< diagnose_offsets(N, options.offsets)
};

/// The largest score error of one path at one offset n over the query positions p of one
/// band [start, end) with p ≥ n, over the chosen draws (DiagnoseOffsetScore::draws).
struct DiagnoseBandScore {
  std::uint64_t start = 0, end = 0;  ///< the band's positions [start, end)
  /// The worst draw's max over its p of |S(p, p-n) - exact| (NaN: see DiagnoseOffsetScore)
  double max_abs_error = 0;
  double max_rel_error = 0;     ///< that error / |exact| of the draw: the largest over the draws
  std::uint64_t position = 0;   ///< the first p reaching it
  std::uint64_t seed = 0;       ///< the draw's seed
  std::uint64_t nonfinite = 0;  ///< its p whose realised score is ±inf or NaN (most of a draw)
};

/// The realised score S(p, p-n) = ⟨R̂_p q, R̂_{p-n} k⟩ of one path against the exact score at
/// one offset n, maximised over every query position p = n..N-1 and over the draws of q, k
/// whose |exact score| at n is at least the median over the K draws (the upper half, ties to
/// the smaller seed: a relative error near a zero of the score says nothing about rounding).
/// attention::rotate_scores computes each score; the exact score is in the path's convention:
/// s²·qᵀR_{-n}k when the path carries the attention factor s (RotateResult::exact). Per draw
/// the largest |S - exact| over p; over the draws the largest relative error. A non-finite
/// realised score has error NaN (as `rotate` prints it), and NaN is the worst of every set
/// that holds it.
struct DiagnoseOffsetScore {
  std::uint64_t offset = 0;          ///< n
  double exact = 0;                  ///< the worst draw's exact score (nearest double)
  double max_abs_error = 0;          ///< its max over p of |S(p, p-n) - exact| (nearest double)
  double max_rel_error = 0;          ///< that error / |exact|: the largest over the chosen draws
  std::uint64_t position = 0;        ///< the first p reaching max_abs_error
  std::uint64_t seed = 0;            ///< the worst draw's seed (`rotate --seed`)
  std::vector<std::uint64_t> draws;  ///< the seeds of the chosen draws at this offset
  double score = 0;                  ///< the realised S(position, position-n)
  std::uint64_t positions = 0;       ///< the query positions scanned: N - n
  std::uint64_t nonfinite = 0;       ///< those whose realised score is ±inf or NaN
  std::vector<DiagnoseBandScore> bands;  ///< per band that holds a p ≥ n
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
  /// The realised score against exact at each offset of DiagnoseScoreSettings::offsets, over
  /// every query position (empty when the context has < 2 positions).
  std::vector<DiagnoseOffsetScore> scores;
  /// How the scores were computed: "binary64" (every score by numeric::Binary64Rounding's
  /// exact fast path, bit-identical to rotate_scores, which recomputes each band's extremes)
  /// or "engine" (rotate_scores at every position: a format outside the fast path's domain).
  std::string score_method;
  /// The start of the first band with an entry that differs from the reference's.
  std::optional<std::uint64_t> first_differing_band;
};

/// The model's own previous-token head: the fixed-offset head Y^1 over every rotary block of the
/// schedule (equal weights, THEORY §6), realised by the framework in A, C = auto.
struct DiagnoseHorizon {
  std::string realisation;  ///< the framework preset's name
  std::size_t blocks = 0;   ///< the head's rotary blocks: all of the schedule's
  /// The length limit asked (DiagnoseOptions::horizon_limit), when it is below the quick
  /// limit and so was used: `ropesim horizon --max-length` of the same run.
  std::optional<std::uint64_t> limit;
  /// horizon() with the default quick limit L of `ropesim horizon` (horizon_max_length), or
  /// `limit` when set: range.n_max is N_max, or L with range.at_limit ("N_max ≥ L").
  HorizonReport report;
  /// Set when the head cannot be built or measured (the refusal); `report` is then empty.
  std::string skipped;
};

/// The model's own previous-token head for `framework` in `binding`'s format (issue 34 item
/// 6): `ropesim horizon --schedule S --realization NAME --format A --k 1 --C auto` with its
/// default maximum length, or `--max-length limit` when `limit` is below that quick limit (a
/// larger `limit` leaves the quick limit: diagnose never runs a slow horizon), on `threads`
/// threads. The one place diagnose measures a horizon, so a faster horizon (a higher default
/// limit) reaches the report unchanged. An InvalidArgument from the head or horizon becomes
/// `skipped`; `limit` 0 is an InvalidArgument.
DiagnoseHorizon model_head_horizon(const attention::Schedule& s, std::string_view framework,
                                   const numeric::FormatBinding& binding, unsigned threads,
                                   std::optional<std::uint64_t> limit = std::nullopt);

/// The base-context and semantic-drift bounds for this config.
struct DiagnoseBounds {
  /// Base-context [Men et al. 2024]: B_m = Σ_i cos(m·b^(-2i/D)) ≥ 0 for m = 0..N, with b the
  /// config's rope_theta and D its rotary dimension (unscaled: rope scaling is not part of
  /// the grid search; the config's own check uses its scaled frequencies). Unset when the
  /// schedule has no base.
  std::optional<mpq_class> base;
  std::size_t dim = 0;
  /// The config's own frequencies, exactly: B_m = Σ_i cos(m·θ_i) over the schedule's blocks,
  /// which are the scaled ones when the config has rope scaling (`scaled`), else b^(-2i/D).
  std::optional<BaseCheck> config_check;
  bool scaled = false;             ///< config_check used the schedule's scaled frequencies
  std::optional<BaseBound> bound;  ///< the smallest grid base that passes (L = N)
  /// Semantic drift [Barbero et al. 2024] of the lowest-frequency quarter of the blocks:
  /// exact and realised by the correct path, m = 0..N-1, tolerance `drift_tolerance`.
  std::vector<std::size_t> channels;
  mpq_class drift_tolerance;
  DriftResult drift_exact, drift_realised;
};

/// Options of diagnose().
struct DiagnoseOptions {
  std::uint64_t context = 0;  ///< N ≥ 1: positions 0..N-1
  /// The score check's offsets (diagnose_offsets; empty: 1, 64, 4096, N - 1).
  std::vector<std::uint64_t> offsets;
  /// K: the q, k draws of the score check (seeds 1..K; at each offset the upper half by
  /// |exact score| is scanned). ≥ 1.
  std::uint64_t draws = 8;
  /// Semantic drift's tolerance (as `table bounds --tolerance`, default 0.01).
  mpq_class drift_tolerance = mpq_class(1, 100);
  unsigned threads = 1;  ///< census and base-context worker threads (results do not depend on it)
  /// The model head's length limit (model_head_horizon's `limit`; `diagnose --horizon-limit`):
  /// nullopt for `ropesim horizon`'s quick limit. ≥ 1.
  std::optional<std::uint64_t> horizon_limit;
  /// Each path realised once (default): its band compares record its values, which are then
  /// its census (attention::census_of_table) and its score table, and the correct path's are
  /// every candidate's B side; a framework with the pipeline spec and score accumulation of one
  /// already measured (vllm and flash-attn) gets that report, renamed. false: every section
  /// realises its paths itself, as before issue 35's speed-up (bench_diagnose measures both;
  /// the reports are equal, tests/proofs/test_diagnose.cpp).
  bool share_values = true;
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
  /// The schedule's attention factor s when the framework path carries it
  /// (attention::carries_attention_factor): every score's exact side is then s²·qᵀR_{-n}k.
  std::optional<mpq_class> attention_factor;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> bands;
  DiagnosePath correct;
  /// The candidates in diagnose_candidates() order; `ranking` orders them.
  std::vector<DiagnosePath> candidates;
  /// Indices into `candidates` of the measured ones, worst first: by the largest relative
  /// score error over the offsets (NaN counts as the largest), then the largest |angle
  /// error| against the correct path, then collisions (fewer distinct rotations first), then
  /// list order (rank_candidates).
  std::vector<std::size_t> ranking;
  /// For each place of `ranking`: the metric that separates it from the next place (the last
  /// place: from the one before): "score", "angle", "collisions" or "tie".
  std::vector<std::string> decided_by;
  DiagnoseScoreSettings score;  ///< the score check's settings
  DiagnoseHorizon horizon;
  DiagnoseBounds bounds;
};

/// The `ropesim rotate` command that recomputes `score` of `path` at its arg-max position:
/// "ropesim rotate --schedule 'S' --realization 'R' --format A --seed N --offset n --position p
/// --summation … [--accumulator …]" (the full command: rotate's own defaults differ).
std::string diagnose_rotate_command(const DiagnoseReport& report, const DiagnosePath& path,
                                    const DiagnoseOffsetScore& score);

/// The worst-first order of the measured candidates (those with `skipped` empty) and, per
/// place, the metric that decided it (DiagnoseReport::ranking, decided_by): the largest
/// max_rel_error over the path's offsets (NaN first), then its overall max_angle, then fewer
/// distinct rotations, then the order of `candidates`.
std::pair<std::vector<std::size_t>, std::vector<std::string>> rank_candidates(
    const std::vector<DiagnosePath>& candidates);

/// Computes the report for schedule `s`, activation format `format` (round to nearest-even)
/// and framework preset `framework` (attention::framework_preset). Throws InvalidArgument for
/// an unknown framework (listing the presets), context 0 or beyond attention::kMaxCensusPositions,
/// a multi-axis schedule, a schedule without rotary blocks, or a preset that does not apply.
DiagnoseReport diagnose(const attention::Schedule& s, const numeric::Format& format,
                        std::string_view framework, const DiagnoseOptions& options);

/// diagnose() for each framework preset of `frameworks` (in that order; every name is checked
/// before any work), on the same schedule, format and options. The framework-independent
/// bounds (base-context, exact semantic drift) are computed once and copied. Throws
/// InvalidArgument as diagnose() does, and for an empty list.
std::vector<DiagnoseReport> diagnose_frameworks(const attention::Schedule& s,
                                                const numeric::Format& format,
                                                std::span<const std::string> frameworks,
                                                const DiagnoseOptions& options);

/// The work of diagnose_frameworks() over `frameworks` presets at `context` positions, for
/// check_budget: units are seconds of CPU (units_per_second = 1), fitted to measured reports
/// (docs/PERFORMANCE.md): per (position, block) entry a cost for the first framework and a
/// smaller one for each further framework (they share the compares and censuses of one table
/// recipe), plus a fixed cost per framework (the model head's range); bytes from the measured
/// peak RSS (72 per entry).
WorkEstimate diagnose_work(const attention::Schedule& s, std::uint64_t context,
                           std::size_t frameworks = 1);

/// The report as JSON (the same content as the text): {"schedule", "framework",
/// "framework_spec", "format", "context", "attention_factor" (s as a number, or null), "bands",
/// "correct", "candidates", "paths" (the correct path, then the candidates), "ranking",
/// "score", "horizon" (with "skipped": null or the refusal), "bounds"}. Each path has "name",
/// "framework", "realization", "score_method" and "scores": [{offset, max_abs_error,
/// max_rel_error, exact_score, score, position, positions, nonfinite, command, bands: [{start,
/// end, max_abs_error, position, nonfinite}]}]; "ranking" is [{path, framework, place (1 =
/// worst), decided_by}]; "score" holds the settings {seed, summation, accumulator (null unless
/// wide-accumulator), offsets}. Errors are numbers (the strings "inf", "nan" when not finite).
/// Does not print.
nlohmann::json to_json(const DiagnoseReport& report);

/// Several frameworks' reports as JSON: one report → to_json(report); several → {"schedule",
/// "format", "context", "frameworks": [names], "paths": every report's paths (each with its
/// "framework"), "ranking": every report's ranking items (each with its "framework"),
/// "reports": [to_json of each]}. Does not print.
nlohmann::json to_json(std::span<const DiagnoseReport> reports);

}  // namespace ropesim::proofs
