#include "cli/table.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "attention/realisation.hpp"
#include "io/files.hpp"
#include "numeric/budget.hpp"
#include "numeric/decimal_text.hpp"
#include "numeric/error.hpp"
#include "numeric/flags.hpp"
#include "numeric/libm.hpp"
#include "numeric/lists.hpp"
#include "numeric/suggest.hpp"
#include "numeric/version.hpp"

namespace ropesim::cli {

std::string cell_text(const nlohmann::json& cell) {
  if (cell.is_null()) return "-";
  if (cell.is_string()) return cell.get<std::string>();
  if (cell.is_boolean()) return cell.get<bool>() ? "yes" : "no";
  if (cell.is_number_float()) return fmt::format("{}", cell.get<double>());
  if (cell.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < cell.size(); ++i) out += (i ? ", " : "") + cell_text(cell[i]);
    return out + "]";
  }
  return cell.dump();
}

Table Table::select(const std::vector<std::string>& names) const {
  Table t;
  t.json_extra = json_extra;
  // json_numbers follow their columns: kept only when the column is selected (with its
  // "_exact" companion).
  for (const auto& extra : json_numbers) {
    nlohmann::json kept = nlohmann::json::object();
    if (extra.is_object()) {
      for (const auto& [key, value] : extra.items()) {
        const std::string base = key.size() > 6 && key.compare(key.size() - 6, 6, "_exact") == 0
                                     ? key.substr(0, key.size() - 6)
                                     : key;
        if (std::find(names.begin(), names.end(), base) != names.end()) kept[key] = value;
      }
    }
    t.json_numbers.push_back(std::move(kept));
  }
  for (const auto& extra : latex_cells) {
    nlohmann::json kept = nlohmann::json::object();
    if (extra.is_object()) {
      for (const auto& [key, value] : extra.items()) {
        if (std::find(names.begin(), names.end(), key) != names.end()) kept[key] = value;
      }
    }
    t.latex_cells.push_back(std::move(kept));
  }
  for (const auto& name : names) {
    if (std::find(numeric_columns.begin(), numeric_columns.end(), name) != numeric_columns.end())
      t.numeric_columns.push_back(name);
  }
  std::vector<std::size_t> index;
  for (const auto& name : names) {
    const auto it = std::find(columns.begin(), columns.end(), name);
    if (it == columns.end()) {
      std::string list;
      for (const auto& c : columns) list += (list.empty() ? "" : " ") + c;
      throw InvalidArgument("--columns: unknown column '" + name + "'" +
                            numeric::did_you_mean(name, columns) +
                            "; accepted: all, or some of: " + list);
    }
    index.push_back(static_cast<std::size_t>(it - columns.begin()));
    t.columns.push_back(name);
  }
  for (const auto& row : rows) {
    std::vector<nlohmann::json> r;
    for (std::size_t i : index) r.push_back(i < row.size() ? row[i] : nlohmann::json(nullptr));
    t.rows.push_back(std::move(r));
  }
  return t;
}

Table Table::for_files(const std::string& columns_flag) const {
  return columns_flag.empty() ? select(columns) : for_terminal(columns_flag);
}

void write_and_print(const Table& table, const std::optional<OutputKind>& kind,
                     const std::string& out, const std::optional<ShardRecord>& shard, bool json,
                     bool quiet, const std::string& columns) {
  if (shard && !columns.empty()) {
    throw InvalidArgument(
        "--columns: a shard file keeps every column (ropesim merge needs them); accepted: "
        "--columns without --shard, or on ropesim merge");
  }
  const Table file = table.for_files(columns);
  const Table terminal = table.for_terminal(columns);
  if (kind) io::write_output_file(out, render(file, *kind, shard));
  if (quiet && kind) return;
  if (json) {
    std::cout << file.to_json().dump(2) << "\n";
  } else {
    std::cout << terminal.to_text();
  }
}

Table Table::for_terminal(const std::string& columns_flag) const {
  if (columns_flag == "all") return select(columns);
  if (columns_flag.empty())
    return terminal_columns.empty() ? select(columns) : select(terminal_columns);
  // No empty item ('name,,p'), no column twice (numeric/lists.hpp).
  return select(numeric::split_items(columns_flag, ',', "--columns", numeric::Repeats::items));
}

std::string Table::to_text() const {
  std::vector<std::size_t> width(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) width[c] = columns[c].size();
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], cell_text(row[c]).size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      out += fmt::format("{:<{}}", cells[c], width[c]);
      out += c + 1 < cells.size() ? "  " : "\n";
    }
  };
  line(columns);
  for (const auto& row : rows) {
    std::vector<std::string> cells;
    for (const auto& cell : row) cells.push_back(cell_text(cell));
    line(cells);
  }
  return out;
}

namespace {
std::string csv_escape(const std::string& s) {
  // '#' is quoted too, so that a reader skipping comment lines (pandas.read_csv(path,
  // comment='#')) never cuts a cell: pandas ignores '#' inside quotes.
  if (s.find_first_of(",\"\n#") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}
std::string latex_escape(const std::string& text) {
  // Unicode symbols the tables use, as math-mode commands (pdflatex has no glyphs for them).
  std::string s = text;
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"->", "\x01to\x02"},
                                 {"θ", "\x01theta\x02"},
                                 {"π", "\x01pi\x02"},
                                 {"≥", "\x01geq\x02"},
                                 {"≤", "\x01leq\x02"},
                                 {"δ",
                                  "\x01"
                                  "delta\x02"}}) {
    for (std::size_t at = s.find(from); at != std::string::npos;
         at = s.find(from, at + to.size())) {
      s.replace(at, from.size(), to);
    }
  }
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '_':
        out += "\\_";
        break;
      case '%':
        out += "\\%";
        break;
      case '&':
        out += "\\&";
        break;
      case '#':
        out += "\\#";
        break;
      case '$':
        out += "\\$";
        break;
      case '^':
        out += "\\^{}";
        break;
      case '\\':
        out += "\\textbackslash{}";
        break;
      case '{':
        out += "\\{";
        break;
      case '}':
        out += "\\}";
        break;
      case '~':
        out += "\\textasciitilde{}";
        break;
      case '\x01':
        out += "$\\";
        break;
      case '\x02':
        out += "$";
        break;
      default:
        out += ch;
    }
  }
  return out;
}
}  // namespace

std::string Table::to_csv() const {
  std::string out;
  for (std::size_t c = 0; c < columns.size(); ++c) out += (c ? "," : "") + csv_escape(columns[c]);
  out += "\n";
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      // a binary64 number as a decimal that pandas' default reader also reads exactly where
      // one exists (numeric/decimal_text.hpp); the rest as the other views show them
      const std::string text = row[c].is_null() ? std::string()
                               : row[c].is_number_float()
                                   ? numeric::csv_decimal(row[c].get<double>())
                                   : cell_text(row[c]);
      out += (c ? "," : "") + csv_escape(text);
    }
    out += "\n";
  }
  return out;
}

namespace {

/// A Markdown table cell: `|` written as `\|` so that a schedule such as
/// `liere:axes=2,blocks=1/4|1/6` stays one cell.
std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace

std::string Table::to_markdown() const {
  std::string out = "|";
  for (const auto& c : columns) out += " " + markdown_cell(c) + " |";
  out += "\n|";
  for (std::size_t c = 0; c < columns.size(); ++c) out += "---|";
  out += "\n";
  for (const auto& row : rows) {
    out += "|";
    for (const auto& cell : row) out += " " + markdown_cell(cell_text(cell)) + " |";
    out += "\n";
  }
  return out;
}

std::string latex_header(const std::string& column) {
  static const std::vector<std::pair<std::string, std::string>> symbols = {
      {"n_max", "$N_{\\max}$"},
      {"f_large", "$f_{\\mathrm{large}}$"},
      {"unit_roundoff", "$u$"},
      {"min_positive", "$\\min F_{>0}$"},
      {"emin", "$e_{\\min}$"},
      {"emax", "$e_{\\max}$"},
      {"tie_cap", "$\\pi\\sqrt{2/u}$"},
      {"heuristic", "$\\pi\\sqrt{2C/f_{\\mathrm{large}}}-1$"},
      {"delta_bound", "exact bound ($C\\delta_L \\geq f_{\\mathrm{large}}$)"},
      {"T_train", "$T_{\\mathrm{train}}$"},
      {"T_extra", "$T_{\\mathrm{extra}}$"},
      {"d_extra", "$d_{\\mathrm{extra}}$"},
      {"p-n", "$p-n$"},
  };
  for (const auto& [name, symbol] : symbols) {
    if (column == name) return symbol;
  }
  const std::string at_limit = "_at_limit";
  if (column.size() > at_limit.size() &&
      column.compare(column.size() - at_limit.size(), at_limit.size(), at_limit) == 0) {
    return latex_header(column.substr(0, column.size() - at_limit.size())) + " at limit";
  }
  if (column.size() == 1 && std::isalpha(static_cast<unsigned char>(column[0])) != 0)
    return "$" + column + "$";
  // Words as text (underscores read as spaces); cos and sin as the functions.
  std::string text = column;
  std::replace(text.begin(), text.end(), '_', ' ');
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (word == "cos" || word == "sin") {
      word = "$\\" + word + "$";
    } else if (word == "s*cos" || word == "s*sin") {
      word = "$s\\" + word.substr(2) + "$";
    } else {
      word = latex_escape(word);
    }
    out += (start ? " " : "") + word;
    start = end + 1;
  }
  return out;
}

namespace {

/// A decimal number as text: "-12", "0.5", "1.5e-05", "2e+20" (what cell_text prints for numbers).
bool is_decimal_number(const std::string& text) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) ++i;
    return i > from;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (!digits()) return false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

/// One cell of a LaTeX table: numbers (and decimal strings) with an exponent as
/// $m\times10^{e}$, null as --, the rest as escaped text.
std::string latex_cell(const nlohmann::json& cell) {
  if (cell.is_null()) return "--";
  const std::string text = cell_text(cell);
  if (cell.is_number() || (cell.is_string() && is_decimal_number(text))) {
    const std::size_t e = text.find_first_of("eE");
    if (e != std::string::npos) {
      std::string exponent = text.substr(e + 1);
      if (!exponent.empty() && exponent[0] == '+') exponent.erase(0, 1);
      while (exponent.size() > 1 && exponent[0] == '0') exponent.erase(0, 1);
      if (exponent.size() > 2 && exponent[0] == '-' && exponent[1] == '0')
        exponent.erase(1, exponent.find_first_not_of('0', 1) - 1);
      return "$" + text.substr(0, e) + "\\times10^{" + exponent + "}$";
    }
  }
  // a power of two too large or small for a double ("2^-16434", formats' unit_roundoff)
  if (cell.is_string() && text.size() > 2 && text.compare(0, 2, "2^") == 0 &&
      is_decimal_number(text.substr(2)) && text.find_first_of(".eE") == std::string::npos) {
    return "$2^{" + text.substr(2) + "}$";
  }
  return latex_escape(text);
}

}  // namespace

std::string note_letter(std::size_t index) {
  std::string letters;
  for (std::size_t n = index + 1; n > 0; n = (n - 1) / 26)
    letters.insert(letters.begin(), static_cast<char>('a' + (n - 1) % 26));
  return letters;
}

std::string latex_note_mark(const std::string& letter) {
  return std::string(latex_note_mark_prefix) + letter + "}}";
}

std::string latex_notes_block(const std::vector<std::string>& notes) {
  if (notes.empty()) return "";
  std::string out = "\\par\\smallskip\n";
  for (std::size_t i = 0; i < notes.size(); ++i)
    out += "{\\footnotesize\\textsuperscript{" + note_letter(i) + "}\\," + notes[i] + "\\par}\n";
  return out;
}

std::string Table::to_latex() const {
  // Numeric columns right-aligned, the others left-aligned: declared per column, never read
  // from the rows, so that the shards of a run (--shard) merge into the single run's file byte
  // for byte (ropesim merge).
  std::string align;
  for (const auto& c : columns) {
    align += std::find(numeric_columns.begin(), numeric_columns.end(), c) != numeric_columns.end()
                 ? 'r'
                 : 'l';
  }
  std::string out = "% needs \\usepackage{booktabs}\n\\begin{tabular}{" + align + "}\n\\toprule\n";
  for (std::size_t c = 0; c < columns.size(); ++c)
    out += (c ? " & " : "") + latex_header(columns[c]);
  out += " \\\\\n\\midrule\n";
  std::vector<std::string> notes;  // in order of first appearance
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    const nlohmann::json* paper =
        r < latex_cells.size() && latex_cells[r].is_object() ? &latex_cells[r] : nullptr;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const nlohmann::json* over =
          paper && paper->contains(columns[c]) ? &(*paper)[columns[c]] : nullptr;
      std::string cell = latex_cell(over && over->contains("cell") ? (*over)["cell"] : row[c]);
      if (over && over->contains("note") && (*over)["note"].is_string()) {
        const std::string note = (*over)["note"];
        auto at = std::find(notes.begin(), notes.end(), note);
        if (at == notes.end()) at = notes.insert(notes.end(), note);
        cell += latex_note_mark(note_letter(static_cast<std::size_t>(at - notes.begin())));
      }
      out += (c ? " & " : "") + cell;
    }
    out += " \\\\\n";
  }
  return out + "\\bottomrule\n\\end{tabular}\n" + latex_notes_block(notes);
}

nlohmann::json Table::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    nlohmann::json object = nlohmann::json::object();
    for (std::size_t c = 0; c < columns.size(); ++c) object[columns[c]] = rows[r][c];
    if (r < json_numbers.size() && json_numbers[r].is_object()) object.update(json_numbers[r]);
    if (r < json_extra.size() && json_extra[r].is_object()) object.update(json_extra[r]);
    list.push_back(object);
  }
  return list;
}

OutputKind output_kind_for(const std::string& path, const std::string& flag,
                           std::initializer_list<OutputKind> accepted, const std::string& role) {
  auto extension_of = [](OutputKind k) {
    switch (k) {
      case OutputKind::csv:
        return ".csv";
      case OutputKind::markdown:
        return ".md";
      case OutputKind::json:
        return ".json";
      case OutputKind::latex:
        return ".tex";
    }
    return "";
  };
  std::string extensions;
  for (const OutputKind k : accepted)
    extensions += std::string(extensions.empty() ? "" : " ") + extension_of(k);
  const std::string expected = "; accepted: a path ending in " + extensions;
  if (path.empty()) throw InvalidArgument(flag + ": empty file name" + expected);
  const std::string ext = std::filesystem::path(path).extension().string();
  for (const OutputKind k : all_output_kinds) {
    if (ext != extension_of(k)) continue;
    if (std::find(accepted.begin(), accepted.end(), k) == accepted.end()) {
      throw InvalidArgument(flag + ": '" + path + "' is a " + ext +
                            " file, which this command does not write" + expected);
    }
    return k;
  }
  // A device, FIFO or descriptor (/dev/null, /dev/stdout, a pipe) has no name to read the kind
  // from: where the flag writes one kind only, it gets that kind, as any Unix tool's output.
  if (accepted.size() == 1 && io::output_target(path, flag).mode != io::OutputMode::replace)
    return *accepted.begin();
  throw InvalidArgument(flag + ": unknown " + role + " extension '" + ext + "' in '" + path + "'" +
                        expected);
}

namespace {
std::string& recorded_command() {
  static std::string command = "ropesim";
  return command;
}

}  // namespace

std::string shell_word(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "-_=.,:/+@%^") == std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

namespace {
std::vector<CommandWord>& command_words_store() {
  static std::vector<CommandWord> words;
  return words;
}
}  // namespace

void set_command_words(std::vector<CommandWord> words) { command_words_store() = std::move(words); }

const std::vector<CommandWord>& recorded_command_words() { return command_words_store(); }

nlohmann::json to_json(const CommandWord& w) {
  nlohmann::json j = {{"word", w.text}, {"option", w.option}, {"role", w.role}};
  if (w.role == "name=value") j["value_at"] = w.value_at;
  return j;
}

std::optional<CommandWord> command_word_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("word") || !j["word"].is_string() || !j.contains("option") ||
      !j["option"].is_string() || !j.contains("role") || !j["role"].is_string()) {
    return std::nullopt;
  }
  CommandWord w{j["word"], j["option"], j["role"], 0};
  if (w.role == "name=value") {
    if (!j.contains("value_at") || !j["value_at"].is_number_unsigned()) return std::nullopt;
    w.value_at = j["value_at"];
    if (w.value_at == 0 || w.value_at > w.text.size()) return std::nullopt;
  } else if (w.role != "name" && w.role != "value" && w.role != "word") {
    return std::nullopt;
  }
  if (j.size() != (w.role == "name=value" ? 4u : 3u)) return std::nullopt;
  return w;
}

void set_command_line(int argc, char** argv) {
  std::string command = "ropesim";
  for (int i = 1; i < argc; ++i) command += " " + shell_word(argv[i]);
  recorded_command() = std::move(command);
}

nlohmann::json provenance() {
  return {{"tool", "ropesim"},
          {"version", std::string(ropesim::version())},
          {"commit", std::string(ropesim::source_commit())},
          {"command", recorded_command()},
          // the math libraries the :glibc and :sleef-u10 pipeline steps call: another glibc
          // may give other bits (numeric/libm.hpp)
          {"libm", {{"glibc", numeric::glibc_version()}, {"sleef", numeric::sleef_version()}}}};
}

std::string provenance_line() {
  return "ropesim " + std::string(ropesim::version()) + " (commit " +
         std::string(ropesim::source_commit()) + "); command: " + recorded_command();
}

std::string render(const Table& table, OutputKind kind, const std::optional<ShardRecord>& shard) {
  std::string line = provenance_line();
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  const std::string shard_text = shard ? shard_line(*shard) : std::string();
  nlohmann::json words = nlohmann::json::array();
  for (const auto& w : recorded_command_words()) words.push_back(to_json(w));
  const std::string words_text = "command words: " + words.dump();
  switch (kind) {
    case OutputKind::csv:
      return "# " + line + "\n" + (shard ? "# " + shard_text + "\n# " + words_text + "\n" : "") +
             table.to_csv();
    case OutputKind::markdown:
      return "Made by ropesim " + std::string(ropesim::version()) + " (commit " +
             std::string(ropesim::source_commit()) + "): `" + recorded_command() + "`\n\n" +
             (shard ? shard_text + "\n\n" + words_text + "\n\n" : "") + table.to_markdown();
    case OutputKind::json: {
      nlohmann::json j = {{"provenance", provenance()}, {"rows", table.to_json()}};
      if (shard) {
        j["provenance"]["shard"] = {{"index", shard->shard.index},
                                    {"count", shard->shard.count},
                                    {"rows", shard->total_rows},
                                    {"words", words}};
      }
      return j.dump(2) + "\n";
    }
    case OutputKind::latex:
      return "% " + line + "\n" + (shard ? "% " + shard_text + "\n% " + words_text + "\n" : "") +
             table.to_latex();
  }
  return {};
}

std::string model_spec_text(const nlohmann::json& spec) { return spec.dump(2) + "\n"; }

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &n, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed (OpenSSL EVP_Digest)");
  std::string out;
  for (unsigned int k = 0; k < n; ++k) out += fmt::format("{:02x}", digest[k]);
  return out;
}

void write_model_spec(const std::string& path, const nlohmann::json& spec) {
  const std::string text = model_spec_text(spec);
  if (text.size() > kMaxInputFileBytes) {
    throw BudgetExceeded(
        fmt::format("--out: the model spec would be {} ({} bytes), more than the {} that ropesim "
                    "run reads; nothing written",
                    size_text(static_cast<double>(text.size())), text.size(),
                    size_text(static_cast<double>(kMaxInputFileBytes))));
  }
  io::write_output_file(path, text);
}

std::string flags_text(std::uint8_t flags) {
  std::string s;
  const numeric::Flags raised = numeric::Flags::from_bits(flags);
  if (raised.test(numeric::Flag::overflow)) s += "overflow";
  if (raised.test(numeric::Flag::invalid)) s += s.empty() ? "NaN" : ",NaN";
  return s.empty() ? "-" : s;
}

}  // namespace ropesim::cli
