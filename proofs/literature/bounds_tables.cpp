// The tables of `ropesim table bounds` (docs/BOUNDS.md) and ropesim.table_bounds: the flags read
// into a study and its result laid out as rows and columns (proofs/literature/bounds_tables.hpp).
// The studies: proofs/literature/bounds_study.hpp, proofs/literature/bounds.hpp,
// proofs/literature/positional_head.hpp, proofs/literature/no_decay.hpp.
#include "proofs/literature/bounds_tables.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "attention/census/census.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/hf_config.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/format.hpp"
#include "numeric/json_number.hpp"
#include "numeric/spec_lists.hpp"
#include "numeric/summation.hpp"
#include "proofs/literature/no_decay.hpp"
#include "proofs/literature/positional_head.hpp"

namespace ropesim::proofs {

using numeric::ListKind;
using numeric::split_unique;

namespace {

/// "4.2e3 @ m=3989" (the grid base below the answer and a witness), "NaN" marked.
nlohmann::json rejection_cell(const BaseBound& row) {
  if (!row.rejected_base || !row.rejected_witness) return nullptr;
  return fmt::format("{} @ m={}{}", base_text(*row.rejected_base), *row.rejected_witness,
                     row.rejected_witness_is_nan ? " (NaN)" : "");
}

/// The result of one base-context search (a column group).
nlohmann::json bound_cell(const BaseBound& row) {
  if (row.base) {
    if (row.undecided.empty()) return base_text(*row.base);
    return base_text(*row.base) + " (" + std::to_string(row.undecided.size()) + " undecided below)";
  }
  return "none <= 9.9e19";
}

/// The paper's base checked exactly (check_paper_base): "passes" or "fails at m=…".
nlohmann::json paper_check_cell(const PaperBase& paper) {
  const auto& c = paper.check;
  if (c.verdict == BaseVerdict::fails) return fmt::format("fails at m={}", *c.witness);
  return to_string(c.verdict);
}

/// One census cell: "period P", "repeat j=i", or "none < N".
nlohmann::json census_cell(const attention::CensusResult& r) {
  if (r.period) return fmt::format("period {}", *r.period);
  if (r.first_repeat)
    return fmt::format("repeat {}={}", r.first_repeat->later, r.first_repeat->earlier);
  return fmt::format("distinct < {}", r.positions);
}

/// "m" or "> N".
nlohmann::json drift_cell(const DriftResult& r) {
  if (r.length && r.nan) return fmt::format("{} (NaN)", *r.length);
  if (r.length) return *r.length;
  return fmt::format("> {}", r.max_length);
}

}  // namespace

std::string base_text(const mpz_class& b) {
  const std::string digits = b.get_str();
  return fmt::format("{}.{}e{}", digits[0], digits[1], digits.size() - 1);
}

io::Table base_context_table(const BaseContextStudy& study,
                             const std::vector<std::string>& format_names,
                             const std::string& realisation) {
  const auto& lengths = study.lengths;
  const auto& papers = study.papers;
  const auto& exact = study.exact;
  const auto& finite = study.finite;
  const std::uint64_t finite_max_length = study.finite_max_length;
  io::Table t;
  t.columns = {"L",          "paper",  "paper_exact_check", "exact", "exact_below_fails_at",
               "candidates", "refined"};
  t.terminal_columns = {"L", "paper", "paper_exact_check", "exact", "exact_below_fails_at"};
  t.numeric_columns = {"L", "paper", "exact", "candidates", "refined"};
  for (const auto& f : format_names) {
    t.columns.push_back(realisation + "_" + f);
    t.columns.push_back(realisation + "_" + f + "_below_fails_at");
    t.terminal_columns.push_back(realisation + "_" + f);
    t.numeric_columns.push_back(realisation + "_" + f);
  }
  // The paper's view (LaTeX) of a search result: the base alone, its remark as a note.
  auto paper_bound = [](nlohmann::json& latex, const std::string& column, const BaseBound& b) {
    if (!b.base) {
      latex[column] = {{"cell", nullptr},
                       {"note", "no grid base up to $9.9\\times10^{19}$ passes"}};
    } else if (!b.undecided.empty()) {
      latex[column] = {{"cell", base_text(*b.base)},
                       {"note",
                        "smaller grid bases left undecided (how many: the CSV and JSON "
                        "outputs)"}};
    }
  };
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const auto& paper = papers[i];
    std::vector<nlohmann::json> row{
        lengths[i],
        paper ? nlohmann::json(paper->printed) : nlohmann::json(nullptr),
        paper ? paper_check_cell(*paper) : nlohmann::json(nullptr),
        bound_cell(exact[i]),
        rejection_cell(exact[i]),
        exact[i].candidates,
        exact[i].refined};
    // JSON: a base found (nothing undecided below it) and the paper's as numbers
    nlohmann::json numbers = nlohmann::json::object();
    auto bound_number = [&](const std::string& column, const BaseBound& b) {
      if (b.base && b.undecided.empty()) numeric::put_exact(numbers, column, mpq_class(*b.base));
    };
    if (paper) numeric::put_exact(numbers, "paper", paper->value);
    bound_number("exact", exact[i]);
    for (std::size_t f = 0; f < format_names.size(); ++f) {
      if (lengths[i] > finite_max_length || i >= finite[f].size()) {
        row.emplace_back(nullptr);
        row.emplace_back(nullptr);
      } else {
        row.push_back(bound_cell(finite[f][i]));
        row.push_back(rejection_cell(finite[f][i]));
        bound_number(realisation + "_" + format_names[f], finite[f][i]);
      }
    }
    t.rows.push_back(std::move(row));
    t.json_numbers.push_back(std::move(numbers));
    nlohmann::json latex = nlohmann::json::object();
    paper_bound(latex, "exact", exact[i]);
    for (std::size_t f = 0; f < format_names.size(); ++f) {
      if (lengths[i] <= finite_max_length && i < finite[f].size())
        paper_bound(latex, realisation + "_" + format_names[f], finite[f][i]);
    }
    t.latex_cells.push_back(std::move(latex));
  }
  return t;
}

std::vector<CriticalDimensionModel> resolve_presets(const std::string& presets) {
  const std::vector<std::string> names =
      presets == "all" ? attention::model_preset_names()
                       : split_unique(presets, "--presets", ListKind::schedules);
  std::vector<CriticalDimensionModel> rows;
  for (const auto& n : names) {
    CriticalDimensionModel row;
    row.name = n;
    if (n.rfind("hf-config", 0) == 0) {
      row.schedule = with_context("--presets", [&] { return attention::parse_schedule(n); });
      const std::string path = n.substr(n.find(':') + 1);
      row.preset = attention::ModelPreset{
          n, path, with_context("--presets", [&] { return attention::read_hf_config(path); })};
    } else {
      row.schedule = with_context("--presets", [&] { return attention::preset_schedule(n); });
      const auto& all = attention::model_presets();
      row.preset =
          *std::find_if(all.begin(), all.end(), [&](const auto& m) { return m.name == n; });
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

io::Table semantic_drift_table(const std::vector<CriticalDimensionModel>& models,
                               const std::string& p_text, const std::string& realisation_text,
                               const std::vector<numeric::Format>& formats,
                               const mpq_class& tolerance, std::uint64_t max_length,
                               const BoundsProgress& progress) {
  if (tolerance <= 0 || tolerance >= 1) {
    throw InvalidArgument("--tolerance: must lie strictly between 0 and 1 (got " +
                          tolerance.get_str() + ")");
  }
  const auto ps =
      with_context("--p", [&] { return parse_prope_fractions(split_unique(p_text, "--p")); });
  io::Table t;
  t.columns = {"preset", "p", "channels", "exact"};
  t.terminal_columns = t.columns;
  std::vector<std::string> specs =
      split_unique(realisation_text, "--realizations", ListKind::realisations);
  std::vector<attention::Realisation> realisations;
  for (const auto& spec : specs) {
    for (const auto& f : formats) {
      realisations.push_back(
          with_context("--realizations", [&] { return attention::parse_realisation(spec, f); }));
      t.columns.push_back(realisations.back().name() + "_" + f.name);
      t.terminal_columns.push_back(t.columns.back());
    }
  }
  for (const auto& model : models) {
    const std::string& name = model.name;
    const auto rows =
        semantic_drift_rows(model.schedule, model.preset.config.rope_theta, ps, realisations,
                            tolerance, max_length, [&](const std::string& label) {
                              if (progress) progress("drift " + name + " p=" + label);
                            });
    for (const auto& r : rows) {
      std::vector<nlohmann::json> row{name, r.label,
                                      fmt::format("{}..{}", r.channels.front(), r.channels.back()),
                                      drift_cell(r.exact)};
      for (const auto& d : r.realised) row.push_back(drift_cell(d));
      t.rows.push_back(std::move(row));
      // JSON: p as a number ("none" for the model's own schedule stays text)
      nlohmann::json numbers = nlohmann::json::object();
      for (const auto& p : ps)
        if (p.text == r.label) numeric::put_exact(numbers, "p", p.value);
      t.json_numbers.push_back(std::move(numbers));
    }
  }
  return t;
}

io::Table positional_head_table(const std::vector<numeric::Format>& formats,
                                const std::vector<std::string>& realisations,
                                const std::vector<std::uint64_t>& offsets,
                                const BoundsProgress& progress, const io::Shard& shard) {
  io::Table t;
  t.columns = {"format", "realization", "k",           "C",           "C_source",    "f_large",
               "n_max",  "fail_query",  "fail_offset", "delta_bound", "tie_distance"};
  t.terminal_columns = {"format", "realization", "k",           "C",
                        "n_max",  "fail_query",  "delta_bound", "tie_distance"};
  t.numeric_columns = {"k",          "C",           "f_large",     "n_max",
                       "fail_query", "fail_offset", "delta_bound", "tie_distance"};
  const std::uint64_t total = formats.size() * realisations.size() * offsets.size();
  std::uint64_t index = 0;  // the row's index in the whole table
  for (const auto& f : formats) {
    for (const auto& r : realisations) {
      for (const auto k : offsets) {
        if (!shard.owns(index++, total)) continue;
        if (progress) progress(fmt::format("positional head {} {} k={}", f.name, r, k));
        const auto report = previous_token_head(f, r, k);
        const auto j = to_json(report);
        t.rows.push_back({f.name, j["realization"], k, j["C"], report.C_source, j["f_large"],
                          j["n_max"], j["fail_query"], j["offset"], j["delta_bound"],
                          j["tie_distance"]});
      }
    }
  }
  return t;
}

io::Table nope_table(const std::vector<numeric::Format>& formats,
                     const std::vector<std::string>& summations, std::size_t length,
                     std::size_t trials, std::uint64_t seed, const io::Shard& shard) {
  io::Table t;
  t.columns = {"format",         "summation", "n",           "pairs",  "identical",
               "max_difference", "bound",     "bound_holds", "margin", "underflows"};
  t.numeric_columns = {"n",     "pairs",  "identical", "max_difference",
                       "bound", "margin", "underflows"};
  t.terminal_columns = t.columns;
  const std::uint64_t total = formats.size() * summations.size();
  std::uint64_t index = 0;  // the row's index in the whole table
  for (const auto& f : formats) {
    for (const auto& text : summations) {
      if (!shard.owns(index++, total)) continue;
      NopeCheckSpec spec;
      spec.policy.format = f;
      spec.policy.summation =
          with_context("--summations", [&] { return numeric::parse_summation(text); });
      spec.length = length;
      spec.trials = trials;
      spec.seed = seed;
      const auto c = with_context("--summations", [&] { return nope_previous_token_check(spec); });
      t.rows.push_back({f.name, std::string(numeric::to_string(spec.policy.summation)), length,
                        c.pairs, c.identical, numeric::exact_decimal(c.max_difference),
                        fmt::format("{:.3e}", c.bound.get_d()), c.bound_holds(), c.margin.get_str(),
                        c.underflows});
      // JSON: the exact values as numbers (with "_exact" beside where binary64 cannot hold)
      nlohmann::json numbers = nlohmann::json::object();
      numeric::put_exact(numbers, "max_difference", c.max_difference);
      numeric::put_exact(numbers, "bound", c.bound);
      numeric::put_exact(numbers, "margin", c.margin);
      t.json_numbers.push_back(std::move(numbers));
    }
  }
  return t;
}

io::Table no_decay_table(const attention::Schedule& s, const std::vector<numeric::Format>& formats,
                         const std::vector<std::string>& realisation_specs,
                         std::uint64_t max_length, std::uint64_t key_position) {
  NoDecayOptions options;
  options.schedule = s;
  options.max_length = max_length;
  options.key_position = key_position;
  io::Table t;
  t.columns = {"n", "exact"};
  for (const auto& spec : realisation_specs) {
    for (const auto& f : formats) {
      options.realisations.push_back(
          with_context("--realizations", [&] { return attention::parse_realisation(spec, f); }));
      t.columns.push_back(options.realisations.back().name() + "_" + f.name);
    }
  }
  t.terminal_columns = t.columns;
  t.numeric_columns = t.columns;  // n, the exact score and the realised ones
  for (const auto& r : no_decay_study(options)) {
    std::vector<nlohmann::json> row{r.n, fmt::format("{:.12f}", r.exact)};
    t.json_numbers.push_back({{"exact", r.exact}});  // JSON: the nearest double, as a number
    for (const auto& v : r.realised) {
      if (v.is_finite()) {
        row.push_back(v.to_double());
      } else {
        row.push_back(v.is_nan() ? "NaN" : (v.to_double() > 0 ? "inf" : "-inf"));
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

io::Table critical_dimension_table(const std::vector<CriticalDimensionRow>& rows,
                                   const std::vector<std::string>& realisation_columns) {
  io::Table t;
  t.columns = {"preset", "base",    "d",     "T_train", "T_train_source",
               "x",      "d_extra", "block", "T_extra", "block_period"};
  t.terminal_columns = {"preset", "base", "d", "T_train", "d_extra", "T_extra"};
  for (const auto& column : realisation_columns) {
    t.columns.push_back(column);
    t.terminal_columns.push_back(column);
  }
  for (const auto& r : rows) {
    const auto& c = r.critical;
    std::vector<nlohmann::json> row{r.name,
                                    c.base.get_str(),
                                    r.dim,
                                    r.train_length.length,
                                    r.train_length.source,
                                    fmt::format("{:.6f}", c.ratio),
                                    c.d_extra,
                                    c.block ? nlohmann::json(*c.block) : nlohmann::json(nullptr),
                                    fmt::format("{:.6g}", c.t_extra.to_double())};
    // JSON: numbers (the text columns round for reading)
    nlohmann::json numbers = {{"x", c.ratio}, {"T_extra", c.t_extra.to_double()}};
    numeric::put_exact(numbers, "base", c.base);
    if (r.block_period) numbers["block_period"] = *r.block_period;
    t.json_numbers.push_back(std::move(numbers));
    if (!r.block_period) {
      row.emplace_back(nullptr);
      for (std::size_t k = 0; k < realisation_columns.size(); ++k) row.emplace_back(nullptr);
    } else {
      row.push_back(fmt::format("{:.6g}", *r.block_period));
      for (const auto& census : r.census) row.push_back(census_cell(census));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

namespace {

/// "1024", "1K" (= 1024), "1M" (= 2^20): a context length in 1..2^24.
std::uint64_t parse_length(const std::string& text) {
  std::string digits = text;
  std::uint64_t unit = 1;
  if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'k')) {
    unit = 1024;
    digits.pop_back();
  } else if (!digits.empty() && (digits.back() == 'M' || digits.back() == 'm')) {
    unit = 1024 * 1024;
    digits.pop_back();
  }
  const bool ok =
      !digits.empty() && digits.size() <= 8 &&
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  const std::uint64_t value = ok ? std::stoull(digits) * unit : 0;
  if (!ok || value == 0 || value > kMaxContextLength) {
    throw InvalidArgument(
        "--lengths: '" + text +
        "' is not a context length (an integer 1..16777216, or NK = N*1024, NM = N*2^20)");
  }
  return value;
}

/// `value` in lo..hi, refused as the CLI's integer option `flag` refuses it.
void check_range(std::uint64_t value, const std::string& flag, std::uint64_t lo, std::uint64_t hi) {
  (void)ropesim::parse_integer(std::to_string(value), flag, lo, hi);
}

/// --kind base-context: base_context_study over the formats' realisations.
io::Table run_base_context(const TableBoundsRequest& o,
                           const std::vector<std::string>& format_names,
                           const std::vector<numeric::Format>& formats, unsigned threads,
                           const BoundsProgress& progress) {
  BaseContextOptions options;
  options.dim = o.dim;
  if (o.dim % 2 != 0) check_options(options);  // the --dim refusal comes first
  for (const auto& item : numeric::split_unique(o.lengths, "--lengths"))
    options.lengths.push_back(parse_length(item));
  options.from = o.from;
  options.finite_max_length = o.finite_max_length;
  options.threads = threads;
  check_options(options);
  for (const auto& f : formats) {
    options.realisations.push_back(with_context(
        "--realization", [&] { return attention::parse_realisation(o.realisation, f); }));
  }
  options.on_exact_candidate = [&](std::uint64_t L, const mpz_class& b) {
    if (progress) progress(fmt::format("exact L={} b={}", L, base_text(b)));
  };
  if (progress) progress("exact");
  const auto study = base_context_study(options);
  return base_context_table(study, format_names, options.realisations.front().name());
}

/// --kind critical-dim: critical_dimension_study over the presets (shard `shard` of them) and
/// realisations.
io::Table run_critical_dimension(const TableBoundsRequest& o,
                                 const std::vector<numeric::Format>& formats, unsigned threads,
                                 const io::Shard& shard, const BoundsProgress& progress) {
  CriticalDimensionOptions options;
  const auto models = resolve_presets(o.presets);
  for (std::size_t i = 0; i < models.size(); ++i)
    if (shard.owns(i, models.size())) options.models.push_back(models[i]);
  std::vector<std::string> columns;
  for (const auto& spec :
       numeric::split_unique(o.realisations, "--realizations", numeric::ListKind::realisations)) {
    for (const auto& f : formats) {
      options.realisations.push_back(
          with_context("--realizations", [&] { return attention::parse_realisation(spec, f); }));
      columns.push_back(options.realisations.back().name() + "_" + f.name);
    }
  }
  options.positions = o.positions;
  options.threads = threads;
  options.on_census = [&](const std::string& name) {
    if (progress) progress("census " + name);
  };
  const auto rows = critical_dimension_study(options);
  return critical_dimension_table(rows, columns);
}

/// --kind positional-head: the offsets and realisations checked, then the rows of `shard`.
io::Table run_positional_head(const TableBoundsRequest& o,
                              const std::vector<numeric::Format>& formats, const io::Shard& shard,
                              const BoundsProgress& progress) {
  std::vector<std::uint64_t> offsets;
  for (const auto& item : numeric::split_unique(o.offsets, "--k")) {
    offsets.push_back(ropesim::parse_integer(item, "--k", 1, 999999999));  // an offset
  }
  const auto specs =
      numeric::split_unique(o.realisations, "--realizations", numeric::ListKind::realisations);
  for (const auto& spec : specs)
    for (const auto& f : formats)
      (void)with_context("--realizations", [&] { return attention::parse_realisation(spec, f); });
  return positional_head_table(formats, specs, offsets, progress, shard);
}

}  // namespace

const std::vector<std::string>& bounds_kinds() {
  static const std::vector<std::string> kinds{"base-context",        "critical-dim",
                                              "semantic-drift",      "positional-head",
                                              "nope-previous-token", "no-decay"};
  return kinds;
}

void check_bounds_kind(const std::string& kind) {
  const auto& kinds = bounds_kinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    throw InvalidArgument("--kind: '" + kind +
                          "' is not a bounds table; accepted: base-context, critical-dim, "
                          "semantic-drift, positional-head, nope-previous-token, no-decay");
  }
}

bool bounds_kind_shardable(const std::string& kind) {
  return kind == "critical-dim" || kind == "semantic-drift" || kind == "positional-head" ||
         kind == "nope-previous-token";
}

io::Table bounds_table(const TableBoundsRequest& o, unsigned threads, const io::Shard& shard,
                       const BoundsProgress& progress) {
  check_bounds_kind(o.kind);
  if (shard.count > 1 && !bounds_kind_shardable(o.kind)) {
    throw InvalidArgument("--shard: table bounds --kind " + o.kind +
                          " has no shards (each row depends on the rows before it); accepted: "
                          "critical-dim, semantic-drift, positional-head, nope-previous-token");
  }
  if (threads == 0) throw InvalidArgument("table bounds: threads must be at least 1, got 0");
  // The ranges of the CLI's integer options (cli/table_bounds_command.cpp), for the library's
  // other callers.
  check_range(o.dim, "--dim", 2, 4096);
  check_range(o.from, "--from", 10, 9900000000000000000ULL);
  check_range(o.finite_max_length, "--finite-max-length", 0, kMaxContextLength);
  check_range(o.positions, "--positions", attention::kMinCensusPositions, std::uint64_t{1} << 24);
  check_range(o.max_length, "--max-length", 1, std::uint64_t{1} << 24);
  check_range(o.nope_length, "--length", 3, 4096);
  check_range(o.trials, "--trials", 1, 1000000);
  check_range(o.key_position, "--key-position", 0, std::uint64_t{1} << 40);
  // Validate every argument before computing anything (bad input: no output).
  const auto format_names =
      numeric::split_unique(o.formats, "--formats", numeric::ListKind::formats);
  std::vector<numeric::Format> formats;
  for (const auto& f : format_names) {
    formats.push_back(with_context("--formats", [&] { return numeric::parse_format(f); }));
  }
  if (o.kind == "base-context")
    return run_base_context(o, format_names, formats, threads, progress);
  if (o.kind == "positional-head") return run_positional_head(o, formats, shard, progress);
  if (o.kind == "nope-previous-token") {
    const auto summations = numeric::split_unique(o.summations, "--summations");
    for (const auto& text : summations)
      (void)with_context("--summations", [&] { return numeric::parse_summation(text); });
    return nope_table(formats, summations, o.nope_length, o.trials, o.seed, shard);
  }
  if (o.kind == "no-decay") {
    const auto s =
        with_context("--schedule", [&] { return attention::parse_schedule(o.schedule); });
    return no_decay_table(
        s, formats,
        numeric::split_unique(o.realisations, "--realizations", numeric::ListKind::realisations),
        o.max_length, o.key_position);
  }
  if (o.kind == "semantic-drift") {
    const auto models = resolve_presets(o.presets);
    std::vector<CriticalDimensionModel> mine;
    for (std::size_t i = 0; i < models.size(); ++i)
      if (shard.owns(i, models.size())) mine.push_back(models[i]);
    return semantic_drift_table(
        mine, o.p_values, o.realisations, formats,
        with_context("--tolerance",
                     [&] { return numeric::parse_rational_exact(o.tolerance, "tolerance"); }),
        o.max_length, progress);
  }
  return run_critical_dimension(o, formats, threads, shard, progress);
}

}  // namespace ropesim::proofs
