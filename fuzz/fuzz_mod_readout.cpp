// proofs::parse_mod_readout and to_string (mod_atom.hpp; `ropesim construct mod --readout`).
#include "fuzz/fuzz.hpp"
#include "proofs/compiler/mod_atom.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ropesim::fuzz::run(data, size, [](std::string_view text) {
    ropesim::fuzz::enum_round_trip(
        text, [](std::string_view t) { return ropesim::proofs::parse_mod_readout(t); },
        [](ropesim::proofs::ModReadout v) { return ropesim::proofs::to_string(v); });
  });
}
