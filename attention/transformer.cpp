// The F-transformer (THEORY §2, §2.1). See transformer.hpp for the contracts.
#include "attention/transformer.hpp"

#include <mpfr.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "attention/mixed_attention.hpp"
#include "numeric/error.hpp"
#include "numeric/format_properties.hpp"

namespace ropesim::attention {

namespace {

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t k = 0; k < items.size(); ++k) {
    if (k) out += sep;
    out += items[k];
  }
  return out;
}

Value from_double(double d) { return Value::from_double_exact(d); }

/// ±inf (or ±max in saturating formats) and NaN of F.
Value special(const Arithmetic& f, double d) { return f.convert(from_double(d)); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------------------------

std::string_view to_string(SoftmaxVariant variant) {
  switch (variant) {
    case SoftmaxVariant::stable:
      return "stable";
    case SoftmaxVariant::no_max_subtraction:
      return "no-max-subtraction";
    case SoftmaxVariant::online:
      return "online";
  }
  return "?";
}

SoftmaxVariant parse_softmax_variant(std::string_view text) {
  if (text == "stable") return SoftmaxVariant::stable;
  if (text == "no-max-subtraction" || text == "no_max_subtraction" || text == "no-max") {
    return SoftmaxVariant::no_max_subtraction;
  }
  if (text == "online" || text == "flash") return SoftmaxVariant::online;
  throw InvalidArgument("unknown softmax '" + std::string(text) +
                        "'; accepted: stable, no-max-subtraction, online");
}

std::string_view to_string(NormPlacement placement) {
  return placement == NormPlacement::post ? "post" : "pre";
}

NormPlacement parse_norm_placement(std::string_view text) {
  if (text == "post") return NormPlacement::post;
  if (text == "pre") return NormPlacement::pre;
  throw InvalidArgument("unknown layer norm placement '" + std::string(text) +
                        "'; accepted: post, pre");
}

std::string_view to_string(Masking masking) {
  return masking == Masking::strict ? "strict" : "non-strict";
}

Masking parse_masking(std::string_view text) {
  if (text == "strict") return Masking::strict;
  if (text == "non-strict" || text == "non_strict") return Masking::non_strict;
  throw InvalidArgument("unknown masking '" + std::string(text) +
                        "'; accepted: strict, non-strict");
}

std::string exact_decimal(const Value& v) {
  if (v.is_nan()) return "nan";
  if (v.is_inf()) return v.sign_bit() ? "-inf" : "inf";
  if (v.is_zero()) return v.sign_bit() ? "-0" : "0";
  const mpq_class q = exact_rational(v);
  const bool negative = q < 0;
  mpz_class num = abs(q.get_num());
  const mpz_class den = q.get_den();
  // den = 2^k: q = num·5^k / 10^k.
  const std::size_t k = mpz_sizeinbase(den.get_mpz_t(), 2) - 1;
  mpz_class five_k;
  mpz_ui_pow_ui(five_k.get_mpz_t(), 5, k);
  const mpz_class n = num * five_k;
  std::string digits = n.get_str();
  std::string out;
  long exponent10 = -static_cast<long>(k);  // value = digits · 10^exponent10
  if (k == 0) {
    // An integer: strip trailing zeros into an exponent only when there are many.
    std::size_t zeros = 0;
    while (zeros + 1 < digits.size() && digits[digits.size() - 1 - zeros] == '0') ++zeros;
    if (zeros < 6) {
      out = digits;
    } else {
      digits.resize(digits.size() - zeros);
      exponent10 = static_cast<long>(zeros);
      const long e = static_cast<long>(digits.size()) - 1 + exponent10;
      out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
            std::to_string(e);
    }
  } else {
    const long len = static_cast<long>(digits.size());
    const long leading_zeros = static_cast<long>(k) - len;  // zeros after the point
    if (leading_zeros < 0) {
      out = digits.substr(0, static_cast<std::size_t>(len - static_cast<long>(k))) + "." +
            digits.substr(static_cast<std::size_t>(len - static_cast<long>(k)));
    } else if (leading_zeros <= 5) {
      out = "0." + std::string(static_cast<std::size_t>(leading_zeros), '0') + digits;
    } else {
      const long e = len - 1 + exponent10;
      out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
            std::to_string(e);
    }
  }
  return negative ? "-" + out : out;
}

Matrix Matrix::zeros(std::size_t rows, std::size_t cols) {
  Matrix m;
  if (cols != 0 && rows > m.entries.max_size() / cols) {  // rows·cols would wrap around
    throw InvalidArgument("matrix " + std::to_string(rows) + " x " + std::to_string(cols) +
                          " has more entries than can be stored");
  }
  m.rows = rows;
  m.cols = cols;
  m.entries.assign(rows * cols, Value());
  return m;
}

std::span<const Value> Matrix::row(std::size_t r) const {
  return std::span<const Value>(entries).subspan(r * cols, cols);
}

std::vector<Value> matvec(const Matrix& w, std::span<const Value> x, std::span<const Value> b,
                          const EvaluationPolicy& policy) {
  if (w.entries.size() != w.rows * w.cols) {
    throw InvalidArgument("matvec: matrix " + std::to_string(w.rows) + " x " +
                          std::to_string(w.cols) + " holds " + std::to_string(w.entries.size()) +
                          " entries");
  }
  if (x.size() != w.cols) {
    throw InvalidArgument("matvec: matrix " + std::to_string(w.rows) + " x " +
                          std::to_string(w.cols) + " applied to a vector of length " +
                          std::to_string(x.size()));
  }
  if (!b.empty() && b.size() != w.rows) {
    throw InvalidArgument("matvec: bias of length " + std::to_string(b.size()) + " for " +
                          std::to_string(w.rows) + " rows");
  }
  std::vector<Value> y;
  y.reserve(w.rows);
  for (std::size_t r = 0; r < w.rows; ++r) {
    y.push_back(b.empty() ? dot(w.row(r), x, policy) : affine(w.row(r), x, b[r], policy));
  }
  return y;
}

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

// ---------------------------------------------------------------------------------------------
// Heads and rotations
// ---------------------------------------------------------------------------------------------

Schedule unrotated_schedule(std::size_t pairs) {
  Schedule s;
  s.spec = "unrotated:pairs=" + std::to_string(pairs);
  s.kind = "unrotated";
  s.unrotated_pairs = pairs;
  s.head_dim = 2 * pairs;
  s.rotary_dim = 0;
  return s;
}

namespace {

/// The schedule restricted to block b (keeps the metadata pipelines need).
Schedule block_schedule(const Schedule& s, std::size_t b) {
  Schedule sub = s;
  sub.blocks = {s.blocks[b]};
  sub.unrotated_pairs = 0;
  sub.rotary_dim = 2;
  sub.head_dim = 2;
  return sub;
}

std::size_t rotary_block_count(const AttentionHead& head) {
  std::size_t n = 0;
  for (const auto& seg : head.rotary) n += seg.schedule.blocks.size();
  return n;
}

}  // namespace

HeadRotations realise_head(const AttentionHead& head, std::uint64_t positions,
                           const EvaluationPolicy& policy) {
  (void)policy;
  HeadRotations out;
  out.positions = positions;
  out.blocks.reserve(rotary_block_count(head));
  for (const auto& seg : head.rotary) {
    if (seg.realisations.size() != seg.schedule.blocks.size()) {
      throw InvalidArgument("realise_head: segment '" + seg.schedule.spec + "' has " +
                            std::to_string(seg.schedule.blocks.size()) + " blocks but " +
                            std::to_string(seg.realisations.size()) + " realisations");
    }
    for (std::size_t b = 0; b < seg.schedule.blocks.size(); ++b) {
      if (!seg.realisations[b]) {
        out.blocks.emplace_back();
        continue;
      }
      out.blocks.push_back(
          realise_block(block_schedule(seg.schedule, b), *seg.realisations[b], 0, 0, positions));
    }
  }
  return out;
}

std::vector<Value> rotate(const AttentionHead& head, const HeadRotations& rotations,
                          std::uint64_t position, std::span<const Value> x,
                          const EvaluationPolicy& policy) {
  if (x.size() != head.head_dim) {
    throw InvalidArgument("rotate: vector of length " + std::to_string(x.size()) +
                          ", head_dim is " + std::to_string(head.head_dim));
  }
  std::vector<Value> y(x.begin(), x.end());
  if (head.rotary.empty()) return y;
  if (position >= rotations.positions) {
    throw InvalidArgument("rotate: position " + std::to_string(position) +
                          " not realised (positions 0.." + std::to_string(rotations.positions) +
                          " exclusive)");
  }
  if (rotations.blocks.size() != rotary_block_count(head)) {
    throw InvalidArgument("rotate: rotations of another head (" +
                          std::to_string(rotations.blocks.size()) + " blocks, expected " +
                          std::to_string(rotary_block_count(head)) + ")");
  }
  const Arithmetic f = numeric::arithmetic(policy);
  std::size_t offset = 0, global = 0;
  for (const auto& seg : head.rotary) {
    const std::size_t nb = seg.schedule.blocks.size();
    for (std::size_t d = 0; d < nb; ++d, ++global) {
      const auto& r = seg.realisations[d];
      if (!r) continue;
      const RealisedPair& pair = rotations.blocks[global][position];
      const std::size_t i0 = offset + (seg.layout == PairLayout::adjacent ? 2 * d : d);
      const std::size_t i1 = offset + (seg.layout == PairLayout::adjacent ? 2 * d + 1 : d + nb);
      const bool pipeline = r->kind == Realisation::Kind::pipeline;
      const Format& rot_format = pipeline ? r->steps.rotation.compute : r->format;
      const Format& out_format = pipeline ? r->steps.output : r->format;
      const auto arithmetic = pipeline ? r->steps.arithmetic : RotationArithmetic::theory;
      const Rounding rot_rounding =
          pipeline ? r->steps.rotation.rounding_or(r->rounding) : r->rounding;
      const Arithmetic a(rot_format, rot_rounding, policy.arithmetic_engine());
      const Value x0 = a.convert(x[i0]), x1 = a.convert(x[i1]);
      const Value c = a.convert(pair.cos), s = a.convert(pair.sin);
      Value y0, y1;
      if (arithmetic == RotationArithmetic::theory) {
        // THEORY §2.1: (rnd(rnd(c·x0) - rnd(s·x1)), rnd(rnd(s·x0) + rnd(c·x1)))
        y0 = a.sub(a.mul(c, x0), a.mul(s, x1));
        y1 = a.add(a.mul(s, x0), a.mul(c, x1));
      } else {
        // Hugging Face eager q·cos + rotate_half(q)·sin, rotate_half = (-x1, x0) (NUMERIC §3)
        y0 = a.add(a.mul(x0, c), a.mul(a.negate(x1), s));
        y1 = a.add(a.mul(x1, c), a.mul(x0, s));
      }
      if (!(out_format == rot_format)) {
        const Arithmetic o(out_format, r->rounding, policy.arithmetic_engine());
        y0 = o.convert(y0);
        y1 = o.convert(y1);
      }
      if (!(out_format == policy.format)) {
        y0 = f.convert(y0);
        y1 = f.convert(y1);
      }
      y[i0] = y0;
      y[i1] = y1;
    }
    offset += seg.dimension();
  }
  return y;
}

std::vector<Value> head_query(const AttentionHead& head, const HeadRotations& rotations,
                              std::uint64_t position, std::span<const Value> x,
                              const EvaluationPolicy& policy) {
  return rotate(head, rotations, position, matvec(head.query, x, head.query_bias, policy), policy);
}

std::vector<Value> head_key(const AttentionHead& head, const HeadRotations& rotations,
                            std::uint64_t position, std::span<const Value> x,
                            const EvaluationPolicy& policy) {
  return rotate(head, rotations, position, matvec(head.key, x, head.key_bias, policy), policy);
}

std::vector<Value> head_value(const AttentionHead& head, std::span<const Value> x,
                              const EvaluationPolicy& policy) {
  return matvec(head.value, x, head.value_bias, policy);
}

Value head_score(const AttentionHead& head, std::span<const Value> q, std::span<const Value> k,
                 const EvaluationPolicy& policy) {
  const Value s = dot(q, k, policy);
  if (!head.scale) return s;
  return numeric::arithmetic(policy).mul(s, *head.scale);
}

std::vector<Value> feed_forward(const FeedForward& ffn, std::span<const Value> x,
                                const EvaluationPolicy& policy) {
  const Arithmetic f = numeric::arithmetic(policy);
  std::vector<Value> h = matvec(ffn.w1, x, ffn.b1, policy);
  for (auto& v : h) v = f.relu(v);
  return matvec(ffn.w2, h, ffn.b2, policy);
}

std::vector<Value> layer_norm(const LayerNormParams& params, std::span<const Value> x,
                              const EvaluationPolicy& policy) {
  const std::size_t d = x.size();
  if ((!params.gain.empty() && params.gain.size() != d) ||
      (!params.bias.empty() && params.bias.size() != d)) {
    throw InvalidArgument("layer_norm: gain/bias lengths " + std::to_string(params.gain.size()) +
                          "/" + std::to_string(params.bias.size()) + " for a vector of length " +
                          std::to_string(d));
  }
  if (d == 0) return {};
  const Arithmetic f = numeric::arithmetic(policy);
  const Value d_hat = f.from_rational(mpq_class(static_cast<unsigned long>(d)));
  const Value mean = f.div(sum(x, policy), d_hat);
  std::vector<Value> centred(d), squares(d);
  for (std::size_t k = 0; k < d; ++k) {
    centred[k] = f.sub(x[k], mean);
    squares[k] = f.mul(centred[k], centred[k]);
  }
  const Value variance = f.div(sum(squares, policy), d_hat);
  const Value sigma = f.sqrt(f.add(variance, params.epsilon));
  std::vector<Value> y(d);
  for (std::size_t k = 0; k < d; ++k) {
    Value v = f.div(centred[k], sigma);
    if (!params.gain.empty()) v = f.mul(v, params.gain[k]);
    if (!params.bias.empty()) v = f.add(v, params.bias[k]);
    y[k] = v;
  }
  return y;
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& problem) {
  throw InvalidArgument(path + ": " + problem);
}

void check_matrix(const Matrix& m, std::size_t rows, std::size_t cols, const std::string& path) {
  if (m.rows != rows || m.cols != cols || m.entries.size() != rows * cols) {
    bad(path, "expected " + std::to_string(rows) + " x " + std::to_string(cols) + ", got " +
                  std::to_string(m.rows) + " x " + std::to_string(m.cols));
  }
}

void check_vector(const std::vector<Value>& v, std::size_t n, bool may_be_empty,
                  const std::string& path) {
  if (v.empty() && may_be_empty) return;
  if (v.size() != n) {
    bad(path, "expected length " + std::to_string(n) + (may_be_empty ? " (or none)" : "") +
                  ", got " + std::to_string(v.size()));
  }
}

void check_norm(const LayerNormParams& n, std::size_t d, const std::string& path) {
  check_vector(n.gain, d, true, path + ".gain");
  check_vector(n.bias, d, true, path + ".bias");
}

bool is_symbol_char_safe(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (std::isspace(c)) return false;
  }
  return true;
}

}  // namespace

void Model::validate() const {
  if (d_model == 0) bad("d_model", "must be at least 1");
  if (!coordinates.empty()) {
    if (coordinates.size() != d_model) {
      bad("coordinates",
          std::to_string(coordinates.size()) + " names for d_model = " + std::to_string(d_model));
    }
    std::set<std::string> names;
    for (std::size_t k = 0; k < coordinates.size(); ++k) {
      if (coordinates[k].empty() || !names.insert(coordinates[k]).second) {
        bad("coordinates[" + std::to_string(k) + "]",
            "names must be non-empty and distinct, got '" + coordinates[k] + "'");
      }
    }
  }
  if (options.softmax == SoftmaxVariant::online &&
      (policy.summation == Summation::pairwise || policy.summation == Summation::exact)) {
    bad("architecture.softmax", "online needs summation sequential or wide-accumulator (got " +
                                    std::string(to_string(policy.summation)) + ")");
  }
  if (embedding.symbols.size() != embedding.alphabet.size()) {
    bad("embedding.symbols", std::to_string(embedding.symbols.size()) + " vectors for " +
                                 std::to_string(embedding.alphabet.size()) + " alphabet symbols");
  }
  std::set<std::string> seen;
  for (std::size_t k = 0; k < embedding.alphabet.size(); ++k) {
    const std::string& a = embedding.alphabet[k];
    if (!is_symbol_char_safe(a)) {
      bad("alphabet[" + std::to_string(k) + "]", "symbols must be non-empty without whitespace");
    }
    if (a == "BOS" || a == "EOS")
      bad("alphabet[" + std::to_string(k) + "]", "'" + a + "' is reserved");
    if (!seen.insert(a).second)
      bad("alphabet[" + std::to_string(k) + "]", "duplicate symbol '" + a + "'");
    check_vector(embedding.symbols[k], d_model, false, "embedding.symbols." + a);
  }
  if (options.bos) {
    check_vector(embedding.bos, d_model, false, "embedding.bos");
  } else {
    check_vector(embedding.bos, d_model, true, "embedding.bos");
  }
  check_vector(embedding.eos, d_model, false, "embedding.eos");
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const Layer& layer = layers[l];
    const std::string lp = "layers[" + std::to_string(l) + "]";
    for (std::size_t h = 0; h < layer.heads.size(); ++h) {
      const AttentionHead& head = layer.heads[h];
      const std::string hp = lp + ".heads[" + std::to_string(h) + "]";
      if (head.head_dim == 0) bad(hp + ".head_dim", "must be at least 1");
      check_matrix(head.query, head.head_dim, d_model, hp + ".query");
      check_matrix(head.key, head.head_dim, d_model, hp + ".key");
      check_matrix(head.value, head.value_dim, d_model, hp + ".value");
      check_matrix(head.output, d_model, head.value_dim, hp + ".output");
      check_vector(head.query_bias, head.head_dim, true, hp + ".query_bias");
      check_vector(head.key_bias, head.head_dim, true, hp + ".key_bias");
      check_vector(head.value_bias, head.value_dim, true, hp + ".value_bias");
      if (head.formats) check_head_formats(*head.formats, options.softmax, hp + ".formats");
      if (!head.rotary.empty()) {
        std::size_t dim = 0;
        for (std::size_t s = 0; s < head.rotary.size(); ++s) {
          const RotarySegment& seg = head.rotary[s];
          const std::string sp = hp + ".rope[" + std::to_string(s) + "]";
          if (seg.realisations.size() != seg.schedule.blocks.size()) {
            bad(sp + ".realisation", std::to_string(seg.realisations.size()) +
                                         " realisations for " +
                                         std::to_string(seg.schedule.blocks.size()) +
                                         " rotary blocks of '" + seg.schedule.spec + "'");
          }
          for (std::size_t b = 0; b < seg.realisations.size(); ++b) {
            if (!seg.realisations[b]) continue;
            try {
              check_applicable(block_schedule(seg.schedule, b), *seg.realisations[b]);
            } catch (const InvalidArgument& e) {
              bad(sp + ".realisation", e.what());
            }
          }
          dim += seg.dimension();
        }
        if (dim != head.head_dim) {
          bad(hp + ".rope", "segments cover " + std::to_string(dim) + " coordinates, head_dim is " +
                                std::to_string(head.head_dim));
        }
      }
    }
    check_vector(layer.attention_bias, d_model, true, lp + ".attention_bias");
    if (layer.ffn) {
      const FeedForward& f = *layer.ffn;
      check_matrix(f.w1, f.w1.rows, d_model, lp + ".ffn.w1");
      check_vector(f.b1, f.w1.rows, true, lp + ".ffn.b1");
      check_matrix(f.w2, d_model, f.w1.rows, lp + ".ffn.w2");
      check_vector(f.b2, d_model, true, lp + ".ffn.b2");
    }
    if (layer.attention_norm) check_norm(*layer.attention_norm, d_model, lp + ".attention_norm");
    if (layer.ffn_norm) check_norm(*layer.ffn_norm, d_model, lp + ".ffn_norm");
  }
  if (final_norm) check_norm(*final_norm, d_model, "final_norm");
  check_vector(classifier.weights, d_model, false, "classifier.weights");
}

// ---------------------------------------------------------------------------------------------
// One token through one layer
// ---------------------------------------------------------------------------------------------

HeadStep head_step(const AttentionHead& head, std::span<const Value> query,
                   std::span<const std::vector<Value>> keys,
                   std::span<const std::vector<Value>> values, const EvaluationPolicy& policy,
                   SoftmaxVariant variant) {
  if (keys.size() != values.size()) {
    throw InvalidArgument("head_step: " + std::to_string(keys.size()) + " keys but " +
                          std::to_string(values.size()) + " value vectors");
  }
  HeadStep step;
  step.scores.resize(keys.size());
  // Scores through numeric::Binary64Dot when it applies (bit for bit numeric::dot, see
  // attend_binary64); a key with a wide or non-finite entry, or a non-finite score, takes the
  // general path.
  const auto kernel = query.empty() ? std::nullopt : numeric::Binary64Dot::for_policy(policy);
  std::vector<double> q;
  bool fast = kernel.has_value() &&
              (!head.scale || (!head.scale->is_wide() && std::isfinite(head.scale->narrow())));
  for (std::size_t i = 0; fast && i < query.size(); ++i) {
    fast = !query[i].is_wide() && std::isfinite(query[i].narrow());
    q.push_back(query[i].narrow());
  }
  std::vector<double> k(query.size());
  for (std::size_t u = 0; u < keys.size(); ++u) {
    bool key_fast = fast && keys[u].size() == query.size();
    for (std::size_t i = 0; key_fast && i < k.size(); ++i) {
      key_fast = !keys[u][i].is_wide() && std::isfinite(keys[u][i].narrow());
      k[i] = keys[u][i].narrow();
    }
    if (key_fast) {
      double score = (*kernel)(q.data(), k.data(), q.size());
      if (head.scale) {
        const double scale = head.scale->narrow();
        score = (*kernel)(&score, &scale, 1);
      }
      if (std::isfinite(score)) {
        step.scores[u] = Value::from_double_exact(score);
        continue;
      }
    }
    step.scores[u] = head_score(head, query, keys[u], policy);
  }
  step.attention = attend(step.scores, values, head.value_dim, policy, variant);
  return step;
}

std::vector<Value> attention_input(const Model& model, const Layer& layer,
                                   std::span<const Value> x) {
  if (model.options.norm_placement == NormPlacement::pre && layer.attention_norm) {
    return layer_norm(*layer.attention_norm, x, model.policy);
  }
  return {x.begin(), x.end()};
}

Matrix stacked_output_matrix(const Layer& layer, std::size_t d_model) {
  std::size_t total_value = 0;
  for (const auto& head : layer.heads) total_value += head.value_dim;
  Matrix out = Matrix::zeros(d_model, total_value);
  std::size_t c0 = 0;
  for (const auto& head : layer.heads) {
    for (std::size_t r = 0; r < d_model; ++r) {
      for (std::size_t c = 0; c < head.value_dim; ++c) out.at(r, c0 + c) = head.output.at(r, c);
    }
    c0 += head.value_dim;
  }
  return out;
}

SublayerStep attention_sublayer(const Model& model, const Layer& layer, const Matrix& stacked,
                                std::span<const Value> x, std::span<const Value> concat) {
  const Arithmetic f = numeric::arithmetic(model.policy);
  SublayerStep step;
  step.sublayer = matvec(stacked, concat, layer.attention_bias, model.policy);
  step.residual.resize(model.d_model);
  for (std::size_t r = 0; r < model.d_model; ++r) step.residual[r] = f.add(x[r], step.sublayer[r]);
  if (model.options.norm_placement == NormPlacement::post && layer.attention_norm) {
    step.residual = layer_norm(*layer.attention_norm, step.residual, model.policy);
  }
  return step;
}

SublayerStep ffn_sublayer(const Model& model, const Layer& layer, std::span<const Value> h) {
  const Arithmetic f = numeric::arithmetic(model.policy);
  const bool pre = model.options.norm_placement == NormPlacement::pre;
  std::vector<Value> in(h.begin(), h.end());
  if (pre && layer.ffn_norm) in = layer_norm(*layer.ffn_norm, in, model.policy);
  SublayerStep step;
  step.sublayer = feed_forward(*layer.ffn, in, model.policy);
  step.residual.resize(model.d_model);
  for (std::size_t r = 0; r < model.d_model; ++r) step.residual[r] = f.add(h[r], step.sublayer[r]);
  if (!pre && layer.ffn_norm)
    step.residual = layer_norm(*layer.ffn_norm, step.residual, model.policy);
  return step;
}

std::vector<Value> readout(const Model& model, std::span<const Value> x_eos) {
  if (model.final_norm) return layer_norm(*model.final_norm, x_eos, model.policy);
  return {x_eos.begin(), x_eos.end()};
}

Value classifier_output(const Model& model, std::span<const Value> readout) {
  return affine(model.classifier.weights, readout, model.classifier.bias, model.policy);
}

bool accepts_output(const Value& y) { return numeric::compare(y, Value()) == 1; }

// ---------------------------------------------------------------------------------------------
// Running a model
// ---------------------------------------------------------------------------------------------

std::vector<std::string> tokenize(const Model& model, std::string_view word) {
  std::vector<std::string> pieces;
  const bool spaced = std::any_of(
      word.begin(), word.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  if (spaced) {
    std::size_t k = 0;
    while (k < word.size()) {
      while (k < word.size() && std::isspace(static_cast<unsigned char>(word[k]))) ++k;
      std::size_t e = k;
      while (e < word.size() && !std::isspace(static_cast<unsigned char>(word[e]))) ++e;
      if (e > k) pieces.emplace_back(word.substr(k, e - k));
      k = e;
    }
  } else {
    // UTF-8 code points.
    std::size_t k = 0;
    while (k < word.size()) {
      const unsigned char c = static_cast<unsigned char>(word[k]);
      std::size_t len = c < 0x80           ? 1
                        : (c >> 5) == 0x6  ? 2
                        : (c >> 4) == 0xE  ? 3
                        : (c >> 3) == 0x1E ? 4
                                           : 1;
      len = std::min(len, word.size() - k);
      pieces.emplace_back(word.substr(k, len));
      k += len;
    }
  }
  for (const auto& p : pieces) {
    if (std::find(model.embedding.alphabet.begin(), model.embedding.alphabet.end(), p) ==
        model.embedding.alphabet.end()) {
      throw InvalidArgument("symbol '" + p + "' is not in the alphabet {" +
                            join(model.embedding.alphabet, ", ") +
                            "}; a word is read character by character, or as "
                            "whitespace-separated symbols");
    }
  }
  return pieces;
}

namespace {

bool all_finite(const std::vector<Value>& v) {
  return std::all_of(v.begin(), v.end(), [](const Value& x) { return x.is_finite(); });
}

/// Records the first non-finite event in evaluation order.
struct NonFiniteTracker {
  std::optional<NonFinite> first;
  // Within the current layer: the lexicographically smallest (position index, stage, head).
  std::optional<std::tuple<std::size_t, int, std::size_t>> key;
  std::optional<NonFinite> candidate;

  void note(std::size_t t, int stage, std::size_t head, NonFinite nf) {
    if (first) return;
    const auto k = std::make_tuple(t, stage, head);
    if (!key || k < *key) {
      key = k;
      candidate = std::move(nf);
    }
  }
  void end_stage_group() {
    if (!first && candidate) first = candidate;
    key.reset();
    candidate.reset();
  }
};

NonFinite make_nf(std::string stage, std::optional<std::size_t> layer,
                  std::optional<std::uint64_t> position, std::optional<std::size_t> head) {
  NonFinite nf;
  nf.stage = stage;
  nf.layer = layer;
  nf.position = position;
  nf.head = head;
  std::string w;
  if (layer) w += "layer " + std::to_string(*layer);
  if (position) w += (w.empty() ? "" : ", ") + std::string("position ") + std::to_string(*position);
  if (head) w += (w.empty() ? "" : ", ") + std::string("head ") + std::to_string(*head);
  w += (w.empty() ? "" : " ") + stage;
  nf.where = w;
  return nf;
}

/// The first step of a mixed-format head that raised overflow / invalid, in the order
/// (layer, head, position, step) of StepException.
struct StepFlagTracker {
  std::optional<StepException> first_overflow, first_invalid;
  std::optional<std::tuple<std::size_t, std::size_t, std::size_t, std::size_t>> overflow_key,
      invalid_key;

  void note(std::size_t layer, std::size_t head, std::size_t t, std::uint64_t position,
            std::size_t step, const std::string& name, const std::string& format,
            numeric::Flags flags) {
    const auto key = std::make_tuple(layer, head, t, step);
    auto keep = [&](std::optional<StepException>& slot, auto& slot_key) {
      if (slot_key && !(key < *slot_key)) return;
      slot_key = key;
      slot = StepException{"layer " + std::to_string(layer) + ", position " +
                               std::to_string(position) + ", head " + std::to_string(head),
                           name,
                           format,
                           layer,
                           position,
                           head};
    };
    if (flags.test(numeric::Flag::overflow)) keep(first_overflow, overflow_key);
    if (flags.test(numeric::Flag::invalid)) keep(first_invalid, invalid_key);
  }
};

}  // namespace

RunResult run(const Model& model, std::string_view word, const RunOptions& options) {
  model.validate();
  const EvaluationPolicy& policy = model.policy;
  const std::vector<std::string> symbols = tokenize(model, word);
  RunResult result;
  const std::uint64_t first_position = model.options.bos ? 0 : 1;
  std::vector<std::vector<Value>> x;  // residual stream per token
  if (model.options.bos) {
    result.tokens.push_back("BOS");
    x.push_back(model.embedding.bos);
  }
  for (const auto& s : symbols) {
    result.tokens.push_back(s);
    const auto it = std::find(model.embedding.alphabet.begin(), model.embedding.alphabet.end(), s);
    x.push_back(
        model.embedding.symbols[static_cast<std::size_t>(it - model.embedding.alphabet.begin())]);
  }
  result.tokens.push_back("EOS");
  x.push_back(model.embedding.eos);
  const std::size_t n_tokens = x.size();
  for (std::size_t t = 0; t < n_tokens; ++t) result.positions.push_back(first_position + t);
  result.eos_position = result.positions.back();
  const std::uint64_t n_positions = result.eos_position + 1;

  // Traced token indices.
  std::vector<bool> traced(n_tokens, options.trace_all);
  for (std::uint64_t p : options.trace_positions) {
    if (p < first_position || p > result.eos_position) {
      throw InvalidArgument(
          "trace position " + std::to_string(p) + " does not exist; positions are " +
          std::to_string(first_position) + ".." + std::to_string(result.eos_position) +
          (model.options.bos ? " (BOS at 0, EOS at N+1)" : " (no BOS; EOS at N+1)"));
    }
    traced[static_cast<std::size_t>(p - first_position)] = true;
  }
  for (std::size_t t = 0; t < n_tokens; ++t) {
    if (traced[t]) {
      result.traced.push_back(result.positions[t]);
      result.traced_embeddings.push_back(x[t]);
    }
  }

  NonFiniteTracker tracker;
  StepFlagTracker steps;
  for (const Layer& layer : model.layers) {
    for (const AttentionHead& head : layer.heads)
      result.step_flags = result.step_flags || head.formats.has_value();
  }
  for (std::size_t t = 0; t < n_tokens; ++t) {
    if (!all_finite(x[t]))
      tracker.note(t, 0, 0, make_nf("embedding", std::nullopt, result.positions[t], std::nullopt));
  }
  tracker.end_stage_group();

  const bool strict = model.options.masking == Masking::strict;
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const Layer& layer = model.layers[l];
    std::vector<PositionTrace> traces;
    std::vector<std::size_t> trace_index(n_tokens, SIZE_MAX);
    for (std::size_t t = 0; t < n_tokens; ++t) {
      if (traced[t]) {
        trace_index[t] = traces.size();
        PositionTrace pt;
        pt.position = result.positions[t];
        pt.token = result.tokens[t];
        pt.input = x[t];
        traces.push_back(std::move(pt));
      }
    }
    std::vector<std::vector<Value>> h = x;
    if (!layer.heads.empty()) {
      std::vector<std::vector<Value>> in(n_tokens);
      for (std::size_t t = 0; t < n_tokens; ++t) in[t] = attention_input(model, layer, x[t]);
      // Head outputs per token, concatenated over heads.
      std::vector<std::vector<Value>> concat(n_tokens);
      for (std::size_t hi = 0; hi < layer.heads.size(); ++hi) {
        const AttentionHead& head = layer.heads[hi];
        const HeadRotations rot = realise_head(head, n_positions, policy);
        std::vector<std::vector<Value>> q(n_tokens), k(n_tokens), v(n_tokens);
        for (std::size_t t = 0; t < n_tokens; ++t) {
          q[t] = head_query(head, rot, result.positions[t], in[t], policy);
          k[t] = head_key(head, rot, result.positions[t], in[t], policy);
          v[t] = head_value(head, in[t], policy);
          if (head.formats) {  // 1. the stores of the mixed-format head (head_formats.hpp)
            const HeadFormats& hf = *head.formats;
            numeric::Flags fq, fk, fv;
            q[t] = store_tensor(q[t], hf.query_format(policy), hf.query.scale, policy, fq);
            k[t] = store_tensor(k[t], hf.key_format(policy), hf.key.scale, policy, fk);
            v[t] = store_tensor(v[t], hf.value_format(policy), hf.value.scale, policy, fv);
            steps.note(l, hi, t, result.positions[t], 0, "query store",
                       hf.query_format(policy).name, fq);
            steps.note(l, hi, t, result.positions[t], 1, "key store", hf.key_format(policy).name,
                       fk);
            steps.note(l, hi, t, result.positions[t], 2, "value store",
                       hf.value_format(policy).name, fv);
          }
        }
        for (std::size_t t = 0; t < n_tokens; ++t) {
          const std::size_t visible = strict ? t : t + 1;
          HeadStep step;
          std::size_t included = visible;
          if (head.formats) {
            // With an additive mask every key stays in the softmax (the masked ones shifted by it).
            included = head.formats->mask ? n_tokens : visible;
            MixedHeadStep mixed = mixed_head_step(
                head, *head.formats, q[t], std::span<const std::vector<Value>>(k.data(), included),
                std::span<const std::vector<Value>>(v.data(), included), visible, policy,
                model.options.softmax);
            for (std::size_t s = 0; s < mixed.steps.size(); ++s) {
              steps.note(l, hi, t, result.positions[t], 3 + s, mixed.steps[s].step,
                         mixed.steps[s].format, mixed.steps[s].flags);
            }
            step.scores = std::move(mixed.scores);
            step.attention.weights = std::move(mixed.weights);
            step.attention.output = std::move(mixed.output);
          } else {
            step = head_step(head, q[t], std::span<const std::vector<Value>>(k.data(), visible),
                             std::span<const std::vector<Value>>(v.data(), visible), policy,
                             model.options.softmax);
          }
          std::vector<Value>& scores = step.scores;
          const AttentionOutput& a = step.attention;
          // the masked scores of a mixed-format head are -inf by design: only the visible ones
          // count
          const std::span<const Value> checked(scores.data(), std::min(scores.size(), visible));
          if (!std::all_of(checked.begin(), checked.end(),
                           [](const Value& x) { return x.is_finite(); })) {
            tracker.note(t, 1, hi, make_nf("scores", l, result.positions[t], hi));
          }
          if (!all_finite(a.weights))
            tracker.note(t, 2, hi, make_nf("weights", l, result.positions[t], hi));
          if (!all_finite(a.output))
            tracker.note(t, 3, hi, make_nf("head output", l, result.positions[t], hi));
          concat[t].insert(concat[t].end(), a.output.begin(), a.output.end());
          if (trace_index[t] != SIZE_MAX) {
            HeadTrace ht;
            ht.name = head.name;
            ht.query = q[t];
            for (std::size_t u = 0; u < included; ++u) ht.keys.push_back(result.positions[u]);
            ht.scores = std::move(scores);
            ht.weights = a.weights;
            ht.output = a.output;
            traces[trace_index[t]].heads.push_back(std::move(ht));
          }
        }
      }
      // Attention sublayer output: one sum per coordinate over all heads' output matrices.
      const Matrix out = stacked_output_matrix(layer, model.d_model);
      for (std::size_t t = 0; t < n_tokens; ++t) {
        SublayerStep step = attention_sublayer(model, layer, out, x[t], concat[t]);
        const std::vector<Value>& a = step.sublayer;
        std::vector<Value>& sum_v = step.residual;
        if (!all_finite(a))
          tracker.note(t, 4, 0, make_nf("attention", l, result.positions[t], std::nullopt));
        if (!all_finite(sum_v))
          tracker.note(t, 5, 0, make_nf("after attention", l, result.positions[t], std::nullopt));
        if (trace_index[t] != SIZE_MAX) {
          traces[trace_index[t]].attention = a;
          traces[trace_index[t]].after_attention = sum_v;
        }
        h[t] = std::move(sum_v);
      }
    } else {
      for (std::size_t t = 0; t < n_tokens; ++t) {
        if (trace_index[t] != SIZE_MAX) traces[trace_index[t]].after_attention = h[t];
      }
    }
    std::vector<std::vector<Value>> next = h;
    if (layer.ffn) {
      for (std::size_t t = 0; t < n_tokens; ++t) {
        SublayerStep step = ffn_sublayer(model, layer, h[t]);
        const std::vector<Value>& y = step.sublayer;
        std::vector<Value>& o = step.residual;
        if (!all_finite(y))
          tracker.note(t, 6, 0, make_nf("ffn", l, result.positions[t], std::nullopt));
        if (trace_index[t] != SIZE_MAX) traces[trace_index[t]].ffn = y;
        next[t] = std::move(o);
      }
    }
    for (std::size_t t = 0; t < n_tokens; ++t) {
      if (!all_finite(next[t]))
        tracker.note(t, 7, 0, make_nf("output", l, result.positions[t], std::nullopt));
      if (trace_index[t] != SIZE_MAX) traces[trace_index[t]].output = next[t];
    }
    tracker.end_stage_group();
    x = std::move(next);
    result.layers.push_back(std::move(traces));
  }
  result.readout = readout(model, x.back());
  if (!all_finite(result.readout)) {
    tracker.note(0, 0, 0, make_nf("readout", std::nullopt, result.eos_position, std::nullopt));
  }
  tracker.end_stage_group();
  result.output = classifier_output(model, result.readout);
  if (!result.output.is_finite()) {
    tracker.note(0, 0, 0, make_nf("classifier", std::nullopt, std::nullopt, std::nullopt));
  }
  tracker.end_stage_group();
  result.first_non_finite = tracker.first;
  result.first_overflow = steps.first_overflow;
  result.first_invalid = steps.first_invalid;
  result.accept = accepts_output(result.output);
  return result;
}

namespace {

nlohmann::json values_json(const std::vector<Value>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& x : v) a.push_back(exact_decimal(x));
  return a;
}

}  // namespace

nlohmann::json to_json(const RunResult& result, std::string_view word) {
  nlohmann::json j;
  j["input"] = std::string(word);
  j["tokens"] = result.tokens;
  j["positions"] = result.positions;
  j["accept"] = result.accept;
  if (result.output.is_finite()) {
    j["output"] = result.output.to_double();
  } else {
    j["output"] = exact_decimal(result.output);
  }
  j["output_exact"] = exact_decimal(result.output);
  if (result.first_non_finite) {
    const NonFinite& nf = *result.first_non_finite;
    nlohmann::json n;
    n["where"] = nf.where;
    n["stage"] = nf.stage;
    n["layer"] = nf.layer ? nlohmann::json(*nf.layer) : nlohmann::json(nullptr);
    n["position"] = nf.position ? nlohmann::json(*nf.position) : nlohmann::json(nullptr);
    n["head"] = nf.head ? nlohmann::json(*nf.head) : nlohmann::json(nullptr);
    j["first_non_finite"] = n;
  } else {
    j["first_non_finite"] = nullptr;
  }
  if (result.step_flags) {
    auto step_json = [](const std::optional<StepException>& e) {
      if (!e) return nlohmann::json(nullptr);
      return nlohmann::json{{"where", e->where}, {"step", e->step},         {"format", e->format},
                            {"layer", e->layer}, {"position", e->position}, {"head", e->head}};
    };
    j["first_overflow"] = step_json(result.first_overflow);
    j["first_invalid"] = step_json(result.first_invalid);
  }
  if (!result.traced.empty()) {
    nlohmann::json trace;
    trace["positions"] = result.traced;
    nlohmann::json emb = nlohmann::json::array();
    for (std::size_t k = 0; k < result.traced.size(); ++k) {
      emb.push_back(
          {{"position", result.traced[k]}, {"vector", values_json(result.traced_embeddings[k])}});
    }
    trace["embeddings"] = emb;
    nlohmann::json layers = nlohmann::json::array();
    for (std::size_t l = 0; l < result.layers.size(); ++l) {
      nlohmann::json positions = nlohmann::json::array();
      for (const auto& pt : result.layers[l]) {
        nlohmann::json p;
        p["position"] = pt.position;
        p["token"] = pt.token;
        p["input"] = values_json(pt.input);
        nlohmann::json heads = nlohmann::json::array();
        for (std::size_t hi = 0; hi < pt.heads.size(); ++hi) {
          const HeadTrace& ht = pt.heads[hi];
          heads.push_back({{"head", hi},
                           {"name", ht.name},
                           {"query", values_json(ht.query)},
                           {"keys", ht.keys},
                           {"scores", values_json(ht.scores)},
                           {"weights", values_json(ht.weights)},
                           {"output", values_json(ht.output)}});
        }
        p["heads"] = heads;
        p["attention"] = values_json(pt.attention);
        p["after_attention"] = values_json(pt.after_attention);
        p["ffn"] = values_json(pt.ffn);
        p["output"] = values_json(pt.output);
        positions.push_back(p);
      }
      layers.push_back({{"layer", l}, {"positions", positions}});
    }
    trace["layers"] = layers;
    trace["readout"] = values_json(result.readout);
    j["trace"] = trace;
  }
  return j;
}

}  // namespace ropesim::attention

namespace ropesim::attention {

ModelShape shape_of(const Model& model) {
  ModelShape shape;
  shape.d_model = static_cast<double>(model.d_model);
  shape.symbols = static_cast<double>(model.embedding.alphabet.size());
  for (const auto& layer : model.layers) {
    shape.layers += 1;
    for (const auto& h : layer.heads) {
      shape.heads += 1;
      shape.head_dims += static_cast<double>(h.head_dim);
      shape.value_dims += static_cast<double>(h.value_dim);
    }
    if (layer.ffn) {
      shape.ffn_layers += 1;
      shape.hidden += static_cast<double>(layer.ffn->w1.rows);
    }
  }
  return shape;
}

WorkEstimate run_work(const ModelShape& shape, std::uint64_t symbols) {
  const double n = static_cast<double>(symbols) + 2;  // BOS w EOS
  const double d = shape.d_model;
  // Per head and (query, key): scores, exp and weighted values; per position: the projections
  // and outputs of every head and the FFN.
  const double per_layer_quadratic = (shape.head_dims + shape.value_dims + 2 * shape.heads) / 2;
  const double per_position =
      d * 2 + 2 * d * (shape.head_dims + shape.value_dims) + 2 * shape.hidden * d;
  WorkEstimate e;
  e.what = "multiply-adds in F";
  e.units = per_layer_quadratic * n * n + per_position * n;
  e.units_per_second = 5e6;  // measured: 5.6e6/s on a 2000-symbol word, 1e7/s over short words
  e.bytes = n * d * 64 * (shape.layers + 1);
  return e;
}

WorkEstimate run_work(const Model& model, std::uint64_t symbols) {
  return run_work(shape_of(model), symbols);
}

}  // namespace ropesim::attention
