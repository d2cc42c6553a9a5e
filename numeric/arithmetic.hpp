#pragma once
/// F's arithmetic as one bound object: a format F, a rounding direction and an engine
/// (THEORY §1, §2.1; NUMERIC §1–2). Every operation returns the element of F the exact result
/// rounds to; the overloads that take a `Flags&` also raise the IEEE 754 exception flags
/// (numeric/flags.hpp) the operation signals.
///
/// This is the one home of "round into F, with a fast path" (STYLE: fplll's FP_NR owns its
/// backends the same way): attention's heads, the realisations and the proofs call it instead
/// of deciding fast paths of their own.
#include <gmpxx.h>
#include <mpfr.h>

#include <utility>

#include "numeric/binary64_rounding.hpp"
#include "numeric/engine.hpp"
#include "numeric/flags.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"

namespace ropesim::numeric {

/// The correctly rounded operations of one format F under one rounding direction, computed
/// by one engine (THEORY §1): each result is the element of F the exact real result rounds
/// to, with IEEE special values (signed zeros, ±∞ or saturation, NaN).
///
/// Fast path (bit-identical, cross-checked against numeric::mpfr_engine() in the tests): where
/// Binary64Rounding::fast_arithmetic() holds (round-to-nearest-even; floating formats that fit
/// a double, keep subnormals, overflow to ±∞, have NaN and no reserved codes; p ≤ 25 with
/// −400 ≤ emin, emax ≤ 400, or binary64 itself), + − × ÷ √ are computed in binary64 and rounded
/// once into F — exact by innocuous double rounding (NUMERIC §2; Figueroa 1995, Roux 2014).
/// Everything else goes to the engine.
///
/// Flags (IEEE 754-2019 §7; see numeric/flags.hpp for each flag's definition): overflow is
/// "overflow after rounding" in every format, saturating ones included (fp16 under
/// round-to-nearest-even overflows from 65520 = max + ulp/2, not from 65505; fp8e4m3 at 449
/// does not overflow: 449 rounds to 448); underflow is detected after rounding. How they are
/// decided without recomputing the result: exactness of + − × ÷ √ of values held in doubles
/// by error-free transformations (TwoSum; the fma residual a·b − RN(a·b), r·b − a, r·r − a),
/// exp/log/cos/sin are inexact except at their exact points (Lindemann–Weierstrass: e^x, log x,
/// cos x, sin x are transcendental for algebraic x other than 0, 1), and only the rare results
/// at ±max finite or below 2^emin are compared exactly with the overflow and tininess
/// thresholds. Wide values (formats beyond a double) use exact rationals.
///
/// Inputs of the arithmetic operations must be elements of F (or ±∞/NaN); use convert() for
/// values of another format. Thread-safe (const; the engine is thread-safe).
class Arithmetic {
 public:
  /// Binds F, the rounding direction and the engine (which must outlive this object).
  Arithmetic(const Format& format, Rounding rounding, const Engine& engine = default_engine());

  const Format& format() const { return format_; }
  Rounding rounding() const { return rounding_; }
  const Engine& engine() const { return *engine_; }
  /// True when + − × ÷ √ and conversions of doubles use the binary64 fast path.
  bool fast() const { return fast_; }

  Value add(const Value& a, const Value& b) const;
  Value sub(const Value& a, const Value& b) const;
  Value mul(const Value& a, const Value& b) const;
  Value div(const Value& a, const Value& b) const;
  /// a·b + c with one rounding.
  Value fma(const Value& a, const Value& b, const Value& c) const;
  Value sqrt(const Value& a) const;
  /// e^a (exp(-∞) = +0, exp(+∞) = +∞, exp(NaN) = NaN).
  Value exp(const Value& a) const;
  /// Natural logarithm (log ±0 = −∞, log of a negative = NaN).
  Value log(const Value& a) const;
  /// cos a, sin a, a in radians; and both with one argument reduction.
  Value cos(const Value& a) const;
  Value sin(const Value& a) const;
  std::pair<Value, Value> cos_sin(const Value& a) const;
  /// a^b for a > 0 finite and b finite, correctly rounded; other operands follow MPFR's pow
  /// (IEEE 754-2019 pow) evaluated at 2p + 8 bits and rounded into F.
  Value pow(const Value& a, const Value& b) const;
  /// -a (exact: flips the sign, also of zeros and infinities).
  Value negate(const Value& a) const;
  /// max(a, b) with NaN propagating (IEEE 754-2019 maximum); max(-0, +0) = +0.
  Value max(const Value& a, const Value& b) const;
  /// ReLU(a) = max(a, +0); NaN stays NaN.
  Value relu(const Value& a) const;
  /// A value of any format (or any exact double / MPFR value) rounded into F.
  Value convert(const Value& a) const;
  /// The rational q, the integer n, the MPFR number x (any precision) rounded once into F.
  Value from_rational(const mpq_class& q) const;
  Value from_integer(const mpz_class& n) const;
  Value from_mpfr(mpfr_srcptr x) const;
  /// The real given by `x` rounded into F (Ziv's strategy; see numeric::RealApproximation).
  /// Throws std::runtime_error if undecided below `max_precision` bits.
  Value round_real(const RealApproximation& x, mpfr_prec_t max_precision = 1 << 16) const;
  /// The exact element 0 (+0) and 1 (1 rounded into F: 1 itself in every floating format).
  Value zero() const;
  Value one() const;

  /// The same operations, raising into `flags` the IEEE exceptions they signal. NaN operands
  /// give NaN quietly (no flag); the result is the same Value as without flags.
  Value add(const Value& a, const Value& b, Flags& flags) const;
  Value sub(const Value& a, const Value& b, Flags& flags) const;
  Value mul(const Value& a, const Value& b, Flags& flags) const;
  Value div(const Value& a, const Value& b, Flags& flags) const;
  Value fma(const Value& a, const Value& b, const Value& c, Flags& flags) const;
  Value sqrt(const Value& a, Flags& flags) const;
  Value exp(const Value& a, Flags& flags) const;
  Value log(const Value& a, Flags& flags) const;
  Value cos(const Value& a, Flags& flags) const;
  Value sin(const Value& a, Flags& flags) const;
  std::pair<Value, Value> cos_sin(const Value& a, Flags& flags) const;
  Value pow(const Value& a, const Value& b, Flags& flags) const;
  Value convert(const Value& a, Flags& flags) const;
  Value from_rational(const mpq_class& q, Flags& flags) const;
  Value from_integer(const mpz_class& n, Flags& flags) const;
  Value from_mpfr(mpfr_srcptr x, Flags& flags) const;
  Value round_real(const RealApproximation& x, Flags& flags,
                   mpfr_prec_t max_precision = 1 << 16) const;

  /// The flags of delivering `result` for the exact real `x` (given by approximations):
  /// inexact unless x == result, and overflow/underflow by the thresholds of F (flags.hpp).
  /// For callers that round an exact real into F by other means (interval decisions, tables).
  Flags flags_of(const Value& result, const RealApproximation& x) const;
  /// The same for an exact rational x.
  Flags flags_of(const Value& result, const mpq_class& x) const;

 private:
  Format format_;
  Rounding rounding_;
  const Engine* engine_;
  Binary64Rounding binary64_;  // the fast path's rounding into F (NUMERIC §2)
  bool fast_ = false;          // binary64_.fast_arithmetic()
  bool native_ = false;        // binary64 itself
};

}  // namespace ropesim::numeric
