#pragma once
/// IEEE 754 rounding-direction attributes (THEORY §1; NUMERIC §1).
#include <string>
#include <string_view>

namespace ropesim::numeric {

/// The five IEEE 754-2019 rounding directions.
enum class Rounding {
  nearest_even,  ///< roundTiesToEven (the default everywhere; THEORY §2.1)
  nearest_away,  ///< roundTiesToAway
  toward_zero,   ///< roundTowardZero
  upward,        ///< roundTowardPositive
  downward,      ///< roundTowardNegative
};

/// Parses `rne|nearest-even`, `rna|nearest-away`, `rz|toward-zero`, `ru|up|upward`,
/// `rd|down|downward`. Throws ropesim::InvalidArgument naming the accepted spellings.
Rounding parse_rounding(std::string_view text);

/// Canonical spelling: `nearest-even`, `nearest-away`, `toward-zero`, `upward`, `downward`.
std::string_view to_string(Rounding mode);

/// True for the two round-to-nearest modes.
constexpr bool is_nearest(Rounding mode) {
  return mode == Rounding::nearest_even || mode == Rounding::nearest_away;
}

}  // namespace ropesim::numeric
