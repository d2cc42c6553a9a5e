// ropesim._ropesim's sweep functions (bind_sweep, called from PYBIND11_MODULE in
// ropesim_module.cpp): the sweep table of attention/census/sweep_table.hpp computed in this
// process, a shard at a time, and tables joined and rendered as the files `ropesim sweep --out`
// writes (io/table.hpp, io/provenance.hpp). python/ropesim/_sweep.py and python/ropesim/dask.py
// call them; nothing here runs the command line.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "attention/census/sweep_table.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/provenance.hpp"
#include "io/shard.hpp"
#include "io/table.hpp"
#include "numeric/parallel.hpp"

namespace py = pybind11;
using namespace ropesim;

namespace {

/// (text, option, role) of one word of the recorded command (io::CommandWord).
using Word = std::tuple<std::string, std::string, std::string>;

attention::SweepRequest request_of(std::optional<std::string> models,
                                   std::optional<std::string> schedules, const std::string& formats,
                                   const std::string& realisations, std::uint64_t positions,
                                   std::optional<std::uint64_t> max_period,
                                   const std::string& rounding, const std::string& engine) {
  attention::SweepRequest r;
  r.models = std::move(models);
  r.schedules = std::move(schedules);
  r.formats = formats;
  r.realisations = realisations;
  r.positions = positions;
  r.max_period = max_period;
  r.rounding = rounding;
  r.engine = engine;
  return r;
}

io::Shard shard_of(std::uint64_t index, std::uint64_t count) {
  // the CLI's --shard rules and message (1 <= I <= N <= 10^6)
  return io::parse_shard(std::to_string(index) + "/" + std::to_string(count));
}

/// Checks a sweep without computing it: the grid (attention::sweep_grid), and the budget of
/// every shard of `shards` (one process's work each; attention::check_sweep_budget), or of
/// shard `only` alone when it is not 0. Returns (T, the rows of the whole table; the longrope
/// warnings).
std::tuple<std::uint64_t, std::vector<std::string>> sweep_plan(
    std::optional<std::string> models, std::optional<std::string> schedules,
    const std::string& formats, const std::string& realisations, std::uint64_t positions,
    std::optional<std::uint64_t> max_period, const std::string& rounding, const std::string& engine,
    std::uint64_t shards, std::uint64_t only, bool allow_slow) {
  py::gil_scoped_release release;
  const auto request = request_of(std::move(models), std::move(schedules), formats, realisations,
                                  positions, max_period, rounding, engine);
  const auto grid = attention::sweep_grid(request);
  const auto options = attention::sweep_options(request, 1);
  for (std::uint64_t i = 1; i <= shards; ++i) {
    if (only == 0 || i == only)
      attention::check_sweep_budget(grid, options, shard_of(i, shards), allow_slow);
  }
  return {attention::sweep_rows(grid), attention::sweep_warnings(grid, positions)};
}

/// Shard I/N of the sweep table (attention::sweep_shard_table) on `jobs` threads (0: every
/// core), checked first as sweep_plan checks it: the table as io::table_to_json text (a str,
/// so that it travels between processes as it is) and T.
std::tuple<std::string, std::uint64_t> sweep_shard(
    std::optional<std::string> models, std::optional<std::string> schedules,
    const std::string& formats, const std::string& realisations, std::uint64_t positions,
    std::optional<std::uint64_t> max_period, const std::string& rounding, const std::string& engine,
    unsigned jobs, std::uint64_t shard_index, std::uint64_t shard_count, bool allow_slow,
    const std::function<void(std::size_t, std::size_t)>& progress) {
  py::gil_scoped_release release;
  const auto request = request_of(std::move(models), std::move(schedules), formats, realisations,
                                  positions, max_period, rounding, engine);
  const io::Shard shard = shard_of(shard_index, shard_count);
  const auto grid = attention::sweep_grid(request);
  const auto options = attention::sweep_options(request, numeric::resolve_threads(jobs));
  attention::check_sweep_budget(grid, options, shard, allow_slow);
  attention::CensusProgress on_cell;
  if (progress) {
    on_cell = [&progress](std::size_t done, std::size_t total, const attention::CensusResult&) {
      py::gil_scoped_acquire acquire;
      progress(done, total);
    };
  }
  const io::Table table = attention::sweep_shard_table(grid, options, shard, on_cell);
  return {io::table_to_json(table).dump(), attention::sweep_rows(grid)};
}

io::Table joined(const std::vector<std::string>& parts) {
  std::vector<io::Table> tables;
  for (const auto& text : parts) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      throw InvalidArgument("table: a part is not JSON text (io::table_to_json)");
    }
    tables.push_back(io::table_from_json(j));
  }
  return io::join_tables(tables);
}

/// The parts (io::table_to_json texts, in shard order) joined into one table: its rows as the
/// JSON list of objects `ropesim sweep --json` prints (Table::to_json), as text.
std::string table_records(const std::vector<std::string>& parts) {
  py::gil_scoped_release release;
  return joined(parts).to_json().dump();
}

/// The kind of file `path` names (.csv .md .json .tex), checked as `--out` is before a run
/// computes anything (io::output_kind_for, io::check_output_path): "csv", "markdown", "json",
/// "latex".
std::string output_kind(const std::string& path) {
  const io::OutputKind kind = io::output_kind_for(path, "--out");
  io::check_output_path(path, "--out");
  switch (kind) {
    case io::OutputKind::csv:
      return "csv";
    case io::OutputKind::markdown:
      return "markdown";
    case io::OutputKind::json:
      return "json";
    case io::OutputKind::latex:
      return "latex";
  }
  return "";
}

/// Joins `parts` (shard order) and writes them to `path` as `ropesim WORDS...` would
/// (io::render with io::provenance_of(words), written atomically by io::write_output_file);
/// with `shard` = (I, N, T) the file is shard I/N of T rows, with its record and words, for
/// `ropesim merge`. Returns the bytes written.
std::string write_table(
    const std::vector<std::string>& parts, const std::string& path, const std::vector<Word>& words,
    std::optional<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> shard) {
  py::gil_scoped_release release;
  const io::OutputKind kind = io::output_kind_for(path, "--out");
  std::vector<io::CommandWord> recorded;
  for (const auto& [text, option, role] : words) {
    if (role != "name" && role != "value" && role != "word")
      throw InvalidArgument("command word '" + text + "': role '" + role +
                            "'; accepted: name value word");
    recorded.push_back(io::CommandWord{text, option, role, 0});
  }
  std::optional<io::ShardRecord> record;
  if (shard) {
    const auto [index, count, rows] = *shard;
    record = io::ShardRecord{shard_of(index, count), rows};
  }
  const std::string text =
      io::render(joined(parts), kind, io::provenance_of(std::move(recorded)), record);
  io::write_output_file(path, text);
  return text;
}

}  // namespace

void bind_sweep(py::module_& m) {
  m.def("sweep_plan", &sweep_plan, py::arg("models"), py::arg("schedules"), py::arg("formats"),
        py::arg("realizations"), py::arg("positions"), py::arg("max_period"), py::arg("rounding"),
        py::arg("engine"), py::arg("shards"), py::arg("only"), py::arg("allow_slow"),
        "(T, warnings): the sweep grid checked as `ropesim sweep` checks it "
        "(attention::sweep_grid) and the budget of each of `shards` shards (of shard `only` "
        "alone when it is not 0); T = the rows of the whole table. Raises ValueError with the "
        "CLI's one-line message.");
  m.def("sweep_shard", &sweep_shard, py::arg("models"), py::arg("schedules"), py::arg("formats"),
        py::arg("realizations"), py::arg("positions"), py::arg("max_period"), py::arg("rounding"),
        py::arg("engine"), py::arg("jobs"), py::arg("shard_index"), py::arg("shard_count"),
        py::arg("allow_slow"), py::arg("progress"),
        "(table, T): shard I/N of the sweep table (attention::sweep_shard_table, the rotation "
        "census of each cell, THEORY §3) as io::table_to_json text, and the rows T of the whole "
        "table. `progress(done, total)` (or None) is called after each cell. The GIL is "
        "released while it computes. Raises ValueError for bad input.");
  m.def("table_records", &table_records, py::arg("parts"),
        "The parts (table_to_json texts, in shard order) joined: the JSON text of the list of "
        "row objects `ropesim sweep --json` prints.");
  m.def("output_kind", &output_kind, py::arg("path"),
        "The kind of file `path` names (csv markdown json latex), checked as --out; raises "
        "ValueError for another extension or a path that cannot be written.");
  m.def("write_table", &write_table, py::arg("parts"), py::arg("path"), py::arg("words"),
        py::arg("shard"),
        "Joins the parts and writes the file `ropesim WORDS...` writes (io::render; atomic), "
        "with shard = (I, N, T) a shard file for `ropesim merge`; returns its text.");
}
