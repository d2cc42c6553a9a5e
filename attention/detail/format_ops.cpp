#include "attention/detail/format_ops.hpp"

#include <bit>
#include <cmath>
#include <limits>

#include "numeric/format_properties.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::attention::detail {

namespace {

using numeric::Mpfr;

}  // namespace

FormatOps::FormatOps(const Format& f, Rounding r, const numeric::Engine& engine)
    : FormatOps(numeric::FormatBinding{f, r, &engine}) {}

FormatOps::FormatOps(const numeric::FormatBinding& binding)
    : real_(binding.format, binding.rounding, binding.arithmetic_engine()),
      arithmetic_(real_.arithmetic()),
      fast_(real_.binary64()) {
  const Format& f = real_.format();
  max_finite_ = numeric::max_finite(f);
  max_finite_d_ = max_finite_.to_double();
  mpfr_init2(max_mp_, std::max<mpfr_prec_t>(f.precision + 8, 64));
  max_finite_.to_mpfr(max_mp_);
  mpfr_abs(max_mp_, max_mp_, MPFR_RNDN);
  std::uint8_t fl = 0;
  one_ = from_uint(1, fl);
  one_flags_ = fl;
  zero_ = Value();
}

FormatOps::~FormatOps() { mpfr_clear(max_mp_); }

bool FormatOps::at_max(const Value& v) const {
  if (!v.is_finite()) return false;
  if (!v.is_wide()) return std::fabs(v.narrow()) == max_finite_d_;
  return mpfr_cmpabs(v.wide(), max_mp_) == 0;
}

template <class Exact>
Value FormatOps::flag(const Value& result, const Exact& exact_flags, std::uint8_t& flags) const {
  if (result.is_nan()) {
    flags |= flag_nan;
  } else if (result.is_inf() || at_max(result)) {
    // the only results that can carry IEEE overflow; decided by numeric::Arithmetic
    if (exact_flags().test(numeric::Flag::overflow)) flags |= flag_overflow;
  }
  return result;
}

Value FormatOps::nan() const {
  return Value::from_double_exact(std::numeric_limits<double>::quiet_NaN());
}

Value FormatOps::from_uint(std::uint64_t i, std::uint8_t& flags) const {
  if (fast_.fast_rounding() && i < (std::uint64_t{1} << 53)) {
    // round-to-nearest-even with infinities: ±inf is exactly the overflow
    const double r = fast_.round(static_cast<double>(i));
    if (std::isinf(r)) flags |= flag_overflow;
    return Value::from_double_exact(r);
  }
  const mpz_class n(std::to_string(i));
  const Value v = arithmetic_.from_integer(n);
  return flag(
      v, [&] { return arithmetic_.flags_of(v, mpq_class(n)); }, flags);
}

Value FormatOps::from_rational(const mpq_class& q, std::uint8_t& flags) const {
  numeric::Flags f;
  const Value v = real_.rational(q, f);
  if (f.test(numeric::Flag::overflow)) flags |= flag_overflow;
  return v;
}

Value FormatOps::round_real(const ExactReal& x, std::uint8_t& flags) const {
  numeric::Flags f;
  const Value v = real_.real(x, f);
  if (f.test(numeric::Flag::overflow)) flags |= flag_overflow;
  return v;
}

Value FormatOps::convert(const Value& v, std::uint8_t& flags) const {
  if (fast_.fast_rounding() && !v.is_wide()) {
    const double r = fast_.round(v.narrow());
    if (std::isnan(r)) flags |= flag_nan;
    if (std::isinf(r) && std::isfinite(v.narrow())) flags |= flag_overflow;
    return Value::from_double_exact(r);
  }
  const Value res = arithmetic_.convert(v);
  return flag(
      res,
      [&] {
        numeric::Flags f;
        arithmetic_.convert(v, f);
        return f;
      },
      flags);
}

#define ROPESIM_FLAGGED_OP(NAME)                                                     \
  Value FormatOps::NAME(const Value& a, const Value& b, std::uint8_t& flags) const { \
    const Value r = arithmetic_.NAME(a, b);                                          \
    return flag(                                                                     \
        r,                                                                           \
        [&] {                                                                        \
          numeric::Flags f;                                                          \
          arithmetic_.NAME(a, b, f);                                                 \
          return f;                                                                  \
        },                                                                           \
        flags);                                                                      \
  }

ROPESIM_FLAGGED_OP(mul)
ROPESIM_FLAGGED_OP(div)
ROPESIM_FLAGGED_OP(add)
ROPESIM_FLAGGED_OP(sub)

#undef ROPESIM_FLAGGED_OP

Value FormatOps::pow(const Value& a, const Value& b, std::uint8_t& flags) const {
  numeric::Flags f;
  const Value r = arithmetic_.pow(a, b, f);
  if (r.is_nan()) flags |= flag_nan;
  if (f.test(numeric::Flag::overflow)) flags |= flag_overflow;
  return r;
}

}  // namespace ropesim::attention::detail
