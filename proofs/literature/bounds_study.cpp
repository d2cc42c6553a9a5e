#include "proofs/literature/bounds_study.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "numeric/json_number.hpp"
#include "numeric/parallel.hpp"

namespace ropesim::proofs {

void check_options(const BaseContextOptions& options) {
  if (options.dim % 2 != 0) {
    throw InvalidArgument("--dim: the head dimension must be even (got " +
                          std::to_string(options.dim) + ")");
  }
  const auto& lengths = options.lengths;
  if (lengths.empty()) throw InvalidArgument("--lengths: no context length given");
  for (const auto L : lengths) {
    if (L == 0 || L > kMaxContextLength) {
      throw InvalidArgument("--lengths: " + std::to_string(L) +
                            " is not a context length; accepted: 1..16777216");
    }
  }
  if (!std::is_sorted(lengths.begin(), lengths.end()) ||
      std::adjacent_find(lengths.begin(), lengths.end()) != lengths.end()) {
    throw InvalidArgument("--lengths: give the context lengths in increasing order, each once");
  }
  if (options.threads == 0) throw InvalidArgument("--jobs: threads must be at least 1, got 0");
}

BaseContextStudy base_context_study(const BaseContextOptions& options) {
  check_options(options);
  const std::uint64_t first = base_grid_index_at_least(mpq_class(mpz_class(options.from)));
  const std::size_t dim = options.dim;
  const unsigned threads = options.threads;
  BaseContextStudy study;
  study.lengths = options.lengths;
  study.finite_max_length = options.finite_max_length;
  study.exact = base_context_bounds(
      options.lengths,
      [&](const mpz_class& b, std::uint64_t L, std::span<const std::uint64_t> hints) {
        if (options.on_exact_candidate) options.on_exact_candidate(L, b);
        return check_base_exact(base_context_sum(mpq_class(b), dim), L, hints, threads);
      },
      first);
  for (const auto L : options.lengths) study.papers.push_back(check_paper_base(L, dim, threads));
  std::vector<std::uint64_t> finite_lengths;
  for (const auto L : options.lengths) {
    if (L <= options.finite_max_length) finite_lengths.push_back(L);
  }
  const auto& realisations = options.realisations;
  for (const auto& r : realisations) {
    study.realisations.push_back(r.name());
    study.formats.push_back(r.table_format().name);
  }
  study.finite.resize(realisations.size());
  if (!finite_lengths.empty()) {
    numeric::parallel_for(threads, realisations.size(), [&](std::size_t f) {
      study.finite[f] = base_context_bounds(
          finite_lengths,
          [&](const mpz_class& b, std::uint64_t L, std::span<const std::uint64_t> hints) {
            const auto s = attention::conventional_schedule(mpq_class(b), dim);
            return check_base_realised(s, realisations[f], L, hints);
          },
          first);
    });
  }
  return study;
}

namespace {

nlohmann::json bound_json(const BaseBound& b) {
  nlohmann::json j = nlohmann::json::object();
  if (b.base) {
    numeric::put_exact(j, "base", mpq_class(*b.base));
  } else {
    j["base"] = nullptr;
  }
  if (b.rejected_base) {
    numeric::put_exact(j, "rejected_base", mpq_class(*b.rejected_base));
  } else {
    j["rejected_base"] = nullptr;
  }
  j["rejected_witness"] =
      b.rejected_witness ? nlohmann::json(*b.rejected_witness) : nlohmann::json(nullptr);
  j["rejected_witness_is_nan"] = b.rejected_witness_is_nan;
  j["undecided"] = nlohmann::json::array();
  for (const auto& u : b.undecided) j["undecided"].push_back(u.get_str());
  j["candidates"] = b.candidates;
  j["refined"] = b.refined;
  return j;
}

}  // namespace

nlohmann::json to_json(const BaseContextStudy& study) {
  nlohmann::json out;
  out["finite_max_length"] = study.finite_max_length;
  out["rows"] = nlohmann::json::array();
  for (std::size_t i = 0; i < study.lengths.size(); ++i) {
    nlohmann::json row;
    row["L"] = study.lengths[i];
    const auto& paper = study.papers[i];
    row["paper"] = paper ? nlohmann::json(paper->printed) : nlohmann::json(nullptr);
    if (paper) {
      numeric::put_exact(row, "paper_value", paper->value);
      row["paper_check"] = to_string(paper->check.verdict);
      row["paper_witness"] =
          paper->check.witness ? nlohmann::json(*paper->check.witness) : nlohmann::json(nullptr);
    }
    row["exact"] = bound_json(study.exact[i]);
    row["finite"] = nlohmann::json::array();
    for (std::size_t f = 0; f < study.finite.size(); ++f) {
      if (i >= study.finite[f].size()) continue;
      nlohmann::json cell = bound_json(study.finite[f][i]);
      cell["realization"] = study.realisations[f];
      cell["format"] = study.formats[f];
      row["finite"].push_back(std::move(cell));
    }
    out["rows"].push_back(std::move(row));
  }
  return out;
}

std::vector<CriticalDimensionRow> critical_dimension_study(
    const CriticalDimensionOptions& options) {
  std::vector<CriticalDimensionRow> rows;
  for (const auto& model : options.models) {
    const attention::Schedule& s = model.schedule;
    CriticalDimensionRow row;
    row.name = model.name;
    row.dim = s.exponent_dim ? *s.exponent_dim : s.rotary_dim;
    row.train_length = training_length(model.preset);
    row.critical =
        critical_dimension(model.preset.config.rope_theta, row.dim, row.train_length.length);
    if (row.critical.block) {
      // The block as the model computes it (llama3 scaling applied: its period is the scaled
      // one).
      const double theta = s.blocks[*row.critical.block].theta.to_double();
      row.block_period = 2 * 3.14159265358979323846 / theta;
      if (options.on_census) options.on_census(model.name);
      attention::CensusOptions census;
      census.positions = options.positions;
      census.threads = options.threads;
      row.census = attention::census_many(restrict_to_block(s, *row.critical.block),
                                          options.realisations, census);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::json to_json(const std::vector<CriticalDimensionRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json j;
    j["name"] = r.name;
    numeric::put_exact(j, "base", r.critical.base);
    j["d"] = r.dim;
    j["T_train"] = r.train_length.length;
    j["T_train_source"] = r.train_length.source;
    j["x"] = r.critical.ratio;
    j["d_extra"] = r.critical.d_extra;
    j["block"] = r.critical.block ? nlohmann::json(*r.critical.block) : nlohmann::json(nullptr);
    j["T_extra"] = r.critical.t_extra.to_double();
    j["block_period"] = r.block_period ? nlohmann::json(*r.block_period) : nlohmann::json(nullptr);
    j["census"] = nlohmann::json::array();
    for (const auto& c : r.census) j["census"].push_back(attention::to_json(c));
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace ropesim::proofs
