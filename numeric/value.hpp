#pragma once
/// A value of a format F (THEORY §1), stored cheaply.
#include <gmpxx.h>
#include <mpfr.h>

#include <cstdint>
#include <memory>
#include <string>

namespace ropesim::numeric {

namespace detail {
/// MPFR storage for values of formats that do not fit in a double.
struct WideStorage {
  mpfr_t x;
  explicit WideStorage(mpfr_srcptr value);
  ~WideStorage();
  WideStorage(const WideStorage&) = delete;
  WideStorage& operator=(const WideStorage&) = delete;
};
}  // namespace detail

/// An element of some format F (or NaN). Values of formats with `fits_double()` are held
/// exactly in a double; wider formats hold an immutable, shared MPFR number. A Value does
/// not know its format: operations take the Format explicitly (NUMERIC §1, STYLE).
class Value {
 public:
  /// +0.
  Value() = default;
  /// A value held in a double, taken exactly (the caller asserts it lies in the format).
  static Value from_double_exact(double d);
  /// A value held in MPFR storage (copied exactly, at the precision of `x`).
  static Value from_mpfr_exact(mpfr_srcptr x);

  bool is_wide() const { return wide_ != nullptr; }
  /// The double; valid only when !is_wide().
  double narrow() const { return narrow_; }
  /// The MPFR storage; valid only when is_wide().
  mpfr_srcptr wide() const { return wide_->x; }

  bool is_nan() const;
  bool is_inf() const;
  bool is_zero() const;
  bool is_finite() const;
  bool sign_bit() const;
  /// Nearest double (exact when !is_wide()).
  double to_double() const;
  /// Sets `out` (of any precision) to this value, rounding to nearest if `out` is narrower.
  void to_mpfr(mpfr_ptr out) const;
  /// Exact decimal-free text: the double's `%a` hex form, or MPFR's hex form for wide values.
  std::string to_hex() const;
  /// Shortest decimal that reads back to the same double (for tables; exact for narrow values
  /// up to printing 17 significant digits). Wide values: `significant_digits` digits, rounded
  /// to nearest when that reads back to the value, else truncated toward zero (never beyond
  /// the value: the largest finite value of a wide format is not printed as a power of 10
  /// or 2 that overflows it).
  std::string to_decimal(int significant_digits = 17) const;

  /// Same element of F, compared by bit pattern: NaN equals NaN, +0 differs from -0.
  /// Realised rotations are compared this way (THEORY §3, R2).
  bool same_bits(const Value& other) const;
  /// A 64-bit key with key(a) == key(b) iff a.same_bits(b), for narrow values; wide values
  /// hash their bits (equality must then be confirmed with same_bits).
  std::uint64_t bits_key() const;

 private:
  double narrow_ = 0.0;
  std::shared_ptr<const detail::WideStorage> wide_;
};

/// -v, exactly: flips the sign bit (also of zeros, infinities and NaN) and keeps the storage
/// (narrow stays narrow; wide keeps its precision). IEEE 754 negate; no rounding, throws
/// nothing.
Value negate(const Value& v);

/// The exact rational value of a finite Value (every element of a binary format is a dyadic
/// rational). Throws InvalidArgument for ±inf or NaN.
mpq_class exact_rational(const Value& v);

/// Real-number comparison (IEEE): NaN is unordered, -0 == +0.
/// Returns -1, 0, +1, or 2 when unordered.
int compare(const Value& a, const Value& b);

}  // namespace ropesim::numeric
