#include "proofs/compiler/layer_norm_mirror.hpp"

#include <optional>
#include <set>
#include <string>

#include "numeric/exact_decimal.hpp"
#include "numeric/format_properties.hpp"

namespace ropesim::proofs {

using attention::exact_rational;
using numeric::exact_decimal;
using numeric::Value;

LayerNormMirror add_layer_norm_mirror(attention::Model& model, ResidualSpace& residual,
                                      std::vector<LayerDescription>& layers,
                                      const std::vector<RawOutputRange>& ranges,
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
  const std::vector<std::string> old_names = residual.names();
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
      LayerDescription& desc = layers[static_cast<std::size_t>(&layer - model.layers.data())];
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
  residual = std::move(space);

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
  return info;
}

}  // namespace ropesim::proofs
