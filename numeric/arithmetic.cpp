// F's arithmetic as one bound object (THEORY §1, §2.1; NUMERIC §1–2). See arithmetic.hpp.
//
// How the flags are decided (IEEE 754-2019 §7), without computing the result twice:
//  * invalid / division by zero: from the operands (0·∞, ∞ − ∞, 0/0, ∞/∞, x/0, √ and log of
//    negatives, log ±0, cos/sin ±∞); NaN operands propagate quietly.
//  * inexact: for + − × ÷ √ of values held in doubles, by error-free transformations whose
//    exactness conditions are checked (below); for exp/log/cos/sin by Lindemann–Weierstrass
//    (e^x, log x, cos x, sin x are transcendental for algebraic x ∉ {0, 1}, and every element
//    of F is rational); otherwise by an exact rational comparison (wide values, fma,
//    conversions of rationals) or, for pow and round_real, by the oracle: an approximation at
//    ≥ p + 2 bits that is exact (error 0) decides it, and a real that is not exactly a
//    (p + 2)-bit number is not an element of F.
//  * overflow and underflow: only when the result is inexact and lies at ±max finite (or is
//    ±∞) or at or below 2^emin in magnitude — rare — the exact result is compared with the
//    thresholds of "rounding with an unbounded exponent range" (flags.hpp), exactly (rationals)
//    or by Ziv's strategy (oracles, which are never exactly a threshold unless they say so).
#include "numeric/arithmetic.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>

#include "numeric/format_properties.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::numeric {

std::string to_string(Flags flags) {
  static constexpr std::pair<Flag, const char*> kNames[] = {
      {Flag::invalid, "invalid"},
      {Flag::division_by_zero, "division-by-zero"},
      {Flag::overflow, "overflow"},
      {Flag::underflow, "underflow"},
      {Flag::inexact, "inexact"}};
  std::string out;
  for (const auto& [flag, name] : kNames) {
    if (!flags.test(flag)) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

namespace {

Value from_double(double d) { return Value::from_double_exact(d); }

/// Rounding toward zero for a result of this sign (RZ; RD for positives; RU for negatives).
bool toward_zero_for(Rounding r, bool negative) {
  return r == Rounding::toward_zero || (r == Rounding::downward && !negative) ||
         (r == Rounding::upward && negative);
}
bool away_from_zero_for(Rounding r, bool negative) {
  return (r == Rounding::upward && !negative) || (r == Rounding::downward && negative);
}

mpq_class power_of_two(long e) {
  mpq_class q(1);
  if (e >= 0) {
    mpz_mul_2exp(q.get_num_mpz_t(), q.get_num_mpz_t(), static_cast<mp_bitcnt_t>(e));
  } else {
    mpz_mul_2exp(q.get_den_mpz_t(), q.get_den_mpz_t(), static_cast<mp_bitcnt_t>(-e));
  }
  return q;
}

/// The exact real result of an operation: a rational, or a real given by approximations.
/// compare_abs(t) = sign(|x| − t) for t > 0.
class ExactResult {
 public:
  explicit ExactResult(mpq_class q) : q_(std::move(q)) {}
  explicit ExactResult(const RealApproximation& oracle) : oracle_(&oracle) {}

  bool negative() const {
    if (oracle_ == nullptr) return sgn(*q_) < 0;
    return sign_of_oracle() < 0;
  }

  int compare_abs(const mpq_class& t) const {
    if (oracle_ == nullptr) {
      const int c = cmp(abs(*q_), t);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    for (mpfr_prec_t prec = 64; prec <= (1 << 16); prec *= 2) {
      Mpfr y(prec);
      const std::uint64_t error_ulps = (*oracle_)(y, prec);
      if (mpfr_nan_p(y) || mpfr_inf_p(y)) return mpfr_nan_p(y) ? 0 : 1;
      mpq_class ay;
      if (!mpfr_zero_p(y)) {
        mpfr_get_q(ay.get_mpq_t(), y);
        ay = abs(ay);
      }
      if (error_ulps == 0) {
        const int c = cmp(ay, t);
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
      }
      if (mpfr_zero_p(y)) continue;
      // |y − x| ≤ E·2^(EXP(y) − prec) (MPFR's exponent convention; engine.hpp)
      const mpq_class error = mpq_class(mpz_class(std::to_string(error_ulps))) *
                              power_of_two(static_cast<long>(mpfr_get_exp(y)) - prec);
      if (ay - error > t) return 1;
      if (ay + error < t) return -1;
    }
    throw std::runtime_error(
        "flags: the exact result could not be compared with a threshold of F below 65536 bits");
  }

  /// x == r for a finite element r of a format of `bits` significant bits at most.
  bool equals(const Value& r, mpfr_prec_t bits) const {
    if (oracle_ == nullptr) return *q_ == exact_rational(r);
    Mpfr y(bits + 2);
    if ((*oracle_)(y, bits + 2) != 0 || !mpfr_number_p(y)) return false;
    Mpfr rv(r.is_wide() ? mpfr_get_prec(r.wide()) : 53);
    r.to_mpfr(rv);
    return mpfr_equal_p(y, rv) != 0;
  }

 private:
  int sign_of_oracle() const {
    for (mpfr_prec_t prec = 64; prec <= (1 << 16); prec *= 2) {
      Mpfr y(prec);
      const std::uint64_t error_ulps = (*oracle_)(y, prec);
      if (mpfr_zero_p(y)) {
        if (error_ulps == 0) return 0;
        continue;
      }
      // a non-zero approximation with error < 2^(EXP(y) − 1) has x's sign when E < 2^(prec−1)
      if (error_ulps < (std::uint64_t{1} << std::min<mpfr_prec_t>(62, prec - 2)))
        return mpfr_sgn(y);
    }
    throw std::runtime_error("flags: the sign of the exact result could not be decided");
  }

  std::optional<mpq_class> q_;
  const RealApproximation* oracle_ = nullptr;
};

/// a + b is exactly representable as s + e (TwoSum, Knuth); nullopt when s overflows.
std::optional<bool> exact_sum(double a, double b, double r) {
  const double s = a + b;
  if (!std::isfinite(s)) return std::nullopt;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return e == 0 && s == r;
}

bool moderate(double x) {
  const double m = std::fabs(x);
  return m >= 0x1p-900 && m <= 0x1p900;
}

/// a·b == r, decided with the fma residual when every quantity is moderate: the error of
/// RN(a·b) is then a double (Boldo–Daumas: e_a + e_b ≥ emin + p − 1) and fma gives it exactly.
std::optional<bool> exact_product(double a, double b, double r) {
  if (!moderate(a) || !moderate(b)) return std::nullopt;
  const double p = a * b;
  return std::fma(a, b, -p) == 0 && p == r;
}

/// a / b == r (r finite, non-zero): r·b − a is a multiple of 2^(e_a − 105) when a, b, r are
/// moderate normal doubles, so RN(r·b − a) = 0 iff r·b = a.
std::optional<bool> exact_quotient(double a, double b, double r) {
  if (!moderate(a) || !moderate(b) || !moderate(r)) return std::nullopt;
  return std::fma(r, b, -a) == 0;
}

/// √a == r by the same argument.
std::optional<bool> exact_root(double a, double r) {
  if (!moderate(a) || !moderate(r)) return std::nullopt;
  return std::fma(r, r, -a) == 0;
}

/// floor(log2 |r|) for a finite non-zero r (IEEE exponent), nullopt for zero.
std::optional<long> binade_of(const Value& r) {
  if (r.is_zero()) return std::nullopt;
  if (!r.is_wide()) return static_cast<long>(std::ilogb(r.narrow()));
  return static_cast<long>(mpfr_get_exp(r.wide())) - 1;  // MPFR significands lie in [1/2, 1)
}

mpfr_prec_t value_bits(const Format& f) {
  return f.is_fixed_point() ? f.integer_bits + f.fraction_bits : f.precision;
}

/// The flags of delivering r (an element of F, or ±∞/NaN) for a finite exact result x.
/// `known_exact`, when set, is x == r decided by the caller. `make_x` builds x when needed.
template <class MakeExact>
Flags finish(const Format& f, Rounding mode, const Value& r, std::optional<bool> known_exact,
             const MakeExact& make_x) {
  Flags flags;
  std::optional<ExactResult> x;
  auto exact = [&]() -> const ExactResult& {
    if (!x) x.emplace(make_x());
    return *x;
  };
  if (r.is_nan()) return Flag::invalid;
  if (r.is_inf()) return Flags(Flag::overflow) | Flag::inexact;  // a finite x rounded to ∞
  const bool inexact = known_exact ? !*known_exact : !exact().equals(r, value_bits(f));
  if (!inexact) return flags;
  flags |= Flag::inexact;
  // Cheap exponent screens first (this runs for every inexact result): ±max lies in the top
  // binade [2^emax, 2^(emax+1)) of a floating format, and tininess needs |r| ≤ 2^emin.
  const std::optional<long> binade = binade_of(r);
  const bool maybe_max = f.is_fixed_point() || (binade && *binade == f.emax);
  const Value m = maybe_max ? max_finite(f) : Value();
  const bool at_max =
      maybe_max && (numeric::compare(r, m) == 0 || numeric::compare(r, negate(m)) == 0);
  if (at_max) {
    // overflow after rounding: |x| rounded with an unbounded exponent range exceeds M.
    const ExactResult& e = exact();
    const bool negative = e.negative();
    const mpq_class big_m = exact_rational(m);
    const mpq_class u =
        power_of_two(f.is_fixed_point() ? -static_cast<long>(f.fraction_bits)
                                        : static_cast<long>(f.emax) - f.precision + 1);
    bool overflow = false;
    if (e.compare_abs(big_m) <= 0) {
      overflow = false;
    } else if (e.compare_abs(big_m + u) >= 0) {
      overflow = true;
    } else if (toward_zero_for(mode, negative)) {
      overflow = false;
    } else if (away_from_zero_for(mode, negative)) {
      overflow = true;
    } else {
      const int c = e.compare_abs(big_m + u / 2);
      if (c != 0) {
        overflow = c > 0;
      } else if (mode == Rounding::nearest_away) {
        overflow = true;
      } else {
        const mpq_class steps = big_m / u;  // an integer: M's last significand digit
        overflow = mpz_odd_p(steps.get_num_mpz_t()) != 0;
      }
    }
    if (overflow) flags |= Flag::overflow;
    return flags;
  }
  if (f.is_fixed_point()) return flags;
  if (binade && *binade > f.emin) return flags;  // |r| ≥ 2^(emin+1): not tiny after rounding
  const mpq_class t = power_of_two(f.emin);
  if (cmp(abs(exact_rational(r)), t) > 0) return flags;
  // tininess after rounding: |x| rounded to p bits with an unbounded exponent range < 2^emin
  const ExactResult& e = exact();
  const bool negative = e.negative();
  bool tiny = false;
  if (e.compare_abs(t) >= 0) {
    tiny = false;
  } else if (e.compare_abs(t - power_of_two(static_cast<long>(f.emin) - f.precision)) <= 0) {
    tiny = true;  // at or below the largest p-bit number under 2^emin
  } else if (toward_zero_for(mode, negative)) {
    tiny = true;
  } else if (away_from_zero_for(mode, negative)) {
    tiny = false;
  } else {
    // nearest: the midpoint goes up to 2^emin in both modes (2^emin has an even significand)
    tiny = e.compare_abs(t - power_of_two(static_cast<long>(f.emin) - f.precision - 1)) < 0;
  }
  if (tiny) flags |= Flag::underflow;
  return flags;
}

/// Flags of an operation whose exact result is transcendental unless the operand is the
/// exact point (handled by the caller): always inexact, overflow/underflow by the oracle.
Flags finish_transcendental(const Format& f, Rounding mode, const Value& r,
                            const RealApproximation& x) {
  return finish(f, mode, r, std::optional<bool>(false), [&] { return ExactResult(x); });
}

RealApproximation unary_oracle(const Value& a, int (*fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t)) {
  return [a, fn](mpfr_ptr y, mpfr_prec_t) -> std::uint64_t {
    Mpfr x(a.is_wide() ? mpfr_get_prec(a.wide()) : 53);
    a.to_mpfr(x);
    return fn(y, x, MPFR_RNDN) == 0 ? 0 : 1;  // correctly rounded: error ≤ 1/2 ulp
  };
}

bool any_nan(const Value& a) { return a.is_nan(); }
template <class... Rest>
bool any_nan(const Value& a, const Rest&... rest) {
  return a.is_nan() || any_nan(rest...);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Without flags
// ---------------------------------------------------------------------------------------------

Arithmetic::Arithmetic(const Format& format, Rounding rounding, const Engine& engine)
    : format_(format), rounding_(rounding), engine_(&engine), binary64_(format, rounding) {
  // NUMERIC §2: + − × ÷ √ through binary64 are innocuous where Binary64Rounding says so
  // (binary64 itself, or p ≤ 25 inside binary64's normal range). Checked bit for bit against
  // MPFR in the tests.
  fast_ = binary64_.fast_arithmetic();
  native_ = binary64_.is_binary64();
}

Value Arithmetic::add(const Value& a, const Value& b) const {
  if (fast_ && !a.is_wide() && !b.is_wide())
    return from_double(binary64_.add(a.narrow(), b.narrow()));
  return engine_->add(format_, a, b, rounding_);
}

Value Arithmetic::sub(const Value& a, const Value& b) const {
  if (fast_ && !a.is_wide() && !b.is_wide())
    return from_double(binary64_.sub(a.narrow(), b.narrow()));
  return engine_->sub(format_, a, b, rounding_);
}

Value Arithmetic::mul(const Value& a, const Value& b) const {
  if (fast_ && !a.is_wide() && !b.is_wide())
    return from_double(binary64_.mul(a.narrow(), b.narrow()));
  return engine_->mul(format_, a, b, rounding_);
}

Value Arithmetic::div(const Value& a, const Value& b) const {
  if (fast_ && !a.is_wide() && !b.is_wide())
    return from_double(binary64_.div(a.narrow(), b.narrow()));
  return engine_->div(format_, a, b, rounding_);
}

Value Arithmetic::fma(const Value& a, const Value& b, const Value& c) const {
  return engine_->fma(format_, a, b, c, rounding_);
}

Value Arithmetic::sqrt(const Value& a) const {
  if (fast_ && !a.is_wide()) return from_double(binary64_.sqrt(a.narrow()));
  return engine_->sqrt(format_, a, rounding_);
}

Value Arithmetic::exp(const Value& a) const { return engine_->exp(format_, a, rounding_); }
Value Arithmetic::log(const Value& a) const { return engine_->log(format_, a, rounding_); }
Value Arithmetic::cos(const Value& a) const { return engine_->cos(format_, a, rounding_); }
Value Arithmetic::sin(const Value& a) const { return engine_->sin(format_, a, rounding_); }
std::pair<Value, Value> Arithmetic::cos_sin(const Value& a) const {
  return engine_->cos_sin(format_, a, rounding_);
}

Value Arithmetic::pow(const Value& a, const Value& b) const {
  Flags ignored;
  return pow(a, b, ignored);
}

Value Arithmetic::negate(const Value& a) const { return numeric::negate(a); }

Value Arithmetic::max(const Value& a, const Value& b) const {
  if (a.is_nan()) return a;
  if (b.is_nan()) return b;
  const int c = numeric::compare(a, b);
  if (c == 0) return a.sign_bit() ? b : a;  // max(-0, +0) = +0
  return c > 0 ? a : b;
}

Value Arithmetic::relu(const Value& a) const {
  if (a.is_nan()) return a;
  return numeric::compare(a, zero()) > 0 ? a : zero();
}

Value Arithmetic::convert(const Value& a) const {
  if (fast_ && !a.is_wide()) return from_double(binary64_.round(a.narrow()));
  return engine_->convert(format_, a, rounding_);
}

Value Arithmetic::from_rational(const mpq_class& q) const {
  if (fast_ && !native_) {
    // Exact when q is a double; otherwise the engine (one rounding).
    const double d = q.get_d();
    if (std::isfinite(d) && mpq_class(d) == q) return from_double(binary64_.round(d));
  }
  return engine_->from_rational(format_, q, rounding_);
}

Value Arithmetic::from_integer(const mpz_class& n) const {
  if (fast_ && mpz_sizeinbase(n.get_mpz_t(), 2) <= 53) {
    return from_double(binary64_.round(n.get_d()));  // exact conversion, one rounding
  }
  return engine_->from_integer(format_, n, rounding_);
}

Value Arithmetic::from_mpfr(mpfr_srcptr x) const {
  return engine_->from_mpfr(format_, x, rounding_);
}

Value Arithmetic::round_real(const RealApproximation& x, mpfr_prec_t max_precision) const {
  return engine_->round_real(format_, x, rounding_, max_precision);
}

Value Arithmetic::zero() const { return Value(); }

Value Arithmetic::one() const { return convert(from_double(1.0)); }

// ---------------------------------------------------------------------------------------------
// With flags
// ---------------------------------------------------------------------------------------------

Value Arithmetic::add(const Value& a, const Value& b, Flags& flags) const {
  const Value r = add(a, b);
  if (any_nan(a, b)) return r;
  if (!a.is_finite() || !b.is_finite()) {
    if (r.is_nan()) flags |= Flag::invalid;  // ∞ − ∞
    return r;
  }
  std::optional<bool> known;
  if (!a.is_wide() && !b.is_wide() && !r.is_wide() && r.is_finite())
    known = exact_sum(a.narrow(), b.narrow(), r.narrow());
  flags |= finish(format_, rounding_, r, known,
                  [&] { return ExactResult(exact_rational(a) + exact_rational(b)); });
  return r;
}

Value Arithmetic::sub(const Value& a, const Value& b, Flags& flags) const {
  const Value r = sub(a, b);
  if (any_nan(a, b)) return r;
  if (!a.is_finite() || !b.is_finite()) {
    if (r.is_nan()) flags |= Flag::invalid;
    return r;
  }
  std::optional<bool> known;
  if (!a.is_wide() && !b.is_wide() && !r.is_wide() && r.is_finite())
    known = exact_sum(a.narrow(), -b.narrow(), r.narrow());
  flags |= finish(format_, rounding_, r, known,
                  [&] { return ExactResult(exact_rational(a) - exact_rational(b)); });
  return r;
}

Value Arithmetic::mul(const Value& a, const Value& b, Flags& flags) const {
  const Value r = mul(a, b);
  if (any_nan(a, b)) return r;
  if (!a.is_finite() || !b.is_finite()) {
    if (r.is_nan()) flags |= Flag::invalid;  // 0·∞
    return r;
  }
  std::optional<bool> known;
  if (a.is_zero() || b.is_zero()) {
    known = true;
  } else if (!a.is_wide() && !b.is_wide() && !r.is_wide() && r.is_finite()) {
    known = exact_product(a.narrow(), b.narrow(), r.narrow());
  }
  flags |= finish(format_, rounding_, r, known,
                  [&] { return ExactResult(exact_rational(a) * exact_rational(b)); });
  return r;
}

Value Arithmetic::div(const Value& a, const Value& b, Flags& flags) const {
  const Value r = div(a, b);
  if (any_nan(a, b)) return r;
  if (r.is_nan()) {
    flags |= Flag::invalid;  // 0/0, ∞/∞
    return r;
  }
  if (!a.is_finite() || !b.is_finite()) return r;  // ∞/x, x/∞: exact
  if (b.is_zero()) {
    if (!a.is_zero()) flags |= Flag::division_by_zero;
    return r;
  }
  std::optional<bool> known;
  if (a.is_zero()) {
    known = true;
  } else if (r.is_zero()) {
    known = false;
  } else if (!a.is_wide() && !b.is_wide() && !r.is_wide() && r.is_finite()) {
    known = exact_quotient(a.narrow(), b.narrow(), r.narrow());
  }
  flags |= finish(format_, rounding_, r, known,
                  [&] { return ExactResult(exact_rational(a) / exact_rational(b)); });
  return r;
}

Value Arithmetic::fma(const Value& a, const Value& b, const Value& c, Flags& flags) const {
  const Value r = fma(a, b, c);
  if (any_nan(a, b, c)) return r;
  if (!a.is_finite() || !b.is_finite() || !c.is_finite()) {
    if (r.is_nan()) flags |= Flag::invalid;
    return r;
  }
  flags |= finish(format_, rounding_, r, std::nullopt, [&] {
    return ExactResult(exact_rational(a) * exact_rational(b) + exact_rational(c));
  });
  return r;
}

Value Arithmetic::sqrt(const Value& a, Flags& flags) const {
  const Value r = sqrt(a);
  if (a.is_nan()) return r;
  if (r.is_nan()) {
    flags |= Flag::invalid;  // √ of a negative
    return r;
  }
  if (!a.is_finite() || a.is_zero()) return r;
  std::optional<bool> known;
  if (!a.is_wide() && !r.is_wide() && r.is_finite()) known = exact_root(a.narrow(), r.narrow());
  if (!known && r.is_finite()) {
    const mpq_class rr = exact_rational(r);
    known = rr * rr == exact_rational(a);
  }
  const RealApproximation root = unary_oracle(a, mpfr_sqrt);
  flags |= finish(format_, rounding_, r, known, [&] { return ExactResult(root); });
  return r;
}

Value Arithmetic::exp(const Value& a, Flags& flags) const {
  const Value r = exp(a);
  if (a.is_nan() || !a.is_finite() || a.is_zero()) return r;  // exp(±∞), exp(0) = 1 exact
  flags |= finish_transcendental(format_, rounding_, r, unary_oracle(a, mpfr_exp));
  return r;
}

Value Arithmetic::log(const Value& a, Flags& flags) const {
  const Value r = log(a);
  if (a.is_nan()) return r;
  if (a.is_zero()) {
    flags |= Flag::division_by_zero;  // log ±0 = −∞
    return r;
  }
  if (a.sign_bit()) {
    flags |= Flag::invalid;  // log of a negative (−∞ included)
    return r;
  }
  if (a.is_inf() || numeric::compare(a, from_double(1.0)) == 0) return r;  // log ∞, log 1 = 0
  flags |= finish_transcendental(format_, rounding_, r, unary_oracle(a, mpfr_log));
  return r;
}

Value Arithmetic::cos(const Value& a, Flags& flags) const {
  const Value r = cos(a);
  if (a.is_nan()) return r;
  if (a.is_inf()) {
    flags |= Flag::invalid;
    return r;
  }
  if (a.is_zero()) return r;  // cos 0 = 1 exact
  flags |= finish_transcendental(format_, rounding_, r, unary_oracle(a, mpfr_cos));
  return r;
}

Value Arithmetic::sin(const Value& a, Flags& flags) const {
  const Value r = sin(a);
  if (a.is_nan()) return r;
  if (a.is_inf()) {
    flags |= Flag::invalid;
    return r;
  }
  if (a.is_zero()) return r;  // sin ±0 = ±0 exact
  flags |= finish_transcendental(format_, rounding_, r, unary_oracle(a, mpfr_sin));
  return r;
}

std::pair<Value, Value> Arithmetic::cos_sin(const Value& a, Flags& flags) const {
  auto r = cos_sin(a);
  if (a.is_nan()) return r;
  if (a.is_inf()) {
    flags |= Flag::invalid;
    return r;
  }
  if (a.is_zero()) return r;
  flags |= finish_transcendental(format_, rounding_, r.first, unary_oracle(a, mpfr_cos));
  flags |= finish_transcendental(format_, rounding_, r.second, unary_oracle(a, mpfr_sin));
  return r;
}

Value Arithmetic::pow(const Value& a, const Value& b, Flags& flags) const {
  const mpfr_prec_t pa = a.is_wide() ? mpfr_get_prec(a.wide()) : 53;
  const mpfr_prec_t pb = b.is_wide() ? mpfr_get_prec(b.wide()) : 53;
  const RealApproximation oracle = [a, b, pa, pb](mpfr_ptr y, mpfr_prec_t) -> std::uint64_t {
    Mpfr x(pa), e(pb);
    a.to_mpfr(x);
    b.to_mpfr(e);
    return mpfr_pow(y, x, e, MPFR_RNDN) == 0 ? 0 : 1;  // correctly rounded: error ≤ 1/2 ulp
  };
  if (!a.is_finite() || !b.is_finite() || a.is_zero() || a.sign_bit()) {
    // Not used by the realisations (bases > 0 finite): IEEE pow via MPFR at 2p + 8 bits.
    Mpfr y(2 * value_bits(format_) + 8);
    oracle(y, 0);
    const Value r = engine_->from_mpfr(format_, y, rounding_);
    if (r.is_nan() && !any_nan(a, b)) flags |= Flag::invalid;
    return r;
  }
  const Value r = engine_->round_real(format_, oracle, rounding_);
  flags |= finish(format_, rounding_, r, std::nullopt, [&] { return ExactResult(oracle); });
  return r;
}

Value Arithmetic::convert(const Value& a, Flags& flags) const {
  const Value r = convert(a);
  if (!a.is_finite()) return r;
  std::optional<bool> known;
  if (!a.is_wide() && !r.is_wide() && r.is_finite()) known = a.narrow() == r.narrow();
  flags |= finish(format_, rounding_, r, known, [&] { return ExactResult(exact_rational(a)); });
  return r;
}

Value Arithmetic::from_rational(const mpq_class& q, Flags& flags) const {
  const Value r = from_rational(q);
  flags |= flags_of(r, q);
  return r;
}

Value Arithmetic::from_integer(const mpz_class& n, Flags& flags) const {
  const Value r = from_integer(n);
  flags |= flags_of(r, mpq_class(n));
  return r;
}

Value Arithmetic::from_mpfr(mpfr_srcptr x, Flags& flags) const {
  const Value r = from_mpfr(x);
  if (!mpfr_number_p(x)) return r;
  mpq_class q;
  mpfr_get_q(q.get_mpq_t(), x);
  flags |= flags_of(r, q);
  return r;
}

Value Arithmetic::round_real(const RealApproximation& x, Flags& flags,
                             mpfr_prec_t max_precision) const {
  const Value r = round_real(x, max_precision);
  flags |= flags_of(r, x);
  return r;
}

Flags Arithmetic::flags_of(const Value& result, const RealApproximation& x) const {
  return finish(format_, rounding_, result, std::nullopt, [&] { return ExactResult(x); });
}

Flags Arithmetic::flags_of(const Value& result, const mpq_class& x) const {
  std::optional<bool> known;
  if (result.is_finite()) known = exact_rational(result) == x;
  return finish(format_, rounding_, result, known, [&] { return ExactResult(x); });
}

}  // namespace ropesim::numeric
