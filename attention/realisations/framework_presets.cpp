#include "attention/realisations/framework_presets.hpp"

#include <fmt/format.h>

#include <array>
#include <string>

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace ropesim::attention {

namespace {

// The spellings shared by most presets: every step up to cos/sin in fp32 (PyTorch's
// `.float()` buffers, fp32 arange, autocast off; llama.cpp's float variables).
#define ROPESIM_FP32_STEPS                                                                 \
  "pipeline:exponent=fp32;power=fp32;inv_freq=fp32;position=fp32;angle=fp32;cos_sin=fp32;" \
  "attention_scaling=fp32;"

/// Cache in the activation format, q·cos + rotate_half(q)·sin in A (three roundings).
#define ROPESIM_EAGER_IN_A \
  "table=A;rotation=A;output=A;recipe=product;arithmetic=hf_eager;layout=rotate_half"
/// Cache in A, the kernel computes in fp32 and stores once.
#define ROPESIM_KERNEL_FROM_A_CACHE \
  "table=A;rotation=fp32;output=A;recipe=product;arithmetic=theory;layout=rotate_half"
/// cos/sin never leave fp32 (registers or shared memory), the kernel stores once.
#define ROPESIM_KERNEL_FP32_TABLE \
  "table=fp32;rotation=fp32;output=A;arithmetic=theory;layout=rotate_half"

#define ROPESIM_HF_SOURCES                                                                     \
  "huggingface/transformers@0044e3b3facff1a1ad60b235c69d5b45beae75a4:"                         \
  "src/transformers/modeling_rope_utils.py:29-67 (inv_freq = 1.0 / (base ** "                  \
  "(arange(int64).float() / dim))); "                                                          \
  "huggingface/transformers@002272831fba584eb30dca9729c1be456836960a:"                         \
  "src/transformers/models/llama/modeling_llama.py:95-144 (inv_freq buffer; autocast off; "    \
  "inv_freq @ position_ids in fp32; cos/sin; .to(x.dtype)), 176-207 (rotate_half; "            \
  "q_embed = q*cos + rotate_half(q)*sin); "                                                    \
  "pytorch/pytorch@?:aten/src/ATen/native/Pow.cpp TORCH_IMPL_FUNC(pow_Scalar_out) "            \
  "(wrapped_scalar_tensor(base, exp.device()): the Python base becomes a tensor converted to " \
  "the exponent's dtype)"

#define ROPESIM_CUDA_EXPONENT_SOURCES                                                        \
  "pytorch/pytorch@?:aten/src/ATen/native/cuda/BinaryDivTrueKernel.cu div_true_kernel_cuda " \
  "(CPU-scalar divisor: a * (1/b) in opmath); "                                              \
  "pytorch/pytorch@037fdb4463564e052f3a218c7fc0eb794324d7e1:aten/src/ATen/native/cuda/"      \
  "PowKernel.cu pow_tensor_tensor_kernel (pow_(scalar_t base, scalar_t exp))"

const std::array<FrameworkPreset, 16> kPresets{{
    {"hf", ROPESIM_FP32_STEPS ROPESIM_EAGER_IN_A,
     "Hugging Face transformers default RoPE as NUMERIC §3 'hf' writes it: the built-in name, "
     "the same step list as hf-cpu",
     ROPESIM_HF_SOURCES, "See hf-cpu."},
    {"hf-cpu", ROPESIM_FP32_STEPS ROPESIM_EAGER_IN_A,
     "Hugging Face eager on CPU: fp32 inv_freq = 1/β^(2k/D), fp32 t, fp32 inv_freq @ t (autocast "
     "off), fp32 cos/sin cast to the activation dtype, q·cos + rotate_half(q)·sin in that dtype",
     ROPESIM_HF_SOURCES,
     "PyTorch's CPU pow, cos and sin are Sleef's vectorised u10 functions (within 1 ulp, not "
     "correctly rounded); every step here is correctly rounded (hf-torch-cpu calls SLEEF as "
     "PyTorch does: 94.9 % of the fp32 cos/sin of llama2-7b's first 16384 positions agree). The "
     "angle is a batched matmul "
     "with inner dimension 1 (one product per entry), which a correctly rounded fp32 product "
     "models exactly. The Python base is converted to fp32 before pow (base unset; exact for "
     "1e4, 5e5, 1e6). rope_scaling other than llama3 (yarn, longrope, dynamic) is not modelled "
     "by the schedule."},
    {"hf-torch-cpu",
     "pipeline:exponent=fp32;power=fp32:sleef-u10;inv_freq=fp32;position=fp32;angle=fp32;"
     "cos_sin=fp32:sleef-u10;attention_scaling=fp32;" ROPESIM_EAGER_IN_A
     ";scalar_division=reciprocal",
     "Hugging Face >= 4.38 LlamaRotaryEmbedding as PyTorch CPU computes it at capability AVX2 "
     "(one thread): hf-cpu's steps with pow, cos and sin by SLEEF's u10 AVX2 functions, cos/sin "
     "of emb = cat(freqs, freqs) taken eight consecutive entries per vector, and a Python float "
     "over a tensor in the llama3 scaling (2*math.pi / inv_freq, old_context_len / wavelen) as "
     "torch's Tensor.__rtruediv__ computes it, reciprocal() then a product (two roundings)",
     ROPESIM_HF_SOURCES
     "; pytorch/pytorch@v1.13.1 (Debian python3-torch 1.13.1+dfsg-4, libtorch-dev headers):"
     "torch/_tensor.py:837-840 (__rdiv__: return self.reciprocal() * other; __rtruediv__ = "
     "__rdiv__); "
     "aten/src/ATen/cpu/vec/vec256/vec256_float.h:189-197 (sin/cos: Sleef_sinf8_u10, "
     "Sleef_cosf8_u10), 266-268 (pow: Sleef_powf8_u10); aten/src/ATen/cpu/vml.h:94-111 "
     "(IMPLEMENT_VML(cos): map over 8-lane vectors, chunks of parallel_for grain 2048); "
     "aten/src/ATen/cpu/vec/functional_base.h:225-240 (map: full vectors, then one "
     "zero-padded partial vector); aten/src/ATen/native/cpu/Loops.h:197-223 (vectorized_loop: "
     "pow in blocks of 16, then the scalar std::pow tail); sleef 3.5.1 "
     "src/libm/sleefsimdsp.c xcosf_u1/xsinf_u1 (one reduction for all lanes: the short "
     "Cody-Waite one only when every |x| < TRIGRANGEMAX2f = 125, else the wider double-float "
     "one)",
     "Checked bit for bit against real PyTorch 1.13.1 (tests/torch/: llama2-7b, llama3-8b, "
     "llama3.1-8b x bf16, fp16, fp32, positions 0..16383). Needs an x86-64 CPU with AVX2 and "
     "FMA (SLEEF's dispatcher then picks the avx2 variant, which is called here by name) and a "
     "multiple of 8 rotary blocks. With several threads at::parallel_for may split emb at "
     "offsets that are not multiples of 8, which regroups the lanes; ATEN_CPU_CAPABILITY="
     "avx512 uses Sleef_cosf16_u10 (16 lanes) and ATEN_CPU_CAPABILITY=default glibc "
     "(pipeline steps :glibc); neither is this preset. Tensors that are not contiguous take "
     "another loop. rope_scaling other than llama3 is not modelled by the schedule."},
    {"hf-cuda", ROPESIM_FP32_STEPS ROPESIM_EAGER_IN_A,
     "Hugging Face eager with inv_freq, the matmul and cos/sin on a CUDA device, TF32 off "
     "(PyTorch's default): the same step list as hf-cpu",
     ROPESIM_HF_SOURCES "; " ROPESIM_CUDA_EXPONENT_SOURCES,
     "The step list equals hf-cpu's: PyTorch's CUDA pow(Scalar, Tensor) also converts the "
     "Python base into the exponent's dtype (pow_Scalar_out wraps it with "
     "wrapped_scalar_tensor(base, exp.device()); the kernel computes pow_(scalar_t, scalar_t)), "
     "so the base is not kept exact on CUDA either (base=exact has no PyTorch counterpart "
     "found). What differs and is not expressible: (1) `arange(...).float() / dim` divides by a "
     "CPU scalar, which CUDA computes as e = rnd(2k · rnd(1/D)) (BinaryDivTrueKernel.cu), equal "
     "to rnd(2k/D) when D is a power of two; other D need an exponent recipe "
     "'reciprocal-multiply'; (2) CUDA powf/cosf/sinf are not correctly rounded (CUDA "
     "Programming Guide, maximum ulp error tables). When the model is built on CPU and moved to "
     "the GPU, inv_freq is hf-cpu's."},
    {"hf-cuda-tf32", ROPESIM_FP32_STEPS ROPESIM_EAGER_IN_A ";angle.operands=tf32",
     "hf-cuda with TF32 matmuls allowed (torch.backends.cuda.matmul.allow_tf32 or "
     "set_float32_matmul_precision('high')): inv_freq and t rounded to TF32 before the product "
     "(transformers #48428)",
     ROPESIM_HF_SOURCES "; " ROPESIM_CUDA_EXPONENT_SOURCES,
     "As hf-cuda. The fp32 → TF32 operand conversion is modelled with the run's rounding "
     "(nearest-even by default); whether a given cuBLAS kernel rounds or truncates the operands "
     "was not verified. Positions above 2048 lose their low bits (t = 4097 → 4096)."},
    {"vllm", ROPESIM_FP32_STEPS ROPESIM_KERNEL_FROM_A_CACHE,
     "vLLM RotaryEmbedding: fp32 inv_freq and t on the GPU, einsum outer product (elementwise), "
     "fp32 cos/sin, cos_sin_cache cast to the model dtype; the CUDA kernel reads cache and q/k "
     "as float, rotates in fp32 and stores once",
     "vllm-project/vllm@04458da08417899fc04046216c986d28abeb85af:"
     "vllm/model_executor/layers/rotary_embedding/base.py:35-36 (cache.to(dtype)), 41-60 "
     "(_compute_inv_freq, _compute_cos_sin_cache: einsum('i,j -> ij', t, inv_freq), cos, sin); "
     "vllm-project/vllm@0f5257e245116449bfbe78a87c22aeef632eba8f:csrc/pos_encoding_kernels.cu:8-33 "
     "(apply_token_rotary_embedding: float cos_f, sin_f, x_f, y_f; x_f*cos_f - y_f*sin_f stored "
     "to scalar_t); "
     "pytorch/pytorch@?:aten/src/ATen/native/Linear.cpp sumproduct_pair (no contracted index: "
     "at::mul)",
     "The cache is built on the GPU (base.py's NOTE), so hf-cuda's remarks on the exponent "
     "(a·(1/D)) and CUDA libm apply. nvcc contracts x_f*cos_f - y_f*sin_f to an FMA by default "
     "(-fmad=true): fma(x, c, -rnd(y·s)), two roundings before the store where ropesim rounds "
     "three times (arithmetic=theory); a rotation arithmetic 'fma' would express it. "
     "forward_native (CPU and other platforms) rotates in the model dtype instead "
     "(rotation=A, arithmetic=theory)."},
    {"vllm-native",
     ROPESIM_FP32_STEPS
     "table=A;rotation=A;output=A;recipe=product;arithmetic=theory;layout=rotate_half",
     "vLLM RotaryEmbedding.forward_native (platforms without the CUDA kernel): vllm's cache, "
     "then x1·cos − x2·sin and x2·cos + x1·sin in the model dtype",
     "vllm-project/vllm@04458da08417899fc04046216c986d28abeb85af:"
     "vllm/model_executor/layers/rotary_embedding/base.py:41-60 (the cache, as vllm); "
     "vllm-project/vllm@002d181a55a03803d7d69547846630069d2378b8:"
     "vllm/model_executor/layers/rotary_embedding/common.py:35-53 (apply_rotary_emb_torch: "
     "cos.to(x.dtype); o1 = x1 * cos - x2 * sin; o2 = x2 * cos + x1 * sin)",
     "As vllm for the cache (on whatever device runs it: CPU builds compute the exponent by "
     "true division). With nearest rounding arithmetic=theory in A gives the same values as "
     "hf_eager in A; they differ only under directed rounding."},
    {"llamacpp-cpu",
     ROPESIM_FP32_STEPS
     "table=fp32;rotation=fp32;output=A;recipe=chained;arithmetic=theory;layout=rotate_half",
     "llama.cpp CPU (ggml-cpu): theta_scale = powf(freq_base, -2.0f/n_dims); θ ← (float)pos, "
     "then θ ← θ·theta_scale once per pair; cosf/sinf into an fp32 cache; rotation in fp32, "
     "stored once to the tensor type",
     "ggml-org/ggml@d99724f2b141fed9e1a9f402213506c081433465:src/ggml-cpu/ops.cpp:5829-5860 "
     "(rope_yarn: cosf(theta)*mscale; ggml_rope_cache_init: theta *= theta_scale), 5934-5948 "
     "(rotate_pairs: x0*cos_theta - x1*sin_theta in float, from_f32 store), 6014 (theta_scale = "
     "powf(freq_base, -2.0f/n_dims)), 6057-6058 (cache init from p = pos[i2])",
     "glibc powf/cosf/sinf are not guaranteed correctly rounded; every step here is "
     "(llamacpp-cpu-glibc calls them). freq_base "
     "is an fp32 GGUF value (base unset gives the same, the power step being fp32). Llama "
     "models use GGML_ROPE_TYPE_NORMAL, which pairs adjacent coordinates (rotate_pairs with "
     "n_offset 1): layout=adjacent; the preset keeps the built-in name's rotate_half (same "
     "values up to the coordinate permutation). The compiler may contract x0*cos - x1*sin to an "
     "FMA (GNU dialects default to -ffp-contract=fast). rope_freqs factors, YaRN ext_factor and "
     "freq_scale != 1 are not modelled (check_applicable refuses llama3 schedules)."},
    {"llamacpp-cpu-glibc",
     "pipeline:exponent=fp32;power=fp32:glibc;inv_freq=fp32;position=fp32;angle=fp32;"
     "cos_sin=fp32:glibc;attention_scaling=fp32;"
     "table=fp32;rotation=fp32;output=A;recipe=chained;arithmetic=theory;layout=rotate_half",
     "llamacpp-cpu with the library calls ggml makes: theta_scale = glibc powf(freq_base, "
     "-2.0f/n_dims), the chained θ, glibc cosf/sinf into the fp32 cache",
     "ggml-org/ggml@d99724f2b141fed9e1a9f402213506c081433465:src/ggml-cpu/ops.cpp:5829-5860 "
     "(rope_yarn: *cos_theta = cosf(theta) * mscale, *sin_theta = sinf(theta) * mscale; mscale "
     "1 and freq_scale 1 are exact), 6014 (theta_scale = powf(freq_base, -2.0f/n_dims)), "
     "5934-5948, 6057-6058 (as llamacpp-cpu)",
     "Assumes ggml calls glibc's scalar cosf/sinf/powf (a gcc build on glibc without "
     "-ffast-math, which could vectorise them through libmvec); the bits are this machine's "
     "glibc (provenance records its version). Not checked against a ggml build here; glibc's "
     "cosf/sinf are the ones PyTorch's scalar path calls, which tests/torch/ checks. The other "
     "remarks of llamacpp-cpu apply."},
    {"llamacpp-cuda",
     ROPESIM_FP32_STEPS
     "table=fp32;rotation=fp32;output=A;recipe=power;arithmetic=theory;layout=rotate_half",
     "llama.cpp CUDA (ggml-cuda): theta_scale on the host as on CPU; angle = pos · "
     "powf(theta_scale, k) in the kernel; cosf/sinf in registers; rotation in fp32, stored once",
     "ggml-org/ggml@d99724f2b141fed9e1a9f402213506c081433465:src/ggml-cuda/rope.cu:22-41 "
     "(rope_yarn: cosf, sinf), 105-119 (rope_norm: theta_base = pos[i2]*powf(theta_scale, "
     "iw/2.0f); x0*cos_theta - x1*sin_theta), 180-196 (rope_neox), 388 (theta_scale = "
     "powf(freq_base, -2.0f / n_dims) on the host); src/ggml-cuda/CMakeLists.txt:197 "
     "(CUDA_FLAGS -use_fast_math)",
     "ggml-cuda is built with -use_fast_math: in the kernel cosf/sinf become __cosf/__sinf "
     "(accurate to about 2^-21.4 absolute on [-π, π] only; large angles lose far more), "
     "powf(theta_scale, k) becomes the fast exp2/log2 approximation, and x0*cos - x1*sin is "
     "contracted to FMAs. ropesim rounds powf(theta_scale, k), cos and sin correctly, so for "
     "large positions real CUDA values differ by much more than an ulp; modelling this needs "
     "a cos_sin (and power) libm model, e.g. a step value 'fp32-cuda-fast'. Same layout remark "
     "as llamacpp-cpu."},
    {"megatron", ROPESIM_FP32_STEPS ROPESIM_EAGER_IN_A,
     "Megatron-Core unfused RoPE (apply_rope_fusion=False): fp32 inv_freq on the GPU, fp32 "
     "positions, torch.outer (elementwise), cos/sin in fp32 times mscale, .to(t.dtype), then "
     "t·cos + rotate_half(t)·sin in that dtype",
     "NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553:"
     "megatron/core/models/common/embeddings/rotary_pos_embedding.py:78-81 (inv_freq = 1.0 / "
     "(rotary_base ** (arange(float32) / dim)) on the current CUDA device), 127-140 (seq = "
     "arange(dtype=inv_freq.dtype); freqs = torch.outer(seq, inv_freq)); "
     "megatron/core/models/common/embeddings/rope_utils.py:73-89 (_rotate_half), 140-147 "
     "(cos_ = (torch.cos(freqs) * mscale).to(t.dtype); t = (t * cos_) + (_rotate_half(t) * sin_)); "
     "pytorch/pytorch@?:aten/src/ATen/native/LinearAlgebra.cpp outer (self.reshape({n, 1}) * vec2)",
     "hf-cuda's remarks on the CUDA exponent (a·(1/D)) and libm apply (use_cpu_initialization "
     "computes inv_freq on CPU instead: hf-cpu's values). rotary_interleaved=True pairs "
     "adjacent coordinates (layout=adjacent). mscale != 1 is the attention_scaling step (fp32, "
     "before the cast)."},
    {"megatron-fused", ROPESIM_FP32_STEPS "recipe=product;" ROPESIM_KERNEL_FP32_TABLE,
     "Megatron-Core with apply_rope_fusion=True: Megatron's fp32 freqs handed to "
     "TransformerEngine's fused kernel (see te-fused)",
     "NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553:"
     "megatron/core/models/common/embeddings/rope_utils.py:340-371 (apply_rope_fusion → "
     "fused_apply_rotary_pos_emb(t, freqs)); "
     "NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b:"
     "transformer_engine/common/fused_rope/fused_rope.cu:38-76",
     "As te-fused; Megatron refuses mscale != 1 on this path."},
    {"te-fused", ROPESIM_FP32_STEPS "recipe=product;" ROPESIM_KERNEL_FP32_TABLE,
     "TransformerEngine fused RoPE: fp32 freqs (RotaryPositionEmbedding, autocast off, einsum "
     "outer product), sincosf in fp32 into shared memory, v_src·cos + v_src_rotate·sin in "
     "float, one store to the tensor type",
     "NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b:"
     "transformer_engine/pytorch/attention/rope.py:54-60 (inv_freq on the CUDA device), 79-99 "
     "(autocast disabled; seq fp32; einsum('i , j -> i j')); "
     "transformer_engine/common/fused_rope/fused_rope.cu:38-76 (fused_rope_block_forward: "
     "sincosf(freqs) into float shared memory; dst = v_src * v_cos + v_src_rotate * v_sin), "
     "transformer_engine/common/CMakeLists.txt:616-654 (fused_rope.cu is not among the "
     "--use_fast_math sources)",
     "cos/sin live in fp32 shared memory (table=fp32). nvcc contracts v_src*v_cos + "
     "v_src_rotate*v_sin to fma(v_src, v_cos, rnd(v_src_rotate·v_sin)) by default: two "
     "roundings before the store, ropesim three (needs a rotation arithmetic 'fma'). CUDA "
     "sincosf is not correctly rounded. inv_freq on the GPU: hf-cuda's exponent remark."},
    {"flash-attn", ROPESIM_FP32_STEPS ROPESIM_KERNEL_FROM_A_CACHE,
     "FlashAttention RotaryEmbedding: fp32 inv_freq and t, torch.outer (not einsum, which "
     "autocast would run in bf16), fp32 cos/sin cast to the qkv dtype; the Triton kernel loads "
     "cos/sin/x as fp32, rotates in fp32 and stores once",
     "Dao-AILab/flash-attention@0251105a2fb19d2957484b7f023cd8c115286ced:"
     "flash_attn/layers/rotary.py:382-386 (_compute_inv_freq in fp32), 388-416 "
     "(_update_cos_sin_cache: t = arange(float32); freqs = torch.outer(t, inv_freq); "
     "torch.cos(freqs).to(dtype)); flash_attn/ops/triton/rotary.py:73-88 (cos, sin, x0, x1 "
     ".to(tl.float32); o0 = x0 * cos - x1 * sin; tl.store)",
     "Triton fuses x0*cos - x1*sin into an FMA by default (enable_fp_fusion): two roundings "
     "where ropesim rounds three times (needs a rotation arithmetic 'fma'). CUDA libm and "
     "hf-cuda's exponent remark apply. XPos (scale_base) is not modelled; interleaved=True is "
     "layout=adjacent."},
    {"mlx", ROPESIM_FP32_STEPS "recipe=product;" ROPESIM_KERNEL_FP32_TABLE,
     "MLX mx.fast.rope / nn.RoPE (Metal): inv_freq = exp2(-d·log2 β) with d = k/(D/2) in fp32, "
     "θ = (scale·pos)·inv_freq in fp32, metal::fast::cos/sin in registers, rotation in fp32 "
     "stored once — nearest pipeline: the fp32 product recipe",
     "ml-explore/mlx@846d176227a0ac13d2667e58d2bb68b322109ab0:mlx/backend/metal/rope.cpp:123 "
     "(float base = std::log2(base_)); mlx/backend/metal/kernels/rope.metal:12-50 "
     "(rope_single_impl: L = scale * float(offset); theta = L * inv_freq; metal::fast::cos/sin; "
     "x1 * costheta - x2 * sintheta in float; store T), 64-65 (d = float(pos.x) / "
     "float(grid.x); inv_freq = metal::exp2(-d * base)); "
     "python/mlx/nn/layers/positional_encoding.py:10-55 (nn.RoPE → mx.fast.rope; traditional "
     "defaults to False)",
     "The frequencies are not a power step: log2 β is rounded to fp32 on the host, then "
     "rnd(−d·log2β) and exp2 in the kernel, where ropesim computes rnd(β^e) and rnd(1/p) "
     "(the exponent itself agrees: k/(D/2) and 2k/D are the same real, rounded once). A "
     "recipe 'exp2' (inv_freq = exp2(−rnd(e·rnd(log2 β)))) would express it. "
     "metal::fast::cos/sin and exp2 under Metal's default fast math are not correctly rounded. "
     "traditional=True is layout=adjacent; with the freqs argument inv_freq = 1/freqs."},
    {"jax", ROPESIM_FP32_STEPS ROPESIM_KERNEL_FP32_TABLE ";recipe=quotient",
     "JAX, Gemma's apply_rope: timescale = β^((2/D)·k) in fp32, angle = position / timescale "
     "(no reciprocal), fp32 sin/cos, rotation in fp32 (bf16 × fp32 promotes to fp32), one cast "
     "to the input dtype",
     "google-deepmind/gemma@7691fd4e7f26c9ec5db38110dddb3addfab4d767:"
     "gemma/gm/math/_positional_embeddings.py:23-75 (freq_exponents = (2.0 / head_dim) * "
     "arange(float32); timescale = base_frequency**freq_exponents; sinusoid_inp = positions / "
     "timescale; first_half * cos - second_half * sin; out.astype(inputs.dtype))",
     "The exponent is rnd(k · rnd(2/D)), a product, where the spelling divides rnd(2k/D): the "
     "same when D is a power of two (Gemma: 256), otherwise needs an exponent recipe "
     "'scaled-index'. XLA's pow, sin and cos are not correctly rounded, and XLA may fuse the "
     "rotation's multiply-add into an FMA. rope_proportion < 1 (timescale = inf for the "
     "unrotated pairs) is the schedule's partial rotary; scale_factor 1 is exact."},
}};

#undef ROPESIM_FP32_STEPS
#undef ROPESIM_EAGER_IN_A
#undef ROPESIM_KERNEL_FROM_A_CACHE
#undef ROPESIM_KERNEL_FP32_TABLE
#undef ROPESIM_HF_SOURCES
#undef ROPESIM_CUDA_EXPONENT_SOURCES

}  // namespace

std::span<const FrameworkPreset> framework_presets() { return kPresets; }

const FrameworkPreset* find_framework_preset(std::string_view name) {
  for (const auto& p : kPresets) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const FrameworkPreset& framework_preset(std::string_view name) {
  if (const auto* p = find_framework_preset(name)) return *p;
  throw InvalidArgument(fmt::format("unknown framework preset '{}'{}; accepted: {}", name,
                                    ropesim::did_you_mean(name, framework_preset_names()),
                                    fmt::join(framework_preset_names(), ", ")));
}

const ScoreAccumulation* framework_score_accumulation(std::string_view name) {
  // One accumulation for every preset: the frameworks' q·kᵀ is a GEMM (or a fused attention
  // kernel) whose accumulator is fp32 for fp16/bf16 inputs.
  static const ScoreAccumulation fp32{
      "fp32",
      "pytorch/pytorch@0040fe0d0ed6a2400c7aa65a5fdf352b81c88b1e:aten/src/ATen/cuda/CUDABlas.cpp "
      "bgemm_internal_cublaslt (Half and BFloat16 GEMMs run with computeType CUBLAS_COMPUTE_32F; "
      "CUBLAS_COMPUTE_16F only when allowFP16AccumulationCuBLAS is set, off by default); "
      "the fused attention kernels (flash-attention, TransformerEngine, vLLM, llama.cpp CUDA), "
      "PyTorch's CPU gemm for reduced floats, ggml's CPU dot products, MLX's Metal GEMM and XLA "
      "are taken to accumulate in fp32 too: their sources were not read (only "
      "CUDABlas.cpp was)",
      "real GEMMs sum in blocked or tree orders (split-K, tensor-core fragments) and may fuse "
      "products; this is left-to-right fp32 accumulation with each product rounded to fp32 (exact "
      "for fp16 products, and for bf16 products inside fp32's range)"};
  return find_framework_preset(name) != nullptr ? &fp32 : nullptr;
}

std::vector<std::string_view> framework_preset_names() {
  std::vector<std::string_view> names;
  names.reserve(kPresets.size());
  for (const auto& p : kPresets) names.push_back(p.name);
  return names;
}

}  // namespace ropesim::attention
