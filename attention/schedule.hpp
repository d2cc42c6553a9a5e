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
///   <preset>                           a model of data/models.json (model_preset_names())
/// Numbers (B, G, F, P) are parsed exactly as decimals (numeric::parse_decimal_exact).
#include <gmpxx.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
  /// True for the blocks p-RoPE sets to θ = 0 [RRWG] (they are still rotary blocks: a
  /// realisation computes Rot(0·i)).
  bool dropped = false;
};

/// llama3 frequency scaling (Hugging Face `rope_type: llama3`; NUMERIC §3), exact values.
struct Llama3Scaling {
  mpq_class factor;
  mpq_class low_freq_factor;
  mpq_class high_freq_factor;
  mpq_class original_max_position_embeddings;
};

/// A RoPE schedule (THEORY §3): rotary blocks with exact angles and unrotated pairs.
/// The vector has dimension 2·(blocks.size() + unrotated_pairs); rotary coordinates come
/// first (both layouts), unrotated ones after.
struct Schedule {
  /// Canonical spec string (parse_schedule(spec) gives the same schedule), or the preset name.
  std::string spec;
  /// "conventional", "single", "periodic", "partial", "prope" or "preset".
  std::string kind;
  std::vector<RotaryBlock> blocks;
  std::size_t unrotated_pairs = 0;

  // --- metadata used by the framework pipelines (NUMERIC §3) ---
  /// β when θ_d = β^(-2(d-1)/exponent_dim) (conventional, partial, prope, presets).
  std::optional<mpq_class> base;
  /// The D in that exponent: dim (conventional, prope), rotary_dim (partial, presets).
  std::optional<std::size_t> exponent_dim;
  /// Head dimension 2·(blocks + unrotated pairs).
  std::size_t head_dim = 0;
  /// Rotary dimension 2·blocks.size() (includes p-RoPE's dropped blocks).
  std::size_t rotary_dim = 0;
  /// Hugging Face partial_rotary_factor (partial, presets).
  std::optional<mpq_class> partial_rotary_factor;
  /// p-RoPE's p (prope).
  std::optional<mpq_class> prope_p;
  /// llama3 scaling, applied exactly to `blocks[].theta` (presets that have it).
  std::optional<Llama3Scaling> llama3;
  /// The model's max_position_embeddings (presets).
  std::optional<std::uint64_t> max_position_embeddings;
  /// The attention factor s that Hugging Face multiplies cos and sin by
  /// (`cos = emb.cos() * self.attention_scaling`: YaRN's mscale, longrope's factor): the
  /// binary64 value HF computes, as an exact rational. Framework pipelines apply it in their
  /// attention_scaling step (realisation.hpp); r1, r2 and r3 realise the rotation alone and
  /// leave it out (it scales scores, it does not rotate). Unset: no factor (s = 1).
  std::optional<mpq_class> attention_scaling;
  /// The exact expression of that factor, e.g. "0.1*ln(4)+1" (reports only).
  std::string attention_scaling_text;

  /// 2·(blocks.size() + unrotated_pairs).
  std::size_t dimension() const { return 2 * (blocks.size() + unrotated_pairs); }
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
/// Applies llama3 scaling exactly to every block of `s` (NUMERIC §3 formula with the exact
/// angle): wavelen = 2π/θ; low = L/low_ff; high = L/high_ff; wavelen > low → θ/factor;
/// wavelen < high → θ; otherwise smooth = (L/wavelen - low_ff)/(high_ff - low_ff) and
/// θ' = (1 - smooth)·θ/factor + smooth·θ. Band decisions are exact comparisons.
Schedule apply_llama3_scaling(Schedule s, const Llama3Scaling& scaling);

/// A model of data/models.json, numbers parsed exactly from the JSON text.
struct ModelPreset {
  std::string name;
  mpq_class rope_theta;
  std::size_t head_dim = 0;
  mpq_class partial_rotary_factor = 1;
  std::uint64_t max_position_embeddings = 0;
  std::optional<Llama3Scaling> llama3;
};

/// The presets, in file order. The JSON is embedded in the binary at build time.
const std::vector<ModelPreset>& model_presets();
/// Their names, in file order.
std::vector<std::string> model_preset_names();
/// The embedded data/models.json text.
std::string_view models_json_text();
/// The schedule of a preset: partial rotary when partial_rotary_factor < 1, then llama3
/// scaling where present. Throws InvalidArgument for an unknown name (listing the names).
Schedule preset_schedule(std::string_view name);

/// Metadata of a schedule as JSON (spec, kind, dims, base, scaling, and per block the exact
/// angle text, its double value and the turn a/m when rational). For reports; does not print.
nlohmann::json to_json(const Schedule& s);

}  // namespace ropesim::attention
