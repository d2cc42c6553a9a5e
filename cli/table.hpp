#pragma once
// Tables for the CLI: one set of rows rendered as readable text, CSV, Markdown, LaTeX or JSON.
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

namespace ropesim::cli {

/// A table whose cells are JSON values (numbers stay numbers in JSON; null prints as "-").
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<nlohmann::json>> rows;
  /// Extra per-row JSON objects merged into the JSON rendering only (e.g. witness lists).
  std::vector<nlohmann::json> json_extra;
  /// Per-row objects keyed by column whose values replace those cells in the JSON rendering
  /// only: the value as a JSON number where the text, CSV, Markdown and LaTeX views print it
  /// rounded or in the paper's notation, with "COLUMN_exact" beside it
  /// (numeric::put_exact) when binary64 cannot hold it. select() keeps a key with its column.
  std::vector<nlohmann::json> json_numbers;
  /// Columns whose cells are numbers (or null): right-aligned in the LaTeX view. Declared by
  /// the table's maker, never read from the rows, so every shard of a run gets the same
  /// alignment (ropesim merge). select() keeps those selected.
  std::vector<std::string> numeric_columns;
  /// Per-row objects keyed by column whose values replace those cells in the LaTeX view only:
  /// {"cell": V} and/or {"note": "LaTeX text"}. `cell` is what the paper shows where the
  /// other views mix a number with a remark ("2096 (record n=25)" → 2096, ">=709" → 709) or
  /// print a long name (an hf-config path → its short name); `note` becomes a footnote mark
  /// after the cell (a, b, ... in order of first appearance, one per distinct note) and is
  /// listed under the table (latex_notes_block). select() keeps a key with its column.
  std::vector<nlohmann::json> latex_cells;
  /// The columns the terminal shows by default (the ones that matter, to fit 120 columns);
  /// empty = all. Files (--out) and --json have every column unless --columns names some.
  std::vector<std::string> terminal_columns;

  /// This table restricted to `names` (in that order).
  Table select(const std::vector<std::string>& names) const;
  /// The terminal view: `columns_flag` is "" (terminal_columns), "all", or a comma list of
  /// column names. Throws ropesim::InvalidArgument (naming --columns and the columns) for an
  /// unknown name.
  Table for_terminal(const std::string& columns_flag) const;
  /// The view a file (--out) and --json get: every column when `columns_flag` is "" or "all",
  /// else the listed ones (errors as for_terminal).
  Table for_files(const std::string& columns_flag) const;

  std::string to_text() const;
  std::string to_csv() const;
  std::string to_markdown() const;
  /// A booktabs tabular (\toprule, \midrule, \bottomrule; the first line is the comment
  /// "% needs \usepackage{booktabs}"): headers by latex_header, numeric_columns right-aligned
  /// and the others left-aligned (alike in every shard of a run), numbers with an exponent as
  /// $m\times10^{e}$, null as --, latex_cells in place of the cells they name; when a cell
  /// has a note, latex_note_mark after it and latex_notes_block after \end{tabular}.
  /// Compiles with plain pdflatex and booktabs.
  std::string to_latex() const;
  nlohmann::json to_json() const;  ///< a list of objects keyed by column
};

/// The header of `column` in a LaTeX table (Table::to_latex): the symbol of a quantity of the
/// theory in math mode (n_max → $N_{\max}$, f_large → $f_{\mathrm{large}}$, tie_cap →
/// $\pi\sqrt{2/u}$, a one-letter name such as p → $p$), "X at limit" for X_at_limit, and other
/// names as escaped text with underscores read as spaces (first_repeat → "first repeat"; cos and
/// sin set as functions).
std::string latex_header(const std::string& column);

/// The footnote letter of the `index`-th note (0-based): a..z, then aa, ab, ...
std::string note_letter(std::size_t index);

/// The footnote mark after a LaTeX cell: `\rlap{\textsuperscript{LETTER}}` (outside the
/// column's width, so right-aligned numbers stay aligned).
std::string latex_note_mark(const std::string& letter);

/// The prefix every mark starts with (ropesim merge finds the marks by it).
inline constexpr const char* latex_note_mark_prefix = "\\rlap{\\textsuperscript{";

/// The notes listed under a LaTeX table, `notes[i]` with the letter note_letter(i): the line
/// "\par\smallskip", then one line per note "{\footnotesize\textsuperscript{a}\,NOTE\par}";
/// "" without notes.
std::string latex_notes_block(const std::vector<std::string>& notes);

/// The output kinds chosen by file extension.
enum class OutputKind { csv, markdown, json, latex };

/// Every output kind, in the order messages list them.
inline constexpr std::initializer_list<OutputKind> all_output_kinds = {
    OutputKind::csv, OutputKind::markdown, OutputKind::json, OutputKind::latex};

/// Maps the extension of `path` (`.csv .md .json .tex`) to a kind among `accepted`; throws
/// ropesim::InvalidArgument naming `flag` and listing only the accepted extensions otherwise
/// (an empty name, an unknown extension, or a kind the command does not write). `role` says
/// what the path is: "output" for a file written, "input" for one read (`merge` shards). A
/// device, FIFO or descriptor without a known extension (/dev/null, /dev/stdout) gets the one
/// kind when `accepted` has only one.
OutputKind output_kind_for(const std::string& path, const std::string& flag,
                           std::initializer_list<OutputKind> accepted = all_output_kinds,
                           const std::string& role = "output");

/// Renders `table` as a file of `kind`, with the provenance first: a comment line in CSV
/// (`# ropesim …`) and LaTeX (`% …`), a "Made by ropesim …: `command`" line in Markdown; in JSON an
/// object
/// `{"provenance": {...}, "rows": [...]}`. (Terminal output stays clean: no provenance.)
/// With `shard` (a run with --shard; `table` holds that shard's rows) the provenance also
/// records the shard: the line shard_line() after the provenance line (as a `#`/`%` comment in
/// CSV/LaTeX, a paragraph in Markdown), then the line "command words: JSON" (the
/// recorded_command_words() as a JSON list, same prefix), and in JSON `provenance.shard` =
/// {"index": I, "count": N, "rows": T, "words": [...]}. `ropesim merge` reads them back.
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

/// Records the command line (argv) for provenance; called once by main.
void set_command_line(int argc, char** argv);

/// One word of the command line as CLI11 parsed it: structured provenance that a tool reads
/// back without re-tokenising the recorded command (`ropesim merge`).
struct CommandWord {
  std::string text;    ///< the word as given (argv[i], unquoted)
  std::string option;  ///< the option it belongs to, by its first name ("--out" for `-o F`); ""
                       ///< for a sub-command or a positional argument
  /// "name" (the option's name), "value" (the option's value, after its name), "name=value"
  /// (both in one word: `--out=F`, `-oF`; the value starts at `value_at`), or "word".
  std::string role = "word";
  std::size_t value_at = 0;
};

/// Records the words after "ropesim" as the parser saw them (main, after CLI11's parse).
void set_command_words(std::vector<CommandWord> words);
/// The recorded words (empty before set_command_words).
const std::vector<CommandWord>& recorded_command_words();
/// A word as JSON: {"word", "option", "role"} (+ "value_at" for "name=value"), and back;
/// from_json returns nullopt for anything else.
nlohmann::json to_json(const CommandWord& w);
std::optional<CommandWord> command_word_from_json(const nlohmann::json& j);

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
/// is larger than kMaxInputFileBytes (numeric/budget.hpp), the most ropesim reads.
void write_model_spec(const std::string& path, const nlohmann::json& spec);

/// The bytes write_model_spec writes for `spec` (`spec.dump(2)` and a newline).
std::string model_spec_text(const nlohmann::json& spec);

/// SHA-256 of `bytes` as 64 lowercase hexadecimal digits (OpenSSL's EVP_Digest, FIPS 180-4):
/// how a compile certificate names the model file it is about (`model_sha256`).
std::string sha256_hex(const std::string& bytes);

/// `word` as one shell word: unchanged if it has only safe characters, else in single quotes
/// (how the recorded command quotes each argument, so it can be pasted back).
std::string shell_word(const std::string& word);

/// One cell as text ("-" for null, shortest round-trip for numbers).
std::string cell_text(const nlohmann::json& cell);

/// The flags of a realised value (numeric::Flags bits: overflow, invalid) as text: "overflow",
/// "NaN" (invalid: some step produced NaN), "overflow,NaN", or "-" for none (rotations
/// --position, rotate).
std::string flags_text(std::uint8_t flags);

}  // namespace ropesim::cli
