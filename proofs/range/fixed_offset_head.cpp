#include "proofs/range/fixed_offset_head.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/error.hpp"
#include "core/stopwatch.hpp"
#include "numeric/engine.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/summation.hpp"
#include "proofs/common/f_large.hpp"

namespace ropesim::proofs {

using numeric::Format;
using numeric::Value;

namespace {

mpq_class exact_of(const Value& v) { return attention::exact_rational(v); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Construction (THEORY §6; RoPE-X App D)
// ---------------------------------------------------------------------------------------------

numeric::Value require_finite_scale(const mpq_class& C, const numeric::FormatBinding& binding,
                                    const std::string& C_text) {
  const numeric::Value rounded =
      binding.arithmetic_engine().from_rational(binding.format, C, binding.rounding);
  if (!rounded.is_finite()) {
    throw InvalidArgument("C = " + C_text + " is not finite in " + binding.format.name +
                          " (largest finite " + numeric::max_finite(binding.format).to_decimal(9) +
                          "); accepted: a positive decimal or 'auto'");
  }
  return rounded;
}

FixedOffsetHead make_fixed_offset_head(const FixedOffsetSpec& spec, const HeadWiring& wiring) {
  if (spec.k < 1)
    throw InvalidArgument("the offset k must be at least 1, got " + std::to_string(spec.k));
  const Format& F = spec.policy.format;
  const numeric::Rounding r = spec.policy.rounding;
  const auto& engine = spec.policy.arithmetic_engine();
  FixedOffsetHead h;
  h.policy = spec.policy;
  h.schedule = spec.schedule;
  h.k = spec.k;
  const std::size_t B = spec.schedule.blocks.size();
  if (B == 0) {
    throw InvalidArgument("schedule '" + spec.schedule.spec +
                          "' has no rotary block; the fixed-offset head needs one");
  }
  h.f_large = require_f_large(F, r);
  h.f_large_exact = exact_of(h.f_large);
  // parsed from the policy's FormatBinding: the head's realisation has the policy's F,
  // rounding and engine by construction (no second copy to keep in step)
  h.realisation = attention::parse_realisation(spec.realisation, spec.policy);
  attention::check_applicable(spec.schedule, h.realisation);

  std::vector<mpq_class> weights = spec.weights;
  if (weights.empty()) weights.assign(B, mpq_class(1, static_cast<unsigned long>(B)));
  if (weights.size() != B) {
    throw InvalidArgument("the head has " + std::to_string(B) + " rotary blocks but " +
                          std::to_string(weights.size()) + " weights were given");
  }
  for (auto& w : weights) w.canonicalize();

  h.C = engine.from_rational(F, spec.C, r);
  if (!h.C.is_finite()) {
    throw InvalidArgument("C = " + spec.C.get_str() + " is not finite in " + F.name +
                          " (it rounds to " + h.C.to_decimal(6) +
                          "); the largest finite value is " + numeric::max_finite(F).to_decimal(9));
  }
  if (sgn(h.C_exact = exact_of(h.C)) <= 0) {
    throw InvalidArgument("C must be positive in " + F.name + ", got " + spec.C.get_str() +
                          " (rounds to " + h.C.to_decimal(9) + ")");
  }

  const std::size_t d_model = wiring.space.size();
  const std::size_t value_source = wiring.space.index(wiring.value_source);
  const std::size_t output_target = wiring.space.index(wiring.output_target);

  const std::size_t D = spec.schedule.dimension();
  const Value zero;
  const Value one = engine.from_rational(F, mpq_class(1), r);
  attention::AttentionHead& a = h.head;
  a.name = "Y^" + std::to_string(spec.k);
  a.head_dim = D;
  a.value_dim = 1;
  a.query = attention::Matrix::zeros(D, d_model);
  a.key = attention::Matrix::zeros(D, d_model);
  a.value = attention::Matrix::zeros(1, d_model);
  a.value.at(0, value_source) = one;
  a.output = attention::Matrix::zeros(d_model, 1);
  a.output.at(output_target, 0) = one;
  a.query_bias.assign(D, zero);
  a.key_bias.assign(D, zero);
  const bool adjacent = h.realisation.layout == attention::PairLayout::adjacent;
  for (std::size_t d = 0; d < B; ++d) {
    const BlockAngle angle(spec.schedule.blocks[d]);
    h.ideal.blocks.push_back(angle);
    h.ideal.weights.push_back(weights[d]);
    const mpq_class K = h.C_exact * weights[d];
    const std::size_t i0 = adjacent ? 2 * d : d;
    const std::size_t i1 = adjacent ? 2 * d + 1 : d + B;
    const auto k = static_cast<std::int64_t>(spec.k);
    a.query_bias[i0] = round_scaled_trig(F, r, angle, k, false, K, engine);
    a.query_bias[i1] = round_scaled_trig(F, r, angle, k, true, -K, engine);
    a.key_bias[i0] = one;
  }
  attention::RotarySegment segment;
  segment.schedule = spec.schedule;
  segment.realisations.assign(B, h.realisation);
  segment.layout = h.realisation.layout;
  a.rotary.push_back(std::move(segment));
  return h;
}

// ---------------------------------------------------------------------------------------------
// Realised scores
// ---------------------------------------------------------------------------------------------

struct RealisedScores::State {
  const FixedOffsetHead* head = nullptr;
  attention::HeadRotations rotations;
  std::vector<std::vector<Value>> queries, keys;
  std::vector<Value> zero_input;
  std::uint64_t limit = 0;  // growth cap (0 = none)

  // the binary64 kernel, when it applies
  std::optional<ScoreKernel> kernel;
  std::size_t dim = 0;
  std::vector<double> qd, kd;  // positions × dim

  double fast_score(std::uint64_t i, std::uint64_t j) const {
    return kernel->dot(&qd[i * dim], &kd[j * dim], dim);
  }
  /// out[t] = fast_score(i, j + t) for t < count (ScoreKernel::dots).
  void fast_scores(std::uint64_t i, std::uint64_t j, std::size_t count, double* out) const {
    kernel->dots(&qd[i * dim], &kd[j * dim], dim, count, dim, out);
  }
};

std::optional<ScoreKernel> ScoreKernel::make(const FixedOffsetHead& head) {
  if (head.head.scale || head.head.head_dim < 1) return std::nullopt;
  const auto dot = numeric::Binary64Dot::for_policy(head.policy);
  if (!dot) return std::nullopt;
  return ScoreKernel(*dot);
}

RealisedScores::RealisedScores(const FixedOffsetHead& head, bool use_fast_kernel)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.head = &head;
  s.dim = head.head.head_dim;
  s.zero_input.assign(head.head.query.cols, Value());
  s.rotations.positions = 0;
  if (use_fast_kernel) s.kernel = ScoreKernel::make(head);
}

RealisedScores::~RealisedScores() = default;

std::uint64_t RealisedScores::positions() const { return state_->rotations.positions; }
void RealisedScores::set_growth_limit(std::uint64_t positions) { state_->limit = positions; }
bool RealisedScores::fast() const { return state_->kernel.has_value(); }

void RealisedScores::ensure(std::uint64_t positions) {
  State& s = *state_;
  const std::uint64_t have = s.rotations.positions;
  if (positions <= have) return;
  std::uint64_t target = std::max<std::uint64_t>({positions, 2 * have, 64});
  if (s.limit) target = std::max(positions, std::min(target, s.limit));
  const FixedOffsetHead& h = *s.head;
  const auto& seg = h.head.rotary.front();
  s.rotations.blocks.resize(seg.schedule.blocks.size());
  for (std::size_t b = 0; b < seg.schedule.blocks.size(); ++b) {
    auto pairs = attention::realise_block(seg.schedule, *seg.realisations[b], b, have, target);
    auto& dst = s.rotations.blocks[b];
    dst.insert(dst.end(), std::make_move_iterator(pairs.begin()),
               std::make_move_iterator(pairs.end()));
  }
  s.rotations.positions = target;
  for (std::uint64_t p = have; p < target; ++p) {
    s.queries.push_back(attention::head_query(h.head, s.rotations, p, s.zero_input, h.policy));
    s.keys.push_back(attention::head_key(h.head, s.rotations, p, s.zero_input, h.policy));
    if (s.kernel) {
      for (const auto& v : s.queries.back()) s.qd.push_back(v.narrow());
      for (const auto& v : s.keys.back()) s.kd.push_back(v.narrow());
    }
  }
}

Value RealisedScores::score(std::uint64_t i, std::uint64_t j) const {
  if (state_->kernel) return Value::from_double_exact(state_->fast_score(i, j));
  return reference_score(i, j);
}

Value RealisedScores::reference_score(std::uint64_t i, std::uint64_t j) const {
  const State& s = *state_;
  return attention::head_score(s.head->head, s.queries.at(i), s.keys.at(j), s.head->policy);
}

const std::vector<Value>& RealisedScores::query(std::uint64_t i) const {
  return state_->queries.at(i);
}
const std::vector<Value>& RealisedScores::key(std::uint64_t j) const { return state_->keys.at(j); }

// ---------------------------------------------------------------------------------------------
// The scan (RoPE-X eq. 10)
// ---------------------------------------------------------------------------------------------

namespace {

/// Exact t − m ≥ f for finite doubles t, m and f > 0: with s = RN(t − m) and the exact
/// remainder e (TwoSum), t − m = s + e with |e| ≤ ulp(s)/2, so t − m ≥ f iff s > f, or s = f
/// and e ≥ 0 (if s > f then t − m ≥ (pred(s) + s)/2 ≥ f).
bool lead_at_least(double t, double m, double f) {
  const double s = t - m;
  const double bb = s - t;
  const double e = (t - (s - bb)) + (-m - bb);
  return s > f || (s == f && e >= 0);
}

}  // namespace

CertifiedRange certified_range(const FixedOffsetHead& head, const ScanOptions& options) {
  if (options.max_length < 1 || options.max_length > kMaxScanLength) {
    throw InvalidArgument("the scan's max_length must be in 1.." + std::to_string(kMaxScanLength) +
                          ", got " + std::to_string(options.max_length));
  }
  const auto start = ropesim::Clock::now();
  CertifiedRange out;
  out.max_length = options.max_length;
  RealisedScores scores(head, options.use_fast_kernel);
  scores.set_growth_limit(options.max_length + 2);
  out.fast_kernel = scores.fast();
  const std::uint64_t k = head.k;
  const mpq_class& f = head.f_large_exact;
  const double f_double = head.f_large.to_double();  // exact: F fits a double on the fast path
  auto record_pass = [&](const mpq_class& gap, std::uint64_t i) {
    if (!out.smallest_passing_gap || gap < *out.smallest_passing_gap) {
      out.smallest_passing_gap = gap;
      out.smallest_passing_gap_query = i;
    }
  };
  auto fail = [&](std::uint64_t i, std::uint64_t j, const Value& t, const Value& m) {
    out.n_max = i - 2;
    out.fail_query = i;
    out.fail_competitor = j;
    out.fail_offset =
        static_cast<std::int64_t>(i) - static_cast<std::int64_t>(k) - static_cast<std::int64_t>(j);
    out.target_score = t;
    out.competitor_score = m;
    if (t.is_finite() && m.is_finite()) out.gap = exact_of(t) - exact_of(m);
  };
  const std::uint64_t last = options.max_length + 1;
  for (std::uint64_t i = k + 1; i <= last; ++i) {
    if (options.abandon && options.abandon()) break;  // incomplete: the caller discards it
    scores.ensure(i + 1);
    const std::uint64_t target = i - k;
    out.scores_evaluated += i;
    if (scores.fast()) {
      const auto& st = scores.state();
      const double t = st.fast_score(i, target);
      double m = -HUGE_VAL;
      std::uint64_t arg = target == 0 ? 1 : 0;
      bool have = false, nan = false;
      // the competitors' scores a block at a time (ScoreKernel::dots: fast_score's values)
      constexpr std::uint64_t kBlock = 256;
      double block[kBlock];
      std::uint64_t block_start = 0;
      for (std::uint64_t j = 0; j < i; ++j) {
        if (j % kBlock == 0) {
          block_start = j;
          st.fast_scores(i, j, static_cast<std::size_t>(std::min(kBlock, i - j)), block);
        }
        if (j == target) continue;
        const double s = block[j - block_start];
        if (std::isnan(s)) {
          m = s;
          arg = j;
          nan = true;
          break;
        }
        if (!have || s > m) {
          m = s;
          arg = j;
          have = true;
        }
      }
      const Value tv = Value::from_double_exact(t), mv = Value::from_double_exact(m);
      bool pass = false;
      if (!nan && std::isfinite(t)) {
        if (m == -HUGE_VAL) {
          pass = true;
        } else if (std::isfinite(m)) {
          pass = lead_at_least(t, m, f_double);
        }
      }
      if (!pass) {
        fail(i, arg, tv, mv);
        break;
      }
      if (std::isfinite(m)) record_pass(mpq_class(t) - mpq_class(m), i);
    } else {
      const Value t = scores.reference_score(i, target);
      Value m;
      std::uint64_t arg = 0;
      bool have = false, nan = false;
      for (std::uint64_t j = 0; j < i; ++j) {
        if (j == target) continue;
        const Value s = scores.reference_score(i, j);
        if (s.is_nan()) {
          m = s;
          arg = j;
          nan = true;
          break;
        }
        if (!have || numeric::compare(s, m) > 0) {
          m = s;
          arg = j;
          have = true;
        }
      }
      bool pass = false;
      if (!nan && t.is_finite()) {
        if (m.is_inf() && m.sign_bit()) {
          pass = true;
        } else if (m.is_finite()) {
          pass = exact_of(t) - exact_of(m) >= f;
        }
      }
      if (!pass) {
        fail(i, arg, t, m);
        break;
      }
      if (m.is_finite()) record_pass(exact_of(t) - exact_of(m), i);
    }
  }
  if (!out.fail_query) {
    out.n_max = options.max_length;
    out.at_limit = true;
  }
  out.seconds = ropesim::seconds_since(start);
  return out;
}

CertifiedRange certified_range(const mpq_class& g, const mpq_class& C, std::uint64_t k,
                               const Format& F, const std::string& realisation,
                               const ScanOptions& options, numeric::Rounding rounding) {
  FixedOffsetSpec spec;
  spec.schedule = attention::single_schedule(g);
  spec.C = C;
  spec.k = k;
  spec.realisation = realisation;
  spec.policy.format = F;
  spec.policy.rounding = rounding;
  return certified_range(make_fixed_offset_head(spec), options);
}

std::uint64_t scan_length_limit(const FixedOffsetHead& head) {
  const RealisedScores probe(head, true);
  const double base = probe.fast() ? 20000.0 : 2000.0;
  const double pairs = std::max<double>(1.0, static_cast<double>(head.head.head_dim) / 2.0);
  return static_cast<std::uint64_t>(std::floor(base / std::sqrt(pairs)));
}

}  // namespace ropesim::proofs
