// Certificates for ropesim-verify (proofs/reports/certificate.hpp).
#include "proofs/reports/certificate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "core/error.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/value.hpp"
#include "proofs/compiler/mod_atom.hpp"
#include "proofs/range/fast_range.hpp"

namespace ropesim::proofs {

namespace {

nlohmann::json format_json(const numeric::Format& f) {
  return {{"name", f.name},
          {"kind", f.kind == numeric::Format::Kind::floating ? "floating" : "fixed"},
          {"precision", f.precision},
          {"emin", f.emin},
          {"emax", f.emax},
          {"subnormals", f.subnormals},
          {"infinity", f.has_infinity}};
}

nlohmann::json blocks_json(const attention::Schedule& s) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& b : s.blocks) {
    if (b.turn) {
      blocks.push_back({{"turn", b.turn->a.get_str() + "/" + b.turn->m.get_str()}});
    } else {
      blocks.push_back({{"theta", b.theta.to_string()}});
    }
  }
  return blocks;
}

void require_one_axis(const attention::Schedule& s) {
  if (!s.position_axes.empty()) {
    throw InvalidArgument("a certificate covers one-axis schedules; '" + s.spec +
                          "' has position axes; accepted: a schedule without position axes");
  }
}

/// The schedule spellings ropesim-verify rebuilds from its own table (verify/schedule_table.hpp):
/// single, periodic, conventional, partial and the presets without YaRN or M-RoPE.
void require_verifier_schedule(const attention::Schedule& s) {
  require_one_axis(s);
  static const std::vector<std::string> kinds = {"single", "periodic", "conventional", "partial"};
  static const std::vector<std::string> presets = {
      "llama2-7b",  "codellama-7b", "llama3-8b", "llama3.1-8b",  "llama3.2-1b",
      "mistral-7b", "qwen2-7b",     "gemma-7b",  "gpt-neox-20b", "phi-2"};
  const auto& list = s.kind == "preset" ? presets : kinds;
  const std::string& name = s.kind == "preset" ? s.spec : s.kind;
  if (std::find(list.begin(), list.end(), name) == list.end()) {
    throw InvalidArgument("--certificate: ropesim-verify does not rebuild schedule '" + s.spec +
                          "'; accepted: single, periodic, conventional, partial and the presets " +
                          fmt::format("{}", fmt::join(presets, ", ")));
  }
}

std::string hex(const numeric::Value& v) { return v.to_hex(); }

/// a > b for finite elements of F (exactly; narrow values are doubles).
bool greater(const numeric::Value& a, const numeric::Value& b) {
  if (!a.is_wide() && !b.is_wide()) return a.to_double() > b.to_double();
  return numeric::exact_rational(a) > numeric::exact_rational(b);
}

}  // namespace

nlohmann::json census_certificate(const attention::Schedule& s, const attention::Realisation& r,
                                  const attention::CensusResult& result) {
  require_one_axis(s);
  if (!result.not_applicable.empty())
    throw InvalidArgument("no certificate for a census that does not apply: " +
                          result.not_applicable);
  check_census_certificate_covered(s, r, result.positions);
  nlohmann::json j;
  j["certificate"] = "census";
  j["version"] = kCensusCertificateVersion;
  j["schedule"] = s.spec;
  j["realization"] = r.name();
  j["format"] = format_json(r.table_format());
  j["rounding"] = std::string(numeric::to_string(r.rounding));
  j["blocks"] = blocks_json(s);
  j["start"] = result.start;
  j["positions"] = result.positions;
  j["distinct"] = result.distinct_rotations;
  j["first_repeat"] =
      result.first_repeat
          ? nlohmann::json::array({result.first_repeat->earlier, result.first_repeat->later})
          : nlohmann::json(nullptr);
  j["largest_class"] =
      nlohmann::json::array({result.largest_class.size, result.largest_class.position});
  j["max_period"] = result.max_period;
  j["period"] = result.period ? nlohmann::json(*result.period) : nlohmann::json(nullptr);
  // the census's own witnesses (the smallest i for each P): the verifier checks each against
  // the classes of equal rotations it computes itself, so nothing is realised here
  nlohmann::json witnesses = nlohmann::json::array();
  nlohmann::json unwitnessed = nlohmann::json::array();
  for (std::size_t k = 0; k < result.witnesses.size(); ++k) {
    const std::uint64_t P = k + 1;
    if (result.witnesses[k] < 0) {
      unwitnessed.push_back(P);
    } else {
      witnesses.push_back(nlohmann::json::array({P, result.witnesses[k]}));
    }
  }
  j["witnesses"] = witnesses;
  j["unwitnessed"] = unwitnessed;
  return j;
}

namespace {

/// The formats and roundings ropesim-verify's number model covers (verify/ropesim_verify.cpp
/// "THE NUMBER MODEL"); throws InvalidArgument naming the accepted ones otherwise.
void require_verifier_arithmetic(const numeric::Format& f, numeric::Rounding rounding) {
  if (f.kind != numeric::Format::Kind::floating || !f.subnormals || !f.has_infinity ||
      f.precision > 53 || f.emin < -1022 || f.emax > 1023) {
    throw InvalidArgument("--certificate: ropesim-verify does not cover format " + f.name +
                          "; accepted: binary floating formats with subnormals and infinities "
                          "within fp64 (fp8e5m2, fp16, bf16, tf32, fp32, fp64, ...)");
  }
  if (rounding == numeric::Rounding::nearest_away) {
    throw InvalidArgument(
        "--certificate: ropesim-verify does not cover rounding nearest-away; accepted: "
        "nearest-even, toward-zero, upward, downward");
  }
}

}  // namespace

void check_horizon_certificate_covered(const FixedOffsetSpec& spec) {
  require_verifier_schedule(spec.schedule);
  const attention::Realisation r = attention::parse_realisation(spec.realisation, spec.policy);
  const std::string name = r.name();
  if (name != "r1" && name != "r2" && name != "r3") {
    throw InvalidArgument(
        "--certificate: ropesim-verify recomputes a horizon head's rotations "
        "for realizations r1, r2 and r3 only; '" +
        name + "' is not covered (accepted: r1, r2, r3)");
  }
  require_verifier_arithmetic(r.table_format(), r.rounding);
}

void check_census_certificate_covered(const attention::Schedule& s, const attention::Realisation& r,
                                      std::uint64_t positions) {
  require_verifier_schedule(s);
  const std::string name = r.name();
  if (name != "r1" && name != "r2" && name != "r3" && name != "hf") {
    throw InvalidArgument("--certificate: ropesim-verify cannot recompute realization '" + name +
                          "' (its steps are not all correctly rounded or not modelled there); "
                          "accepted: r1, r2, r3, hf");
  }
  if (name == "hf") {
    // hf's inv_freq comes from β and D (verify/census_check.hpp, HF): base-β schedules
    // without Llama 3's scaling, every step nearest-even
    const bool base_schedule =
        (s.kind == "conventional" || s.kind == "partial" || s.kind == "preset") && s.base &&
        !s.llama3 && !s.attention_scaling;
    if (!base_schedule || r.rounding != numeric::Rounding::nearest_even) {
      throw InvalidArgument(
          "--certificate: ropesim-verify recomputes realization 'hf' on base-beta schedules "
          "without rope scaling (conventional, partial, presets without rope_scaling) with "
          "nearest-even rounding only; '" +
          s.spec + "' with rounding " + std::string(numeric::to_string(r.rounding)) + " is not");
    }
  }
  require_verifier_arithmetic(r.table_format(), r.rounding);
  const double work = static_cast<double>(positions) * static_cast<double>(s.blocks.size());
  if (work > kMaxCensusCertificateWork) {
    throw InvalidArgument(fmt::format(
        "--certificate: ropesim-verify would realise up to {} positions x {} blocks = {:.3g} "
        "(cos, sin) pairs; accepted: at most {:.3g} (fewer --positions)",
        positions, s.blocks.size(), work, kMaxCensusCertificateWork));
  }
}

namespace {

/// The horizon certificate of a built head and a measured (or claimed lower-bound) range.
/// The fields both forms of a horizon certificate start with (docs/CLI.md, "--certificate").
nlohmann::json horizon_header(const FixedOffsetHead& head, const std::vector<mpq_class>& weights,
                              std::uint64_t k, const CertifiedRange& range,
                              const std::string& evidence) {
  nlohmann::json j;
  j["certificate"] = "horizon";
  j["version"] = 1;
  j["evidence"] = evidence;
  j["schedule"] = head.schedule.spec;
  j["realization"] = head.realisation.name();
  j["format"] = format_json(head.policy.format);
  j["rounding"] = std::string(numeric::to_string(head.policy.rounding));
  j["summation"] = std::string(numeric::to_string(head.policy.summation));
  j["blocks"] = blocks_json(head.schedule);
  nlohmann::json w = nlohmann::json::array();
  for (const auto& q : weights) w.push_back(q.get_str());
  j["weights"] = w;
  j["k"] = k;
  j["C"] = hex(head.C);
  j["f_large"] = hex(head.f_large);
  j["n_max"] = range.n_max;
  j["at_limit"] = range.at_limit;
  j["max_length"] = range.max_length;
  return j;
}

/// The certificate's "fail" block (both algorithms): the failing query i, its competitor c,
/// the realised target score Ŝ_{i,i-k} and competitor score Ŝ_{i,c} (hex) and the exact gap;
/// null when the range stopped at its limit or has no failing query. `scores` is called only
/// when there is one.
nlohmann::json fail_block(const CertifiedRange& range, std::uint64_t k,
                          const std::function<const RealisedScores&()>& scores) {
  if (range.at_limit || !range.fail_query || !range.fail_competitor) return nullptr;
  const RealisedScores& s = scores();
  const std::uint64_t i = *range.fail_query, c = *range.fail_competitor;
  return {{"query", i},
          {"competitor", c},
          {"target", hex(s.score(i, i - k))},
          {"competitor_score", hex(s.score(i, c))},
          {"gap", range.gap ? nlohmann::json(numeric::exact_decimal(*range.gap))
                            : nlohmann::json(nullptr)}};
}

/// Refuses (InvalidArgument) a candidate certificate that ropesim-verify would refuse by its
/// work budget. The verifier scores the competitors its own per-query bounds cannot exclude
/// (verify/ropesim_verify.cpp check_candidates): about kVerifierScoreRatio times the scores
/// ropesim's per-query bound err_i alone leaves (CertifiedRange::scores_per_query_bound; 1.76
/// measured on llama3-8b in bf16 at 2·10^3 and 10^5), times the blocks. (Not
/// scores_evaluated: the split bounds exclude more than the verifier's bound does.)
/// Its budget is kMaxHorizonCertificateFastScores when it scores in binary64
/// (nearest-even, p ≤ 26, emin − p + 1 ≥ −500, emax ≤ 500: verify/fast_f.hpp), else
/// kMaxHorizonCertificateScores.
void check_candidates_work(const FixedOffsetHead& head, const CertifiedRange& range) {
  const numeric::Format& f = head.realisation.table_format();
  const bool fast = head.policy.rounding == numeric::Rounding::nearest_even && f.precision <= 26 &&
                    f.emin - f.precision + 1 >= -500 && f.emax <= 500;
  const double budget = fast ? kMaxHorizonCertificateFastScores : kMaxHorizonCertificateScores;
  const double B = static_cast<double>(head.schedule.blocks.size());
  const double scores = static_cast<double>(range.scores_per_query_bound);
  const double work = kVerifierScoreRatio * scores * B;
  if (work > budget) {
    throw InvalidArgument(fmt::format(
        "--certificate: ropesim-verify would score about {:.3g} competitors ({} x the {} scores "
        "of ropesim's per-query bound here) x {} blocks = {:.3g} block scores; accepted: at "
        "most {:.0e} (a smaller --max-length, a larger C or a shorter head)",
        kVerifierScoreRatio * scores, kVerifierScoreRatio, range.scores_per_query_bound, B, work,
        budget));
  }
}

nlohmann::json horizon_json(const FixedOffsetHead& head, std::vector<mpq_class> weights,
                            const CertifiedRange& range) {
  const std::uint64_t k = head.k;
  const std::uint64_t last =
      range.at_limit ? range.n_max + 1 : range.fail_query.value_or(range.n_max + 2);
  const std::size_t B = head.schedule.blocks.size();
  const double work =
      0.5 * static_cast<double>(last + 1) * static_cast<double>(last + 1) * static_cast<double>(B);
  if (work > kMaxHorizonCertificateWork) {
    throw InvalidArgument(fmt::format(
        "--certificate: N_max = {} needs about {:.3g} score evaluations ((N_max+2)^2/2 x {} "
        "blocks) to certify; accepted: at most {:.0e} (a smaller --max-length or another head)",
        range.n_max, work, B, kMaxHorizonCertificateWork));
  }
  if (weights.empty()) weights.assign(B, mpq_class(1, static_cast<long>(B)));

  nlohmann::json j = horizon_header(head, weights, k, range, "scan");

  RealisedScores scores(head);
  scores.ensure(last + 1);
  nlohmann::json queries = nlohmann::json::array();
  const std::uint64_t last_passing = range.at_limit ? last : last - 1;
  for (std::uint64_t i = k + 1; i <= last_passing; ++i) {
    const numeric::Value target = scores.score(i, i - k);
    std::optional<std::uint64_t> best;
    numeric::Value best_score;
    for (std::uint64_t c = 0; c < i; ++c) {
      if (c == i - k) continue;
      const numeric::Value v = scores.score(i, c);
      if (!best || greater(v, best_score)) {
        best = c;
        best_score = v;
      }
    }
    nlohmann::json q = {{"i", i}, {"target", hex(target)}};
    if (best) {
      q["competitor"] = *best;
      q["competitor_score"] = hex(best_score);
    } else {
      q["competitor"] = nullptr;
    }
    queries.push_back(q);
  }
  j["queries"] = queries;
  j["fail"] = fail_block(range, k, [&]() -> const RealisedScores& { return scores; });
  return j;
}

}  // namespace

nlohmann::json horizon_certificate(const FixedOffsetSpec& spec, const HorizonReport& report) {
  check_horizon_certificate_covered(spec);
  FixedOffsetSpec hs = spec;
  hs.C = numeric::exact_rational(report.C);
  const FixedOffsetHead head = make_fixed_offset_head(hs);
  const CertifiedRange& range = report.range;
  if (range.algorithm != "candidates" || !range.error_bound)
    return horizon_json(head, hs.weights, range);
  // The candidate algorithm's evidence: E and the candidate offsets instead of every score
  // (linear in N_max); the failing query as for the scan.
  const std::uint64_t k = head.k;
  const std::uint64_t last_query =
      range.at_limit ? range.n_max + 1 : range.fail_query.value_or(range.n_max + 2);
  const std::uint64_t max_offset = std::max(last_query - k, k - 1);
  nlohmann::json j;
  {
    std::vector<mpq_class> weights = hs.weights;
    const std::size_t B = head.schedule.blocks.size();
    if (weights.empty()) weights.assign(B, mpq_class(1, static_cast<long>(B)));
    j = horizon_header(head, weights, k, range, "candidates");
    j["error_bound"] = range.error_bound->get_str();
    j["candidate_offsets"] = candidate_offsets(head, *range.error_bound, max_offset);
    check_candidates_work(head, range);
  }
  std::optional<RealisedScores> scores;  // realised only for a failing query
  j["fail"] = fail_block(range, k, [&]() -> const RealisedScores& {
    scores.emplace(head);
    scores->ensure(last_query + 1);
    return *scores;
  });
  return j;
}

nlohmann::json compile_certificate(const CompiledModel& compiled, const CompileOptions& options) {
  if (!compiled.bounded_mod_heads.empty()) {
    throw InvalidArgument(
        "a compile certificate does not yet cover MOD atoms under a non-periodic schedule (C4' "
        "heads, THEORY §7); accepted: models whose MOD atoms use periodic tables");
  }
  if (compiled.layer_norm) {
    throw InvalidArgument(
        "--certificate: a certificate covers models without --layer-norm (the LayerNorm "
        "mirror's checks are not part of it)");
  }
  require_one_axis(options.offset_schedule);
  const attention::EvaluationPolicy& policy = options.policy;
  nlohmann::json j;
  j["certificate"] = "compile";
  j["version"] = 1;
  j["formula"] = compiled.formula;
  j["alphabet"] = compiled.alphabet;
  j["format"] = format_json(policy.format);
  j["rounding"] = std::string(numeric::to_string(policy.rounding));
  j["summation"] = std::string(numeric::to_string(policy.summation));
  j["f_large"] = hex(compiled.f_large);
  if (compiled.past) {
    const PastCertificate& p = *compiled.past;
    j["past"] = {{"f1", hex(p.f1)},
                 {"f2", hex(p.f2)},
                 {"limit", p.limit},
                 {"certified_count", p.certified_count ? nlohmann::json(*p.certified_count)
                                                       : nlohmann::json(nullptr)}};
  } else {
    j["past"] = nullptr;
  }
  nlohmann::json mods = nlohmann::json::array();
  for (const ModAtomHead& h : compiled.mod_heads) {
    nlohmann::json margins = nlohmann::json::array();
    for (const ResidueMargin& rm : h.margins) {
      margins.push_back({{"residue", rm.residue},
                         {"bos_score", hex(rm.bos_score)},
                         {"other_score", hex(rm.bos_wins ? rm.other_max : rm.other_min)},
                         {"margin", rm.margin ? nlohmann::json(numeric::exact_decimal(*rm.margin))
                                              : nlohmann::json(nullptr)}});
    }
    mods.push_back({{"m", h.m},
                    {"r", h.r},
                    {"C", hex(h.C)},
                    {"b", hex(h.b)},
                    {"key_weight", hex(h.key_weight)},
                    {"query_bias", {hex(h.query_cos), hex(h.query_sin)}},
                    {"margins", margins}});
  }
  j["mod_heads"] = mods;
  nlohmann::json bounded = nlohmann::json::array();
  for (const auto& b : compiled.bounded_heads) {
    FixedOffsetSpec fs;
    fs.schedule = options.offset_schedule;
    fs.k = b.k;
    fs.C = numeric::exact_rational(b.C);
    fs.realisation = "r1";
    fs.policy = policy;
    // the claim the model relies on: every query up to N_max + 1 passes (N_max >= n_max)
    CertifiedRange range;
    range.n_max = b.n_max;
    range.at_limit = true;
    range.max_length = b.n_max;
    bounded.push_back({{"node", b.node},
                       {"k", b.k},
                       {"horizon", horizon_json(make_fixed_offset_head(fs), {}, range)}});
  }
  j["bounded_heads"] = bounded;
  j["certified_length"] = compiled.certified_length ? nlohmann::json(*compiled.certified_length)
                                                    : nlohmann::json(nullptr);
  return j;
}

}  // namespace ropesim::proofs
