// The sweep table (attention/census/sweep_table.hpp): the grid parsed from its spellings, the
// budget, and the census of each cell as one row.
#include "attention/census/sweep_table.hpp"

#include <algorithm>
#include <functional>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/hf_config.hpp"
#include "core/error.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/format.hpp"
#include "numeric/parallel.hpp"
#include "numeric/rounding.hpp"
#include "numeric/spec_lists.hpp"

namespace ropesim::attention {

namespace {

nlohmann::json or_null(const std::optional<std::uint64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::vector<Schedule> grid_schedules(const std::string& models, const std::string& schedules) {
  std::vector<std::string> names;
  if (models == "all" || (models.empty() && schedules.empty())) {
    names = model_preset_names();
  } else if (!models.empty()) {
    names = numeric::split_unique(models, "--models");
  }
  std::vector<Schedule> out;
  for (const auto& name : names)
    out.push_back(with_context("--models", [&] { return preset_schedule(name); }));
  for (const auto& spec :
       numeric::split_unique(schedules, "--schedules", numeric::ListKind::schedules)) {
    out.push_back(with_context("--schedules", [&] { return parse_schedule(spec); }));
  }
  return out;
}

SweepGrid sweep_grid(const SweepRequest& r) {
  if (r.models && r.models->empty())
    throw InvalidArgument("--models: empty list; accepted: all or preset names");
  if (r.schedules && r.schedules->empty())
    throw InvalidArgument("--schedules: empty list; accepted: " + schedule_spellings());
  check_census_limits(r.positions, 0, r.max_period);
  SweepGrid grid;
  grid.rounding = with_context("--rounding", [&] { return numeric::parse_rounding(r.rounding); });
  grid.engine = with_context("--engine", [&] { return &numeric::engine_by_name(r.engine); });
  grid.schedules = grid_schedules(r.models.value_or(""), r.schedules.value_or(""));
  for (const auto& spec :
       numeric::split_unique(r.formats, "--formats", numeric::ListKind::formats)) {
    try {
      grid.formats.push_back(numeric::parse_format(spec));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string("--formats: ") + e.what());
    }
  }
  for (const auto& spec :
       numeric::split_unique(r.realisations, "--realizations", numeric::ListKind::realisations)) {
    try {
      (void)parse_realisation(spec, numeric::Format::fp32());
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string("--realizations: ") + e.what());
    }
    grid.realisations.push_back(spec);
  }
  if (grid.schedules.empty() || grid.formats.empty() || grid.realisations.empty()) {
    throw InvalidArgument(
        "sweep: the grid is empty (give --models, --schedules, --formats and --realizations)");
  }
  return grid;
}

CensusOptions sweep_options(const SweepRequest& request, unsigned threads) {
  CensusOptions options;
  options.positions = request.positions;
  options.max_period = request.max_period;
  options.threads = threads;
  return options;
}

std::uint64_t sweep_rows(const SweepGrid& grid) {
  return grid.schedules.size() * grid.formats.size() * grid.realisations.size();
}

void check_sweep_budget(const SweepGrid& grid, const CensusOptions& options, const io::Shard& shard,
                        bool allow_slow) {
  // Row i of the table is grid cell i (attention::sweep's order); a shard runs its rows only.
  const std::size_t cells_per_schedule = grid.formats.size() * grid.realisations.size();
  const std::uint64_t total_rows = sweep_rows(grid);
  WorkEstimate total;
  for (std::size_t si = 0; si < grid.schedules.size(); ++si) {
    std::size_t cells = 0;
    for (std::size_t c = 0; c < cells_per_schedule; ++c)
      cells += shard.owns(si * cells_per_schedule + c, total_rows) ? 1 : 0;
    const WorkEstimate e = census_work(grid.schedules[si], options, cells);
    total.what = e.what;
    total.units += e.units;
    total.units_per_second = e.units_per_second;
    total.bytes = std::max(total.bytes, e.bytes);
  }
  // The default sweep (the README's main job, about 3 minutes) is always within budget.
  Budget budget;
  budget.unlimited = allow_slow;
  budget.seconds = 1800;
  check_budget("--positions", total, budget);
}

std::vector<std::string> sweep_warnings(const SweepGrid& grid, std::uint64_t positions) {
  std::vector<std::string> out;
  for (const auto& s : grid.schedules) {
    // longrope past L_orig
    if (auto warning = longrope_factor_warning(s, positions - 1)) out.push_back(*warning);
  }
  return out;
}

namespace {

/// One column of the sweep table: its name (the CLI's, docs/CLI.md `ropesim sweep`), whether it
/// holds a number (io::Table::numeric_columns: right-aligned, read as numbers by the renderers)
/// and whether the terminal's narrow table shows it. The rows below fill them in this order.
struct SweepColumn {
  const char* name;
  bool numeric;
  bool terminal;
};

constexpr SweepColumn kSweepColumns[] = {
    {"schedule", false, true},
    {"realization", false, true},
    {"format", false, true},
    {"rounding", false, false},
    {"positions", true, false},
    {"distinct", true, true},
    {"largest_class", true, true},
    {"largest_class_position", true, false},
    {"first_repeat", false, true},
    {"periodic", false, false},
    {"period", true, true},
    {"witnessed", true, true},
    {"max_period", true, false},
    {"max_witness", true, true},
    {"max_witness_period", true, false},
    {"blocks", true, false},
    {"periodic_blocks", true, false},
    {"min_block_distinct", true, false},
    {"overflow_positions", true, false},
    {"first_overflow", true, true},
    {"nan_positions", true, false},
    {"first_nan", true, true},
    {"note", false, false},
};

}  // namespace

io::Table sweep_table(const std::vector<CensusResult>& cells, numeric::Rounding rounding_mode) {
  const std::string rounding(numeric::to_string(rounding_mode));
  io::Table t;
  for (const auto& c : kSweepColumns) {
    t.columns.push_back(c.name);
    if (c.numeric) t.numeric_columns.push_back(c.name);
    if (c.terminal) t.terminal_columns.push_back(c.name);
  }
  for (const auto& r : cells) {
    if (!r.not_applicable.empty()) {
      t.rows.push_back({r.schedule, r.realisation, r.format.name,   rounding, r.positions,
                        nullptr,    nullptr,       nullptr,         nullptr,  nullptr,
                        nullptr,    nullptr,       nullptr,         nullptr,  nullptr,
                        nullptr,    nullptr,       nullptr,         nullptr,  nullptr,
                        nullptr,    nullptr,       r.not_applicable});
      continue;
    }
    std::uint64_t witnessed = 0;
    for (auto w : r.witnesses) witnessed += w >= 0 ? 1 : 0;
    // Component periodicity (THEORY §3 Def 2.1) observed on 0..N-1: blocks with a period ≤ N/2.
    std::uint64_t periodic_blocks = 0;
    for (const auto& p : r.period_per_block) periodic_blocks += p ? 1 : 0;
    nlohmann::json min_block_distinct = nullptr;
    if (!r.distinct_per_block.empty()) {
      min_block_distinct =
          *std::min_element(r.distinct_per_block.begin(), r.distinct_per_block.end());
    }
    const nlohmann::json repeat =
        r.first_repeat ? nlohmann::json::array({r.first_repeat->earlier, r.first_repeat->later})
                       : nlohmann::json(nullptr);
    t.rows.push_back({r.schedule,
                      r.realisation,
                      r.format.name,
                      rounding,
                      r.positions,
                      r.distinct_rotations,
                      r.largest_class.size,
                      r.largest_class.position,
                      repeat,
                      r.period.has_value(),
                      or_null(r.period),
                      r.period ? nlohmann::json(nullptr) : nlohmann::json(witnessed),
                      r.max_period,
                      or_null(r.largest_witness_position),
                      or_null(r.largest_witness_period),
                      r.distinct_per_block.size(),
                      periodic_blocks,
                      min_block_distinct,
                      r.overflow.count,
                      or_null(r.overflow.first),
                      r.nan.count,
                      or_null(r.nan.first),
                      ""});
  }
  return t;
}

io::Table sweep_shard_table(const SweepGrid& grid, const CensusOptions& options,
                            const io::Shard& shard, const CensusProgress& progress) {
  const std::uint64_t total_rows = sweep_rows(grid);
  std::function<bool(std::size_t)> selected;
  if (shard.count > 1)
    selected = [shard, total_rows](std::size_t cell) { return shard.owns(cell, total_rows); };
  return sweep_table(sweep(grid, options, progress, selected), grid.rounding);
}

}  // namespace ropesim::attention
