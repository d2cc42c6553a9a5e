// The binary64 fast path of NUMERIC §2; the argument is in binary64_rounding.hpp.
#include "numeric/binary64_rounding.hpp"

namespace ropesim::numeric {

Binary64Rounding::Binary64Rounding(const Format& format, Rounding rounding) {
  fast_rounding_ = rounding == Rounding::nearest_even && !format.is_fixed_point() &&
                   format.fits_double() && format.subnormals && format.has_infinity &&
                   format.has_nan && format.reserved_top_codes == 0;
  if (!fast_rounding_) return;
  precision_ = format.precision;
  emin_ = format.emin;
  emax_ = format.emax;
  binary64_ = precision_ == 53 && emin_ == -1022 && emax_ == 1023;
  // Products, quotients, sums and roots of elements stay in binary64's normal range (see the
  // class comment), and p ≤ 25 gives 53 ≥ 2p + 2.
  fast_arithmetic_ = binary64_ || (precision_ <= 25 && emin_ >= -400 && emax_ <= 400);
  max_finite_ = std::ldexp(2.0 - std::ldexp(1.0, 1 - precision_), emax_);
  add_magic_ = precision_ <= 51 && emax_ <= 969 + precision_;
}

}  // namespace ropesim::numeric
