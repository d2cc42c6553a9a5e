#include "attention/fidelity/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "attention/detail/evaluator.hpp"
#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/json_number.hpp"
#include "numeric/mpfr_util.hpp"
#include "numeric/real_rounding.hpp"
#include "numeric/trig/double_double.hpp"

namespace ropesim::attention {

using numeric::Mpfr;

// ---------------------------------------------------------------------------------------------
// The exact reference

struct ExactBlockRotation::State {
  std::optional<RationalTurn> turn;
  std::unique_ptr<numeric::AngleEnclosure> theta;  // irrational blocks
  long theta_exponent = 0;
};

ExactBlockRotation::ExactBlockRotation(const RotaryBlock& block)
    : state_(std::make_unique<State>()) {
  if (block.turn) {
    state_->turn = block.turn;
  } else if (block.theta.is_zero()) {
    state_->turn = RationalTurn{0, 1};
  } else {
    state_->theta = std::make_unique<numeric::AngleEnclosure>(block.theta);
    const mpfr_srcptr mid = state_->theta->mid();
    state_->theta_exponent = mpfr_regular_p(mid) ? std::max<long>(0, mpfr_get_exp(mid)) : 0;
  }
}

ExactBlockRotation::~ExactBlockRotation() = default;

void ExactBlockRotation::at(std::uint64_t i, mpfr_ptr angle, mpfr_ptr cos, mpfr_ptr sin) {
  const long ibits = std::bit_width(i);
  if (i == 0) {
    mpfr_set_zero(angle, 1);
    mpfr_set_ui(cos, 1, MPFR_RNDN);
    mpfr_set_zero(sin, 1);
    return;
  }
  if (state_->turn) {
    // θ·i = 2π·a·i/m; reduce exactly: r = a·i mod m, then the angle 2πr/m ∈ [0, 2π)
    const RationalTurn& t = *state_->turn;
    const mpz_class ai = t.a * mpz_class(static_cast<unsigned long>(i));
    const mpz_class r = ai % t.m;
    const mpq_class full(2 * ai, t.m);  // θ·i / π
    Mpfr pi(kPrecision + 8 + ibits + mpz_sizeinbase(t.a.get_mpz_t(), 2)), q(mpfr_get_prec(pi));
    mpfr_const_pi(pi, MPFR_RNDN);
    mpfr_set_q(q, full.get_mpq_t(), MPFR_RNDN);
    mpfr_mul(angle, pi, q, MPFR_RNDN);
    const mpz_class twelve_r = 12 * r;
    if (twelve_r % t.m == 0) {
      // Niven: cos and sin are rational exactly at multiples of π/6 (k = 12r/m ∈ 0..11)
      static const int cos_twice[12] = {2, 0, 1, 0, -1, 0, -2, 0, -1, 0, 1, 0};
      static const int sin_twice[12] = {0, 1, 0, 2, 0, 1, 0, -1, 0, -2, 0, -1};
      static const bool cos_rational[12] = {true, false, true, true, true, false,
                                            true, false, true, true, true, false};
      static const bool sin_rational[12] = {true, true, false, true, false, true,
                                            true, true, false, true, false, true};
      const int k = static_cast<int>(mpz_class(twelve_r / t.m).get_si());
      const mpq_class reduced(2 * r, t.m);
      Mpfr x(kPrecision + 8);
      mpfr_set_q(x, reduced.get_mpq_t(), MPFR_RNDN);
      if (cos_rational[k]) {
        mpfr_set_si_2exp(cos, cos_twice[k], -1, MPFR_RNDN);
      } else {
        mpfr_cospi(cos, x, MPFR_RNDN);
      }
      if (sin_rational[k]) {
        mpfr_set_si_2exp(sin, sin_twice[k], -1, MPFR_RNDN);
      } else {
        mpfr_sinpi(sin, x, MPFR_RNDN);
      }
      return;
    }
    Mpfr x(kPrecision + 8);
    mpfr_set_q(x, mpq_class(2 * r, t.m).get_mpq_t(), MPFR_RNDN);  // relative error 2^-200
    mpfr_cospi(cos, x, MPFR_RNDN);
    mpfr_sinpi(sin, x, MPFR_RNDN);
    return;
  }
  // θ·i at wa bits: |a - θi| ≤ err(θ)·i + ulp(a)/2 ≤ 2^-(kPrecision + 8) (θ enclosed at
  // wa + 16 bits, a few ulps wide); cos and sin are 1-Lipschitz, so sin_cos(a) at
  // kPrecision + 8 bits is within 2^-(kPrecision) of the exact values.
  const mpfr_prec_t wa = kPrecision + 8 + ibits + state_->theta_exponent;
  state_->theta->ensure(wa + ibits + 16);
  Mpfr a(wa), c(kPrecision + 8), s(kPrecision + 8);
  mpfr_mul_ui(a, state_->theta->mid(), static_cast<unsigned long>(i), MPFR_RNDN);
  mpfr_sin_cos(s, c, a, MPFR_RNDN);
  mpfr_set(angle, a, MPFR_RNDN);
  mpfr_set(cos, c, MPFR_RNDN);
  mpfr_set(sin, s, MPFR_RNDN);
}

bool ExactBlockRotation::enclose(std::uint64_t i, detail::EnclosedReference& angle,
                                 detail::EnclosedReference& cos,
                                 detail::EnclosedReference& sin) const {
  if (!state_->theta || i == 0 || i > (std::uint64_t{1} << 53)) return false;
  const numeric::AngleEnclosure& theta = *state_->theta;
  const numeric::DoubleDouble a = numeric::dd_mul_uint(theta.dd(), i);
  numeric::DoubleDouble c, s;
  if (!numeric::dd_cos_sin(a, c, s)) return false;
  // |a − θ·i| ≤ i·|θ − dd| + 7u²·|a| (dd_mul_uint); at()'s values are within 2^-200 of the
  // reals (its comment), so 2^-180 covers them; cos and sin are 1-Lipschitz. dd_cos_sin's own
  // error: kDoubleDoubleTrigError (its proven 2^-95 with 7 bits of margin, double_double.hpp).
  const double angle_error =
      static_cast<double>(i) * theta.dd_error() * (1 + 0x1p-40) + std::fabs(a.hi) * 0x1p-100;
  const double trig_error = numeric::kDoubleDoubleTrigError + angle_error * (1 + 0x1p-40);
  angle = {a, angle_error + 0x1p-180};
  cos = {c, trig_error + 0x1p-180};
  sin = {s, trig_error + 0x1p-180};
  return true;
}

// ---------------------------------------------------------------------------------------------
// The comparison

void merge(ErrorMaximum& into, const ErrorMaximum& m) {
  if (!m.seen) return;
  if (!into.seen || m.value > into.value ||
      (m.value == into.value &&
       (m.position < into.position || (m.position == into.position && m.block < into.block)))) {
    into = m;
  }
}

nlohmann::json to_json(const ErrorMaximum& m) {
  nlohmann::json j;
  j["value"] = std::isfinite(m.value) ? nlohmann::json(m.value) : nlohmann::json("inf");
  j["position"] = m.seen ? nlohmann::json(m.position) : nlohmann::json(nullptr);
  j["block"] = m.seen ? nlohmann::json(m.block) : nlohmann::json(nullptr);
  return j;
}

namespace {

constexpr mpfr_prec_t kWork = 256;  // working precision of the error arithmetic

/// The name of the intermediate step that holds a realisation's angle (realisation.hpp
/// BlockReport::steps), or nullptr when it forms none.
const char* angle_step(const Realisation& r) {
  switch (r.kind) {
    case Realisation::Kind::r2:
      return "phi";
    case Realisation::Kind::pipeline:
      return "angle";
    default:
      return nullptr;
  }
}

const Value* find_step(const detail::Steps& steps, const char* name) {
  if (name == nullptr) return nullptr;
  for (const auto& [n, v] : steps) {
    if (n == name) return &v;
  }
  return nullptr;
}

void observe(ErrorMaximum& m, double value, std::uint64_t position, std::size_t block) {
  if (!m.seen || value > m.value) m = ErrorMaximum{value, position, block, true};
}

void merge(ErrorPair& into, const ErrorPair& e) {
  merge(into.absolute, e.absolute);
  merge(into.relative, e.relative);
}

/// |x - ref| and |x - ref|/|ref| into `pair` (x, ref finite; ref at high precision).
/// Returns true when x ≠ ref.
/// `d` (kWork bits) and `rel` (64 bits) are scratch, kept across calls (no allocation per entry).
bool record(ErrorPair& pair, mpfr_srcptr x, mpfr_srcptr ref, std::uint64_t i, std::size_t b,
            Mpfr& d, Mpfr& rel) {
  mpfr_sub(d, x, ref, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  observe(pair.absolute, mpfr_get_d(d, MPFR_RNDU), i, b);
  double relative = 0;
  if (!mpfr_zero_p(d)) {
    if (mpfr_zero_p(ref)) {
      relative = std::numeric_limits<double>::infinity();
    } else {
      mpfr_div(rel, d, ref, MPFR_RNDN);
      relative = std::fabs(mpfr_get_d(rel, MPFR_RNDN));
    }
  }
  observe(pair.relative, relative, i, b);
  return !mpfr_zero_p(d);
}

/// |x - ref| / ulp_T(round_T(ref)), or nullopt when round_T(ref) is not finite.
/// `d` (kWork bits) is scratch.
std::optional<double> ulps(const Format& t, mpfr_srcptr x, mpfr_srcptr ref, Mpfr& d) {
  const Value rounded = numeric::mpfr_engine().from_mpfr(t, ref, Rounding::nearest_even);
  if (!rounded.is_finite()) return std::nullopt;
  const long e = numeric::ulp_exponent(t, rounded);
  mpfr_sub(d, x, ref, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  mpfr_mul_2si(d, d, -e, MPFR_RNDN);
  return mpfr_get_d(d, MPFR_RNDN);
}

void check_options(const Schedule& s, const CompareOptions& o) {
  if (o.positions == 0 || o.positions > kMaxComparePositions) {
    throw InvalidArgument("compare: positions N = " + std::to_string(o.positions) +
                          "; accepted: 1.." + std::to_string(kMaxComparePositions));
  }
  if (o.start > kMaxCompareLastPosition - (o.positions - 1)) {
    throw InvalidArgument("compare: the last position S + N - 1 = " + std::to_string(o.start) +
                          " + " + std::to_string(o.positions - 1) +
                          " exceeds 2^63 - 1; accepted: S + N - 1 ≤ " +
                          std::to_string(kMaxCompareLastPosition));
  }
  std::set<std::size_t> seen;
  for (std::size_t b : o.blocks) {
    if (b >= s.blocks.size()) {
      throw InvalidArgument("compare: block " + std::to_string(b) + " does not exist; '" + s.spec +
                            "' has blocks 0.." +
                            std::to_string(s.blocks.size() == 0 ? 0 : s.blocks.size() - 1));
    }
    if (!seen.insert(b).second) {
      throw InvalidArgument("compare: block " + std::to_string(b) +
                            " is listed twice; list each block once");
    }
  }
  if (s.blocks.empty()) {
    throw InvalidArgument("compare: '" + s.spec +
                          "' has no rotary block; accepted: a schedule with rotary blocks");
  }
}

/// A value recorded into RealisedValues: exactly, or std::logic_error.
double exact_double(const Value& v) {
  if (v.is_wide())
    throw std::logic_error(
        "compare: a realised value does not fit a double; RealisedValues "
        "needs formats of at most 53 bits (check_table_fits_double)");
  return v.narrow();
}

}  // namespace

RealisedValues::RealisedValues(std::uint64_t start, std::uint64_t positions, std::size_t blocks) {
  table.start = start;
  table.positions = positions;
  table.blocks = blocks;
  const std::size_t n = static_cast<std::size_t>(positions) * blocks;
  table.cos.assign(n, 0.0);
  table.sin.assign(n, 0.0);
  angle.assign(n, 0.0);
  entry_flags.assign(n, 0);
  has_angle.assign(n, 0);
  filled.assign(n, 0);
}

void RealisedValues::reset(std::uint64_t start, std::uint64_t positions, std::size_t blocks) {
  table.start = start;
  table.positions = positions;
  table.blocks = blocks;
  table.flags.clear();
  const std::size_t n = static_cast<std::size_t>(positions) * blocks;
  table.cos.resize(n);
  table.sin.resize(n);
  angle.resize(n);
  entry_flags.resize(n);
  has_angle.resize(n);
  filled.assign(n, 0);
}

std::size_t RealisedValues::index(std::uint64_t i, std::size_t d) const {
  if (i < table.start || i - table.start >= table.positions || d >= table.blocks) {
    throw std::logic_error("RealisedValues: entry (" + std::to_string(i) + ", " +
                           std::to_string(d) + ") is outside its positions and blocks");
  }
  return static_cast<std::size_t>(i - table.start) * table.blocks + d;
}

bool RealisedValues::complete() const {
  return std::all_of(filled.begin(), filled.end(), [](std::uint8_t f) { return f != 0; });
}

void RealisedValues::finish() {
  if (!complete()) throw std::logic_error("RealisedValues::finish: some entries are not filled");
  table.flags.assign(static_cast<std::size_t>(table.positions), 0);
  for (std::size_t k = 0; k < table.flags.size(); ++k)
    for (std::size_t d = 0; d < table.blocks; ++d)
      table.flags[k] |= entry_flags[k * table.blocks + d];
}

TableCensus census_of_table(const RealisedTable& table) {
  TableCensus out;
  const std::size_t n = static_cast<std::size_t>(table.positions), nb = table.blocks;
  // Value::bits_key of a narrow value: its bits, one key for every NaN
  auto key = [](double v) {
    return std::isnan(v) ? std::uint64_t{0x7ff8000000000001ULL} : std::bit_cast<std::uint64_t>(v);
  };
  auto flag_bits = [&](std::size_t k) {
    return static_cast<std::uint8_t>(table.flags[k] & (flag_overflow | flag_nan));
  };
  auto same_row = [&](std::size_t a, std::size_t b) {
    if (flag_bits(a) != flag_bits(b)) return false;
    for (std::size_t d = 0; d < nb; ++d) {
      if (key(table.cos[a * nb + d]) != key(table.cos[b * nb + d]) ||
          key(table.sin[a * nb + d]) != key(table.sin[b * nb + d]))
        return false;
    }
    return true;
  };
  // classes by row hash: hash -> the classes' first rows (a collision list), class sizes
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> first_rows;
  first_rows.reserve(n);
  std::vector<std::uint64_t> class_size(n, 0);  // indexed by a class's first row
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ flag_bits(k);
    for (std::size_t d = 0; d < nb; ++d) {
      h = (h ^ key(table.cos[k * nb + d])) * 0x100000001b3ULL;
      h ^= h >> 29;
      h = (h ^ key(table.sin[k * nb + d])) * 0xbf58476d1ce4e5b9ULL;
      h ^= h >> 31;
    }
    auto& rows = first_rows[h];
    std::size_t first = k;
    for (const std::size_t r : rows) {
      if (same_row(r, k)) {
        first = r;
        break;
      }
    }
    if (first == k) {
      rows.push_back(k);
      ++out.distinct;
    } else if (!out.first_repeat_later) {
      out.first_repeat_earlier = table.start + first;
      out.first_repeat_later = table.start + k;
    }
    ++class_size[first];
    const std::uint8_t f = flag_bits(k);
    if (f & flag_overflow) {
      if (out.overflow_count++ == 0) out.first_overflow = table.start + k;
    }
    if (f & flag_nan) {
      if (out.nan_count++ == 0) out.first_nan = table.start + k;
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (class_size[k] > out.largest_class_size) {  // ties: the smaller first position
      out.largest_class_size = class_size[k];
      out.largest_class_position = table.start + k;
    }
  }
  return out;
}

bool carries_attention_factor(const Schedule& s, const Realisation& r) {
  return r.kind == Realisation::Kind::pipeline && s.attention_scaling.has_value();
}

CompareResult compare(const Schedule& s, const Realisation& a,
                      const std::optional<Realisation>& against, const CompareOptions& options,
                      const std::function<void(std::uint64_t, std::uint64_t)>& progress,
                      const CompareValues& values) {
  check_options(s, options);
  if (values.against && !against)
    throw std::logic_error("compare: B's recorded values without a realisation B");
  check_applicable(s, a);
  if (against) check_applicable(s, *against);
  CompareResult result;
  result.schedule = s.spec;
  result.realisation = a.name();
  result.against = against ? against->name() : "exact";
  result.table_format = a.table_format();
  if (against) result.against_table_format = against->table_format();
  result.start = options.start;
  result.positions = options.positions;
  // Like with like (CompareAttentionFactor): the reference takes A's attention factor.
  const bool a_scaled = carries_attention_factor(s, a);
  const bool b_scaled = against && carries_attention_factor(s, *against);
  if (a_scaled || b_scaled) {
    result.attention_factor =
        CompareAttentionFactor{*s.attention_scaling, s.attention_scaling_text, a_scaled, b_scaled};
  }
  // The reference's multiplier: s against exact when A carries s; s_A / s_B against B.
  std::optional<mpq_class> reference_scale;
  if (a_scaled != b_scaled || (a_scaled && !against)) {
    if (!against || (a_scaled && !b_scaled)) {
      reference_scale = *s.attention_scaling;
    } else {
      reference_scale = mpq_class(1 / *s.attention_scaling);  // B carries s, A does not
    }
  }
  const bool same_convention = !reference_scale.has_value();
  const std::uint64_t total_entries =
      options.positions *
      static_cast<std::uint64_t>(options.blocks.empty() ? s.blocks.size() : options.blocks.size());
  std::uint64_t done_entries = 0;

  std::vector<std::size_t> blocks = options.blocks;
  if (blocks.empty()) {
    for (std::size_t b = 0; b < s.blocks.size(); ++b) blocks.push_back(b);
  }
  std::vector<Realisation> members{a};
  // B's values are realised here unless they were recorded before (CompareValues::against)
  if (against && !values.against) members.push_back(*against);
  const char* a_angle = angle_step(a);
  const char* b_angle = against ? angle_step(*against) : nullptr;
  const Format& table = result.table_format;

  // The binary64 fast path of the error arithmetic (compare_fast.hpp): for values held in
  // doubles, against B's values in the same convention or against the exact rotation (its
  // double-double enclosure, scaled by s when s is a double); MPFR where it cannot decide.
  const detail::FastUlpFormat fast_ulps(table);
  std::optional<double> fast_scale;
  if (reference_scale && !against) {
    const double sd = reference_scale->get_d();
    if (std::isfinite(sd) && mpq_class(sd) == *reference_scale) fast_scale = sd;
  }
  const bool fast = options.fast_arithmetic && fast_ulps.usable() &&
                    (against ? same_convention : (!reference_scale || fast_scale.has_value()));
  detail::EnclosedReference fast_cos, fast_sin, fast_angle;

  Mpfr xa(kWork), xb(kWork), ref_cos(kWork), ref_sin(kWork), ref_angle(kWork), x(kWork);
  Mpfr scratch(kWork), scratch_rel(64);
  detail::Steps steps_a, steps_b;
  Value recorded_b_angle;
  // A's realised entries of the current chunk (batch_realisation)
  std::vector<RealisedPair> chunk_pairs;
  std::vector<double> chunk_angles;
  std::vector<std::uint8_t> chunk_fast;
  Value fast_angle_value;
  bool overall_angle = false;
  for (std::size_t b : blocks) {
    BlockComparison block;
    block.block = b;
    CompareStats& st = block.stats;
    // a block forms an angle on both sides unless a side is r1/r3 (or a dropped θ = 0
    // pipeline block, which has no angle step): decided at the first position
    bool angle_known = false, has_angle = false;
    ErrorPair angle_errors;
    detail::BlockEvaluator ev(s, b, members, a.arithmetic_engine());
    std::optional<ExactBlockRotation> exact;
    if (!against) exact.emplace(s.blocks[b]);
    // A's entries a chunk at a time on the batched fast path when its group has one and says
    // what the angle step is; the entries it leaves (and every entry otherwise) one at a time
    const detail::FastAngle a_fast_angle = ev.fast_angle(0);
    const bool batched = options.batch_realisation && ev.fast_capable(0) &&
                         (a_angle == nullptr || a_fast_angle != detail::FastAngle::unknown);
    constexpr std::uint64_t kChunk = 2048;
    std::uint64_t chunk_begin = 0;
    for (std::uint64_t k = 0; k < options.positions; ++k) {
      const std::uint64_t i = options.start + k;
      if (progress && (k & 4095) == 0 && k > 0) progress(done_entries + k, total_entries);
      steps_a.clear();
      steps_b.clear();
      if (batched && (k == 0 || k - chunk_begin == kChunk)) {
        chunk_begin = k;
        ev.evaluate_with_angles(0, i, i + std::min(kChunk, options.positions - k), chunk_pairs,
                                chunk_angles, chunk_fast);
      }
      RealisedPair pa;
      const Value* va = nullptr;
      if (batched && chunk_fast[k - chunk_begin]) {
        pa = chunk_pairs[k - chunk_begin];
        if (a_angle != nullptr && a_fast_angle == detail::FastAngle::value) {
          fast_angle_value = Value::from_double_exact(chunk_angles[k - chunk_begin]);
          va = &fast_angle_value;
        }
      } else if (batched && a_angle == nullptr) {
        pa = chunk_pairs[k - chunk_begin];  // the exact path's, no step needed
      } else {
        pa = ev.evaluate_one(0, i, a_angle ? &steps_a : nullptr);
        va = find_step(steps_a, a_angle);
      }
      if (values.record) {
        auto& rec = *values.record;
        const std::size_t at = rec.index(i, b);
        rec.table.cos[at] = exact_double(pa.cos);
        rec.table.sin[at] = exact_double(pa.sin);
        rec.entry_flags[at] = pa.flags;
        rec.has_angle[at] = va != nullptr;
        rec.angle[at] = va != nullptr ? exact_double(*va) : 0.0;
        rec.filled[at] = 1;
      }
      RealisedPair pb;
      const Value* vb = nullptr;
      if (against && values.against) {
        const auto& rec = *values.against;
        const std::size_t at = rec.index(i, b);
        if (!rec.filled[at])
          throw std::logic_error("compare: B's recorded values lack entry (" + std::to_string(i) +
                                 ", " + std::to_string(b) + ")");
        pb.cos = Value::from_double_exact(rec.table.cos[at]);
        pb.sin = Value::from_double_exact(rec.table.sin[at]);
        pb.flags = rec.entry_flags[at];
        if (b_angle != nullptr && rec.has_angle[at]) {
          recorded_b_angle = Value::from_double_exact(rec.angle[at]);
          vb = &recorded_b_angle;
        }
      } else if (against) {
        pb = ev.evaluate_one(1, i, b_angle ? &steps_b : nullptr);
        vb = find_step(steps_b, b_angle);
      }
      // against exact: the double-double enclosures when the fast path may use them, else (or
      // when it cannot decide: exact_reference below) at()'s 192-bit values
      bool exact_known = false;
      const bool fast_reference =
          fast && !against && exact->enclose(i, fast_angle, fast_cos, fast_sin);
      if (fast_reference && fast_scale) {
        fast_cos = detail::scaled(fast_cos, *fast_scale);
        fast_sin = detail::scaled(fast_sin, *fast_scale);
      }
      auto exact_reference = [&] {
        if (against || exact_known) return;
        exact_known = true;
        exact->at(i, ref_angle, ref_cos, ref_sin);
        if (a.kind == Realisation::Kind::pipeline && a.steps.resonance && s.blocks[b].turn) {
          // resonance-table forms the angle of entry t = i mod λ of a tabulated block
          // (realisation.hpp ResonanceTable): its exact angle is 2π·t/λ, not θ·i.
          const RationalTurn& turn = *s.blocks[b].turn;
          const auto& seq_len = a.steps.resonance->seq_len;
          if (turn.m.fits_ulong_p() && (!seq_len || turn.m.get_ui() <= *seq_len)) {
            const mpq_class reduced(mpz_class(2 * (i % turn.m.get_ui())), turn.m);
            Mpfr q(kWork);
            mpfr_const_pi(ref_angle, MPFR_RNDN);
            mpfr_set_q(q, reduced.get_mpq_t(), MPFR_RNDN);
            mpfr_mul(ref_angle, ref_angle, q, MPFR_RNDN);
          }
        }
      };
      if (!against && !fast_reference) exact_reference();
      if (!angle_known) {
        angle_known = true;
        has_angle = va != nullptr && (!against || vb != nullptr);
      }
      ++st.entries;
      const bool a_finite = pa.cos.is_finite() && pa.sin.is_finite();
      const bool b_finite = !against || (pb.cos.is_finite() && pb.sin.is_finite());
      if (!a_finite || !b_finite) {
        ++st.nonfinite;
        if (!st.first_nonfinite) st.first_nonfinite = i;
        if (!against || !pa.cos.same_bits(pb.cos) || !pa.sin.same_bits(pb.sin)) ++st.differing;
        continue;
      }
      // cos and sin: every number decided by the fast path, or all of them in MPFR
      bool entry_done = false;
      const bool fast_values = fast && !pa.cos.is_wide() && !pa.sin.is_wide() &&
                               (against ? !pb.cos.is_wide() && !pb.sin.is_wide() : fast_reference);
      if (fast_values) {
        if (against) {
          fast_cos = {{pb.cos.narrow(), 0.0}, 0.0};
          fast_sin = {{pb.sin.narrow(), 0.0}, 0.0};
        }
        const double ca = pa.cos.narrow(), sa = pa.sin.narrow();
        const auto ec = detail::fast_errors(ca, fast_cos);
        const auto es = ec ? detail::fast_errors(sa, fast_sin) : std::nullopt;
        const auto uc = es ? fast_ulps.ulps(ca, fast_cos) : std::nullopt;
        const auto us = uc ? fast_ulps.ulps(sa, fast_sin) : std::nullopt;
        if (us) {
          observe(st.cos.absolute, ec->absolute, i, b);
          observe(st.cos.relative, ec->relative, i, b);
          observe(st.sin.absolute, es->absolute, i, b);
          observe(st.sin.relative, es->relative, i, b);
          if (against && same_convention ? (!pa.cos.same_bits(pb.cos) || !pa.sin.same_bits(pb.sin))
                                         : (ec->differs || es->differs)) {
            ++st.differing;
          }
          if (*uc) observe(st.ulps, **uc, i, b);
          if (*us) observe(st.ulps, **us, i, b);
          entry_done = true;
        }
      }
      if (!entry_done) {
        exact_reference();
        if (against) {
          pb.cos.to_mpfr(ref_cos);
          pb.sin.to_mpfr(ref_sin);
        }
        if (reference_scale) {
          // s·(cos, sin) at kWork bits (relative error 2^-256): far below any format's ulp
          mpfr_mul_q(ref_cos, ref_cos, reference_scale->get_mpq_t(), MPFR_RNDN);
          mpfr_mul_q(ref_sin, ref_sin, reference_scale->get_mpq_t(), MPFR_RNDN);
        }
        pa.cos.to_mpfr(xa);
        pa.sin.to_mpfr(xb);
        const bool cos_differs = record(st.cos, xa, ref_cos, i, b, scratch, scratch_rel);
        const bool sin_differs = record(st.sin, xb, ref_sin, i, b, scratch, scratch_rel);
        if (against && same_convention ? (!pa.cos.same_bits(pb.cos) || !pa.sin.same_bits(pb.sin))
                                       : (cos_differs || sin_differs)) {
          ++st.differing;
        }
        if (const auto u = ulps(table, xa, ref_cos, scratch)) observe(st.ulps, *u, i, b);
        if (const auto u = ulps(table, xb, ref_sin, scratch)) observe(st.ulps, *u, i, b);
      }
      if (has_angle && va != nullptr && va->is_finite()) {
        if (against && (vb == nullptr || !vb->is_finite())) continue;
        // the resonance table's reduced angle (exact_reference) has no fast enclosure
        const bool reduced = a.kind == Realisation::Kind::pipeline && a.steps.resonance &&
                             s.blocks[b].turn.has_value();
        if (fast && !va->is_wide() && !reduced && (against ? !vb->is_wide() : fast_reference)) {
          const detail::EnclosedReference ref =
              against ? detail::EnclosedReference{{vb->narrow(), 0.0}, 0.0} : fast_angle;
          if (const auto e = detail::fast_errors(va->narrow(), ref)) {
            observe(angle_errors.absolute, e->absolute, i, b);
            observe(angle_errors.relative, e->relative, i, b);
            continue;
          }
        }
        exact_reference();
        if (against) vb->to_mpfr(ref_angle);
        va->to_mpfr(x);
        record(angle_errors, x, ref_angle, i, b, scratch, scratch_rel);
      }
    }
    if (has_angle) {
      st.angle = angle_errors;
      overall_angle = true;
    }
    CompareStats& all = result.overall;
    merge(all.cos, st.cos);
    merge(all.sin, st.sin);
    merge(all.ulps, st.ulps);
    all.entries += st.entries;
    all.differing += st.differing;
    all.nonfinite += st.nonfinite;
    if (st.first_nonfinite &&
        (!all.first_nonfinite || *st.first_nonfinite < *all.first_nonfinite)) {
      all.first_nonfinite = st.first_nonfinite;
    }
    if (st.angle) {
      if (!all.angle) all.angle = ErrorPair{};
      merge(*all.angle, *st.angle);
    }
    result.blocks.push_back(std::move(block));
    done_entries += options.positions;
    if (progress) progress(done_entries, total_entries);
  }
  if (!overall_angle) result.overall.angle.reset();
  return result;
}

WorkEstimate compare_work(const Schedule& s, const CompareOptions& options, bool against_exact) {
  WorkEstimate e;
  e.what = "compared (position, block) entries";
  const double blocks = static_cast<double>(
      options.blocks.empty() ? std::max<std::size_t>(1, s.blocks.size()) : options.blocks.size());
  e.units = static_cast<double>(options.positions) * blocks;
  e.units_per_second = against_exact ? 1e5 : 4e5;
  e.bytes = 1e6;
  return e;
}

namespace {

nlohmann::json pair_json(const ErrorPair& p) {
  return {{"absolute", to_json(p.absolute)}, {"relative", to_json(p.relative)}};
}

nlohmann::json stats_json(const CompareStats& st) {
  nlohmann::json j;
  j["cos"] = pair_json(st.cos);
  j["sin"] = pair_json(st.sin);
  j["angle"] = st.angle ? pair_json(*st.angle) : nlohmann::json(nullptr);
  j["ulps"] = to_json(st.ulps);
  j["entries"] = st.entries;
  j["differing"] = st.differing;
  j["nonfinite"] = st.nonfinite;
  j["first_nonfinite"] =
      st.first_nonfinite ? nlohmann::json(*st.first_nonfinite) : nlohmann::json(nullptr);
  return j;
}

}  // namespace

nlohmann::json to_json(const CompareResult& r) {
  nlohmann::json j;
  j["schedule"] = r.schedule;
  j["realization"] = r.realisation;
  j["against"] = r.against;
  j["table_format"] = r.table_format.name;
  j["against_table_format"] = r.against_table_format ? nlohmann::json(r.against_table_format->name)
                                                     : nlohmann::json(nullptr);
  j["start"] = r.start;
  j["positions"] = r.positions;
  if (r.attention_factor) {
    const auto& f = *r.attention_factor;
    nlohmann::json factor = {{"decimal", fmt::format("{:.17g}", numeric::nearest_double(f.value))},
                             {"expression", f.expression},
                             {"realization", f.realisation},
                             {"against", f.against}};
    numeric::put_exact(factor, "value", f.value);  // a binary64: a JSON number
    j["attention_factor"] = factor;
  } else {
    j["attention_factor"] = nullptr;
  }
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& b : r.blocks) {
    nlohmann::json jb = stats_json(b.stats);
    jb["block"] = b.block;
    blocks.push_back(jb);
  }
  j["blocks"] = blocks;
  j["overall"] = stats_json(r.overall);
  return j;
}

}  // namespace ropesim::attention
