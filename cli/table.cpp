#include "cli/table.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "numeric/error.hpp"

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

std::string Table::to_text() const {
  std::vector<std::size_t> width(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) width[c] = columns[c].size();
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], cell_text(row[c]).size());
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
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}
std::string latex_escape(const std::string& text) {
  // Unicode symbols the tables use, as math-mode commands (pdflatex has no glyphs for them).
  std::string s = text;
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"->", "\x01to\x02"},
                                 {"θ", "\x01theta\x02"}, {"π", "\x01pi\x02"}, {"≥", "\x01geq\x02"},
                                 {"≤", "\x01leq\x02"}, {"δ", "\x01" "delta\x02"}}) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
      s.replace(at, from.size(), to);
    }
  }
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '_': out += "\\_"; break;
      case '%': out += "\\%"; break;
      case '&': out += "\\&"; break;
      case '#': out += "\\#"; break;
      case '$': out += "\\$"; break;
      case '^': out += "\\^{}"; break;
      case '\x01': out += "$\\"; break;
      case '\x02': out += "$"; break;
      default: out += ch;
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
      out += (c ? "," : "") + csv_escape(row[c].is_null() ? std::string() : cell_text(row[c]));
    }
    out += "\n";
  }
  return out;
}

std::string Table::to_markdown() const {
  std::string out = "|";
  for (const auto& c : columns) out += " " + c + " |";
  out += "\n|";
  for (std::size_t c = 0; c < columns.size(); ++c) out += "---|";
  out += "\n";
  for (const auto& row : rows) {
    out += "|";
    for (const auto& cell : row) out += " " + cell_text(cell) + " |";
    out += "\n";
  }
  return out;
}

std::string Table::to_latex() const {
  std::string out = "\\begin{tabular}{" + std::string(columns.size(), 'l') + "}\n\\hline\n";
  for (std::size_t c = 0; c < columns.size(); ++c) out += (c ? " & " : "") + latex_escape(columns[c]);
  out += " \\\\\n\\hline\n";
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out += (c ? " & " : "") + latex_escape(cell_text(row[c]));
    out += " \\\\\n";
  }
  return out + "\\hline\n\\end{tabular}\n";
}

nlohmann::json Table::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    nlohmann::json object = nlohmann::json::object();
    for (std::size_t c = 0; c < columns.size(); ++c) object[columns[c]] = rows[r][c];
    if (r < json_extra.size() && json_extra[r].is_object()) object.update(json_extra[r]);
    list.push_back(object);
  }
  return list;
}

OutputKind output_kind_for(const std::string& path, const std::string& flag) {
  if (path.empty()) throw InvalidArgument(flag + ": empty file name; accepted: a path ending in .csv .md .json .tex");
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".csv") return OutputKind::csv;
  if (ext == ".md") return OutputKind::markdown;
  if (ext == ".json") return OutputKind::json;
  if (ext == ".tex") return OutputKind::latex;
  throw InvalidArgument(flag + ": unknown output extension '" + ext + "' in '" + path +
                        "'; accepted: .csv .md .json .tex");
}

std::string render(const Table& table, OutputKind kind) {
  switch (kind) {
    case OutputKind::csv: return table.to_csv();
    case OutputKind::markdown: return table.to_markdown();
    case OutputKind::json: return table.to_json().dump(2) + "\n";
    case OutputKind::latex: return table.to_latex();
  }
  return {};
}

void check_writable(const std::string& path, const std::string& flag) {
  if (path.empty()) throw InvalidArgument(flag + ": empty file name");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InvalidArgument(flag + ": '" + path + "' is a directory; give a file name");
  }
  if (!path.empty() && path.back() == '/') {
    throw InvalidArgument(flag + ": '" + path + "' names a directory; give a file name");
  }
  const std::string probe = path + ".tmp." + std::to_string(::getpid());
  std::ofstream out(probe, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw InvalidArgument(flag + ": cannot write '" + path + "' (directory missing or not writable)");
  }
  out.close();
  std::remove(probe.c_str());
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InvalidArgument("--out: cannot write '" + path + "' (directory missing or not writable)");
    out << text;
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      throw InvalidArgument("--out: writing '" + path + "' failed");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::remove(temporary.c_str());
    throw InvalidArgument("--out: cannot rename into '" + path + "': " + error.message());
  }
}

}  // namespace ropesim::cli
