// The shard files of `ropesim merge` taken apart (cli/merge_shards.hpp).
#include "cli/merge_shards.hpp"

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
#include "cli/table.hpp"
#include "core/error.hpp"

namespace ropesim::cli {

namespace {

std::string read_all(const std::string& path) {
  return io::read_input_file(
      path, "shard file written by ropesim sweep or table with --shard I/N --out FILE",
      "merge: '" + path + "'");
}

/// The lines of `text`, each with its '\n'; in CSV a line break inside a quoted cell does not
/// end the record.
std::vector<std::string> records(const std::string& text, bool csv_quotes) {
  std::vector<std::string> out;
  std::string current;
  bool quoted = false;
  for (char c : text) {
    current += c;
    if (csv_quotes && c == '"') quoted = !quoted;
    if (c == '\n' && !quoted) {
      out.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

std::string without_newline(const std::string& line) {
  return !line.empty() && line.back() == '\n' ? line.substr(0, line.size() - 1) : line;
}

/// Splits "ropesim V (commit C); command: CMD" into writer and command.
bool split_provenance(const std::string& line, ShardFile& f) {
  const std::size_t at = line.find("; command: ");
  if (line.rfind("ropesim ", 0) != 0 || at == std::string::npos) return false;
  f.writer = line.substr(0, at);
  f.command = line.substr(at + 11);
  return true;
}

std::string not_ours(const std::string& path, OutputKind kind, const std::string& what) {
  return "'" + path + "' is not a " + kind_name(kind) + " table written by ropesim (" + what +
         "); accepted: files written by ropesim sweep or table with --shard I/N --out FILE";
}

std::string no_shard(const std::string& path) {
  return "'" + path +
         "' has no shard record (written without --shard?); accepted: the files of one run with "
         "--shard 1/N ... N/N";
}

std::string no_words(const std::string& path) {
  return "'" + path +
         "' has no command words after its shard record (written by an older ropesim?); "
         "accepted: the shard files of one run of this ropesim";
}

/// Reads the recorded words (a JSON list of CommandWord) and checks that they spell the
/// recorded command (shell_word quoting), so the two cannot disagree.
void set_words(const nlohmann::json& list, ShardFile& f) {
  if (!list.is_array()) fail(no_words(f.path));
  std::string spelled = "ropesim";
  for (const auto& item : list) {
    const auto w = command_word_from_json(item);
    if (!w) fail(no_words(f.path));
    spelled += " " + shell_word(w->text);
    f.words.push_back(*w);
  }
  if (spelled != f.command) {
    fail("'" + f.path +
         "': its command words do not spell its recorded command (edited?); accepted: shard "
         "files as ropesim wrote them");
  }
}

/// "command words: [...]" (the text after the comment prefix).
void read_words(const std::string& text, ShardFile& f) {
  const std::string prefix = "command words: ";
  if (text.rfind(prefix, 0) != 0) fail(no_words(f.path));
  nlohmann::json list;
  try {
    list = nlohmann::json::parse(text.substr(prefix.size()));
  } catch (const nlohmann::json::exception&) {
    fail(no_words(f.path));
  }
  set_words(list, f);
}

/// Options that may differ between the shards of one run, by the option's first name (as
/// CLI11 recorded it in the command words): which shard, where it was written, threads,
/// progress and the terminal view (files carry every column whatever --columns says).
bool run_option(const std::string& option) {
  for (const char* name : {"--shard", "--out", "--jobs", "--threads", "--columns", "--quiet",
                           "--progress", "--no-progress", "--json"}) {
    if (option == name) return true;
  }
  return false;
}

}  // namespace

std::string first_difference(const std::string& a, const std::string& b) {
  std::vector<std::string> wa, wb;
  for (std::string_view text : {std::string_view(a), std::string_view(b)}) {
    auto& words = text.data() == a.data() ? wa : wb;
    std::size_t i = 0;
    while (i < text.size()) {
      const std::size_t j = std::min(text.find(' ', i), text.size());
      if (j > i) words.emplace_back(text.substr(i, j - i));
      i = j + 1;
    }
  }
  std::size_t k = 0;
  while (k < wa.size() && k < wb.size() && wa[k] == wb[k]) ++k;
  const auto around = [&](const std::vector<std::string>& w) {
    if (k >= w.size()) return std::string("(nothing)");
    return (k > 0 ? w[k - 1] + " " : std::string()) + w[k];
  };
  return "'" + around(wa) + "' vs '" + around(wb) + "'";
}

const char* kind_name(OutputKind kind) {
  switch (kind) {
    case OutputKind::csv:
      return "CSV";
    case OutputKind::markdown:
      return "Markdown";
    case OutputKind::json:
      return "JSON";
    case OutputKind::latex:
      return "LaTeX";
  }
  return "?";
}

[[noreturn]] void fail(const std::string& message) { throw InvalidArgument("merge: " + message); }

ShardFile read_text_shard(const std::string& path, OutputKind kind) {
  ShardFile f;
  f.path = path;
  const auto lines = records(read_all(path), kind == OutputKind::csv);
  auto line = [&](std::size_t i) {
    return i < lines.size() ? without_newline(lines[i]) : std::string();
  };
  std::size_t first_row = 0, end_row = 0;
  if (kind == OutputKind::csv || kind == OutputKind::latex) {
    const std::string comment = kind == OutputKind::csv ? "# " : "% ";
    if (line(0).rfind(comment, 0) != 0 || !split_provenance(line(0).substr(2), f)) {
      throw InvalidArgument("merge: " + not_ours(path, kind, "line 1 is not its provenance"));
    }
    const auto record =
        line(1).rfind(comment, 0) == 0 ? parse_shard_line(line(1).substr(2)) : std::nullopt;
    if (!record) fail(no_shard(path));
    f.record = *record;
    if (line(2).rfind(comment, 0) != 0) fail(no_words(path));
    read_words(line(2).substr(2), f);
    if (kind == OutputKind::csv) {
      if (lines.size() < 4) fail(not_ours(path, kind, "no header line"));
      f.header = lines[3];
      first_row = 4;
      end_row = lines.size();
    } else {
      // % needs \usepackage{booktabs}, \begin{tabular}, \toprule, header, \midrule, rows,
      // \bottomrule, \end{tabular}, then the notes, if any: \par\smallskip and one line
      // per note (Table::to_latex, latex_notes_block)
      std::size_t end = lines.size();
      if (end > 0 && line(end - 1).rfind("{\\footnotesize\\textsuperscript{", 0) == 0) {
        while (end > 0 && line(end - 1).rfind("{\\footnotesize\\textsuperscript{", 0) == 0) --end;
        if (end == 0 || line(end - 1) != "\\par\\smallskip")
          fail(not_ours(path, kind, "notes without \\par\\smallskip"));
        for (std::size_t i = end; i < lines.size(); ++i) {
          // {\footnotesize\textsuperscript{LETTER}\,NOTE\par}
          const std::string note = line(i);
          const std::string head = "{\\footnotesize\\textsuperscript{", tail = "\\par}";
          const std::size_t close = note.find("}\\,", head.size());
          if (close == std::string::npos || note.size() < close + 3 + tail.size() ||
              note.compare(note.size() - tail.size(), tail.size(), tail) != 0) {
            fail(not_ours(path, kind, "a note line of another layout"));
          }
          f.notes[note.substr(head.size(), close - head.size())] =
              note.substr(close + 3, note.size() - tail.size() - close - 3);
        }
        --end;
      }
      if (end < 10 || line(3).rfind("% needs ", 0) != 0 ||
          line(4).rfind("\\begin{tabular}{", 0) != 0 || line(5) != "\\toprule" ||
          line(7) != "\\midrule" || line(end - 2) != "\\bottomrule" ||
          line(end - 1) != "\\end{tabular}") {
        fail(not_ours(path, kind, "not a tabular of ropesim's layout"));
      }
      f.header = lines[3] + lines[4] + lines[5] + lines[6] + lines[7];
      f.footer = lines[end - 2] + lines[end - 1];
      first_row = 8;
      end_row = end - 2;
    }
  } else {  // Markdown: "Made by ropesim V (commit C): `CMD`", "", shard line, "", header, rule,
            // rows
    const std::string made = line(0);
    const std::size_t at = made.find("): `");
    if (made.rfind("Made by ropesim ", 0) != 0 || at == std::string::npos || made.back() != '`') {
      fail(not_ours(path, kind, "line 1 is not its provenance"));
    }
    f.writer = made.substr(8, at + 1 - 8);
    f.command = made.substr(at + 4, made.size() - at - 5);
    const auto record = line(1).empty() ? parse_shard_line(line(2)) : std::nullopt;
    if (!record || !line(3).empty()) fail(no_shard(path));
    f.record = *record;
    if (!line(5).empty()) fail(no_words(path));
    read_words(line(4), f);
    if (lines.size() < 8 || line(6).rfind("|", 0) != 0 || line(7).rfind("|---|", 0) != 0) {
      fail(not_ours(path, kind, "no table header"));
    }
    f.header = lines[6] + lines[7];
    first_row = 8;
    end_row = lines.size();
  }
  for (std::size_t i = first_row; i < end_row; ++i) {
    if (lines[i].empty() || lines[i].back() != '\n')
      fail(not_ours(path, kind, "the last line is cut off"));
    f.rows.push_back(lines[i]);
  }
  return f;
}

std::string reletter(const std::string& row, const ShardFile& shard,
                     std::vector<std::string>& notes) {
  const std::string prefix = latex_note_mark_prefix;
  std::string out;
  std::size_t at = 0;
  for (std::size_t mark = row.find(prefix); mark != std::string::npos;
       mark = row.find(prefix, at)) {
    const std::size_t letter_at = mark + prefix.size();
    const std::size_t close = row.find("}}", letter_at);
    const auto note = close == std::string::npos
                          ? shard.notes.end()
                          : shard.notes.find(row.substr(letter_at, close - letter_at));
    if (note == shard.notes.end())
      fail(not_ours(shard.path, OutputKind::latex, "a note mark without its note"));
    auto known = std::find(notes.begin(), notes.end(), note->second);
    if (known == notes.end()) known = notes.insert(notes.end(), note->second);
    out += row.substr(at, mark - at) +
           latex_note_mark(note_letter(static_cast<std::size_t>(known - notes.begin())));
    at = close + 2;
  }
  return out + row.substr(at);
}

ShardFile read_json_shard(const std::string& path) {
  ShardFile f;
  f.path = path;
  const std::string text = read_all(path);
  try {
    f.json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    fail(not_ours(path, OutputKind::json, "not valid JSON"));
  }
  const auto& j = f.json;
  if (!j.is_object() || j.size() != 2 || !j.contains("provenance") || !j.contains("rows") ||
      !j["rows"].is_array() || !j["provenance"].is_object() ||
      !j["provenance"].contains("command") || !j["provenance"]["command"].is_string()) {
    fail(not_ours(path, OutputKind::json, "no provenance and rows"));
  }
  // Merging re-renders the rows: only a file that reads back to the same bytes merges exactly.
  if (j.dump(2) + "\n" != text)
    fail(not_ours(path, OutputKind::json,
                  "it does not read back to the same bytes; was it edited?"));
  const auto& p = j["provenance"];
  if (!p.contains("shard")) fail(no_shard(path));
  const auto& s = p["shard"];
  auto whole = [&](const char* key) {
    if (!s.is_object() || !s.contains(key) || !s[key].is_number_unsigned()) fail(no_shard(path));
    return s[key].get<std::uint64_t>();
  };
  f.record = ShardRecord{Shard{whole("index"), whole("count")}, whole("rows")};
  if (s.size() != 4 || !s.contains("words") || f.record.shard.count < 1 ||
      f.record.shard.count > kMaxShards || f.record.shard.index < 1 ||
      f.record.shard.index > f.record.shard.count) {
    fail(no_shard(path));
  }
  f.command = p["command"].get<std::string>();
  set_words(s["words"], f);
  nlohmann::json writer = p;
  writer.erase("shard");
  writer.erase("command");
  f.writer = writer.dump();
  for (const auto& row : j["rows"]) {
    if (!row.is_object()) fail(not_ours(path, OutputKind::json, "a row is not an object"));
  }
  // (no header to compare: rows are objects, and an empty shard has none; the command decides)
  return f;
}

std::string computation(const std::vector<CommandWord>& words) {
  std::string out = "ropesim";
  for (const auto& w : words)
    if (!run_option(w.option)) out += " " + shell_word(w.text);
  return out;
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> requested_shard(
    const std::vector<CommandWord>& words) {
  std::string value;
  for (const auto& w : words) {
    if (w.option != "--shard") continue;
    if (w.role == "value") value = w.text;
    if (w.role == "name=value") value = w.text.substr(w.value_at);
  }
  try {
    const Shard s = parse_shard(value);
    return std::make_pair(s.index, s.count);
  } catch (const InvalidArgument&) {
    return std::nullopt;
  }
}

std::string single_run_command(const std::vector<CommandWord>& words, const std::string& out) {
  std::string text = "ropesim";
  for (const auto& w : words) {
    if (w.option == "--shard") continue;
    if (w.option == "--out" && w.role == "value") {
      text += " " + shell_word(out);
    } else if (w.option == "--out" && w.role == "name=value") {
      text += " " + shell_word(w.text.substr(0, w.value_at) + out);
    } else {
      text += " " + shell_word(w.text);
    }
  }
  return text;
}

}  // namespace ropesim::cli
