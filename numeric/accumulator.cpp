// Accumulator models of a dot product (THEORY §2.1; DeepSeek-V3 §3.3.2). See accumulator.hpp.
#include "numeric/accumulator.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "numeric/arithmetic.hpp"

namespace ropesim::numeric {

namespace {

constexpr const char* accepted_form =
    "accepted: FORMAT, FORMAT@ROUNDING, FORMAT/K>WIDE or FORMAT@ROUNDING/K>WIDE@ROUNDING, "
    "e.g. p=11,e=8@toward-zero/128>fp32";

/// "F" or "F@MODE" (MODE omitted when nearest-even).
std::string format_with_rounding(const Format& format, Rounding rounding) {
  std::string s = format.name;
  if (rounding != Rounding::nearest_even) s += "@" + std::string(to_string(rounding));
  return s;
}

/// Parses "F" or "F@MODE" into `format` and `rounding`.
void parse_format_with_rounding(std::string_view text, Format& format, Rounding& rounding) {
  const std::size_t at = text.find('@');
  format = parse_format(text.substr(0, at));
  rounding =
      at == std::string_view::npos ? Rounding::nearest_even : parse_rounding(text.substr(at + 1));
}

/// rnd_A(a·b): the exact product rounded once into A (flags raised into `flags` when given).
Value product(const Value& a, const Value& b, const Arithmetic& acc, Flags* flags) {
  if (!a.is_finite() || !b.is_finite() || a.is_zero() || b.is_zero()) {
    // Special values and zeros (IEEE 754 multiplication): NaN propagates quietly; 0·∞ is
    // invalid; otherwise ±∞ or ±0 with the sign the exclusive or of the operands' signs.
    if (a.is_nan() || b.is_nan()) return acc.convert(Value::from_double_exact(std::nan("")));
    const bool negative = a.sign_bit() != b.sign_bit();
    if (a.is_inf() || b.is_inf()) {
      if (a.is_zero() || b.is_zero()) {
        if (flags) *flags |= Flag::invalid;
        return acc.convert(Value::from_double_exact(std::nan("")));
      }
      return acc.convert(Value::from_double_exact(negative ? -HUGE_VAL : HUGE_VAL));
    }
    return acc.convert(Value::from_double_exact(negative ? -0.0 : 0.0));
  }
  if (!a.is_wide() && !b.is_wide()) {
    const double x = a.narrow(), y = b.narrow();
    const double p = x * y;
    // p is the exact product when it is a normal double and the fma residual is zero.
    if (std::isfinite(p) && std::fabs(p) >= DBL_MIN && std::fma(x, y, -p) == 0) {
      const Value exact = Value::from_double_exact(p);
      return flags ? acc.convert(exact, *flags) : acc.convert(exact);
    }
  }
  const mpq_class q = exact_rational(a) * exact_rational(b);
  return flags ? acc.from_rational(q, *flags) : acc.from_rational(q);
}

Value add(const Arithmetic& f, const Value& x, const Value& y, Flags* flags) {
  return flags ? f.add(x, y, *flags) : f.add(x, y);
}

Value convert(const Arithmetic& f, const Value& x, Flags* flags) {
  return flags ? f.convert(x, *flags) : f.convert(x);
}

}  // namespace

std::string to_string(const AccumulatorModel& model) {
  std::string s = format_with_rounding(model.format, model.rounding);
  if (model.promotion) {
    s += "/" + std::to_string(model.promotion->interval) + ">" +
         format_with_rounding(model.promotion->format, model.promotion->rounding);
  }
  return s;
}

AccumulatorModel parse_accumulator_model(std::string_view text) {
  AccumulatorModel model;
  const std::size_t slash = text.find('/');
  try {
    parse_format_with_rounding(text.substr(0, slash), model.format, model.rounding);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("accumulator '" + std::string(text) + "': " + e.what());
  }
  if (slash == std::string_view::npos) return model;
  const std::string_view rest = text.substr(slash + 1);
  const std::size_t gt = rest.find('>');
  const std::string_view k = rest.substr(0, gt);
  if (gt == std::string_view::npos || k.empty() || k.size() > 9 ||
      k.find_first_not_of("0123456789") != std::string_view::npos ||
      std::stoul(std::string(k)) == 0) {
    throw InvalidArgument("accumulator '" + std::string(text) +
                          "': the promotion needs /K>WIDE with an integer 1 ≤ K ≤ 999999999; " +
                          accepted_form);
  }
  Promotion promotion;
  promotion.interval = std::stoul(std::string(k));
  try {
    parse_format_with_rounding(rest.substr(gt + 1), promotion.format, promotion.rounding);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("accumulator '" + std::string(text) + "': " + e.what());
  }
  model.promotion = promotion;
  return model;
}

Value accumulate_dot(std::span<const Value> a, std::span<const Value> b,
                     const AccumulatorModel& model, const Engine& engine, Flags* flags) {
  if (a.size() != b.size()) {
    throw InvalidArgument("accumulate_dot: vectors of lengths " + std::to_string(a.size()) +
                          " and " + std::to_string(b.size()) + " (they must be equal)");
  }
  if (model.promotion && model.promotion->interval == 0) {
    throw InvalidArgument("accumulate_dot: the promotion interval K must be at least 1");
  }
  const Arithmetic acc(model.format, model.rounding, engine);
  if (!model.promotion) {
    if (a.empty()) return acc.zero();
    Value s = product(a[0], b[0], acc, flags);
    for (std::size_t k = 1; k < a.size(); ++k)
      s = add(acc, s, product(a[k], b[k], acc, flags), flags);
    return s;
  }
  const Arithmetic wide(model.promotion->format, model.promotion->rounding, engine);
  const std::size_t interval = model.promotion->interval;
  Value total = wide.zero();
  for (std::size_t start = 0; start < a.size(); start += interval) {
    const std::size_t end = std::min(a.size(), start + interval);
    Value t = product(a[start], b[start], acc, flags);  // the A accumulator starts afresh
    for (std::size_t k = start + 1; k < end; ++k)
      t = add(acc, t, product(a[k], b[k], acc, flags), flags);
    const Value promoted = convert(wide, t, flags);
    total = start == 0 ? promoted : add(wide, total, promoted, flags);
  }
  return total;
}

}  // namespace ropesim::numeric
