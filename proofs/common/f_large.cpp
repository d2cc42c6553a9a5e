#include "proofs/common/f_large.hpp"

#include "numeric/format_properties.hpp"

namespace ropesim::proofs {

numeric::Value require_f_large(const numeric::Format& format, numeric::Rounding rounding,
                               std::string_view rounding_name) {
  if (const auto fl = numeric::f_large(format, rounding)) return *fl;
  const std::string name(rounding_name.empty() ? numeric::to_string(rounding) : rounding_name);
  if (rounding == numeric::Rounding::upward) {
    throw FLargeUndefined(FLargeCause::rounding,
                          "f_large(" + format.name + ") is undefined under rounding " + name +
                              " (exp(-f) never rounds up to 0; THEORY §1); use nearest-even, "
                              "nearest-away, toward-zero or downward");
  }
  throw FLargeUndefined(
      FLargeCause::format,
      "f_large(" + format.name + ") is undefined: exp(-max) does not round to 0 in " + format.name +
          " (its range is too small for stable softmax to select exactly; THEORY §1); use a "
          "format with a wider range, e.g. fp16, bf16, fp32");
}

}  // namespace ropesim::proofs
