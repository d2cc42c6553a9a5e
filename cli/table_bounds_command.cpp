// `ropesim table bounds`: bounds from the RoPE literature, exactly and at finite precision
// (docs/BOUNDS.md). The science lives in proofs/literature/bounds.hpp and
// proofs/literature/bounds_study.hpp; this file parses the arguments into a study's options and
// runs it, cli/bounds_tables.cpp lays out the rows.
//   --kind base-context   Men et al. 2024 (arXiv 2405.14591), Table 1
//   --kind critical-dim   Liu et al. 2023 (arXiv 2310.05209), critical dimension d_extra
//   --kind semantic-drift Barbero et al. 2024 (arXiv 2410.06205), low-frequency channels
//   --kind positional-head      Barbero et al. 2024 (i): previous-token head on θ_1 = 1
//   --kind nope-previous-token  Barbero et al. 2024 (i): what a NoPE head sees of the prefix order
//   --kind no-decay             Barbero et al. 2024 (iii): a q, k whose score does not decay
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <limits>

#include "attention/census/census.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "cli/bounds_tables.hpp"
#include "cli/commands.hpp"
#include "cli/jobs.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/format.hpp"
#include "numeric/summation.hpp"
#include "proofs/literature/bounds_study.hpp"

namespace ropesim::cli {

namespace {

struct TableBoundsOptions {
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
  bool out_given = false;  ///< -o/--out was given
};

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
  if (!ok || value == 0 || value > proofs::kMaxContextLength) {
    throw InvalidArgument(
        "--lengths: '" + text +
        "' is not a context length (an integer 1..16777216, or NK = N*1024, NM = N*2^20)");
  }
  return value;
}

/// --kind base-context: proofs::base_context_study over the formats' realisations.
Table run_base_context(const TableBoundsOptions& o, const std::vector<std::string>& format_names,
                       const std::vector<numeric::Format>& formats, unsigned threads,
                       bool progress) {
  proofs::BaseContextOptions options;
  options.dim = o.dim;
  if (o.dim % 2 != 0) proofs::check_options(options);  // the --dim refusal comes first
  for (const auto& item : split_unique(o.lengths, "--lengths"))
    options.lengths.push_back(parse_length(item));
  options.from = o.from;
  options.finite_max_length = o.finite_max_length;
  options.threads = threads;
  proofs::check_options(options);
  for (const auto& f : formats) {
    options.realisations.push_back(with_context(
        "--realization", [&] { return attention::parse_realisation(o.realisation, f); }));
  }
  auto note = [&](const std::string& what) {
    if (progress) std::cerr << "\r" << what << "   " << std::flush;
  };
  options.on_exact_candidate = [&](std::uint64_t L, const mpz_class& b) {
    note(fmt::format("exact L={} b={}", L, base_text(b)));
  };
  note("exact");
  const auto study = proofs::base_context_study(options);
  if (progress) std::cerr << "\n";
  return base_context_table(study, format_names, options.realisations.front().name());
}

/// --kind critical-dim: proofs::critical_dimension_study over the presets and realisations.
Table run_critical_dimension(const TableBoundsOptions& o,
                             const std::vector<numeric::Format>& formats, unsigned threads,
                             bool progress) {
  proofs::CriticalDimensionOptions options;
  options.models = resolve_presets(o.presets);
  std::vector<std::string> columns;
  for (const auto& spec : split_unique(o.realisations, "--realizations", ListKind::realisations)) {
    for (const auto& f : formats) {
      options.realisations.push_back(
          with_context("--realizations", [&] { return attention::parse_realisation(spec, f); }));
      columns.push_back(options.realisations.back().name() + "_" + f.name);
    }
  }
  options.positions = o.positions;
  options.threads = threads;
  options.on_census = [&](const std::string& name) {
    if (progress) std::cerr << "\rcensus " << name << "   " << std::flush;
  };
  const auto rows = proofs::critical_dimension_study(options);
  if (progress) std::cerr << "\n";
  return critical_dimension_table(rows, columns);
}

/// --kind positional-head: the offsets and realisations checked, then the rows.
Table run_positional_head(const TableBoundsOptions& o, const std::vector<numeric::Format>& formats,
                          bool progress) {
  std::vector<std::uint64_t> offsets;
  for (const auto& item : split_unique(o.offsets, "--k")) {
    offsets.push_back(ropesim::parse_integer(item, "--k", 1, 999999999));  // an offset
  }
  const auto specs = split_unique(o.realisations, "--realizations", ListKind::realisations);
  for (const auto& spec : specs)
    for (const auto& f : formats)
      (void)with_context("--realizations", [&] { return attention::parse_realisation(spec, f); });
  return positional_head_table(formats, specs, offsets, progress);
}

const std::vector<std::string>& bounds_kinds() {
  static const std::vector<std::string> kinds{"base-context",        "critical-dim",
                                              "semantic-drift",      "positional-head",
                                              "nope-previous-token", "no-decay"};
  return kinds;
}

/// Runs `table bounds` with options `o`; returns the exit code.
int run_table_bounds(const TableBoundsOptions& o) {
  const auto& kinds = bounds_kinds();
  if (std::find(kinds.begin(), kinds.end(), o.kind) == kinds.end()) {
    throw InvalidArgument("--kind: '" + o.kind +
                          "' is not a bounds table; accepted: base-context, critical-dim, "
                          "semantic-drift, positional-head, nope-previous-token, no-decay");
  }
  std::optional<OutputKind> kind;
  if (o.out_given) {
    kind = output_kind_for(o.out, "--out");
    io::check_output_path(o.out, "--out");
  }
  // Validate every argument before computing anything (bad input: no output).
  const auto format_names = split_unique(o.formats, "--formats", ListKind::formats);
  std::vector<numeric::Format> formats;
  for (const auto& f : format_names) {
    formats.push_back(with_context("--formats", [&] { return numeric::parse_format(f); }));
  }
  const bool progress = !o.quiet && stderr_is_tty();
  const unsigned threads = jobs_threads(o.jobs);
  Table t;
  if (o.kind == "base-context") {
    t = run_base_context(o, format_names, formats, threads, progress);
  } else if (o.kind == "positional-head") {
    t = run_positional_head(o, formats, progress);
  } else if (o.kind == "nope-previous-token") {
    const auto summations = split_unique(o.summations, "--summations");
    for (const auto& text : summations)
      (void)with_context("--summations", [&] { return numeric::parse_summation(text); });
    t = nope_table(formats, summations, o.nope_length, o.trials, o.seed);
  } else if (o.kind == "no-decay") {
    const auto s =
        with_context("--schedule", [&] { return attention::parse_schedule(o.schedule); });
    t = no_decay_table(s, formats,
                       split_unique(o.realisations, "--realizations", ListKind::realisations),
                       o.max_length, o.key_position);
  } else if (o.kind == "semantic-drift") {
    t = semantic_drift_table(
        resolve_presets(o.presets), o.p_values, o.realisations, formats,
        with_context("--tolerance",
                     [&] { return numeric::parse_rational_exact(o.tolerance, "tolerance"); }),
        o.max_length, progress);
  } else {
    t = run_critical_dimension(o, formats, threads, progress);
  }
  write_and_print(t, kind, o.out, std::nullopt, o.json, o.quiet, o.columns);
  return 0;
}

/// The options of `table bounds`.
CLI::App* add_table_bounds_options(CLI::App* table, TableBoundsOptions* o) {
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
                     0, proofs::kMaxContextLength)
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
                     "critical-dim: positions 0..N-1 of the census of the critical block",
                     attention::kMinCensusPositions, std::uint64_t{1} << 24)
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
  return cmd;
}

}  // namespace

Action add_table_bounds_command(CLI::App* table) {
  auto o = std::make_shared<TableBoundsOptions>();
  CLI::App* cmd = add_table_bounds_options(table, o.get());
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    o->out_given = cmd->count("--out") > 0;
    return run_table_bounds(*o);
  };
}

}  // namespace ropesim::cli
