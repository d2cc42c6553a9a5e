#pragma once
/// Hugging Face `config.json` as a RoPE schedule (THEORY §3; docs/HF_CONFIG.md): the schedule
/// spelling `hf-config:PATH` / `hf-config[seq_len=N]:PATH`, the exact-number JSON reader, and
/// the rope_scaling types of transformers' src/transformers/modeling_rope_utils.py
/// (`_compute_{default,linear_scaling,dynamic_ntk,yarn,longrope,llama3}_parameters`, v5
/// semantics; Qwen2-VL's `mrope_section` from modeling_qwen2_vl.py
/// `apply_multimodal_rotary_pos_emb`, Qwen3-VL's interleaved layout from
/// `apply_interleaved_mrope`).
#include <gmpxx.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "attention/schedules/schedule.hpp"

namespace ropesim::attention {

/// Parses JSON text with ropesim::read_json, keeping every number exact (integers that fit
/// 64 bits as JSON integers, every other number, 1e400 included, as its source text; read
/// them with exact_json_number). Throws InvalidArgument "<where>: malformed JSON at byte N:
/// ..." on a syntax error and "<where>: duplicate key 'k' ..." for a key given twice.
nlohmann::json parse_json_exact(std::string_view text, std::string_view where);

/// The exact rational of a number parsed by parse_json_exact. Throws InvalidArgument
/// "<where>: <what> must be a number, got string \"1e4\"" otherwise.
mpq_class exact_json_number(const nlohmann::json& j, std::string_view where, std::string_view what);

/// Reads the RoPE keys of a config (an object parsed by parse_json_exact): rope_theta
/// (alias rotary_emb_base; default 10000), head_dim (else hidden_size / num_attention_heads),
/// partial_rotary_factor (alias rotary_pct; default 1), max_position_embeddings,
/// original_max_position_embeddings, rope_scaling (or transformers v5's rope_parameters),
/// from `text_config` first when the object has one. Other keys are ignored. Throws
/// InvalidArgument naming `where` for an unknown rope_scaling type or key (listing the
/// accepted ones), a missing required key or a value of the wrong kind.
HfRopeConfig hf_rope_config(const nlohmann::json& config, std::string_view where);

/// Reads `path` as a Hugging Face config.json (hf_rope_config). Throws InvalidArgument
/// naming the file when it cannot be read or is not valid JSON.
HfRopeConfig read_hf_config(const std::string& path);

/// The schedule `hf-config[seq_len=N]:path` (config_schedule of read_hf_config; seq_len 0 =
/// unset); kind "hf-config".
Schedule hf_config_schedule(const std::string& path, std::uint64_t seq_len = 0);

/// The warning a run over positions up to `last_position` of schedule `s` deserves when `s` is
/// longrope (Phi-3) with short_factor and the run is longer than original_max_position_embeddings
/// L, where transformers would use long_factor:
/// transformers' `dynamic_rope_update` (`longrope_frequency_update`, modeling_rope_utils.py)
/// takes long_factor when max(position_ids) + 1 > original_max_position_embeddings and
/// short_factor otherwise, whereas the schedule holds one list, chosen by its seq_len
/// (short_factor when seq_len is unset). The text names the list the schedule uses, the one
/// transformers would use, and the spelling that selects it (hf-config[seq_len=N]:PATH).
/// nullopt when `s` is not longrope, holds long_factor (it is then for a sequence longer than
/// L, whatever window a run looks at), or last_position + 1 ≤ L.
std::optional<std::string> longrope_factor_warning(const Schedule& s, std::uint64_t last_position);

/// YaRN's correction range, exactly: low = max(floor(c(beta_fast)), 0), high =
/// min(ceil(c(beta_slow)), dim - 1) with c(n) = dim·ln(L/(2πn)) / (2·ln β) (transformers
/// `find_correction_range` with truncate). c(n) is never an integer (π is transcendental),
/// so MPFR interval evaluation at growing precision decides floor and ceil; throws
/// InvalidArgument if undecided at 65536 bits, or unless β > 1, L > 0, n > 0.
std::pair<std::int64_t, std::int64_t> yarn_correction_range(
    const mpq_class& beta_fast, const mpq_class& beta_slow, std::size_t dim, const mpq_class& base,
    const mpq_class& original_max_position_embeddings);

}  // namespace ropesim::attention
