// ropesim._ropesim: the C++ side of the Python module `ropesim` (docs/PYTHON.md). Three kinds of
// entry point, none a second implementation:
//   round_values        numeric::Arithmetic::convert of each binary64 into F, with its flags;
//   rotation_table      attention::realised_table (the evaluator the census counts);
//   run_cli             the `ropesim` command line (cli::run_command_line) run in-process with
//                       std::cout and std::cerr captured, so a function returns what the CLI's
//                       --json prints and raises the CLI's one-line message.
// The GIL is released while C++ computes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "attention/realisation.hpp"
#include "attention/realised_table.hpp"
#include "attention/schedule.hpp"
#include "cli/commands.hpp"
#include "numeric/arithmetic.hpp"
#include "numeric/budget.hpp"
#include "numeric/error.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/format.hpp"
#include "numeric/parallel.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"
#include "numeric/version.hpp"

namespace py = pybind11;
using namespace ropesim;

namespace {

/// Rounds every element of `values` (binary64, any shape) into `format` under `rounding`:
/// returns (rounded as binary64, IEEE flag bits as uint8), both of the input's shape.
std::pair<py::array_t<double>, py::array_t<std::uint8_t>> round_values(
    py::array_t<double, py::array::c_style | py::array::forcecast> values,
    const std::string& format, const std::string& rounding) {
  const auto f = with_context("format", [&] { return numeric::parse_format(format); });
  const auto mode = with_context("rounding", [&] { return numeric::parse_rounding(rounding); });
  std::vector<py::ssize_t> shape(values.shape(), values.shape() + values.ndim());
  py::array_t<double> out(shape);
  py::array_t<std::uint8_t> flags(shape);
  const double* in = values.data();
  double* o = out.mutable_data();
  std::uint8_t* fl = flags.mutable_data();
  const auto n = static_cast<std::size_t>(values.size());
  {
    py::gil_scoped_release release;
    const numeric::Arithmetic arithmetic(f, mode);
    for (std::size_t k = 0; k < n; ++k) {
      numeric::Flags raised;
      const numeric::Value v = arithmetic.convert(numeric::Value::from_double_exact(in[k]), raised);
      o[k] = v.to_double();
      fl[k] = raised.bits();
    }
  }
  return {out, flags};
}

/// attention::realised_table as two (positions, blocks) float64 arrays and a (positions,)
/// uint8 array of numeric::Flags bits (1 overflow, 2 invalid: NaN).
py::tuple rotation_table(const std::string& schedule_spec, const std::string& realisation_spec,
                         const std::string& format_spec, std::uint64_t positions,
                         std::uint64_t start, const std::string& rounding,
                         const std::string& engine_name, unsigned jobs) {
  const auto format = with_context("format", [&] { return numeric::parse_format(format_spec); });
  const auto mode = with_context("rounding", [&] { return numeric::parse_rounding(rounding); });
  const auto schedule =
      with_context("schedule", [&] { return attention::parse_schedule(schedule_spec); });
  const numeric::Engine* engine =
      with_context("engine", [&] { return &numeric::engine_by_name(engine_name); });
  const numeric::FormatBinding binding{format, mode, engine};
  const auto realisation = with_context(
      "realization", [&] { return attention::parse_realisation(realisation_spec, binding); });
  with_context("realization", [&] {
    attention::check_applicable(schedule, realisation);
    attention::check_table_fits_double(realisation);
    return 0;
  });
  check_budget("positions", attention::realised_table_work(schedule, positions, true), Budget{});
  attention::RealisedTable t;
  {
    py::gil_scoped_release release;
    t = with_context("positions", [&] {
      return attention::realised_table(schedule, realisation, start, positions,
                                       numeric::resolve_threads(jobs));
    });
  }
  const auto n = static_cast<py::ssize_t>(t.positions), b = static_cast<py::ssize_t>(t.blocks);
  py::array_t<double> cos({n, b}), sin({n, b});
  py::array_t<std::uint8_t> flags(n);
  std::copy(t.cos.begin(), t.cos.end(), cos.mutable_data());
  std::copy(t.sin.begin(), t.sin.end(), sin.mutable_data());
  std::copy(t.flags.begin(), t.flags.end(), flags.mutable_data());
  return py::make_tuple(cos, sin, flags);
}

std::mutex cli_mutex;  // std::cout/std::cerr are redirected while a command runs

/// Runs `ropesim ARGS...` in-process: (exit code, stdout, stderr).
std::tuple<int, std::string, std::string> run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = 0;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(cli_mutex);
    std::vector<std::string> argv_text{"ropesim"};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
    std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
    try {
      code = cli::run_command_line(static_cast<int>(argv_text.size()), argv.data());
    } catch (...) {
      std::cout.rdbuf(old_out);
      std::cerr.rdbuf(old_err);
      throw;
    }
    std::cout.flush();
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
  }
  return {code, out.str(), err.str()};
}

}  // namespace

PYBIND11_MODULE(_ropesim, m) {
  m.doc() = "C++ side of the ropesim Python module (docs/PYTHON.md); use `import ropesim`.";
  py::register_exception<InvalidArgument>(m, "InvalidArgument", PyExc_ValueError);
  m.def("round_values", &round_values, py::arg("values"), py::arg("format"), py::arg("rounding"),
        "(rounded, flags): each binary64 rounded into F once (numeric::Arithmetic::convert, "
        "THEORY §1), and its IEEE flag bits (1 invalid, 2 division-by-zero, 4 overflow, "
        "8 underflow, 16 inexact). Raises ValueError for a bad format or rounding.");
  m.def("rotation_table", &rotation_table, py::arg("schedule"), py::arg("realization"),
        py::arg("format"), py::arg("positions"), py::arg("start"), py::arg("rounding"),
        py::arg("engine"), py::arg("jobs"),
        "(cos, sin, flags): attention::realised_table over positions start..start+positions-1; "
        "cos and sin of shape (positions, blocks), flags (positions,) with bits 1 overflow, "
        "2 NaN. Raises ValueError for bad input.");
  m.def("run_cli", &run_cli, py::arg("args"),
        "(exit code, stdout, stderr) of `ropesim ARGS...` run in-process (the GIL released).");
  m.attr("version") = std::string(ropesim::version());
}
