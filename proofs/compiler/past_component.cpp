#include "proofs/compiler/past_component.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <unordered_set>

#include "core/error.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/json_number.hpp"

namespace ropesim::proofs {

using attention::exact_rational;
using numeric::exact_decimal;
using numeric::Value;

namespace {

std::string cache_key(const attention::EvaluationPolicy& p, const mpq_class& f1,
                      const mpq_class& f2, std::uint64_t limit) {
  return p.format.name + "|" + std::to_string(p.format.precision) + "|" +
         std::string(numeric::to_string(p.rounding)) + "|" + f1.get_str() + "|" + f2.get_str() +
         "|" + std::to_string(limit) + "|" +
         std::to_string(reinterpret_cast<std::uintptr_t>(&p.arithmetic_engine()));
}

}  // namespace

mpq_class past_threshold_f1() { return mpq_class(1, 4); }
mpq_class past_threshold_f2() { return mpq_class(1, 2); }

PastCertificate certify_past_head(
    const attention::EvaluationPolicy& policy, const mpq_class& f1, const mpq_class& f2,
    std::uint64_t limit, const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  if (policy.summation != attention::Summation::sequential) {
    throw Refusal(RefusalReason::summation,
                  "the compiler certifies P heads under sequential summation only, got " +
                      std::string(numeric::to_string(policy.summation)));
  }
  static std::mutex mutex;
  static std::map<std::string, PastCertificate> cache;
  const std::string key = cache_key(policy, f1, f2, limit);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  (void)f_large_or_refuse(policy);
  const numeric::Arithmetic a = numeric::arithmetic(policy);
  require_exact(a, f1, "the re-binarisation threshold f1");
  require_exact(a, f2, "the re-binarisation threshold f2");
  require_exact(a, 1 / (f2 - f1), "the re-binarisation scale 1/(f2 - f1)");

  // The realised re-binarisation FFN on its own (the model's FFN row for a P coordinate adds
  // only exact zeros to it: other inputs have weight 0 and other hidden units weight 0).
  ResidualSpace mini;
  mini.add("top");
  mini.add("h");
  mini.add("out");
  const attention::FeedForward ffn =
      assemble_feed_forward(rebinarise_units("h", "out", f1, f2), mini, a);
  const Value zero = a.zero(), one = a.one();
  auto rebinarise = [&](const Value& h) {
    const std::vector<Value> x = {one, h, zero};
    return attention::feed_forward(ffn, x, policy)[2];
  };

  PastCertificate cert;
  cert.limit = limit;
  cert.f1 = a.from_rational(f1);
  cert.f2 = a.from_rational(f2);
  const Value at_zero = rebinarise(zero);
  if (!at_zero.is_zero()) {
    cert.first_failure = 0;
    cert.certified_count = 0;
    cert.min_output = cert.max_output = zero;
    return cert;
  }
  std::unordered_set<std::uint64_t> good;  // bits of outputs h whose re-binarisation is 1
  Value Z = zero, h = zero;
  bool z_stagnant = false;
  Value alpha = zero;
  bool first = true;
  for (std::uint64_t c = 1; c <= limit; ++c) {
    if (progress && (c & 63) == 0) progress(c, limit);
    const Value z_next = a.add(Z, one);
    if (!z_stagnant && c > 1 && z_next.same_bits(Z)) z_stagnant = true;
    Value h_next;
    if (z_stagnant) {
      // α_c = α_{c−1}: h(c) = round(h(c−1) + α).
      h_next = a.add(h, alpha);
    } else {
      alpha = a.div(one, z_next);
      h_next = zero;
      for (std::uint64_t k = 0; k < c; ++k) h_next = a.add(h_next, alpha);
    }
    Z = z_next;
    const bool h_stagnant = z_stagnant && h_next.same_bits(h);
    h = h_next;
    if (good.count(h.bits_key()) == 0) {
      const Value r = rebinarise(h);
      if (!(r.is_finite() && exact_rational(r) == 1)) {
        cert.first_failure = c;
        cert.certified_count = c - 1;
        break;
      }
      good.insert(h.bits_key());
    }
    if (first || numeric::compare(h, cert.min_output) < 0) cert.min_output = h;
    if (first || numeric::compare(h, cert.max_output) > 0) cert.max_output = h;
    first = false;
    if (h_stagnant) {
      // Z and h no longer change: h(c') = h(c) for every c' ≥ c, already certified.
      cert.stagnation_count = c;
      cert.certified_count = std::nullopt;
      break;
    }
    if (c == limit) cert.certified_count = limit;
  }
  if (first) cert.min_output = cert.max_output = zero;
  const std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, cert);
  return cert;
}

WorkEstimate certify_past_head_work(const attention::EvaluationPolicy& policy,
                                    std::uint64_t limit) {
  const double exact_counts = std::ldexp(1.0, std::min(policy.format.precision, 63));
  const double counts = std::min(static_cast<double>(limit), exact_counts);
  WorkEstimate e;
  e.what = "additions in " + policy.format.name + " (the P-head certificate up to --certify)";
  e.units = counts * (counts + 1) / 2 + std::max(0.0, static_cast<double>(limit) - counts);
  e.units_per_second = 7.5e7;
  return e;
}

PastCertificate certify_past_heads(
    const attention::EvaluationPolicy& policy, std::uint64_t limit,
    const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  PastCertificate cert =
      certify_past_head(policy, past_threshold_f1(), past_threshold_f2(), limit, progress);
  if (cert.certified_count && *cert.certified_count == 0) {
    throw Refusal(RefusalReason::past_head,
                  "P head refused in " + policy.format.name +
                      ": the re-binarisation (f1 = 1/4, f2 = 1/2) of the head output" +
                      std::string(cert.first_failure && *cert.first_failure > 0
                                      ? " for one earlier position carrying psi"
                                      : " at 0") +
                      " is not exactly 1/0 (THEORY §7 C1 Patch 2)");
  }
  return cert;
}

std::vector<Component> past_components(const ResidualSpace& space, const std::string& psi,
                                       const std::string& raw, const std::string& out,
                                       const std::string& node, const Value& f_large,
                                       const PastCertificate& certificate,
                                       const numeric::Arithmetic& a) {
  Component head;
  head.sublayer = Sublayer::attention;
  head.head = past_head(space, psi, raw, f_large, a, node);
  head.description = {"P",
                      node,
                      {psi},
                      {raw},
                      {{"query_bias", numeric::number_text("1")},
                       {"key_weight", numeric::exact_decimal_json(f_large)},
                       {"value_weight", numeric::number_text("1")}}};
  head.raw_outputs = {
      {raw, a.zero(), a.zero(), RawOutputRange::Want::zero},
      {raw, certificate.min_output, certificate.max_output, RawOutputRange::Want::one}};
  Component rebinarise;
  rebinarise.sublayer = Sublayer::feed_forward;
  rebinarise.units = rebinarise_units(raw, out, past_threshold_f1(), past_threshold_f2());
  rebinarise.description = {"rebinarise",
                            node,
                            {raw, "top"},
                            {out},
                            {{"f1", numeric::exact_decimal_json(certificate.f1)},
                             {"f2", numeric::exact_decimal_json(certificate.f2)},
                             {"scale", numeric::number_text("4")}}};
  return {std::move(head), std::move(rebinarise)};
}

}  // namespace ropesim::proofs
