// attention::parse_norm_placement and to_string (transformer.hpp).
#include "attention/transformer/transformer.hpp"
#include "fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ropesim::fuzz::run(data, size, [](std::string_view text) {
    ropesim::fuzz::enum_round_trip(
        text, [](std::string_view t) { return ropesim::attention::parse_norm_placement(t); },
        [](ropesim::attention::NormPlacement v) { return ropesim::attention::to_string(v); });
  });
}
