// numeric::parse_format: a parsed format's name parses back to an equal format (format.hpp).
#include "fuzz/fuzz.hpp"
#include "numeric/format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ropesim::fuzz::run(data, size, [](std::string_view text) {
    using ropesim::fuzz::require;
    const auto f = ropesim::numeric::parse_format(text);
    require(f.precision >= 1, "precision < 1 accepted");
    require(f.is_fixed_point() || f.emin <= f.emax, "emin > emax accepted");
    const auto again = ropesim::numeric::parse_format(f.name);
    require(again == f, "name '" + f.name + "' parses to a different format");
    require(again.name == f.name, "name '" + f.name + "' is not stable: '" + again.name + "'");
    (void)f.fits_double();
  });
}
