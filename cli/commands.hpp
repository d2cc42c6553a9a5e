#pragma once
// The ropesim subcommands. Each `add_*` registers its options on `app` and returns the action
// to run after parsing; actions print to stdout/stderr and throw ropesim::InvalidArgument for
// bad input (main maps it to one line on stderr and exit code 2).
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "attention/census/sweep_table.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/budget.hpp"
#include "core/error.hpp"  // actions throw ropesim::InvalidArgument
#include "core/lists.hpp"
#include "numeric/spec_lists.hpp"

namespace ropesim::cli {

using Action = std::function<int()>;

/// The whole `ropesim` command line: parses argv (argv[0] is the program name), runs the
/// command, prints its output to std::cout and errors to std::cerr as one line, and returns
/// the exit code (0, 2 for bad input, 1 for an internal error). main() of the executable
/// (cli/ropesim_main.cpp) calls it; the Python module calls the libraries instead.
/// `add_check` registers `ropesim check` (add_check_command, cli/check_command.cpp, which needs
/// RapidCheck): the executable passes it; without it (nullptr) `check` is an unknown command.
int run_command_line(int argc, char** argv, Action (*add_check)(CLI::App&) = nullptr);

Action add_formats_command(CLI::App& app);
Action add_rotations_command(CLI::App& app);
Action add_sweep_command(CLI::App& app);
Action add_horizon_command(CLI::App& app);
Action add_table_command(CLI::App& app);
Action add_run_command(CLI::App& app);
Action add_construct_command(CLI::App& app);
Action add_compile_command(CLI::App& app);
Action add_plot_command(CLI::App& app);
Action add_merge_command(CLI::App& app);
Action add_check_command(CLI::App& app);
Action add_classify_command(CLI::App& app);
Action add_compare_command(CLI::App& app);
/// `ropesim diagnose` (cli/diagnose_command.cpp; proofs/reports/diagnose.hpp).
Action add_diagnose_command(CLI::App& app);
Action add_rotate_command(CLI::App& app);
Action add_accumulate_command(CLI::App& app);
Action add_experiment_command(CLI::App& app);
/// `ropesim analyse heads` (cli/analyse_command.cpp; proofs/reports/head_analysis.hpp).
Action add_analyse_command(CLI::App& app);
/// `ropesim table bounds` under the `table` subcommand (cli/table_bounds_command.cpp).
Action add_table_bounds_command(CLI::App* table);
/// `ropesim table rotations` under the `table` subcommand (cli/table_rotations_command.cpp).
Action add_table_rotations_command(CLI::App* table);

// The lists users write (numeric/spec_lists.hpp), shared with the Python module.
using numeric::ListKind;
using numeric::split_list;
using numeric::split_unique;

/// Strict integer option text (ropesim::parse_integer): decimal digits only (no sign, no `0x`, no
/// octal, no exponent, no fraction), value in [lo, hi]. CLI11 alone would wrap `-1` to 2^64 - 1,
/// clamp 99999999999999999999999 to 2^64 - 1 and read `0x10` as 16 and `010` as 8, so every integer
/// flag goes through this check: anything else is a one-line error naming the flag and the
/// accepted range (a certificate must never rest on an unchecked argument). The text is
/// canonicalised (leading zeros stripped) before CLI11 converts it.
CLI::Validator integer_in(std::uint64_t lo, std::uint64_t hi);

/// Registers an integer option checked by `integer_in(lo, hi)`.
template <class T>
CLI::Option* add_integer_option(CLI::App* cmd, const std::string& name, T& target,
                                const std::string& help, std::uint64_t lo, std::uint64_t hi) {
  return cmd->add_option(name, target, help)->transform(integer_in(lo, hi));
}

/// The default budget, or none when the user passed the opt-in flag (--allow-slow).
inline Budget opt_in_budget(bool unlimited) {
  Budget b;
  b.unlimited = unlimited;
  return b;
}

using numeric::one_line;  // numeric/spec_lists.hpp

/// Appends the accepted spellings (formats, schedules and presets, realisations and pipeline
/// steps, rounding modes) to the --help text of every option that takes them.
void add_spellings_to_help(CLI::App& app);

/// One progress line for stderr: "[done/total] what  elapsed, rate/s, about T left" (the rate
/// and time left once something is done). Callers print it with '\r' only on a terminal.
std::string progress_line(std::size_t done, std::size_t total, const std::string& what,
                          double elapsed_seconds);

using attention::grid_schedules;

/// True if stderr is a terminal (progress display).
bool stderr_is_tty();

/// Prints "ropesim: warning: ..." on stderr (one line) when a run of `schedule` up to
/// `last_position` uses a longrope factor list transformers would not
/// (attention::longrope_factor_warning). stdout is untouched.
void warn_about_schedule(const attention::Schedule& schedule, std::uint64_t last_position);

}  // namespace ropesim::cli
