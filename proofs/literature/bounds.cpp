#include "proofs/literature/bounds.hpp"

#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "numeric/arithmetic.hpp"
#include "numeric/exact.hpp"
#include "numeric/mpfr_util.hpp"
#include "numeric/parallel.hpp"

namespace ropesim::proofs {

using numeric::Mpfr;

// ---------------------------------------------------------------------------------------------
// The grid

mpz_class base_grid_value(std::uint64_t index) {
  if (index > kMaxBaseGridIndex) {
    throw InvalidArgument("base grid index " + std::to_string(index) + " is beyond the grid (0.." +
                          std::to_string(kMaxBaseGridIndex) + ", bases 10 .. 9.9e19)");
  }
  mpz_class power;
  mpz_ui_pow_ui(power.get_mpz_t(), 10, static_cast<unsigned long>(index / 90));
  return mpz_class(static_cast<unsigned long>(10 + index % 90)) * power;
}

std::uint64_t base_grid_index_at_least(const mpq_class& b) {
  // The grid is increasing: binary search over the indices.
  std::uint64_t lo = 0, hi = kMaxBaseGridIndex + 1;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (mpq_class(base_grid_value(mid)) >= b) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (lo > kMaxBaseGridIndex) {
    throw InvalidArgument("base " + b.get_str() + " is above the largest grid base 9.9e19");
  }
  return lo;
}

CosineSum base_context_sum(const mpq_class& base, std::size_t dim) {
  const attention::Schedule s = attention::conventional_schedule(base, dim);
  CosineSum sum;
  for (const auto& block : s.blocks) {
    sum.blocks.emplace_back(block);
    sum.weights.emplace_back(1);
  }
  return sum;
}

namespace {

constexpr ropesim::Spelling<BaseVerdict> base_verdict_names[] = {
    {BaseVerdict::passes, "passes"},
    {BaseVerdict::fails, "fails"},
    {BaseVerdict::undecided, "undecided"}};
constexpr ropesim::EnumNames<BaseVerdict> base_verdict_table{.what = "base verdict",
                                                             .names = base_verdict_names};

}  // namespace

std::string to_string(BaseVerdict verdict) {
  return std::string(ropesim::name_of(base_verdict_table, verdict));
}

// ---------------------------------------------------------------------------------------------
// Exact check

namespace {

/// The sign of B_m: +1 (≥ 0 proven; B_m = 0 exactly counts as ≥ 0), -1 (< 0 proven), 0
/// (undecided at the precision cap). `refined` is set when MPFR was needed. `weights`: the
/// sum's CosineSum::weight_doubles().
int exact_sign(const CosineSum& sum, std::span<const double> weights, std::uint64_t m,
               bool& refined) {
  double bound = 0;
  const double approx = sum.approximate(static_cast<std::int64_t>(m), &bound, weights);
  // CosineSum::approximate: |approx - B_m| ≤ bound, proven (exact_trig.hpp).
  if (approx - bound >= 0) return 1;
  if (approx + bound < 0) return -1;
  refined = true;
  bool undecided = false;
  const int s = sum.compare(static_cast<std::int64_t>(m), mpq_class(0), 4096, &undecided);
  if (undecided) return 0;
  return s >= 0 ? 1 : -1;
}

/// Result of scanning positions [begin, end) in order, stopping at the first witness.
struct ChunkResult {
  std::optional<std::uint64_t> witness;
  std::uint64_t refined = 0, evaluated = 0;
  std::vector<std::uint64_t> undecided;
};

constexpr std::size_t kMaxUndecidedListed = 8;

}  // namespace

BaseCheck check_base_exact(const CosineSum& sum, std::uint64_t length,
                           std::span<const std::uint64_t> hints, unsigned threads) {
  if (threads == 0) throw InvalidArgument("check_base_exact: threads must be at least 1");
  const std::vector<double> weights = sum.weight_doubles();
  BaseCheck out;
  for (const std::uint64_t m : hints) {
    if (m > length) continue;
    bool refined = false;
    ++out.evaluated;
    const int s = exact_sign(sum, weights, m, refined);
    out.refined += refined;
    if (s < 0) {
      out.verdict = BaseVerdict::fails;
      out.witness = m;
      return out;
    }
  }
  // Chunks of positions; `threads` chunks per wave; the witness is the first one in scan
  // order (the lowest chunk of the first wave that has one), whatever the thread count.
  constexpr std::uint64_t kChunk = 1 << 14;
  const std::uint64_t chunks = length / kChunk + 1;
  for (std::uint64_t wave = 0; wave < chunks; wave += threads) {
    const std::uint64_t in_wave = std::min<std::uint64_t>(threads, chunks - wave);
    std::vector<ChunkResult> results(in_wave);
    numeric::parallel_for(threads, in_wave, [&](std::size_t t) {
      ChunkResult& r = results[t];
      const std::uint64_t begin = (wave + t) * kChunk;
      const std::uint64_t end = std::min<std::uint64_t>(begin + kChunk, length + 1);
      for (std::uint64_t m = begin; m < end; ++m) {
        bool refined = false;
        ++r.evaluated;
        const int s = exact_sign(sum, weights, m, refined);
        r.refined += refined;
        if (s < 0) {
          r.witness = m;
          return;
        }
        if (s == 0 && r.undecided.size() < kMaxUndecidedListed) r.undecided.push_back(m);
      }
    });
    for (const auto& r : results) {
      out.evaluated += r.evaluated;
      out.refined += r.refined;
      for (const auto m : r.undecided) {
        if (out.undecided.size() < kMaxUndecidedListed) out.undecided.push_back(m);
      }
      if (r.witness) {
        out.verdict = BaseVerdict::fails;
        out.witness = r.witness;
        out.undecided.clear();
        return out;
      }
    }
  }
  out.verdict = out.undecided.empty() ? BaseVerdict::passes : BaseVerdict::undecided;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Finite-precision check

BaseCheck check_base_realised(const attention::Schedule& schedule,
                              const attention::Realisation& realisation, std::uint64_t length,
                              std::span<const std::uint64_t> hints) {
  attention::check_applicable(schedule, realisation);
  const numeric::Arithmetic F(realisation.table_format(), numeric::Rounding::nearest_even,
                              realisation.arithmetic_engine());
  const std::size_t blocks = schedule.blocks.size();
  BaseCheck out;
  // Positions [begin, end): realise every block there, then sum per position in block order.
  auto scan = [&](std::uint64_t begin, std::uint64_t end) -> bool {
    std::vector<std::vector<attention::RealisedPair>> pairs(blocks);
    for (std::size_t d = 0; d < blocks; ++d) {
      pairs[d] = attention::realise_block(schedule, realisation, d, begin, end);
    }
    for (std::uint64_t m = begin; m < end; ++m) {
      ++out.evaluated;
      const std::size_t k = static_cast<std::size_t>(m - begin);
      numeric::Value s = pairs[0][k].cos;
      for (std::size_t d = 1; d < blocks; ++d) s = F.add(s, pairs[d][k].cos);
      if (s.is_nan() || (!s.is_zero() && s.sign_bit())) {
        out.verdict = BaseVerdict::fails;
        out.witness = m;
        out.witness_is_nan = s.is_nan();
        return true;
      }
    }
    return false;
  };
  for (const std::uint64_t m : hints) {
    if (m > length) continue;
    ++out.evaluated;
    const numeric::Value sum = realised_context_sum(schedule, realisation, m);
    if (sum.is_nan() || (!sum.is_zero() && sum.sign_bit())) {
      out.verdict = BaseVerdict::fails;
      out.witness = m;
      out.witness_is_nan = sum.is_nan();
      return out;
    }
  }
  // Chunks grow from 256 positions (witnesses of small bases come early) to 8192.
  std::uint64_t chunk = 256;
  for (std::uint64_t begin = 0; begin <= length;
       begin += chunk, chunk = std::min<std::uint64_t>(2 * chunk, 8192)) {
    if (scan(begin, std::min<std::uint64_t>(begin + chunk, length + 1))) return out;
  }
  out.verdict = BaseVerdict::passes;
  return out;
}

numeric::Value realised_context_sum(const attention::Schedule& schedule,
                                    const attention::Realisation& realisation, std::uint64_t m) {
  const numeric::Arithmetic F(realisation.table_format(), numeric::Rounding::nearest_even,
                              realisation.arithmetic_engine());
  const attention::RealisedRotation rotation = attention::realise(schedule, realisation, m);
  numeric::Value s = rotation.blocks.at(0).cos;
  for (std::size_t d = 1; d < rotation.blocks.size(); ++d) s = F.add(s, rotation.blocks[d].cos);
  return s;
}

// ---------------------------------------------------------------------------------------------
// The search

std::vector<BaseBound> base_context_bounds(const std::vector<std::uint64_t>& lengths,
                                           const BaseChecker& check, std::uint64_t first_index,
                                           std::uint64_t last_index) {
  if (last_index > kMaxBaseGridIndex) last_index = kMaxBaseGridIndex;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] == 0 || (i > 0 && lengths[i] <= lengths[i - 1])) {
      throw InvalidArgument("context lengths must be ≥ 1 and increasing");
    }
  }
  std::vector<BaseBound> rows;
  std::vector<std::uint64_t> hints;  // recent witnesses, newest first
  std::uint64_t start = first_index;
  // The last rejected grid base (kept across lengths: a base rejected for L' < L is rejected
  // for L by the same witness).
  std::optional<std::uint64_t> rejected_index, rejected_witness;
  bool rejected_is_nan = false;
  for (const std::uint64_t L : lengths) {
    const auto t0 = std::chrono::steady_clock::now();
    BaseBound row;
    row.length = L;
    row.index = start;
    std::optional<std::uint64_t> first_undecided;
    for (std::uint64_t index = start; index <= last_index; ++index) {
      const mpz_class b = base_grid_value(index);
      const BaseCheck c = check(b, L, hints);
      ++row.candidates;
      row.refined += c.refined;
      row.index = index;
      if (c.verdict == BaseVerdict::passes) {
        row.base = b;
        break;
      }
      if (c.verdict == BaseVerdict::undecided) {
        row.undecided.push_back(b);
        if (!first_undecided) first_undecided = index;
        continue;
      }
      rejected_index = index;
      rejected_witness = c.witness;
      rejected_is_nan = c.witness_is_nan;
      hints.erase(std::remove(hints.begin(), hints.end(), *c.witness), hints.end());
      hints.insert(hints.begin(), *c.witness);
      if (hints.size() > 16) hints.pop_back();
    }
    if (row.base && row.index > 0 && rejected_index == row.index - 1) {
      // The smallest witness for the table: the base rechecked from m = 0 without hints.
      row.rejected_base = base_grid_value(*rejected_index);
      const BaseCheck first = check(*row.rejected_base, L, {});
      row.rejected_witness = first.witness ? first.witness : rejected_witness;
      row.rejected_witness_is_nan = first.witness ? first.witness_is_nan : rejected_is_nan;
    }
    // Grid exhausted: the next lengths start past the end (no candidate, no base).
    start = first_undecided ? *first_undecided : (row.base ? row.index : last_index + 1);
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<std::string> paper_base_bound(std::uint64_t length) {
  // Men et al. 2024, Table 1 (head dimension 128): context length 1K … 1M.
  static const char* const table[] = {"4.3e3", "1.6e4", "2.7e4", "8.4e4", "3.1e5", "6.4e5",
                                      "2.1e6", "7.8e6", "3.6e7", "6.4e7", "5.1e8"};
  for (int k = 0; k <= 10; ++k) {
    // "K" read as 1024 or as 1000 (1M: 2^20 or 10^6)
    const std::uint64_t binary = std::uint64_t{1} << (10 + k);
    const std::uint64_t decimal = k == 10 ? 1000000 : (std::uint64_t{1000} << k);
    if (length == binary || length == decimal) return std::string(table[k]);
  }
  return std::nullopt;
}

std::optional<PaperBase> check_paper_base(std::uint64_t length, std::size_t dim, unsigned threads) {
  if (dim != kPaperBaseDim) return std::nullopt;
  const auto printed = paper_base_bound(length);
  if (!printed) return std::nullopt;
  PaperBase out;
  out.printed = *printed;
  out.value = numeric::parse_decimal_exact(*printed, "the paper's base");
  out.check = check_base_exact(base_context_sum(out.value, kPaperBaseDim), length, {}, threads);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Critical dimension

CriticalDimension critical_dimension(const mpq_class& base, std::size_t dim,
                                     std::uint64_t train_length) {
  if (base <= 1) {
    throw InvalidArgument("critical dimension: the base must be > 1 (got " + base.get_str() + ")");
  }
  if (dim < 2 || dim % 2 != 0) {
    throw InvalidArgument("critical dimension: the rotary dimension must be even and >= 2 (got " +
                          std::to_string(dim) + ")");
  }
  if (train_length < 7) {
    throw InvalidArgument("critical dimension: T_train must exceed 2*pi (>= 7; got " +
                          std::to_string(train_length) + ")");
  }
  CriticalDimension c;
  c.base = base;
  c.dim = dim;
  c.train_length = train_length;
  for (mpfr_prec_t P = 64;; P *= 2) {
    if (P > (1 << 16)) {
      throw std::runtime_error("critical dimension: the ceiling is undecided at 65536 bits");
    }
    Mpfr pi_lo(P), pi_hi(P), q_lo(P), q_hi(P), b_lo(P), b_hi(P), x_lo(P), x_hi(P);
    mpfr_const_pi(pi_lo, MPFR_RNDD);
    mpfr_const_pi(pi_hi, MPFR_RNDU);
    // T/(2π): lower end with π rounded up, upper end with π rounded down.
    mpfr_ui_div(q_lo, static_cast<unsigned long>(train_length), pi_hi, MPFR_RNDD);
    mpfr_ui_div(q_hi, static_cast<unsigned long>(train_length), pi_lo, MPFR_RNDU);
    mpfr_div_2ui(q_lo, q_lo, 1, MPFR_RNDD);  // exact
    mpfr_div_2ui(q_hi, q_hi, 1, MPFR_RNDU);
    mpfr_log(q_lo, q_lo, MPFR_RNDD);
    mpfr_log(q_hi, q_hi, MPFR_RNDU);
    mpfr_set_q(b_lo, base.get_mpq_t(), MPFR_RNDD);
    mpfr_set_q(b_hi, base.get_mpq_t(), MPFR_RNDU);
    mpfr_log(b_lo, b_lo, MPFR_RNDD);
    mpfr_log(b_hi, b_hi, MPFR_RNDU);
    if (mpfr_sgn(q_lo) <= 0 || mpfr_sgn(b_lo) <= 0) continue;  // refine: both logs are > 0
    // x = (d/2)·ln(T/2π)/ln b, all factors positive: outward rounding at each step.
    mpfr_mul_ui(x_lo, q_lo, static_cast<unsigned long>(dim / 2), MPFR_RNDD);
    mpfr_div(x_lo, x_lo, b_hi, MPFR_RNDD);
    mpfr_mul_ui(x_hi, q_hi, static_cast<unsigned long>(dim / 2), MPFR_RNDU);
    mpfr_div(x_hi, x_hi, b_lo, MPFR_RNDU);
    Mpfr c_lo(P), c_hi(P);
    mpfr_ceil(c_lo, x_lo);
    mpfr_ceil(c_hi, x_hi);
    // ⌈x⌉ is decided when no integer lies in (x_lo, x_hi] and x_lo is not itself an integer.
    if (mpfr_equal_p(c_lo, c_hi) && !mpfr_integer_p(x_lo)) {
      c.ratio = mpfr_get_d(x_lo, MPFR_RNDN);
      c.d_extra = 2 * mpfr_get_ui(c_lo, MPFR_RNDN);
      break;
    }
  }
  if (c.d_extra < dim) c.block = c.d_extra / 2;
  // T_extra = 2π·b^(d_extra/d)
  c.t_extra = numeric::ExactReal::pi_times(2) *
              numeric::ExactReal::power(base, mpq_class(static_cast<unsigned long>(c.d_extra),
                                                        static_cast<unsigned long>(dim)));
  return c;
}

TrainingLength training_length(const attention::ModelPreset& preset) {
  const attention::HfRopeConfig& c = preset.config;
  // scaled models were trained at the original length (rope_scaling's, else the top-level key)
  if (c.rope_scaling && c.rope_scaling->type != "mrope") {
    if (c.rope_scaling->original_max_position_embeddings) {
      return {c.rope_scaling->original_max_position_embeddings->get_num().get_ui(),
              "original_max_position_embeddings"};
    }
    if (c.original_max_position_embeddings) {
      return {*c.original_max_position_embeddings, "original_max_position_embeddings"};
    }
  }
  return {c.max_position_embeddings.value_or(0), "max_position_embeddings"};
}

attention::Schedule restrict_to_block(const attention::Schedule& s, std::size_t block) {
  if (block >= s.blocks.size()) {
    throw InvalidArgument("restrict_to_block: block " + std::to_string(block) + " of " + s.spec +
                          " is out of range (0.." + std::to_string(s.blocks.size() - 1) + ")");
  }
  attention::Schedule r = s;
  r.blocks = {s.blocks[block]};
  r.blocks[0].index = 0;
  r.unrotated_pairs = 0;
  r.spec = s.spec + "[block " + std::to_string(block) + "]";
  return r;
}

// ---------------------------------------------------------------------------------------------
// Semantic drift

std::vector<std::size_t> semantic_channels(const attention::Schedule& s) {
  const std::size_t R = s.blocks.size();
  const std::size_t n = (R + 3) / 4;
  std::vector<std::size_t> out;
  for (std::size_t i = R - n; i < R; ++i) out.push_back(i);
  return out;
}

namespace {

void check_drift_arguments(const attention::Schedule& s, const std::vector<std::size_t>& channels,
                           const mpq_class& tolerance) {
  if (tolerance <= 0 || tolerance >= 1) {
    throw InvalidArgument("semantic drift: the tolerance must lie strictly between 0 and 1 (got " +
                          tolerance.get_str() + ")");
  }
  if (channels.empty()) throw InvalidArgument("semantic drift: no channel blocks");
  for (const auto c : channels) {
    if (c >= s.blocks.size()) {
      throw InvalidArgument("semantic drift: block " + std::to_string(c) + " is not a block of " +
                            s.spec);
    }
  }
}

}  // namespace

DriftResult semantic_drift_exact(const attention::Schedule& s,
                                 const std::vector<std::size_t>& channels,
                                 const mpq_class& tolerance, std::uint64_t max_length) {
  check_drift_arguments(s, channels, tolerance);
  CosineSum sum;
  for (const auto c : channels) {
    sum.blocks.emplace_back(s.blocks[c]);
    sum.weights.emplace_back(1);
  }
  const mpq_class threshold = (1 - tolerance) * static_cast<unsigned long>(channels.size());
  const double t = threshold.get_d();
  DriftResult out;
  out.max_length = max_length;
  for (std::uint64_t m = 1; m <= max_length; ++m) {
    double bound = 0;
    const double approx = sum.approximate(static_cast<std::int64_t>(m), &bound);
    // t is the double nearest the threshold: widen by its error (≤ 2^-53·|t|) too.
    const double margin = bound + std::abs(t) * 0x1p-52;
    if (approx - margin >= t) continue;
    bool drifted = approx + margin < t;
    if (!drifted) {
      bool undecided = false;
      const int c = sum.compare(static_cast<std::int64_t>(m), threshold, 4096, &undecided);
      if (undecided) {
        throw std::runtime_error("semantic drift: S(" + std::to_string(m) +
                                 ") undecided at 4096 bits");
      }
      drifted = c < 0;
    }
    if (drifted) {
      out.length = m;
      return out;
    }
  }
  return out;
}

DriftResult semantic_drift_realised(const attention::Schedule& s,
                                    const std::vector<std::size_t>& channels,
                                    const attention::Realisation& realisation,
                                    const mpq_class& tolerance, std::uint64_t max_length) {
  check_drift_arguments(s, channels, tolerance);
  attention::check_applicable(s, realisation);
  const numeric::Arithmetic F(realisation.table_format(), numeric::Rounding::nearest_even,
                              realisation.arithmetic_engine());
  const mpq_class threshold = (1 - tolerance) * static_cast<unsigned long>(channels.size());
  DriftResult out;
  out.max_length = max_length;
  std::uint64_t chunk = 256;
  for (std::uint64_t begin = 1; begin <= max_length;
       begin += chunk, chunk = std::min<std::uint64_t>(2 * chunk, 8192)) {
    const std::uint64_t end = std::min<std::uint64_t>(begin + chunk, max_length + 1);
    std::vector<std::vector<attention::RealisedPair>> pairs;
    for (const auto c : channels)
      pairs.push_back(attention::realise_block(s, realisation, c, begin, end));
    for (std::uint64_t m = begin; m < end; ++m) {
      const std::size_t k = static_cast<std::size_t>(m - begin);
      numeric::Value sum = pairs[0][k].cos;
      for (std::size_t j = 1; j < pairs.size(); ++j) sum = F.add(sum, pairs[j][k].cos);
      if (sum.is_nan() ||
          (sum.is_finite() ? numeric::exact_rational(sum) < threshold : sum.sign_bit())) {
        out.length = m;
        out.nan = sum.is_nan();
        return out;
      }
    }
  }
  return out;
}

std::vector<PRopeFraction> parse_prope_fractions(const std::vector<std::string>& texts,
                                                 std::string_view what) {
  std::vector<PRopeFraction> out;
  for (const auto& text : texts) {
    const mpq_class value = numeric::parse_rational_exact(text, std::string(what));
    if (value < 0 || value > 1) {
      throw InvalidArgument("p-RoPE's " + std::string(what) + " must lie in [0, 1] (got " + text +
                            ")");
    }
    out.push_back({text, value});
  }
  return out;
}

std::vector<SemanticDriftRow> semantic_drift_rows(
    const attention::Schedule& model, const mpq_class& base, const std::vector<PRopeFraction>& ps,
    const std::vector<attention::Realisation>& realisations, const mpq_class& tolerance,
    std::uint64_t max_length, const std::function<void(const std::string&)>& progress) {
  if (tolerance <= 0 || tolerance >= 1) {
    throw InvalidArgument("semantic drift: the tolerance must lie strictly between 0 and 1 (got " +
                          tolerance.get_str() + ")");
  }
  std::vector<SemanticDriftRow> rows;
  rows.push_back({"none", model, {}, {}, {}});
  for (const auto& p : ps)
    rows.push_back(
        {p.text, attention::prope_schedule(base, model.rotary_dim, p.value), {}, {}, {}});
  const auto channels = semantic_channels(model);
  for (auto& row : rows) {
    if (progress) progress(row.label);
    row.channels = channels;
    row.exact = semantic_drift_exact(row.schedule, channels, tolerance, max_length);
    for (const auto& r : realisations)
      row.realised.push_back(
          semantic_drift_realised(row.schedule, channels, r, tolerance, max_length));
  }
  return rows;
}

}  // namespace ropesim::proofs
