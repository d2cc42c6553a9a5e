#pragma once
/// `ropesim horizon --realization pipeline:...;cos_sin=fp32:MODEL`: the certified range of the
/// Y^k head for every implementation of cos/sin within an error model (THEORY §6;
/// proofs/range/bounded_range.hpp), beside the range of the correctly rounded pipeline (`:cr`) it
/// contains.
#include <nlohmann/json.hpp>
#include <string>

#include "proofs/range/bounded_range.hpp"
#include "proofs/range/horizon.hpp"
#include "proofs/range/horizon_spec.hpp"

namespace ropesim::proofs {

/// The two ranges of one head.
struct BoundedHorizonReport {
  /// The head of the correctly rounded pipeline (`:cr`), measured as `ropesim horizon` does
  /// (C = auto chooses C there).
  HorizonReport correctly_rounded;
  /// The head of the bounded pipeline at that C (exactly: the C of correctly_rounded, an element
  /// of F), its realisation the bounded spec.
  FixedOffsetSpec head;
  /// bounded_certified_range(head, L) scanned up to L = the :cr N_max + 1 (every implementation
  /// includes :cr, so its range is at most cr's), the same limit when :cr stopped at its scan
  /// limit; L clamped to 1..kMaxBoundedRangeLength.
  BoundedRange every_implementation;
  std::string model_source;  ///< where the trig error model comes from (its file), or empty
};

/// Validates the head as horizon_spec does for the correctly rounded pipeline (the bounded
/// realisation parsed with the arguments' format, rounding and engine; errors name the flag:
/// "--realization: ..."), measures its horizon, then the range every implementation certifies
/// at that C. Throws InvalidArgument (one line) like horizon_spec, parse_bounded_realisation
/// and bounded_certified_range.
BoundedHorizonReport bounded_horizon(const HorizonArguments& arguments);

/// {"correctly_rounded": to_json(HorizonReport), "every_implementation": to_json(BoundedRange),
/// "model_source": text}.
nlohmann::json to_json(const BoundedHorizonReport& report);

}  // namespace ropesim::proofs
