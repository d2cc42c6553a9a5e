#pragma once
/// Internal: the realisations' view of numeric::Arithmetic — correctly rounded operations
/// into one format with the two flags a realised rotation records (overflow, NaN). Exact reals
/// (rationals, ExactReal, cos/sin of exact angles) are rounded by numeric::RealRounding
/// (numeric/real_rounding.hpp), which real() exposes to the cos/sin rounder.
///
/// The arithmetic and its fast paths are numeric::Arithmetic's; overflow is IEEE's "overflow
/// after rounding" (numeric/flags.hpp), decided by Arithmetic only for the rare results at
/// ±max finite or ±inf. Tests cross-check the paths bit for bit.
#include <gmpxx.h>
#include <mpfr.h>

#include <cstdint>
#include <optional>

#include "attention/realisations/realisation.hpp"
#include "numeric/arithmetic.hpp"
#include "numeric/binary64_rounding.hpp"
#include "numeric/engine.hpp"
#include "numeric/exact_real.hpp"
#include "numeric/format.hpp"
#include "numeric/format_binding.hpp"
#include "numeric/real_rounding.hpp"
#include "numeric/value.hpp"

namespace ropesim::attention::detail {

using numeric::ExactReal;
using numeric::Format;
using numeric::Rounding;
using numeric::Value;

/// Holds one numeric::RealRounding bound to (F, rounding, engine) and works through its
/// Arithmetic and Binary64Rounding: one arithmetic object per format, not one per use.
class FormatOps {
 public:
  /// F, the rounding direction and the engine of `binding` (the engine must outlive this).
  explicit FormatOps(const numeric::FormatBinding& binding);
  /// FormatOps({f, r, &engine}).
  FormatOps(const Format& f, Rounding r, const numeric::Engine& engine);

  const Format& format() const { return real_.format(); }
  Rounding rounding() const { return real_.rounding(); }
  /// True when conversions of doubles use the fast rounding (Binary64Rounding::fast_rounding).
  bool fast_round() const { return fast_.fast_rounding(); }
  /// True when + − × ÷ of two elements go through binary64 exactly (p ≤ 25) or natively (fp64)
  /// (Binary64Rounding::fast_arithmetic).
  bool fast_arith() const { return fast_.fast_arithmetic(); }
  /// The format is binary64 itself (under round-to-nearest-even).
  bool is_binary64() const { return fast_.is_binary64(); }
  int precision() const { return format().precision; }

  /// round_F(x) of an exact double x (fast_round() only).
  double round_double(double x) const { return fast_.round(x); }

  Value from_uint(std::uint64_t i, std::uint8_t& flags) const;
  Value from_rational(const mpq_class& q, std::uint8_t& flags) const;
  Value round_real(const ExactReal& x, std::uint8_t& flags) const;
  /// Rounds a value of any format (narrow or wide) into this format.
  Value convert(const Value& v, std::uint8_t& flags) const;
  Value mul(const Value& a, const Value& b, std::uint8_t& flags) const;
  Value div(const Value& a, const Value& b, std::uint8_t& flags) const;
  Value add(const Value& a, const Value& b, std::uint8_t& flags) const;
  Value sub(const Value& a, const Value& b, std::uint8_t& flags) const;
  /// a^b correctly rounded (pow), a > 0.
  Value pow(const Value& a, const Value& b, std::uint8_t& flags) const;

  /// The rounding of exact reals into this format (numeric/real_rounding.hpp).
  const numeric::RealRounding& real() const { return real_; }

  /// A NaN of this format (NaNs compare equal by bits).
  Value nan() const;
  /// The exact element 1 and +0 rounded into the format (with their flags).
  const Value& one() const { return one_; }
  std::uint8_t one_flags() const { return one_flags_; }
  const Value& zero() const { return zero_; }

  const numeric::Engine& engine() const { return real_.engine(); }
  /// F's arithmetic: the one inside real() (numeric::RealRounding::arithmetic).
  const numeric::Arithmetic& arithmetic() const { return real_.arithmetic(); }

 private:
  bool at_max(const Value& v) const;  // |v| == max finite
  /// NaN → flag_nan; ±inf or ±max → flag_overflow when the exact result x overflows after rounding.
  template <class Exact>
  Value flag(const Value& result, const Exact& x, std::uint8_t& flags) const;

  numeric::RealRounding real_;
  // real_'s Arithmetic and binary64 fast rounding (references into real_, declared after it)
  const numeric::Arithmetic& arithmetic_;
  const numeric::Binary64Rounding& fast_;
  double max_finite_d_ = 0;
  Value max_finite_;
  mpfr_t max_mp_;  // |max finite| exactly
  Value one_, zero_;
  std::uint8_t one_flags_ = 0;

 public:
  ~FormatOps();
  FormatOps(const FormatOps&) = delete;
  FormatOps& operator=(const FormatOps&) = delete;
};

}  // namespace ropesim::attention::detail
