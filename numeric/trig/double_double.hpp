#pragma once
/// cos and sin in double-double arithmetic with a stated absolute error bound: the fast first
/// step of the Ziv loop of numeric::CosSinRounder (numeric/real_rounding.hpp; NUMERIC §2;
/// CORE-MATH habit of keeping the error argument next to the code).
///
/// Error-free transformations (Dekker / Knuth TwoSum, FMA-based TwoProd) are exact under
/// binary64 round-to-nearest, which ropesim never changes; -ffp-contract=off keeps the
/// compiler from fusing the other operations. Double-double + and × have relative errors
/// ≤ 3u² and ≤ 7u² (u = 2^-53; Joldes, Muller, Popescu, ACM TOMS 44(2) 2017, Algorithms 6
/// and 12).
///
/// Argument: x = xh + xl with |xh| < 2^28. Reduction r = x - q·π/2, q = nearest(xh·2/π)
/// (|q| < 2^28), π/2 = C1 + C2 + C3 + δ, |δ| < 2^-158: q·C1 and q·C2 are exact double-doubles
/// (TwoProd), q·C3 is rounded once (error < 2^28·2^-106·2^-53 = 2^-131), q·δ < 2^-130. The
/// three double-double subtractions have exact results ≤ 1 + 2^-50 in magnitude (the first
/// one's high parts cancel), so each adds < 3u²·2 < 2^-103. |r| < π/4 + 2^-20 < 0.8.
/// Taylor series of cos to r^30 and sin to r^31: truncation < 0.8^32/32! < 2^-120. Horner with
/// 16 double-double steps on partial values of magnitude ≤ 1.4 (and z = r² ≤ 0.64): each step
/// a product (7u²) and a sum (3u²), < 16·1.4·10u² < 2^-97 per function, plus the final ·r.
/// Total < 2^-95 (kDoubleDoubleTrigProvenError); every caller takes 2^-88
/// (kDoubleDoubleTrigError: the proven bound with 7 bits of margin), plus the error of the
/// input angle (cos and sin are 1-Lipschitz). tests/numeric/test_real_rounding.cpp measures
/// the error against MPFR (random arguments up to 2^28, and the worst cancellations, next to
/// multiples of π/2) below the proven bound, and the rounded results bit for bit.
#include <cstdint>

namespace ropesim::numeric {

/// An unevaluated sum hi + lo of two doubles (|lo| ≤ ulp(hi)/2 after normalisation), the
/// value the fast path carries (about 106 bits).
struct DoubleDouble {
  double hi = 0, lo = 0;
};

/// The bound the argument above proves for dd_cos_sin's absolute error, besides the input
/// angle's own error.
constexpr double kDoubleDoubleTrigProvenError = 0x1p-95;

/// The absolute error bound of dd_cos_sin that its callers use (numeric::CosSinRounder's
/// first step, attention::ExactBlockRotation::enclose): the proven bound with 7 bits of margin.
/// (It was 2^-72 until December 2026, wider than the distance from 1 of the low frequencies'
/// cos, which sent those entries to MPFR for nothing.)
constexpr double kDoubleDoubleTrigError = 0x1p-88;
static_assert(kDoubleDoubleTrigError >= 0x1p7 * kDoubleDoubleTrigProvenError);

/// Largest |xh| accepted by dd_cos_sin.
constexpr double kDoubleDoubleTrigMaxArgument = 0x1p28;

/// cos and sin of x = x.hi + x.lo radians (|x.hi| < 2^28, |x.lo| ≤ ulp(x.hi)), each within
/// kDoubleDoubleTrigProvenError absolutely (callers take kDoubleDoubleTrigError). Returns false
/// (and leaves c, s unspecified) when the argument is out of range or not finite; never throws.
bool dd_cos_sin(DoubleDouble x, DoubleDouble& c, DoubleDouble& s);

/// x = (θh + θl) · i as a double-double (i < 2^53, exactly a double): relative error
/// ≤ 7u² < 2^-103 (JMP 2017 Alg. 11/12). Never throws.
DoubleDouble dd_mul_uint(DoubleDouble theta, std::uint64_t i);

}  // namespace ropesim::numeric
