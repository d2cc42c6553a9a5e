#include "proofs/diagnose.hpp"

#include <algorithm>
#include <cmath>

#include "attention/framework_presets.hpp"
#include "numeric/error.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/json_number.hpp"
#include "proofs/fixed_offset_head.hpp"

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
     "keep the inv_freq buffer in fp32 (register it with persistent=False and re-create it in "
     "fp32 after casting the model)"},
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
    {"torch-cpu-sleef", "power,cos_sin", "fp32:sleef-u10",
     "PyTorch on CPU evaluates pow, cos and sin with SLEEF's u10 AVX2 functions (within 1 ulp of "
     "fp32, not correctly rounded; with hf this is the hf-torch-cpu preset), so a few fp32 "
     "cos/sin values differ from the correctly rounded path before the cast into A",
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

nlohmann::json score_drift_json(const std::optional<DiagnoseScoreDrift>& d) {
  if (!d) return nullptr;
  auto number = [](double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(std::isnan(v) ? "nan" : "inf");
  };
  return {{"drift", number(d->drift)},
          {"max_error", {{"value", number(d->max_error)}, {"position", d->max_error_position}}},
          {"nonfinite", d->nonfinite}};
}

nlohmann::json path_json(const DiagnosePath& p) {
  nlohmann::json j;
  j["name"] = p.name;
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
  j["score_drift"] = score_drift_json(p.score_drift);
  j["first_differing_band"] =
      p.first_differing_band ? nlohmann::json(*p.first_differing_band) : nlohmann::json(nullptr);
  const auto& c = p.census;
  j["census"] = {
      {"distinct", c.distinct},
      {"first_repeat", c.first_repeat ? nlohmann::json{{"earlier", c.first_repeat->earlier},
                                                       {"later", c.first_repeat->later}}
                                      : nlohmann::json(nullptr)},
      {"largest_class", {{"size", c.largest_class.size}, {"position", c.largest_class.position}}},
      {"overflow",
       {{"count", c.overflow.count},
        {"first", c.overflow.first ? nlohmann::json(*c.overflow.first) : nlohmann::json(nullptr)}}},
      {"nan",
       {{"count", c.nan.count},
        {"first", c.nan.first ? nlohmann::json(*c.nan.first) : nlohmann::json(nullptr)}}}};
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
  std::string spec(framework_spec);
  std::string_view keys = candidate.step;
  while (!keys.empty()) {
    const auto comma = keys.find(',');
    spec = with_pipeline_step(spec, keys.substr(0, comma), candidate.value);
    keys = comma == std::string_view::npos ? std::string_view{} : keys.substr(comma + 1);
  }
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

std::vector<std::uint64_t> diagnose_score_positions(std::uint64_t context, std::uint64_t offset) {
  std::vector<std::uint64_t> out;
  if (context == 0 || context - 1 < offset) return out;
  const std::uint64_t last = context - 1, span = last - offset;
  const std::uint64_t count = std::min<std::uint64_t>(64, span + 1);
  for (std::uint64_t i = 0; i < count; ++i) {
    // offset + floor(i·span/(count-1)) without overflow (span < 2^31)
    out.push_back(count == 1 ? offset : offset + i * span / (count - 1));
  }
  for (const auto& [start, end] : diagnose_bands(context)) {
    if (start >= offset) out.push_back(start);
    if (end - 1 >= offset) out.push_back(end - 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

WorkEstimate diagnose_work(const attention::Schedule& s, std::uint64_t context) {
  // In seconds of one thread at compare-against-exact's rate (10^5 entries/s): the correct
  // path against exact, every candidate against the correct path (4·10^5/s), a census per
  // path (2·10^6 pairs/s).
  const double entries =
      static_cast<double>(context) * static_cast<double>(std::max<std::size_t>(1, s.blocks.size()));
  const double paths = static_cast<double>(std::size(kCandidates));
  WorkEstimate e;
  e.what = "compared (position, block) entries against exact, or their equivalent";
  e.units = entries * (1 + paths / 4 + (paths + 1) / 20);
  e.units_per_second = 1e5;
  e.bytes = static_cast<double>(context) * 64;
  return e;
}

DiagnoseReport diagnose(const attention::Schedule& s, const numeric::Format& format,
                        std::string_view framework, const DiagnoseOptions& options) {
  if (options.context == 0 || options.context > attention::kMaxCensusPositions) {
    throw InvalidArgument("diagnose: the context must be 1..2^31 positions (got " +
                          std::to_string(options.context) + ")");
  }
  if (s.is_multi_axis())
    throw InvalidArgument("diagnose: '" + s.spec + "' has tuple positions; accepted: one axis");
  if (s.blocks.empty()) throw InvalidArgument("diagnose: '" + s.spec + "' has no rotary block");
  const auto& preset = attention::framework_preset(framework);
  const numeric::FormatBinding binding{format, numeric::Rounding::nearest_even,
                                       &numeric::engine_by_name("auto")};
  DiagnoseReport report;
  report.schedule = s.spec;
  report.framework = std::string(preset.name);
  report.framework_spec = std::string(preset.spec);
  report.format = format;
  report.context = options.context;
  report.bands = diagnose_bands(options.context);

  auto note = [&](const std::string& stage, std::uint64_t done, std::uint64_t total) {
    if (options.progress) options.progress(stage, done, total);
  };
  const auto correct = attention::parse_realisation(preset.name, binding);
  attention::check_applicable(s, correct);

  // One path over the bands, against exact (nullopt) or the correct path.
  auto measure = [&](DiagnosePath& path, const attention::Realisation& r,
                     const std::optional<attention::Realisation>& against) {
    std::vector<double> abs_all, ulps_all;
    for (std::size_t i = 0; i < report.bands.size(); ++i) {
      const auto [start, end] = report.bands[i];
      note("compare " + path.name, i, report.bands.size());
      attention::CompareOptions co;
      co.start = start;
      co.positions = end - start;
      const auto result = attention::compare(s, r, against, co);
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
    path.census = census_of(s, r, options.context, options.threads);
    if (!report.score.positions.empty()) {
      const auto qk = attention::random_query_key(format, s.dimension(), report.score.seed);
      const auto rotated = attention::rotate_scores(s, r, qk.query, qk.key, report.score.offset,
                                                    report.score.positions, report.score.summation,
                                                    report.score.accumulator);
      report.score.exact = rotated.exact;
      DiagnoseScoreDrift d;
      d.drift = rotated.drift;
      for (const auto& row : rotated.scores) {
        if (std::isnan(row.absolute_error) || std::isinf(row.absolute_error)) {
          ++d.nonfinite;
        } else if (row.absolute_error > d.max_error) {
          d.max_error = row.absolute_error;
          d.max_error_position = row.position;
        }
      }
      if (d.max_error == 0 && !rotated.scores.empty())
        d.max_error_position = rotated.scores.front().position;
      path.score_drift = d;
    }
  };

  // The fixed-offset score's settings: the framework's accumulation for every path.
  report.score.positions = diagnose_score_positions(options.context, report.score.offset);
  if (const auto* acc = attention::framework_score_accumulation(preset.name)) {
    report.score.summation = numeric::Summation::wide_accumulator;
    report.score.accumulator = numeric::parse_format(acc->format);
  }

  report.correct.name = "correct";
  report.correct.realisation = correct.name();
  report.correct.against = "exact";
  measure(report.correct, correct, std::nullopt);

  // the correct path's step list, spelled as the candidates' names are
  const std::string correct_steps = attention::parse_realisation(preset.spec, binding).name();
  for (const auto& candidate : kCandidates) {
    DiagnosePath path;
    path.name = std::string(candidate.name);
    path.candidate = &candidate;
    path.against = "correct";
    try {
      path.realisation = candidate_realisation(preset.spec, candidate);
      const auto r = attention::parse_realisation(path.realisation, binding);
      attention::check_applicable(s, r);
      if (r.name() == correct_steps) {
        path.skipped = "the same step list as the correct path for " + format.name;
      } else {
        measure(path, r, correct);
      }
    } catch (const InvalidArgument& e) {
      path.skipped = std::string("does not apply to ") + std::string(preset.name) + ": " + e.what();
    }
    report.candidates.push_back(std::move(path));
  }
  for (std::size_t i = 0; i < report.candidates.size(); ++i)
    if (report.candidates[i].skipped.empty()) report.ranking.push_back(i);
  std::stable_sort(report.ranking.begin(), report.ranking.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = report.candidates[a].overall;
    const auto& y = report.candidates[b].overall;
    if (x.max_absolute.value != y.max_absolute.value)
      return x.max_absolute.value > y.max_absolute.value;
    const double ax = x.max_angle ? x.max_angle->value : 0,
                 ay = y.max_angle ? y.max_angle->value : 0;
    return ax > ay;
  });

  // The previous-token head Y^1 on block 0 (the highest frequency), realised by the framework.
  note("horizon", 0, 1);
  HorizonSpec hs;
  hs.head.schedule = restrict_to_block(s, 0);
  hs.head.realisation = std::string(preset.name);
  hs.head.k = 1;
  static_cast<numeric::FormatBinding&>(hs.head.policy) = binding;
  hs.auto_C = true;
  report.horizon.realisation = std::string(preset.name);
  report.horizon.theta = s.blocks.front().theta.as_rational();
  try {
    FixedOffsetSpec probe = hs.head;
    probe.C = 1;
    const auto head = make_fixed_offset_head(probe);
    const auto algorithm = resolve_range_algorithm(hs.algorithm, head);
    hs.max_length = horizon_max_length(algorithm, head, std::nullopt, false);
    hs.threads = std::max(1u, options.threads);
    report.horizon.report = horizon(hs);
  } catch (const InvalidArgument& e) {
    // e.g. hf-torch-cpu: SLEEF's 8-lane calls need 8 blocks, so block 0 alone is no head
    report.horizon.skipped = std::string(preset.name) + " on block 0 alone: " + e.what();
  }

  // The bounds.
  auto& bounds = report.bounds;
  bounds.dim = s.rotary_dim;
  if (s.base && s.rotary_dim >= 2) {
    note("base-context", 0, 1);
    bounds.base = *s.base;
    const unsigned threads = std::max(1u, options.threads);
    bounds.config_check =
        check_base_exact(base_context_sum(*s.base, s.rotary_dim), options.context, {}, threads);
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
  bounds.drift_exact =
      semantic_drift_exact(s, bounds.channels, options.drift_tolerance, options.context - 1);
  bounds.drift_realised = semantic_drift_realised(s, bounds.channels, correct,
                                                  options.drift_tolerance, options.context - 1);
  return report;
}

nlohmann::json to_json(const DiagnoseReport& report) {
  nlohmann::json j;
  j["schedule"] = report.schedule;
  j["framework"] = report.framework;
  j["framework_spec"] = report.framework_spec;
  j["format"] = report.format.name;
  j["context"] = report.context;
  j["bands"] = nlohmann::json::array();
  for (const auto& [a, b] : report.bands) j["bands"].push_back({a, b});
  j["correct"] = path_json(report.correct);
  j["candidates"] = nlohmann::json::array();
  for (const auto& c : report.candidates) j["candidates"].push_back(path_json(c));
  j["ranking"] = nlohmann::json::array();
  for (const auto i : report.ranking) j["ranking"].push_back(report.candidates[i].name);
  j["score"] = {{"offset", report.score.offset},
                {"seed", report.score.seed},
                {"summation", std::string(numeric::to_string(report.score.summation))},
                {"accumulator", report.score.summation == numeric::Summation::wide_accumulator
                                    ? nlohmann::json(report.score.accumulator.name)
                                    : nlohmann::json(nullptr)},
                {"positions", report.score.positions},
                {"exact", std::isfinite(report.score.exact) ? nlohmann::json(report.score.exact)
                                                            : nlohmann::json("nan")}};
  j["horizon"] =
      report.horizon.skipped.empty() ? to_json(report.horizon.report) : nlohmann::json::object();
  j["horizon"]["skipped"] = report.horizon.skipped.empty() ? nlohmann::json(nullptr)
                                                           : nlohmann::json(report.horizon.skipped);
  if (report.horizon.theta)
    numeric::put_exact(j["horizon"], "theta", *report.horizon.theta);
  else
    j["horizon"]["theta"] = nullptr;
  const auto& b = report.bounds;
  nlohmann::json bc;
  if (b.base)
    numeric::put_exact(bc, "base", *b.base);
  else
    bc["base"] = nullptr;
  bc["dim"] = b.dim;
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
