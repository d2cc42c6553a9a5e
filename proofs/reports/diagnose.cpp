#include "proofs/reports/diagnose.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "attention/census/realised_table.hpp"
#include "attention/realisations/framework_presets.hpp"
#include "core/error.hpp"
#include "numeric/binary64_rounding.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/json_number.hpp"
#include "numeric/parallel.hpp"
#include "proofs/range/fixed_offset_head.hpp"
#include "proofs/reports/score_kernels.hpp"

namespace ropesim::proofs {

namespace {

// The candidates. Sources: NUMERIC §4 and docs/FRAMEWORK_BUGS.md (each report is a test there).
constexpr DiagnoseCandidate kCandidates[] = {
    {"inv-freq-cast", "inv_freq", "fp32>A",
     "inv_freq is computed in fp32 but stored in the model dtype, as `model.to(dtype)` does to "
     "the registered buffer, so every frequency but the highest is off by up to half an ulp of "
     "A and the angle error grows linearly with the position",
     "Megatron-LM #744 (`to(torch.bfloat16)` turns RotaryEmbedding's inv_freq into bf16), "
     "transformers #30709 (Trainer's bf16_full_eval calls model.to(bfloat16), casting the "
     "buffers), transformers #29496 (Mistral's inv_freq in bf16 under bf16 training), "
     "NVIDIA-NeMo/Automodel #2549 (fix: keep RoPE frequency buffers fp32 under a bf16 model "
     "cast); docs/FRAMEWORK_BUGS.md 'inv_freq cast with the model'",
     "re-create the inv_freq buffer in fp32 after casting the model (`model.to(dtype)` casts "
     "every floating buffer, persistent=False or not: only the re-created fp32 tensor, or "
     "computing inv_freq inside forward in fp32, keeps it fp32)"},
    {"angle-bf16", "angle", "bf16",
     "the angle inv_freq*t is formed in bf16 (autocast around the RoPE matmul), so above "
     "position 256 the angle is rounded to 8 significant bits",
     "transformers #29285 (bf16 autocast turned the RoPE angle into bf16)",
     "disable autocast for the angle and form it in fp32 (`with torch.autocast(enabled=False)`)"},
    {"angle-fp16", "angle", "fp16",
     "the angle is formed in fp16, so above position 2048 it is rounded to 11 significant bits",
     "GPT-NeoX #1003 (fp16 angle table, cos off by 0.78 within 2048 positions)",
     "form the angle in fp32"},
    {"position-fp16", "position", "fp16",
     "positions are cast to fp16, so above 2048 neighbouring positions round to one value and "
     "share one rotation",
     "Megatron-LM #535 (tail positions collapse); docs/FRAMEWORK_BUGS.md Report 3",
     "keep positions as integers or fp32"},
    {"cos-sin-bf16", "cos_sin", "bf16",
     "cos and sin are evaluated in bf16 instead of fp32 before they are stored",
     "FlashAttention #823 (bf16 cos/sin inputs, up to 24% relative error against fp32)",
     "evaluate cos and sin in fp32 and round once into the cache"},
    {"cache-fp16", "table", "fp16", "the cos/sin cache is kept in fp16",
     "vLLM #883 -> #1004 (fp16 cos/sin cache for CodeLlama, rope_theta 1e6)",
     "keep the cos/sin cache in fp32 (or the model dtype only after an fp32 angle)"},
    {"angle-tf32", "angle.operands", "tf32",
     "the fp32 matmul inv_freq @ positions runs as a TF32 GEMM, rounding positions above 2048 "
     "and inv_freq to 11 significant bits",
     "transformers #48428 (TF32 rounded the RoPE angle GEMM)",
     "disable TF32 for the angle (torch.backends.cuda.matmul.allow_tf32 = False) or form it as "
     "an elementwise product"},
    {"torch-cpu-sleef", "power,cos_sin,scalar_division", "fp32:sleef-u10,fp32:sleef-u10,reciprocal",
     "PyTorch on CPU evaluates pow, cos and sin with SLEEF's u10 AVX2 functions (within 1 ulp of "
     "fp32, not correctly rounded) and a Python float over a tensor in the rope scaling as "
     "reciprocal() times the float (two roundings; with hf this is the hf-torch-cpu preset), so "
     "a few fp32 cos/sin values differ from the correctly rounded path before the cast into A",
     "not a bug report: PyTorch's own library calls (pytorch aten/src/ATen/cpu/vec/vec256/"
     "vec256_float.h Sleef_cosf8_u10; checked bit for bit against PyTorch 1.13.1 in tests/torch/)",
     "nothing to fix for accuracy (the difference is within 1 ulp of fp32 before rounding into "
     "A); to match a correctly rounded reference bit for bit, compute the cos/sin cache in fp64 "
     "and round once"},
};

double larger(const attention::ErrorMaximum& a, const attention::ErrorMaximum& b) {
  return std::max(a.value, b.value);
}

/// The larger of two maxima (attention::merge: the earlier place on ties).
attention::ErrorMaximum max_of(attention::ErrorMaximum a, const attention::ErrorMaximum& b) {
  attention::merge(a, b);
  return a;
}

double lower_median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

/// The band statistics of one compare() result.
BandError band_error(const attention::CompareResult& r, std::uint64_t start, std::uint64_t end) {
  BandError b;
  b.start = start;
  b.end = end;
  const auto& o = r.overall;
  b.max_absolute = max_of(o.cos.absolute, o.sin.absolute);
  b.max_ulps = o.ulps;
  if (o.angle) b.max_angle = o.angle->absolute;
  b.differing = o.differing;
  b.entries = o.entries;
  b.nonfinite = o.nonfinite;
  std::vector<double> abs, ulps;
  for (const auto& block : r.blocks) {
    abs.push_back(larger(block.stats.cos.absolute, block.stats.sin.absolute));
    ulps.push_back(block.stats.ulps.value);
  }
  b.typical_absolute = lower_median(abs);
  b.typical_ulps = lower_median(ulps);
  return b;
}

DiagnoseCensus census_of(const attention::Schedule& s, const attention::Realisation& r,
                         std::uint64_t context, unsigned threads) {
  attention::CensusOptions options;
  options.positions = context;
  options.threads = threads;
  const auto c = attention::census(s, r, options);
  DiagnoseCensus out;
  out.distinct = c.distinct_rotations;
  out.first_repeat = c.first_repeat;
  out.largest_class = c.largest_class;
  out.overflow = c.overflow;
  out.nan = c.nan;
  return out;
}

/// census_of() from the path's realised table (attention::census_of_table: the same classes).
DiagnoseCensus census_of_values(const attention::RealisedTable& table) {
  const auto c = attention::census_of_table(table);
  DiagnoseCensus out;
  out.distinct = c.distinct;
  if (c.first_repeat_later)
    out.first_repeat = attention::FirstRepeat{*c.first_repeat_earlier, *c.first_repeat_later};
  out.largest_class.size = c.largest_class_size;
  out.largest_class.position = c.largest_class_position;
  out.overflow.count = c.overflow_count;
  out.overflow.first = c.first_overflow;
  out.nan.count = c.nan_count;
  out.nan.first = c.first_nan;
  return out;
}

nlohmann::json band_json(const BandError& b) {
  return {{"start", b.start},
          {"end", b.end},
          {"max_absolute", attention::to_json(b.max_absolute)},
          {"typical_absolute", b.typical_absolute},
          {"max_ulps", attention::to_json(b.max_ulps)},
          {"typical_ulps", b.typical_ulps},
          {"max_angle", b.max_angle ? attention::to_json(*b.max_angle) : nlohmann::json(nullptr)},
          {"differing", b.differing},
          {"entries", b.entries},
          {"nonfinite", b.nonfinite}};
}

nlohmann::json number_json(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(std::isnan(v) ? "nan" : "inf");
}

nlohmann::json scores_json(const DiagnoseReport& report, const DiagnosePath& p) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& x : p.scores) {
    nlohmann::json bands = nlohmann::json::array();
    for (const auto& b : x.bands) {
      bands.push_back({{"start", b.start},
                       {"end", b.end},
                       {"max_abs_error", number_json(b.max_abs_error)},
                       {"max_rel_error", number_json(b.max_rel_error)},
                       {"position", b.position},
                       {"seed", b.seed},
                       {"nonfinite", b.nonfinite}});
    }
    out.push_back({{"offset", x.offset},
                   {"max_abs_error", number_json(x.max_abs_error)},
                   {"max_rel_error", number_json(x.max_rel_error)},
                   {"exact_score", number_json(x.exact)},
                   {"score", number_json(x.score)},
                   {"position", x.position},
                   {"seed", x.seed},
                   {"draws", x.draws},
                   {"positions", x.positions},
                   {"nonfinite", x.nonfinite},
                   {"command", diagnose_rotate_command(report, p, x)},
                   {"bands", bands}});
  }
  return out;
}

nlohmann::json path_json(const DiagnoseReport& report, const DiagnosePath& p) {
  nlohmann::json j;
  j["name"] = p.name;
  j["framework"] = report.framework;
  j["realization"] = p.realisation;
  j["against"] = p.against;
  if (p.candidate) {
    j["means"] = std::string(p.candidate->means);
    j["report"] = std::string(p.candidate->report);
    j["fix"] = std::string(p.candidate->fix);
  }
  j["skipped"] = p.skipped.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.skipped);
  if (!p.skipped.empty()) return j;
  j["bands"] = nlohmann::json::array();
  for (const auto& b : p.bands) j["bands"].push_back(band_json(b));
  j["overall"] = band_json(p.overall);
  j["scores"] = scores_json(report, p);
  j["score_method"] = p.score_method;
  j["first_differing_band"] =
      p.first_differing_band ? nlohmann::json(*p.first_differing_band) : nlohmann::json(nullptr);
  const auto& c = p.census;
  nlohmann::json census;  // the keys of `ropesim rotations --json` (attention::put_census_counts)
  attention::put_census_counts(census, c.distinct, c.first_repeat, c.largest_class, c.overflow,
                               c.nan);
  j["census"] = census;
  return j;
}

nlohmann::json drift_json(const DriftResult& d) {
  return {{"length", d.length ? nlohmann::json(*d.length) : nlohmann::json(nullptr)},
          {"max_length", d.max_length},
          {"nan", d.nan}};
}

}  // namespace

std::span<const DiagnoseCandidate> diagnose_candidates() { return kCandidates; }

std::string with_pipeline_step(std::string_view framework_spec, std::string_view key,
                               std::string_view value) {
  constexpr std::string_view prefix = "pipeline:";
  if (framework_spec.substr(0, prefix.size()) != prefix) {
    throw InvalidArgument("with_pipeline_step: '" + std::string(framework_spec) +
                          "' is not a pipeline: spec");
  }
  std::string out(prefix);
  std::string_view rest = framework_spec.substr(prefix.size());
  bool replaced = false;
  bool first = true;
  while (!rest.empty()) {
    const auto semi = rest.find(';');
    const std::string_view item = rest.substr(0, semi);
    rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
    if (item.empty()) continue;
    out += first ? "" : ";";
    first = false;
    const auto eq = item.find('=');
    if (item.substr(0, eq) == key) {
      out += std::string(key) + "=" + std::string(value);
      replaced = true;
    } else {
      out += item;
    }
  }
  if (!replaced) out += (first ? "" : ";") + std::string(key) + "=" + std::string(value);
  return out;
}

std::string candidate_realisation(std::string_view framework_spec,
                                  const DiagnoseCandidate& candidate) {
  if (candidate.step.empty()) return std::string(candidate.value);
  auto split = [](std::string_view list) {
    std::vector<std::string_view> items;
    while (true) {
      const auto comma = list.find(',');
      items.push_back(list.substr(0, comma));
      if (comma == std::string_view::npos) return items;
      list = list.substr(comma + 1);
    }
  };
  const auto keys = split(candidate.step);
  // one value for every key, or one value per key in the keys' order
  const auto values = split(candidate.value);
  std::string spec(framework_spec);
  for (std::size_t i = 0; i < keys.size(); ++i)
    spec = with_pipeline_step(spec, keys[i], values.size() == 1 ? values[0] : values.at(i));
  return spec;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> diagnose_bands(std::uint64_t context) {
  if (context == 0) throw InvalidArgument("diagnose: the context must hold at least 1 position");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> bands;
  std::uint64_t start = 0, end = 1024;
  while (start < context) {
    bands.emplace_back(start, std::min(end, context));
    start = end;
    if (end > (std::uint64_t{1} << 62)) break;
    end *= 2;
  }
  return bands;
}

std::optional<std::uint64_t> diagnose_default_context(const attention::Schedule& s) {
  std::optional<std::uint64_t> out = s.max_position_embeddings;
  if (s.rope_scaling && s.rope_scaling->factor &&
      s.rope_scaling->original_max_position_embeddings) {
    const mpq_class served =
        *s.rope_scaling->factor * *s.rope_scaling->original_max_position_embeddings;
    const mpz_class whole = served.get_num() / served.get_den();
    if (whole > 0 &&
        whole <= mpz_class(static_cast<unsigned long>(attention::kMaxCensusPositions))) {
      const std::uint64_t n = whole.get_ui();
      if (!out || n > *out) out = n;
    }
  }
  return out;
}

std::vector<std::uint64_t> diagnose_offsets(std::uint64_t context,
                                            std::span<const std::uint64_t> requested) {
  std::vector<std::uint64_t> out;
  if (requested.empty()) {
    for (const std::uint64_t n :
         {std::uint64_t{1}, std::uint64_t{64}, std::uint64_t{4096}, context > 0 ? context - 1 : 0})
      if (n >= 1 && n < context) out.push_back(n);
  } else {
    for (const std::uint64_t n : requested) {
      if (n == 0 || n >= context) {
        throw InvalidArgument("diagnose: offset " + std::to_string(n) +
                              " has no query position in a context of " + std::to_string(context) +
                              "; accepted: 1.." + std::to_string(context > 0 ? context - 1 : 0));
      }
      out.push_back(n);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string diagnose_rotate_command(const DiagnoseReport& report, const DiagnosePath& path,
                                    const DiagnoseOffsetScore& score) {
  std::string out = "ropesim rotate --schedule '" + report.schedule + "' --realization '" +
                    path.realisation + "' --format " + report.format.name + " --seed " +
                    std::to_string(score.seed) + " --offset " + std::to_string(score.offset) +
                    " --position " + std::to_string(score.position) + " --summation " +
                    std::string(numeric::to_string(report.score.summation));
  if (report.score.summation == numeric::Summation::wide_accumulator)
    out += " --accumulator " + report.score.accumulator.name;
  return out;
}

namespace {

/// compare() over `threads` groups of blocks run concurrently (numeric::parallel_for), merged
/// as compare() merges its blocks (attention::merge: the first place of the larger value), so
/// the result is compare()'s whatever the thread count.
attention::CompareResult compare_parallel(const attention::Schedule& s,
                                          const attention::Realisation& r,
                                          const std::optional<attention::Realisation>& against,
                                          const attention::CompareOptions& options,
                                          unsigned threads,
                                          const attention::CompareValues& values) {
  const std::size_t nb = s.blocks.size();
  const std::size_t groups = std::min<std::size_t>(std::max(1u, threads), nb);
  if (groups <= 1) return attention::compare(s, r, against, options, {}, values);
  std::vector<attention::CompareResult> parts(groups);
  numeric::parallel_for(static_cast<unsigned>(groups), groups, [&](std::size_t g) {
    attention::CompareOptions o = options;
    o.blocks.clear();
    for (std::size_t b = g * nb / groups; b < (g + 1) * nb / groups; ++b) o.blocks.push_back(b);
    // each group writes its own blocks' entries of values.record
    parts[g] = attention::compare(s, r, against, o, {}, values);
  });
  attention::CompareResult out = std::move(parts[0]);
  for (std::size_t g = 1; g < groups; ++g) {
    auto& st = parts[g].overall;
    auto& all = out.overall;
    attention::merge(all.cos.absolute, st.cos.absolute);
    attention::merge(all.cos.relative, st.cos.relative);
    attention::merge(all.sin.absolute, st.sin.absolute);
    attention::merge(all.sin.relative, st.sin.relative);
    attention::merge(all.ulps, st.ulps);
    all.entries += st.entries;
    all.differing += st.differing;
    all.nonfinite += st.nonfinite;
    if (st.first_nonfinite && (!all.first_nonfinite || *st.first_nonfinite < *all.first_nonfinite))
      all.first_nonfinite = st.first_nonfinite;
    if (st.angle) {
      if (!all.angle) all.angle = attention::ErrorPair{};
      attention::merge(all.angle->absolute, st.angle->absolute);
      attention::merge(all.angle->relative, st.angle->relative);
    }
    for (auto& block : parts[g].blocks) out.blocks.push_back(std::move(block));
  }
  return out;
}

/// The binary64 fast path of one realisation (numeric::Binary64Rounding): its realised table
/// at every position 0..N-1 and the roundings of apply_rotation and of the store into F
/// (ScoreRotation, in lanes where it can). Unset when a format is outside the fast path's domain.
struct FastRotation {
  /// every position, every block: `*shared` when the caller has the table, else `owned`
  attention::RealisedTable owned;
  const attention::RealisedTable* shared = nullptr;
  const attention::RealisedTable& table_ref() const { return shared ? *shared : owned; }
  ScoreRotation steps;
  std::size_t nb = 0, dim = 0;

  /// x's elements as doubles and rounded into the rotation format (the same at every p).
  void operands(const std::vector<numeric::Value>& value, std::vector<double>& x,
                std::vector<double>& xr) const {
    x.resize(dim);
    xr.resize(dim);
    for (std::size_t j = 0; j < dim; ++j) x[j] = value[j].to_double();
    steps.operands(x.data(), xr.data());
  }

  /// R̂_p x into y[0..dim), as apply_rotation then the store into F do.
  void rotate_one(const double* x, const double* xr, std::uint64_t p, double* y) const {
    const attention::RealisedTable& table = table_ref();
    steps.rotate(x, xr, table.cos.data() + p * nb, table.sin.data() + p * nb, y);
  }

  /// R̂_p x for every p into `out` (row p, dim doubles; resized, every element written). `out`
  /// is the caller's, kept across calls: a fresh vector of N·D doubles per draw and path cost
  /// more in page faults and zeroing than the rotation itself.
  void rotate_all(const std::vector<numeric::Value>& value, unsigned threads,
                  std::vector<double>& out) const {
    const std::uint64_t n = table_ref().positions;
    std::vector<double> x, xr;
    operands(value, x, xr);
    out.resize(n * dim);
    const std::uint64_t chunks =
        std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads * 4, n));
    numeric::parallel_for(threads, chunks, [&](std::size_t chunk) {
      for (std::uint64_t p = chunk * n / chunks; p < (chunk + 1) * n / chunks; ++p)
        rotate_one(x.data(), xr.data(), p, out.data() + p * dim);
    });
  }

  /// The same values as binary32 columns for Float32Dots: out[k·N + p] = (R̂_p x)_k (resized).
  /// False when an element is neither a binary32 value nor NaN (then `out` is meaningless). A
  /// NaN element (a path whose table holds NaN) stays NaN: every score it enters is NaN in
  /// binary32 as in numeric::Binary64Dot, and of a non-finite score the check reads only that
  /// it is not finite (BandExtremes::add); the engine recomputes it (rotate_scores).
  bool rotate_columns(const std::vector<numeric::Value>& value, unsigned threads,
                      std::vector<float>& out) const {
    const std::uint64_t n = table_ref().positions;
    std::vector<double> x, xr;
    operands(value, x, xr);
    out.resize(n * dim);
    const std::uint64_t chunks =
        std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads * 4, n));
    std::vector<std::uint8_t> ok(chunks, 1);
    numeric::parallel_for(threads, chunks, [&](std::size_t chunk) {
      constexpr std::size_t kTile = 32;  // positions rotated before their columns are written
      std::vector<double> tile(kTile * dim);
      const std::uint64_t begin = chunk * n / chunks, end = (chunk + 1) * n / chunks;
      for (std::uint64_t p0 = begin; p0 < end; p0 += kTile) {
        const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(kTile, end - p0));
        for (std::size_t j = 0; j < len; ++j)
          rotate_one(x.data(), xr.data(), p0 + j, tile.data() + j * dim);
        for (std::size_t k = 0; k < dim; ++k) {
          float* column = out.data() + k * n + p0;
          for (std::size_t j = 0; j < len; ++j) {
            const double v = tile[j * dim + k];
            const float f = static_cast<float>(v);
            if (!(static_cast<double>(f) == v) && !std::isnan(v)) ok[chunk] = 0;
            column[j] = f;
          }
        }
      }
    });
    return std::all_of(ok.begin(), ok.end(), [](std::uint8_t v) { return v != 0; });
  }
};

/// `table`, when set, is r's realised table over 0..N-1 (used, not realised again).
std::optional<FastRotation> fast_rotation(const attention::Schedule& s,
                                          const attention::Realisation& r, std::uint64_t context,
                                          unsigned threads, const attention::RealisedTable* table) {
  if (r.rounding != numeric::Rounding::nearest_even || s.is_multi_axis()) return std::nullopt;
  try {
    attention::check_table_fits_double(r);
  } catch (const InvalidArgument&) {
    return std::nullopt;
  }
  const attention::RealisedRotation probe = attention::realise(s, r, 0);
  if (probe.rounding != numeric::Rounding::nearest_even) return std::nullopt;
  FastRotation f{{}, nullptr, ScoreRotation(probe.rotation_format, probe.output_format, r.format)};
  if (!f.steps.rf.fast_arithmetic() || !f.steps.rout.fast_rounding() || !f.steps.rF.fast_rounding())
    return std::nullopt;
  f.steps.to_out = !(probe.output_format == probe.rotation_format);
  f.steps.to_f = !(probe.output_format == r.format);
  f.steps.theory = probe.arithmetic == attention::RotationArithmetic::theory;
  f.steps.adjacent = r.layout == attention::PairLayout::adjacent;
  f.steps.round_table = !(r.table_format() == probe.rotation_format);
  f.nb = f.steps.nb = s.blocks.size();
  f.dim = f.steps.dim = s.dimension();
  if (table && table->start == 0 && table->positions == context) {
    f.shared = table;
  } else {
    f.owned = attention::realised_table(s, r, 0, context, threads);
  }
  return f;
}

/// The realised extremes of one band at one offset: the largest and the smallest finite
/// score (their first positions), the first non-finite one.
struct BandExtremes {
  std::uint64_t start = 0, end = 0;
  std::optional<std::pair<double, std::uint64_t>> high, low;
  std::uint64_t nonfinite = 0;
  std::optional<std::uint64_t> first_nonfinite;
  void add(double v, std::uint64_t p) {
    if (!std::isfinite(v)) {
      if (nonfinite++ == 0) first_nonfinite = p;
      return;
    }
    if (!high || v > high->first) high = {v, p};
    if (!low || v < low->first) low = {v, p};
  }
};

/// NaN is worse than every number; among numbers the larger is worse.
bool worse(double a, double b) { return std::isnan(a) ? !std::isnan(b) : a > b; }

/// The scores of one path at every offset over every query position, for the q, k draws
/// chosen at each offset: those whose |exact score| is at least the median over the draws
/// (the relative error is meaningful there, not near a zero of the score). The error at a
/// position is the one rotate_scores computes there; since the exact score is the same at
/// every p, the largest |S - exact| of a band is reached at its largest or its smallest
/// realised score, so rotate_scores recomputes those two (and the first non-finite one) per
/// band by the engine, which must give the fast path's scores bit for bit (std::logic_error
/// otherwise). Per band and offset the worst draw by relative error is kept. rq, rk, fq, fk are
/// the caller's buffers of the rotated draws (rotate_all, rotate_columns), kept across paths.
std::vector<DiagnoseOffsetScore> offset_scores(
    const attention::Schedule& s, const attention::Realisation& r,
    const std::vector<attention::QueryKey>& draws, const DiagnoseScoreSettings& settings,
    std::uint64_t context, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& bands,
    unsigned threads, std::string& method, const attention::RealisedTable* table,
    std::vector<double>& rq, std::vector<double>& rk, std::vector<float>& fq,
    std::vector<float>& fk) {
  std::vector<DiagnoseOffsetScore> out;
  if (settings.offsets.empty()) return out;
  numeric::EvaluationPolicy policy;
  static_cast<numeric::FormatBinding&>(policy) = r;
  policy.summation = settings.summation;
  policy.accumulator = settings.accumulator;
  const auto dot = numeric::Binary64Dot::for_policy(policy);
  const auto fast = dot ? fast_rotation(s, r, context, threads, table) : std::nullopt;
  method = fast ? "binary64" : "engine";
  // binary32 accumulation in native floats (Float32Dots) where it gives Binary64Dot's results
  const bool float32_dots = fast && Float32Dots::applies(policy);
  const numeric::Binary64Rounding round_f(policy.format, policy.rounding);
  // the exact score of every draw at every offset, in r's convention; the draws chosen
  const std::size_t K = draws.size();
  std::vector<std::vector<std::size_t>> chosen(settings.offsets.size());
  for (std::size_t o = 0; o < settings.offsets.size(); ++o) {
    const std::uint64_t n = settings.offsets[o];
    std::vector<double> exact(K);
    for (std::size_t k = 0; k < K; ++k) {
      exact[k] = attention::rotate_scores(s, r, draws[k].query, draws[k].key, n, {n},
                                          settings.summation, settings.accumulator)
                     .exact;
    }
    std::vector<std::size_t> order(K);
    for (std::size_t k = 0; k < K; ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::fabs(exact[a]) > std::fabs(exact[b]);
    });
    order.resize((K + 1) / 2);
    std::sort(order.begin(), order.end());
    chosen[o] = order;
  }
  auto is_chosen = [&](std::size_t o, std::size_t k) {
    return std::find(chosen[o].begin(), chosen[o].end(), k) != chosen[o].end();
  };
  for (const std::uint64_t n : settings.offsets) {
    DiagnoseOffsetScore score;
    score.offset = n;
    score.positions = context - n;
    for (const auto& [a, b] : bands) {
      if (b <= n) continue;
      DiagnoseBandScore bs;
      bs.start = a;
      bs.end = b;
      score.bands.push_back(bs);
    }
    out.push_back(score);
  }
  std::vector<std::vector<bool>> band_seen(out.size());
  for (std::size_t o = 0; o < out.size(); ++o) band_seen[o].assign(out[o].bands.size(), false);
  std::vector<bool> seen(out.size(), false);
  for (std::size_t k = 0; k < K; ++k) {
    bool needed = false;
    for (std::size_t o = 0; o < out.size(); ++o) needed = needed || is_chosen(o, k);
    if (!needed) continue;
    bool f32 = false;
    if (fast) {
      f32 = float32_dots && fast->rotate_columns(draws[k].query, threads, fq) &&
            fast->rotate_columns(draws[k].key, threads, fk);
      if (!f32) {
        fast->rotate_all(draws[k].query, threads, rq);
        fast->rotate_all(draws[k].key, threads, rk);
      }
    }
    for (std::size_t o = 0; o < out.size(); ++o) {
      if (!is_chosen(o, k)) continue;
      const std::uint64_t n = settings.offsets[o];
      auto& score = out[o];
      std::vector<BandExtremes> ext;
      for (const auto& bs : score.bands) {
        BandExtremes e;
        e.start = bs.start;
        e.end = bs.end;
        ext.push_back(e);
      }
      std::size_t band = 0;
      auto add = [&](double v, std::uint64_t p) {
        while (p >= ext[band].end) ++band;
        ext[band].add(v, p);
      };
      if (fast) {
        // chunks of query positions on the threads, merged in position order (the first
        // position of a strict maximum is kept, as one pass would keep it)
        const std::size_t dim = fast->dim;
        const std::uint64_t count = context - n;
        const std::uint64_t chunks =
            std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads * 4, count));
        std::vector<std::vector<BandExtremes>> parts(chunks, ext);
        numeric::parallel_for(threads, chunks, [&](std::size_t c) {
          auto& mine = parts[c];
          std::size_t b = 0;
          const std::uint64_t begin = n + c * count / chunks, end = n + (c + 1) * count / chunks;
          if (f32) {
            constexpr std::size_t kBlock = 1024;  // positions per pass over the D columns
            float acc[kBlock];
            for (std::uint64_t p0 = begin; p0 < end; p0 += kBlock) {
              const std::size_t len =
                  static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, end - p0));
              Float32Dots::dots(fq.data(), fk.data(), context, dim, n, p0, len, acc);
              for (std::size_t j = 0; j < len; ++j) {
                const std::uint64_t p = p0 + j;
                while (p >= mine[b].end) ++b;
                mine[b].add(round_f.round(static_cast<double>(acc[j])), p);
              }
            }
            return;
          }
          for (std::uint64_t p = begin; p < end; ++p) {
            while (p >= mine[b].end) ++b;
            mine[b].add((*dot)(rq.data() + p * dim, rk.data() + (p - n) * dim, dim), p);
          }
        });
        for (const auto& part : parts) {
          for (std::size_t i = 0; i < ext.size(); ++i) {
            const auto& m = part[i];
            auto& e = ext[i];
            if (m.high && (!e.high || m.high->first > e.high->first)) e.high = m.high;
            if (m.low && (!e.low || m.low->first < e.low->first)) e.low = m.low;
            if (m.first_nonfinite && !e.first_nonfinite) e.first_nonfinite = m.first_nonfinite;
            e.nonfinite += m.nonfinite;
          }
        }
      } else {
        // every position by the engine, in rotate_scores' largest batches
        for (std::uint64_t p = n; p < context; p += attention::kMaxRotatePositions) {
          std::vector<std::uint64_t> ps;
          const std::uint64_t end =
              std::min<std::uint64_t>(context, p + attention::kMaxRotatePositions);
          for (std::uint64_t x = p; x < end; ++x) ps.push_back(x);
          const auto rows = attention::rotate_scores(s, r, draws[k].query, draws[k].key, n, ps,
                                                     settings.summation, settings.accumulator);
          for (const auto& row : rows.scores) add(row.score.to_double(), row.position);
        }
      }
      // the engine's scores and errors at each band's extremes
      std::vector<std::uint64_t> at;
      for (const auto& e : ext) {
        for (const auto& x : {e.high, e.low})
          if (x) at.push_back(x->second);
        if (e.first_nonfinite) at.push_back(*e.first_nonfinite);
      }
      std::sort(at.begin(), at.end());
      at.erase(std::unique(at.begin(), at.end()), at.end());
      if (at.empty()) continue;
      const auto check = attention::rotate_scores(s, r, draws[k].query, draws[k].key, n, at,
                                                  settings.summation, settings.accumulator);
      auto row_at = [&](std::uint64_t p) -> const attention::ScoreAtPosition& {
        const auto it = std::lower_bound(at.begin(), at.end(), p);
        return check.scores[static_cast<std::size_t>(it - at.begin())];
      };
      for (std::size_t i = 0; i < ext.size(); ++i) {
        const auto& e = ext[i];
        auto& bs = score.bands[i];
        bs.nonfinite = std::max(bs.nonfinite, e.nonfinite);
        const attention::ScoreAtPosition* worst = nullptr;
        for (const auto& x : {e.high, e.low}) {
          if (!x) continue;
          const auto& row = row_at(x->second);
          const double v = row.score.to_double();
          if (!(v == x->first) || std::signbit(v) != std::signbit(x->first)) {
            throw std::logic_error("diagnose: the fast score at p = " + std::to_string(x->second) +
                                   ", n = " + std::to_string(n) + " differs from rotate_scores'");
          }
          if (!worst || row.absolute_error > worst->absolute_error ||
              (row.absolute_error == worst->absolute_error && row.position < worst->position))
            worst = &row;
        }
        if (e.first_nonfinite) worst = &row_at(*e.first_nonfinite);  // error NaN
        if (!worst) continue;
        // the worst draw by relative error (NaN for a non-finite score); ties: the earlier
        if (!band_seen[o][i] || worse(worst->relative_error, bs.max_rel_error)) {
          band_seen[o][i] = true;
          bs.max_abs_error = worst->absolute_error;
          bs.max_rel_error = worst->relative_error;
          bs.position = worst->position;
          bs.seed = settings.seeds[k];
        }
        if (!seen[o] || worse(worst->relative_error, score.max_rel_error)) {
          seen[o] = true;
          score.max_abs_error = worst->absolute_error;
          score.max_rel_error = worst->relative_error;
          score.position = worst->position;
          score.score = worst->score.to_double();
          score.exact = check.exact;
          score.seed = settings.seeds[k];
        }
      }
    }
  }
  for (std::size_t o = 0; o < out.size(); ++o) {
    out[o].nonfinite = 0;
    for (const auto& bs : out[o].bands) out[o].nonfinite += bs.nonfinite;
    for (const std::size_t k : chosen[o]) out[o].draws.push_back(settings.seeds[k]);
  }
  return out;
}

}  // namespace

WorkEstimate diagnose_work(const attention::Schedule& s, std::uint64_t context,
                           std::size_t frameworks) {
  // In seconds of CPU, fitted to the reports since issue 35 (docs/PERFORMANCE.md, "diagnose's
  // estimate"): per (position, block) entry 5.0 µs for the first framework (every path's
  // compares and census, the scores, the base-context search) and 0.65 µs for each further one
  // (frameworks of one table recipe share the compares and censuses, diagnose_frameworks); and
  // about 3 s per framework that does not grow with N (the model head's range at horizon's
  // quick limit). Measured: llama3.1-8b bf16, 64 blocks, 16384 and 131072 positions, one and
  // three frameworks: 8.7, 45.4, 15.8 and 59–72 s of CPU (under a load of 1–10; qwen2.5-7b-yarn,
  // 4096 positions, three frameworks: 6.8 s, estimated 10.7 s).
  const double entries =
      static_cast<double>(context) * static_cast<double>(std::max<std::size_t>(1, s.blocks.size()));
  const double f = static_cast<double>(std::max<std::size_t>(1, frameworks));
  constexpr double first = 5.0e-6, further = 0.65e-6, fixed = 3.0;
  WorkEstimate e;
  e.what = "(position, block) entries of every path and framework, or their equivalent";
  e.units_per_second = 1 / first;  // in first-framework entries
  e.units = entries * (1 + further / first * (f - 1)) + fixed / first * f;
  // peak RSS 85 MB at 16384 positions and 598 MB at 131072, one framework or three (the
  // values of one path per block and the census tables): about 72 bytes per entry
  e.bytes = entries * 72 + 16e6;
  return e;
}

DiagnoseHorizon model_head_horizon(const attention::Schedule& s, std::string_view framework,
                                   const numeric::FormatBinding& binding, unsigned threads,
                                   std::optional<std::uint64_t> limit) {
  if (limit && *limit == 0)
    throw InvalidArgument("diagnose: the horizon limit must be at least 1 (got 0)");
  DiagnoseHorizon out;
  out.realisation = std::string(framework);
  out.blocks = s.blocks.size();
  HorizonSpec hs;
  hs.head.schedule = s;
  hs.head.realisation = std::string(framework);
  hs.head.k = 1;
  static_cast<numeric::FormatBinding&>(hs.head.policy) = binding;
  hs.auto_C = true;
  try {
    FixedOffsetSpec probe = hs.head;
    probe.C = 1;
    const auto head = make_fixed_offset_head(probe);
    const auto algorithm = resolve_range_algorithm(hs.algorithm, head);
    // the quick limit `ropesim horizon` uses by default: N_max, or "≥ L" at that L
    hs.max_length = horizon_max_length(algorithm, head, std::nullopt, false, threads);
    if (limit && *limit < hs.max_length) {
      hs.max_length = *limit;
      out.limit = *limit;
    }
    hs.threads = std::max(1u, threads);
    out.report = horizon(hs);
  } catch (const InvalidArgument& e) {
    out.skipped = std::string(framework) + ": " + e.what();
  }
  return out;
}

std::pair<std::vector<std::size_t>, std::vector<std::string>> rank_candidates(
    const std::vector<DiagnosePath>& candidates) {
  // the keys, larger = worse: the largest relative score error (NaN as +inf), the angle
  // error, minus the distinct rotations
  auto score_key = [](const DiagnosePath& p) {
    double worst = 0;
    for (const auto& x : p.scores) {
      const double v =
          std::isnan(x.max_rel_error) ? std::numeric_limits<double>::infinity() : x.max_rel_error;
      worst = std::max(worst, v);
    }
    return worst;
  };
  auto angle_key = [](const DiagnosePath& p) {
    return p.overall.max_angle ? p.overall.max_angle->value : 0.0;
  };
  auto collision_key = [](const DiagnosePath& p) { return p.census.distinct; };
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].skipped.empty()) order.push_back(i);
  // which metric separates x from y, in order; "tie" when none does
  auto decider = [&](const DiagnosePath& x, const DiagnosePath& y) -> std::string {
    if (score_key(x) != score_key(y)) return "score";
    if (angle_key(x) != angle_key(y)) return "angle";
    if (collision_key(x) != collision_key(y)) return "collisions";
    return "tie";
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = candidates[a];
    const auto& y = candidates[b];
    if (score_key(x) != score_key(y)) return score_key(x) > score_key(y);
    if (angle_key(x) != angle_key(y)) return angle_key(x) > angle_key(y);
    return collision_key(x) < collision_key(y);
  });
  std::vector<std::string> decided;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::size_t other = i + 1 < order.size() ? i + 1 : i - (i > 0 ? 1 : 0);
    decided.push_back(other == i ? "tie" : decider(candidates[order[i]], candidates[order[other]]));
  }
  return {order, decided};
}

namespace {

/// `text` with the leading "FROM:" or "does not apply to FROM:" spelled with `to`.
std::string replace_framework_name(const std::string& text, std::string_view from,
                                   std::string_view to) {
  for (const std::string_view prefix :
       {std::string_view(), std::string_view("does not apply to ")}) {
    const std::string head = std::string(prefix) + std::string(from) + ":";
    if (text.rfind(head, 0) == 0)
      return std::string(prefix) + std::string(to) + ":" + text.substr(head.size());
  }
  return text;
}

/// The steps of a pipeline spec that make its realised tables (cos, sin and angle of every
/// position and block, flags): the spec's name with the rotation steps (rotation, output,
/// arithmetic, layout), which act only on q and k, set to one fixed value. Two realisations
/// with the same recipe realise the same tables bit for bit, so the same compares and census.
/// nullopt for a spec that is not a pipeline.
std::optional<std::string> table_recipe(const std::string& spec,
                                        const numeric::FormatBinding& binding) {
  if (spec.rfind("pipeline:", 0) != 0) return std::nullopt;
  std::string t = spec;
  for (const auto& [key, value] : {std::pair<const char*, const char*>{"rotation", "fp64"},
                                   {"output", "fp64"},
                                   {"arithmetic", "theory"},
                                   {"layout", "rotate_half"}})
    t = with_pipeline_step(t, key, value);
  return attention::parse_realisation(t, binding).name();
}

/// diagnose() of frameworks whose correct paths have one table recipe (table_recipe): the
/// band compares and the census of each path are computed once, by the first framework's
/// realisation, and are every framework's (the same tables); the scores, the head and the
/// realised drift are each framework's own. With `exact_bounds` set, the framework-independent
/// bounds (base-context, exact semantic drift) are copied instead of computed again.
std::vector<DiagnoseReport> diagnose_group(const attention::Schedule& s,
                                           const numeric::Format& format,
                                           std::span<const std::string> frameworks,
                                           const DiagnoseOptions& options,
                                           const DiagnoseBounds* exact_bounds) {
  if (options.context == 0 || options.context > attention::kMaxCensusPositions) {
    throw InvalidArgument("diagnose: the context must be 1..2^31 positions (got " +
                          std::to_string(options.context) + ")");
  }
  if (s.is_multi_axis())
    throw InvalidArgument("diagnose: '" + s.spec + "' has tuple positions; accepted: one axis");
  if (s.blocks.empty()) throw InvalidArgument("diagnose: '" + s.spec + "' has no rotary block");
  const numeric::FormatBinding binding{format, numeric::Rounding::nearest_even,
                                       &numeric::engine_by_name("auto")};
  const std::size_t nf = frameworks.size();
  std::vector<const attention::FrameworkPreset*> presets;
  std::vector<DiagnoseReport> reports(nf);
  std::vector<attention::Realisation> corrects;
  for (std::size_t f = 0; f < nf; ++f) {
    const auto& preset = attention::framework_preset(frameworks[f]);
    presets.push_back(&preset);
    DiagnoseReport& report = reports[f];
    report.schedule = s.spec;
    report.framework = std::string(preset.name);
    report.framework_spec = std::string(preset.spec);
    report.format = format;
    report.context = options.context;
    report.bands = diagnose_bands(options.context);
    corrects.push_back(attention::parse_realisation(preset.name, binding));
    attention::check_applicable(s, corrects.back());
    if (attention::carries_attention_factor(s, corrects.back()))
      report.attention_factor = *s.attention_scaling;
    for (std::uint64_t k = 1; k <= std::max<std::uint64_t>(1, options.draws); ++k)
      report.score.seeds.push_back(k);
    // The score check's settings: the framework's accumulation for every path.
    report.score.offsets = diagnose_offsets(options.context, options.offsets);
    if (const auto* acc = attention::framework_score_accumulation(preset.name)) {
      report.score.summation = numeric::Summation::wide_accumulator;
      report.score.accumulator = numeric::parse_format(acc->format);
    }
  }
  const auto& bands = reports[0].bands;

  auto note = [&](const std::string& stage, std::uint64_t done, std::uint64_t total) {
    if (options.progress) options.progress(stage, done, total);
  };
  std::vector<attention::QueryKey> draws;
  for (std::uint64_t k = 1; k <= std::max<std::uint64_t>(1, options.draws); ++k)
    draws.push_back(attention::random_query_key(format, s.dimension(), k));

  // Each path is realised once: its band compares record its values (cos, sin, angle at every
  // position and block), which are then its census and its score table, and the correct
  // path's are every candidate's B side. Needs the values to fit a double (then always: the
  // activation format's; wider formats realise each section on its own, as before).
  const bool share = options.share_values && format.fits_double();
  std::optional<attention::RealisedValues> correct_values;
  // a candidate's values once its path is measured, reused by the next (RealisedValues::reset)
  std::optional<attention::RealisedValues> spare_values;
  std::vector<double> rotated_q, rotated_k;  // the score check's rotated draws, every path's
  std::vector<float> column_q, column_k;     // the same as columns (rotate_columns)

  // One path of the frameworks `which` (their paths and realisations, one table recipe) over
  // the bands, against exact (nullopt) or the first one's correct path.
  auto measure = [&](const std::vector<std::size_t>& which, std::vector<DiagnosePath>& paths,
                     const std::vector<std::optional<attention::Realisation>>& rs,
                     const std::optional<attention::Realisation>& against) {
    DiagnosePath& path = paths[which[0]];
    const attention::Realisation& r = *rs[which[0]];
    std::optional<attention::RealisedValues> values;
    if (share && r.table_format().fits_double() && (!against || correct_values)) {
      if (spare_values) {
        values = std::move(spare_values);
        spare_values.reset();
        values->reset(0, options.context, s.blocks.size());
      } else {
        values.emplace(0, options.context, s.blocks.size());
      }
    }
    attention::CompareValues shared;
    if (values) {
      shared.record = &*values;
      if (against) shared.against = &*correct_values;
    }
    std::vector<double> abs_all, ulps_all;
    for (std::size_t i = 0; i < bands.size(); ++i) {
      const auto [start, end] = bands[i];
      note("compare " + path.name, i, bands.size());
      attention::CompareOptions co;
      co.start = start;
      co.positions = end - start;
      const auto result =
          compare_parallel(s, r, against, co, std::max(1u, options.threads), shared);
      path.bands.push_back(band_error(result, start, end));
      auto& b = path.bands.back();
      if (b.differing > 0 && !path.first_differing_band) path.first_differing_band = start;
      path.overall.max_absolute = max_of(path.overall.max_absolute, b.max_absolute);
      path.overall.max_ulps = max_of(path.overall.max_ulps, b.max_ulps);
      if (b.max_angle) {
        path.overall.max_angle =
            path.overall.max_angle ? max_of(*path.overall.max_angle, *b.max_angle) : *b.max_angle;
      }
      path.overall.differing += b.differing;
      path.overall.entries += b.entries;
      path.overall.nonfinite += b.nonfinite;
      for (const auto& block : result.blocks) {
        abs_all.push_back(larger(block.stats.cos.absolute, block.stats.sin.absolute));
        ulps_all.push_back(block.stats.ulps.value);
      }
    }
    path.overall.start = 0;
    path.overall.end = options.context;
    path.overall.typical_absolute = lower_median(abs_all);
    path.overall.typical_ulps = lower_median(ulps_all);
    note("rotations " + path.name, 0, 1);
    if (values) {
      values->finish();
      path.census = census_of_values(values->table);
    } else {
      path.census = census_of(s, r, options.context, options.threads);
    }
    for (std::size_t k = 1; k < which.size(); ++k) {  // the same tables: the same numbers
      DiagnosePath& other = paths[which[k]];
      other.bands = path.bands;
      other.overall = path.overall;
      other.first_differing_band = path.first_differing_band;
      other.census = path.census;
    }
    for (const std::size_t f : which) {
      note("scores " + paths[f].name, 0, 1);
      paths[f].scores = offset_scores(s, *rs[f], draws, reports[f].score, options.context, bands,
                                      std::max(1u, options.threads), paths[f].score_method,
                                      values ? &values->table : nullptr, rotated_q, rotated_k,
                                      column_q, column_k);
    }
    if (!against && values) correct_values = std::move(values);
    if (against && values) spare_values = std::move(values);
  };

  {
    std::vector<DiagnosePath> paths(nf);
    std::vector<std::optional<attention::Realisation>> rs(nf);
    std::vector<std::size_t> all;
    for (std::size_t f = 0; f < nf; ++f) {
      paths[f].name = "correct";
      paths[f].realisation = corrects[f].name();
      paths[f].against = "exact";
      rs[f] = corrects[f];
      all.push_back(f);
    }
    measure(all, paths, rs, std::nullopt);
    for (std::size_t f = 0; f < nf; ++f) reports[f].correct = std::move(paths[f]);
  }

  // the correct paths' step lists, spelled as the candidates' names are
  std::vector<std::string> correct_steps;
  for (const auto* preset : presets)
    correct_steps.push_back(attention::parse_realisation(preset->spec, binding).name());
  for (const auto& candidate : kCandidates) {
    std::vector<DiagnosePath> paths(nf);
    std::vector<std::optional<attention::Realisation>> rs(nf);
    std::vector<std::optional<std::string>> recipes(nf);
    for (std::size_t f = 0; f < nf; ++f) {
      DiagnosePath& path = paths[f];
      path.name = std::string(candidate.name);
      path.candidate = &candidate;
      path.against = "correct";
      try {
        path.realisation = candidate_realisation(presets[f]->spec, candidate);
        const auto r = attention::parse_realisation(path.realisation, binding);
        attention::check_applicable(s, r);
        if (r.name() == correct_steps[f]) {
          path.skipped = "the same step list as the correct path for " + format.name;
        } else {
          rs[f] = r;
          recipes[f] = table_recipe(path.realisation, binding);
        }
      } catch (const InvalidArgument& e) {
        path.skipped =
            std::string("does not apply to ") + std::string(presets[f]->name) + ": " + e.what();
      }
    }
    // the measured frameworks in groups of one recipe (one group when the candidate leaves
    // the rotation steps alone)
    std::vector<bool> done(nf, false);
    for (std::size_t f = 0; f < nf; ++f) {
      if (!rs[f] || done[f]) continue;
      std::vector<std::size_t> which{f};
      done[f] = true;
      for (std::size_t g = f + 1; g < nf; ++g) {
        if (rs[g] && !done[g] && recipes[f] && recipes[g] == recipes[f]) {
          which.push_back(g);
          done[g] = true;
        }
      }
      measure(which, paths, rs, corrects[f]);
    }
    for (std::size_t f = 0; f < nf; ++f) reports[f].candidates.push_back(std::move(paths[f]));
  }
  correct_values.reset();
  spare_values.reset();

  for (std::size_t f = 0; f < nf; ++f) {
    DiagnoseReport& report = reports[f];
    std::tie(report.ranking, report.decided_by) = rank_candidates(report.candidates);
    // The model's own previous-token head Y^1 (every block), realised by the framework.
    note("horizon", 0, 1);
    report.horizon = model_head_horizon(s, presets[f]->name, binding, std::max(1u, options.threads),
                                        options.horizon_limit);
  }

  // The bounds: the framework-independent ones once, the realised drift per framework.
  DiagnoseBounds bounds;
  bounds.dim = s.rotary_dim;
  if (exact_bounds) {
    bounds = *exact_bounds;
  } else if (s.base && s.rotary_dim >= 2) {
    note("base-context", 0, 1);
    bounds.base = *s.base;
    const unsigned threads = std::max(1u, options.threads);
    // the config's own frequencies: scaled ones (llama3, YaRN, ...) when it has rope scaling
    CosineSum own = base_context_sum(*s.base, s.rotary_dim);
    if (s.rope_scaling) {
      bounds.scaled = true;
      own = CosineSum{};
      for (const auto& block : s.blocks) {
        own.blocks.emplace_back(block);
        own.weights.emplace_back(1);
      }
    }
    bounds.config_check = check_base_exact(own, options.context, {}, threads);
    const std::size_t dim = s.rotary_dim;
    const auto found = base_context_bounds(
        {options.context},
        [&](const mpz_class& b, std::uint64_t L, std::span<const std::uint64_t> hints) {
          return check_base_exact(base_context_sum(mpq_class(b), dim), L, hints, threads);
        },
        base_grid_index_at_least(mpq_class(10)));
    if (!found.empty()) bounds.bound = found.front();
  }
  note("semantic-drift", 0, 1);
  bounds.channels = semantic_channels(s);
  bounds.drift_tolerance = options.drift_tolerance;
  if (!exact_bounds) {
    bounds.drift_exact =
        semantic_drift_exact(s, bounds.channels, options.drift_tolerance, options.context - 1);
  }
  for (std::size_t f = 0; f < nf; ++f) {
    reports[f].bounds = bounds;
    reports[f].bounds.drift_realised = semantic_drift_realised(
        s, bounds.channels, corrects[f], options.drift_tolerance, options.context - 1);
  }
  return reports;
}

}  // namespace

DiagnoseReport diagnose(const attention::Schedule& s, const numeric::Format& format,
                        std::string_view framework, const DiagnoseOptions& options) {
  const std::string one(framework);
  return std::move(
      diagnose_group(s, format, std::span<const std::string>(&one, 1), options, nullptr).front());
}

std::vector<DiagnoseReport> diagnose_frameworks(const attention::Schedule& s,
                                                const numeric::Format& format,
                                                std::span<const std::string> frameworks,
                                                const DiagnoseOptions& options) {
  if (frameworks.empty())
    throw InvalidArgument("diagnose: no framework; accepted: one or more preset names");
  for (const auto& f : frameworks) (void)attention::framework_preset(f);  // all known first
  const numeric::FormatBinding binding{format, numeric::Rounding::nearest_even,
                                       &numeric::engine_by_name("auto")};
  const std::size_t n = frameworks.size();
  // A preset with the same pipeline spec and score accumulation as an earlier one (vllm and
  // flash-attn) realises the same steps: its report is that one's, renamed (`same`).
  std::vector<std::optional<std::size_t>> same(n);
  for (std::size_t i = 0; i < n && options.share_values; ++i) {
    const auto& preset = attention::framework_preset(frameworks[i]);
    const auto* acc = attention::framework_score_accumulation(preset.name);
    for (std::size_t j = 0; j < i; ++j) {
      const auto& other = attention::framework_preset(frameworks[j]);
      const auto* racc = attention::framework_score_accumulation(other.name);
      if (other.spec == preset.spec && (acc == nullptr) == (racc == nullptr) &&
          (acc == nullptr || acc->format == racc->format))
        same[i] = j;
    }
  }
  // The others in groups of one table recipe (hf and vllm: they differ in the rotation only),
  // whose compares and censuses are computed once (diagnose_group).
  std::vector<std::optional<std::string>> recipe(n);
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < n; ++i) {
    if (same[i]) continue;
    if (options.share_values) {
      try {
        recipe[i] =
            table_recipe(std::string(attention::framework_preset(frameworks[i]).spec), binding);
      } catch (const InvalidArgument&) {
        recipe[i].reset();
      }
    }
    bool placed = false;
    for (auto& g : groups) {
      if (recipe[i] && recipe[g[0]] == recipe[i]) {
        g.push_back(i);
        placed = true;
        break;
      }
    }
    if (!placed) groups.push_back({i});
  }
  std::vector<std::optional<DiagnoseReport>> out(n);
  const DiagnoseBounds* first_bounds = nullptr;  // the first framework's (computed once)
  for (const auto& g : groups) {
    std::vector<std::string> names;
    for (const std::size_t i : g) names.push_back(frameworks[i]);
    auto reports = diagnose_group(s, format, names, options, first_bounds);
    for (std::size_t k = 0; k < g.size(); ++k) out[g[k]] = std::move(reports[k]);
    if (!first_bounds) first_bounds = &out[g[0]]->bounds;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!same[i]) continue;
    const DiagnoseReport& from = *out[*same[i]];
    const auto& preset = attention::framework_preset(frameworks[i]);
    DiagnoseReport copy = from;
    const std::string name = attention::parse_realisation(preset.name, binding).name();
    copy.framework = std::string(preset.name);
    copy.correct.realisation = name;
    copy.horizon.realisation = std::string(preset.name);
    if (copy.horizon.skipped.empty()) copy.horizon.report.realisation = name;
    for (auto& c : copy.candidates)  // candidates of the first spelled "does not apply to NAME"
      if (!c.skipped.empty() && c.candidate != nullptr)
        c.skipped = replace_framework_name(c.skipped, from.framework, preset.name);
    if (!copy.horizon.skipped.empty())
      copy.horizon.skipped =
          replace_framework_name(copy.horizon.skipped, from.framework, preset.name);
    out[i] = std::move(copy);
  }
  std::vector<DiagnoseReport> result;
  for (auto& r : out) result.push_back(std::move(*r));
  return result;
}

nlohmann::json to_json(std::span<const DiagnoseReport> reports) {
  if (reports.size() == 1) return to_json(reports[0]);
  nlohmann::json j;
  j["schedule"] = reports[0].schedule;
  j["format"] = reports[0].format.name;
  j["context"] = reports[0].context;
  j["frameworks"] = nlohmann::json::array();
  j["paths"] = nlohmann::json::array();
  j["ranking"] = nlohmann::json::array();
  j["reports"] = nlohmann::json::array();
  for (const auto& r : reports) {
    const nlohmann::json one = to_json(r);
    j["frameworks"].push_back(r.framework);
    for (const auto& p : one["paths"]) j["paths"].push_back(p);
    for (const auto& x : one["ranking"]) j["ranking"].push_back(x);
    j["reports"].push_back(one);
  }
  return j;
}

nlohmann::json to_json(const DiagnoseReport& report) {
  nlohmann::json j;
  j["schedule"] = report.schedule;
  j["framework"] = report.framework;
  j["framework_spec"] = report.framework_spec;
  j["format"] = report.format.name;
  j["context"] = report.context;
  if (report.attention_factor)
    numeric::put_exact(j, "attention_factor", *report.attention_factor);
  else
    j["attention_factor"] = nullptr;
  j["bands"] = nlohmann::json::array();
  for (const auto& [a, b] : report.bands) j["bands"].push_back({a, b});
  j["correct"] = path_json(report, report.correct);
  j["candidates"] = nlohmann::json::array();
  for (const auto& c : report.candidates) j["candidates"].push_back(path_json(report, c));
  j["ranking"] = nlohmann::json::array();
  for (std::size_t place = 0; place < report.ranking.size(); ++place) {
    j["ranking"].push_back({{"path", report.candidates[report.ranking[place]].name},
                            {"framework", report.framework},
                            {"place", place + 1},
                            {"decided_by", report.decided_by[place]}});
  }
  j["paths"] = nlohmann::json::array();
  j["paths"].push_back(j["correct"]);
  for (const auto& c : j["candidates"]) j["paths"].push_back(c);
  j["score"] = {{"seeds", report.score.seeds},
                {"summation", std::string(numeric::to_string(report.score.summation))},
                {"accumulator", report.score.summation == numeric::Summation::wide_accumulator
                                    ? nlohmann::json(report.score.accumulator.name)
                                    : nlohmann::json(nullptr)},
                {"offsets", report.score.offsets}};
  j["horizon"] =
      report.horizon.skipped.empty() ? to_json(report.horizon.report) : nlohmann::json::object();
  j["horizon"]["skipped"] = report.horizon.skipped.empty() ? nlohmann::json(nullptr)
                                                           : nlohmann::json(report.horizon.skipped);
  j["horizon"]["blocks"] = report.horizon.blocks;
  j["horizon"]["limit"] =
      report.horizon.limit ? nlohmann::json(*report.horizon.limit) : nlohmann::json(nullptr);
  const auto& b = report.bounds;
  nlohmann::json bc;
  if (b.base)
    numeric::put_exact(bc, "base", *b.base);
  else
    bc["base"] = nullptr;
  bc["dim"] = b.dim;
  bc["scaled_frequencies"] = b.scaled;
  if (b.config_check) {
    bc["config_verdict"] = to_string(b.config_check->verdict);
    bc["config_witness"] = b.config_check->witness ? nlohmann::json(*b.config_check->witness)
                                                   : nlohmann::json(nullptr);
  }
  if (b.bound) {
    // grid bases are integers below 10^20
    bc["smallest_grid_base"] = nullptr;
    bc["rejected_base"] = nullptr;
    if (b.bound->base) numeric::put_exact(bc, "smallest_grid_base", mpq_class(*b.bound->base));
    if (b.bound->rejected_base)
      numeric::put_exact(bc, "rejected_base", mpq_class(*b.bound->rejected_base));
    bc["rejected_witness"] = b.bound->rejected_witness ? nlohmann::json(*b.bound->rejected_witness)
                                                       : nlohmann::json(nullptr);
  }
  j["bounds"]["base_context"] = bc;
  j["bounds"]["semantic_drift"] = {{"channels", b.channels},
                                   {"exact", drift_json(b.drift_exact)},
                                   {"realised", drift_json(b.drift_realised)}};
  numeric::put_exact(j["bounds"]["semantic_drift"], "tolerance", b.drift_tolerance);
  return j;
}

}  // namespace ropesim::proofs
