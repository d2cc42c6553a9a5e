#pragma once
/// The tables of `ropesim table bounds` (docs/BOUNDS.md) and ropesim.table_bounds: the flags
/// read into a study (proofs/literature/bounds_study.hpp, proofs/literature/bounds.hpp,
/// proofs/literature/positional_head.hpp, proofs/literature/no_decay.hpp), the study run, and its
/// result laid out as rows and columns.
///   base-context         Men et al. 2024 (arXiv 2405.14591), Table 1
///   critical-dim         Liu et al. 2023 (arXiv 2310.05209), critical dimension d_extra
///   semantic-drift       Barbero et al. 2024 (arXiv 2410.06205), low-frequency channels
///   positional-head      Barbero et al. 2024 (i): previous-token head on θ_1 = 1
///   nope-previous-token  Barbero et al. 2024 (i): what a NoPE head sees of the prefix order
///   no-decay             Barbero et al. 2024 (iii): a q, k whose score does not decay
/// A shard (io::Shard) of a kind whose rows are independent computes only its part:
/// critical-dim and semantic-drift a shard of the models (one row, resp. one group of rows,
/// each), positional-head and nope-previous-token a shard of the rows. base-context searches
/// each length's base from the previous length's answer and no-decay's rows are the record
/// distances of one scan: their rows depend on the rows before them, so they have no shards.
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attention/schedules/schedule.hpp"
#include "io/shard.hpp"
#include "io/table.hpp"
#include "numeric/format.hpp"
#include "proofs/literature/bounds_study.hpp"

namespace ropesim::proofs {

/// The flags of `ropesim table bounds` (the CLI's defaults; each kind reads its own).
struct TableBoundsRequest {
  std::string kind;  ///< --kind: base-context critical-dim semantic-drift positional-head ...
  std::string lengths = "1K,2K,4K,8K,16K,32K,64K,128K,256K,512K,1M";  ///< base-context
  std::string formats = "bf16,fp16,fp32";  ///< every kind: the finite-precision columns/rows
  std::string realisation = "hf";          ///< --realization, base-context
  std::string realisations = "r1,r2";  ///< critical-dim, semantic-drift, positional-head, no-decay
  std::string presets = "all";         ///< critical-dim, semantic-drift
  std::uint64_t dim = 128;             ///< --dim, base-context: 2..4096, even
  std::uint64_t finite_max_length = 8192;                  ///< base-context: 0..2^24
  std::uint64_t positions = 65536;                         ///< critical-dim: 2..2^24
  std::uint64_t from = 10;                                 ///< base-context: 10..9.9e18
  std::uint64_t max_length = 65536;                        ///< semantic-drift, no-decay: 1..2^24
  std::string tolerance = "0.01", p_values = "0.25,0.75";  ///< semantic-drift (--tolerance, --p)
  std::string offsets = "1";                               ///< --k, positional-head
  std::string summations = "sequential,pairwise,exact";    ///< nope-previous-token
  std::string schedule = "single:g=1";                     ///< no-decay
  std::uint64_t nope_length = 16;  ///< --length, nope-previous-token: 3..4096
  std::uint64_t trials = 200;      ///< nope-previous-token: 1..10^6
  std::uint64_t seed = 1;          ///< nope-previous-token
  std::uint64_t key_position = 0;  ///< no-decay: 0..2^40
};

/// The kinds, in the order messages list them.
const std::vector<std::string>& bounds_kinds();

/// Refuses a `kind` not among bounds_kinds() with one line naming --kind and the kinds.
void check_bounds_kind(const std::string& kind);

/// Whether `kind`'s table has shards (critical-dim, semantic-drift, positional-head,
/// nope-previous-token; see the file's comment).
bool bounds_kind_shardable(const std::string& kind);

/// A line of progress ("census llama2-7b", "exact L=1024 b=4.3e3"); may be empty.
using BoundsProgress = std::function<void(const std::string& what)>;

/// The table of `request` (shard `shard` of it; Shard{1, 1}: the whole table) on `threads`
/// worker threads (≥ 1; the table does not depend on it): the request checked first (--kind
/// among bounds_kinds(), --formats, then the kind's own flags and the integer ranges the CLI's
/// options accept), every message one line naming the flag. Throws InvalidArgument for bad
/// input and for a shard of a kind without shards (count > 1).
io::Table bounds_table(const TableBoundsRequest& request, unsigned threads,
                       const io::Shard& shard = {}, const BoundsProgress& progress = {});

/// A grid base as the paper prints it: 4300 → "4.3e3", 10 → "1.0e1".
std::string base_text(const mpz_class& b);

/// The models of --presets ("all" = every preset): preset names and `hf-config:PATH` /
/// `hf-config[seq_len=N]:PATH` specs (docs/HF_CONFIG.md; separate a path holding ',' with ';'),
/// each read and checked.
std::vector<CriticalDimensionModel> resolve_presets(const std::string& presets);

/// --kind base-context: per L the paper's base and its exact check, the exact bound and one
/// column group per format (`<realisation>_<format name as given>`).
io::Table base_context_table(const BaseContextStudy& study,
                             const std::vector<std::string>& format_names,
                             const std::string& realisation);

/// --kind critical-dim: per model d_extra, T_extra and one census cell per realisation column.
io::Table critical_dimension_table(const std::vector<CriticalDimensionRow>& rows,
                                   const std::vector<std::string>& realisation_columns);

/// --kind semantic-drift: per preset, the preset's schedule and p-RoPE at each p
/// (semantic_drift_rows).
io::Table semantic_drift_table(const std::vector<CriticalDimensionModel>& models,
                               const std::string& p_text, const std::string& realisation_text,
                               const std::vector<numeric::Format>& formats,
                               const mpq_class& tolerance, std::uint64_t max_length,
                               const BoundsProgress& progress = {});

/// --kind positional-head: the previous-token head on θ_1 = 1 per format × realisation × k
/// (the rows of `shard` only).
io::Table positional_head_table(const std::vector<numeric::Format>& formats,
                                const std::vector<std::string>& realisations,
                                const std::vector<std::uint64_t>& offsets,
                                const BoundsProgress& progress = {}, const io::Shard& shard = {});

/// --kind nope-previous-token: the NoPE check per format × summation (the rows of `shard`
/// only; each row seeded with `seed`).
io::Table nope_table(const std::vector<numeric::Format>& formats,
                     const std::vector<std::string>& summations, std::size_t length,
                     std::size_t trials, std::uint64_t seed, const io::Shard& shard = {});

/// --kind no-decay: the exact score S(n) and the realised ones at every record distance.
io::Table no_decay_table(const attention::Schedule& s, const std::vector<numeric::Format>& formats,
                         const std::vector<std::string>& realisation_specs,
                         std::uint64_t max_length, std::uint64_t key_position);

}  // namespace ropesim::proofs
