// `ropesim table bounds`: bounds from the RoPE literature, exactly and at finite precision
// (docs/BOUNDS.md). The science lives in proofs/bounds.hpp; this file parses the arguments,
// runs the searches and lays out the rows.
//   --kind base-context   Men et al. 2024 (arXiv 2405.14591), Table 1
//   --kind critical-dim   Liu et al. 2023 (arXiv 2310.05209), critical dimension d_extra
//   --kind semantic-drift Barbero et al. 2024 (arXiv 2410.06205), low-frequency channels
//   --kind positional-head      Barbero et al. 2024 (i): previous-token head on θ_1 = 1
//   --kind nope-previous-token  Barbero et al. 2024 (i): what a NoPE head sees of the prefix order
//   --kind no-decay             Barbero et al. 2024 (iii): a q, k whose score does not decay
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>

#include "attention/census.hpp"
#include "attention/hf_config.hpp"
#include "attention/realisation.hpp"
#include "attention/schedule.hpp"
#include "cli/commands.hpp"
#include "cli/jobs.hpp"
#include "cli/table.hpp"
#include "numeric/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/format.hpp"
#include "numeric/json_number.hpp"
#include "numeric/parallel.hpp"
#include "proofs/bounds.hpp"
#include "proofs/no_decay.hpp"
#include "proofs/positional_head.hpp"
#include "proofs/records.hpp"

namespace ropesim::cli {

namespace {

constexpr std::uint64_t kMaxContextLength = std::uint64_t{1} << 24;

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

/// A grid base as the paper prints it: 4300 → "4.3e3", 10 → "1.0e1".
std::string base_text(const mpz_class& b) {
  const std::string digits = b.get_str();
  return fmt::format("{}.{}e{}", digits[0], digits[1], digits.size() - 1);
}

/// "4.2e3 @ m=3989" (the grid base below the answer and a witness), "NaN" marked.
nlohmann::json rejection_cell(const proofs::BaseBound& row) {
  if (!row.rejected_base || !row.rejected_witness) return nullptr;
  return fmt::format("{} @ m={}{}", base_text(*row.rejected_base), *row.rejected_witness,
                     row.rejected_witness_is_nan ? " (NaN)" : "");
}

/// The result of one base-context search (a column group).
nlohmann::json bound_cell(const proofs::BaseBound& row) {
  if (row.base) {
    if (row.undecided.empty()) return base_text(*row.base);
    return base_text(*row.base) + " (" + std::to_string(row.undecided.size()) + " undecided below)";
  }
  return "none <= 9.9e19";
}

/// The paper's base checked exactly (proofs::check_paper_base): "passes" or "fails at m=…".
nlohmann::json paper_check_cell(const proofs::PaperBase& paper) {
  const auto& c = paper.check;
  if (c.verdict == proofs::BaseVerdict::fails) return fmt::format("fails at m={}", *c.witness);
  return proofs::to_string(c.verdict);
}

Table base_context_table(const std::vector<std::uint64_t>& lengths,
                         const std::vector<std::optional<proofs::PaperBase>>& papers,
                         const std::vector<proofs::BaseBound>& exact,
                         const std::vector<std::string>& format_names,
                         const std::vector<std::vector<proofs::BaseBound>>& finite,
                         std::uint64_t finite_max_length, const std::string& realisation) {
  Table t;
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
  auto paper_bound = [](nlohmann::json& latex, const std::string& column,
                        const proofs::BaseBound& b) {
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
    auto bound_number = [&](const std::string& column, const proofs::BaseBound& b) {
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

/// One census cell: "period P", "repeat j=i", or "none < N".
nlohmann::json census_cell(const attention::CensusResult& r) {
  if (r.period) return fmt::format("period {}", *r.period);
  if (r.first_repeat)
    return fmt::format("repeat {}={}", r.first_repeat->later, r.first_repeat->earlier);
  return fmt::format("distinct < {}", r.positions);
}

/// One model of --presets: a preset of data/models.json or a Hugging Face config.json.
struct PresetRow {
  std::string name;               ///< the preset name or the `hf-config:PATH` spec as given
  attention::ModelPreset preset;  ///< its config (rope_theta, lengths, scaling)
  attention::Schedule schedule;   ///< its schedule (preset_schedule or parse_schedule)
};

/// The models of --presets ("all" = every preset): preset names and `hf-config:PATH` /
/// `hf-config[seq_len=N]:PATH` specs (docs/HF_CONFIG.md; separate a path holding ',' with ';'),
/// each read and checked.
std::vector<PresetRow> resolve_presets(const std::string& presets) {
  const std::vector<std::string> names =
      presets == "all" ? attention::model_preset_names()
                       : split_unique(presets, "--presets", ListKind::schedules);
  std::vector<PresetRow> rows;
  for (const auto& n : names) {
    PresetRow row;
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

/// "m" or "> N".
nlohmann::json drift_cell(const proofs::DriftResult& r) {
  if (r.length && r.nan) return fmt::format("{} (NaN)", *r.length);
  if (r.length) return *r.length;
  return fmt::format("> {}", r.max_length);
}

/// --kind semantic-drift: per preset, the preset's schedule and p-RoPE at each p
/// (proofs::semantic_drift_rows).
Table semantic_drift_table(const std::vector<PresetRow>& models, const std::string& p_text,
                           const std::string& realisation_text,
                           const std::vector<numeric::Format>& formats, const mpq_class& tolerance,
                           std::uint64_t max_length, bool progress) {
  if (tolerance <= 0 || tolerance >= 1) {
    throw InvalidArgument("--tolerance: must lie strictly between 0 and 1 (got " +
                          tolerance.get_str() + ")");
  }
  const auto ps = with_context(
      "--p", [&] { return proofs::parse_prope_fractions(split_unique(p_text, "--p")); });
  Table t;
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
    const auto rows = proofs::semantic_drift_rows(
        model.schedule, model.preset.config.rope_theta, ps, realisations, tolerance, max_length,
        [&](const std::string& label) {
          if (progress) std::cerr << "\rdrift " << name << " p=" << label << "   " << std::flush;
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
  if (progress) std::cerr << "\n";
  return t;
}

/// --kind positional-head: the previous-token head on θ_1 = 1 per format × realisation × k.
Table positional_head_table(const std::vector<numeric::Format>& formats,
                            const std::vector<std::string>& realisations,
                            const std::vector<std::uint64_t>& offsets, bool progress) {
  Table t;
  t.columns = {"format", "realization", "k",           "C",           "C_source",    "f_large",
               "n_max",  "fail_query",  "fail_offset", "delta_bound", "tie_distance"};
  t.terminal_columns = {"format", "realization", "k",           "C",
                        "n_max",  "fail_query",  "delta_bound", "tie_distance"};
  t.numeric_columns = {"k",          "C",           "f_large",     "n_max",
                       "fail_query", "fail_offset", "delta_bound", "tie_distance"};
  for (const auto& f : formats) {
    for (const auto& r : realisations) {
      for (const auto k : offsets) {
        if (progress)
          std::cerr << "\rpositional head " << f.name << " " << r << " k=" << k << "   "
                    << std::flush;
        const auto report = proofs::previous_token_head(f, r, k);
        const auto j = proofs::to_json(report);
        t.rows.push_back({f.name, j["realization"], k, j["C"], report.C_source, j["f_large"],
                          j["n_max"], j["fail_query"], j["offset"], j["delta_bound"],
                          j["tie_distance"]});
      }
    }
  }
  if (progress) std::cerr << "\n";
  return t;
}

/// --kind nope-previous-token: the NoPE check per format × summation.
Table nope_table(const std::vector<numeric::Format>& formats,
                 const std::vector<std::string>& summations, std::size_t length, std::size_t trials,
                 std::uint64_t seed) {
  Table t;
  t.columns = {"format",         "summation", "n",           "pairs",  "identical",
               "max_difference", "bound",     "bound_holds", "margin", "underflows"};
  t.numeric_columns = {"n",     "pairs",  "identical", "max_difference",
                       "bound", "margin", "underflows"};
  t.terminal_columns = t.columns;
  for (const auto& f : formats) {
    for (const auto& text : summations) {
      proofs::NopeCheckSpec spec;
      spec.policy.format = f;
      spec.policy.summation =
          with_context("--summations", [&] { return numeric::parse_summation(text); });
      spec.length = length;
      spec.trials = trials;
      spec.seed = seed;
      const auto c =
          with_context("--summations", [&] { return proofs::nope_previous_token_check(spec); });
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

/// --kind no-decay: the exact score S(n) and the realised ones at every record distance.
Table no_decay_table(const attention::Schedule& s, const std::vector<numeric::Format>& formats,
                     const std::vector<std::string>& realisation_specs, std::uint64_t max_length,
                     std::uint64_t key_position) {
  const auto sum = proofs::alignment_sum(s);
  std::vector<std::uint64_t> distances{0};
  for (const auto& r : proofs::record_distances(sum, static_cast<std::int64_t>(max_length)))
    distances.push_back(static_cast<std::uint64_t>(r.n));
  Table t;
  t.columns = {"n", "exact"};
  std::vector<attention::Realisation> realisations;
  for (const auto& spec : realisation_specs) {
    for (const auto& f : formats) {
      realisations.push_back(
          with_context("--realizations", [&] { return attention::parse_realisation(spec, f); }));
      attention::check_applicable(s, realisations.back());
      t.columns.push_back(realisations.back().name() + "_" + f.name);
    }
  }
  t.terminal_columns = t.columns;
  t.numeric_columns = t.columns;  // n, the exact score and the realised ones
  for (const auto n : distances) {
    double error = 0;
    const double exact = sum.approximate(static_cast<std::int64_t>(n), &error);
    std::vector<nlohmann::json> row{n, fmt::format("{:.12f}", exact)};
    t.json_numbers.push_back({{"exact", exact}});  // JSON: the nearest double, as a number
    for (std::size_t r = 0; r < realisations.size(); ++r) {
      const auto v =
          proofs::realised_alignment_score(s, realisations[r], key_position + n, key_position);
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

}  // namespace

Action add_table_bounds_command(CLI::App* table) {
  struct Options {
    std::string kind, lengths = "1K,2K,4K,8K,16K,32K,64K,128K,256K,512K,1M",
                      formats = "bf16,fp16,fp32", realisation = "hf", realisations = "r1,r2",
                      presets = "all", out, columns;
    std::size_t dim = 128;
    std::uint64_t finite_max_length = 8192, positions = 65536, from = 10, max_length = 65536;
    std::string tolerance = "0.01", p_values = "0.25,0.75";
    std::string offsets = "1", summations = "sequential,pairwise,exact", schedule = "single:g=1";
    std::uint64_t nope_length = 16, trials = 200, seed = 1, key_position = 0;
    unsigned jobs = 0;
    bool json = false, quiet = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = table->add_subcommand(
      "bounds", "Bounds from the RoPE literature, exact and in finite formats (docs/BOUNDS.md)");
  cmd->add_option(
         "--kind", o->kind,
         "base-context (Men et al. 2024: smallest base with B_m >= 0 for m <= L) or "
         "critical-dim (Liu et al. 2023: d_extra, T_extra per preset) or semantic-drift "
         "(Barbero et al. 2024: first m where the low-frequency channels move q.k by more "
         "than --tolerance) or positional-head (Barbero et al. 2024 (i): previous-token head "
         "on theta_1 = 1, certified range) or nope-previous-token (the NoPE head on "
         "permuted prefixes) or no-decay (Barbero et al. 2024 (iii): q.k at the record "
         "distances, exact and realised)")
      ->required();
  add_integer_option(cmd, "--dim", o->dim, "base-context: head dimension D (even)", 2, 4096)
      ->capture_default_str();
  cmd->add_option("--lengths", o->lengths,
                  "base-context: context lengths L (N, NK = N*1024, NM = N*2^20)")
      ->capture_default_str();
  add_integer_option(cmd, "--from", o->from,
                     "base-context: the search starts at the smallest grid base >= this", 10,
                     9900000000000000000ULL)
      ->capture_default_str();
  cmd->add_option("--formats", o->formats, "Formats of the finite-precision columns")
      ->capture_default_str();
  cmd->add_option("--realization,--realisation", o->realisation,
                  "base-context: the realisation whose cosines are summed in each format")
      ->capture_default_str();
  add_integer_option(cmd, "--finite-max-length", o->finite_max_length,
                     "base-context: finite-precision columns for L up to this (longer rows: '-')",
                     0, kMaxContextLength)
      ->capture_default_str();
  cmd->add_option(
         "--presets", o->presets,
         "critical-dim, semantic-drift: model presets and hf-config:PATH files (a path holding ',' "
         "separated with ';'), or 'all'")
      ->capture_default_str();
  cmd->add_option("--realizations,--realisations", o->realisations,
                  "critical-dim, semantic-drift, positional-head, no-decay: realisations of the "
                  "finite-precision columns")
      ->capture_default_str();
  add_integer_option(cmd, "--positions", o->positions,
                     "critical-dim: positions 0..N-1 of the census of the critical block", 2,
                     std::uint64_t{1} << 24)
      ->capture_default_str();
  cmd->add_option("--tolerance", o->tolerance,
                  "semantic-drift: relative tolerance (exact decimal or P/Q, in (0, 1))")
      ->capture_default_str();
  cmd->add_option("--p", o->p_values,
                  "semantic-drift: p-RoPE values p (rows besides the preset itself)")
      ->capture_default_str();
  add_integer_option(
      cmd, "--max-length", o->max_length,
      "semantic-drift: positions scanned; no-decay: the largest record distance (1..2^24)", 1,
      std::uint64_t{1} << 24)
      ->capture_default_str();
  cmd->add_option("--k", o->offsets, "positional-head: offsets k >= 1 (1 = previous token)")
      ->capture_default_str();
  cmd->add_option("--summations", o->summations,
                  "nope-previous-token: summation policies (sequential, pairwise, exact)")
      ->capture_default_str();
  add_integer_option(cmd, "--length", o->nope_length,
                     "nope-previous-token: the query position n (prefix of n-1 letters)", 3, 4096)
      ->capture_default_str();
  add_integer_option(cmd, "--trials", o->trials, "nope-previous-token: word pairs per row", 1,
                     1000000)
      ->capture_default_str();
  add_integer_option(cmd, "--seed", o->seed, "nope-previous-token: seed of the head and the words",
                     0, std::numeric_limits<std::uint64_t>::max())
      ->capture_default_str();
  cmd->add_option("--schedule", o->schedule, "no-decay: the schedule of q and k")
      ->capture_default_str();
  add_integer_option(cmd, "--key-position", o->key_position,
                     "no-decay: the key's position j (the query sits at j + n)", 0,
                     std::uint64_t{1} << 40)
      ->capture_default_str();
  cmd->add_option("-o,--out", o->out,
                  "Write the table to FILE (.csv .md .json .tex; every column unless --columns)");
  cmd->add_flag(
      "--json", o->json,
      "Print JSON (a list of objects, every column unless --columns) instead of the table");
  cmd->add_option("--columns", o->columns,
                  "Columns of the terminal, --out and --json: all, or a comma list (terminal "
                  "default: the main ones)");
  cmd->add_flag("--quiet", o->quiet, "No progress on stderr; with --out, nothing on stdout");
  add_jobs_option(cmd, o->jobs);
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    if (o->kind != "base-context" && o->kind != "critical-dim" && o->kind != "semantic-drift" &&
        o->kind != "positional-head" && o->kind != "nope-previous-token" && o->kind != "no-decay") {
      throw InvalidArgument("--kind: '" + o->kind +
                            "' is not a bounds table; accepted: base-context, critical-dim, "
                            "semantic-drift, positional-head, nope-previous-token, no-decay");
    }
    std::optional<OutputKind> kind;
    if (cmd->count("--out") > 0) {
      kind = output_kind_for(o->out, "--out");
      io::check_output_path(o->out, "--out");
    }
    // Validate every argument before computing anything (bad input: no output).
    const auto format_names = split_unique(o->formats, "--formats", ListKind::formats);
    std::vector<numeric::Format> formats;
    for (const auto& f : format_names) {
      formats.push_back(with_context("--formats", [&] { return numeric::parse_format(f); }));
    }
    const bool progress = !o->quiet && stderr_is_tty();
    const unsigned threads = jobs_threads(o->jobs);
    Table t;
    if (o->kind == "base-context") {
      if (o->dim % 2 != 0)
        throw InvalidArgument("--dim: the head dimension must be even (got " +
                              std::to_string(o->dim) + ")");
      std::vector<std::uint64_t> lengths;
      for (const auto& item : split_unique(o->lengths, "--lengths"))
        lengths.push_back(parse_length(item));
      if (lengths.empty()) throw InvalidArgument("--lengths: no context length given");
      if (!std::is_sorted(lengths.begin(), lengths.end()) ||
          std::adjacent_find(lengths.begin(), lengths.end()) != lengths.end()) {
        throw InvalidArgument("--lengths: give the context lengths in increasing order, each once");
      }
      std::vector<attention::Realisation> realisations;
      for (const auto& f : formats) {
        realisations.push_back(with_context(
            "--realization", [&] { return attention::parse_realisation(o->realisation, f); }));
      }
      const std::uint64_t first = proofs::base_grid_index_at_least(mpq_class(mpz_class(o->from)));
      const std::size_t dim = o->dim;
      auto note = [&](const std::string& what) {
        if (progress) std::cerr << "\r" << what << "   " << std::flush;
      };
      note("exact");
      const auto exact = proofs::base_context_bounds(
          lengths,
          [&](const mpz_class& b, std::uint64_t L, std::span<const std::uint64_t> hints) {
            note(fmt::format("exact L={} b={}", L, base_text(b)));
            return proofs::check_base_exact(proofs::base_context_sum(mpq_class(b), dim), L, hints,
                                            threads);
          },
          first);
      std::vector<std::optional<proofs::PaperBase>> papers;
      for (const auto L : lengths) papers.push_back(proofs::check_paper_base(L, dim, threads));
      std::vector<std::uint64_t> finite_lengths;
      for (const auto L : lengths) {
        if (L <= o->finite_max_length) finite_lengths.push_back(L);
      }
      std::vector<std::vector<proofs::BaseBound>> finite(formats.size());
      if (!finite_lengths.empty()) {
        numeric::parallel_for(threads, formats.size(), [&](std::size_t f) {
          finite[f] = proofs::base_context_bounds(
              finite_lengths,
              [&](const mpz_class& b, std::uint64_t L, std::span<const std::uint64_t> hints) {
                const auto s = attention::conventional_schedule(mpq_class(b), dim);
                return proofs::check_base_realised(s, realisations[f], L, hints);
              },
              first);
        });
      }
      if (progress) std::cerr << "\n";
      t = base_context_table(lengths, papers, exact, format_names, finite, o->finite_max_length,
                             realisations.front().name());
    } else if (o->kind == "positional-head") {
      std::vector<std::uint64_t> offsets;
      for (const auto& item : split_unique(o->offsets, "--k")) {
        offsets.push_back(numeric::parse_integer(item, "--k", 1, 999999999));  // an offset
      }
      const auto specs = split_unique(o->realisations, "--realizations", ListKind::realisations);
      for (const auto& spec : specs)
        for (const auto& f : formats)
          (void)with_context("--realizations",
                             [&] { return attention::parse_realisation(spec, f); });
      t = positional_head_table(formats, specs, offsets, progress);
    } else if (o->kind == "nope-previous-token") {
      const auto summations = split_unique(o->summations, "--summations");
      for (const auto& text : summations)
        (void)with_context("--summations", [&] { return numeric::parse_summation(text); });
      t = nope_table(formats, summations, o->nope_length, o->trials, o->seed);
    } else if (o->kind == "no-decay") {
      const auto s =
          with_context("--schedule", [&] { return attention::parse_schedule(o->schedule); });
      t = no_decay_table(s, formats,
                         split_unique(o->realisations, "--realizations", ListKind::realisations),
                         o->max_length, o->key_position);
    } else if (o->kind == "semantic-drift") {
      t = semantic_drift_table(
          resolve_presets(o->presets), o->p_values, o->realisations, formats,
          with_context("--tolerance",
                       [&] { return numeric::parse_rational_exact(o->tolerance, "tolerance"); }),
          o->max_length, progress);
    } else {
      const auto models = resolve_presets(o->presets);
      const auto realisation_specs =
          split_unique(o->realisations, "--realizations", ListKind::realisations);
      t.columns = {"preset", "base",    "d",     "T_train", "T_train_source",
                   "x",      "d_extra", "block", "T_extra", "block_period"};
      t.terminal_columns = {"preset", "base", "d", "T_train", "d_extra", "T_extra"};
      std::vector<attention::Realisation> realisations;
      for (const auto& spec : realisation_specs) {
        for (const auto& f : formats) {
          realisations.push_back(with_context(
              "--realizations", [&] { return attention::parse_realisation(spec, f); }));
          const std::string column = realisations.back().name() + "_" + f.name;
          t.columns.push_back(column);
          t.terminal_columns.push_back(column);
        }
      }
      for (const auto& model : models) {
        const std::string& name = model.name;
        const auto* p = &model.preset;
        const attention::Schedule& s = model.schedule;
        const std::size_t d = s.exponent_dim ? *s.exponent_dim : s.rotary_dim;
        const auto [T, source] = proofs::training_length(*p);
        const auto c = proofs::critical_dimension(p->config.rope_theta, d, T);
        std::vector<nlohmann::json> row{
            name,
            p->config.rope_theta.get_str(),
            d,
            T,
            source,
            fmt::format("{:.6f}", c.ratio),
            c.d_extra,
            c.block ? nlohmann::json(*c.block) : nlohmann::json(nullptr),
            fmt::format("{:.6g}", c.t_extra.to_double())};
        // JSON: numbers (the text columns round for reading)
        nlohmann::json numbers = {{"x", c.ratio}, {"T_extra", c.t_extra.to_double()}};
        numeric::put_exact(numbers, "base", p->config.rope_theta);
        if (c.block) {
          numbers["block_period"] =
              2 * 3.14159265358979323846 / s.blocks[*c.block].theta.to_double();
        }
        t.json_numbers.push_back(std::move(numbers));
        if (!c.block) {
          row.emplace_back(nullptr);
          for (std::size_t k = 0; k < realisations.size(); ++k) row.emplace_back(nullptr);
          t.rows.push_back(std::move(row));
          continue;
        }
        // The block as the model computes it (llama3 scaling applied: its period is the
        // scaled one, shown as block_period).
        const double theta = s.blocks[*c.block].theta.to_double();
        row.push_back(fmt::format("{:.6g}", 2 * 3.14159265358979323846 / theta));
        if (progress) std::cerr << "\rcensus " << name << "   " << std::flush;
        attention::CensusOptions options;
        options.positions = o->positions;
        options.threads = threads;
        const auto results =
            attention::census_many(proofs::restrict_to_block(s, *c.block), realisations, options);
        for (const auto& r : results) row.push_back(census_cell(r));
        t.rows.push_back(std::move(row));
      }
      if (progress) std::cerr << "\n";
    }
    write_and_print(t, kind, o->out, std::nullopt, o->json, o->quiet, o->columns);
    return 0;
  };
}

}  // namespace ropesim::cli
