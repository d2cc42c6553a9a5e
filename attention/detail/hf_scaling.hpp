#pragma once
/// Internal: Hugging Face's rope scaling of inv_freq as the framework pipelines compute it
/// (NUMERIC §3 "hf"): the tensor operations of transformers' modeling_rope_utils.py
/// `_compute_<type>_parameters`, in the order written, each rounded in the inv_freq step's
/// compute format (fp32 for hf). Python-float scalars (config numbers, YaRN's correction
/// range) are binary64 values, converted to the tensor's format where PyTorch does.
#include <cstdint>

#include "attention/detail/format_ops.hpp"
#include "attention/schedules/schedule.hpp"

namespace ropesim::attention::detail {

/// inv_freq of block `b` after `s.rope_scaling`, rounded in `f`:
///   none, mrope: inv_freq unchanged;
///   linear:   inv_freq / factor;
///   llama3:   wavelen = 2π/inv_freq; bands by low/high wavelength; smooth interpolation
///             (NUMERIC §3; `_compute_llama3_parameters`);
///   yarn:     interp = 1/(factor·p), extrap = inv_freq (= 1/p), ramp_k = clamp((k - low)/(high
///             - low), 0, 1), ef = 1 - ramp, interp·(1 - ef) + extrap·ef
///             (`_compute_yarn_parameters`, low/high from Python floats: floor/ceil of
///             dim·log(L/(n·2·π))/(2·log β), each operation rounded to binary64, log assumed
///             correctly rounded);
///   longrope: 1/(ext_k·p), ext_k the fp32 of the Python float of short/long_factor[k];
///   dynamic:  unchanged when seq_len ≤ max_position_embeddings; otherwise throws
///             InvalidArgument (HF recomputes the base in Python floats; not modelled).
/// `power` is p = fp32(β^e) of the pipeline's power step (HF's pos_freqs), `inv_freq` =
/// fp32(1/p). Raised flags are or-ed into `flags`. `reciprocal_division`: a Python float over
/// a tensor (llama3's 2π/inv_freq and L/wavelen) as PyTorch computes it, rnd(rnd(1/x)·rnd(s))
/// (PipelineSteps::reciprocal_scalar_division); otherwise one correctly rounded division.
Value hf_scaled_inv_freq(const FormatOps& f, const Value& inv_freq, const Value& power,
                         const Schedule& s, const RotaryBlock& b, std::uint8_t& flags,
                         bool reciprocal_division = false);

}  // namespace ropesim::attention::detail
