// `ropesim table bounds`: bounds from the RoPE literature, exactly and at finite precision
// (docs/BOUNDS.md). The science and the tables live in proofs/literature/bounds_tables.hpp (with
// the studies of proofs/literature/bounds.hpp and proofs/literature/bounds_study.hpp); this file
// parses the flags into a proofs::TableBoundsRequest, shows the progress and writes the table.
//   --kind base-context   Men et al. 2024 (arXiv 2405.14591), Table 1
//   --kind critical-dim   Liu et al. 2023 (arXiv 2310.05209), critical dimension d_extra
//   --kind semantic-drift Barbero et al. 2024 (arXiv 2410.06205), low-frequency channels
//   --kind positional-head      Barbero et al. 2024 (i): previous-token head on θ_1 = 1
//   --kind nope-previous-token  Barbero et al. 2024 (i): what a NoPE head sees of the prefix order
//   --kind no-decay             Barbero et al. 2024 (iii): a q, k whose score does not decay
#include <iostream>
#include <limits>

#include "attention/census/census.hpp"
#include "cli/commands.hpp"
#include "cli/jobs.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "proofs/literature/bounds_tables.hpp"

namespace ropesim::cli {

namespace {

struct TableBoundsOptions {
  proofs::TableBoundsRequest request;
  std::string out, columns;
  unsigned jobs = 0;
  bool json = false, quiet = false;
  bool out_given = false;  ///< -o/--out was given
};

/// Runs `table bounds` with options `o`; returns the exit code.
int run_table_bounds(const TableBoundsOptions& o) {
  proofs::check_bounds_kind(o.request.kind);
  const TableDestination to = table_destination(o.out_given, o.out, false, "");
  const bool progress = !o.quiet && stderr_is_tty();
  bool shown = false;  // a progress line is on the terminal
  const Table t = proofs::bounds_table(o.request, jobs_threads(o.jobs), io::Shard{},
                                       [&](const std::string& what) {
                                         if (!progress) return;
                                         std::cerr << "\r" << what << "   " << std::flush;
                                         shown = true;
                                       });
  if (shown) std::cerr << "\n";
  finish_table(t, to, t.rows.size(), o.json, o.quiet, o.columns);
  return 0;
}

/// The options of `table bounds`.
CLI::App* add_table_bounds_options(CLI::App* table, TableBoundsOptions* options) {
  proofs::TableBoundsRequest* o = &options->request;
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
  cmd->add_option("-o,--out", options->out,
                  "Write the table to FILE (.csv .md .json .tex; every column unless --columns)");
  cmd->add_flag(
      "--json", options->json,
      "Print JSON (a list of objects, every column unless --columns) instead of the table");
  cmd->add_option("--columns", options->columns,
                  "Columns of the terminal, --out and --json: all, or a comma list (terminal "
                  "default: the main ones)");
  cmd->add_flag("--quiet", options->quiet, "No progress on stderr; with --out, nothing on stdout");
  add_jobs_option(cmd, options->jobs);
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
