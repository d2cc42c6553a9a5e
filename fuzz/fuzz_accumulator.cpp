// numeric::parse_accumulator_model and to_string (numeric/accumulator.hpp): a parsed model
// prints to a spelling that parses back to the same model.
#include "fuzz/fuzz.hpp"
#include "numeric/accumulator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ropesim::fuzz::run(data, size, [](std::string_view text) {
    using ropesim::fuzz::require;
    const auto model = ropesim::numeric::parse_accumulator_model(text);
    const std::string canonical = to_string(model);
    const auto again = ropesim::numeric::parse_accumulator_model(canonical);
    const bool same_promotion =
        model.promotion.has_value() == again.promotion.has_value() &&
        (!model.promotion || (model.promotion->interval == again.promotion->interval &&
                              model.promotion->format == again.promotion->format &&
                              model.promotion->rounding == again.promotion->rounding));
    require(again.format == model.format && again.rounding == model.rounding && same_promotion,
            "'" + canonical + "' does not parse back to its accumulator model");
    require(to_string(again) == canonical, "'" + canonical + "' is not canonical");
  });
}
