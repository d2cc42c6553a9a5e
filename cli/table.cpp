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
  if (accepted.size() == 1 && io::output_target(path, flag).mode != io::OutputMode::replace)
    return *accepted.begin();
  throw InvalidArgument(flag + ": unknown " + role + " extension '" + ext + "' in '" + path + "'" +
                        expected);
}

}  // namespace ropesim::cli
