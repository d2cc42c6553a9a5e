#pragma once
/// Exact parsing of decimal numbers in specs (base, g, factors are never read via double).
#include <gmpxx.h>

#include <string_view>

namespace ropesim::numeric {

/// The largest |exponent| parse_decimal_exact reads (10^100000 has 41 KB of digits).
inline constexpr long kMaxDecimalExponent = 100000;

/// Parses a decimal such as `10000`, `1e4`, `5e5`, `0.75`, `-2.5E-3` exactly into a rational.
/// Throws InvalidArgument (naming `what`) for anything else, and for an exponent beyond
/// ±kMaxDecimalExponent (saying so: `1e400000` is a number, only too large to expand).
mpq_class parse_decimal_exact(std::string_view text, std::string_view what = "number");

/// Parses an exact decimal (as parse_decimal_exact) or a fraction of two, `P/Q` (`1/3`,
/// `355/113`, `1e4/7`), into a rational. Throws InvalidArgument (naming `what`) for anything
/// else, or for Q = 0.
mpq_class parse_rational_exact(std::string_view text, std::string_view what = "number");

/// The double nearest to q (ties to even), for display: gmp's get_d truncates (0.1 → 0.0999…).
double nearest_double(const mpq_class& q);

/// A number of a model config (rope_theta, a rope_scaling factor, ...) as the binary64 Python
/// float that Hugging Face code computes with: the double nearest to q, ties to even
/// (= nearest_double; Python's float() of the JSON number, IEEE 754 roundTiesToEven into
/// binary64, NUMERIC §3 "what real code runs"). |q| beyond binary64's range gives ±inf (Python
/// raises OverflowError there); below 2^-1022 q is rounded to 53 bits first, then to the
/// subnormal grid (config numbers are never that small). Never throws.
double python_float(const mpq_class& q);

}  // namespace ropesim::numeric
