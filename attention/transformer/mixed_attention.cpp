// Mixed-format attention heads (THEORY §2 with per-tensor formats; NUMERIC §4). See
// mixed_attention.hpp and head_formats.hpp for the contracts.
#include "attention/transformer/mixed_attention.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "numeric/arithmetic.hpp"
#include "numeric/exact_decimal.hpp"

namespace ropesim::attention {

using numeric::AccumulatorModel;
using numeric::Flag;
using numeric::Flags;
using numeric::Format;

AccumulatorModel HeadFormats::score_accumulator_model(const EvaluationPolicy& p) const {
  if (score_accumulator) return *score_accumulator;
  AccumulatorModel m;
  m.format = scores_format(p);
  m.rounding = p.rounding;
  return m;
}

AccumulatorModel HeadFormats::value_accumulator_model(const EvaluationPolicy& p) const {
  if (value_accumulator) return *value_accumulator;
  AccumulatorModel m;
  m.format = softmax_format(p);
  m.rounding = p.rounding;
  return m;
}

const std::vector<std::string>& mixed_head_steps() {
  static const std::vector<std::string> steps = {"query store",          "key store",
                                                 "value store",          "q·k accumulation",
                                                 "score store",          "score dequantisation",
                                                 "score scale",          "mask",
                                                 "softmax subtraction",  "softmax exp",
                                                 "softmax sum",          "softmax division",
                                                 "probability store",    "value accumulation",
                                                 "value dequantisation", "output store"};
  return steps;
}

namespace {

/// Indices into mixed_head_steps() of the steps of one query (scores onwards).
enum Step : std::size_t {
  accumulation = 3,
  score_store,
  score_dequantisation,
  score_scale,
  mask_step,
  softmax_subtraction,
  softmax_exp,
  softmax_sum,
  softmax_division,
  probability_store,
  value_accumulation,
  value_dequantisation,
  output_store,
};

/// rnd(a·b) in the arithmetic's format from the exact product (a, b of any formats).
Value product(const Value& a, const Value& b, const numeric::Arithmetic& f, Flags& flags) {
  numeric::AccumulatorModel single;
  single.format = f.format();
  single.rounding = f.rounding();
  const Value x[1] = {a}, y[1] = {b};
  return numeric::accumulate_dot(x, y, single, f.engine(), &flags);
}

}  // namespace

std::vector<Value> store_tensor(std::span<const Value> x, const Format& format,
                                const std::optional<Value>& scale, const EvaluationPolicy& policy,
                                Flags& flags) {
  const numeric::Arithmetic s(format, policy.rounding, policy.arithmetic_engine());
  std::vector<Value> out;
  out.reserve(x.size());
  for (const Value& v : x) {
    if (!scale || !v.is_finite() || v.is_zero()) {
      // ±inf / scale = ±inf, NaN stays NaN, ±0 / scale = ±0 (scale > 0)
      out.push_back(s.convert(v, flags));
    } else {
      out.push_back(
          s.from_rational(numeric::exact_rational(v) / numeric::exact_rational(*scale), flags));
    }
  }
  return out;
}

MixedHeadStep mixed_head_step(const AttentionHead& head, const HeadFormats& formats,
                              std::span<const Value> query,
                              std::span<const std::vector<Value>> keys,
                              std::span<const std::vector<Value>> values, std::size_t unmasked,
                              const EvaluationPolicy& policy, SoftmaxVariant variant) {
  if (keys.size() != values.size()) {
    throw InvalidArgument("mixed_head_step: " + std::to_string(keys.size()) + " keys but " +
                          std::to_string(values.size()) + " value vectors");
  }
  if (unmasked > keys.size()) unmasked = keys.size();
  if (unmasked < keys.size() && !formats.mask) {
    throw InvalidArgument("mixed_head_step: masked keys need an additive mask (formats.mask)");
  }
  if (variant == SoftmaxVariant::online) {
    throw InvalidArgument(
        "mixed_head_step: the online softmax is not modelled with per-tensor formats; "
        "accepted: stable, no-max-subtraction");
  }
  const numeric::Engine& engine = policy.arithmetic_engine();
  const numeric::Arithmetic f = numeric::arithmetic(policy);
  const Format& s_format = formats.scores_format(policy);
  const Format& sm_format = formats.softmax_format(policy);
  const numeric::Arithmetic s(s_format, policy.rounding, engine);
  const numeric::Arithmetic sm(sm_format, policy.rounding, engine);
  const numeric::Arithmetic o(formats.output_format(policy), policy.rounding, engine);
  const AccumulatorModel score_acc = formats.score_accumulator_model(policy);
  const AccumulatorModel value_acc = formats.value_accumulator_model(policy);
  // W, the value accumulator's result format, with the rounding of its last step
  const numeric::Arithmetic w(
      value_acc.result_format(),
      value_acc.promotion ? value_acc.promotion->rounding : value_acc.rounding, engine);

  MixedHeadStep out;
  const auto& names = mixed_head_steps();
  std::vector<Flags> flags(names.size());
  auto record = [&] {
    const std::string formats_of[] = {
        formats.query_format(policy).name,
        formats.key_format(policy).name,
        formats.value_format(policy).name,
        score_acc.result_format().name,
        s_format.name,
        s_format.name,
        s_format.name,
        s_format.name,
        sm_format.name,
        sm_format.name,
        sm_format.name,
        sm_format.name,
        formats.probabilities ? formats.probabilities->name : sm_format.name,
        value_acc.result_format().name,
        value_acc.result_format().name,
        formats.output_format(policy).name};
    for (std::size_t k = accumulation; k < names.size(); ++k) {
      out.steps.push_back({names[k], formats_of[k], flags[k]});
    }
  };
  for (const auto& k : keys) {
    if (k.size() != query.size()) {
      throw InvalidArgument("mixed_head_step: a key of length " + std::to_string(k.size()) +
                            " for a query of length " + std::to_string(query.size()));
    }
  }
  for (const auto& v : values) {
    if (v.size() != head.value_dim) {
      throw InvalidArgument("mixed_head_step: a value vector has length " +
                            std::to_string(v.size()) + ", expected " +
                            std::to_string(head.value_dim));
    }
  }
  if (keys.empty()) {
    out.output.assign(head.value_dim, Value());  // THEORY §2: no visible key → zero vector
    record();
    return out;
  }

  // 2. scores
  std::optional<Value> dequant;
  if (formats.query.scale || formats.key.scale) {
    const Value one = Value::from_double_exact(1.0);
    dequant = product(formats.query.scale.value_or(one), formats.key.scale.value_or(one), s,
                      flags[score_dequantisation]);
  }
  out.scores.reserve(keys.size());
  for (std::size_t j = 0; j < keys.size(); ++j) {
    const Value a =
        numeric::accumulate_dot(query, keys[j], score_acc, engine, &flags[accumulation]);
    Value score = s.convert(a, flags[score_store]);
    if (dequant) score = product(score, *dequant, s, flags[score_dequantisation]);
    if (head.scale) score = product(score, *head.scale, s, flags[score_scale]);
    // 3. the additive mask on the keys the causal masking hides
    if (j >= unmasked) score = s.add(score, *formats.mask, flags[mask_step]);
    out.scores.push_back(score);
  }

  // 4. softmax in Σ
  std::vector<Value> x(out.scores.size());
  for (std::size_t j = 0; j < x.size(); ++j)
    x[j] = sm.convert(out.scores[j], flags[softmax_subtraction]);
  std::vector<Value> e(x.size());
  if (variant == SoftmaxVariant::stable) {
    Value m = x[0];
    for (std::size_t j = 1; j < x.size(); ++j) m = sm.max(m, x[j]);
    for (std::size_t j = 0; j < x.size(); ++j) {
      e[j] = sm.exp(sm.sub(x[j], m, flags[softmax_subtraction]), flags[softmax_exp]);
    }
  } else {
    for (std::size_t j = 0; j < x.size(); ++j) e[j] = sm.exp(x[j], flags[softmax_exp]);
  }
  Value z = e[0];
  for (std::size_t j = 1; j < e.size(); ++j) z = sm.add(z, e[j], flags[softmax_sum]);
  out.weights.reserve(e.size());
  const numeric::Arithmetic p(formats.probabilities.value_or(sm_format), policy.rounding, engine);
  for (const Value& t : e) {
    Value alpha = sm.div(t, z, flags[softmax_division]);
    // 5. probabilities cast before the P·V product
    if (formats.probabilities) alpha = p.convert(alpha, flags[probability_store]);
    out.weights.push_back(alpha);
  }

  // 6.–7. values and output
  std::vector<Value> column(values.size());
  out.output.reserve(head.value_dim);
  for (std::size_t d = 0; d < head.value_dim; ++d) {
    for (std::size_t j = 0; j < values.size(); ++j) column[j] = values[j][d];
    Value v =
        numeric::accumulate_dot(out.weights, column, value_acc, engine, &flags[value_accumulation]);
    if (formats.value.scale) v = product(v, *formats.value.scale, w, flags[value_dequantisation]);
    v = o.convert(v, flags[output_store]);
    out.output.push_back(f.convert(v, flags[output_store]));
  }
  record();
  return out;
}

void check_head_formats(const HeadFormats& formats, SoftmaxVariant variant,
                        const std::string& path) {
  if (variant == SoftmaxVariant::online) {
    throw InvalidArgument(path +
                          ": per-tensor formats are modelled with the stable and "
                          "no-max-subtraction softmax only (architecture.softmax is online)");
  }
  const std::pair<const char*, const TensorFormat*> tensors[] = {
      {"query", &formats.query}, {"key", &formats.key}, {"value", &formats.value}};
  for (const auto& [name, t] : tensors) {
    if (!t->scale) continue;
    const Value& sc = *t->scale;
    if (!sc.is_finite() || sc.is_zero() || sc.sign_bit()) {
      throw InvalidArgument(path + "." + name + ".scale: must be positive and finite, got " +
                            exact_decimal(sc));
    }
  }
  for (const auto* acc : {&formats.score_accumulator, &formats.value_accumulator}) {
    if (*acc && (*acc)->promotion && (*acc)->promotion->interval == 0) {
      throw InvalidArgument(path + "." + (acc == &formats.score_accumulator ? "scores" : "values") +
                            ".accumulator.promote_every: must be at least 1");
    }
  }
  if (formats.mask && formats.mask->is_nan()) {
    throw InvalidArgument(path + ".mask: NaN is not a mask; accepted: a number or \"-inf\"");
  }
}

// ---------------------------------------------------------------------------------------------
// The long accumulation (a 4096-term dot product, accumulator models)
// ---------------------------------------------------------------------------------------------

namespace {

struct Lcg {
  std::uint64_t x;
  std::uint64_t next() { return x = 6364136223846793005ULL * x + 1442695040888963407ULL; }
  /// ±m·2^(e−7), m ∈ [128, 256), e ∈ [−5, −2]: an exact bf16 value.
  double bf16() {
    const std::uint64_t r = next();
    const double m = 128.0 + static_cast<double>(r >> 57);
    const int e = static_cast<int>((r >> 40) % 4) - 5;
    return ((r >> 39) & 1 ? -1.0 : 1.0) * std::ldexp(m, e - 7);
  }
};

}  // namespace

WorkEstimate accumulation_work(const AccumulationCase& c) {
  const double terms = static_cast<double>(c.terms), keys = static_cast<double>(c.keys);
  const double accumulators = static_cast<double>(std::max<std::size_t>(c.accumulators.size(), 1));
  WorkEstimate e;
  e.what = "products (terms x keys x (accumulators + 1))";
  e.units = terms * keys * (accumulators + 1);
  e.units_per_second = 5e6;  // measured: 10^6 terms x 8 keys x 4 in 6.3 s, 10^5 x 64 x 4 in 5.3 s
  // The query and the keys as Values, and per accumulator the rounded products of one key
  // (a Value each) while it is summed (measured: 218 MB for 10^6 terms x 8 keys, 159 MB for
  // 10^5 x 64, against 216 MB and 156 MB for the Values).
  e.bytes = terms * (keys + 1) * static_cast<double>(sizeof(Value)) + accumulators * terms * 64;
  return e;
}

AccumulationResult run_accumulation_case(const AccumulationCase& c, const numeric::Engine& engine) {
  if (c.terms < 1 || c.terms > 1'000'000) {
    throw InvalidArgument("accumulation case: terms must be between 1 and 1000000, got " +
                          std::to_string(c.terms));
  }
  if (c.keys < 1 || c.keys > 4096) {
    throw InvalidArgument("accumulation case: keys must be between 1 and 4096, got " +
                          std::to_string(c.keys));
  }
  if (c.accumulators.empty()) throw InvalidArgument("accumulation case: no accumulator to compare");
  Lcg g{c.seed};
  std::vector<Value> q(c.terms);
  for (auto& v : q) v = Value::from_double_exact(g.bf16());
  std::vector<std::vector<Value>> keys(c.keys);
  keys[0] = q;  // the needle
  for (std::size_t j = 1; j < c.keys; ++j) {
    keys[j].resize(c.terms);
    for (auto& v : keys[j]) v = Value::from_double_exact(g.bf16());
  }
  const std::vector<std::vector<Value>> values(c.keys);  // value_dim 0: weights only

  EvaluationPolicy policy;
  policy.format = Format::fp32();
  policy.engine = &engine;
  const numeric::Arithmetic f = numeric::arithmetic(policy);
  AttentionHead head;
  head.head_dim = c.terms;
  head.value_dim = 0;
  head.scale =
      f.div(f.one(), f.sqrt(f.from_integer(mpz_class(static_cast<unsigned long>(c.terms)))));

  AccumulationResult result;
  for (const auto& k : keys) {
    mpq_class exact = 0;
    for (std::size_t i = 0; i < c.terms; ++i)
      exact += numeric::exact_rational(q[i]) * numeric::exact_rational(k[i]);
    result.exact_dots.push_back(exact);
  }
  for (const auto& acc : c.accumulators) {
    HeadFormats formats;
    formats.scores = Format::fp32();
    formats.score_accumulator = acc;
    formats.softmax = Format::fp32();
    const MixedHeadStep step = mixed_head_step(head, formats, q, keys, values, keys.size(), policy,
                                               SoftmaxVariant::stable);
    result.rows.push_back({acc, step.scores, step.weights});
  }
  return result;
}

}  // namespace ropesim::attention
