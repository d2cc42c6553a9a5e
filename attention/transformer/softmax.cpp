// Softmax and the attend path (THEORY §2; RoPE-X eq. 2). See transformer.hpp for the contracts.
#include <mpfr.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"
#include "numeric/format_properties.hpp"

namespace ropesim::attention {

namespace {

Value from_double(double d) { return Value::from_double_exact(d); }

/// ±inf (or ±max in saturating formats) and NaN of F.
Value special(const Arithmetic& f, double d) { return f.convert(from_double(d)); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Softmax (THEORY §2; RoPE-X eq. 2)
// ---------------------------------------------------------------------------------------------

namespace {

void check_online(const EvaluationPolicy& policy) {
  if (policy.summation == Summation::pairwise || policy.summation == Summation::exact) {
    throw InvalidArgument("softmax online: the running sum is sequential by nature; summation '" +
                          std::string(to_string(policy.summation)) +
                          "' does not apply; accepted with online: sequential, wide-accumulator");
  }
}

/// The online (flash-style) recurrence; fills weights and, when values is non-null, the output.
void online_attention(std::span<const Value> scores, const std::vector<Value>* values,
                      std::size_t value_dim, const EvaluationPolicy& policy,
                      std::vector<Value>& weights, std::vector<Value>* output) {
  check_online(policy);
  const Arithmetic f = numeric::arithmetic(policy);
  const Arithmetic r(policy.running_format(), policy.rounding, policy.arithmetic_engine());
  Value m = special(r, -HUGE_VAL);
  Value l = r.zero();
  std::vector<Value> o(value_dim, r.zero());
  std::vector<Value> s(scores.size());
  for (std::size_t j = 0; j < scores.size(); ++j) {
    s[j] = r.convert(scores[j]);
    const Value m_new = r.max(m, s[j]);
    const Value c = r.exp(r.sub(m, m_new));
    const Value p = r.exp(r.sub(s[j], m_new));
    l = r.add(r.mul(l, c), p);
    if (values) {
      for (std::size_t d = 0; d < value_dim; ++d) {
        o[d] = r.add(r.mul(o[d], c), r.mul(p, r.convert(values[j][d])));
      }
    }
    m = m_new;
  }
  weights.clear();
  for (std::size_t j = 0; j < scores.size(); ++j) {
    weights.push_back(f.convert(r.div(r.exp(r.sub(s[j], m)), l)));
  }
  if (output) {
    output->clear();
    for (std::size_t d = 0; d < value_dim; ++d) output->push_back(f.convert(r.div(o[d], l)));
  }
}

}  // namespace

namespace {

// Scores of one query usually take few distinct values (compiled heads: two); a small cache
// of the last results by bit pattern spares recomputing exp and the division. Exact: the
// same operands give the same correctly rounded result.
struct SmallCache {
  std::array<std::uint64_t, 8> key{};
  std::array<Value, 8> argument{}, value{};
  std::size_t size = 0, next = 0;
  template <class F>
  Value get(const Value& x, F&& compute) {
    const std::uint64_t k = x.bits_key();
    for (std::size_t i = 0; i < size; ++i) {
      if (key[i] == k && argument[i].same_bits(x)) return value[i];
    }
    Value v = compute();
    key[next] = k;
    argument[next] = x;
    value[next] = v;
    next = (next + 1) % key.size();
    size = std::min(size + 1, key.size());
    return v;
  }
};

}  // namespace

std::vector<Value> softmax(std::span<const Value> scores, const EvaluationPolicy& policy,
                           SoftmaxVariant variant) {
  if (variant == SoftmaxVariant::online) check_online(policy);
  if (scores.empty()) return {};
  if (variant == SoftmaxVariant::online) {
    std::vector<Value> weights;
    online_attention(scores, nullptr, 0, policy, weights, nullptr);
    return weights;
  }
  const Arithmetic f = numeric::arithmetic(policy);
  SmallCache exps, divisions;
  std::vector<Value> e;
  e.reserve(scores.size());
  if (variant == SoftmaxVariant::stable) {
    Value m = scores[0];
    for (std::size_t j = 1; j < scores.size(); ++j) m = f.max(m, scores[j]);
    for (const Value& s : scores) e.push_back(exps.get(s, [&] { return f.exp(f.sub(s, m)); }));
  } else {
    for (const Value& s : scores) e.push_back(exps.get(s, [&] { return f.exp(s); }));
  }
  const Value z = sum(e, policy);
  std::vector<Value> alpha;
  alpha.reserve(e.size());
  for (const Value& v : e) alpha.push_back(divisions.get(v, [&] { return f.div(v, z); }));
  return alpha;
}

std::vector<Value> stable_softmax(std::span<const Value> scores, const EvaluationPolicy& policy) {
  return softmax(scores, policy, SoftmaxVariant::stable);
}

namespace {

/// attend() for the stable and no-max softmax when F's + − × of narrow values can be done in
/// binary64 and re-rounded (numeric::Binary64Dot, the certified-range kernel; bit for bit
/// numeric::dot): the sums and weighted sums run on doubles, exp and the divisions through F's
/// arithmetic, once per distinct operand. The same bits as the general path (tests compare
/// them); nullopt when it does not apply (online softmax, exact summation, a wide, infinite or
/// NaN operand).
std::optional<AttentionOutput> attend_binary64(std::span<const Value> scores,
                                               std::span<const std::vector<Value>> values,
                                               std::size_t value_dim,
                                               const EvaluationPolicy& policy,
                                               SoftmaxVariant variant) {
  if (variant == SoftmaxVariant::online) return std::nullopt;
  const auto kernel = numeric::Binary64Dot::for_policy(policy);
  if (!kernel) return std::nullopt;
  const std::size_t n = scores.size();
  std::vector<double> s(n);
  for (std::size_t j = 0; j < n; ++j) {
    if (scores[j].is_wide() || !std::isfinite(scores[j].narrow())) return std::nullopt;
    s[j] = scores[j].narrow();
  }
  std::vector<double> v(n * value_dim);  // column-major: v[d * n + j]
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t d = 0; d < value_dim; ++d) {
      const Value& x = values[j][d];
      if (x.is_wide() || !std::isfinite(x.narrow())) return std::nullopt;
      v[d * n + j] = x.narrow();
    }
  }
  const Arithmetic f = numeric::arithmetic(policy);
  // exp(s_j − M) (stable) or exp(s_j), once per distinct score.
  std::vector<double> e(n);
  {
    Value m;
    if (variant == SoftmaxVariant::stable) {
      double mx = s[0];
      for (std::size_t j = 1; j < n; ++j) mx = std::max(mx, s[j]);
      m = Value::from_double_exact(mx);
    }
    std::array<double, 8> key{}, result{};
    std::size_t size = 0, next = 0;
    for (std::size_t j = 0; j < n; ++j) {
      std::size_t i = 0;
      for (; i < size; ++i) {
        if (std::bit_cast<std::uint64_t>(key[i]) == std::bit_cast<std::uint64_t>(s[j])) break;
      }
      if (i == size) {
        const Value x = Value::from_double_exact(s[j]);
        const Value ex = variant == SoftmaxVariant::stable ? f.exp(f.sub(x, m)) : f.exp(x);
        if (ex.is_wide() || !std::isfinite(ex.narrow())) return std::nullopt;
        i = next;
        key[i] = s[j];
        result[i] = ex.narrow();
        next = (next + 1) % key.size();
        size = std::min(size + 1, key.size());
      }
      e[j] = result[i];
    }
  }
  const std::vector<double> ones(n, 1.0);
  const double z = (*kernel)(e.data(), ones.data(), n);  // Σ e_j·1 = Σ e_j (×1 is exact)
  const Value zv = Value::from_double_exact(z);
  std::vector<double> alpha(n);
  {
    std::array<double, 8> key{}, result{};
    std::size_t size = 0, next = 0;
    for (std::size_t j = 0; j < n; ++j) {
      std::size_t i = 0;
      for (; i < size; ++i) {
        if (std::bit_cast<std::uint64_t>(key[i]) == std::bit_cast<std::uint64_t>(e[j])) break;
      }
      if (i == size) {
        const Value a = f.div(Value::from_double_exact(e[j]), zv);
        if (a.is_wide() || !std::isfinite(a.narrow())) return std::nullopt;
        i = next;
        key[i] = e[j];
        result[i] = a.narrow();
        next = (next + 1) % key.size();
        size = std::min(size + 1, key.size());
      }
      alpha[j] = result[i];
    }
  }
  AttentionOutput out;
  out.weights.reserve(n);
  for (double a : alpha) out.weights.push_back(Value::from_double_exact(a));
  out.output.reserve(value_dim);
  for (std::size_t d = 0; d < value_dim; ++d) {
    out.output.push_back(Value::from_double_exact((*kernel)(alpha.data(), v.data() + d * n, n)));
  }
  return out;
}

}  // namespace

AttentionOutput attend(std::span<const Value> scores, std::span<const std::vector<Value>> values,
                       std::size_t value_dim, const EvaluationPolicy& policy,
                       SoftmaxVariant variant) {
  if (values.size() != scores.size()) {
    throw InvalidArgument("attend: " + std::to_string(scores.size()) + " scores but " +
                          std::to_string(values.size()) + " value vectors");
  }
  for (const auto& v : values) {
    if (v.size() != value_dim) {
      throw InvalidArgument("attend: a value vector has length " + std::to_string(v.size()) +
                            ", expected " + std::to_string(value_dim));
    }
  }
  if (variant == SoftmaxVariant::online) check_online(policy);
  AttentionOutput out;
  if (scores.empty()) {
    out.output.assign(value_dim, Value());  // THEORY §2: no visible key → zero vector
    return out;
  }
  if (variant == SoftmaxVariant::online) {
    online_attention(scores, values.data(), value_dim, policy, out.weights, &out.output);
    return out;
  }
  if (auto fast = attend_binary64(scores, values, value_dim, policy, variant))
    return std::move(*fast);
  out.weights = softmax(scores, policy, variant);
  std::vector<Value> column(values.size());
  out.output.reserve(value_dim);
  for (std::size_t d = 0; d < value_dim; ++d) {
    for (std::size_t j = 0; j < values.size(); ++j) column[j] = values[j][d];
    out.output.push_back(dot(out.weights, column, policy));
  }
  return out;
}

}  // namespace ropesim::attention
