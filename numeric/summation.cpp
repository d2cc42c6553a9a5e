// 32-byte vectors passed between inline functions (Binary64Dot::dots): GCC notes that their ABI
// differs with and without AVX (-Wpsabi); they never cross a translation unit.
#pragma GCC diagnostic ignored "-Wpsabi"
// Sums and dot products under a summation policy (THEORY §2.1). See summation.hpp.
#include "numeric/summation.hpp"

#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <cmath>
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/suggest.hpp"
#include "numeric/lane_rounding.hpp"

namespace ropesim::numeric {

namespace {
Value from_double(double d) { return Value::from_double_exact(d); }
}  // namespace

namespace {

constexpr Spelling<Summation> summation_names[] = {
    {Summation::sequential, "sequential"},
    {Summation::pairwise, "pairwise"},
    {Summation::wide_accumulator, "wide-accumulator"},
    {Summation::exact, "exact"}};
constexpr Spelling<Summation> summation_aliases[] = {
    {Summation::wide_accumulator, "wide_accumulator"}, {Summation::wide_accumulator, "wide"}};
constexpr EnumNames<Summation> summation_table{.what = "summation",
                                               .names = summation_names,
                                               .aliases = summation_aliases,
                                               .accepted = {},
                                               .suggest = true,
                                               .suggestions = {}};

}  // namespace

std::string_view to_string(Summation summation) { return name_of(summation_table, summation); }

Summation parse_summation(std::string_view text) { return parse_name(summation_table, text); }

const Format& EvaluationPolicy::running_format() const {
  return summation == Summation::wide_accumulator ? accumulator : format;
}

Arithmetic arithmetic(const EvaluationPolicy& policy) { return policy.arithmetic(); }

// ---------------------------------------------------------------------------------------------
// Sums and dot products (THEORY §2.1)
// ---------------------------------------------------------------------------------------------

namespace {

Value special(const Arithmetic& f, double d) { return f.convert(from_double(d)); }

Value sequential_sum(std::span<const Value> t, const Arithmetic& f) {
  if (t.empty()) return f.zero();
  Value acc = t[0];
  for (std::size_t k = 1; k < t.size(); ++k) acc = f.add(acc, t[k]);
  return acc;
}

Value pairwise_sum(std::span<const Value> t, const Arithmetic& f) {
  if (t.empty()) return f.zero();
  if (t.size() == 1) return t[0];
  const std::size_t m = t.size() / 2;
  return f.add(pairwise_sum(t.subspan(0, m), f), pairwise_sum(t.subspan(m), f));
}

/// Exact Σ_k a_k·b_k (+ bias) rounded once into F, with IEEE special-value rules.
class ExactAccumulator {
 public:
  void add_product(const Value& a, const Value& b) {
    if (a.is_nan() || b.is_nan()) {
      nan_ = true;
      return;
    }
    const bool negative = a.sign_bit() != b.sign_bit();
    if (a.is_inf() || b.is_inf()) {
      if (a.is_zero() || b.is_zero()) {
        nan_ = true;
      } else {
        (negative ? minus_inf_ : plus_inf_) = true;
      }
      return;
    }
    any_ = true;
    if (a.is_zero() || b.is_zero()) {
      all_negative_zero_ = all_negative_zero_ && negative;
      return;
    }
    all_negative_zero_ = false;
    sum_ += exact_rational(a) * exact_rational(b);
  }
  void add_term(const Value& a) {
    if (a.is_nan()) {
      nan_ = true;
      return;
    }
    if (a.is_inf()) {
      (a.sign_bit() ? minus_inf_ : plus_inf_) = true;
      return;
    }
    any_ = true;
    if (a.is_zero()) {
      all_negative_zero_ = all_negative_zero_ && a.sign_bit();
      return;
    }
    all_negative_zero_ = false;
    sum_ += exact_rational(a);
  }
  Value result(const Arithmetic& f) const {
    if (nan_ || (plus_inf_ && minus_inf_)) return f.sub(special(f, HUGE_VAL), special(f, HUGE_VAL));
    if (plus_inf_) return special(f, HUGE_VAL);
    if (minus_inf_) return special(f, -HUGE_VAL);
    if (sum_ == 0) {
      const bool negative = (any_ && all_negative_zero_) || f.rounding() == Rounding::downward;
      return negative ? from_double(-0.0) : f.zero();
    }
    return f.from_rational(sum_);
  }

 private:
  mpq_class sum_ = 0;
  bool nan_ = false, plus_inf_ = false, minus_inf_ = false;
  bool any_ = false, all_negative_zero_ = true;
};

/// Σ x_k·y_k (+ bias) under the policy; y empty means the terms are x themselves.
Value accumulate_terms(std::span<const Value> x, std::span<const Value> y, const Value* bias,
                       const EvaluationPolicy& policy) {
  const Arithmetic f = arithmetic(policy);
  const bool products = !y.empty() || x.empty();
  switch (policy.summation) {
    case Summation::sequential: {
      // Left to right, each product and each partial sum rounded (THEORY §2.1), without a
      // terms buffer. A term that is a zero (a product with a zero factor and a finite other
      // factor, or a zero summand) leaves a non-zero, non-NaN partial sum unchanged (x + ±0 = x
      // exactly, in every rounding mode), so it is skipped; with a zero partial sum the addition
      // is made (the sign of a zero sum depends on it).
      auto zero_term = [&](std::size_t k) {
        if (!products) return x[k].is_zero();
        return (x[k].is_zero() && y[k].is_finite()) || (y[k].is_zero() && x[k].is_finite());
      };
      auto term = [&](std::size_t k) { return products ? f.mul(x[k], y[k]) : x[k]; };
      if (x.empty()) return bias ? *bias : f.zero();
      Value acc = term(0);
      for (std::size_t k = 1; k < x.size(); ++k) {
        if (zero_term(k) && !acc.is_zero() && !acc.is_nan()) continue;
        acc = f.add(acc, term(k));
      }
      if (bias) acc = f.add(acc, *bias);
      return acc;
    }
    case Summation::pairwise: {
      std::vector<Value> terms;
      terms.reserve(x.size() + 1);
      for (std::size_t k = 0; k < x.size(); ++k)
        terms.push_back(products ? f.mul(x[k], y[k]) : x[k]);
      if (bias) terms.push_back(*bias);
      return policy.summation == Summation::sequential ? sequential_sum(terms, f)
                                                       : pairwise_sum(terms, f);
    }
    case Summation::wide_accumulator: {
      const Arithmetic a(policy.accumulator, policy.rounding, policy.arithmetic_engine());
      std::vector<Value> terms;
      terms.reserve(x.size() + 1);
      for (std::size_t k = 0; k < x.size(); ++k) {
        terms.push_back(products ? a.mul(a.convert(x[k]), a.convert(y[k])) : a.convert(x[k]));
      }
      if (bias) terms.push_back(a.convert(*bias));
      return f.convert(sequential_sum(terms, a));
    }
    case Summation::exact: {
      ExactAccumulator acc;
      for (std::size_t k = 0; k < x.size(); ++k) {
        if (products) {
          acc.add_product(x[k], y[k]);
        } else {
          acc.add_term(x[k]);
        }
      }
      if (bias) acc.add_term(*bias);
      return acc.result(f);
    }
  }
  return f.zero();
}

void check_lengths(std::span<const Value> x, std::span<const Value> y, std::string_view what) {
  if (x.size() != y.size()) {
    throw InvalidArgument(std::string(what) + ": vectors of lengths " + std::to_string(x.size()) +
                          " and " + std::to_string(y.size()) + " (they must be equal)");
  }
}

}  // namespace

Value sum(std::span<const Value> terms, const EvaluationPolicy& policy) {
  return accumulate_terms(terms, {}, nullptr, policy);
}

Value dot(std::span<const Value> x, std::span<const Value> y, const EvaluationPolicy& policy) {
  check_lengths(x, y, "dot");
  if (x.empty()) return Value();
  return accumulate_terms(x, y, nullptr, policy);
}

Value affine(std::span<const Value> x, std::span<const Value> y, const Value& bias,
             const EvaluationPolicy& policy) {
  check_lengths(x, y, "affine");
  if (x.empty()) return accumulate_terms(std::span<const Value>(&bias, 1), {}, nullptr, policy);
  return accumulate_terms(x, y, &bias, policy);
}

std::optional<Binary64Dot> Binary64Dot::for_policy(const EvaluationPolicy& policy) {
  if (policy.summation == Summation::exact) return std::nullopt;
  const Binary64Rounding f(policy.format, policy.rounding);
  if (!f.fast_arithmetic()) return std::nullopt;
  Binary64Rounding a = f;
  bool float32 = false;
  if (policy.summation == Summation::wide_accumulator) {
    a = Binary64Rounding(policy.accumulator, policy.rounding);
    if (!a.fast_arithmetic()) return std::nullopt;
    // every element of F is a binary32 value: a floating F (fast_rounding: IEEE-style, with
    // subnormals) with p ≤ 24 and binary32's exponent range, so its quantum is ≥ 2^-149
    const Format& F = policy.format;
    float32 = policy.accumulator == Format::fp32() && !F.is_fixed_point() && F.precision <= 24 &&
              F.emin >= -126 && F.emax <= 127 && F.emin - F.precision + 1 >= -149;
  }
  Binary64Dot out(policy.summation, f, a, float32);
  if (policy.summation == Summation::sequential) {
    if (const auto l = lanes::LaneRounding::of(policy.format, f))
      out.lanes_ = Lanes{l->min_binade, l->max_binade, l->magic, l->max_finite, l->identity};
  }
  return out;
}

namespace {

/// Whether binary32 arithmetic is IEEE's here: neither flush-to-zero nor denormals-are-zero set
/// in this thread's MXCSR (x86-64; elsewhere the float path is not used).
bool float32_default_mode() {
#if defined(__x86_64__) || defined(__SSE__)
  return (_mm_getcsr() & 0x8040) == 0;  // FTZ bit 15, DAZ bit 6
#else
  return false;
#endif
}

}  // namespace

double Binary64Dot::operator()(const double* x, const double* y, std::size_t n) const {
  switch (summation_) {
    case Summation::sequential: {
      double acc = round_f_.mul(x[0], y[0]);
      for (std::size_t c = 1; c < n; ++c) acc = round_f_.add(acc, round_f_.mul(x[c], y[c]));
      return acc;
    }
    case Summation::pairwise: {
      double small[64] = {};
      std::vector<double> big;
      double* t = small;
      if (n > 64) {
        big.resize(n);
        t = big.data();
      }
      for (std::size_t c = 0; c < n; ++c) t[c] = round_f_.mul(x[c], y[c]);
      return pairwise(t, n);
    }
    case Summation::wide_accumulator: {
      if (float32_ && float32_default_mode()) {
        // A = binary32 and x[c], y[c] ∈ F ⊆ binary32 (exact as floats): IEEE binary32's × and
        // + are round_A of the exact product and sum, the values the lines below compute
        // (round_A of exact binary64 products, innocuous double rounding of the sums, NUMERIC
        // §2), in the same order, without fused multiply-add (-ffp-contract=off)
        float acc = static_cast<float>(x[0]) * static_cast<float>(y[0]);
        for (std::size_t c = 1; c < n; ++c)
          acc = acc + static_cast<float>(x[c]) * static_cast<float>(y[c]);
        return round_f_.round(static_cast<double>(acc));
      }
      // elements of F are elements of A when A ⊇ F; round_a_.round makes the conversion
      // explicit (exact then) as dot() does
      double acc = round_a_.mul(round_a_.round(x[0]), round_a_.round(y[0]));
      for (std::size_t c = 1; c < n; ++c) {
        acc = round_a_.add(acc, round_a_.mul(round_a_.round(x[c]), round_a_.round(y[c])));
      }
      return round_f_.round(acc);
    }
    case Summation::exact:
      break;
  }
  return 0;  // unreachable: for_policy refuses exact summation
}

namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ROPESIM_DOT_AVX2 1
#else
#define ROPESIM_DOT_AVX2 0
#endif

/// Four sequential dot products per step: lane l is x·(ys + (t + l)·stride), operator()'s
/// sequential case (round_F of each product, then of each partial sum, k in order).
inline __attribute__((always_inline)) void sequential_dots_body(const lanes::LaneRounding& f,
                                                                const double* x, const double* ys,
                                                                std::size_t stride,
                                                                std::size_t count, std::size_t n,
                                                                double* out) {
  using lanes::V;
  const std::size_t whole = count / lanes::kLanes * lanes::kLanes;
  for (std::size_t t = 0; t < whole; t += lanes::kLanes) {
    const double* y0 = ys + t * stride;
    const double* y1 = y0 + stride;
    const double* y2 = y1 + stride;
    const double* y3 = y2 + stride;
    V acc = lanes::round(f, lanes::splat(x[0]) * V{y0[0], y1[0], y2[0], y3[0]});
    for (std::size_t c = 1; c < n; ++c) {
      const V p = lanes::round(f, lanes::splat(x[c]) * V{y0[c], y1[c], y2[c], y3[c]});
      acc = lanes::round(f, acc + p);
    }
    lanes::store(out + t, acc);
  }
  for (std::size_t t = whole; t < count; ++t) {  // one lane
    const double* y = ys + t * stride;
    V acc = lanes::round(f, lanes::splat(x[0]) * lanes::splat(y[0]));
    for (std::size_t c = 1; c < n; ++c)
      acc = lanes::round(f, acc + lanes::round(f, lanes::splat(x[c]) * lanes::splat(y[c])));
    out[t] = acc[0];
  }
}

#if ROPESIM_DOT_AVX2
__attribute__((target("avx2"))) void sequential_dots_avx2(const lanes::LaneRounding& f,
                                                          const double* x, const double* ys,
                                                          std::size_t stride, std::size_t count,
                                                          std::size_t n, double* out) {
  sequential_dots_body(f, x, ys, stride, count, n, out);
}
#endif
void sequential_dots_baseline(const lanes::LaneRounding& f, const double* x, const double* ys,
                              std::size_t stride, std::size_t count, std::size_t n, double* out) {
  sequential_dots_body(f, x, ys, stride, count, n, out);
}

}  // namespace

void Binary64Dot::dots(const double* x, const double* ys, std::size_t stride, std::size_t count,
                       std::size_t n, double* out, bool baseline) const {
  if (!lanes_ || n == 0) {
    for (std::size_t t = 0; t < count; ++t) out[t] = (*this)(x, ys + t * stride, n);
    return;
  }
  // operator()'s x[0]·y[0] first: the same product in each lane (x[k]·y[k], not y·x: IEEE
  // multiplication is commutative, and only a NaN's payload could tell the order)
  lanes::LaneRounding f;
  f.identity = lanes_->identity;
  f.min_binade = lanes_->min_binade;
  f.max_binade = lanes_->max_binade;
  f.magic = lanes_->magic;
  f.max_finite = lanes_->max_finite;
#if ROPESIM_DOT_AVX2
  static const bool avx2 = __builtin_cpu_supports("avx2") != 0;
  if (avx2 && !baseline) return sequential_dots_avx2(f, x, ys, stride, count, n, out);
#else
  (void)baseline;
#endif
  sequential_dots_baseline(f, x, ys, stride, count, n, out);
}

double Binary64Dot::pairwise(const double* t, std::size_t n) const {
  if (n == 1) return t[0];
  const std::size_t m = n / 2;
  return round_f_.add(pairwise(t, m), pairwise(t + m, n - m));
}

}  // namespace ropesim::numeric
