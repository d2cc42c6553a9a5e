#include "proofs/range/bounded_range.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/realisations/bounded_realisation.hpp"
#include "core/error.hpp"
#include "numeric/binary64_rounding.hpp"
#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"
#include "proofs/range/horizon.hpp"

namespace ropesim::proofs {

namespace {

using numeric::Value;

struct Interval {
  double lo = 0, hi = 0;
};

/// The enclosure of a sequential dot product of interval vectors (bounded_range.hpp): products
/// between their rounded corner products, partial sums between the rounded sums of the ends.
/// NaN ends propagate (std::min/max keep the first operand, so NaN is tested explicitly).
Interval enclose_dot(const numeric::Binary64Rounding& f, const Interval* q, const Interval* k,
                     std::size_t dim) {
  Interval acc{0, 0};
  for (std::size_t m = 0; m < dim; ++m) {
    if (q[m].lo == 0 && q[m].hi == 0) continue;  // x + ±0 = x: a zero term leaves the sum
    if (k[m].lo == 0 && k[m].hi == 0) continue;
    const double c[4] = {f.mul(q[m].lo, k[m].lo), f.mul(q[m].lo, k[m].hi), f.mul(q[m].hi, k[m].lo),
                         f.mul(q[m].hi, k[m].hi)};
    double lo = c[0], hi = c[0];
    for (const double v : c) {
      if (std::isnan(v)) return {NAN, NAN};
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    acc.lo = f.add(acc.lo, lo);
    acc.hi = f.add(acc.hi, hi);
  }
  return acc;
}

}  // namespace

BoundedRange bounded_certified_range(const FixedOffsetSpec& spec, std::uint64_t max_length) {
  if (max_length < 1 || max_length > kMaxBoundedRangeLength) {
    throw InvalidArgument("L = " + std::to_string(max_length) +
                          ": the bounded-trig range scans L in 1.." +
                          std::to_string(kMaxBoundedRangeLength));
  }
  const auto bounded = attention::parse_bounded_realisation(spec.realisation, spec.policy);
  attention::check_bounded_applicable(spec.schedule, bounded);
  FixedOffsetSpec base_spec = spec;
  base_spec.realisation = bounded.base.name();
  const FixedOffsetHead head = make_fixed_offset_head(base_spec);
  const numeric::Format& F = head.policy.format;
  const numeric::Binary64Rounding f(F, head.policy.rounding);
  if (head.policy.summation != numeric::Summation::sequential ||
      head.policy.rounding != numeric::Rounding::nearest_even || head.head.scale ||
      !f.fast_arithmetic()) {
    throw InvalidArgument(
        "the bounded-trig range encloses scores in binary64: it takes sequential summation, "
        "nearest-even rounding and a floating F of at most 25 significant bits (fp32, bf16, fp16, "
        "tf32, fp8), got " +
        F.name + " with " + std::string(numeric::to_string(head.policy.summation)) + " sums");
  }
  const attention::Schedule& s = head.schedule;
  const std::size_t nb = s.blocks.size();
  const std::size_t dim = head.head.head_dim;
  const std::uint64_t positions = max_length + 2;

  BoundedRange out;
  out.realisation = bounded.name();
  out.model = bounded.model.name;
  out.max_length = max_length;

  std::vector<std::vector<attention::TrigBox>> boxes(nb);
  for (std::size_t d = 0; d < nb; ++d) {
    boxes[d] = attention::trig_boxes(s, bounded, d, 0, positions);
    for (const auto& b : boxes[d]) {
      out.uncertain_entries += b.fixed() ? 0 : 1;
      out.undocumented_entries += b.documented ? 0 : 1;
    }
  }
  // query and key coordinate intervals: the four corners of every block's box (exact, since
  // each coordinate is monotone in c and in s separately)
  const numeric::Engine& engine = head.policy.arithmetic_engine();
  std::vector<Interval> q(positions * dim), k(positions * dim);
  for (std::uint64_t p = 0; p < positions; ++p) {
    const attention::RealisedRotation frame = attention::realise(s, bounded.base, p);
    for (int corner = 0; corner < 4; ++corner) {
      attention::RealisedRotation rot = frame;
      for (std::size_t d = 0; d < nb; ++d) {
        const attention::TrigBox& b = boxes[d][p];
        rot.blocks[d].cos = Value::from_double_exact((corner & 1) != 0 ? b.cos_hi : b.cos_lo);
        rot.blocks[d].sin = Value::from_double_exact((corner & 2) != 0 ? b.sin_hi : b.sin_lo);
      }
      for (int which = 0; which < 2; ++which) {
        const auto& bias = which == 0 ? head.head.query_bias : head.head.key_bias;
        std::vector<Value> y =
            attention::apply_rotation(rot, bias, head.realisation.layout, engine);
        Interval* dst = (which == 0 ? q.data() : k.data()) + p * dim;
        for (std::size_t m = 0; m < dim; ++m) {
          const double v =
              (rot.output_format == F ? y[m] : engine.convert(F, y[m], head.policy.rounding))
                  .to_double();
          if (corner == 0) {
            dst[m] = {v, v};
          } else if (std::isnan(v) || std::isnan(dst[m].lo)) {
            dst[m] = {NAN, NAN};
          } else {
            dst[m].lo = std::min(dst[m].lo, v);
            dst[m].hi = std::max(dst[m].hi, v);
          }
        }
      }
    }
  }
  const mpq_class f_large = head.f_large_exact;
  const std::uint64_t kk = head.k;
  for (std::uint64_t i = kk + 1; i <= max_length + 1; ++i) {
    const std::uint64_t target = i - kk;
    const Interval t = enclose_dot(f, &q[i * dim], &k[target * dim], dim);
    ++out.scores_enclosed;
    double best = -std::numeric_limits<double>::infinity();
    std::uint64_t best_j = 0;
    bool bad = !std::isfinite(t.lo);
    for (std::uint64_t j = 0; j < i && !bad; ++j) {
      if (j == target) continue;
      const Interval c = enclose_dot(f, &q[i * dim], &k[j * dim], dim);
      ++out.scores_enclosed;
      if (!std::isfinite(c.hi)) {
        bad = true;
        best_j = j;
        best = c.hi;
      } else if (c.hi > best) {
        best = c.hi;
        best_j = j;
      }
    }
    bool fails = bad;
    std::optional<mpq_class> gap;
    if (!bad && best > -std::numeric_limits<double>::infinity()) {
      gap = mpq_class(t.lo) - mpq_class(best);
      fails = *gap < f_large;
    }
    if (fails) {
      out.n_max = i - 2;
      out.fail_query = i;
      out.fail_competitor = best_j;
      out.target_lo = t.lo;
      out.competitor_hi = best;
      out.gap = gap;
      return out;
    }
  }
  out.n_max = max_length;
  out.at_limit = true;
  return out;
}

nlohmann::json to_json(const BoundedRange& r) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j;
  j["realization"] = r.realisation;
  j["model"] = r.model;
  j["n_max"] = r.n_max;
  j["at_limit"] = r.at_limit;
  j["max_length"] = r.max_length;
  j["fail_query"] = opt(r.fail_query);
  j["fail_competitor"] = opt(r.fail_competitor);
  j["target_lo"] = opt(r.target_lo);
  j["competitor_hi"] = opt(r.competitor_hi);
  // the gap as a JSON number (nearest binary64) with its exact decimal beside it, as horizon's
  j["gap"] = r.gap ? nlohmann::json(numeric::nearest_double(*r.gap)) : nlohmann::json(nullptr);
  j["gap_exact"] = r.gap ? nlohmann::json(numeric::exact_decimal(*r.gap)) : nlohmann::json(nullptr);
  j["uncertain_entries"] = r.uncertain_entries;
  j["undocumented_entries"] = r.undocumented_entries;
  j["scores_enclosed"] = r.scores_enclosed;
  return j;
}

}  // namespace ropesim::proofs
