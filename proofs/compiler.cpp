#include "proofs/compiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "automata/dfa.hpp"
#include "logic/fragment.hpp"
#include "numeric/budget.hpp"
#include "numeric/engine.hpp"
#include "numeric/error.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/fixed_offset_head.hpp"
#include "proofs/gadgets.hpp"
#include "proofs/horizon.hpp"  // dyadic_decimal, horizon (C = auto of the Y^k head)

namespace ropesim::proofs {

using attention::exact_decimal;
using attention::exact_rational;
using ltl::NodeId;
using ltl::Operator;
using numeric::Value;

namespace {

/// The re-binarisation thresholds (THEORY §7 C1 Patch 2): f1 = 1/4, f2 = 1/2, f2 − f1 = 1/4 a
/// power of two. For h in [1/2, 2) and p ≥ 3, h − 1/4 and h − 1/2 are exact in F (both are
/// multiples of ulp(h)/2 … and lie within a binade of h, Sterbenz-style), so 4·(h − 1/4) −
/// 4·(h − 1/2) = 1 exactly; h = 0 gives ReLU(−1/4) = ReLU(−1/2) = 0. The compiler does not rely
/// on this argument: certify_past_head evaluates the realised FFN on every h the head outputs.
const mpq_class kF1(1, 4);
const mpq_class kF2(1, 2);

std::string decimal(const Value& v) { return exact_decimal(v); }

/// The constants the gadgets need exactly in F.
void require_exact(const numeric::Arithmetic& a, const mpq_class& q, const std::string& what,
                   RefusalReason reason = RefusalReason::exact_constant) {
  const Value v = a.from_rational(q);
  if (!v.is_finite() || exact_rational(v) != q) {
    throw Refusal(reason, "the compiler needs " + what + " = " + q.get_str() + " exactly in " +
                              a.format().name + ", which rounds it to " + decimal(v));
  }
}

Value f_large_or_refuse(const attention::EvaluationPolicy& policy) {
  const auto fl = numeric::f_large(policy.format, policy.rounding);
  if (!fl) {
    throw Refusal(RefusalReason::no_f_large,
                  "f_large(" + policy.format.name + ") is undefined under rounding " +
                      std::string(numeric::to_string(policy.rounding)) +
                      ": no finite score lead makes softmax select exactly, so no P or MOD head "
                      "works (THEORY §1); use nearest-even, nearest-away, toward-zero or downward");
  }
  return *fl;
}

std::string cache_key(const attention::EvaluationPolicy& p, const mpq_class& f1,
                      const mpq_class& f2, std::uint64_t limit) {
  return p.format.name + "|" + std::to_string(p.format.precision) + "|" +
         std::string(numeric::to_string(p.rounding)) + "|" + f1.get_str() + "|" + f2.get_str() +
         "|" + std::to_string(limit) + "|" +
         std::to_string(reinterpret_cast<std::uintptr_t>(&p.arithmetic_engine()));
}

}  // namespace

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

namespace {

/// The layer schedule: which nodes get a head, and which Boolean nodes an FFN, per layer.
struct Schedule {
  std::vector<std::vector<NodeId>> heads;    // P and MOD (m ≥ 2) nodes
  std::vector<std::vector<NodeId>> boolean;  // ¬ ∧ ∨ nodes
};

bool is_leaf(const ltl::Node& n) {
  return n.op == Operator::symbol || n.op == Operator::top ||
         (n.op == Operator::modulo && n.m == 1);
}

Schedule schedule(const ltl::Formula& f, const std::vector<bool>& used,
                  const std::map<NodeId, NodeId>& gates) {
  const std::size_t n = f.size();
  std::vector<bool> ready(n, false), scheduled(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (used[i] && is_leaf(f.node(static_cast<NodeId>(i)))) ready[i] = scheduled[i] = true;
  }
  Schedule s;
  while (!ready[f.root()]) {
    std::vector<NodeId> heads, boolean;
    for (std::size_t i = 0; i < n; ++i) {
      if (!used[i] || scheduled[i]) continue;
      const ltl::Node& node = f.node(static_cast<NodeId>(i));
      const auto id = static_cast<NodeId>(i);
      switch (node.op) {
        case Operator::modulo:
          heads.push_back(id);
          break;
        case Operator::past:
          if (ready[node.left]) heads.push_back(id);
          break;
        case Operator::yesterday:
          if (ready[node.left] && ready[gates.at(id)]) heads.push_back(id);
          break;
        case Operator::negation:
          if (ready[node.left]) boolean.push_back(id);
          break;
        case Operator::conjunction:
        case Operator::disjunction:
          if (ready[node.left] && ready[node.right]) boolean.push_back(id);
          break;
        default:
          break;
      }
    }
    if (heads.empty() && boolean.empty()) {
      throw std::logic_error(
          "compiler: the schedule made no progress (a node kind is not compiled)");
    }
    for (NodeId id : heads) scheduled[id] = true;
    for (NodeId id : boolean) scheduled[id] = true;
    for (NodeId id : heads) ready[id] = true;
    for (NodeId id : boolean) ready[id] = true;
    s.heads.push_back(std::move(heads));
    s.boolean.push_back(std::move(boolean));
  }
  return s;
}

nlohmann::json certificate_json(const PastCertificate& c) {
  nlohmann::json j;
  j["f1"] = decimal(c.f1);
  j["f2"] = decimal(c.f2);
  j["certified_count"] = c.certified_count ? nlohmann::json(*c.certified_count) : nlohmann::json();
  j["stagnation_count"] =
      c.stagnation_count ? nlohmann::json(*c.stagnation_count) : nlohmann::json();
  j["min_output"] = decimal(c.min_output);
  j["max_output"] = decimal(c.max_output);
  j["first_failure"] = c.first_failure ? nlohmann::json(*c.first_failure) : nlohmann::json();
  j["limit"] = c.limit;
  return j;
}

/// The head-output range of one raw coordinate before the LayerNorm mirror's scaling: the
/// attention output o lies in [lo, hi] (lo = hi for exact outputs); `want` is what LN1 must make
/// of every r = round_F(ε·o): exactly 1, exactly 0, or a value in [0, 1/2] (the count head
/// after position 1, read only through `raw + 2·count − 2·⊤ ≤ 0` and reset).
struct RawOutputRange {
  std::string coordinate;
  Value lo, hi;
  enum class Want { one, zero, at_most_half } want;
};

/// Turns the compiled model into its post-LN form with the LayerNorm mirror (see
/// LayerNormMirror in compiler.hpp), checking every step of the construction in F. Throws
/// InvalidArgument with one line naming the failing check.
void add_layer_norm_mirror(CompiledModel& out, const std::vector<RawOutputRange>& ranges,
                           const numeric::Arithmetic& a) {
  const numeric::Format& F = a.format();
  const std::string where = "LayerNorm mirror refused in " + F.name + ": ";
  if (F.is_fixed_point())
    throw Refusal(RefusalReason::layer_norm_mirror,
                  where + "it needs a floating-point format (ε = 2^-p)");
  const int p = F.precision;
  const mpq_class eps_q = mpq_class(1) / (mpz_class(1) << p);
  const mpq_class gain_q(mpz_class(1) << (p - 1));
  require_exact(a, eps_q, "the LayerNorm mirror's raw scale 2^-p", RefusalReason::layer_norm_gain);
  require_exact(a, gain_q, "the LayerNorm mirror's raw gain 2^(p-1)",
                RefusalReason::layer_norm_gain);
  const Value eps = a.from_rational(eps_q), gain = a.from_rational(gain_q);
  const Value half = a.from_rational(mpq_class(1, 2));

  auto is_raw = [](const std::string& n) { return n == "count" || n.rfind("raw:", 0) == 0; };
  const std::vector<std::string> old_names = out.space.names();
  std::vector<std::string> plain, raw;
  for (const auto& n : old_names) (is_raw(n) ? raw : plain).push_back(n);

  // The images LN1 gives the head outputs, and the centred values (r − 1/2) they pass through.
  std::vector<Value> centred;
  Value r_max = a.zero();
  for (const RawOutputRange& g : ranges) {
    const Value r_lo = a.mul(eps, g.lo), r_hi = a.mul(eps, g.hi);
    if (exact_rational(r_hi) > exact_rational(r_max)) r_max = r_hi;
    const Value c_hi = a.sub(r_hi, half);
    Value c = a.sub(r_lo, half);
    for (int steps = 0;; ++steps) {
      if (steps > 64) {
        throw Refusal(RefusalReason::layer_norm_mirror,
                      where + "the output range of " + g.coordinate +
                          " spans more than 64 values of F after scaling");
      }
      centred.push_back(c);
      const Value y = a.add(a.mul(a.div(c, half), gain), gain);
      const mpq_class yq = exact_rational(y);
      const bool ok = g.want == RawOutputRange::Want::one    ? yq == 1
                      : g.want == RawOutputRange::Want::zero ? yq == 0
                                                             : (yq >= 0 && yq <= mpq_class(1, 2));
      if (!y.is_finite() || !ok) {
        throw Refusal(
            RefusalReason::layer_norm_mirror,
            where + "LN1 maps " + g.coordinate + " = 2^-p*" + exact_decimal(g.lo) +
                (exact_rational(g.lo) == exact_rational(g.hi) ? "" : ".." + exact_decimal(g.hi)) +
                " to " + exact_decimal(y) + ", not " +
                (g.want == RawOutputRange::Want::one    ? "1"
                 : g.want == RawOutputRange::Want::zero ? "0"
                                                        : "a value in [0, 1/2]"));
      }
      if (exact_rational(c) >= exact_rational(c_hi)) break;
      c = numeric::next_up(F, c);
    }
  }

  // K pairs before the raw coordinates: pad until every raw value is absorbed by the mean's
  // partial sum K and every rounded square adds exactly 1/4 to the variance's partial sum.
  std::size_t padding = 0;
  for (;; ++padding) {
    const std::size_t K = plain.size() + padding;
    std::string failure;
    const Value k_value = a.from_rational(mpq_class(static_cast<unsigned long>(K)));
    if (exact_rational(a.add(k_value, r_max)) != K)
      failure = "round(K + r) != K for the largest raw value";
    for (std::size_t j = 0; failure.empty() && j < raw.size(); ++j) {
      mpq_class v_q = mpq_class(static_cast<unsigned long>(K)) / 2 +
                      mpq_class(static_cast<unsigned long>(j)) / 4;
      v_q.canonicalize();
      const Value v = a.from_rational(v_q);
      if (exact_rational(v) != v_q)
        failure = "the variance's partial sum " + v_q.get_str() + " is not exact";
      for (const Value& c : centred) {
        if (!failure.empty()) break;
        if (exact_rational(a.add(v, a.mul(c, c))) != v_q + mpq_class(1, 4)) {
          failure = "a rounded square (r - 1/2)^2 does not add exactly 1/4 to the variance";
        }
      }
    }
    const mpz_class d_model = 2 * mpz_class(static_cast<unsigned long>(K + raw.size()));
    if (d_model > (mpz_class(1) << p)) {
      throw Refusal(RefusalReason::layer_norm_mirror,
                    where + "d_model " + d_model.get_str() +
                        " > 2^p = " + mpz_class(mpz_class(1) << p).get_str() +
                        ", so LN's sums of 0/1 and 1/4 are not exact" +
                        (failure.empty() ? std::string() : " (and " + failure + ")"));
    }
    if (failure.empty()) break;
    if (padding == 16)
      throw Refusal(RefusalReason::layer_norm_mirror,
                    where + failure + " (K = " + std::to_string(K) + " pairs)");
  }

  // The new residual space: pairs first, then raw coordinates with constant mirrors.
  std::vector<std::string> names;
  std::vector<std::string> pads;
  for (std::size_t k = 0; k < padding; ++k) pads.push_back("pad:" + std::to_string(k));
  for (const auto& n : plain) names.push_back(n);
  for (const auto& n : pads) names.push_back(n);
  for (const auto& n : plain) names.push_back("mirror:" + n);
  for (const auto& n : pads) names.push_back("mirror:" + n);
  for (const auto& n : raw) names.push_back(n);
  for (const auto& n : raw) names.push_back("mirror:" + n);
  const std::size_t d = names.size();
  if (mpz_class(static_cast<unsigned long>(d)) > (mpz_class(1) << p)) {
    throw Refusal(RefusalReason::layer_norm_mirror,
                  where + "d_model " + std::to_string(d) +
                      " > 2^p = " + mpz_class(mpz_class(1) << p).get_str() +
                      ", so LN's sums of 0/1 and 1/4 are not exact");
  }
  ResidualSpace space;
  for (const auto& n : names) space.add(n);
  std::vector<std::size_t> to(old_names.size());  // old index -> new index
  for (std::size_t i = 0; i < old_names.size(); ++i) to[i] = space.index(old_names[i]);
  auto mirror_of = [&](std::size_t old_index) -> std::optional<std::size_t> {
    if (is_raw(old_names[old_index])) return std::nullopt;
    return space.index("mirror:" + old_names[old_index]);
  };
  const Value one = a.one(), zero = a.zero();

  auto embed = [&](const std::vector<Value>& x) {
    std::vector<Value> y(d, zero);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const mpq_class q = exact_rational(x[i]);
      if (q != 0 && q != 1)
        throw Refusal(RefusalReason::layer_norm_mirror,
                      where + "an embedding entry of " + old_names[i] + " is not 0/1");
      y[to[i]] = x[i];
      if (auto m = mirror_of(i)) y[*m] = q == 1 ? zero : one;
    }
    for (const auto& n : pads) y[space.index("mirror:" + n)] = one;
    for (const auto& n : raw) y[space.index("mirror:" + n)] = one;
    return y;
  };
  attention::Model& model = out.model;
  for (auto& e : model.embedding.symbols) e = embed(e);
  model.embedding.bos = embed(model.embedding.bos);
  model.embedding.eos = embed(model.embedding.eos);

  auto columns = [&](const attention::Matrix& m) {  // reads the residual: permute columns
    attention::Matrix r = attention::Matrix::zeros(m.rows, d);
    for (std::size_t i = 0; i < m.rows; ++i)
      for (std::size_t j = 0; j < m.cols; ++j) r.at(i, to[j]) = m.at(i, j);
    return r;
  };
  for (auto& layer : model.layers) {
    std::set<std::size_t> written_raw;  // new indices
    for (auto& head : layer.heads) {
      head.query = columns(head.query);
      head.key = columns(head.key);
      head.value = columns(head.value);
      attention::Matrix o = attention::Matrix::zeros(d, head.output.cols);
      for (std::size_t i = 0; i < head.output.rows; ++i) {
        for (std::size_t j = 0; j < head.output.cols; ++j) {
          const Value& w = head.output.at(i, j);
          if (w.is_zero()) continue;
          if (!is_raw(old_names[i]) || exact_rational(w) != 1) {
            throw Refusal(RefusalReason::layer_norm_mirror,
                          where + "head '" + head.name + "' writes " + old_names[i] +
                              " with weight " + exact_decimal(w) +
                              " (the mirror needs weight 1 into a raw coordinate)");
          }
          o.at(to[i], j) = eps;
          written_raw.insert(to[i]);
        }
      }
      head.output = std::move(o);
    }
    if (!layer.attention_bias.empty()) {
      std::vector<Value> b(d, zero);
      for (std::size_t i = 0; i < layer.attention_bias.size(); ++i) {
        if (!layer.attention_bias[i].is_zero())
          throw Refusal(RefusalReason::layer_norm_mirror, where + "an attention bias is not 0");
      }
      layer.attention_bias = b;
    }
    if (layer.ffn) {
      attention::FeedForward& f = *layer.ffn;
      const std::size_t hidden = f.w1.rows, extra = written_raw.size();
      attention::Matrix w1 = attention::Matrix::zeros(hidden + extra, d);
      attention::Matrix w2 = attention::Matrix::zeros(d, hidden + extra);
      for (std::size_t u = 0; u < hidden; ++u)
        for (std::size_t j = 0; j < f.w1.cols; ++j) w1.at(u, to[j]) = f.w1.at(u, j);
      for (std::size_t i = 0; i < f.w2.rows; ++i) {
        for (std::size_t u = 0; u < hidden; ++u) {
          const Value& w = f.w2.at(i, u);
          w2.at(to[i], u) = w;
          if (auto m = mirror_of(i)) w2.at(*m, u) = a.negate(w);  // mirror' = 1 − x' exactly
        }
      }
      std::size_t u = hidden;
      for (std::size_t r : written_raw) {  // reset: raw + (−ReLU(raw)) = 0
        w1.at(u, r) = one;
        w2.at(r, u) = a.negate(one);
        ++u;
      }
      f.w1 = std::move(w1);
      f.w2 = std::move(w2);
      if (!f.b1.empty() || !f.b2.empty())
        throw Refusal(RefusalReason::layer_norm_mirror,
                      where + "a feed-forward sublayer has biases");
    } else if (!written_raw.empty()) {
      throw Refusal(
          RefusalReason::layer_norm_mirror,
          where + "a layer writes raw coordinates but has no feed-forward sublayer to reset them");
    }
    {  // the description: the mirror writes and the resets of this layer's FFN
      LayerDescription& desc = out.layers[static_cast<std::size_t>(&layer - model.layers.data())];
      std::vector<std::string> mirrored, reset;
      for (const auto& g : desc.ffn) {
        for (const auto& w : g.writes) mirrored.push_back("mirror:" + w);
      }
      for (std::size_t r : written_raw) reset.push_back(names[r]);
      if (!mirrored.empty())
        desc.ffn.push_back({"mirror", "", {}, mirrored, {{"weight", "-1 x the coordinate's"}}});
      if (!reset.empty()) desc.ffn.push_back({"reset", "", reset, reset, {{"unit", "-ReLU(raw)"}}});
    }
    attention::LayerNormParams ln;
    ln.gain.assign(d, half);
    ln.bias.assign(d, half);
    for (const auto& n : raw) {
      ln.gain[space.index(n)] = gain;
      ln.bias[space.index(n)] = gain;
    }
    ln.epsilon = zero;
    if (!layer.heads.empty()) layer.attention_norm = ln;
    if (layer.ffn) layer.ffn_norm = ln;
  }
  {
    std::vector<Value> w(d, zero);
    for (std::size_t i = 0; i < model.classifier.weights.size(); ++i)
      w[to[i]] = model.classifier.weights[i];
    model.classifier.weights = w;
  }
  model.options.norm_placement = attention::NormPlacement::post;
  model.d_model = d;
  model.coordinates = names;
  out.space = std::move(space);

  // End to end: LN is exactly the identity on every embedding (all 0/1 with mirrors).
  for (const auto& layer : model.layers) {
    const auto& ln = layer.attention_norm ? layer.attention_norm : layer.ffn_norm;
    if (!ln) continue;
    std::vector<const std::vector<Value>*> xs = {&model.embedding.bos, &model.embedding.eos};
    for (const auto& e : model.embedding.symbols) xs.push_back(&e);
    for (const auto* x : xs) {
      const std::vector<Value> y = attention::layer_norm(*ln, *x, model.policy);
      for (std::size_t i = 0; i < d; ++i) {
        if (exact_rational(y[i]) != exact_rational((*x)[i])) {
          throw Refusal(RefusalReason::layer_norm_mirror,
                        where + "LN of an embedding changes " + names[i] + " (" +
                            exact_decimal((*x)[i]) + " -> " + exact_decimal(y[i]) + ")");
        }
      }
    }
    break;
  }
  LayerNormMirror info;
  info.raw_scale = eps;
  info.raw_gain = gain;
  info.pairs = plain.size() + padding;
  info.padding = padding;
  info.raw = raw.size();
  out.layer_norm = info;
}

CompiledModel compile_in(const ltl::Formula& input, const std::vector<std::string>& alphabet,
                         const CompileOptions& options) {
  const attention::EvaluationPolicy& policy = options.policy;
  if (alphabet.empty())
    throw Refusal(RefusalReason::input,
                  "the alphabet is empty; give at least one symbol, e.g. --alphabet ab");
  {
    std::set<std::string> seen;
    for (const auto& s : alphabet) {
      if (!seen.insert(s).second)
        throw Refusal(RefusalReason::input, "the alphabet lists '" + s + "' twice");
    }
  }
  const std::vector<bool> used_input = ltl::reachable_nodes(input);
  for (std::size_t i = 0; i < input.size(); ++i) {
    if (!used_input[i]) continue;
    const ltl::Node& n = input.node(static_cast<NodeId>(i));
    if (n.op == Operator::symbol &&
        std::find(alphabet.begin(), alphabet.end(), n.symbol) == alphabet.end()) {
      // As classify --formula (proofs::formula_dfa): an atom outside the alphabet is a typo
      // (it would be false at every position), not a formula over that alphabet.
      throw Refusal(RefusalReason::input, "cannot compile '" + ltl::to_string(input) + "': atom '" +
                                              n.symbol + "' is not a letter of the alphabet " +
                                              automata::alphabet_text(alphabet) +
                                              "; accepted: atoms among the alphabet's letters");
    }
    if (n.op == Operator::since) {  // the text only here: printing every subformula is quadratic
      throw Refusal(RefusalReason::input,
                    "cannot compile '" + ltl::to_string(input, static_cast<NodeId>(i)) +
                        "': S (since) is not in LTL[P,MOD], which RoPE_P transformers recognise "
                        "(THEORY §5 T5); the compiler accepts atoms, true, mod(m,r), !, &, |, P");
    }
  }
  check_compile_budget(input, alphabet, options);
  if (policy.summation != attention::Summation::sequential) {
    throw Refusal(RefusalReason::summation,
                  "the compiler certifies its heads under sequential summation only, got " +
                      std::string(numeric::to_string(policy.summation)));
  }
  const numeric::Arithmetic a = numeric::arithmetic(policy);
  const Value f_large = f_large_or_refuse(policy);
  for (const mpq_class& q : {mpq_class(1, 2), mpq_class(2), kF1, kF2, mpq_class(4)}) {
    require_exact(a, q, "the gadget constant");
  }

  // The gate P^k⊤ of every Y^k node (RoPE-X App D), added to a copy of the DAG (ids of the
  // input's nodes are unchanged: nodes are only appended).
  ltl::Formula formula = input;
  std::map<NodeId, NodeId> gates;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const ltl::Node n = input.node(static_cast<NodeId>(i));
    if (!used_input[i] || n.op != Operator::yesterday) continue;
    NodeId g = formula.top();
    for (std::uint64_t l = 0; l < n.k; ++l) g = formula.past(g);
    gates[static_cast<NodeId>(i)] = g;
  }
  std::vector<bool> used = used_input;
  used.resize(formula.size(), false);
  for (const auto& [y, g] : gates) {
    for (NodeId x = g;; x = formula.node(x).left) {
      used[x] = true;
      if (formula.node(x).op != Operator::past) break;
    }
  }

  CompiledModel out;
  out.formula = ltl::to_string(input);
  out.alphabet = alphabet;
  out.f_large = f_large;
  const Schedule plan = schedule(formula, used, gates);

  // The residual space.
  ResidualSpace& space = out.space;
  space.add("bos");
  space.add("top");
  for (const auto& s : alphabet) space.add("sym:" + s);
  out.node_coordinates.assign(formula.size(), "");
  bool has_mod = false;
  for (std::size_t i = 0; i < formula.size(); ++i) {
    if (!used[i]) continue;
    const auto id = static_cast<NodeId>(i);
    const ltl::Node& n = formula.node(id);
    std::string name;
    if (n.op == Operator::symbol) {
      name = "sym:" + n.symbol;
      if (!space.contains(name)) space.add(name);  // an atom outside the alphabet: 0 everywhere
    } else if (is_leaf(n)) {
      name = "top";
    } else {
      name = "f" + std::to_string(i) + ":" + ltl::to_string(formula, id);
      space.add(name);
      if (n.op == Operator::past || n.op == Operator::modulo || n.op == Operator::yesterday) {
        space.add("raw:" + std::to_string(i));
      }
      if (n.op == Operator::modulo) has_mod = true;
    }
    out.node_coordinates[i] = name;
  }
  if (has_mod) space.add("count");
  const std::size_t d = space.size();
  auto coordinate = [&](NodeId id) { return out.node_coordinates[id]; };
  auto raw = [&](NodeId id) { return "raw:" + std::to_string(id); };

  bool has_past = false;
  for (const auto& layer : plan.heads) {
    for (NodeId id : layer) has_past = has_past || formula.node(id).op == Operator::past;
  }
  if (has_past) {
    PastCertificate cert =
        certify_past_head(policy, kF1, kF2, options.certify_limit, options.progress);
    if (cert.certified_count && *cert.certified_count == 0) {
      throw Refusal(RefusalReason::past_head,
                    "P head refused in " + policy.format.name +
                        ": the re-binarisation (f1 = 1/4, f2 = 1/2) of the head output" +
                        std::string(cert.first_failure && *cert.first_failure > 0
                                        ? " for one earlier position carrying psi"
                                        : " at 0") +
                        " is not exactly 1/0 (THEORY §7 C1 Patch 2)");
    }
    out.certified_length = cert.certified_count;  // Y^k heads (built later) may lower it
    out.past = cert;
  }

  // The model.
  attention::Model& model = out.model;
  model.policy = policy;
  model.d_model = d;
  model.name = "compiled: " + out.formula;
  model.description =
      "formula -> transformer (THEORY §7 C1, C4, C5) by ropesim compile; the residual "
      "coordinates are named in `coordinates`";
  model.coordinates = space.names();
  model.embedding.alphabet = alphabet;
  for (const auto& s : alphabet) {
    ExactVector e = space.unit("top") + space.unit("sym:" + s);
    model.embedding.symbols.push_back(round_once(e, a));
  }
  model.embedding.bos = round_once(space.unit("bos"), a);
  model.embedding.eos = round_once(space.unit("top"), a);

  std::vector<RawOutputRange> raw_ranges;  // for the LayerNorm mirror
  auto exact_output = [&](const std::string& coordinate) {
    raw_ranges.push_back({coordinate, a.zero(), a.zero(), RawOutputRange::Want::zero});
    raw_ranges.push_back({coordinate, a.one(), a.one(), RawOutputRange::Want::one});
  };
  for (std::size_t l = 0; l < plan.heads.size(); ++l) {
    attention::Layer layer;
    LayerDescription desc;
    std::vector<HiddenUnit> units;
    bool layer_has_mod = false;
    for (NodeId id : plan.heads[l]) {
      const ltl::Node& n = formula.node(id);
      const std::string text = ltl::to_string(formula, id);
      if (n.op == Operator::past) {
        layer.heads.push_back(past_head(space, coordinate(n.left), raw(id), f_large, a, text));
        desc.heads.push_back(
            {"P",
             text,
             {coordinate(n.left)},
             {raw(id)},
             {{"query_bias", "1"}, {"key_weight", decimal(f_large)}, {"value_weight", "1"}}});
        auto u = rebinarise_units(raw(id), coordinate(id), kF1, kF2);
        units.insert(units.end(), u.begin(), u.end());
        raw_ranges.push_back({raw(id), a.zero(), a.zero(), RawOutputRange::Want::zero});
        raw_ranges.push_back(
            {raw(id), out.past->min_output, out.past->max_output, RawOutputRange::Want::one});
        desc.ffn.push_back(
            {"rebinarise",
             text,
             {raw(id), "top"},
             {coordinate(id)},
             {{"f1", decimal(out.past->f1)}, {"f2", decimal(out.past->f2)}, {"scale", "4"}}});
      } else if (n.op == Operator::yesterday) {
        // C5 (THEORY §6, RoPE-X App D): the fixed-offset head with C = auto as `ropesim horizon`
        // chooses it, and its certified range N_max^(k).
        HorizonSpec hs;
        hs.head.schedule = options.offset_schedule;
        hs.max_length = options.offset_max_length;
        hs.head.k = n.k;
        hs.head.realisation = "r1";
        hs.head.policy = policy;
        hs.auto_C = true;
        const HorizonReport report = horizon(hs);
        if (report.range.n_max < n.k) {
          throw Refusal(RefusalReason::offset_head,
                        "Y^" + std::to_string(n.k) + " head refused in " + policy.format.name +
                            ": its certified range N_max^(" + std::to_string(n.k) +
                            ") = " + std::to_string(report.range.n_max) + " < k (THEORY §6)");
        }
        FixedOffsetSpec fs = hs.head;
        fs.C = exact_rational(report.C);
        HeadWiring wiring;
        wiring.d_model = d;
        wiring.value_source = space.index(coordinate(n.left));
        wiring.output_target = space.index(raw(id));
        FixedOffsetHead head = make_fixed_offset_head(fs, wiring);
        head.head.name = text;
        layer.heads.push_back(head.head);
        desc.heads.push_back({"Y^k",
                              text,
                              {coordinate(n.left)},
                              {raw(id)},
                              {{"k", std::to_string(n.k)},
                               {"schedule", options.offset_schedule.spec},
                               {"realisation", "r1"},
                               {"C", decimal(head.C)},
                               {"certified_range", std::to_string(report.range.n_max)}}});
        exact_output(raw(id));
        const std::string gate = coordinate(gates.at(id));
        units.push_back(HiddenUnit{{{raw(id), 1}, {gate, 2}, {"top", -2}}, {{coordinate(id), 1}}});
        desc.ffn.push_back(
            {"gate", text, {raw(id), gate, "top"}, {coordinate(id)}, nlohmann::json::object()});
        out.bounded_heads.push_back({text, n.k, head.C, report.range.n_max, report.range.at_limit});
        const std::uint64_t n_max = report.range.n_max;
        if (!out.certified_length || n_max < *out.certified_length) out.certified_length = n_max;
      } else {  // modulo, m ≥ 2
        layer_has_mod = true;
        ModAtomSpec spec;
        spec.m = n.m;
        spec.r = n.r;
        spec.policy = policy;
        ModWiring wiring;
        wiring.d_model = d;
        wiring.bos = space.index("bos");
        wiring.top = space.index("top");
        wiring.output = space.index(raw(id));
        ModAtomHead head = make_mod_atom_head(spec, wiring);
        head.head.name = text;
        layer.heads.push_back(head.head);
        desc.heads.push_back({"MOD",
                              text,
                              {"bos", "top"},
                              {raw(id)},
                              {{"C", decimal(head.C)},
                               {"f_large", decimal(head.f_large)},
                               {"min_margin", dyadic_decimal(head.min_margin)}}});
        exact_output(raw(id));
        const bool at_1 = mod_formula(n.m, n.r, 1);
        auto u = first_position_units(raw(id), "count", coordinate(id), at_1);
        units.insert(units.end(), u.begin(), u.end());
        desc.ffn.push_back({"first-position",
                            text,
                            at_1 ? std::vector<std::string>{raw(id)}
                                 : std::vector<std::string>{raw(id), "count", "top"},
                            {coordinate(id)},
                            {{"value_at_position_1", at_1 ? "1" : "0"}}});
        out.mod_heads.push_back(std::move(head));
      }
    }
    if (layer_has_mod) {
      layer.heads.push_back(counting_head(space, "bos", "count", a));
      raw_ranges.push_back({"count", a.one(), a.one(), RawOutputRange::Want::one});  // position 1
      raw_ranges.push_back({"count", a.zero(), a.from_rational(mpq_class(1, 2)),
                            RawOutputRange::Want::at_most_half});
      desc.heads.push_back({"count", "", {"bos"}, {"count"}, {{"value_weight", "1"}}});
    }
    for (NodeId id : plan.boolean[l]) {
      const ltl::Node& n = formula.node(id);
      const std::string text = ltl::to_string(formula, id);
      std::vector<HiddenUnit> u;
      GadgetDescription g;
      g.node = text;
      g.writes = {coordinate(id)};
      if (n.op == Operator::negation) {
        u = negation_units(coordinate(n.left), coordinate(id));
        g.kind = "not";
        g.reads = {"top", coordinate(n.left)};
      } else if (n.op == Operator::conjunction) {
        u = conjunction_units(coordinate(n.left), coordinate(n.right), coordinate(id));
        g.kind = "and";
        g.reads = {coordinate(n.left), coordinate(n.right), "top"};
      } else {
        u = disjunction_units(coordinate(n.left), coordinate(n.right), coordinate(id));
        g.kind = "or";
        g.reads = {coordinate(n.left), coordinate(n.right), "top"};
      }
      units.insert(units.end(), u.begin(), u.end());
      g.constants = nlohmann::json::object();
      desc.ffn.push_back(std::move(g));
    }
    if (!units.empty()) layer.ffn = assemble_feed_forward(units, space, a);
    model.layers.push_back(std::move(layer));
    out.layers.push_back(std::move(desc));
  }
  // The root may be a leaf (an atom, true, mod(1,0)): no layer computes it.
  ExactVector w = space.unit(coordinate(formula.root()));
  model.classifier.weights = round_once(w, a);
  model.classifier.bias = a.from_rational(mpq_class(-1, 2));
  if (options.layer_norm) add_layer_norm_mirror(out, raw_ranges, a);
  model.validate();
  if (const double numbers = attention::spec_number_count(attention::shape_of(model));
      numbers > static_cast<double>(options.max_model_numbers)) {
    throw BudgetExceeded(fmt::format(
        "cannot compile '{}': its model has d_model {} and {} layers, {:.3g} numbers; "
        "accepted: models that ropesim run reads (at most {} numbers)",
        out.formula, model.d_model, model.layers.size(), numbers, options.max_model_numbers));
  }
  return out;
}

const char* const kPresets[] = {"fp8e4m3", "fp8e5m2", "bf16", "fp16", "tf32", "fp32", "fp64"};

}  // namespace

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

CompileEstimate estimate_compile(const ltl::Formula& formula,
                                 const std::vector<std::string>& alphabet,
                                 const CompileOptions& options) {
  CompileEstimate e;
  const std::size_t n = formula.size();
  const std::vector<bool> used = ltl::reachable_nodes(formula);
  // layer[i]: the layer that computes node i in the ASAP schedule (-1: a leaf, no layer). The
  // operands of a node have smaller ids (nodes are interned bottom-up).
  std::vector<double> layer(n, -1);
  std::set<std::string> symbols(alphabet.begin(), alphabet.end());
  double d = 2 + static_cast<double>(alphabet.size());  // bos, top, sym:a
  double heads = 0, head_dims = 0, hidden = 0, largest_k = 0;
  bool has_mod = false;
  // The used chain P^1 true, P^2 true, ... (a prefix: P^j true uses P^(j-1) true): the gates
  // of Y^k nodes reuse it and add the rest.
  std::unordered_map<NodeId, NodeId> past_of;
  std::optional<NodeId> top;
  for (std::size_t i = 0; i < n; ++i) {
    const ltl::Node& node = formula.node(static_cast<NodeId>(i));
    if (node.op == Operator::top) top = static_cast<NodeId>(i);
    if (used[i] && node.op == Operator::past) past_of.emplace(node.left, static_cast<NodeId>(i));
  }
  auto after = [](double a, double b = -1) { return 1 + std::max(a, b); };
  for (std::size_t i = 0; i < n; ++i) {
    if (!used[i]) continue;
    const ltl::Node& node = formula.node(static_cast<NodeId>(i));
    switch (node.op) {
      case Operator::symbol:
        if (symbols.insert(node.symbol).second) d += 1;  // an atom outside the alphabet
        break;
      case Operator::top:
        break;
      case Operator::modulo:
        if (node.m == 1) break;  // mod(1,0) is top
        if (node.m > e.largest_modulus) {
          e.largest_modulus = node.m;
          e.largest_modulus_atom = ltl::to_string(formula, static_cast<NodeId>(i));
        }
        layer[i] = 0;
        d += 2;  // f<id> and raw:<id>
        heads += 1;
        head_dims += 4;
        hidden += mod_formula(node.m, node.r, 1) ? 1 : 2;
        has_mod = true;
        break;
      case Operator::past:
        layer[i] = after(layer[node.left]);
        d += 2;
        heads += 1;
        head_dims += 1;
        hidden += 2;
        break;
      case Operator::yesterday:
        layer[i] = after(layer[node.left], static_cast<double>(node.k) - 1);  // the gate P^k true
        largest_k = std::max(largest_k, static_cast<double>(node.k));
        d += 2;
        heads += 1;
        head_dims += static_cast<double>(attention::single_schedule(1).dimension());
        hidden += 1;
        break;
      case Operator::negation:
        layer[i] = after(layer[node.left]);
        d += 1;
        hidden += 1;
        break;
      case Operator::conjunction:
      case Operator::disjunction:
        layer[i] = after(layer[node.left], layer[node.right]);
        d += 1;
        hidden += node.op == Operator::conjunction ? 1 : 2;
        break;
      case Operator::since:
        break;  // refused by the compiler
    }
  }
  if (largest_k > 0) {  // the gate chain P^1 true .. P^k true beyond the part the formula uses
    double present = 0;
    for (auto it = top ? past_of.find(*top) : past_of.end();
         it != past_of.end() && present < largest_k; it = past_of.find(it->second)) {
      present += 1;
    }
    const double added = largest_k - present;
    d += 2 * added;
    heads += added;
    head_dims += added;
    hidden += 2 * added;
  }
  e.past_heads = largest_k > 0 || !past_of.empty();
  if (has_mod) {  // count, written by the counting head of layer 0
    d += 1;
    heads += 1;
    head_dims += 1;
  }
  const double layers = 1 + layer[formula.root()];
  attention::ModelShape& shape = e.shape;
  shape.symbols = static_cast<double>(alphabet.size());
  shape.layers = layers;
  shape.ffn_layers = layers;  // every node has a hidden unit, and every layer computes a node
  shape.head_dims = head_dims;
  shape.heads = heads;
  shape.value_dims = heads;
  shape.hidden = hidden;
  shape.d_model = d;
  if (options.layer_norm) {  // the mirrors (padding not counted) and a reset unit per head
    shape.d_model = 2 * d;
    shape.hidden += heads;
  }
  e.numbers = attention::spec_number_count(shape);
  e.min_bytes = attention::spec_min_bytes(shape);
  return e;
}

namespace {

/// The formula as a budget refusal names it: its text, or for a formula too large to compile its
/// size (printing recurses once per nesting level: a chain of 10^4 conjunctions overflows the
/// stack of a sanitizer build before the message is made).
std::string formula_for_message(const ltl::Formula& formula) {
  if (formula.size() > 1000) return fmt::format("a formula of {} DAG nodes", formula.size());
  return "'" + ltl::to_string(formula) + "'";
}

}  // namespace

void check_compile_budget(const ltl::Formula& formula, const std::vector<std::string>& alphabet,
                          const CompileOptions& options) {
  const CompileEstimate e = estimate_compile(formula, alphabet, options);
  if (e.largest_modulus > kMaxModulus) {
    throw BudgetExceeded(
        fmt::format("cannot compile {}: the MOD head of {} needs a periodic table and a margin "
                    "check of {:.3g} residues; "
                    "accepted: moduli m <= {} (as construct mod --m)",
                    formula_for_message(formula), e.largest_modulus_atom,
                    static_cast<double>(e.largest_modulus), kMaxModulus));
  }
  attention::check_model_budget("cannot compile " + formula_for_message(formula), e.shape,
                                static_cast<double>(options.max_model_numbers),
                                static_cast<double>(options.max_spec_bytes));
}

CompiledModel compile(const ltl::Formula& formula, const std::vector<std::string>& alphabet,
                      const CompileOptions& options) {
  try {
    return compile_in(formula, alphabet, options);
  } catch (const Refusal& e) {
    if (!options.suggest_format) throw;
    const std::string message = e.what();
    // Refusals that no format can fix are passed on unchanged.
    if (e.reason() == RefusalReason::input || e.reason() == RefusalReason::summation) throw;
    CompileOptions trial = options;
    trial.suggest_format = false;
    trial.progress = {};
    // With Y^k heads a format is only as good as its certified length (THEORY §6): rank every
    // preset that compiles by it (longest first), e.g. 'Y^50 a' refused in fp16 (N_max 43) is
    // certified to 51 in fp8e4m3 but to 709 in fp32. Without them, the smallest preset.
    // The trial scans stop at kHintScanLength: a length at that cap is shown as ">= cap".
    constexpr std::uint64_t kHintScanLength = 2000;
    trial.offset_max_length = kHintScanLength;
    std::vector<std::pair<std::string, std::optional<std::uint64_t>>> ranked;
    std::set<std::string> at_cap;
    bool bounded = false;
    for (const char* preset : kPresets) {
      trial.policy.format = numeric::parse_format(preset);
      if (trial.policy.format.name == options.policy.format.name) continue;
      try {
        const CompiledModel c = compile_in(formula, alphabet, trial);
        bounded = bounded || !c.bounded_heads.empty();
        ranked.emplace_back(preset, c.certified_length);
        for (const auto& b : c.bounded_heads) {
          if (b.at_limit && c.certified_length == b.n_max) at_cap.insert(preset);
        }
      } catch (const InvalidArgument&) {
        continue;
      }
      if (!bounded) {
        throw Refusal(e.reason(),
                      message + "; the smallest preset format that compiles it is " + preset);
      }
    }
    if (!ranked.empty()) {
      std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) {
        const std::uint64_t a = x.second.value_or(UINT64_MAX), b = y.second.value_or(UINT64_MAX);
        return a > b;
      });
      std::string list;
      for (const auto& [preset, length] : ranked) {
        list += (list.empty() ? "" : ", ") + preset + " (" +
                (at_cap.count(preset) != 0 ? ">= " : "") +
                (length ? std::to_string(*length) : std::string("unbounded")) + ")";
      }
      throw Refusal(e.reason(),
                    message + "; the preset formats that compile it, by certified length: " + list);
    }
    throw Refusal(e.reason(), message + "; no preset format compiles it under rounding " +
                                  std::string(numeric::to_string(options.policy.rounding)));
  }
}

nlohmann::json to_json(const CompiledModel& c) {
  nlohmann::json j;
  j["formula"] = c.formula;
  if (c.layer_norm) {
    j["layer_norm"] = {{"placement", "post"},
                       {"mirror", true},
                       {"epsilon", "0"},
                       {"raw_scale", decimal(c.layer_norm->raw_scale)},
                       {"raw_gain", decimal(c.layer_norm->raw_gain)},
                       {"pairs", c.layer_norm->pairs},
                       {"padding", c.layer_norm->padding},
                       {"raw_coordinates", c.layer_norm->raw}};
  } else {
    j["layer_norm"] = nullptr;
  }
  j["alphabet"] = c.alphabet;
  j["format"] = c.model.policy.format.name;
  j["rounding"] = std::string(numeric::to_string(c.model.policy.rounding));
  j["f_large"] = decimal(c.f_large);
  j["coordinates"] = c.space.names();
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& name : c.node_coordinates) {
    if (!name.empty()) nodes.push_back(name);
  }
  j["subformula_coordinates"] = nodes;
  auto gadget = [](const GadgetDescription& g) {
    return nlohmann::json{
        {"kind", g.kind},
        {"node", g.node},
        {"reads", g.reads},
        {"writes", g.writes},
        {"constants", g.constants.is_null() ? nlohmann::json::object() : g.constants}};
  };
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : c.layers) {
    nlohmann::json heads = nlohmann::json::array(), ffn = nlohmann::json::array();
    for (const auto& g : l.heads) heads.push_back(gadget(g));
    for (const auto& g : l.ffn) ffn.push_back(gadget(g));
    layers.push_back({{"heads", heads}, {"ffn", ffn}});
  }
  j["layers"] = layers;
  j["past_certificate"] = c.past ? certificate_json(*c.past) : nlohmann::json();
  nlohmann::json mods = nlohmann::json::array();
  for (const auto& h : c.mod_heads) {
    nlohmann::json margins = nlohmann::json::array();
    for (const auto& rm : h.margins) {
      margins.push_back(
          {{"residue", rm.residue},
           {"bos_wins", rm.bos_wins},
           {"margin", rm.margin ? nlohmann::json(dyadic_decimal(*rm.margin)) : nlohmann::json()},
           {"passes", rm.passes}});
    }
    mods.push_back({{"m", h.m},
                    {"r", h.r},
                    {"C", decimal(h.C)},
                    {"bound", h.bound.approximate},
                    {"min_margin", dyadic_decimal(h.min_margin)},
                    {"margins", margins}});
  }
  j["mod_heads"] = mods;
  nlohmann::json bounded = nlohmann::json::array();
  for (const auto& b : c.bounded_heads) {
    bounded.push_back({{"node", b.node},
                       {"k", b.k},
                       {"C", decimal(b.C)},
                       {"n_max", b.n_max},
                       {"at_limit", b.at_limit}});
  }
  j["bounded_heads"] = bounded;
  j["certified_length"] =
      c.certified_length ? nlohmann::json(*c.certified_length) : nlohmann::json();
  return j;
}

}  // namespace ropesim::proofs
