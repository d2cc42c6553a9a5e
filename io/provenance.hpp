#pragma once
// The provenance every written table carries (the tool, its version and commit, the libm
// versions, the command that made it) and a table rendered as a file with it. The command is
// given by the caller: the CLI records its argv (cli/table.hpp), the Python module spells the
// command line that computes the same table (python/ropesim/_sweep.py), so that both write the
// same bytes. Library target ropesim_tables.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "io/shard.hpp"
#include "io/table.hpp"

namespace ropesim::io {

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

/// A word as JSON: {"word", "option", "role"} (+ "value_at" for "name=value"), and back;
/// from_json returns nullopt for anything else.
nlohmann::json to_json(const CommandWord& w);
std::optional<CommandWord> command_word_from_json(const nlohmann::json& j);

/// `word` as one shell word: unchanged if it has only safe characters, else in single quotes
/// (how the recorded command quotes each argument, so it can be pasted back).
std::string shell_word(const std::string& word);

/// The command a written file names: `command` is the line recorded ("ropesim sweep …", each
/// word quoted by shell_word), `words` the same words as structured data (written only into
/// shard files, for `ropesim merge`).
struct Provenance {
  std::string command = "ropesim";
  std::vector<CommandWord> words;
};

/// The provenance of a run of `ropesim WORDS...`: command "ropesim" and each word's
/// shell_word, joined by spaces; the words kept as they are.
Provenance provenance_of(std::vector<CommandWord> words);

/// {"tool": "ropesim", "version", "commit", "command", "libm": {"glibc", "sleef"}}: what every
/// written file records (libm: the versions the :glibc and :sleef-u10 pipeline steps call).
nlohmann::json to_json(const Provenance& provenance);

/// One line: "ropesim 0.1.0 (commit abc123def456); command: ropesim …".
std::string provenance_line(const Provenance& provenance);

/// Renders `table` as a file of `kind`, with the provenance first: a comment line in CSV
/// (`# ropesim …`) and LaTeX (`% …`), a "Made by ropesim …: `command`" line in Markdown; in JSON
/// an object `{"provenance": {...}, "rows": [...]}`. (Terminal output stays clean: no
/// provenance.) With `shard` (a run with --shard; `table` holds that shard's rows) the
/// provenance also records the shard: the line shard_line() after the provenance line (as a
/// `#`/`%` comment in CSV/LaTeX, a paragraph in Markdown), then the line "command words: JSON"
/// (provenance.words as a JSON list, same prefix), and in JSON `provenance.shard` =
/// {"index": I, "count": N, "rows": T, "words": [...]}. `ropesim merge` reads them back.
std::string render(const Table& table, OutputKind kind, const Provenance& provenance,
                   const std::optional<ShardRecord>& shard = std::nullopt);

}  // namespace ropesim::io
