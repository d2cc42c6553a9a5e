#pragma once
/// Exact parsing of decimal numbers in specs (base, g, factors are never read via double).
#include <gmpxx.h>

#include <string_view>

namespace ropesim::numeric {

/// Parses a decimal such as `10000`, `1e4`, `5e5`, `0.75`, `-2.5E-3` exactly into a rational.
/// Throws InvalidArgument (naming `what`) for anything else.
mpq_class parse_decimal_exact(std::string_view text, std::string_view what = "number");

}  // namespace ropesim::numeric
