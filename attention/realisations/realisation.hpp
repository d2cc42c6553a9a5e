#pragma once
/// Realisations of RoPE in a finite format (THEORY §3; NUMERIC §3): how a fixed-precision
/// model turns the exact rotation R_i = blockdiag(Rot(θ_d·i)) into a realised R̂_i.
///
///   r1        ideal phase, rounded output: round_F(cos θi), round_F(sin θi)   [RoPE-X Prop 4.1]
///   r2        phase first: θ̂ = round_F(θ), î = round_F(i), φ = round_F(θ̂·î), then
///             round_F(cos φ), round_F(sin φ)                                 [RoPE-X §2.4]
///   r3        periodic table T_d(r) = round_F(Rot(2π a_d r/m_d)), R̂_i = T_d(i mod m_d)
///             (rational schedules only)                                      [RoPE-X eq. 7]
///   hf, llamacpp-cpu, llamacpp-cuda, pipeline:...   framework step lists of NUMERIC §3
///   resonance-table[seq_len=L]   Resonance RoPE's reference cache (ResonanceTable): one
///             period tabulated in fp32 and tiled for blocks with λ_d ≤ L     [arXiv 2403.00071]
///
/// Every rounding is correctly rounded (numeric engine semantics: the exact result rounded
/// once into the step's format). Overflow and NaN are part of the simulation and are flagged
/// per position; realised values are compared by bit pattern (numeric::Value::same_bits).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attention/schedules/schedule.hpp"
#include "numeric/engine.hpp"
#include "numeric/flags.hpp"
#include "numeric/format.hpp"
#include "numeric/format_binding.hpp"
#include "numeric/libm.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"

namespace ropesim::attention {

using numeric::Format;
using numeric::Rounding;
using numeric::Value;

/// How the coordinates of a head vector form pairs (THEORY §3 "Pairing").
enum class PairLayout {
  adjacent,     ///< block d rotates (x[2d], x[2d+1])                       [RoPE-X]
  rotate_half,  ///< block d rotates (x[d], x[d + R/2]), R = rotary dim     (Hugging Face)
};
/// "adjacent" / "rotate_half".
std::string_view to_string(PairLayout layout);
/// Parses "adjacent" or "rotate_half" (also "rotate-half"). Throws InvalidArgument.
PairLayout parse_pair_layout(std::string_view text);

/// How a pipeline forms the angle of block k at position i (NUMERIC §3).
enum class AngleRecipe {
  product,   ///< angle = inv_freq_k · t, inv_freq_k = 1/β̂^(2k/D) (Hugging Face, vLLM, Megatron)
  quotient,  ///< angle = t / β̂^(2k/D): the "timescale" division, no reciprocal (JAX/T5X style)
  chained,  ///< θ ← t; θ ← θ·theta_scale once per pair, theta_scale = β̂^(-2/D) (llamacpp-cpu)
  power,  ///< angle = t · powf(theta_scale, k) (llamacpp-cuda)
};
/// "product" / "quotient" / "chained" / "power".
std::string_view to_string(AngleRecipe recipe);

/// How the realised rotation is applied to a vector (THEORY §2.1; NUMERIC §3).
enum class RotationArithmetic {
  /// (rnd(rnd(c·x0) - rnd(s·x1)), rnd(rnd(s·x0) + rnd(c·x1))) in the rotation format
  /// (THEORY §2.1), then stored to the output format (no-op when equal).
  theory,
  /// Hugging Face eager `q·cos + rotate_half(q)·sin`: per element rnd(rnd(q·c) + rnd(q'·s)),
  /// with q' = -x1 for the first and +x0 for the second coordinate (three roundings).
  hf_eager,
};

/// One operation of a pipeline as real code runs it: the exact result of the operation on
/// its (already realised) inputs is rounded once into `compute` with `rounding`, then cast
/// to `store` (a second rounding, when set and different). Real code computes in one format
/// and stores in another (e.g. inv_freq computed in fp32 and kept as a bf16 buffer).
struct StepFormat {
  Format compute = Format::fp32();
  std::optional<Format> store;       ///< unset: the result stays in `compute`
  std::optional<Rounding> rounding;  ///< unset: the realisation's rounding
  /// Who computes the step's transcendental function (power: pow; cos_sin: cos and sin):
  /// correctly rounded (the default), or the library a framework calls, glibc's powf/cosf/sinf
  /// or SLEEF's u10 AVX2 functions as PyTorch's AVX2 kernels apply them (numeric/libm.hpp).
  /// Library implementations need compute = fp32 and nearest-even rounding. With sleef-u10:
  ///   cos_sin  the angles of eight consecutive blocks 8⌊d/8⌋ … 8⌊d/8⌋+7 at the same position
  ///            go through Sleef_cosf8_u10avx2 / Sleef_sinf8_u10avx2 together, as at::vml's
  ///            vec::map passes the contiguous fp32 tensor emb = cat(freqs, freqs) [L, 2·nb] in
  ///            8-lane vectors (ATen/cpu/vml.h IMPLEMENT_VML; ATen/cpu/vec/functional_base.h
  ///            map); a lane's bits depend on its mates (check_applicable: nb a multiple of 8);
  ///   power    the exponents k < 16⌊n/16⌋ of the n = ⌈D/2⌉-element exponent tensor go through
  ///            Sleef_powf8_u10avx2 and the tail through std::pow (glibc powf), as
  ///            cpu_kernel_vec's vectorized_loop does (ATen/native/cpu/Loops.h:197-223: blocks of
  ///            2·Vectorized<float>::size(), then basic_loop); chained/power recipes: SLEEF.
  numeric::LibmImplementation implementation = numeric::LibmImplementation::correctly_rounded;
  /// The format the step's result lives in: store if set, else compute.
  const Format& stored() const { return store ? *store : compute; }
  /// The rounding of this step under a realisation whose rounding is `fallback`.
  Rounding rounding_or(Rounding fallback) const { return rounding ? *rounding : fallback; }
  /// "fp32", "fp32>bf16", "bf16@toward-zero", "fp32>fp16:glibc": the spelling
  /// parse_realisation reads.
  std::string spelling() const;
  bool operator==(const StepFormat&) const = default;
};

/// Resonance RoPE's reference realisation [arXiv 2403.00071; sheryc/resonance_rope
/// llama_finetuning/scaled_rope/LlamaYaRNScaledResonanceRotaryEmbedding.py and
/// src/models/components/positional_embedding/rotary_resonance.py, `resonance_register` and
/// `compute_freqs`], for a schedule whose blocks are θ = 2π/λ_d (RationalTurn {1, λ_d}):
///   r_inv_freq_d = fp32(fp32(1/λ_d)·fp32(2π))   (`2 * math.pi / r_wavelengths` is PyTorch's
///                                                __rtruediv__ = reciprocal() * other, fp32)
///   block with λ_d ≤ L (`seq_len >= r_wavelengths[i]`): t = i mod λ_d (the period
///     `arange(r_wavelengths[i])` tiled by `repeat`); otherwise t = i (`arange(seq_len)`)
///   angle = fp32(fp32(t)·r_inv_freq_d); cos, sin in fp32 (`emb.cos()`); times the schedule's
///   attention factor in fp32 when it has one (Resonance-YaRN's mscale, `emb.cos() *
///   self.mscale`); then cast to the activation format A (`.to(dtype=x.dtype)`).
/// The wavelengths are the schedule's exact λ_d; the reference computes them in fp32
/// (`torch.round(2π/inv_freq)` with inv_freq in fp32), which agrees with the exact λ_d
/// unless 2π·β^(2k/D) lies within fp32 error of a half-integer (checked for the schedules
/// of docs/variants/RESONANCE.md by tests/derivations/resonance_wavelengths.py).
/// The cache is the one built for length L; the reference rebuilds it when a longer
/// sequence arrives (forward: `seq_len > max_seq_len_cached`), which is the realisation with
/// a larger L. Unset L: every block tabulated (any L ≥ max λ_d).
struct ResonanceTable {
  std::optional<std::uint64_t> seq_len;
  bool operator==(const ResonanceTable&) const = default;
};

/// The named operations of a pipeline, in computation order (NUMERIC §3). D is the
/// exponent dimension of the schedule, k the 0-based frequency index, i the position.
///   exponent           e_k = 2k/D (2k and D converted to the step's format, then divided);
///                      chained/power recipes: -2/D
///   power              p_k = β̂^(e_k) (chained/power: theta_scale = β̂^(-2/D))
///   inv_freq           1/p_k, then the schedule's rope scaling, in this step's compute format
///                      (power recipe: powf(theta_scale, k))
///   position           t = i rounded into the step's format
///   angle              by the recipe (GEMM operands first rounded to angle_operands)
///   cos_sin            cos and sin of the angle
///   attention_scaling  cos·s and sin·s for a schedule attention factor s (YaRN mscale)
///   table              the stored (cos, sin) cache: what the census compares
///   rotation           arithmetic of the rotation applied to q/k
///   output             where the rotated q/k are stored
/// The first four per-block values (exponent, power, inv_freq and their flags) are the
/// block's *constants*: they do not depend on the position.
struct PipelineSteps {
  /// "hf", a framework preset name, or "pipeline" for a custom step list.
  std::string name = "pipeline";
  AngleRecipe recipe = AngleRecipe::product;
  /// β̂: nullopt = the binary64 Python float of β converted into the power step's compute
  /// format (PyTorch on CPU); base_exact = β itself (the power is then one correctly rounded
  /// β^e); base_format = the Python float rounded into that format.
  bool base_exact = false;
  std::optional<Format> base_format;
  /// How the rope scaling divides a Python float by a tensor (Llama 3's `2 * math.pi /
  /// inv_freq` and `old_context_len / wavelen`, hf_scaled_inv_freq): false = one correctly
  /// rounded division (NUMERIC §3's reading of the source); true = PyTorch's
  /// `Tensor.__rtruediv__`, `self.reciprocal() * other`: rnd(rnd(1/x)·rnd(s)), two roundings
  /// (pytorch/pytorch@v1.13.1 torch/_tensor.py:837-840 `__rdiv__`, `__rtruediv__ = __rdiv__`).
  /// Pipeline key `scalar_division=reciprocal` (default `correct`).
  bool reciprocal_scalar_division = false;
  StepFormat exponent, power, inv_freq, position, angle, cos_sin, attention_scaling;
  /// GEMM operand format of the angle product: inv_freq (or theta_scale) and t are first
  /// rounded to it, the product then accumulates in angle's compute format (TF32 matmul).
  std::optional<Format> angle_operands;
  Format table = Format::fp32();   ///< stored (cos, sin) table: what the census compares
  StepFormat rotation;             ///< arithmetic of the rotation (store: see output)
  Format output = Format::fp32();  ///< where rotated values are stored
  RotationArithmetic arithmetic = RotationArithmetic::hf_eager;
  /// Set for the Resonance RoPE reference realisation (`resonance-table`): the angle's
  /// position t is i mod λ_d for tabulated blocks, and inv_freq is r_inv_freq_d.
  std::optional<ResonanceTable> resonance;
  bool operator==(const PipelineSteps&) const = default;
};

/// A realisation: r1/r2/r3 in a format F, or a pipeline with activation format A. Its
/// numeric::FormatBinding base holds F (r1-r3: every step; pipelines: the activation format A),
/// the rounding direction of every step (THEORY §2.1 default: nearest-even) and the engine
/// every step runs on (nullptr = numeric::default_engine(); engines give the same bits, only
/// the speed differs, NUMERIC §2, so the engine is not part of name()). Parse it from a run's
/// binding (parse_realisation(spec, binding)) so that F, the rounding and the engine travel
/// together.
struct Realisation : numeric::FormatBinding {
  enum class Kind { r1, r2, r3, pipeline };
  Kind kind = Kind::r1;
  /// Layout used by apply_rotation: adjacent for r1-r3, rotate_half for pipelines.
  PairLayout layout = PairLayout::adjacent;
  /// Pipelines only.
  PipelineSteps steps;

  /// Spec-like name: "r1", "r2", "r3", "hf", "llamacpp-cpu", "llamacpp-cuda", "pipeline:...".
  std::string name() const;
  /// The format the realised (cos, sin) live in: F for r1-r3, steps.table for pipelines.
  const Format& table_format() const;
};

/// Parses a realisation spec with format F (r1-r3) or activation format A (pipelines):
///   r1 | r2 | r3 | hf | llamacpp-cpu | llamacpp-cuda | pipeline:KEY=VALUE;KEY=VALUE...
///   | resonance-table | resonance-table[seq_len=L]   (ResonanceTable; L an integer ≥ 1: the
///     hf step list with ResonanceTable set: fp32 steps, table = rotation = output = A,
///     hf_eager, rotate_half)
/// Pipeline keys (NUMERIC §3; each at most once, else refused naming the key):
///   exponent power inv_freq position angle cos_sin attention_scaling rotation
///       = COMPUTE[>STORE][@MODE]: computed in COMPUTE, cast to STORE, rounded with MODE
///         (numeric::parse_rounding spellings); a format may be `A` (the activation format).
///         `rotation` takes no STORE (use output=).
///   power, cos_sin may end in `:IMPL` (StepFormat::implementation): `:cr` (the default),
///         `:glibc`, `:sleef-u10`; the library ones need COMPUTE = fp32 and nearest-even
///         rounding (no @MODE, no directed --rounding), e.g. `cos_sin=fp32>fp16:sleef-u10`.
///   table, output = FORMAT or A
///   base = exact | FORMAT          (unset: the Python float of β in power's compute format)
///   angle.operands = FORMAT        (the angle product as a GEMM with rounded operands)
///   scalar_division = correct | reciprocal   (PipelineSteps::reciprocal_scalar_division)
///   recipe = product|quotient|chained|power, arithmetic = theory|hf_eager,
///   layout = adjacent|rotate_half
/// `inv_freq=X` also sets exponent's and power's compute format to X when those keys are
/// absent (the spelling before per-step formats existed). Unset keys take hf's values
/// (fp32 steps, table = rotation = output = A, product, hf_eager, rotate_half).
/// The named pipelines are exactly the NUMERIC §3 step lists:
///   hf: all fp32 to cos/sin, table = rotation = output = A, hf_eager, rotate_half;
///   llamacpp-cpu: chained fp32, table = rotation = fp32, output = A, theory;
///   llamacpp-cuda: power fp32, table = rotation = fp32, output = A, theory.
/// Throws InvalidArgument naming the bad spec (and the step) and listing the accepted ones.
/// F, the rounding and the engine of the result are `binding`'s (the FormatBinding base).
Realisation parse_realisation(std::string_view spec, const numeric::FormatBinding& binding);
/// parse_realisation(spec, {format, rounding}) on numeric::default_engine().
Realisation parse_realisation(std::string_view spec, const Format& format,
                              Rounding rounding = Rounding::nearest_even);
/// One line listing the accepted realisation spellings.
std::string realisation_spellings();

/// Checks that `r` can realise `s`, else throws InvalidArgument naming the block/field:
/// r3 needs every block rational (θ = 2πa/m; on a multi-axis schedule every θ_{d,a});
/// resonance-table needs every block θ = 2π/λ (turn 1/λ, or 0/1) with λ ≤ 2^24 (fp32's
/// `arange(λ)` exact); llamacpp-* need a base-β schedule without llama3 scaling (llama.cpp's
/// rope_freqs factors are not modelled); pipelines need every block of a multi-axis schedule
/// to read one axis (a block mixing axes, LieRE / RoPE-Mixed, has no framework step list
/// modelled); a `cos_sin=fp32:sleef-u10` step needs a one-axis schedule whose number of rotary
/// blocks is a multiple of 8 (each 8-lane vector then holds eight blocks of one position, as in
/// PyTorch's table; StepFormat::implementation).
void check_applicable(const Schedule& s, const Realisation& r);

/// A position of a multi-axis schedule: the tuple p = (p_1, ..., p_k), one 0-based
/// coordinate per Schedule::position_axes entry (docs/variants/MULTI_AXIS.md).
using PositionTuple = std::vector<std::uint64_t>;

/// The per-position flags of a realised value are numeric::Flags, stored in one byte as
/// Flags::bits() (read them back with numeric::Flags::from_bits): Flag::overflow when some
/// step's exact result exceeded max finite (→ ±inf, or clamped), Flag::invalid when some step
/// produced NaN (e.g. cos(+inf)). flag_overflow and flag_nan are those two bits as bytes.
inline constexpr std::uint8_t flag_overflow = numeric::Flags(numeric::Flag::overflow).bits();
inline constexpr std::uint8_t flag_nan = numeric::Flags(numeric::Flag::invalid).bits();

/// The realised (cos, sin) of one block at one position, in table_format().
struct RealisedPair {
  Value cos;
  Value sin;
  std::uint8_t flags = 0;  ///< numeric::Flags bits (overflow, invalid)
};

/// The realised (cos, sin) of one block at one position as bit patterns: cos and sin are
/// Value::bits_key() of RealisedPair's cos and sin (the double's bits for formats that fit a
/// double — what the census keys on; one key for every NaN), flags the same numeric::Flags bits.
/// detail::BlockEvaluator::evaluate_bits fills it without building Values.
struct PairBits {
  std::uint64_t cos = 0;
  std::uint64_t sin = 0;
  std::uint8_t flags = 0;  ///< numeric::Flags bits (overflow, invalid)
  bool operator==(const PairBits&) const = default;
};

/// What the realisation fast path did (numeric/trig/fast_trig.hpp): counts
/// of (position, evaluator group) evaluations. A group is one realisation, or several that
/// share work (r1/r3 members in several formats; pipelines differing only in the table format).
struct FastPathStats {
  /// Tried on the binary64 path (r1, r3 and correctly rounded pipelines whose formats fit it).
  std::uint64_t evaluations = 0;
  /// Of those, undecided by the rounding test and recomputed by the exact path (Ziv's step 2).
  std::uint64_t fallbacks = 0;
  /// Of those, angles whose cos/sin are known exactly (i = 0, θ = 0, rational cos or sin of a
  /// rational turn) and handed to the exact path by design, not by the rounding test.
  std::uint64_t exact_cases = 0;
  /// Evaluations by the exact path alone: groups outside the fast domain (r2, directed
  /// rounding, formats with p > 25, library cos/sin steps, wide formats).
  std::uint64_t exact_only = 0;
  /// Of the evaluations, those done by a batched kernel (positions in lanes,
  /// attention/detail/fast_trig_batch.hpp) rather than position by position.
  std::uint64_t batched = 0;
  FastPathStats& operator+=(const FastPathStats& o) {
    evaluations += o.evaluations;
    fallbacks += o.fallbacks;
    exact_cases += o.exact_cases;
    exact_only += o.exact_only;
    batched += o.batched;
    return *this;
  }
};

/// The fast path's totals over every evaluator since the program started (all threads; relaxed
/// atomic counters added once per evaluate call: exact totals, no ordering). Throws nothing.
FastPathStats realisation_fast_path_counters();

/// The realised rotation R̂_i at one position: one pair per rotary block (unrotated pairs
/// are the identity and are not stored), plus how it is applied.
struct RealisedRotation {
  /// The scalar position (0 when realised at a tuple that is not a diagonal (i, ..., i)).
  std::uint64_t position = 0;
  /// Multi-axis schedules: the tuple realised; empty on one-axis schedules.
  PositionTuple tuple;
  std::vector<RealisedPair> blocks;
  std::size_t unrotated_pairs = 0;
  Format rotation_format = Format::fp32();  ///< arithmetic format of apply_rotation
  Format output_format = Format::fp32();    ///< store format of apply_rotation
  RotationArithmetic arithmetic = RotationArithmetic::theory;
  Rounding rounding = Rounding::nearest_even;
  /// OR of all blocks' flags.
  std::uint8_t flags() const;
};

/// The tuple a scalar position i means on `s`: (i, ..., i) on a multi-axis schedule — as
/// Qwen2-VL gives a text token t = h = w = i (arXiv 2409.12191 §2.1) — and (i) on a one-axis
/// schedule. Throws nothing.
PositionTuple position_tuple(const Schedule& s, std::uint64_t i);
/// Checks that p is a position of `s`: k = position_axes.size() coordinates on a multi-axis
/// schedule, exactly one on a one-axis schedule, each ≤ 2^63 - 1. Throws InvalidArgument
/// (one line naming the axes).
void check_position(const Schedule& s, const PositionTuple& p);
/// Parses a position: "i", "(t,h,w)" or "t,h,w" (non-negative integers ≤ 2^63 - 1, exact,
/// spaces allowed after commas). Throws InvalidArgument naming the accepted forms.
PositionTuple parse_position_tuple(std::string_view text);
/// "i" for one coordinate, "(t,h,w)" for several.
std::string to_string(const PositionTuple& p);

/// R̂_i for one position i (0-based); on a multi-axis schedule the tuple (i, ..., i)
/// (position_tuple). Throws InvalidArgument if !applicable (see check_applicable).
RealisedRotation realise(const Schedule& s, const Realisation& r, std::uint64_t position);
/// R̂_p at a tuple p (check_position): block d rotates by Σ_a θ_{d,a}·p_a [THEORY §3 with
/// schedule.hpp AxisAngle]. A block reading one axis a is realised exactly as the one-axis
/// block at the scalar position p_a (every realisation and pipeline step unchanged); a block
/// mixing axes (LieRE, RoPE-Mixed) by detail::evaluate_mixed (r1, r2, r3 only). On a
/// one-axis schedule p = (i) is realise(s, r, i). Throws InvalidArgument like realise() and
/// check_position().
RealisedRotation realise(const Schedule& s, const Realisation& r, const PositionTuple& position);

/// Streams one block over positions [begin, end): out[k] = realised pair at begin + k (on a
/// multi-axis schedule the tuples (i, ..., i); a block mixing axes is then realised per
/// position by detail::evaluate_mixed).
/// `block` is a 0-based index into s.blocks. Throws InvalidArgument if not applicable or the
/// block index is out of range. Cost: per-block constants once, then per position.
std::vector<RealisedPair> realise_block(const Schedule& s, const Realisation& r, std::size_t block,
                                        std::uint64_t begin, std::uint64_t end);

/// Applies R̂_i to x (length rot.blocks.size()·2 + 2·unrotated_pairs, values of the
/// activation format) with `layout`: each rotary pair with the arithmetic of `rot` (THEORY §2.1
/// or hf eager; inputs converted to rotation_format first, results stored to output_format),
/// unrotated coordinates copied unchanged. With nearest rounding both layouts give the same
/// values up to the coordinate permutation. Throws InvalidArgument on a length mismatch.
std::vector<Value> apply_rotation(const RealisedRotation& rot, std::span<const Value> x,
                                  PairLayout layout,
                                  const numeric::Engine& engine = numeric::default_engine());

/// One block of a single-position report (GPT-NeoX #1003 style; NUMERIC §4).
struct BlockReport {
  std::size_t block = 0;                ///< 0-based block index
  std::string exact_angle_text;         ///< θ_d·i exactly, e.g. "1857*10000^(-1/16)"
  double exact_angle = 0;               ///< θ_d·i, nearest double (radians)
  double exact_cos = 0, exact_sin = 0;  ///< cos, sin of the exact angle, nearest double
  /// What the realised pair is compared with: s·cos and s·sin of the exact angle (nearest
  /// double), s = PositionReport::attention_factor (1 unless r carries the schedule's factor).
  double reference_cos = 0, reference_sin = 0;
  /// Intermediate realised values by step name, in computation order: r2 "theta_hat",
  /// "i_hat", "phi"; pipelines "inv_freq" (product recipe) or "theta_scale" (chained, power),
  /// "t", "angle", then "cos_fp"/"sin_fp" (cos/sin in the cos_sin format, before the table
  /// cast). r1/r3 form no angle in F: no steps. Dropped (θ = 0) pipeline blocks: only
  /// "cos_fp"/"sin_fp".
  std::vector<std::pair<std::string, Value>> steps;
  Value cos, sin;  ///< realised, table format
  /// (realised - reference) / ulp_F(round_F(reference)) in the table format (reference =
  /// s·exact, like with like), ulp by numeric::ulp_exponent; NaN when the realised value is
  /// not finite.
  double cos_error_ulps = 0, sin_error_ulps = 0;
  std::uint8_t flags = 0;  ///< numeric::Flags bits of the position's steps
  /// numeric::Flags bits of the block's position-independent constants (a pipeline's exponent,
  /// power, inv_freq / theta_scale), e.g. β^e overflowing fp16 so that inv_freq = 1/inf = 0.
  std::uint8_t constant_flags = 0;
};

/// Everything about R̂_I at one position I: per block the exact angle, cos and sin next to
/// the realised ones and the error in ulps. E.g. r2 at fp16 on conventional:base=10000,dim=32
/// at I = 1857, block 1 (the second frequency) shows exact angle ≈ 1044.27, φ = 1045, and
/// cos off by ≈ 0.78 (GPT-NeoX #1003, NUMERIC §4).
struct PositionReport {
  std::string schedule;
  std::string realisation;
  Format table_format;
  std::uint64_t position = 0;
  /// Multi-axis schedules: the tuple reported (a scalar position i is (i, ..., i)); empty
  /// on one-axis schedules.
  PositionTuple tuple;
  /// Multi-axis schedules: the axis names (Schedule::position_axes).
  std::vector<std::string> axes;
  /// The schedule's attention factor s (Schedule::attention_scaling) when r carries it (a
  /// framework pipeline multiplies cos and sin by it, transformers' `attention_factor`):
  /// the reference of the errors is then s·(cos, sin). Unset: r realises the rotation alone.
  std::optional<mpq_class> attention_factor;
  std::string attention_factor_text;  ///< its exact expression (Schedule::attention_scaling_text)
  std::vector<BlockReport> blocks;
};

/// Builds the report of position `position` (on a multi-axis schedule the tuple (i, ..., i)).
/// Throws InvalidArgument like realise().
PositionReport query_position(const Schedule& s, const Realisation& r, std::uint64_t position);
/// The report at a tuple p (check_position): exact angle Σ_a θ_{d,a}·p_a per block, the
/// realised values as realise(s, r, p) gives them, r2's steps per axis for mixed blocks
/// (detail::evaluate_mixed). Throws InvalidArgument like realise().
PositionReport query_position(const Schedule& s, const Realisation& r,
                              const PositionTuple& position);

/// The report as JSON: schedule, realization, table_format, position (a number, or the tuple
/// with position_axes), attention_factor (null, or {"value": s as a JSON number with
/// "value_exact" "P/Q" beside it when binary64 cannot hold it, "expression"}), blocks (per
/// block: block, exact_angle, exact_angle_text, exact_cos, exact_sin, reference_cos,
/// reference_sin, steps {name: V}, cos V, sin V, cos_error_ulps, sin_error_ulps (null when not
/// finite), overflow, nan, constant_overflow, constant_nan), where a realised value V is
/// {"value": a JSON number (numeric::put_exact: "value_exact" beside it for formats wider than
/// binary64; "nan", "inf", "-inf" when not finite), "decimal": 17 significant digits (marked
/// numeric::NumberText::rounded_decimal under a NumberTextMarking), "hex": exact}. Does not
/// print.
nlohmann::json to_json(const PositionReport& report);

/// What `ropesim rotations --position I --json` prints and ropesim.position returns:
/// to_json(report) with "format" (F of `binding`, the realisation's) and "rounding".
nlohmann::json to_json(const PositionReport& report, const numeric::FormatBinding& binding);

}  // namespace ropesim::attention
