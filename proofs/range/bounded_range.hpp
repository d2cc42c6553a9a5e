#pragma once
/// The certified range of the fixed-offset head under bounded-error trig (
/// THEORY §6 "Every implementation within a bound"): the length L such that for EVERY
/// implementation of cos and sin within the model (attention/realisations/bounded_realisation.hpp)
/// every query k+1 ≤ i ≤ L+1 puts its score of j = i − k ahead of every other realised score by at
/// least f_large (RoPE-X eq. 10, THEORY §6).
///
/// The argument. Each realised score Ŝ_{i,j} = q_i·k_j is a composition of correctly rounded
/// operations on the table entries (c, s) of positions i and j. For one block the rotated
/// coordinates rnd(rnd(c·x0) ∓ rnd(s·x1)) (theory) or rnd(rnd(x0·c) + rnd(−x1·s)) (hf_eager)
/// and the casts after them are monotone in c and in s separately (rounding is monotone), so
/// over the box [c_lo, c_hi] × [s_lo, s_hi] each query or key coordinate takes its extremes at
/// the four corners: the coordinate intervals below are exact. The score is then enclosed by
/// interval arithmetic with the same rounding: each product rnd(q·k) over an interval pair lies
/// between the rounded corner products, each partial sum rnd(a + b) between the rounded sums of
/// the ends. So lo(Ŝ) ≤ Ŝ ≤ hi(Ŝ) in every implementation, and if
///     lo(Ŝ_{i,i−k}) − max_{j ≠ i−k} hi(Ŝ_{i,j}) ≥ f_large
/// for every query up to L + 1, every implementation certifies L. The converse need not hold
/// (the enclosure ignores that one implementation uses one value per argument, and the
/// correlation between q_i's coordinates): the range reported is a lower bound on the range
/// every implementation has, exact for ulp-0 (every box one value: the scan of the correctly
/// rounded pipeline, certified_range).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "proofs/range/fixed_offset_head.hpp"

namespace ropesim::proofs {

/// The all-implementations certified range (see the file comment).
struct BoundedRange {
  std::string realisation;  ///< BoundedRealisation::name()
  std::string model;        ///< TrigErrorModel::name
  /// The largest L certified for every implementation: with a failing query i, i − 2 (below k:
  /// nothing certified); when no query up to max_length + 1 fails, max_length (at_limit).
  std::uint64_t n_max = 0;
  bool at_limit = false;
  std::uint64_t max_length = 0;
  /// The first query some implementation may fail, the competitor with the largest upper score
  /// there, and the enclosures: target_lo = lo(Ŝ_{i,i−k}), competitor_hi = hi(Ŝ_{i,j}) (F values
  /// as doubles), their exact difference (nullopt when an enclosure is not finite).
  std::optional<std::uint64_t> fail_query, fail_competitor;
  std::optional<double> target_lo, competitor_hi;
  std::optional<mpq_class> gap;
  /// Table entries (position, block) over positions 0..max_length+1 whose box holds more than
  /// one value, and those outside the model's documented domain.
  std::uint64_t uncertain_entries = 0, undocumented_entries = 0;
  std::uint64_t scores_enclosed = 0;
};

/// Measures it for the head of `spec`, whose `realisation` is a bounded pipeline
/// (attention::parse_bounded_realisation with the policy's binding), over queries up to
/// max_length + 1. Throws InvalidArgument (one line) when the realisation is not bounded or does
/// not apply, max_length is outside 1..kMaxBoundedRangeLength, or the policy is outside the
/// exact binary64 domain of the enclosure (sequential summation, nearest-even, F and the
/// rotation/output formats with fast binary64 arithmetic: numeric::Binary64Rounding), and like
/// make_fixed_offset_head.
BoundedRange bounded_certified_range(const FixedOffsetSpec& spec, std::uint64_t max_length);

/// Largest max_length (positions realised with four corner rotations each; N²/2 enclosures).
inline constexpr std::uint64_t kMaxBoundedRangeLength = 1u << 16;

/// The result as JSON (keys: realization model n_max at_limit max_length fail_query
/// fail_competitor target_lo competitor_hi gap (the nearest binary64) gap_exact (its exact
/// decimal) uncertain_entries undocumented_entries scores_enclosed). Does not print.
nlohmann::json to_json(const BoundedRange& r);

}  // namespace ropesim::proofs
