#pragma once
/// Framework RoPE presets: how Hugging Face, vLLM, llama.cpp, Megatron-LM, TransformerEngine,
/// FlashAttention, MLX and JAX (Gemma) compute the rotary embedding, each written as a
/// `pipeline:` step list in parse_realisation's spelling (realisation.hpp; NUMERIC §3 "Named
/// pipelines as explicit step lists"; docs/FRAMEWORKS.md).
///
/// Every step of a pipeline is one correctly rounded operation unless it names the library that
/// computes it (power/cos_sin `:glibc`, `:sleef-u10`: hf-torch-cpu, llamacpp-cpu-glibc). Real
/// code is not always that: libm cos/sin/pow are not correctly rounded (CUDA -use_fast_math,
/// Metal fast::cos, Sleef u10),
/// compilers contract a·b + c·d into a fused multiply-add, and some frameworks form the
/// frequencies by a recipe the spelling has no step for (MLX: exp2(-e·log2 β)). A preset then
/// encodes the nearest expressible pipeline and says, in `not_modelled`, exactly what differs
/// and what new step or recipe would express it. Each preset cites the source lines it follows
/// (repository@commit:path:lines, as read when the preset was written).
#include <span>
#include <string_view>
#include <vector>

namespace ropesim::attention {

/// One framework's RoPE computation as a named pipeline (NUMERIC §3; docs/FRAMEWORKS.md).
struct FrameworkPreset {
  /// The realisation name, e.g. "hf-cpu", "vllm", "llamacpp-cuda".
  std::string_view name;
  /// The step list in parse_realisation's spelling, "pipeline:exponent=fp32;...". `A` stands
  /// for the activation format of the run (--format).
  std::string_view spec;
  /// One line: what the framework computes, in the order it computes it.
  std::string_view summary;
  /// The source lines the steps follow: "owner/repo@commit:path:lines" entries separated by
  /// "; " (a commit of "?" marks code read through a search excerpt whose commit was not shown).
  std::string_view sources;
  /// What the real code does that the step list does not express (libm accuracy, FMA
  /// contraction, recipes without a step), and the step or recipe that would express it.
  std::string_view not_modelled;
};

/// Every framework preset, in table order: hf, hf-cpu, hf-torch-cpu, hf-cuda, hf-cuda-tf32,
/// vllm, vllm-native, llamacpp-cpu, llamacpp-cpu-glibc, llamacpp-cuda, megatron,
/// megatron-fused, te-fused, flash-attn, mlx, jax. hf-torch-cpu and llamacpp-cpu-glibc call the
/// real libraries (StepFormat::implementation); the others are correctly rounded step lists. `hf`,
/// `llamacpp-cpu` and `llamacpp-cuda` mean what parse_realisation's built-in names of the same
/// spelling mean (the NUMERIC §3 step lists).
std::span<const FrameworkPreset> framework_presets();

/// The preset named `name`, or nullptr when there is none, so that parse_realisation can
/// try it first in one line:
///   if (const auto* p = find_framework_preset(spec)) { r = parse_realisation(p->spec, …);
///                                                      r.steps.name = p->name; }
const FrameworkPreset* find_framework_preset(std::string_view name);

/// The preset named `name`. Throws InvalidArgument naming `name` and listing the preset names.
const FrameworkPreset& framework_preset(std::string_view name);

/// The preset names, in table order.
std::vector<std::string_view> framework_preset_names();

/// How a framework accumulates the attention score q·k of activations in fp16/bf16: the
/// accumulator format of its matmul (numeric::Summation::wide_accumulator: products and
/// partial sums in `format`, one rounding into the activation format at the end).
struct ScoreAccumulation {
  std::string_view format;  ///< the accumulator format, e.g. "fp32"
  std::string_view source;  ///< the source lines, as FrameworkPreset::sources
  /// What the sequential wide accumulation does not express (blocked GEMM orders, split-K).
  std::string_view not_modelled;
};

/// The score accumulation of framework preset `name` (every preset: fp32, GPU and CPU
/// matmuls accumulate fp16/bf16 products in fp32), or nullptr for a name that is not a
/// preset (r1, r2, r3, pipeline:...).
const ScoreAccumulation* framework_score_accumulation(std::string_view name);

}  // namespace ropesim::attention
