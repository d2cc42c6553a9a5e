// `ropesim merge FILE... --out FILE`: joins the files of a table run as shards
// (`ropesim sweep|table horizon … --shard I/N --out …`) into the file one run would have
// written, byte for byte: the same provenance (the command without --shard, writing to this
// --out), the same header and the rows in table order (shard 1's rows, then shard 2's, …).
// Reads CSV, Markdown, LaTeX and JSON exactly as render() (cli/table.cpp) writes them. Which
// words of the command are run options (--shard, --out, --jobs, ...) comes from the structured
// command words the shard recorded (CLI11's parse: CommandWord), not from re-tokenising the
// command line.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "cli/commands.hpp"
#include "cli/jobs.hpp"
#include "cli/merge_shards.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"

namespace ropesim::cli {

namespace {

struct MergeOptions {
  std::vector<std::string> files;
  std::string out;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_merge_options(CLI::App& app, MergeOptions* o) {
  auto* cmd = app.add_subcommand(
      "merge",
      "Join the shard files of a sweep or table run with --shard I/N into the file one run writes");
  cmd->add_option("files", o->files,
                  "The shard files (all N of one run, any order; .csv .md .json .tex)")
      ->required();
  cmd->add_option("--out,-o", o->out, "The merged file (same kind as the shards)")->required();
  return cmd;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_merge(const CLI::App& /*cmd*/, MergeOptions& o) {
  const OutputKind kind = output_kind_for(o.out, "--out");
  io::check_output_path(o.out, "--out");
  std::vector<ShardFile> shards;
  for (const auto& path : o.files) {
    std::error_code ec;
    if (std::filesystem::exists(o.out, ec) && std::filesystem::equivalent(path, o.out, ec)) {
      fail("--out '" + o.out + "' is one of the shard files ('" + path +
           "'); accepted: a new file, so the shards stay to merge again");
    }
    const OutputKind k = output_kind_for(path, "merge", all_output_kinds, "input");
    if (k != kind) {
      fail("'" + path + "' is " + kind_name(k) + " but --out '" + o.out + "' is " +
           kind_name(kind) + "; accepted: shards and --out of one kind (.csv .md .json .tex)");
    }
    shards.push_back(k == OutputKind::json ? read_json_shard(path) : read_text_shard(path, k));
  }
  const ShardFile& first = shards.front();
  const std::uint64_t n = first.record.shard.count;
  std::map<std::uint64_t, const ShardFile*> by_index;
  for (const auto& f : shards) {
    if (f.writer != first.writer) {
      fail("'" + f.path + "' and '" + first.path +
           "' were written by different ropesim builds; accepted: the shards of one run");
    }
    if (computation(f.words) != computation(first.words)) {
      fail("'" + f.path + "' and '" + first.path + "' come from different commands (" +
           first_difference(computation(f.words), computation(first.words)) +
           "); accepted: the shards of one run, which differ only in --shard, --out, --jobs, "
           "--quiet, --progress, --no-progress, --json and --columns");
    }
    if (f.record.shard.count != n || f.record.total_rows != first.record.total_rows) {
      fail("'" + f.path + "' is shard " + std::to_string(f.record.shard.index) + "/" +
           std::to_string(f.record.shard.count) + " of " + std::to_string(f.record.total_rows) +
           " rows but '" + first.path + "' is shard " + std::to_string(first.record.shard.index) +
           "/" + std::to_string(n) + " of " + std::to_string(first.record.total_rows) +
           " rows; accepted: the shards of one run");
    }
    if (f.header != first.header || f.footer != first.footer) {
      fail("'" + f.path + "' and '" + first.path +
           "' have different columns; accepted: the shards of one run");
    }
    const auto asked = requested_shard(f.words);
    if (!asked || asked->first != f.record.shard.index || asked->second != f.record.shard.count) {
      fail("'" + f.path + "' records shard " + std::to_string(f.record.shard.index) + "/" +
           std::to_string(n) +
           " but its command line does not ask for it (edited?); accepted: shard files as "
           "ropesim wrote them");
    }
    const auto [at, inserted] = by_index.emplace(f.record.shard.index, &f);
    if (!inserted) {
      fail("shard " + std::to_string(f.record.shard.index) + "/" + std::to_string(n) +
           " is given twice ('" + at->second->path + "', '" + f.path +
           "'); accepted: each of the N shards once");
    }
    const std::uint64_t expected = f.record.shard.rows_of(f.record.total_rows);
    const std::uint64_t rows = f.json.is_null() ? f.rows.size() : f.json["rows"].size();
    if (rows != expected) {
      fail("'" + f.path + "' (shard " + std::to_string(f.record.shard.index) + "/" +
           std::to_string(n) + " of " + std::to_string(f.record.total_rows) + " rows) has " +
           std::to_string(rows) + " rows, expected " + std::to_string(expected) +
           " (cut off or edited?)");
    }
  }
  if (by_index.size() != n) {
    std::string missing, given;
    for (std::uint64_t i = 1; i <= n; ++i) {
      if (!by_index.count(i)) {
        if (missing.size() < 200) missing += (missing.empty() ? "" : " ") + std::to_string(i);
      } else if (given.size() < 200) {
        given += (given.empty() ? "" : " ") + std::to_string(i);
      }
    }
    fail("shards missing of " + std::to_string(n) + ": " + missing + " (given: " + given +
         "); accepted: all N shards of one run, each once");
  }
  const std::uint64_t total = first.record.total_rows;
  // provenance from shard 1 whatever the order of the files (the run options may differ)
  const ShardFile& one = *by_index.at(1);
  const std::string command = single_run_command(one.words, o.out);
  std::string text;
  if (kind == OutputKind::json) {
    nlohmann::json merged = one.json;
    merged["provenance"].erase("shard");
    merged["provenance"]["command"] = command;
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [index, shard] : by_index) {
      for (const auto& row : shard->json["rows"]) rows.push_back(row);
    }
    merged["rows"] = std::move(rows);
    text = merged.dump(2) + "\n";
  } else {
    switch (kind) {
      case OutputKind::csv:
        text = "# " + one.writer + "; command: " + command + "\n";
        break;
      case OutputKind::latex:
        text = "% " + one.writer + "; command: " + command + "\n";
        break;
      default:
        text = "Made by " + one.writer + ": `" + command + "`\n\n";
        break;
    }
    text += first.header;
    // LaTeX notes: each shard lettered its own notes in order of first appearance; the merged
    // table letters them again over all rows, as the single run does (Table::to_latex).
    std::vector<std::string> notes;
    for (const auto& [index, shard] : by_index) {
      for (const auto& row : shard->rows)
        text += kind == OutputKind::latex ? reletter(row, *shard, notes) : row;
    }
    text += first.footer;
    if (kind == OutputKind::latex) text += latex_notes_block(notes);
  }
  io::write_output_file(o.out, text);
  std::cout << "merged " << n << " shard" << (n == 1 ? "" : "s") << ", " << total << " rows, into "
            << o.out << "\n";
  return 0;
}

}  // namespace

Action add_merge_command(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* cmd = add_merge_options(app, o.get());
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_merge(*cmd, *o);
  };
}

}  // namespace ropesim::cli
