#include "proofs/range/horizon.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/budget.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/json_number.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::proofs {

using numeric::Format;
using numeric::Mpfr;
using numeric::Value;

namespace {

constexpr std::int64_t kRecordLimit = 4'000'000'000'000'000'000LL;
// How far estimate_horizon scans S(n) of a head of several blocks (about 1 s of CPU for 64).
constexpr std::uint64_t kEstimateScanLimit = std::uint64_t{1} << 23;

bool single_block(const FixedOffsetHead& h) { return h.ideal.blocks.size() == 1; }

nlohmann::json number_or_null(const std::optional<double>& d) {
  if (!d || !std::isfinite(*d)) return nullptr;
  return *d;
}

/// out[key] = q as put_exact writes it, or null when q is unset.
void put_optional(nlohmann::json& out, const std::string& key, const std::optional<mpq_class>& q) {
  if (q) {
    numeric::put_exact(out, key, *q);
  } else {
    out[key] = nullptr;
  }
}

}  // namespace

std::vector<std::pair<Value, std::string>> auto_c_candidates(const FixedOffsetHead& head,
                                                             const mpq_class& slack,
                                                             std::int64_t record_limit) {
  const Format& F = head.policy.format;
  const auto& engine = head.policy.arithmetic_engine();
  const mpq_class& f = head.f_large_exact;
  const mpq_class W = head.ideal.weight_sum();
  std::vector<std::pair<Value, std::string>> out;
  const auto records = record_distances(
      head.ideal, single_block(head) ? kRecordLimit : std::max<std::int64_t>(1, record_limit));
  for (const auto& rec : records) {
    Mpfr lo(160), hi(160), delta(160), c(160);
    head.ideal.enclose(rec.n, lo, hi);
    mpfr_set_q(delta, W.get_mpq_t(), MPFR_RNDD);
    mpfr_sub(delta, delta, hi, MPFR_RNDD);  // δ_n from below
    if (mpfr_sgn(delta) <= 0) continue;
    const mpq_class numerator = f * (1 + slack);
    mpfr_set_q(c, numerator.get_mpq_t(), MPFR_RNDU);
    mpfr_div(c, c, delta, MPFR_RNDU);  // ≥ f(1+slack)/δ_n
    const Value C = engine.from_mpfr(F, c, numeric::Rounding::upward);
    if (!C.is_finite()) break;  // later records have smaller δ, so larger C
    out.emplace_back(C, "record n=" + std::to_string(rec.n));
  }
  // Powers of two: from 2^ceil(log2(f/2)) up to 2^(ceil(log2 f) + p + 2) (or the largest
  // finite power, if smaller). Why stop there: doubling C doubles every realised score
  // exactly (binary F, no overflow), so gaps scale by 2 and zero gaps stay zero. Once
  // C ≥ f·2^(p+1), every non-zero gap between the target score (≈ C·W ≥ C/2 for the unit
  // weights of these heads) and a competitor is at least ulp(C/4) ≥ C·2^(-1-p) ≥ f, so
  // larger powers of two cannot raise N_max; before this cap, wide exponent ranges
  // (p=11,e=16: 2^32767) meant tens of thousands of scans.
  const mpq_class half_f = f / 2;
  long e = static_cast<long>(std::ceil(std::log2(half_f.get_d())));
  const long last =
      static_cast<long>(std::ceil(std::log2(f.get_d()))) + static_cast<long>(F.precision) + 2;
  const mpq_class max_f = exact_rational(numeric::max_finite(F));
  for (; e <= last; ++e) {
    mpz_class p2 = 1;
    mpq_class power;
    if (e >= 0) {
      mpz_mul_2exp(p2.get_mpz_t(), p2.get_mpz_t(), static_cast<unsigned long>(e));
      power = mpq_class(p2);
    } else {
      mpz_mul_2exp(p2.get_mpz_t(), p2.get_mpz_t(), static_cast<unsigned long>(-e));
      power = mpq_class(mpz_class(1), p2);
    }
    if (power > max_f) break;
    out.emplace_back(engine.from_rational(F, power, numeric::Rounding::nearest_even),
                     "2^" + std::to_string(e));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return exact_rational(a.first) < exact_rational(b.first);
  });
  std::vector<std::pair<Value, std::string>> unique;
  for (auto& c : out) {
    if (!unique.empty() && exact_rational(unique.back().first) == exact_rational(c.first)) continue;
    unique.push_back(std::move(c));
  }
  return unique;
}

namespace {

constexpr ropesim::Spelling<RangeAlgorithm> range_algorithm_names[] = {
    {RangeAlgorithm::automatic, "auto"},
    {RangeAlgorithm::candidates, "candidates"},
    {RangeAlgorithm::scan, "scan"}};
constexpr ropesim::EnumNames<RangeAlgorithm> range_algorithm_table{
    .what = "certified-range algorithm",
    .names = range_algorithm_names,
    .aliases = {},
    .accepted = {},
    .suggest = false,
    .suggestions = {}};

}  // namespace

RangeAlgorithm parse_range_algorithm(const std::string& text) {
  return ropesim::parse_name(range_algorithm_table, text);
}

std::string_view to_string(RangeAlgorithm algorithm) {
  return ropesim::name_of(range_algorithm_table, algorithm);
}

RangeAlgorithm resolve_range_algorithm(RangeAlgorithm algorithm, const FixedOffsetHead& head) {
  if (algorithm == RangeAlgorithm::scan) return algorithm;
  const auto why = fast_range_refusal(head);
  if (!why) return RangeAlgorithm::candidates;
  if (algorithm == RangeAlgorithm::candidates)
    throw InvalidArgument("the candidate algorithm does not apply: " + *why +
                          "; use the scan (algorithm auto or scan)");
  return RangeAlgorithm::scan;
}

std::uint64_t default_max_length(RangeAlgorithm resolved, const FixedOffsetHead& head) {
  return resolved == RangeAlgorithm::candidates ? fast_range_length_limit(head)
                                                : scan_length_limit(head);
}

RangeEstimate estimate_horizon(const FixedOffsetHead& head, std::uint64_t max_length,
                               unsigned threads, bool auto_C, const mpq_class& slack) {
  // the scans of S(n) up to L besides the range (C = auto's record distances, the report's δ
  // bound and tie distance): O(blocks) per offset each, on the threads
  auto columns = [&](const RangeEstimate& e) {
    return (auto_C ? 3 : 2) * static_cast<double>(max_length) * e.seconds_per_offset /
           std::max(1u, threads);
  };
  if (!auto_C) {
    RangeEstimate e = estimate_certified_range_fast(head, max_length, threads);
    e.seconds += columns(e);
    return e;
  }
  // C = auto: the candidates in increasing order, each on all the threads (as horizon() runs
  // them), until one is predicted to reach L (its probe passes and C·δ_L ≥ f_large in exact
  // arithmetic), where the search stops
  // The estimate's own scans of S(n) (the record distances behind the candidates, and each
  // candidate's δ bound) stop at kEstimateScanLimit offsets for several blocks: to L they cost
  // as much as the run's columns, 2.5 min of CPU before a refusal at L = 10^9 on llama3-8b.
  // Records beyond it (candidates between two powers of two) are not charged; a candidate
  // whose δ bound passes the cut is taken as the last one (the columns to L are charged).
  const std::uint64_t searched =
      single_block(head) ? max_length : std::min(max_length, kEstimateScanLimit);
  const auto candidates = auto_c_candidates(
      head, slack, static_cast<std::int64_t>(std::min<std::uint64_t>(searched + 1, kRecordLimit)));
  CosineScanOptions scan;
  scan.threads = std::max(1u, threads);
  RangeEstimate total;
  std::uint64_t longest_reached = 0;
  bool probed_full = false;
  FixedOffsetSpec spec;
  spec.schedule = head.schedule;
  spec.weights = head.ideal.weights;
  spec.k = head.k;
  spec.realisation = head.realisation.name();  // r1 or r3 (the candidate algorithm's domain)
  spec.policy = head.policy;
  for (const auto& [C, source] : candidates) {
    spec.C = exact_rational(C);
    const FixedOffsetHead h = make_fixed_offset_head(spec);
    if (fast_range_refusal(h)) {
      // the scan instead (an overflow-prone C), on one thread: N²/2 scores at the binary64
      // kernel's rate
      const double n = static_cast<double>(max_length) + 2;
      total.seconds += n * n / 2 * 2e-9 * static_cast<double>(h.head.head_dim);
      continue;
    }
    // the ideal gap C·δ_n falls below f_large past the δ bound, so the run of this C stops
    // there at the latest (about): charged up to it (fp64 on one frequency: most of the 57
    // candidates stop far below L, and charging each to L made the estimate 8× the run)
    const SearchBound reach =
        delta_bound(h.ideal, h.C_exact, h.f_large_exact, static_cast<std::int64_t>(searched), scan);
    const std::uint64_t reached =
        reach.at_limit
            ? max_length
            : std::min<std::uint64_t>(max_length, static_cast<std::uint64_t>(reach.value) + 1);
    const RangeEstimate e =
        estimate_certified_range_fast(h, std::max<std::uint64_t>(1, reached), threads);
    total.seconds += e.seconds;
    // the per-offset cost of the columns: the largest over the candidates probed on a full
    // probe of offsets (20000, or L); one charged to a δ bound of a few offsets measures its
    // enumerator's set-up, not offsets (taking those made bench_horizon's estimates 100x the
    // runs), and counts only when no candidate had a full probe
    const bool full_probe = reached >= std::min<std::uint64_t>(20000, max_length);
    if (full_probe && !probed_full) total.seconds_per_offset = 0;
    if (full_probe || (!probed_full && reached >= longest_reached)) {
      total.seconds_per_offset = full_probe
                                     ? std::max(total.seconds_per_offset, e.seconds_per_offset)
                                     : e.seconds_per_offset;
      longest_reached = std::max(longest_reached, reached);
    }
    probed_full = probed_full || full_probe;
    total.bytes = std::max(total.bytes, e.bytes);
    total.scores += e.scores;
    if (e.fails_in_probe) continue;
    if (reach.at_limit) break;
  }
  total.seconds += columns(total);
  return total;
}

std::uint64_t horizon_max_length(RangeAlgorithm resolved, const FixedOffsetHead& head,
                                 std::optional<std::uint64_t> requested, bool allow_slow,
                                 unsigned threads, bool auto_C, const mpq_class& slack,
                                 std::optional<RangeEstimate>* estimate) {
  const std::uint64_t limit = default_max_length(resolved, head);
  if (requested && *requested < 1) throw InvalidArgument("L must be at least 1");
  if (!requested) return limit;
  if (*requested > limit && allow_slow && estimate && resolved == RangeAlgorithm::candidates)
    *estimate = estimate_horizon(head, *requested, threads, auto_C, slack);
  if (*requested > limit && !allow_slow) {
    const double n = static_cast<double>(*requested) + 2;
    if (resolved == RangeAlgorithm::candidates) {
      // beyond the quick limit: run when the estimate is within the default budget
      const RangeEstimate e = estimate_horizon(head, *requested, threads, auto_C, slack);
      if (estimate) *estimate = e;
      const Budget budget;
      if (e.seconds <= budget.seconds && e.bytes <= budget.bytes) return *requested;
      throw InvalidArgument(fmt::format(
          "L = {} is beyond the candidate algorithm's quick limit {} and its estimate exceeds "
          "the budget of {} (estimate: up to {} and {:.3g} GB on {} thread{}); pass "
          "--allow-slow to run it anyway",
          *requested, limit, duration_text(budget.seconds), duration_text(e.seconds), e.bytes / 1e9,
          threads, threads == 1 ? "" : "s"));
    }
    throw InvalidArgument(
        fmt::format("L = {} is beyond what the quadratic scan does in the time a user would "
                    "wait for this head (limit {}, up to N^2/2 = {:.3g} scores); pass "
                    "--allow-slow to run it anyway",
                    *requested, limit, n * n / 2));
  }
  return *requested;
}

std::string duration_text(double seconds) {
  if (seconds < 120) return fmt::format("{:.2g} s", std::max(seconds, 0.01));
  if (seconds < 7200) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

HorizonReport horizon(const HorizonSpec& spec) {
  HorizonSpec s = spec;
  if (s.auto_C) s.head.C = 1;
  FixedOffsetHead head = make_fixed_offset_head(s.head);
  const RangeAlgorithm algorithm = resolve_range_algorithm(s.algorithm, head);
  const std::uint64_t max_length =
      s.max_length ? s.max_length : default_max_length(algorithm, head);
  ScanOptions options;
  options.max_length = max_length;
  options.use_fast_kernel = s.use_fast_kernel;
  // every C (one, or each of C = auto's candidates in turn) runs its position chunks on them
  options.threads = std::max(1u, s.threads);
  // One head: the candidate algorithm where it applies to this C, else the scan (a C too large
  // for the error analysis; the scan's quick limit then caps L unless max_length was given).
  auto measure = [&](const FixedOffsetHead& h, const ScanOptions& with) {
    if (algorithm == RangeAlgorithm::candidates) {
      if (!fast_range_refusal(h)) return certified_range_fast(h, with);
      ScanOptions o = with;
      if (!s.max_length) o.max_length = std::min(max_length, scan_length_limit(h));
      return certified_range(h, o);
    }
    return certified_range(h, with);
  };

  HorizonReport report;
  report.auto_C = s.auto_C;
  if (s.auto_C) {
    const auto candidates = auto_c_candidates(
        head, s.slack,
        static_cast<std::int64_t>(std::min<std::uint64_t>(max_length + 1, kRecordLimit)));
    if (candidates.empty()) {
      throw InvalidArgument("C auto: no candidate C is finite in " + head.policy.format.name);
    }
    // The candidates in increasing order, each measured on all the threads (its position
    // chunks), until one reaches the limit: the search stops there. (Running the next C beside
    // the one being measured, as before, spent a thread on a candidate the search then
    // discarded, and could start a huge-C scan that the candidate algorithm refuses.)
    std::optional<std::size_t> best;
    CertifiedRange best_range;
    FixedOffsetHead best_head;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      FixedOffsetSpec hs = s.head;
      hs.C = exact_rational(candidates[c].first);
      FixedOffsetHead h = make_fixed_offset_head(hs);
      CertifiedRange range = measure(h, options);
      report.candidates.push_back(
          {candidates[c].first, candidates[c].second, range.n_max, range.at_limit});
      if (s.progress) s.progress(c + 1, candidates.size());
      if (!best || range.n_max > best_range.n_max) {
        best = c;
        best_range = std::move(range);
        best_head = std::move(h);
      }
      if (best_range.at_limit) break;
    }
    head = std::move(best_head);
    report.range = std::move(best_range);
    report.C_source = candidates[*best].second;
  } else {
    report.range = measure(head, options);
  }

  const Format& F = head.policy.format;
  report.format = F.name;
  report.saturating = !F.is_fixed_point() && !F.has_infinity;
  report.schedule = head.schedule.spec;
  report.realisation = head.realisation.name();
  report.rounding = std::string(numeric::to_string(head.policy.rounding));
  report.summation = std::string(attention::to_string(head.policy.summation));
  report.k = head.k;
  report.blocks = head.ideal.blocks.size();
  report.C = head.C;
  report.f_large = head.f_large;
  if (single_block(head) && head.schedule.kind == "single") {
    report.g = head.schedule.blocks[0].theta.as_rational();
  }
  const std::int64_t limit =
      single_block(head) ? kRecordLimit : static_cast<std::int64_t>(max_length);
  // The two comparison columns: for one block over the record distances (continued
  // fractions); for several blocks each a filtered scan of S(n) up to max_length (O(blocks) per
  // offset, cosine_scan.hpp) on the threads, cancelled past its first hit.
  CosineScanOptions scan;
  scan.threads = std::max(1u, s.threads);
  report.delta_bound = delta_bound(head.ideal, head.C_exact, head.f_large_exact, limit, scan);
  report.tie_distance = tie_distance(head.ideal, F, head.policy.rounding, limit, scan);
  const double C = head.C.to_double(), f = head.f_large.to_double();
  if (single_block(head)) report.heuristic = std::numbers::pi * std::sqrt(2 * C / f) - 1;
  report.tie_cap =
      std::numbers::pi * std::sqrt(2 / numeric::unit_roundoff(F, head.policy.rounding));
  const Format* angle_format = nullptr;
  if (head.realisation.kind == attention::Realisation::Kind::r2)
    angle_format = &head.realisation.format;
  if (head.realisation.kind == attention::Realisation::Kind::pipeline)
    angle_format = &head.realisation.steps.angle.compute;
  if (angle_format && !angle_format->is_fixed_point())
    report.pm_ceiling = std::ldexp(1.0, angle_format->precision - 1);
  return report;
}

nlohmann::json to_json(const HorizonReport& r) {
  nlohmann::json j;
  j["format"] = r.format;
  put_optional(j, "g", r.g);
  j["k"] = r.k;
  numeric::put_value(j, "C", r.C);
  j["realization"] = r.realisation;
  numeric::put_value(j, "f_large", r.f_large);
  j["n_max"] = r.range.n_max;
  j["fail_query"] =
      r.range.fail_query ? nlohmann::json(*r.range.fail_query) : nlohmann::json(nullptr);
  j["fail_competitor"] =
      r.range.fail_competitor ? nlohmann::json(*r.range.fail_competitor) : nlohmann::json(nullptr);
  j["gap"] =
      r.range.gap ? nlohmann::json(numeric::nearest_double(*r.range.gap)) : nlohmann::json(nullptr);
  j["delta_bound"] = r.delta_bound.value;
  j["tie_distance"] =
      r.tie_distance ? nlohmann::json(r.tie_distance->value) : nlohmann::json(nullptr);
  // extras
  j["saturating"] = r.saturating;
  j["schedule"] = r.schedule;
  j["rounding"] = r.rounding;
  j["summation"] = r.summation;
  j["blocks"] = r.blocks;
  j["n_max_at_limit"] = r.range.at_limit;
  j["max_length"] = r.range.max_length;
  j["offset"] =
      r.range.fail_offset ? nlohmann::json(*r.range.fail_offset) : nlohmann::json(nullptr);
  j["gap_exact"] =
      r.range.gap ? (numeric::exact_decimal_json(*r.range.gap)) : nlohmann::json(nullptr);
  if (r.range.target_score) {
    numeric::put_value(j, "target_score", *r.range.target_score);
  } else {
    j["target_score"] = nullptr;
  }
  if (r.range.competitor_score) {
    numeric::put_value(j, "competitor_score", *r.range.competitor_score);
  } else {
    j["competitor_score"] = nullptr;
  }
  put_optional(j, "smallest_passing_gap", r.range.smallest_passing_gap);
  j["delta_bound_at_limit"] = r.delta_bound.at_limit;
  j["tie_distance_at_limit"] =
      r.tie_distance ? nlohmann::json(r.tie_distance->at_limit) : nlohmann::json(nullptr);
  j["heuristic"] = number_or_null(r.heuristic);
  j["tie_cap"] = r.tie_cap;
  j["pm_ceiling"] = number_or_null(r.pm_ceiling);
  j["C_source"] = r.C_source;
  nlohmann::json cands = nlohmann::json::array();
  for (const auto& c : r.candidates) {
    nlohmann::json candidate = {{"source", c.source}, {"n_max", c.n_max}, {"at_limit", c.at_limit}};
    numeric::put_value(candidate, "C", c.C);
    cands.push_back(std::move(candidate));
  }
  j["candidates"] = cands;
  j["scores_evaluated"] = r.range.scores_evaluated;
  j["fast_kernel"] = r.range.fast_kernel;
  j["binary32_kernel"] = r.range.binary32_kernel;
  j["algorithm"] = r.range.algorithm;
  j["candidate_offsets"] = r.range.algorithm == "candidates"
                               ? nlohmann::json(r.range.candidate_offsets)
                               : nlohmann::json(nullptr);
  put_optional(j, "error_bound", r.range.error_bound);
  j["offsets_scored"] = r.range.algorithm == "candidates" ? nlohmann::json(r.range.offsets_scored)
                                                          : nlohmann::json(nullptr);
  j["scores_per_query_bound"] = r.range.algorithm == "candidates"
                                    ? nlohmann::json(r.range.scores_per_query_bound)
                                    : nlohmann::json(nullptr);
  return j;
}

}  // namespace ropesim::proofs
