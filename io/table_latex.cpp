// Table::to_latex and its pieces (headers, cells, notes): the .tex view of a table
// (io/table.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "io/table.hpp"

namespace ropesim::io {

namespace {

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

}  // namespace ropesim::io
