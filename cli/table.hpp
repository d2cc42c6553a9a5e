#pragma once
// Tables for the CLI: io::Table (io/table.hpp) written with this run's provenance, and printed.
// Output files are written atomically (temporary file + rename), so a failed run leaves no
// partial file (brief: "Bad input").
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/jobs.hpp"
#include "io/files.hpp"
#include "io/provenance.hpp"
#include "io/table.hpp"

namespace ropesim::cli {

using io::all_output_kinds;
using io::cell_text;
using io::latex_header;
using io::latex_note_mark;
using io::latex_note_mark_prefix;
using io::latex_notes_block;
using io::note_letter;
using io::output_kind_for;
using io::OutputKind;
using io::Table;

/// io::render with the provenance of this run: the command line main recorded
/// (set_command_line) and its words (set_command_words).
std::string render(const Table& table, OutputKind kind,
                   const std::optional<ShardRecord>& shard = std::nullopt);

/// How the table commands (sweep, table horizon, table bounds) finish: write `table` to `out`
/// when `kind` is set (with `shard` recorded), then print it on stdout — as JSON with `json`,
/// else the terminal view — unless `quiet` and a file was written. `columns` (--columns) picks
/// the columns of the file, the JSON and the terminal alike (Table::for_files,
/// Table::for_terminal). Throws ropesim::InvalidArgument before writing anything for an unknown
/// column, or for --columns with --shard (a shard file keeps every column for ropesim merge).
void write_and_print(const Table& table, const std::optional<OutputKind>& kind,
                     const std::string& out, const std::optional<ShardRecord>& shard, bool json,
                     bool quiet, const std::string& columns);

/// Where a table command (sweep, table horizon, table bounds) sends its table, read from its
/// --out and --shard flags before anything is computed: the file's kind (output_kind_for) with
/// the path checked (io::check_output_path), and the shard. Throws ropesim::InvalidArgument
/// naming the flag for a bad path or extension or a shard outside 1 <= I <= N <= 10^6.
struct TableDestination {
  std::optional<OutputKind> kind;  ///< set when --out was given
  std::string out;                 ///< --out's path
  std::optional<Shard> shard;      ///< set when --shard was given
  /// The rows this run computes: the shard, or 1/1 (every row).
  Shard rows() const { return shard.value_or(Shard{1, 1}); }
};

/// The destination of `out` (when `out_given`) and of `shard` (when `shard_given`).
TableDestination table_destination(bool out_given, const std::string& out, bool shard_given,
                                   const std::string& shard);

/// How a table command finishes: write_and_print with the shard record of a table of
/// `total_rows` rows when the run is a shard.
void finish_table(const Table& table, const TableDestination& to, std::uint64_t total_rows,
                  bool json, bool quiet, const std::string& columns);

/// Records the command line (argv) for provenance; called once by main.
void set_command_line(int argc, char** argv);

using io::command_word_from_json;
using io::CommandWord;
using io::shell_word;
using io::to_json;

/// Records the words after "ropesim" as the parser saw them (main, after CLI11's parse).
void set_command_words(std::vector<CommandWord> words);
/// The recorded words (empty before set_command_words).
const std::vector<CommandWord>& recorded_command_words();
/// {"tool": "ropesim", "version", "commit", "command", "libm": {"glibc", "sleef"}}: what every
/// written file records (libm: the versions the :glibc and :sleef-u10 pipeline steps call).
nlohmann::json provenance();

/// One line: "ropesim 0.1.0 (commit abc123def456); command: ropesim …".
std::string provenance_line();

/// Output files are checked and written by io::check_output_path and io::write_output_file
/// (io/files.hpp): atomic replace of regular files, symbolic links followed, devices written
/// through.

/// Writes a model spec (`spec.dump(2)` and a newline) that `ropesim run` will read back, with
/// io::write_output_file; refuses with ropesim::BudgetExceeded, writing nothing, when the text
/// is larger than kMaxInputFileBytes (core/budget.hpp), the most ropesim reads.
void write_model_spec(const std::string& path, const nlohmann::json& spec);

/// The bytes write_model_spec writes for `spec` (`spec.dump(2)` and a newline).
std::string model_spec_text(const nlohmann::json& spec);

/// SHA-256 of `bytes` as 64 lowercase hexadecimal digits (OpenSSL's EVP_Digest, FIPS 180-4):
/// how a compile certificate names the model file it is about (`model_sha256`).
std::string sha256_hex(const std::string& bytes);

/// The flags of a realised value (numeric::Flags bits: overflow, invalid) as text: "overflow",
/// "NaN" (invalid: some step produced NaN), "overflow,NaN", or "-" for none (rotations
/// --position, rotate).
std::string flags_text(std::uint8_t flags);

}  // namespace ropesim::cli
