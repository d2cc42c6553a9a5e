#pragma once
/// Exact decimal text of binary values and dyadic rationals: the one spelling ropesim writes
/// for exact numbers (model specs, run traces, compiler reports, certificates).
#include <gmpxx.h>

#include <string>

#include "numeric/value.hpp"

namespace ropesim::numeric {

/// The shortest exact decimal text of a dyadic rational q = a/2^k (every binary floating-point
/// value and every difference of two is one): positional ("0.5", "-17.34375", "12",
/// "0.0078125") unless that would take more than five zeros after the point before the first
/// digit or end an integer in six or more zeros; then scientific with the exact digits
/// ("1.490116119384765625e-8", "1e6"). A rational that is not dyadic has no finite decimal:
/// "p/q" (GMP's text). Never throws. Parsing the text back gives q exactly.
std::string exact_decimal(const mpq_class& q);

/// exact_decimal of the value of v (exact_rational); "inf", "-inf", "nan" for special values
/// and "-0" for negative zero. Parsing it back and rounding into F in any direction gives v.
std::string exact_decimal(const Value& v);

}  // namespace ropesim::numeric
