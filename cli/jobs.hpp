#pragma once
// Parallel and sharded runs of the CLI: the one `--jobs` option of every command that
// computes on several threads, and `--shard I/N`, which runs one of N parts of a table so a
// sweep can run as a cluster job array; `ropesim merge` (cli/merge_command.cpp) joins the
// parts into the file one run would have written.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "io/shard.hpp"

namespace ropesim::cli {

/// Registers `--jobs N` (alias `--threads`, its older name) on `cmd`: worker threads, an
/// integer in 0..256, 0 (the default) meaning every core (std::thread::hardware_concurrency).
/// Every command that takes it prints the same bytes for every N.
CLI::Option* add_jobs_option(CLI::App* cmd, unsigned& jobs);

/// The thread count of `--jobs N` (numeric::resolve_threads: N, or every core for 0).
unsigned jobs_threads(unsigned jobs);

using io::kMaxShards;
using io::parse_shard;
using io::parse_shard_line;
using io::Shard;
using io::shard_line;
using io::ShardRecord;

/// Registers `--shard I/N` on `cmd` (a table command: sweep, table horizon).
CLI::Option* add_shard_option(CLI::App* cmd, std::string& text);

}  // namespace ropesim::cli
