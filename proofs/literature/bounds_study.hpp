#pragma once
/// The studies of `ropesim table bounds --kind base-context` and `--kind critical-dim`
/// (docs/BOUNDS.md): their options validated once here, their searches and censuses run here;
/// the CLI parses the flags into the options and lays out the result as a table.
///  * base_context_study: the smallest grid base with B_m ≥ 0 for m ≤ L [Men et al. 2024,
///    arXiv 2405.14591, Table 1], exactly (check_base_exact), the paper's printed base checked,
///    and in each finite format (check_base_realised) — proofs/literature/bounds.hpp says what is
///    proven.
///  * critical_dimension_study: d_extra, T_extra [Liu et al. 2023, arXiv 2310.05209] per model
///    and a census of the critical block under each realisation (THEORY §3).
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attention/census/census.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/hf_config.hpp"
#include "attention/schedules/schedule.hpp"
#include "proofs/literature/bounds.hpp"

namespace ropesim::proofs {

/// The longest context length L of a base-context study (2^24).
inline constexpr std::uint64_t kMaxContextLength = std::uint64_t{1} << 24;

/// What base_context_study searches.
struct BaseContextOptions {
  std::vector<std::uint64_t> lengths;  ///< L, ascending, each once, in 1..kMaxContextLength
  std::size_t dim = 128;               ///< the head dimension D (even, ≥ 2)
  std::uint64_t from = 10;             ///< the search starts at the smallest grid base ≥ this
  /// One finite-precision column each (the realisation in one format).
  std::vector<attention::Realisation> realisations;
  /// Finite-precision searches for the L ≤ this only (the others are left out).
  std::uint64_t finite_max_length = 8192;
  unsigned threads = 1;  ///< workers (≥ 1) of the exact checks and of the finite columns
  /// Called before each exact candidate base b is checked for length L (progress); may be empty.
  std::function<void(std::uint64_t length, const mpz_class& base)> on_exact_candidate;
};

/// Refuses bad options with one line naming the flag: "--dim: the head dimension must be even
/// (got 31)", "--lengths: no context length given", "--lengths: give the context lengths in
/// increasing order, each once", a length outside 1..2^24, threads = 0.
void check_options(const BaseContextOptions& options);

/// The result of base_context_study.
struct BaseContextStudy {
  std::vector<std::uint64_t> lengths;            ///< L, as in the options
  std::vector<std::optional<PaperBase>> papers;  ///< per L: the paper's base, checked
  std::vector<BaseBound> exact;                  ///< per L: the exact search
  std::uint64_t finite_max_length = 0;           ///< as in the options
  std::vector<std::string> realisations;         ///< per column: realisation name
  std::vector<std::string> formats;              ///< per column: its table format's name
  /// finite[r][i]: realisation r at lengths[i], for the i with lengths[i] ≤ finite_max_length.
  std::vector<std::vector<BaseBound>> finite;
};

/// Runs the study: check_options, then the exact search (base_context_bounds over
/// check_base_exact from grid index base_grid_index_at_least(from)), the paper's bases
/// (check_paper_base) and the finite-precision searches (check_base_realised on
/// conventional:base=b,dim=D, the realisations on the threads). Throws InvalidArgument like
/// check_options and the checks.
BaseContextStudy base_context_study(const BaseContextOptions& options);

/// The study as JSON: {"finite_max_length", "rows": [{"L", "paper" (printed text, or null),
/// "paper_value", "paper_check" ("passes", "fails", "undecided"), "paper_witness", "exact",
/// "finite": [{"realization", "format", bound} per column, L ≤ finite_max_length only]}]};
/// a bound is {"base" (null: none up to 9.9e19), "rejected_base", "rejected_witness",
/// "rejected_witness_is_nan", "undecided" (the bases), "candidates", "refined"}; exact values
/// as numeric::put_exact writes them.
nlohmann::json to_json(const BaseContextStudy& study);

/// One model of a critical-dimension study.
struct CriticalDimensionModel {
  std::string name;               ///< the preset name or the `hf-config:PATH` spec as given
  attention::ModelPreset preset;  ///< its config (rope_theta, lengths, scaling)
  attention::Schedule schedule;   ///< its schedule (preset_schedule or parse_schedule)
};

/// What critical_dimension_study computes.
struct CriticalDimensionOptions {
  std::vector<CriticalDimensionModel> models;
  /// The census of the critical block under each (one column each).
  std::vector<attention::Realisation> realisations;
  std::uint64_t positions = 65536;  ///< census positions 0..N-1 (attention::check_options)
  unsigned threads = 1;             ///< census threads (≥ 1)
  /// Called before the census of each model's critical block; may be empty.
  std::function<void(const std::string& model)> on_census;
};

/// One model's row.
struct CriticalDimensionRow {
  std::string name;
  std::size_t dim = 0;          ///< d: the schedule's exponent dimension (rotary otherwise)
  TrainingLength train_length;  ///< T_train and its source (training_length)
  CriticalDimension critical;   ///< d_extra, T_extra, the critical block
  /// 2π/θ of the critical block as the model computes it (llama3 scaling applied), nearest
  /// double; unset without a critical block.
  std::optional<double> block_period;
  /// The census of that block per realisation (empty without a critical block).
  std::vector<attention::CensusResult> census;
};

/// Runs the study: per model, critical_dimension(rope_theta, d, T_train), and the census of
/// restrict_to_block(schedule, block) under every realisation (attention::census_many).
/// Throws InvalidArgument like those.
std::vector<CriticalDimensionRow> critical_dimension_study(const CriticalDimensionOptions& options);

/// The rows as JSON: per model {name, base, d, T_train, T_train_source, x, d_extra, block,
/// T_extra, block_period, census: [attention::to_json per realisation]}.
nlohmann::json to_json(const std::vector<CriticalDimensionRow>& rows);

}  // namespace ropesim::proofs
