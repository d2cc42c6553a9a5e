// The fast exact engine (NUMERIC §2): the Engine interface over the scalar path of
// numeric/fast_engine_scalar.hpp (where the argument for its exactness is), and the counters.
// The array forms round_elementwise and round_elementwise_unary are fast_engine_arrays.cpp.
#include "numeric/fast_engine.hpp"

#include <atomic>
#include <cmath>
#include <string_view>

#include "numeric/fast_engine_scalar.hpp"

namespace ropesim::numeric {

using namespace fast_detail;

namespace {

class FastEngine final : public Engine {
 public:
  std::string_view name() const override { return "fast"; }

  Value add(const Format& f, const Value& a, const Value& b, Rounding r) const override {
    const Target& t = cached_target(f);
    if (!t.fast || !small(a) || !small(b)) return reference().add(f, a, b, r);
    return narrow(add_small(t, a.narrow(), b.narrow(), r));
  }
  Value sub(const Format& f, const Value& a, const Value& b, Rounding r) const override {
    const Target& t = cached_target(f);
    if (!t.fast || !small(a) || !small(b)) return reference().sub(f, a, b, r);
    return narrow(add_small(t, a.narrow(), -b.narrow(), r));
  }
  Value mul(const Format& f, const Value& a, const Value& b, Rounding r) const override {
    const Target& t = cached_target(f);
    if (!t.fast || !small(a) || !small(b)) return reference().mul(f, a, b, r);
    const double product = a.narrow() * b.narrow();  // exact (fast_engine_scalar.hpp)
    return narrow(r == Rounding::nearest_even ? round_nearest_even(t, product)
                                              : round_exact(t, product, r));
  }
  Value div(const Format& f, const Value& a, const Value& b, Rounding r) const override {
    const Target& t = cached_target(f);
    if (!t.fast || !small(a) || !small(b)) return reference().div(f, a, b, r);
    const double x = a.narrow(), y = b.narrow();
    const double q = x / y;
    if (!std::isfinite(q) || q == 0 || !std::isfinite(x) || !std::isfinite(y)) {
      return narrow(round_exact(t, q, r));  // x/0, 0/y, x/inf, inf/y, NaN: exact
    }
    if (r == Rounding::nearest_even && in_format(t, x) && in_format(t, y))
      return narrow(round_nearest_even(t, q));
    const double residual = std::fma(-q, y, x);  // x − q·y exactly
    return narrow(round_exact(t, round_to_odd(q, sign_of(residual) * sign_of(y)), r));
  }
  Value fma(const Format& f, const Value& a, const Value& b, const Value& c,
            Rounding r) const override {
    const Target& t = cached_target(f);
    if (!t.fast || !small(a) || !small(b) || !small(c)) return reference().fma(f, a, b, c, r);
    const double x = a.narrow(), y = b.narrow(), z = c.narrow();
    const double product = x * y;  // exact when finite
    if (!std::isfinite(product) || !std::isfinite(z) || std::isnan(product)) {
      return narrow(round_exact(t, std::fma(x, y, z), r));  // inf and NaN cases: exact
    }
    return narrow(add_small(t, product, z, r));
  }
  Value sqrt(const Format& f, const Value& a, Rounding r) const override {
    const Target& t = cached_target(f);
    if (!t.fast || !small(a)) return reference().sqrt(f, a, r);
    const double x = a.narrow();
    const double s = std::sqrt(x);
    if (!std::isfinite(s) || s == 0) return narrow(round_exact(t, s, r));  // ±0, +inf, NaN
    if (r == Rounding::nearest_even && in_format(t, x)) return narrow(round_nearest_even(t, s));
    const double residual = std::fma(-s, s, x);  // x − s² exactly
    return narrow(round_exact(t, round_to_odd(s, sign_of(residual)), r));
  }

  Value exp(const Format& f, const Value& a, Rounding r) const override {
    return transcendental(Function::exp, f, a, r);
  }
  Value log(const Format& f, const Value& a, Rounding r) const override {
    return transcendental(Function::log, f, a, r);
  }
  Value cos(const Format& f, const Value& a, Rounding r) const override {
    return transcendental(Function::cos, f, a, r);
  }
  Value sin(const Format& f, const Value& a, Rounding r) const override {
    return transcendental(Function::sin, f, a, r);
  }
  std::pair<Value, Value> cos_sin(const Format& f, const Value& a, Rounding r) const override {
    const Target& t = cached_target(f);
    if (!t.fast || !small(a)) return reference().cos_sin(f, a, r);
    return {transcendental(Function::cos, f, a, r), transcendental(Function::sin, f, a, r)};
  }

  Value convert(const Format& f, const Value& a, Rounding r) const override {
    const Target& t = cached_target(f);
    if (!t.fast || a.is_wide()) return reference().convert(f, a, r);
    return narrow(round_exact(t, a.narrow(), r));  // any double is exact: one rounding
  }
  Value from_integer(const Format& f, const mpz_class& n, Rounding r) const override {
    return reference().from_integer(f, n, r);
  }
  Value from_rational(const Format& f, const mpq_class& q, Rounding r) const override {
    return reference().from_rational(f, q, r);
  }
  Value from_mpfr(const Format& f, mpfr_srcptr x, Rounding r) const override {
    return reference().from_mpfr(f, x, r);
  }
  Value round_real(const Format& f, const RealApproximation& x, Rounding r,
                   mpfr_prec_t max_precision) const override {
    return reference().round_real(f, x, r, max_precision);
  }

 private:
  static const Engine& reference() { return mpfr_engine(); }
  static bool small(const Value& v) { return !v.is_wide() && small_operand(v.narrow()); }
  static Value narrow(double d) { return Value::from_double_exact(d); }

  /// exp, log, cos, sin of a (fast_engine_scalar.hpp): exact cases, tiny-argument cases, the
  /// binary64 evaluation with its rounding test, else MPFR (counted).
  Value transcendental(Function fn, const Format& f, const Value& a, Rounding r) const {
    const Target& t = cached_target(f);
    if (!t.fast || !small(a)) return call_reference(fn, f, a, r);
    Tally tally;
    double result = 0;
    const bool decided = transcendental_small(t, fn, a.narrow(), r, result, tally);
    if (tally.evaluations != 0)
      transcendental_evaluations.fetch_add(tally.evaluations, std::memory_order_relaxed);
    if (decided) return narrow(result);
    transcendental_fallbacks.fetch_add(1, std::memory_order_relaxed);
    return call_reference(fn, f, a, r);
  }

  static Value call_reference(Function fn, const Format& f, const Value& a, Rounding r) {
    switch (fn) {
      case Function::exp:
        return reference().exp(f, a, r);
      case Function::log:
        return reference().log(f, a, r);
      case Function::cos:
        return reference().cos(f, a, r);
      case Function::sin:
        return reference().sin(f, a, r);
    }
    return reference().exp(f, a, r);
  }
};

}  // namespace

const Engine& fast_engine() {
  static const FastEngine engine;
  return engine;
}

FastEngineCounters fast_engine_counters() {
  return {transcendental_evaluations.load(std::memory_order_relaxed),
          transcendental_fallbacks.load(std::memory_order_relaxed),
          kernel_blocks.load(std::memory_order_relaxed),
          scalar_blocks.load(std::memory_order_relaxed)};
}

}  // namespace ropesim::numeric
