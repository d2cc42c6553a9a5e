#pragma once
// The ropesim subcommands. Each `add_*` registers its options on `app` and returns the action
// to run after parsing; actions print to stdout/stderr and throw ropesim::InvalidArgument for
// bad input (main maps it to one line on stderr and exit code 2).
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "numeric/error.hpp"  // actions throw ropesim::InvalidArgument

namespace ropesim::cli {

using Action = std::function<int()>;

Action add_formats_command(CLI::App& app);
Action add_rotations_command(CLI::App& app);
Action add_sweep_command(CLI::App& app);
Action add_horizon_command(CLI::App& app);
Action add_table_command(CLI::App& app);
Action add_run_command(CLI::App& app);
Action add_construct_command(CLI::App& app);

/// What a list holds, which decides where a comma starts a new item.
enum class ListKind {
  plain,      ///< every comma separates items (model names, realisations)
  formats,    ///< `p=11,e=5,fp16`: an item starting with `p=` or without `=` is a new format
  schedules,  ///< `conventional:base=1e4,dim=128,single:g=1,periodic:m=2,3,12,phi-2`: an item
              ///< with `:`, or a name (letters, no `=`), is a new schedule
};

/// Splits a list on ';' (always a separator) and on the commas that start a new item of
/// `kind`, so specs that contain commas can be listed as they are written.
std::vector<std::string> split_list(const std::string& text, ListKind kind = ListKind::plain);

/// Runs `parse()` and returns its result; an InvalidArgument it throws is rethrown with the
/// flag's name in front (`--format: unknown format ...`), so the one-line error names the
/// option to fix. Other exceptions pass through unchanged.
template <class F>
auto with_flag(const std::string& flag, F&& parse) {
  try {
    return parse();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(flag + ": " + e.what());
  }
}

/// Rejects a leading minus sign for unsigned options (CLI11 would wrap -1 to 2^64 - 1).
inline CLI::Validator non_negative() {
  return CLI::Validator(
      [](std::string& text) { return !text.empty() && text[0] == '-' ? std::string("must not be negative, got " + text) : std::string(); },
      "", "non-negative");
}

/// True if stderr is a terminal (progress display).
bool stderr_is_tty();

}  // namespace ropesim::cli
