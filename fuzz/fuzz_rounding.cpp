// numeric::parse_rounding and to_string (rounding.hpp).
#include "fuzz/fuzz.hpp"
#include "numeric/rounding.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ropesim::fuzz::run(data, size, [](std::string_view text) {
    ropesim::fuzz::enum_round_trip(
        text, [](std::string_view t) { return ropesim::numeric::parse_rounding(t); },
        [](ropesim::numeric::Rounding r) { return ropesim::numeric::to_string(r); });
  });
}
