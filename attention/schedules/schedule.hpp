#pragma once
/// RoPE schedules: the exact angles θ_d of the rotary blocks (THEORY §3).
///
/// A Schedule lists the rotary blocks (pairs of coordinates) with their exact angle per
/// position θ_d in radians, plus a count of unrotated pairs. Spec strings (parse_schedule):
///   conventional:base=B,dim=D          θ_d = B^(-2(d-1)/D), d = 1..D/2      [RoPE-X; THEORY §3]
///   single:g=G                         one block, θ = G                      [RoPE-X Prop 4.1]
///   periodic:m=M1,M2,...               θ = 2π/m per block                    [RoPE-X eq. 7]
///   periodic:A1/M1,A2/M2,...           θ = 2πa/m per block
///   partial:base=B,dim=D,factor=F      rotary_dim = D·F, θ_d = B^(-2(d-1)/rotary_dim),
///                                      the other (D - rotary_dim)/2 pairs unrotated
///                                      (Hugging Face partial_rotary_factor; THEORY §3)
///   prope:base=B,dim=D,p=P             θ_d = B^(-2(d-1)/D), d = 1..D/2, then θ = 0 for the
///                                      lowest-frequency D/2 - floor(P·D/2) blocks [RRWG]
///   resonance:base=B,dim=D             Resonance RoPE [arXiv 2403.00071; reference code
///                                      sheryc/resonance_rope `resonance_register`]:
///                                      λ_d = round(2π·B^(2(d-1)/D)), θ̃_d = 2π/λ_d, every block
///                                      rational (RationalTurn{1, λ_d}); resonance_schedule()
///   resonance-yarn:base=B,dim=D,factor=S,original=L[,beta_fast=A,beta_slow=C]
///                                      Resonance on top of YaRN, as the paper's code does
///                                      (sheryc/resonance_rope LlamaYaRNScaledResonanceRotary-
///                                      Embedding.py `yarn`): the exact YaRN angles of
///                                      config_schedule (rope_type yarn, factor S,
///                                      original_max_position_embeddings L, beta_fast A default
///                                      32, beta_slow C default 1), then each wavelength rounded
///   hope:base=B,dim=D,train_len=T[,activated=K]
///                                      θ_d = B^(-2(d-1)/D), then θ = 0 for every block whose
///                                      wavelength 2π/θ_d exceeds T (θ_d·T < 2π, decided
///                                      exactly), and for the K lowest-frequency blocks left
///                                      (default 0) [HoPE, arXiv 2410.21216, method;
///                                      docs/variants/HOPE_FOPE.md]
///   fope:base=B,dim=D,train_len=T[,sigma=S,seed=N]
///                                      the D/2 frequency components θ_k = B^(-2k/D), the
///                                      under-trained ones (2π/θ_k > T) clipped to θ = 0; the
///                                      Fourier coefficients a_{k,m} = [k=m] + S·z_{k,m} are
///                                      not rotations and live apart (fope_coefficient;
///                                      S default 3/10, N default 0) [FoPE, arXiv 2412.17739,
///                                      method]
///   <preset>                           a model of data/models.json (model_preset_names())
///   hf-config:PATH                     a Hugging Face config.json
///   (attention/schedules/hf_config.hpp) hf-config[seq_len=N]:PATH          the same at sequence
///   length N (dynamic, longrope);
///                                      PATH is everything after the first ':', verbatim
/// Multi-axis schedules (positions are tuples p = (p_1..p_k); docs/variants/MULTI_AXIS.md):
///   axial2d:base=B,dim=D               θ_k = B^(-4k/D), k = 0..D/4-1, blocks 0..D/4-1 read
///                                      x, blocks D/4..D/2-1 read y [RoPE-ViT, arXiv
///                                      2403.13298 "RoPE-Axial"; its code compute_axial_cis]
///   mrope:base=B,dim=D,sections=T,H,W  conventional θ_k over D; the first T blocks read t,
///                                      the next H read h, the last W read w (T+H+W = D/2)
///                                      [Qwen2-VL, arXiv 2409.12191 §2.1 M-RoPE]
///   hirope:base=B,dim=D,levels=L[,split=S1,...,SL]
///                                      conventional θ_k over D; the first S1 blocks (highest
///                                      frequencies) read level 1 (the token index), the next
///                                      S2 level 2 (e.g. the function index), ...; default:
///                                      equal splits [HiRoPE, arXiv 2403.19115 §3.2]
///   liere:axes=K,blocks=T1,T2,...      commuting generators as one rotation block each: Ti =
///                                      K angles θ_{i,1}|...|θ_{i,K}, each a turn a/m (θ =
///                                      2πa/m) or an exact decimal in radians, one kind per
///                                      block; θ of block i at p = Σ_a θ_{i,a}·p_a [LieRE,
///                                      arXiv 2406.10322 eq. R(p) = exp(Σ p_a A_a) with
///                                      commuting A_a; RoPE-Mixed, arXiv 2403.13298]
/// Numbers (B, G, F, P, S) are parsed exactly as decimals (numeric::parse_decimal_exact);
/// D, T, K and N must be integers.
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "numeric/exact_real.hpp"

namespace ropesim::attention {

/// Exact reals live in numeric (numeric/exact_real.hpp); schedules use them unqualified.
using numeric::ExactReal;

/// θ = 2π·a/m exactly, with 0 ≤ a < m and gcd(a, m) = 1 (θ = 0 is a = 0, m = 1).
/// m is the exact period of the block [THEORY §3 Prop 2.2].
struct RationalTurn {
  mpz_class a;
  mpz_class m;
};

/// Position axes of multi-axis RoPE (Qwen2-VL's mrope_section: temporal, height, width).
enum class PositionAxis { temporal, height, width };

/// "temporal", "height" or "width".
const char* to_string(PositionAxis axis);

/// One term θ_{d,a}·p_a of a multi-axis block's angle: the angle per unit step along axis a.
struct AxisAngle {
  /// 0-based index into Schedule::position_axes.
  std::size_t axis = 0;
  /// θ_{d,a}, exact, radians per unit step along the axis.
  ExactReal theta;
  /// Set when θ_{d,a} = 2πa/m (a turn, reduced as RationalTurn).
  std::optional<RationalTurn> turn;
};

/// One rotary block (a pair of coordinates rotated by Rot(θ·i) at position i).
struct RotaryBlock {
  /// 0-based block index (THEORY's θ_d has d = index + 1).
  std::size_t index = 0;
  /// Exact angle per position, radians.
  ExactReal theta;
  /// Set when θ is a rational multiple of 2π (periodic blocks and θ = 0).
  std::optional<RationalTurn> turn;
  /// Frequency index used by framework pipelines: inv_freq_k = β^(-2k/exponent_dim), k =
  /// 0-based (NUMERIC §3). Equal to `index` for conventional, partial and p-RoPE schedules.
  std::size_t frequency_index = 0;
  /// True for the blocks p-RoPE sets to θ = 0 [RRWG], HoPE replaces by position-independent
  /// ones and FoPE clips to zero frequency (they are still rotary blocks: a realisation
  /// computes Rot(0·i)).
  bool dropped = false;
  /// Multi-axis RoPE (MRoPE, Qwen2-VL) read from a Hugging Face config: the position axis
  /// this block reads. Unset for one-axis schedules. hf-config and preset schedules keep
  /// scalar positions: a text token has t = h = w = i, so the angles do not depend on the
  /// axis (docs/HF_CONFIG.md). The `mrope:` spelling makes a multi-axis schedule instead.
  std::optional<PositionAxis> axis;
  /// Multi-axis schedules (Schedule::position_axes non-empty): the nonzero terms of the
  /// block's angle Σ_a θ_{d,a}·p_a, in increasing axis order (empty: θ = 0 at every tuple).
  /// One term for axial 2-D, MRoPE and HiRoPE blocks; several for LieRE / RoPE-Mixed. On
  /// such a schedule `theta` (and `turn`) is Σ_a θ_{d,a}, the angle per step along the
  /// diagonal (i, ..., i), which is what a scalar position i means there. Empty on one-axis
  /// schedules.
  std::vector<AxisAngle> axis_angles;
};

/// llama3 frequency scaling (Hugging Face `rope_type: llama3`; NUMERIC §3), exact values.
struct Llama3Scaling {
  mpq_class factor;
  mpq_class low_freq_factor;
  mpq_class high_freq_factor;
  mpq_class original_max_position_embeddings;
};

/// A Hugging Face rope_scaling description (`rope_type` or `type` and its parameters), the
/// numbers exact from their source text. Which keys each type reads, their defaults and
/// formulas: docs/HF_CONFIG.md; the code followed is transformers
/// src/transformers/modeling_rope_utils.py, `_compute_<type>_parameters` (v5 semantics:
/// YaRN's `factor` is the config's even when original_max_position_embeddings is given,
/// transformers issue 38224 / PR 40320).
struct RopeScaling {
  /// "linear", "dynamic", "yarn", "longrope", "llama3" or "mrope" (default RoPE has no
  /// RopeScaling; "default" with an mrope_section is stored as "mrope").
  std::string type;
  /// The type as the config spelled it when that was an older spelling transformers maps to
  /// `type` (hf_config.cpp legacy_rope_type: Phi-3's "su", and "yarn" in a phi3 config, are
  /// "longrope"); empty when the config used the current name.
  std::string type_spelling;
  /// linear, dynamic, yarn, llama3: the scaling factor; longrope: `factor`, or
  /// max_position_embeddings / original_max_position_embeddings when absent.
  std::optional<mpq_class> factor;
  /// yarn, longrope, llama3 (required for llama3). Unset: max_position_embeddings.
  std::optional<mpq_class> original_max_position_embeddings;
  /// llama3 only.
  std::optional<mpq_class> low_freq_factor, high_freq_factor;
  /// yarn: beta_fast (default 32), beta_slow (default 1), mscale, mscale_all_dim; yarn and
  /// longrope: attention_factor (overrides the computed one).
  std::optional<mpq_class> beta_fast, beta_slow, mscale, mscale_all_dim, attention_factor;
  /// yarn: floor/ceil the correction range (default true; false is refused, see HF_CONFIG.md).
  bool truncate = true;
  /// longrope: the rescale factors per frequency (length rotary_dim / 2 each).
  std::vector<mpq_class> short_factor, long_factor;
  /// mrope: frequencies per axis (temporal, height, width), summing to rotary_dim / 2;
  /// interleaved (Qwen3-VL `mrope_interleaved`) or in sections (Qwen2-VL).
  std::vector<std::size_t> mrope_section;
  bool mrope_interleaved = false;

  // --- resolved when the schedule is built ---
  /// dynamic, longrope: the sequence length L the schedule is for (hf-config[seq_len=N];
  /// default max_position_embeddings for dynamic, i.e. no change, and 0 = "at init" for
  /// longrope, i.e. short_factor).
  std::uint64_t seq_len = 0;
  /// yarn: the correction range [low, high] after floor/ceil and clamping (exact).
  std::int64_t yarn_low = 0, yarn_high = 0;
  /// longrope: true when long_factor was chosen (seq_len > original_max_position_embeddings).
  bool long_factors = false;
};

/// A RoPE schedule (THEORY §3): rotary blocks with exact angles and unrotated pairs.
/// The vector has dimension 2·(blocks.size() + unrotated_pairs); rotary coordinates come
/// first (both layouts), unrotated ones after.
struct Schedule {
  /// Canonical spec string (parse_schedule(spec) gives the same schedule), or the preset name.
  std::string spec;
  /// "conventional", "single", "periodic", "partial", "prope", "hope", "fope", "resonance",
  /// "resonance-yarn", "preset", "hf-config", "axial2d", "mrope", "hirope" or "liere".
  std::string kind;
  std::vector<RotaryBlock> blocks;
  std::size_t unrotated_pairs = 0;

  // --- metadata used by the framework pipelines (NUMERIC §3) ---
  /// β when θ_d = β^(-2(d-1)/exponent_dim) (conventional, partial, prope, hope, fope, presets).
  /// Unset for resonance schedules: their angles 2π/λ_d are not powers of β, so a framework
  /// pipeline forms inv_freq from the exact θ̃_d (one rounding), not from β.
  std::optional<mpq_class> base;
  /// The D in that exponent: dim (conventional, prope, hope, fope), rotary_dim (partial, presets).
  std::optional<std::size_t> exponent_dim;
  /// Head dimension 2·(blocks + unrotated pairs).
  std::size_t head_dim = 0;
  /// Rotary dimension 2·blocks.size() (includes p-RoPE's dropped blocks).
  std::size_t rotary_dim = 0;
  /// Hugging Face partial_rotary_factor (partial, presets).
  std::optional<mpq_class> partial_rotary_factor;
  /// p-RoPE's p (prope).
  std::optional<mpq_class> prope_p;
  /// The training length T (tokens) of HoPE and FoPE: blocks whose wavelength 2π/θ exceeds T
  /// do not complete one period in training and are dropped (hope, fope).
  std::optional<std::uint64_t> train_len;
  /// HoPE's extra "activated" blocks dropped after the wavelength rule (hope).
  std::optional<std::size_t> hope_activated;
  /// FoPE's coefficient spread σ and seed (fope; see fope_coefficient).
  std::optional<mpq_class> fope_sigma;
  std::optional<std::uint64_t> fope_seed;
  /// Hugging Face rope scaling, applied exactly to `blocks[].theta` (presets and hf-config
  /// schedules that have one). Framework pipelines redo it in their formats
  /// (attention/detail/hf_scaling.hpp).
  std::optional<RopeScaling> rope_scaling;
  /// The same parameters when rope_scaling->type is "llama3" (kept for the realisations'
  /// llama.cpp check); unset otherwise.
  std::optional<Llama3Scaling> llama3;
  /// The model's max_position_embeddings (presets, hf-config).
  std::optional<std::uint64_t> max_position_embeddings;
  /// The attention factor s that Hugging Face multiplies cos and sin by
  /// (`cos = emb.cos() * self.attention_scaling`: YaRN's mscale, longrope's factor): the
  /// binary64 value HF computes, as an exact rational (YaRN: get_mscale, longrope:
  /// sqrt(1 + ln f / ln L): each Python float operation rounded to nearest binary64 by MPFR,
  /// which assumes CPython's math.log is correctly rounded, as glibc's log is in practice;
  /// sqrt is correctly rounded by IEEE 754). Framework pipelines apply it in their
  /// attention_scaling step (realisation.hpp); r1, r2 and r3 realise the rotation alone and
  /// leave it out (it scales scores, it does not rotate). Unset: no factor (s = 1).
  std::optional<mpq_class> attention_scaling;
  /// The exact expression of that factor, e.g. "0.1*ln(4)+1" (reports only).
  std::string attention_scaling_text;

  /// Multi-axis schedules: the names of the position axes, in tuple order (e.g. "x", "y";
  /// "t", "h", "w"; "level1", "level2"). Empty: positions are scalar (one axis).
  std::vector<std::string> position_axes;

  /// 2·(blocks.size() + unrotated_pairs).
  std::size_t dimension() const { return 2 * (blocks.size() + unrotated_pairs); }
  /// True when positions are tuples (position_axes non-empty).
  bool is_multi_axis() const { return !position_axes.empty(); }
  /// The index of the axis named `name` or written as its 0-based index ("0", "1", ...).
  /// Throws InvalidArgument naming the accepted axes (or saying the schedule has one axis).
  std::size_t axis_index(std::string_view name) const;
  /// True iff every block has a RationalTurn (the schedule is in RoPE_P under R1/R3).
  bool is_rational() const;
};

/// Parses a schedule spec (see the file comment). Throws ropesim::InvalidArgument with one
/// line naming the bad spec and listing the accepted spellings and preset names.
Schedule parse_schedule(std::string_view spec);

/// One line listing the accepted spellings and preset names (for errors and --help).
std::string schedule_spellings();

/// θ_d = β^(-2(d-1)/dim), d = 1..dim/2 [THEORY §3]. Throws InvalidArgument unless β > 0
/// and dim is even and ≥ 2.
Schedule conventional_schedule(const mpq_class& base, std::size_t dim);
/// One block with θ = g [RoPE-X Prop 4.1].
Schedule single_schedule(const mpq_class& g);
/// One block per turn, θ = 2π a/m. Throws InvalidArgument if a list is empty or m < 1.
Schedule periodic_schedule(const std::vector<RationalTurn>& turns);
/// Partial rotary: rotary_dim = floor(dim·factor) (must be even, ≥ 2), θ over rotary_dim,
/// (dim - rotary_dim)/2 unrotated pairs [THEORY §3]. Throws InvalidArgument otherwise.
Schedule partial_schedule(const mpq_class& base, std::size_t dim, const mpq_class& factor);
/// p-RoPE [RRWG]: conventional over dim, then θ = 0 for the last dim/2 - floor(p·dim/2)
/// blocks (the lowest frequencies). Throws InvalidArgument unless 0 ≤ p ≤ 1.
Schedule prope_schedule(const mpq_class& base, std::size_t dim, const mpq_class& p);
/// Resonance RoPE's wavelength of an angle θ > 0 [arXiv 2403.00071; reference code
/// sheryc/resonance_rope README and rotary_resonance.py `torch.round(2 * math.pi / inv_freq)`]: λ =
/// round(2π/θ), the nearest integer, decided rigorously: 2π/θ is enclosed by MPFR interval
/// arithmetic (numeric::ExactReal::enclose) at 64, 128, ... bits until floor(x + 1/2) is the same
/// at both ends. A tie x = n + 1/2 cannot occur for the angles ropesim builds: θ = q·β^e with q, β,
/// e rational is algebraic, so 2π/θ is transcendental (π is), never a half-integer; for θ = 2πa/m,
/// 2π/θ = m/a is rational and its rounding is exact (ties to even, as torch.round). Throws
/// InvalidArgument if θ ≤ 0, and std::runtime_error if still undecided at 65536 bits (impossible by
/// the argument above).
mpz_class resonance_wavelength(const ExactReal& theta);
/// Resonance RoPE [arXiv 2403.00071]: every block's θ_d replaced by θ̃_d = 2π/λ_d with
/// λ_d = resonance_wavelength(θ_d), turn = {1, λ_d} (λ_d = 1 gives θ̃ = 2π ≡ 0, turn {0, 1});
/// θ = 0 blocks (p-RoPE's dropped ones) stay 0 (λ = ∞: the reference's 2π/0 = inf rounds to
/// inf and 2π/inf = 0). The schedule becomes rational (RoPE_P, THEORY §3 Def 2.1, Prop 2.2).
/// base and exponent_dim are cleared (see Schedule::base); rope_scaling and attention_scaling
/// are kept. Throws InvalidArgument if some λ_d = 0 (θ_d > 4π: no integer wavelength).
Schedule apply_resonance(Schedule s);
/// `resonance:base=B,dim=D`: apply_resonance(conventional_schedule(base, dim)). Throws
/// InvalidArgument like conventional_schedule and apply_resonance.
Schedule resonance_schedule(const mpq_class& base, std::size_t dim);
/// `resonance-yarn:...`: the YaRN schedule of config_schedule (rope_theta = base, head_dim =
/// dim, rope_scaling yarn with `factor`, `original` as original_max_position_embeddings and
/// the betas; unset betas take transformers' and the reference's defaults 32 and 1), then
/// apply_resonance — the order of the reference (`yarn()` blends inv_freq, then
/// `resonance_register(inv_freq)` rounds the blended wavelengths). attention_scaling is YaRN's
/// mscale 0.1·ln(S) + 1 (reference `get_mscale(scale) * attn_factor`, attn_factor 1). Throws
/// InvalidArgument for impossible YaRN parameters (base ≤ 1, S ≤ 0, L ≤ 0, betas ≤ 0).
Schedule resonance_yarn_schedule(const mpq_class& base, std::size_t dim, const mpq_class& factor,
                                 const mpq_class& original,
                                 const std::optional<mpq_class>& beta_fast = std::nullopt,
                                 const std::optional<mpq_class>& beta_slow = std::nullopt);
/// Axial 2-D RoPE [RoPE-ViT, arXiv 2403.13298 "RoPE-Axial"]: axes ("x", "y"); θ_k =
/// β^(-4k/dim) = β^(-2k/(dim/2)), k = 0..dim/4-1; block k reads x, block dim/4 + k reads y
/// with the same θ_k (the layout of the paper's compute_axial_cis: cat(x part, y part)).
/// exponent_dim = dim/2, frequency_index = k. Throws InvalidArgument unless β > 0 and dim
/// is a multiple of 4, ≥ 4.
Schedule axial2d_schedule(const mpq_class& base, std::size_t dim);
/// MRoPE [Qwen2-VL, arXiv 2409.12191 §2.1]: axes ("t", "h", "w"); the conventional θ_k over
/// dim; blocks in sections (the first sections[0] read t, the next sections[1] h, the rest
/// w), as Hugging Face's mrope_section without interleaving. Throws InvalidArgument unless
/// the three sections sum to dim/2.
Schedule mrope_schedule(const mpq_class& base, std::size_t dim,
                        const std::vector<std::size_t>& sections);
/// HiRoPE [arXiv 2403.19115 §3.2]: axes ("level1", ..., "levelL"), level 1 the finest (token
/// index); the conventional θ_k over dim; the first split[0] blocks (highest frequencies)
/// read level 1, the next split[1] level 2, ... Empty `split`: dim/2 divided as equally as
/// possible, the remainder to the last levels. Throws InvalidArgument unless 2 ≤ levels ≤ 8,
/// the split has `levels` entries and sums to dim/2.
Schedule hirope_schedule(const mpq_class& base, std::size_t dim, std::size_t levels,
                         const std::vector<std::size_t>& split = {});
/// One LieRE block with commuting generators: θ_{d,a} per axis, each a turn a/m or an exact
/// rational (radians); a zero angle is a turn 0/1 or a rational 0.
struct LieReBlock {
  std::vector<std::variant<RationalTurn, mpq_class>> angles;
};
/// LieRE restricted to commuting generators [arXiv 2406.10322; "RoPE-Mixed", arXiv 2403.13298]:
/// commuting skew-symmetric generators A_a are simultaneously block-diagonal (in a
/// common orthonormal basis) with 2×2 blocks θ_{d,a}·J, so exp(Σ_a p_a A_a) = blockdiag
/// Rot(Σ_a θ_{d,a} p_a); this schedule is that block form. Axes "p1".."pK". Throws
/// InvalidArgument unless 1 ≤ axes ≤ 8, every block has `axes` angles, and a block's angles
/// are all turns or all rationals (so Σ θ_{d,a} p_a is a rational multiple of π or a
/// rational, and its cos/sin are decided exactly).
Schedule liere_schedule(std::size_t axes, const std::vector<LieReBlock>& blocks);

/// The one-axis schedule that a multi-axis schedule `s` is along axis `axis` with every other
/// coordinate 0: R_{i·e_a} block by block. A block with a term θ_{d,a} keeps its place and
/// frequency_index with θ = θ_{d,a} (a block mixing axes: its other terms vanish at 0); a
/// block without one is the identity at every i·e_a (in r1, r2, r3 and every pipeline the
/// angle is exactly 0) and becomes an unrotated pair (so rotary coordinates are re-indexed:
/// the kept blocks first, schedule.hpp layout). For r1/r3, and r2 of one-axis blocks, the
/// realised values equal realise(s, r, i·e_a); r2 of a mixed block gives rnd(θ̂_a·î) + 0,
/// the same value. Used by the horizon along one axis (proofs/range/horizon.hpp, `horizon --axis`).
/// spec: "<spec>@axis=<name>". Throws InvalidArgument if `s` is one-axis, the axis is out of
/// range, or no block reads the axis.
Schedule along_axis(const Schedule& s, std::size_t axis);

/// True iff the wavelength 2π/θ of a block exceeds `length` tokens, i.e. θ·length < 2π: the
/// block does not complete one period within the length (θ = 0 counts as an infinite
/// wavelength). Decided exactly (ExactReal comparison with π; θ·length = 2π cannot happen for
/// the algebraic θ = B^q of base-B schedules, so the comparison always terminates).
/// [HoPE arXiv 2410.21216, method; FoPE arXiv 2412.17739, method, the floor frequency 2π/N]
bool wavelength_exceeds(const ExactReal& theta, std::uint64_t length);
/// HoPE [arXiv 2410.21216, method]: conventional over dim (θ_d = base^(-2(d-1)/dim)), then θ = 0
/// (dropped) for every block with wavelength_exceeds(θ_d, train_len), then for the
/// `activated` lowest-frequency blocks still rotating. Throws InvalidArgument unless base > 0,
/// dim is even ≥ 2, train_len ≥ 1 and activated ≤ the number of blocks left rotating.
Schedule hope_schedule(const mpq_class& base, std::size_t dim, std::uint64_t train_len,
                       std::size_t activated = 0);
/// FoPE [arXiv 2412.17739, method]: one rotary block per frequency component θ_k = base^(-2k/dim),
/// k = 0..dim/2-1 (the RoPE frequencies every FoPE dimension draws from), with θ = 0 (dropped,
/// "clipped") for every component with wavelength_exceeds(θ_k, train_len), i.e. below the
/// floor frequency 2π/train_len. The census of a FoPE schedule is the census of these
/// components; FoPE's dimension m is Σ_k a_{k,m}·Rot(θ_k i) (fope_coefficient), periodic with
/// period P whenever every component is (docs/variants/HOPE_FOPE.md). Throws InvalidArgument
/// unless base > 0, dim even ≥ 2, train_len ≥ 1, sigma ≥ 0.
Schedule fope_schedule(const mpq_class& base, std::size_t dim, std::uint64_t train_len,
                       const mpq_class& sigma, std::uint64_t seed);
/// FoPE's Fourier coefficient a_{k,m} of frequency component k in dimension m (both 0-based,
/// < dim/2), exactly: [k = m] + σ·z_{k,m}, z_{k,m} a standard normal sample fixed by the seed
/// (FoPE arXiv 2412.17739, method; docs/variants/HOPE_FOPE.md: each dimension keeps its own
/// frequency and adds the others with coefficients drawn from N(0, σ²)). z_{k,m} is the
/// binary64 Box–Muller value sqrt(-2 ln u1)·cos(2π u2) with u1 = ((x_{2j} >> 11) + 1)/2^53,
/// u2 = (x_{2j+1} >> 11)/2^53, j = k·(dim/2) + m, x_n the
/// n-th output of SplitMix64 seeded with `seed` (x_n = mix(seed + (n+1)·0x9E3779B97F4A7C15)),
/// every operation rounded to nearest binary64 by MPFR: the same bits on every platform.
/// Throws InvalidArgument if `s` is not a fope schedule or k, m ≥ dim/2.
mpq_class fope_coefficient(const Schedule& s, std::size_t component, std::size_t dimension);
/// Applies llama3 scaling exactly to every block of `s` (NUMERIC §3 formula with the exact
/// angle): wavelen = 2π/θ; low = L/low_ff; high = L/high_ff; wavelen > low → θ/factor;
/// wavelen < high → θ; otherwise smooth = (L/wavelen - low_ff)/(high_ff - low_ff) and
/// θ' = (1 - smooth)·θ/factor + smooth·θ. Band decisions are exact comparisons.
Schedule apply_llama3_scaling(Schedule s, const Llama3Scaling& scaling);

/// A model's RoPE settings as Hugging Face's config.json has them (the keys ropesim reads,
/// docs/HF_CONFIG.md), numbers exact from the JSON text. A preset of data/models.json is
/// such a config fragment; hf-config schedules read one from a file (hf_config.hpp).
struct HfRopeConfig {
  /// rope_theta (Hugging Face's default 10000 when absent).
  mpq_class rope_theta = 10000;
  /// head_dim, else hidden_size / num_attention_heads.
  std::size_t head_dim = 0;
  mpq_class partial_rotary_factor = 1;
  std::optional<std::uint64_t> max_position_embeddings;
  /// The top-level original_max_position_embeddings (Phi-3's longrope configs).
  std::optional<std::uint64_t> original_max_position_embeddings;
  std::optional<RopeScaling> rope_scaling;
};

/// A model of data/models.json.
struct ModelPreset {
  std::string name;
  /// Where the numbers come from (the `source` field; may be empty).
  std::string source;
  HfRopeConfig config;
};

/// The schedule of a config (THEORY §3; docs/HF_CONFIG.md): rotary_dim = floor(head_dim ·
/// partial_rotary_factor), θ_k = rope_theta^(-2k/rotary_dim), then the rope scaling exactly
/// (attention_scaling set for yarn and longrope). `seq_len` (0 = unset) is the L of dynamic
/// and longrope. kind and spec are left for the caller. Throws InvalidArgument (one line)
/// for impossible parameters or an undecidable YaRN correction range.
Schedule config_schedule(const HfRopeConfig& config, std::uint64_t seq_len = 0);

/// The presets, in file order. The JSON is embedded in the binary at build time.
const std::vector<ModelPreset>& model_presets();
/// Their names, in file order.
std::vector<std::string> model_preset_names();
/// The embedded data/models.json text.
std::string_view models_json_text();
/// The schedule of a preset: config_schedule of its config fragment (partial rotary when
/// partial_rotary_factor < 1, then its rope scaling). Throws InvalidArgument for an unknown name
/// (listing the names).
Schedule preset_schedule(std::string_view name);

/// Metadata of a schedule as JSON (spec, kind, dims, base, scaling, and per block the exact
/// angle text, its double value and the turn a/m when rational). HoPE and FoPE schedules add
/// "train_len", "hope_activated" (hope) and "fope" {sigma, seed, clipped, coefficients: the
/// rule} (the keys are absent for other kinds). For reports; does not print.
nlohmann::json to_json(const Schedule& s);

}  // namespace ropesim::attention
