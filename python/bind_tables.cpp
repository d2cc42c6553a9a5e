// ropesim._ropesim's table functions (bind_tables, called from PYBIND11_MODULE in
// ropesim_module.cpp): the rows of `ropesim table horizon` and `table bounds` computed in this
// process, a shard at a time (proofs/range/horizon_rows.hpp, proofs/literature/bounds_tables.hpp),
// and the table of `experiment length --out` from its rows, as io::table_to_json text that
// bind_sweep.cpp's table_records and write_table join and render. python/ropesim/_tables.py,
// __init__.py and dask.py call them; nothing here runs the command line.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>

#include "core/error.hpp"
#include "io/shard.hpp"
#include "io/table.hpp"
#include "numeric/parallel.hpp"
#include "numeric/spec_lists.hpp"
#include "proofs/experiments/length_study.hpp"
#include "proofs/literature/bounds_tables.hpp"
#include "proofs/range/horizon_rows.hpp"

namespace py = pybind11;
using namespace ropesim;

namespace {

/// The flags of `ropesim table horizon` as given (unset: the CLI's default, the default of
/// proofs::HorizonTableRequest), in the order of the CLI's usage line.
struct HorizonFlags {
  std::optional<std::string> formats, g, schedules, k, C, realisations, rounding, engine, summation,
      accumulator, algorithm;
  std::optional<std::uint64_t> max_length;
  bool allow_slow = false;

  proofs::HorizonTableRequest request() const {
    proofs::HorizonTableRequest r;
    if (formats) r.formats = *formats;
    if (g) r.g = *g;
    if (schedules) r.schedules = *schedules;
    if (k) r.k = *k;
    if (C) r.C = *C;
    if (realisations) r.realisations = *realisations;
    if (rounding) r.head.rounding = *rounding;
    if (engine) r.head.engine = *engine;
    if (summation) r.head.summation = *summation;
    if (accumulator) r.head.accumulator = *accumulator;
    if (algorithm) r.head.algorithm = *algorithm;
    r.head.max_length = max_length;
    r.head.allow_slow = allow_slow;
    return r;
  }
};

io::Shard shard_of(std::uint64_t index, std::uint64_t count) {
  // the CLI's --shard rules and message (1 <= I <= N <= 10^6)
  return io::parse_shard(std::to_string(index) + "/" + std::to_string(count));
}

/// Checks a horizon table without measuring it, as `ropesim table horizon` does before any row
/// (proofs::horizon_grid, then every cell by proofs::horizon_grid_specs: the lists, each head,
/// and each cell's --max-length against the budget unless allow_slow). Returns T, the rows of
/// the whole table. Raises ValueError with the CLI's one-line message.
std::uint64_t table_horizon_plan(const HorizonFlags& flags) {
  py::gil_scoped_release release;
  try {
    return proofs::horizon_grid_specs(proofs::horizon_grid(flags.request())).size();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(numeric::one_line(e.what()));
  }
}

/// Shard I/N of the horizon table (proofs::shard_specs, proofs::horizon_rows on `jobs` threads,
/// 0: every core; proofs::horizon_table), checked first as table_horizon_plan checks it: the
/// table as io::table_to_json text and T. `progress(done, total)` counts the shard's rows.
std::tuple<std::string, std::uint64_t> table_horizon_shard(
    const HorizonFlags& flags, unsigned jobs, std::uint64_t shard_index, std::uint64_t shard_count,
    const std::function<void(std::size_t, std::size_t)>& progress) {
  py::gil_scoped_release release;
  try {
    const io::Shard shard = shard_of(shard_index, shard_count);
    const proofs::HorizonGrid grid = proofs::horizon_grid(flags.request());
    std::vector<proofs::HorizonSpec> specs = proofs::horizon_grid_specs(grid);
    const std::uint64_t total = specs.size();
    specs = proofs::shard_specs(std::move(specs), shard);
    proofs::HorizonRowsProgress on_row;
    if (progress) {
      on_row = [&progress](std::size_t done, std::size_t all, const proofs::HorizonReport&) {
        py::gil_scoped_acquire acquire;
        progress(done, all);
      };
    }
    const auto reports =
        proofs::horizon_rows(std::move(specs), numeric::resolve_threads(jobs), on_row);
    const io::Table table = proofs::horizon_table(reports, !grid.schedules.empty());
    return {io::table_to_json(table).dump(), total};
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(numeric::one_line(e.what()));
  }
}

/// Shard I/N of the table of `ropesim table bounds` (proofs::bounds_table on `jobs` threads,
/// 0: every core; Shard 1/1: the whole table) as io::table_to_json text. `progress(what)` (or
/// None) gets a line of progress. Raises ValueError with the CLI's one-line message.
std::string table_bounds_shard(const proofs::TableBoundsRequest& request, unsigned jobs,
                               std::uint64_t shard_index, std::uint64_t shard_count,
                               const std::function<void(const std::string&)>& progress) {
  py::gil_scoped_release release;
  try {
    proofs::BoundsProgress on_line;
    if (progress) {
      on_line = [&progress](const std::string& what) {
        py::gil_scoped_acquire acquire;
        progress(what);
      };
    }
    return io::table_to_json(proofs::bounds_table(request, numeric::resolve_threads(jobs),
                                                  shard_of(shard_index, shard_count), on_line))
        .dump();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(numeric::one_line(e.what()));
  }
}

/// Checks a bounds table without computing it, for a kind with shards: every argument is
/// validated by proofs::bounds_table before any row, and shard 1/10^6 of a table of fewer than
/// 10^6 rows (models) has none, so computing it computes nothing. Raises ValueError with the
/// CLI's one-line message (and for a kind without shards: check it by running it).
void table_bounds_plan(const proofs::TableBoundsRequest& request) {
  py::gil_scoped_release release;
  try {
    proofs::check_bounds_kind(request.kind);
    if (!proofs::bounds_kind_shardable(request.kind)) {
      throw InvalidArgument("table bounds --kind " + request.kind +
                            " has no shards (each row depends on the rows before it); "
                            "accepted: critical-dim, semantic-drift, positional-head, "
                            "nope-previous-token");
    }
    (void)proofs::bounds_table(request, 1, io::Shard{1, io::kMaxShards});
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(numeric::one_line(e.what()));
  }
}

/// The table `ropesim experiment length --out` writes (columns proofs::length_columns(), one
/// row per (schedule, format, length): proofs::length_rows) from the rows of length_json's
/// "rows" (a JSON list of objects keyed by those columns, as text), as io::table_to_json text
/// for write_table. Raises ValueError for a row without one of the columns.
std::string length_table(const std::string& rows_text) {
  py::gil_scoped_release release;
  nlohmann::json rows;
  try {
    rows = nlohmann::json::parse(rows_text);
  } catch (const nlohmann::json::exception&) {
    throw InvalidArgument("length table: the rows are not JSON text");
  }
  io::Table table;
  table.columns = proofs::length_columns();
  for (const auto& row : rows) {
    std::vector<nlohmann::json> cells;
    for (const auto& column : table.columns) {
      if (!row.is_object() || !row.contains(column))
        throw InvalidArgument("length table: a row has no column '" + column + "'");
      cells.push_back(row.at(column));
    }
    table.rows.push_back(std::move(cells));
  }
  return io::table_to_json(table).dump();
}

}  // namespace

void bind_tables(py::module_& m) {
  py::class_<HorizonFlags>(m, "HorizonTableFlags",
                           "The flags of `ropesim table horizon` (None: the CLI's default).")
      .def(py::init<>())
      .def_readwrite("formats", &HorizonFlags::formats)
      .def_readwrite("g", &HorizonFlags::g)
      .def_readwrite("schedules", &HorizonFlags::schedules)
      .def_readwrite("k", &HorizonFlags::k)
      .def_readwrite("C", &HorizonFlags::C)
      .def_readwrite("realizations", &HorizonFlags::realisations)
      .def_readwrite("rounding", &HorizonFlags::rounding)
      .def_readwrite("engine", &HorizonFlags::engine)
      .def_readwrite("summation", &HorizonFlags::summation)
      .def_readwrite("accumulator", &HorizonFlags::accumulator)
      .def_readwrite("algorithm", &HorizonFlags::algorithm)
      .def_readwrite("max_length", &HorizonFlags::max_length)
      .def_readwrite("allow_slow", &HorizonFlags::allow_slow);
  m.def("table_horizon_plan", &table_horizon_plan, py::arg("flags"),
        "T, the rows of the horizon table, every cell checked as `ropesim table horizon` "
        "checks it before measuring (proofs::horizon_grid_specs). Raises ValueError with the "
        "CLI's one-line message.");
  m.def("table_horizon_shard", &table_horizon_shard, py::arg("flags"), py::arg("jobs"),
        py::arg("shard_index"), py::arg("shard_count"), py::arg("progress"),
        "(table, T): shard I/N of the horizon table (proofs::horizon_rows, THEORY §6; "
        "proofs::horizon_table) as io::table_to_json text, and the rows T of the whole table. "
        "`progress(done, total)` (or None) is called after each row. The GIL is released "
        "while it computes.");
  m.def("length_table", &length_table, py::arg("rows"),
        "The table `ropesim experiment length --out` writes, from the JSON text of the "
        "experiment's rows (objects keyed by proofs::length_columns()), as table_to_json text.");
  py::class_<proofs::TableBoundsRequest>(
      m, "TableBoundsRequest", "The flags of `ropesim table bounds` (defaults: the CLI's).")
      .def(py::init<>())
      .def_readwrite("kind", &proofs::TableBoundsRequest::kind)
      .def_readwrite("lengths", &proofs::TableBoundsRequest::lengths)
      .def_readwrite("formats", &proofs::TableBoundsRequest::formats)
      .def_readwrite("realization", &proofs::TableBoundsRequest::realisation)
      .def_readwrite("realizations", &proofs::TableBoundsRequest::realisations)
      .def_readwrite("presets", &proofs::TableBoundsRequest::presets)
      .def_readwrite("dim", &proofs::TableBoundsRequest::dim)
      .def_readwrite("finite_max_length", &proofs::TableBoundsRequest::finite_max_length)
      .def_readwrite("positions", &proofs::TableBoundsRequest::positions)
      .def_readwrite("from_", &proofs::TableBoundsRequest::from)
      .def_readwrite("max_length", &proofs::TableBoundsRequest::max_length)
      .def_readwrite("tolerance", &proofs::TableBoundsRequest::tolerance)
      .def_readwrite("p", &proofs::TableBoundsRequest::p_values)
      .def_readwrite("k", &proofs::TableBoundsRequest::offsets)
      .def_readwrite("summations", &proofs::TableBoundsRequest::summations)
      .def_readwrite("schedule", &proofs::TableBoundsRequest::schedule)
      .def_readwrite("length", &proofs::TableBoundsRequest::nope_length)
      .def_readwrite("trials", &proofs::TableBoundsRequest::trials)
      .def_readwrite("seed", &proofs::TableBoundsRequest::seed)
      .def_readwrite("key_position", &proofs::TableBoundsRequest::key_position);
  m.def("table_bounds_shard", &table_bounds_shard, py::arg("request"), py::arg("jobs"),
        py::arg("shard_index"), py::arg("shard_count"), py::arg("progress"),
        "Shard I/N of the table of `ropesim table bounds` (proofs::bounds_table; 1/1: the whole "
        "table; only critical-dim, semantic-drift, positional-head and nope-previous-token have "
        "shards) as io::table_to_json text. The GIL is released while it computes.");
  m.def("table_bounds_plan", &table_bounds_plan, py::arg("request"),
        "Checks a bounds table of a kind with shards without computing it; raises ValueError "
        "with the CLI's one-line message.");
}
