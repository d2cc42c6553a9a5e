#pragma once
// The tables of `ropesim table bounds` (docs/BOUNDS.md): one renderer per --kind, each laying
// out a study's result (the studies: proofs/literature/bounds_study.hpp,
// proofs/literature/bounds.hpp, proofs/literature/positional_head.hpp,
// proofs/literature/no_decay.hpp).
#include <gmpxx.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/schedules/schedule.hpp"
#include "cli/table.hpp"
#include "numeric/format.hpp"
#include "proofs/literature/bounds_study.hpp"

namespace ropesim::cli {

/// A grid base as the paper prints it: 4300 → "4.3e3", 10 → "1.0e1".
std::string base_text(const mpz_class& b);

/// --kind base-context: per L the paper's base and its exact check, the exact bound and one
/// column group per format (`<realisation>_<format name as given>`).
Table base_context_table(const proofs::BaseContextStudy& study,
                         const std::vector<std::string>& format_names,
                         const std::string& realisation);

/// --kind critical-dim: per model d_extra, T_extra and one census cell per realisation column.
Table critical_dimension_table(const std::vector<proofs::CriticalDimensionRow>& rows,
                               const std::vector<std::string>& realisation_columns);

/// The models of --presets ("all" = every preset): preset names and `hf-config:PATH` /
/// `hf-config[seq_len=N]:PATH` specs (docs/HF_CONFIG.md; separate a path holding ',' with ';'),
/// each read and checked.
std::vector<proofs::CriticalDimensionModel> resolve_presets(const std::string& presets);

/// --kind semantic-drift: per preset, the preset's schedule and p-RoPE at each p
/// (proofs::semantic_drift_rows).
Table semantic_drift_table(const std::vector<proofs::CriticalDimensionModel>& models,
                           const std::string& p_text, const std::string& realisation_text,
                           const std::vector<numeric::Format>& formats, const mpq_class& tolerance,
                           std::uint64_t max_length, bool progress);

/// --kind positional-head: the previous-token head on θ_1 = 1 per format × realisation × k.
Table positional_head_table(const std::vector<numeric::Format>& formats,
                            const std::vector<std::string>& realisations,
                            const std::vector<std::uint64_t>& offsets, bool progress);

/// --kind nope-previous-token: the NoPE check per format × summation.
Table nope_table(const std::vector<numeric::Format>& formats,
                 const std::vector<std::string>& summations, std::size_t length, std::size_t trials,
                 std::uint64_t seed);

/// --kind no-decay: the exact score S(n) and the realised ones at every record distance.
Table no_decay_table(const attention::Schedule& s, const std::vector<numeric::Format>& formats,
                     const std::vector<std::string>& realisation_specs, std::uint64_t max_length,
                     std::uint64_t key_position);

}  // namespace ropesim::cli
