#pragma once
// The shard files `ropesim merge` joins (merge_command.cpp), taken apart: CSV, Markdown, LaTeX
// and JSON exactly as render() (cli/table.cpp) writes them, and the recorded command words.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/jobs.hpp"
#include "cli/table.hpp"

namespace ropesim::cli {

/// One shard file, taken apart.
struct ShardFile {
  std::string path;
  ShardRecord record;
  std::string writer;              ///< "ropesim V (commit C)": the build that wrote it
  std::string command;             ///< the recorded command
  std::vector<CommandWord> words;  ///< the recorded command words (structured provenance)
  std::string header;              ///< everything between the provenance and the rows (columns)
  std::string footer;              ///< everything after the rows
  std::vector<std::string> rows;   ///< text rows, each with its line end (CSV, Markdown, LaTeX)
  std::map<std::string, std::string> notes;  ///< LaTeX: the notes under the table, by letter
  nlohmann::json json;                       ///< the whole document (JSON)
};

/// Where two command lines first differ, word by word: "'--formats fp16' vs '--formats bf16'"
/// (the differing word and the one before it, so a long command still shows its difference in
/// a one-line error), or which one has more words.
std::string first_difference(const std::string& a, const std::string& b);

/// "CSV", "Markdown", "LaTeX", "JSON".
const char* kind_name(OutputKind kind);

/// Throws InvalidArgument "merge: MESSAGE".
[[noreturn]] void fail(const std::string& message);

/// A CSV, Markdown or LaTeX shard file read and taken apart; fails on a file ropesim did not
/// write as a shard.
ShardFile read_text_shard(const std::string& path, OutputKind kind);

/// A LaTeX row of `shard` with its note marks lettered by `notes` (the merged table's notes in
/// order of first appearance, extended here); fails on a mark without a note.
std::string reletter(const std::string& row, const ShardFile& shard,
                     std::vector<std::string>& notes);

/// A JSON shard file read and taken apart.
ShardFile read_json_shard(const std::string& path);

/// The command without the run options: what every shard of one run shares.
std::string computation(const std::vector<CommandWord>& words);

/// The I/N the command line asked for with --shard (empty when absent), as two numbers.
std::optional<std::pair<std::uint64_t, std::uint64_t>> requested_shard(
    const std::vector<CommandWord>& words);

/// The command of the single run the merged file stands for: shard 1's command
/// without --shard, with --out naming `out`.
std::string single_run_command(const std::vector<CommandWord>& words, const std::string& out);

}  // namespace ropesim::cli
