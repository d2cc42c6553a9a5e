#pragma once
// Tables rendered as files: one set of rows as readable text, CSV, Markdown, LaTeX or JSON
// (the tables of `ropesim sweep`, `table horizon`, `table bounds`, `formats`, and of the Python
// module's ropesim.sweep). The file a table is written to carries the run's provenance
// (io/provenance.hpp); a part of a table computed as one shard of N, its shard record
// (io/shard.hpp). Library target ropesim_tables.
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ropesim::io {

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
/// kind when `accepted` has only one; when it has several, the refusal says that the device's
/// name does not give the kind and how to name one (a symbolic link with the extension).
OutputKind output_kind_for(const std::string& path, const std::string& flag,
                           std::initializer_list<OutputKind> accepted = all_output_kinds,
                           const std::string& role = "output");

/// One cell as text ("-" for null, shortest round-trip for numbers).
std::string cell_text(const nlohmann::json& cell);

/// The whole table as JSON, every member (columns, rows, json_extra, json_numbers,
/// numeric_columns, latex_cells, terminal_columns) under its name: how a part of a table
/// computed in another process (a Dask worker, python/ropesim/dask.py) travels back to be
/// joined and rendered. table_from_json(table_to_json(t)) renders to the same bytes as t
/// (JSON numbers read back as the binary64 they were written from).
nlohmann::json table_to_json(const Table& table);
/// The table of table_to_json; throws ropesim::InvalidArgument naming the member for anything
/// else (a member missing or of another type, a row whose length is not the columns').
Table table_from_json(const nlohmann::json& j);

/// The rows of `parts` one after the other (with their json_extra, json_numbers and
/// latex_cells), under the first part's columns, numeric_columns and terminal_columns: the
/// table of one run from its shards' tables, given in shard order. Throws
/// ropesim::InvalidArgument when `parts` is empty or a part has other columns.
Table join_tables(const std::vector<Table>& parts);

}  // namespace ropesim::io
