#pragma once
/// The relative-position property under a realisation (THEORY §2.1, §3): in exact arithmetic
/// the score ⟨R_p q, R_{p-n} k⟩ = qᵀ R_{-n} k depends only on the offset n; a realised model
/// computes S(p, p-n) = ⟨R̂_p q, R̂_{p-n} k⟩ in F, which depends on p as well. rotate_scores
/// computes both for a list of query positions p at one offset n.
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "numeric/summation.hpp"

namespace ropesim::attention {

/// The most query positions rotate_scores accepts in one call.
inline constexpr std::size_t kMaxRotatePositions = 4096;

/// A query and a key vector, both of one dimension, values in F.
struct QueryKey {
  std::vector<Value> query;
  std::vector<Value> key;
};

/// Reproducible random q and k of `dimension` coordinates in F: one std::mt19937_64 seeded
/// with `seed` (its output sequence is fixed by the C++ standard) draws 2·dimension raw 64-bit
/// words x; each coordinate is round_F(((x mod 129) - 64)/64), i.e. a multiple of 1/64 in
/// [-1, 1] (exact in every format with ≥ 7 significant bits), rounded to nearest-even into F
/// otherwise. q takes the first `dimension` draws, k the next. No std distribution is used
/// (their algorithms differ between standard libraries). Throws InvalidArgument for
/// dimension 0.
QueryKey random_query_key(const Format& f, std::size_t dimension, std::uint64_t seed);

/// The exact score qᵀ R_{-n} k = ⟨R_p q, R_{p-n} k⟩ (any p) for q, k of `layout`:
/// Σ_d [cos(nθ_d)(q0k0 + q1k1) + sin(nθ_d)(q0k1 - q1k0)] + Σ_u q_u k_u over the rotary pairs d
/// (coordinates (2d, 2d+1) adjacent, (d, d + D_r/2) rotate_half; D_r the rotary dimension) and
/// the unrotated coordinates u ≥ D_r, with cos and sin from ExactBlockRotation (compare.hpp),
/// summed at 384 bits: the nearest double of a value within 2^-170·Σ|terms| of the exact one.
/// E.g. q = k = e_1 on single:g=G: cos(nG). Throws InvalidArgument on a length mismatch.
double exact_score(const Schedule& s, PairLayout layout, std::span<const Value> q,
                   std::span<const Value> k, std::uint64_t offset);

/// The realised and exact score at one query position.
struct ScoreAtPosition {
  std::uint64_t position = 0;        ///< p (query)
  std::uint64_t key_position = 0;    ///< p - n (key)
  std::vector<Value> rotated_query;  ///< R̂_p q, in F (apply_rotation, then into F)
  std::vector<Value> rotated_key;    ///< R̂_{p-n} k, in F
  Value score;                       ///< ⟨R̂_p q, R̂_{p-n} k⟩ in F by the summation policy
  double absolute_error = 0;         ///< |score - exact| (nearest double; NaN if not finite)
  double relative_error = 0;         ///< |score - exact| / |exact| (inf if exact = 0 ≠ score)
  std::uint8_t flags = 0;            ///< numeric::Flags bits of R̂_p and R̂_{p-n}
};

/// The result of rotate_scores.
struct RotateResult {
  std::string schedule;     ///< Schedule::spec
  std::string realisation;  ///< Realisation::name()
  Format format;            ///< F: q, k, the rotated vectors and the score
  numeric::Summation summation = numeric::Summation::sequential;
  /// The accumulator format under Summation::wide_accumulator (else unused).
  Format accumulator = Format::fp32();
  PairLayout layout = PairLayout::adjacent;
  std::vector<Value> query, key;
  std::uint64_t offset = 0;  ///< n
  /// The schedule's attention factor s when r carries it (carries_attention_factor, compare.hpp:
  /// a framework pipeline multiplies cos and sin by s, so the realised score is about
  /// s²·qᵀR_{-n}k).
  std::optional<mpq_class> attention_factor;
  /// The exact score in r's convention, the same for every p: s²·qᵀ R_{-n} k when r carries the
  /// attention factor s (both rotated vectors are scaled by s: like with like, as compare()
  /// scales its reference), else qᵀ R_{-n} k (exact_score); computed at 384 bits, nearest double.
  double exact = 0;
  std::vector<ScoreAtPosition> scores;  ///< in the order of the positions asked
  /// max - min of the finite realised scores over the positions (0 for one position): how
  /// far the realised score drifts with p at fixed n; exactly it would be 0.
  double drift = 0;
};

/// For each p in `positions` (each ≥ n): R̂_p q and R̂_{p-n} k by apply_rotation with r's
/// layout (THEORY §2.1 or hf eager arithmetic; realisation.hpp), each coordinate then
/// rounded into F = r.format if the rotation's output format differs, and the score
/// S(p, p-n) = Σ_j (R̂_p q)_j (R̂_{p-n} k)_j in F by numeric::dot under `summation`
/// (sequential: left to right over coordinates 0..D-1, each product and partial sum rounded;
/// THEORY §2.1; wide_accumulator: products and partial sums in `accumulator`, one rounding
/// into F), next to the exact score in r's convention (exact_score, times s² when r carries
/// the schedule's attention factor s: RotateResult::exact). q and k must be elements of F of
/// dimension s.dimension(). Throws InvalidArgument for a dimension mismatch, an empty position list
/// or more than kMaxRotatePositions, a p < n, p > 2^63 - 1, or a realisation that does not apply.
RotateResult rotate_scores(const Schedule& s, const Realisation& r, std::span<const Value> q,
                           std::span<const Value> k, std::uint64_t offset,
                           const std::vector<std::uint64_t>& positions,
                           numeric::Summation summation = numeric::Summation::sequential,
                           const Format& accumulator = Format::fp32());

/// The result as JSON: schedule, realization, format, summation, accumulator (the format's
/// name under wide-accumulator, else null), layout, offset, attention_factor (null, or s as a
/// JSON number: the exact score is then s²·qᵀR_{-n}k), query and key (lists of JSON
/// numbers; when F holds a value binary64 cannot, "query_exact"/"key_exact" list every value
/// exactly as "P/Q" or an integer), exact, drift, and "scores": [{position, key_position,
/// score {decimal, hex, value (a number; "value_exact" beside it when not binary64)},
/// absolute_error, relative_error, overflow, nan}] (non-finite numbers as the strings
/// "inf"/"-inf"/"nan"). Does not print.
nlohmann::json to_json(const RotateResult& result);

}  // namespace ropesim::attention
