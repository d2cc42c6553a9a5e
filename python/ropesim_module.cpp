// ropesim._ropesim: the C++ side of the Python module `ropesim` (docs/PYTHON.md). Every entry
// point calls the libraries, none is a second implementation, and none runs the command line:
//   round_values        numeric::Arithmetic::convert of each binary64 into F, with its flags
//                       (flag_bits: numeric/flags.hpp's bits by name);
//   rotation_table      attention::realised_table (the evaluator the census counts);
//   census, position    attention::census / attention::query_position with the CLI's parsing
//                       and limits (attention/realisations/realisation_policy.hpp,
//                       check_census_limits);
//   horizon             proofs::horizon_spec → proofs::horizon (or proofs::bounded_horizon);
//   formats             numeric::format_table;
//   compile, Model      proofs::compile_request → proofs::compile; attention::parse_model and
//                       attention::run on its spec;
//   classify            proofs::classify_language;
//   analyse_heads       proofs::head_analysis_options → proofs::analyse_heads;
//   experiment_length   proofs::length_spec → proofs::run_length_spec;
//   balanced_words      proofs::balanced_words (the words experiment_length draws);
//   check               properties::check_request → properties::run_property (RapidCheck
//                       compiled with -fPIC from third_party/rapidcheck: Debian's is not PIC).
// A result comes back as its library's JSON (to_json) converted by type (to_python): the
// libraries write a number that JSON cannot hold as text, and under a
// numeric::NumberTextMarking (json_number.hpp) that text is marked as a number by its C++
// type, so an exact value becomes an int, a float (when binary64 holds it exactly) or a
// fractions.Fraction, a rounded decimal a float, and every other string stays a str. No key
// name decides it. Bad input raises ValueError with the CLI's one-line message
// (numeric::one_line). The GIL is released while C++ computes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attention/census/bounded_census.hpp"
#include "attention/census/census.hpp"
#include "attention/census/realised_table.hpp"
#include "attention/realisations/bounded_realisation.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/realisations/realisation_policy.hpp"
#include "attention/schedules/schedule.hpp"
#include "attention/transformer/model_spec.hpp"
#include "attention/transformer/run.hpp"
#include "attention/transformer/transformer.hpp"
#include "automata/dfa.hpp"
#include "core/budget.hpp"
#include "core/error.hpp"
#include "io/shard.hpp"
#include "numeric/arithmetic.hpp"
#include "numeric/exact.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/flags.hpp"
#include "numeric/format.hpp"
#include "numeric/format_table.hpp"
#include "numeric/json_number.hpp"
#include "numeric/libm.hpp"
#include "numeric/parallel.hpp"
#include "numeric/rounding.hpp"
#include "numeric/spec_lists.hpp"
#include "numeric/value.hpp"
#include "numeric/version.hpp"
#include "proofs/compiler/compile_request.hpp"
#include "proofs/compiler/compiler.hpp"
#include "proofs/compiler/compiler_report.hpp"
#include "proofs/experiments/length_experiment.hpp"
#include "proofs/experiments/length_study.hpp"
#include "proofs/languages/language_class.hpp"
#include "proofs/range/bounded_horizon.hpp"
#include "proofs/range/fixed_offset_head.hpp"
#include "proofs/range/horizon.hpp"
#include "proofs/range/horizon_spec.hpp"
#include "proofs/reports/head_analysis.hpp"
#include "properties/check.hpp"
#include "properties/check_study.hpp"

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
                         const std::string& engine_name, unsigned jobs, bool allow_slow) {
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
  Budget budget;
  budget.unlimited = allow_slow;  // as `table rotations --allow-slow`
  check_budget("positions", attention::realised_table_work(schedule, positions, true), budget);
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

/// The exact value a marked text spells (numeric::number_text): "P/Q", an integer, an exact
/// decimal ("17.34375", "1.490116119384765625e-8"), or a power of two "2^k" / "-2^k".
mpq_class exact_value(const std::string& text) {
  const bool negative = !text.empty() && text.front() == '-';
  const std::string_view magnitude = std::string_view(text).substr(negative ? 1 : 0);
  if (magnitude.rfind("2^", 0) == 0) {
    const auto k = static_cast<long>(ropesim::parse_integer(
        magnitude.substr(magnitude[2] == '-' ? 3 : 2), "power of two", 0, 1000000));
    mpq_class q(1);
    if (magnitude[2] == '-') {
      mpz_mul_2exp(q.get_den_mpz_t(), q.get_den_mpz_t(), static_cast<unsigned long>(k));
    } else {
      mpz_mul_2exp(q.get_num_mpz_t(), q.get_num_mpz_t(), static_cast<unsigned long>(k));
    }
    return negative ? mpq_class(-q) : q;
  }
  return numeric::parse_rational_exact(text, "exact value");
}

/// A Python int of the integer `z`, read from hexadecimal digits (Python limits the decimal
/// digits an int may be read from to 4300; 2^16434, formats("p=53,e=15")'s n_max, has 4948).
py::object python_int(const mpz_class& z) {
  PyObject* value = PyLong_FromString(z.get_str(16).c_str(), nullptr, 16);
  if (value == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(value);
}

/// The exact value `q` in Python: an int when it is an integer, a float when binary64 holds it
/// exactly, else fractions.Fraction(numerator, denominator).
py::object python_exact(const mpq_class& q) {
  if (q.get_den() == 1) return python_int(q.get_num());
  if (const auto d = numeric::binary64_json(q)) return py::float_(d->get<double>());
  const py::object fraction = py::module_::import("fractions").attr("Fraction");
  return fraction(python_int(q.get_num()), python_int(q.get_den()));
}

/// A JSON value the libraries built as Python objects, each by its C++ type: object → dict,
/// array → list, integer → int, other number → float, boolean → bool, null → None; a number
/// the JSON writes as text (numeric::number_text under a NumberTextMarking) → python_exact of
/// its exact value, or a float for a rounded decimal; every other string → str (a word "0101"
/// or an alphabet "01" is text in C++, so it stays text here).
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
    case nlohmann::json::value_t::binary: {
      const auto marked = numeric::marked_number_text(j);
      if (!marked) throw std::logic_error("to_python: binary JSON that is not a marked number");
      if (marked->second == numeric::NumberText::rounded_decimal)
        return py::float_(std::strtod(marked->first.c_str(), nullptr));
      return python_exact(exact_value(marked->first));
    }
    default:
      return py::none();
  }
}

/// Runs `build` (library calls that end in a JSON value) with the GIL released and number
/// texts marked (numeric::NumberTextMarking, on this thread); an InvalidArgument comes out with
/// the CLI's one-line message (numeric::one_line). Returns the JSON, to be converted with the
/// GIL held (to_python).
template <class F>
auto library_call(F&& build) {
  py::gil_scoped_release release;
  const numeric::NumberTextMarking marking;
  try {
    return build();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(numeric::one_line(e.what()));
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
  return to_python(library_call([&]() -> nlohmann::json {
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
      return attention::to_json(with_context("--positions", [&] {
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
      return attention::to_json(attention::census(policy.schedule, realisation, options),
                                witnesses);
    }
  }));
}

/// The formats table (numeric::format_table, THEORY §1) as `ropesim formats --json` prints it:
/// a list of dicts, exact values by type.
py::object formats(const std::optional<std::string>& list, const std::string& rounding) {
  return to_python(
      library_call([&] { return numeric::to_json(numeric::format_table(list, rounding)); }));
}

/// The realised rotation at one position (attention::query_position; NUMERIC §4) as `ropesim
/// rotations --position I --json` prints it. `position`: an integer or a tuple "(t,h,w)" as
/// attention::parse_position_tuple reads it.
py::object position(const attention::RealisationArguments& realised, const std::string& position) {
  return to_python(library_call([&] {
    const auto policy = attention::parse_realisation_policy(realised);
    if (attention::is_bounded_realisation_spec(realised.realisation))
      attention::refuse_bounded_census_option("--position");
    const auto realisation = attention::parse_applicable_realisation(realised, policy);
    const attention::PositionTuple tuple =
        with_context("--position", [&] { return attention::parse_position_tuple(position); });
    const auto report = with_context("--position", [&] {
      return tuple.size() == 1
                 ? attention::query_position(policy.schedule, realisation, tuple.front())
                 : attention::query_position(policy.schedule, realisation, tuple);
    });
    return attention::to_json(report, policy.binding);
  }));
}

/// The certified range of the Y^k head (proofs::horizon, THEORY §6; proofs::bounded_horizon for
/// a bounded-error cos_sin step) as `ropesim horizon --json --quiet` prints it. `g`, `schedule`:
/// the head's frequency or schedule (given or not, as the CLI's --g and --schedule).
py::object horizon(proofs::HorizonArguments arguments, bool g_given,
                   const std::optional<std::string>& schedule, unsigned jobs) {
  return to_python(library_call([&]() -> nlohmann::json {
    // the ranges of the CLI's --max-length and --jobs (integer_in, add_jobs_option)
    if (arguments.max_length)
      (void)ropesim::parse_integer(std::to_string(*arguments.max_length), "--max-length", 1,
                                   proofs::kMaxScanLength);
    (void)ropesim::parse_integer(std::to_string(jobs), "--jobs", 0, 256);
    proofs::check_head_source(g_given, schedule);
    if (schedule) arguments.schedule = *schedule;
    if (attention::is_bounded_realisation_spec(arguments.realisation))
      return proofs::to_json(proofs::bounded_horizon(arguments));
    arguments.threads = numeric::resolve_threads(jobs);
    auto spec = proofs::horizon_spec(arguments);
    spec.threads = arguments.threads;
    return proofs::to_json(proofs::horizon(spec));
  }));
}

/// A compiled model (proofs::compile, THEORY §7): (report, spec text). The report is
/// proofs::to_json(CompiledModel) with "out" null (`ropesim compile --json` without -o), exact
/// values by type; the spec text is what `ropesim compile -o FILE` writes but for the
/// provenance's command (attention::model_to_json with "_construction": the report as the CLI
/// writes it, exact values as text; "_provenance"; dump(2) and a newline).
py::tuple compile(const proofs::CompileArguments& arguments) {
  nlohmann::json report;
  std::string spec_text;
  {
    py::gil_scoped_release release;
    const numeric::NumberTextMarking marking;  // the components' constants too (component.hpp)
    try {
      const proofs::CompileRequest request = proofs::compile_request(arguments);
      const proofs::CompiledModel compiled =
          proofs::compile(request.formula, request.alphabet, request.options);
      report = proofs::to_json(compiled);
      nlohmann::json spec = attention::model_to_json(compiled.model);
      spec["_construction"] = numeric::unmarked(report);
      // as cli::provenance() records it, the command being this call
      spec["_provenance"] = {
          {"tool", "ropesim"},
          {"version", std::string(ropesim::version())},
          {"commit", std::string(ropesim::source_commit())},
          {"command", "ropesim.compile (Python)"},
          {"libm", {{"glibc", numeric::glibc_version()}, {"sleef", numeric::sleef_version()}}}};
      spec_text = spec.dump(2) + "\n";
      report["out"] = nullptr;
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(numeric::one_line(e.what()));
    }
  }
  return py::make_tuple(to_python(report), spec_text);
}

/// A model spec (docs/MODEL_SPEC.md) read from its text, as `ropesim run FILE [--format F]
/// [--rounding R]` reads it: `format`, `rounding` (None: the spec's) replace the spec's, the
/// weights re-rounded from the exact spec numbers. Raises ValueError for a bad spec, format or
/// rounding (the CLI's messages).
attention::Model parse_model(const std::string& spec_text, const std::optional<std::string>& format,
                             const std::optional<std::string>& rounding) {
  return library_call([&] {
    attention::ModelLoadOptions load;
    if (format)
      load.format = with_context("--format", [&] { return numeric::parse_format(*format); });
    if (rounding)
      load.rounding =
          with_context("--rounding", [&] { return numeric::parse_rounding(*rounding); });
    return attention::parse_model(spec_text, load);
  });
}

/// `model` run on `word` (attention::run) as `ropesim run MODEL --input WORD [--trace] --json`
/// prints it: the trace, when asked, at EOS; plus `certified_length` (the spec's, None when it
/// certifies every length) and `within_certified_length` (false past it: the output is then not
/// certified, the case `ropesim run` warns about on stderr; ropesim.Model.run warns in Python).
/// Raises ValueError for a symbol outside the alphabet ("--input: ...") or a run beyond the
/// time budget unless `allow_slow`. `trace_all`: every position traced, as `--positions all`.
py::object run_model(const attention::Model& model, const std::string& word, bool trace,
                     bool trace_all, bool allow_slow) {
  return to_python(library_call([&] {
    const auto symbols = with_context("--input", [&] { return attention::tokenize(model, word); });
    Budget budget;
    budget.unlimited = allow_slow;
    check_budget("--input", attention::run_work(model, symbols.size()), budget);
    attention::RunOptions options;
    if (trace_all) {
      options.trace_all = true;  // as `--positions all`
    } else if (trace) {
      options.trace_positions = {symbols.size() + 1};
    }
    nlohmann::json j = attention::to_json(model, attention::run(model, word, options), word);
    j["certified_length"] =
        model.certified_length ? nlohmann::json(*model.certified_length) : nlohmann::json(nullptr);
    j["within_certified_length"] =
        !model.certified_length || symbols.size() <= *model.certified_length;
    return j;
  }));
}

/// The class of a language (proofs::classify_language, THEORY §5) as `ropesim classify
/// --json` prints it.
py::object classify(const proofs::ClassifyArguments& arguments) {
  return to_python(
      library_call([&] { return proofs::to_json(proofs::classify_language(arguments)); }));
}

/// Inside a model, head by head (proofs::head_analysis_options → proofs::analyse_heads; THEORY
/// §6) as `ropesim analyse heads MODEL --json` prints it.
py::object analyse_heads(const proofs::HeadAnalysisArguments& arguments) {
  return to_python(library_call([&] {
    return proofs::to_json(proofs::analyse_heads(proofs::head_analysis_options(arguments)));
  }));
}

/// Shard I/N of a list of `total` items (io::Shard: [floor((I-1)·T/N), floor(I·T/N))), with
/// the CLI's --shard rules (1 <= I <= N <= 10^6).
io::Shard shard_of(std::uint64_t index, std::uint64_t count) {
  return io::parse_shard(std::to_string(index) + "/" + std::to_string(count));
}

/// `spec` with only shard I/N of its lengths (contiguous, ascending), that shard's budget
/// checked (proofs::check_length_budget, lifted by `allow_slow`): a length's words are drawn
/// from seeds that depend on the seed and the length alone (proofs::length_experiment), so a
/// shard's rows are the rows the whole run has for its lengths.
proofs::LengthExperimentSpec length_shard(proofs::LengthExperimentSpec spec, const io::Shard& shard,
                                          bool allow_slow) {
  const std::uint64_t total = spec.lengths.size();
  spec.lengths = std::vector<std::uint64_t>(
      spec.lengths.begin() + static_cast<std::ptrdiff_t>(shard.first_row(total)),
      spec.lengths.begin() + static_cast<std::ptrdiff_t>(shard.end_row(total)));
  if (!spec.lengths.empty()) proofs::check_length_budget(spec, allow_slow);
  return spec;
}

/// `arguments` read into the spec (proofs::length_spec) with the budget left for the shards.
proofs::LengthExperimentSpec length_spec_for_shards(const proofs::LengthArguments& arguments) {
  proofs::LengthArguments whole = arguments;
  whole.allow_slow = true;  // the budget is each shard's, checked by length_shard
  return proofs::length_spec(whole);
}

/// Accuracy against length (proofs::length_spec → proofs::run_length_spec) as `ropesim
/// experiment length --json` prints it; with a shard I/N only the shard's lengths (None when
/// it has none: a shard past the lengths).
py::object experiment_length(const proofs::LengthArguments& arguments, std::uint64_t shard_index,
                             std::uint64_t shard_count) {
  std::optional<nlohmann::json> result = library_call([&]() -> std::optional<nlohmann::json> {
    const io::Shard shard = shard_of(shard_index, shard_count);
    const proofs::LengthExperimentSpec spec =
        shard.count == 1
            ? proofs::length_spec(arguments)
            : length_shard(length_spec_for_shards(arguments), shard, arguments.allow_slow);
    if (spec.lengths.empty()) return std::nullopt;
    return proofs::length_json(arguments, spec, proofs::run_length_spec(spec));
  });
  return result ? to_python(*result) : py::none();
}

/// The number of lengths of `arguments` (validated as experiment_length validates them), with
/// the budget of each of the `shards` shards checked: what ropesim.dask checks before it
/// submits a task.
std::uint64_t experiment_length_plan(const proofs::LengthArguments& arguments,
                                     std::uint64_t shards) {
  return library_call([&] {
    const proofs::LengthExperimentSpec spec = length_spec_for_shards(arguments);
    const std::uint64_t total = spec.lengths.size();
    (void)shard_of(1, shards);                     // 1 <= N <= 10^6, refused as --shard is
    for (std::uint64_t i = 1; i <= shards; ++i) {  // the budget of every shard with lengths
      const io::Shard shard{i, shards};
      if (shard.rows_of(total) > 0) (void)length_shard(spec, shard, arguments.allow_slow);
    }
    return total;
  });
}

/// The balanced words per length (proofs::balanced_words): one dict per length with the
/// members and non-members as lists of str and the empty/exhaustive flags.
py::list balanced_words(const std::string& formula, const std::string& regex,
                        const std::string& alphabet, const std::vector<std::uint64_t>& lengths,
                        std::size_t words, std::uint64_t seed) {
  const std::vector<proofs::BalancedWords> rows = library_call([&] {
    proofs::BalancedWordsSpec spec;
    spec.formula = formula;
    spec.regex = regex;
    spec.alphabet = automata::alphabet_from_letters(alphabet);
    spec.lengths = lengths;
    spec.words = words;
    spec.seed = seed;
    return proofs::balanced_words(spec);
  });
  py::list out;
  for (const auto& row : rows) {
    py::dict d;
    d["length"] = row.length;
    d["members"] = row.members;
    d["nonmembers"] = row.nonmembers;
    d["members_empty"] = row.members_empty;
    d["nonmembers_empty"] = row.nonmembers_empty;
    d["members_exhaustive"] = row.members_exhaustive;
    d["nonmembers_exhaustive"] = row.nonmembers_exhaustive;
    out.append(d);
  }
  return out;
}

/// RapidCheck keeps process-wide state (ImplicitParam's scope stack is a plain static): one
/// check runs at a time.
std::mutex check_mutex;

/// The theorems as RapidCheck properties (properties::check_request → run_property), as
/// `ropesim check --json --quiet` prints it: every property named, run in order, one check at
/// a time in the process (check_mutex); with a shard I/N only the shard's properties
/// (io::Shard over the properties the request names). A property's outcome depends on the
/// options alone (run_property seeds RapidCheck with the seed for each property), not on the
/// properties run before it.
py::object check(const properties::CheckArguments& arguments, std::uint64_t shard_index,
                 std::uint64_t shard_count) {
  return to_python(library_call([&] {
    const io::Shard shard = shard_of(shard_index, shard_count);
    const std::lock_guard<std::mutex> lock(check_mutex);
    const properties::CheckRequest request = properties::check_request(arguments);
    std::vector<properties::PropertyOutcome> outcomes;
    const std::uint64_t total = request.names.size();
    for (std::uint64_t i = shard.first_row(total); i < shard.end_row(total); ++i) {
      outcomes.push_back(with_context(
          "--replay", [&] { return properties::run_property(request.names[i], request.options); }));
    }
    return properties::check_json(outcomes, false);
  }));
}

/// The properties `arguments` names, in the order they run, validated as check validates them
/// (properties::check_request): what ropesim.dask shards.
std::vector<std::string> check_plan(const properties::CheckArguments& arguments) {
  return library_call([&] { return properties::check_request(arguments).names; });
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

/// `text` (an InvalidArgument's message, the CLI's words) for a Python user: the flags that
/// have a keyword argument in Python are named as that keyword ("pass --allow-slow" → "pass
/// allow_slow=True": census, horizon, compile, classify, analyse_heads, experiment_length,
/// sweep, table_horizon, rotation_table and Model.run all take it). The CLI's text is left as
/// it is (this runs only where the error crosses into Python).
std::string python_message(std::string text) {
  static const std::pair<std::string_view, std::string_view> flags[] = {
      {"pass --allow-slow", "pass allow_slow=True"},
  };
  for (const auto& [cli, python] : flags) {
    for (auto at = text.find(cli); at != std::string::npos; at = text.find(cli, at)) {
      text.replace(at, cli.size(), python);
      at += python.size();
    }
  }
  return text;
}

}  // namespace

void bind_sweep(py::module_& m);   // python/bind_sweep.cpp: sweep, shards, tables as files
void bind_tables(py::module_& m);  // python/bind_tables.cpp: table horizon

PYBIND11_MODULE(_ropesim, m) {
  m.doc() = "C++ side of the ropesim Python module (docs/PYTHON.md); use `import ropesim`.";
  // InvalidArgument → ValueError (ropesim._ropesim.InvalidArgument) with the message in a
  // Python user's words (python_message: `allow_slow=True` for `--allow-slow`).
  static py::exception<InvalidArgument> invalid_argument(m, "InvalidArgument", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      invalid_argument(python_message(e.what()).c_str());
    }
  });
  static const std::string round_values_doc =
      "(rounded, flags): each binary64 rounded into F once (numeric::Arithmetic::convert, "
      "THEORY §1), and its IEEE flag bits (" +
      flag_bits_text() + "; numeric/flags.hpp). Raises ValueError for a bad format or rounding.";
  m.def("round_values", &round_values, py::arg("values"), py::arg("format"), py::arg("rounding"),
        round_values_doc.c_str());
  m.attr("flag_bits") = flag_bits();
  m.def("rotation_table", &rotation_table, py::arg("schedule"), py::arg("realization"),
        py::arg("format"), py::arg("positions"), py::arg("start"), py::arg("rounding"),
        py::arg("engine"), py::arg("jobs"), py::arg("allow_slow") = false,
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
  m.def("formats", &formats, py::arg("formats"), py::arg("rounding"),
        "The formats table (numeric::format_table, THEORY §1): a list of dicts with the keys of "
        "`ropesim formats --json`, exact values by type. Raises ValueError for a bad list or "
        "rounding.");
  m.def("position", &position, py::arg("realised"), py::arg("position"),
        "The realised rotation at one position (attention::query_position): the dict of "
        "`ropesim rotations --position I --json`, exact values by type. Raises ValueError.");
  py::class_<proofs::HorizonArguments>(m, "HorizonArguments")
      .def(py::init<>())
      .def_readwrite("g", &proofs::HorizonArguments::g)
      .def_readwrite("k", &proofs::HorizonArguments::k)
      .def_readwrite("C", &proofs::HorizonArguments::C)
      .def_readwrite("format", &proofs::HorizonArguments::format)
      .def_readwrite("realization", &proofs::HorizonArguments::realisation)
      .def_readwrite("rounding", &proofs::HorizonArguments::rounding)
      .def_readwrite("algorithm", &proofs::HorizonArguments::algorithm)
      .def_readwrite("max_length", &proofs::HorizonArguments::max_length)
      .def_readwrite("allow_slow", &proofs::HorizonArguments::allow_slow);
  m.def("horizon", &horizon, py::arg("arguments"), py::arg("g_given"), py::arg("schedule"),
        py::arg("jobs"),
        "The certified range of the Y^k head (proofs::horizon, THEORY §6): the dict of "
        "`ropesim horizon --json`, exact values by type. Raises ValueError for bad input.");
  py::class_<proofs::CompileArguments>(m, "CompileArguments")
      .def(py::init<>())
      .def_readwrite("formula", &proofs::CompileArguments::formula)
      .def_readwrite("alphabet", &proofs::CompileArguments::alphabet)
      .def_readwrite("format", &proofs::CompileArguments::format)
      .def_readwrite("rounding", &proofs::CompileArguments::rounding)
      .def_readwrite("schedule", &proofs::CompileArguments::schedule)
      .def_readwrite("layer_norm", &proofs::CompileArguments::layer_norm)
      .def_readwrite("allow_slow", &proofs::CompileArguments::allow_slow);
  m.def("compile", &compile, py::arg("arguments"),
        "(report, spec text): the formula compiled into an F-transformer (proofs::compile, "
        "THEORY §7). Raises ValueError with the CLI's message when it does not parse or F "
        "cannot realise a construction.");
  py::class_<attention::Model>(m, "LoadedModel",
                               "A model spec read into attention::Model (parse_model).");
  m.def("parse_model", &parse_model, py::arg("spec_text"), py::arg("format") = py::none(),
        py::arg("rounding") = py::none(),
        "A model spec's text read as `ropesim run FILE` reads it. Raises ValueError.");
  m.def(
      "split_schedules",
      [](const std::string& text, const std::string& flag) {
        return numeric::split_unique(text, flag, numeric::ListKind::schedules);
      },
      py::arg("text"), py::arg("flag"),
      "A list of schedules split as the CLI splits `--schedules` (numeric::split_unique): on "
      "';' and on the commas that start a new spec (one with ':' or a name), so that "
      "`conventional:base=10000,dim=8` stays whole. Raises ValueError for an empty or "
      "repeated item.");
  m.def("run_model", &run_model, py::arg("model"), py::arg("word"), py::arg("trace"),
        py::arg("trace_all") = false, py::arg("allow_slow") = false,
        "The dict of `ropesim run MODEL --input WORD [--trace] --json` (attention::run), with "
        "certified_length and within_certified_length. Raises ValueError for a symbol outside "
        "the alphabet or a run beyond the time budget unless allow_slow.");
  py::class_<proofs::ClassifyArguments>(m, "ClassifyArguments")
      .def(py::init<>())
      .def_readwrite("alphabet", &proofs::ClassifyArguments::alphabet)
      .def_readwrite("regex", &proofs::ClassifyArguments::regex)
      .def_readwrite("formula", &proofs::ClassifyArguments::formula)
      .def_readwrite("dfa", &proofs::ClassifyArguments::dfa_file)
      .def_readwrite("model", &proofs::ClassifyArguments::model_file)
      .def_readwrite("allow_slow", &proofs::ClassifyArguments::allow_slow);
  m.def("classify", &classify, py::arg("arguments"),
        "The class of a language (proofs::classify_language, THEORY §5): the dict of `ropesim "
        "classify --json`. Raises ValueError with the CLI's one-line message for bad input.");
  py::class_<proofs::HeadAnalysisArguments>(m, "HeadAnalysisArguments")
      .def(py::init<>())
      .def_readwrite("model", &proofs::HeadAnalysisArguments::model_file)
      .def_readwrite("format", &proofs::HeadAnalysisArguments::format)
      .def_readwrite("reference_format", &proofs::HeadAnalysisArguments::reference_format)
      .def_readwrite("words", &proofs::HeadAnalysisArguments::words)
      .def_readwrite("lengths", &proofs::HeadAnalysisArguments::lengths)
      .def_readwrite("per_length", &proofs::HeadAnalysisArguments::per_length)
      .def_readwrite("seed", &proofs::HeadAnalysisArguments::seed)
      .def_readwrite("positional_share", &proofs::HeadAnalysisArguments::positional_share)
      .def_readwrite("max_length", &proofs::HeadAnalysisArguments::max_length)
      .def_readwrite("allow_slow", &proofs::HeadAnalysisArguments::allow_slow);
  m.def("analyse_heads", &analyse_heads, py::arg("arguments"),
        "Inside a model, head by head (proofs::analyse_heads, THEORY §6): the dict of `ropesim "
        "analyse heads MODEL --json`. Raises ValueError with the CLI's one-line message.");
  py::class_<proofs::LengthArguments>(m, "LengthArguments")
      .def(py::init<>())
      .def_readwrite("formula", &proofs::LengthArguments::formula)
      .def_readwrite("alphabet", &proofs::LengthArguments::alphabet)
      .def_readwrite("lengths", &proofs::LengthArguments::lengths)
      .def_readwrite("rounding", &proofs::LengthArguments::rounding)
      .def_readwrite("schedules", &proofs::LengthArguments::schedules)
      .def_readwrite("formats", &proofs::LengthArguments::formats)
      .def_readwrite("words", &proofs::LengthArguments::words)
      .def_readwrite("seed", &proofs::LengthArguments::seed)
      .def_readwrite("adversarial", &proofs::LengthArguments::adversarial)
      .def_readwrite("allow_slow", &proofs::LengthArguments::allow_slow);
  m.def("experiment_length_plan", &experiment_length_plan, py::arg("arguments"), py::arg("shards"),
        "The number of lengths of the experiment, validated as experiment_length validates "
        "it, with the budget of each of `shards` shards of the lengths checked. Raises "
        "ValueError with the CLI's one-line message.");
  m.def("experiment_length", &experiment_length, py::arg("arguments"), py::arg("shard_index") = 1,
        py::arg("shard_count") = 1,
        "Accuracy against length (proofs::length_experiment): the dict of `ropesim experiment "
        "length --json`; with shard I/N only the rows of the shard's lengths (io::Shard over "
        "the lengths, each shard's budget its own), None for a shard without lengths. Raises "
        "ValueError with the CLI's one-line message for bad input.");
  m.def("balanced_words", &balanced_words, py::arg("formula"), py::arg("regex"),
        py::arg("alphabet"), py::arg("lengths"), py::arg("words"), py::arg("seed"),
        "The balanced words per length that experiment_length draws (proofs::balanced_words): "
        "give the language as a formula or a regex (the other empty). Raises ValueError with a "
        "one-line message for bad input.");
  py::class_<properties::CheckArguments>(m, "CheckArguments")
      .def(py::init<>())
      .def_readwrite("property", &properties::CheckArguments::property)
      .def_readwrite("trials", &properties::CheckArguments::trials)
      .def_readwrite("seed", &properties::CheckArguments::seed)
      .def_readwrite("max_length", &properties::CheckArguments::max_length)
      .def_readwrite("format", &properties::CheckArguments::format);
  m.def("check_plan", &check_plan, py::arg("arguments"),
        "The names of the properties the check runs, in order, the arguments validated as "
        "check validates them (properties::check_request).");
  m.def("check", &check, py::arg("arguments"), py::arg("shard_index") = 1,
        py::arg("shard_count") = 1,
        "The theorems as RapidCheck properties (properties/check.hpp, THEORY §5): the dict of "
        "`ropesim check --json`; with shard I/N only the shard's properties (io::Shard over "
        "check_plan's names). A failing property is in the dict, not raised. Raises "
        "ValueError with the CLI's one-line message for bad input.");
  bind_sweep(m);
  bind_tables(m);
  m.attr("version") = std::string(ropesim::version());
}
