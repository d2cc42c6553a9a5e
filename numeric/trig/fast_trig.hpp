#pragma once
/// Internal: the binary64 first step of the realisation fast path (NUMERIC §2;
/// THEORY §3). cos and sin of an exact angle — a rational turn r/m, θ·i for an exact θ, or an
/// exact double in radians — in binary64 with a proven absolute error bound, the argument
/// reduced exactly or in double-double; then the rounding test: if both ends of
/// [v − err, v + err] round to the same element of the target F, every real in between (the
/// exact cos or sin among them) rounds there too (rounding is monotone), else the caller falls
/// back to the exact path (numeric::CosSinRounder / MPFR) and counts the fallback.
///
/// The error argument is beside the code in fast_trig.cpp (CORE-MATH habit); the tests compare
/// the fast path with the exact one bit for bit (tests/attention/test_realisation_fast_path.cpp),
/// and see a deliberately wrong bound fail (FastPathFault).
#include <cstdint>

#include "numeric/binary64_rounding.hpp"
#include "numeric/exact_real.hpp"

namespace ropesim::numeric::trig {

/// A binary64 approximation v of a real x with |x − v| ≤ err (err ≥ 0, a double rounded up).
struct Approx {
  double v = 0;
  double err = 0;
};

/// cos(2π·f) and sin(2π·f) for f known as fh + fl with |f − (fh + fl)| ≤ ef turns
/// (|fh| ≤ 2, |fl| ≤ 2^-50, ef ≤ 2^-40; the caller's reduction guarantees these). The result
/// bounds hold for the exact cos(2πf), sin(2πf). Returns false (c, s unspecified) when the
/// reduced turn is non-zero below 2^-900 (the caller falls back). Never throws.
bool cos_sin_turns(double fh, double fl, double ef, Approx& c, Approx& s);

/// The turns of an angle x radians given as an exact double: f = x/(2π) mod 1 as fh + fl with
/// its error bound ef (cos_sin_turns' input). Returns false when |x| ≥ 2^50 or x is not finite
/// (the caller falls back to the exact path). Never throws.
bool turns_of_radians(double x, double& fh, double& fl, double& ef);

/// τ = θ/(2π) as a double-double with its error bound, for turns_of_product.
struct Turn {
  double hi = 0, lo = 0;  ///< |τ − (hi + lo)| ≤ err
  double err = 0;
  bool valid = false;  ///< false when |τ| ∉ [2^-900, 2^20] (the caller keeps the exact path)
};

/// τ = θ/(2π) of an exact angle θ (radians) as a Turn: θ enclosed at 320 bits, the quotient at
/// 320 bits rounded to a double-double, err the sum of the three errors rounded up. Not valid
/// when |τ| ∉ [2^-900, 2^20] (θ = 0 among them) or θ's enclosure is too wide. Throws only what
/// ExactReal::enclose throws.
Turn turn_of(const numeric::ExactReal& theta);

/// The turns of θ·i, f = τ·i mod 1, τ = θ/(2π) (Turn), as fh + fl with error bound ef; i must be
/// below 2^53 and |τ·i| below 2^50, else false (exact path). Never throws.
bool turns_of_product(const Turn& tau, std::uint64_t i, double& fh, double& fl, double& ef);

/// The turns r/m of a rational turn (r < m < 2^53) as fh + fl with error bound ef. Returns
/// false when m ≥ 2^53. Never throws.
bool turns_of_ratio(std::uint64_t r, std::uint64_t m, double& fh, double& fl, double& ef);

/// The rounding test: round_F(a.v) when every real in [a.v − a.err, a.v + a.err] rounds to the
/// same finite element of F (F given by `f`, fast_rounding() under nearest-even), written to
/// `out`; false otherwise (undecided, or the result overflows). Never throws.
bool round_decided(const numeric::Binary64Rounding& f, const Approx& a, double& out);

/// The constants of the fast path, rounded from MPFR at 400 bits once: 2π = two_pi_hi +
/// two_pi_lo (|error| ≤ 2^-104; hi ∈ [4, 8), |lo| ≤ 2^-51); 1/(2π) = inv_hi + inv_mid + inv_lo
/// (|error| ≤ 2^-160); the Taylor coefficients s[k] = RN((−1)^k/(2k+1)!), k = 1..8, and
/// c[k] = RN((−1)^k/(2k)!), k = 1..9 (s[0], c[0] unused). Shared by cos_sin_turns and the
/// batched kernels (fast_trig_batch.hpp), which must use the same values.
struct TrigConstants {
  double two_pi_hi = 0, two_pi_lo = 0;
  double inv_hi = 0, inv_mid = 0, inv_lo = 0;
  double s[9] = {}, c[10] = {};
  TrigConstants();
};
/// The one TrigConstants (built on first use; thread-safe static). Never throws.
const TrigConstants& trig_constants();

/// A deliberately wrong fast path, for the tests only (never set in the library or the tools):
/// every cos/sin approximation is multiplied by (1 + perturbation); when `cover` is true the
/// error bound grows by 2·|v|·|perturbation| (a correct bound: results stay bit-identical, with
/// more fallbacks); when false the bound is left as it was (a wrong bound: the bit-identity
/// test must then fail). Not thread-safe: set it before starting the evaluations.
struct FastPathFault {
  double perturbation = 0;
  bool cover = true;
};
/// The current fault (default: none).
FastPathFault& fast_path_fault();

}  // namespace ropesim::numeric::trig
