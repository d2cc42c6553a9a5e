// FoPE's random coefficients (THEORY §3, FoPE): SplitMix64 and the Box-Muller transform, exact.
#include <mpfr.h>

#include <cstdint>

#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::attention {

namespace {

/// SplitMix64 output n (0-based) of the generator seeded with `seed` (Steele, Lea, Flood,
/// "Fast splittable pseudorandom number generators", OOPSLA 2014; Vigna's reference code).
std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t n) {
  std::uint64_t z = seed + (n + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// Box–Muller z = sqrt(-2 ln u1)·cos(2π u2), each operation rounded to nearest binary64 by
/// MPFR (correctly rounded: the same bits everywhere), returned exactly.
mpq_class box_muller(std::uint64_t x1, std::uint64_t x2) {
  mpfr_t u1, u2, a, b;
  mpfr_inits2(53, u1, u2, a, b, static_cast<mpfr_ptr>(nullptr));
  // u1 in (0, 1], u2 in [0, 1): 53-bit integers over 2^53, exact in binary64
  static_assert(sizeof(unsigned long) == 8, "53-bit integers are set through unsigned long");
  mpfr_set_ui(u1, static_cast<unsigned long>((x1 >> 11) + 1), MPFR_RNDN);  // ≤ 2^53: exact
  mpfr_div_2ui(u1, u1, 53, MPFR_RNDN);
  mpfr_set_ui(u2, static_cast<unsigned long>(x2 >> 11), MPFR_RNDN);
  mpfr_div_2ui(u2, u2, 53, MPFR_RNDN);
  mpfr_log(a, u1, MPFR_RNDN);        // ln u1 ≤ 0
  mpfr_mul_si(a, a, -2, MPFR_RNDN);  // exact (a power of two)
  mpfr_sqrt(a, a, MPFR_RNDN);
  mpfr_const_pi(b, MPFR_RNDN);
  mpfr_mul_2ui(b, b, 1, MPFR_RNDN);  // 2π rounded, doubling exact
  mpfr_mul(b, b, u2, MPFR_RNDN);
  mpfr_cos(b, b, MPFR_RNDN);
  mpfr_mul(a, a, b, MPFR_RNDN);
  mpq_class z;
  mpfr_get_q(z.get_mpq_t(), a);
  mpfr_clears(u1, u2, a, b, static_cast<mpfr_ptr>(nullptr));
  return z;
}

}  // namespace

mpq_class fope_coefficient(const Schedule& s, std::size_t component, std::size_t dimension) {
  if (s.kind != "fope" || !s.fope_sigma || !s.fope_seed) {
    throw InvalidArgument("fope_coefficient needs a fope schedule, got '" + s.spec + "'");
  }
  const std::size_t n = s.blocks.size();
  if (component >= n || dimension >= n) {
    throw InvalidArgument("fope_coefficient: component " + std::to_string(component) +
                          " and dimension " + std::to_string(dimension) + " must be < " +
                          std::to_string(n));
  }
  const std::uint64_t j = static_cast<std::uint64_t>(component) * n + dimension;
  const mpq_class z =
      box_muller(splitmix64(*s.fope_seed, 2 * j), splitmix64(*s.fope_seed, 2 * j + 1));
  mpq_class a = *s.fope_sigma * z;
  if (component == dimension) a += 1;
  return a;
}

}  // namespace ropesim::attention
