// ropesim._ropesim: the C++ side of the Python module `ropesim` (docs/PYTHON.md). Four kinds of
// entry point, none a second implementation:
//   round_values        numeric::Arithmetic::convert of each binary64 into F, with its flags
//                       (flag_bits: numeric/flags.hpp's bits by name);
//   rotation_table      attention::realised_table (the evaluator the census counts);
//   census              attention::census with the CLI's parsing and limits
//                       (attention/realisation_policy.hpp, check_census_limits), as to_json;
//   run_cli             the `ropesim` command line (cli::run_command_line) run in-process with
//                       std::cout and std::cerr captured, so a function returns what the CLI's
//                       --json prints and raises the CLI's one-line message.
// The GIL is released while C++ computes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "attention/bounded_census.hpp"
#include "attention/bounded_realisation.hpp"
#include "attention/census.hpp"
#include "attention/realisation.hpp"
#include "attention/realisation_policy.hpp"
#include "attention/realised_table.hpp"
#include "attention/schedule.hpp"
#include "cli/commands.hpp"
#include "numeric/arithmetic.hpp"
#include "numeric/budget.hpp"
#include "numeric/error.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/flags.hpp"
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

/// A JSON value as Python objects, each by its JSON type: object → dict, array → list, integer
/// → int, other number → float, string → str, boolean → bool, null → None.
py::object to_python(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      py::dict d;
      for (const auto& [key, value] : j.items()) d[py::str(key)] = to_python(value);
      return d;
    }
    case nlohmann::json::value_t::array: {
      py::list l;
      for (const auto& value : j) l.append(to_python(value));
      return l;
    }
    case nlohmann::json::value_t::number_integer:
      return py::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(j.get<double>());
    case nlohmann::json::value_t::string:
      return py::str(j.get<std::string>());
    case nlohmann::json::value_t::boolean:
      return py::bool_(j.get<bool>());
    default:
      return py::none();
  }
}

/// The rotation census (attention::census, THEORY §3) as attention::to_json(result,
/// witnesses): the dict `ropesim rotations --json` prints, from the same library calls and
/// checks (attention::parse_realisation_policy, check_census_limits, census_work against the
/// budget unless allow_slow). A bounded-error cos_sin step is attention::bounded_census.
py::object census(const attention::RealisationArguments& realised, std::uint64_t positions,
                  std::uint64_t start, std::optional<std::uint64_t> max_period, bool witnesses,
                  std::optional<std::string> axis, std::optional<std::string> at, unsigned jobs,
                  bool allow_slow) {
  nlohmann::json j;
  {
    py::gil_scoped_release release;
    const auto policy = attention::parse_realisation_policy(realised);
    if (attention::is_bounded_realisation_spec(realised.realisation)) {
      if (axis) attention::refuse_bounded_census_option("--axis");
      if (at) attention::refuse_bounded_census_option("--at");
      if (max_period) attention::refuse_bounded_census_option("--max-period");
      if (witnesses) attention::refuse_bounded_census_option("--witnesses");
      const auto r = with_context("--realization", [&] {
        auto b = attention::parse_bounded_realisation(realised.realisation, policy.binding);
        attention::check_bounded_applicable(policy.schedule, b);
        return b;
      });
      j = attention::to_json(with_context("--positions", [&] {
        return attention::bounded_census(policy.schedule, r, start, positions);
      }));
    } else {
      const auto realisation = attention::parse_applicable_realisation(realised, policy);
      attention::check_census_limits(positions, start, max_period);
      attention::CensusOptions options;
      options.positions = positions;
      options.start = start;
      options.max_period = max_period;
      if (axis)
        options.axis = with_context("--axis", [&] { return policy.schedule.axis_index(*axis); });
      if (at)
        options.at = with_context("--at", [&] { return attention::parse_position_tuple(*at); });
      options.threads = numeric::resolve_threads(jobs);
      Budget budget;
      budget.unlimited = allow_slow;
      check_budget("--positions", attention::census_work(policy.schedule, options), budget);
      j = attention::to_json(attention::census(policy.schedule, realisation, options), witnesses);
    }
  }
  return to_python(j);
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

/// The IEEE flag bits of numeric::Flag (numeric/flags.hpp), by name, in IEEE 754-2019 §7
/// order: the one source of the bits the docstrings and ropesim.round_flags name.
std::vector<std::pair<std::string, unsigned>> flag_bits() {
  using numeric::Flag;
  return {{"invalid", static_cast<unsigned>(Flag::invalid)},
          {"division_by_zero", static_cast<unsigned>(Flag::division_by_zero)},
          {"overflow", static_cast<unsigned>(Flag::overflow)},
          {"underflow", static_cast<unsigned>(Flag::underflow)},
          {"inexact", static_cast<unsigned>(Flag::inexact)}};
}

/// "1 overflow, 2 invalid, 4 division-by-zero, 8 underflow, 16 inexact": the bits in
/// increasing order, as numeric/flags.hpp defines them.
std::string flag_bits_text() {
  auto bits = flag_bits();
  std::sort(bits.begin(), bits.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  std::string text;
  for (const auto& [name, bit] : bits) {
    std::string spelled = name;
    std::replace(spelled.begin(), spelled.end(), '_', '-');
    text += (text.empty() ? "" : ", ") + std::to_string(bit) + " " + spelled;
  }
  return text;
}

}  // namespace

void bind_sweep(py::module_& m);  // python/bind_sweep.cpp: sweep, shards, tables as files

PYBIND11_MODULE(_ropesim, m) {
  m.doc() = "C++ side of the ropesim Python module (docs/PYTHON.md); use `import ropesim`.";
  py::register_exception<InvalidArgument>(m, "InvalidArgument", PyExc_ValueError);
  static const std::string round_values_doc =
      "(rounded, flags): each binary64 rounded into F once (numeric::Arithmetic::convert, "
      "THEORY §1), and its IEEE flag bits (" +
      flag_bits_text() + "; numeric/flags.hpp). Raises ValueError for a bad format or rounding.";
  m.def("round_values", &round_values, py::arg("values"), py::arg("format"), py::arg("rounding"),
        round_values_doc.c_str());
  m.attr("flag_bits") = flag_bits();
  m.def("rotation_table", &rotation_table, py::arg("schedule"), py::arg("realization"),
        py::arg("format"), py::arg("positions"), py::arg("start"), py::arg("rounding"),
        py::arg("engine"), py::arg("jobs"),
        "(cos, sin, flags): attention::realised_table over positions start..start+positions-1; "
        "cos and sin of shape (positions, blocks), flags (positions,) with bits 1 overflow, "
        "2 NaN. Raises ValueError for bad input.");
  py::class_<attention::RealisationArguments>(m, "RealisationArguments")
      .def(py::init([](std::string schedule, std::string realisation, std::string format,
                       std::string rounding, std::string engine) {
             return attention::RealisationArguments{std::move(schedule), std::move(realisation),
                                                    std::move(format), std::move(rounding),
                                                    std::move(engine)};
           }),
           py::arg("schedule"), py::arg("realization"), py::arg("format"), py::arg("rounding"),
           py::arg("engine"))
      .def_readonly("schedule", &attention::RealisationArguments::schedule)
      .def_readonly("realization", &attention::RealisationArguments::realisation)
      .def_readonly("format", &attention::RealisationArguments::format);
  m.def("census", &census, py::arg("realised"), py::arg("positions"), py::arg("start"),
        py::arg("max_period"), py::arg("witnesses"), py::arg("axis"), py::arg("at"),
        py::arg("jobs"), py::arg("allow_slow"),
        "The rotation census (attention::census, THEORY §3) as the dict of `ropesim rotations "
        "--json` (attention::to_json); values by their JSON type. Raises ValueError with the "
        "CLI's one-line message for bad input (attention::check_census_limits: N in "
        "2..2^31, P_max in 1..N-1).");
  m.def("run_cli", &run_cli, py::arg("args"),
        "(exit code, stdout, stderr) of `ropesim ARGS...` run in-process (the GIL released).");
  bind_sweep(m);
  m.attr("version") = std::string(ropesim::version());
}
