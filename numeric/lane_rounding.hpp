#pragma once
/// Internal: numeric::Binary64Rounding::round in lanes of 4 doubles (GCC/Clang vector
/// extensions), branch-free, for the kernels that run the same binary64 steps on several values
/// at once (proofs/reports/score_kernels.cpp). The functions are templates over the vector type
/// V (numeric::lanes::V), instantiated only in the kernels' .cpp files, which silence GCC's
/// note that 32-byte vectors are passed differently with and without AVX (-Wpsabi: the
/// vectors never cross a translation unit).
///
/// The rounding (NUMERIC §2): with 2^e the binade of x (its exponent bits; 0 for ±0 and
/// subnormal doubles), s = min(max(2^e, 2^emin), 2^(emax+1)) and M = s·1.5·2^(53−p) =
/// 1.5·2^(q+52), where 2^q is F's quantum at |x|, r = RN(RN(x + M) − M) is x rounded to a
/// multiple of 2^q, ties to even; |r| > max finite gives ±inf; the sign is x's. This is
/// Binary64Rounding::round's add-magic branch (p ≤ 51, emax ≤ 969 + p) with the exponent clamped
/// instead of a branch on e > emax (the clamp keeps M finite; a larger x still rounds above max
/// finite, rounding being monotone): the same double for every x that is not NaN (±0 and ±inf
/// included), and NaN for NaN (its payload may differ). attention/detail/fast_trig_batch.cpp's
/// BatchRounding is the same computation.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "numeric/binary64_rounding.hpp"
#include "numeric/format.hpp"

namespace ropesim::numeric::lanes {

using V = double __attribute__((vector_size(32)));
using M = std::int64_t __attribute__((vector_size(32)));  // lane masks: all ones or zero
inline constexpr std::size_t kLanes = 4;

#define ROPESIM_LANES inline __attribute__((always_inline))

template <class W = V>
ROPESIM_LANES W splat(double x) {
  return W{x, x, x, x};
}
template <class W = V>
ROPESIM_LANES W load(const double* p) {
  W v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class W>
ROPESIM_LANES void store(double* p, W v) {
  std::memcpy(p, &v, sizeof v);
}

/// The parameters of round_F in lanes; `identity` for binary64.
struct LaneRounding {
  bool identity = true;
  double min_binade = 0, max_binade = 0, magic = 0, max_finite = 0;

  /// The lane form of `r` (the rounding of `f`), or nullopt outside its domain (not
  /// fast_rounding(), or p > 51, emin < −1022, emax > 969 + p). Never throws.
  static std::optional<LaneRounding> of(const Format& f, const Binary64Rounding& r) {
    LaneRounding out;
    if (!r.fast_rounding()) return std::nullopt;
    if (r.is_binary64()) return out;
    if (f.precision > 51 || f.emin < -1022 || f.emax > 969 + f.precision) return std::nullopt;
    out.identity = false;
    out.min_binade = std::ldexp(1.0, f.emin);
    out.max_binade = std::ldexp(1.0, f.emax + 1);
    out.magic = std::ldexp(1.5, 53 - f.precision);
    out.max_finite = r.max_finite();
    return out;
  }
};

/// round_F of every lane (the header's argument). W: numeric::lanes::V.
template <class W>
ROPESIM_LANES W round(const LaneRounding& f, W x) {
  constexpr std::int64_t kSign = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kExponent = 0x7ff0000000000000;
  const M sign{kSign, kSign, kSign, kSign}, exponent{kExponent, kExponent, kExponent, kExponent};
  // m ? a : b lane by lane (m all ones or zero)
  auto select = [](M m, W a, W b) { return (W)(((M)a & m) | ((M)b & ~m)); };
  if (f.identity) return x;
  W s = (W)((M)x & exponent);  // 2^e; 0 for ±0 and subnormals; inf for inf, NaN
  s = select(s < f.min_binade, splat<W>(f.min_binade), s);
  s = select(s > f.max_binade, splat<W>(f.max_binade), s);
  const W m = s * f.magic;
  const W r = (W)((M)((x + m) - m) & ~sign);
  const W big = select(r > f.max_finite, splat<W>(std::numeric_limits<double>::infinity()), r);
  return (W)((M)big | ((M)x & sign));
}

}  // namespace ropesim::numeric::lanes
