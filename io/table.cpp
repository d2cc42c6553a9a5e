// io::Table and its views: text, CSV, Markdown, JSON (io/table.hpp); LaTeX in table_latex.cpp.
#include "io/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"
#include "core/lists.hpp"
#include "core/suggest.hpp"
#include "io/files.hpp"
#include "numeric/decimal_text.hpp"

namespace ropesim::io {

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
                            ropesim::did_you_mean(name, columns) +
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

Table Table::for_terminal(const std::string& columns_flag) const {
  if (columns_flag == "all") return select(columns);
  if (columns_flag.empty())
    return terminal_columns.empty() ? select(columns) : select(terminal_columns);
  // No empty item ('name,,p'), no column twice (core/lists.hpp).
  return select(ropesim::split_items(columns_flag, ',', "--columns", ropesim::Repeats::items));
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
  if (output_target(path, flag).mode != OutputMode::replace) {
    if (accepted.size() == 1) return *accepted.begin();
    if (role == "output")
      throw InvalidArgument(flag + ": '" + path +
                            "' is a device or pipe, whose name does not say the kind of table" +
                            expected + " (a symbolic link such as out.csv -> " + path +
                            "), or no " + flag + " to print the result on stdout");
  }
  throw InvalidArgument(flag + ": unknown " + role + " extension '" + ext + "' in '" + path + "'" +
                        expected);
}

}  // namespace ropesim::io

namespace ropesim::io {

namespace {

const char* const kTableMembers[] = {"columns",         "rows",        "json_extra",
                                     "json_numbers",    "latex_cells", "numeric_columns",
                                     "terminal_columns"};

std::vector<std::string> names(const nlohmann::json& j, const char* member) {
  std::vector<std::string> out;
  for (const auto& item : j.at(member)) {
    if (!item.is_string())
      throw InvalidArgument(std::string("table: '") + member + "' holds a non-string");
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

nlohmann::json table_to_json(const Table& table) {
  return {{"columns", table.columns},
          {"rows", table.rows},
          {"json_extra", table.json_extra},
          {"json_numbers", table.json_numbers},
          {"latex_cells", table.latex_cells},
          {"numeric_columns", table.numeric_columns},
          {"terminal_columns", table.terminal_columns}};
}

Table table_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw InvalidArgument("table: not a JSON object (io::table_to_json)");
  for (const char* member : kTableMembers) {
    if (!j.contains(member) || !j[member].is_array()) {
      throw InvalidArgument(std::string("table: '") + member +
                            "' is missing or not a list; accepted: io::table_to_json's object");
    }
  }
  Table t;
  t.columns = names(j, "columns");
  t.numeric_columns = names(j, "numeric_columns");
  t.terminal_columns = names(j, "terminal_columns");
  for (const auto& row : j["rows"]) {
    if (!row.is_array() || row.size() != t.columns.size()) {
      throw InvalidArgument("table: a row of " + std::to_string(row.size()) + " cells under " +
                            std::to_string(t.columns.size()) + " columns");
    }
    t.rows.push_back(row.get<std::vector<nlohmann::json>>());
  }
  t.json_extra = j["json_extra"].get<std::vector<nlohmann::json>>();
  t.json_numbers = j["json_numbers"].get<std::vector<nlohmann::json>>();
  t.latex_cells = j["latex_cells"].get<std::vector<nlohmann::json>>();
  return t;
}

Table join_tables(const std::vector<Table>& parts) {
  if (parts.empty()) throw InvalidArgument("table: no parts to join");
  Table t = parts.front();
  // a member used by any part is padded to the rows before it (an absent entry is no change)
  const auto extend = [](std::vector<nlohmann::json>& into, std::size_t rows_before,
                         const std::vector<nlohmann::json>& from) {
    if (from.empty()) return;
    into.resize(rows_before, nlohmann::json::object());
    into.insert(into.end(), from.begin(), from.end());
  };
  for (std::size_t k = 1; k < parts.size(); ++k) {
    const Table& p = parts[k];
    if (p.columns != t.columns) {
      throw InvalidArgument("table: part " + std::to_string(k + 1) +
                            " has other columns than part 1; accepted: parts of one table");
    }
    const std::size_t before = t.rows.size();
    extend(t.json_extra, before, p.json_extra);
    extend(t.json_numbers, before, p.json_numbers);
    extend(t.latex_cells, before, p.latex_cells);
    t.rows.insert(t.rows.end(), p.rows.begin(), p.rows.end());
  }
  return t;
}

}  // namespace ropesim::io
