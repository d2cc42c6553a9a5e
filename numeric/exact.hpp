#pragma once
/// Exact parsing of decimal numbers in specs (base, g, factors are never read via double).
#include <gmpxx.h>

#include <string_view>

namespace ropesim::numeric {

/// Parses a decimal such as `10000`, `1e4`, `5e5`, `0.75`, `-2.5E-3` exactly into a rational.
/// Throws InvalidArgument (naming `what`) for anything else.
mpq_class parse_decimal_exact(std::string_view text, std::string_view what = "number");

/// Parses an exact decimal (as parse_decimal_exact) or a fraction of two, `P/Q` (`1/3`,
/// `355/113`, `1e4/7`), into a rational. Throws InvalidArgument (naming `what`) for anything
/// else, or for Q = 0.
mpq_class parse_rational_exact(std::string_view text, std::string_view what = "number");

/// The double nearest to q (ties to even), for display: gmp's get_d truncates (0.1 → 0.0999…).
double nearest_double(const mpq_class& q);

}  // namespace ropesim::numeric
