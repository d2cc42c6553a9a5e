// The head analysis as JSON (proofs/reports/head_analysis.hpp: the keys are listed at to_json).
#include "numeric/exact_decimal.hpp"
#include "numeric/json_number.hpp"
#include "proofs/reports/head_analysis.hpp"

namespace ropesim::proofs {

namespace {

using nlohmann::json;

template <class T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

json values_json(const std::vector<numeric::Value>& values) {
  json out = json::array();
  for (const auto& v : values) out.push_back(numeric::exact_decimal_json(v));
  return out;
}

json block_json(const BlockUsage& b) {
  return {{"segment", b.segment},
          {"block", b.index},
          {"coordinates", {b.coordinates[0], b.coordinates[1]}},
          {"theta", b.theta},
          {"realisation", b.realisation},
          {"query_weight_norm", b.query_weight_norm},
          {"key_weight_norm", b.key_weight_norm},
          {"query_norm", b.query_norm},
          {"key_norm", b.key_norm},
          {"score_mass", b.score_mass},
          {"score_share", optional_json(b.score_share)}};
}

json range_json(const PositionalRange& p) {
  const CertifiedRange& r = p.range;
  json j = {{"k", p.k},
            {"content_independent", p.content_independent},
            {"n_max", r.n_max},
            {"at_limit", r.at_limit},
            {"max_length", r.max_length},
            {"fail_query", optional_json(r.fail_query)},
            {"fail_competitor", optional_json(r.fail_competitor)},
            {"fail_offset", optional_json(r.fail_offset)},
            {"algorithm", r.algorithm},
            {"query_bias", values_json(p.query_bias)},
            {"key_bias", values_json(p.key_bias)}};
  if (r.gap) {
    numeric::put_exact(j, "gap", *r.gap);
    j["gap_exact"] = numeric::exact_decimal_json(*r.gap);
  } else {
    j["gap"] = nullptr;
  }
  j["target_score"] = nullptr;
  j["competitor_score"] = nullptr;
  if (r.target_score) numeric::put_value(j, "target_score", *r.target_score);
  if (r.competitor_score) numeric::put_value(j, "competitor_score", *r.competitor_score);
  return j;
}

json head_json(const HeadReport& h) {
  json blocks = json::array();
  for (const auto& b : h.blocks) blocks.push_back(block_json(b));
  const PositionalTest& t = h.test;
  json j = {{"layer", h.layer},
            {"head", h.head},
            {"name", h.name},
            {"blocks", blocks},
            {"queries", t.queries},
            {"tied", t.tied},
            {"offset", optional_json(t.offset)},
            {"eligible", t.eligible},
            {"at_offset", t.at_offset},
            {"positional", t.positional},
            {"certified_range", h.range ? range_json(*h.range) : json()},
            {"range_note", h.range_note.empty() ? json() : json(h.range_note)}};
  j["offset_share"] = t.eligible
                          ? json(static_cast<double>(t.at_offset) / static_cast<double>(t.eligible))
                          : json();
  return j;
}

json flip_json(const Flip& f) {
  json j = {{"word", f.word},
            {"length", f.length},
            {"accept", f.accept},
            {"reference_accept", f.reference_accept},
            {"first_prefix", f.first_prefix}};
  numeric::put_value(j, "output", f.output);
  j["output_exact"] = numeric::exact_decimal_json(f.output);
  numeric::put_value(j, "reference_output", f.reference_output);
  j["reference_output_exact"] = numeric::exact_decimal_json(f.reference_output);
  j["first_attention_difference"] = nullptr;
  if (const auto& d = f.first_attention_difference) {
    j["first_attention_difference"] = {{"position", d->position},
                                       {"layer", d->layer},
                                       {"head", d->head},
                                       {"key", optional_json(d->key)},
                                       {"reference_key", optional_json(d->reference_key)}};
  }
  return j;
}

}  // namespace

nlohmann::json to_json(const HeadAnalysis& a) {
  json heads = json::array(), flips = json::array();
  for (const auto& h : a.heads) heads.push_back(head_json(h));
  for (const auto& f : a.flips) flips.push_back(flip_json(f));
  json j = {{"model", a.model_name},
            {"file", a.model_file},
            {"format", a.format},
            {"reference_format", a.reference_format},
            {"rounding", a.rounding},
            {"words",
             {{"count", a.words.size()},
              {"source", a.word_source},
              {"lengths", a.lengths},
              {"per_length", a.per_length},
              {"seed", a.seed}}},
            {"heads", heads},
            {"decisions",
             {{"compared", a.decisions_compared},
              {"agree", a.decisions_compared - a.flips.size()},
              {"flips", a.flips.size()}}},
            {"flips", flips}};
  numeric::put_exact(j, "positional_share", a.positional_share);
  return j;
}

}  // namespace ropesim::proofs
