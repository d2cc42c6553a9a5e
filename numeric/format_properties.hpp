#pragma once
/// Quantities computed per format: THEORY §1.
#include <gmpxx.h>

#include <optional>

#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"

namespace ropesim::numeric {

/// Largest finite element of F (448 for fp8e4m3; (2^(I+F)-1)·2^-F for fixed point).
Value max_finite(const Format& f);
/// Smallest positive element of F (the smallest subnormal when subnormals are on).
Value min_positive(const Format& f);
/// Smallest positive normal element 2^emin (floating), 2^-F (fixed point).
Value min_normal(const Format& f);
/// Unit roundoff: 2^-p for round-to-nearest, 2^(1-p) for directed rounding (relative);
/// fixed point: half (nearest) or one (directed) 2^-F, absolute. Returned as a double.
double unit_roundoff(const Format& f, Rounding r);

/// The exponent e of the unit roundoff u = 2^e (exact even where a double underflows:
/// p = 4096 gives e = -4096 under round-to-nearest).
long unit_roundoff_exponent(const Format& f, Rounding r);

/// f_large(F) [THEORY §1; LC25]: the smallest positive f in F with round_F(exp(-f)) = 0,
/// under rounding `r` and F's subnormal setting. None (std::nullopt) when no such element
/// exists (round-up; formats whose exp(-max) does not underflow).
std::optional<Value> f_large(const Format& f, Rounding r = Rounding::nearest_even);

/// N_max(F) = floor(min(1, max finite) / min positive) [THEORY §1; LC25 Prop B.6]: the number
/// of softmax outputs that can be non-zero at once. Exact integer.
mpz_class n_max(const Format& f);

}  // namespace ropesim::numeric
