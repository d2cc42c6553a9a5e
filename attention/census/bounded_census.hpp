#pragma once
/// The rotation census under bounded-error trig (THEORY §3 "Every implementation
/// within a bound"): what holds for EVERY implementation of cos and sin within a TrigErrorModel
/// (attention/realisations/bounded_realisation.hpp) over positions S..S+N-1.
///
/// Per (position i, block d) the pipeline forms a binary32 argument φ_{i,d} (the same for every
/// implementation: the steps before cos_sin do not call trig) and the model allows a box of
/// table values (TrigBox). An implementation is one function of the argument, so:
///   forced equal   positions i, j whose blocks each have the same argument, or a box that is
///                  one value and the same value, realise the same rotation in every
///                  implementation ("keys" below);
///   must differ    positions whose boxes are disjoint in some block differ in every one;
///   can be equal   positions for which one binary32 value per argument (per group of
///                  arguments that must agree) lies in the allowed results of both: some
///                  implementation realises them equal (a witness, checked by construction).
/// Counts as an interval [fewest, most] that contains the distinct count of every
/// implementation:
///   most    = the number of distinct keys, key_i = (per block: the one value of a fixed box,
///             else the argument). Equal keys are forced equal, so no implementation has more
///             distinct rotations. (An upper bound: distinct keys need not all be separable.)
///   fewest  = max(distinct fixed rotations, the largest piercing number). The positions whose
///             every box is one value realise those values in every implementation; and for
///             one coordinate (cos or sin of block d) the values any implementation uses hit
///             every position's interval, so there are at least as many distinct rotations as
///             the fewest points that hit all the intervals (the piercing number, exact in one
///             dimension by the greedy sweep on right ends; its picks are pairwise disjoint
///             intervals: positions that must stay distinct). A lower bound.
/// Exact (fewest = most) when every box is one value, e.g. ulp-0, which is then the census of
/// the correctly rounded pipeline (`:cr`).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attention/realisations/bounded_realisation.hpp"
#include "attention/schedules/schedule.hpp"

namespace ropesim::attention {

/// Two positions, earlier < later.
struct PositionPair {
  std::uint64_t earlier = 0;
  std::uint64_t later = 0;
  bool operator==(const PositionPair&) const = default;
};

/// The census under a bounded model (see the file comment).
struct BoundedCensus {
  std::string schedule;     ///< Schedule::spec
  std::string realisation;  ///< BoundedRealisation::name()
  std::string model;        ///< TrigErrorModel::name
  std::string model_source;
  Format format;        ///< activation format A
  Format table_format;  ///< the compared (cos, sin) entries
  std::uint64_t start = 0, positions = 0;

  /// Every implementation within the model has between fewest and most distinct rotations.
  std::uint64_t fewest = 0, most = 0;
  /// fewest = most is then the distinct count of every implementation (every box one value).
  bool exact = false;
  /// How fewest was obtained: the distinct rotations among the positions whose every box is one
  /// value (fixed_positions of them), and the largest piercing number, of (block, cos/sin).
  std::uint64_t fixed_distinct = 0, fixed_positions = 0;
  std::uint64_t piercing = 0;
  std::size_t piercing_block = 0;
  bool piercing_is_cos = true;
  /// Per block: [fewest, most] distinct (cos, sin) pairs of that block alone (fewest: the larger
  /// of its cos and sin piercing numbers; most: its distinct keys).
  std::vector<std::uint64_t> fewest_per_block, most_per_block;
  /// Per block: entries whose box holds more than one value (implementations may differ there).
  std::vector<std::uint64_t> uncertain_per_block;

  /// The first later position whose key equals an earlier one's: equal in every implementation.
  std::optional<PositionPair> forced_equal;
  /// The largest class of positions with one key (its size and smallest position).
  std::uint64_t largest_forced_class = 0, largest_forced_class_position = 0;
  /// Two of the piercing picks: boxes disjoint in that coordinate, distinct in every
  /// implementation.
  std::optional<PositionPair> must_differ;
  /// Positions with different keys that some implementation realises equal (searched among
  /// neighbours in block 0's box order; unset = none found there, not a proof of absence).
  std::optional<PositionPair> can_be_equal;

  /// Entries outside the model's documented domain (box [−1, 1]) and the first such position.
  std::uint64_t undocumented_entries = 0;
  std::optional<std::uint64_t> first_undocumented;
  /// The largest |argument| over the window and where (position, block).
  double max_argument = 0;
  std::uint64_t max_argument_position = 0;
  std::size_t max_argument_block = 0;
};

/// Largest N·(rotary blocks) a bounded census takes (memory: about 64 bytes per entry).
inline constexpr std::uint64_t kMaxBoundedCensusEntries = std::uint64_t{1} << 25;

/// The census of `r` on `s` over positions start..start+positions-1. Throws InvalidArgument
/// (one line) when positions < 2, positions·blocks > kMaxBoundedCensusEntries, the last position
/// exceeds 2^63 − 1, or like check_bounded_applicable / trig_boxes.
BoundedCensus bounded_census(const Schedule& s, const BoundedRealisation& r, std::uint64_t start,
                             std::uint64_t positions);

/// Refuses `flag`, a census option the bounded census does not take (--position, --certificate,
/// --axis, --at, --max-period, --witnesses): throws InvalidArgument with one line naming it and
/// the options accepted with a bounded-error cos_sin step.
[[noreturn]] void refuse_bounded_census_option(const std::string& flag);

/// The census as JSON (keys: schedule realization model model_source format table_format start
/// positions distinct_fewest distinct_most exact fixed_distinct fixed_positions piercing
/// piercing_block piercing_coordinate fewest_per_block most_per_block uncertain_per_block
/// forced_equal largest_forced_class largest_forced_class_position must_differ can_be_equal
/// undocumented_entries first_undocumented max_argument max_argument_position
/// max_argument_block). Does not print.
nlohmann::json to_json(const BoundedCensus& c);

/// The census as the text `ropesim rotations` prints (one `key  value` line each).
std::string to_text(const BoundedCensus& c);

}  // namespace ropesim::attention
