#pragma once
/// The hint of a compiler refusal (THEORY §7): which preset formats compile the formula.
#include <functional>

#include "proofs/compiler/compiler.hpp"
#include "proofs/compiler/refusal.hpp"

namespace ropesim::proofs {

/// The preset formats the hint tries, smallest first (numeric::named_formats() by size_rank):
/// fp8e4m3, fp8e5m2, bf16, fp16, tf32, fp32, fp64.
const std::vector<std::string>& compiler_preset_formats();

/// `refusal` (of a compilation under `options`) with the hint appended: `compile_in` is tried
/// with options' F replaced by each preset format other than options' own (no hint, no
/// progress, Y^k range scans capped at 2000 positions). Without Y^k heads the message names the
/// smallest preset that compiles ("; the smallest preset format that compiles it is fp16");
/// with them every preset that compiles, ranked by certified length (THEORY §6: a format is only
/// as good as its certified length; a length at the scan cap is shown as ">= 2000"); otherwise
/// "; no preset format compiles it under rounding R". Refusals no format can fix (reason input
/// or summation) are returned unchanged.
Refusal with_format_hint(const Refusal& refusal, const CompileOptions& options,
                         const std::function<CompiledModel(const CompileOptions&)>& compile_in);

}  // namespace ropesim::proofs
