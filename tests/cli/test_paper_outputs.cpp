// Outputs for papers and notebooks: LaTeX tables with booktabs and math-mode headers.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_support.hpp"

using namespace cli_test;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("a .tex table is a booktabs tabular with the theory's symbols in math mode",
          "[cli][latex]") {
  const std::string tex = temp_path("formats.tex");
  const Run r = run("formats --formats fp16 --out " + tex);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string text = slurp(tex);
  INFO(text);
  CHECK(text.rfind("% ropesim ", 0) == 0);  // the provenance comment first
  CHECK(text.find("% needs \\usepackage{booktabs}\n") != std::string::npos);
  // 12 columns: the name and the three text columns left-aligned, the eight numeric ones
  // right-aligned (fixed per table, the same for every shard of a run).
  CHECK(text.find("\\begin{tabular}{lrrrrrrrrlll}\n") != std::string::npos);
  CHECK(text.find("\\toprule\nname & $p$ & $e_{\\min}$ & $e_{\\max}$ & max & $\\min F_{>0}$ & "
                  "$u$ & $f_{\\mathrm{large}}$ & $N_{\\max}$ & subnormals & overflow & rounding "
                  "\\\\\n\\midrule\n") != std::string::npos);
  CHECK(text.find("\\bottomrule\n\\end{tabular}\n") != std::string::npos);
  CHECK(text.find("\\hline") == std::string::npos);
  // fp16 by hand: p = 11, emin = −14, emax = 15; the rounding name is text with its hyphen.
  CHECK(text.find("fp16 & 11 & -14 & 15 & ") != std::string::npos);
  CHECK(text.find("& nearest-even \\\\\n") != std::string::npos);
  std::filesystem::remove(tex);
}

namespace {

/// The cells of a LaTeX table row "a & b & c \\" (ropesim escapes '&' in text as \&).
std::vector<std::string> latex_cells(const std::string& row) {
  std::vector<std::string> cells;
  std::string body = row.substr(0, row.rfind(" \\\\"));
  for (std::size_t at = 0;;) {
    const std::size_t next = body.find(" & ", at);
    cells.push_back(body.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) break;
    at = next + 3;
  }
  return cells;
}

/// A number as a paper prints it: 12, -0.5, $1.5\times10^{-5}$, $2^{-24}$, or -- (none).
bool paper_number(const std::string& cell) {
  static const std::regex number(
      R"(--|-?[0-9]+(\.[0-9]+)?|\$-?[0-9]+(\.[0-9]+)?\\times10\^\{-?[0-9]+\}\$|\$2\^\{-?[0-9]+\}\$)");
  return std::regex_match(cell, number);
}

/// Braces balance, not counting the escaped \{ and \}.
bool balanced(const std::string& tex) {
  long depth = 0;
  for (std::size_t i = 0; i < tex.size(); ++i) {
    if (tex[i] == '\\') {
      ++i;  // \{ \} \\ and the first letter of a command
      continue;
    }
    if (tex[i] == '{') ++depth;
    if (tex[i] == '}' && --depth < 0) return false;
  }
  return depth == 0;
}

struct LatexTable {
  std::string spec;                ///< the tabular's column spec
  std::vector<std::string> rows;   ///< the lines between \midrule and \bottomrule
  std::vector<std::string> notes;  ///< the note lines after \end{tabular}
};

LatexTable parse_latex(const std::string& tex) {
  LatexTable t;
  std::stringstream ss(tex);
  enum { before, rows, after } where = before;
  for (std::string line; std::getline(ss, line);) {
    if (line.rfind("\\begin{tabular}{", 0) == 0) t.spec = line.substr(16, line.size() - 17);
    if (line == "\\bottomrule") where = after;
    if (where == rows) t.rows.push_back(line);
    if (line == "\\midrule") where = rows;
    if (where == after && line.rfind("{\\footnotesize\\textsuperscript{", 0) == 0)
      t.notes.push_back(line);
  }
  return t;
}

/// The cell without its footnote mark \rlap{\textsuperscript{x}}, and the mark's letter.
std::pair<std::string, std::string> without_mark(const std::string& cell) {
  const std::string prefix = "\\rlap{\\textsuperscript{";
  const std::size_t at = cell.find(prefix);
  if (at == std::string::npos) return {cell, ""};
  const std::size_t letter = at + prefix.size();
  return {cell.substr(0, at), cell.substr(letter, cell.find('}', letter) - letter)};
}

}  // namespace

TEST_CASE("table horizon .tex: numbers alone, right-aligned, remarks as notes under the table",
          "[cli][latex]") {
  // docs/CLI.md, "Provenance inside every file" (issue 39, tables for papers). fp16 with
  // --C auto: k = 1 takes a record-distance candidate, k = 2 a power of two (the text views
  // print "2096 (record n=25)" and "4096 (2^12)").
  const std::string tex = temp_path("horizon_paper.tex");
  Run r = run("table horizon --formats fp16 --k 1,2 --quiet --out " + tex);
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::string text = slurp(tex);
  INFO(text);
  CHECK(balanced(text));
  LatexTable t = parse_latex(text);
  // format g k realization C f_large n_max fail_query fail_competitor offset gap delta_bound
  // tie_distance heuristic tie_cap pm_ceiling: the two text columns left, the rest right
  CHECK(t.spec == "lrrlrrrrrrrrrrrr");
  REQUIRE(t.rows.size() == 2);
  std::vector<std::string> letters;
  for (const auto& row : t.rows) {
    const auto cells = latex_cells(row);
    REQUIRE(cells.size() == t.spec.size());
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const auto [cell, letter] = without_mark(cells[c]);
      if (t.spec[c] == 'r') CHECK(paper_number(cell));
      CHECK(cell.find('(') == std::string::npos);  // no remark inside a cell
      if (c != 4) CHECK(letter.empty());           // only C has a remark here
    }
    letters.push_back(without_mark(cells[4]).second);
  }
  // two remarks, lettered in order of first appearance and listed once each under the table
  CHECK(letters == std::vector<std::string>{"a", "b"});
  REQUIRE(t.notes.size() == 2);
  CHECK(t.notes[0].rfind("{\\footnotesize\\textsuperscript{a}\\,$C$ chosen by", 0) == 0);
  CHECK(t.notes[0].find("record distance") != std::string::npos);
  CHECK(t.notes[1].rfind("{\\footnotesize\\textsuperscript{b}\\,", 0) == 0);
  CHECK(t.notes[1].find("a power of two") != std::string::npos);
  CHECK(text.find("\\end{tabular}\n\\par\\smallskip\n{\\footnotesize") != std::string::npos);

  // --max-length 20 stops fp16's scan before its first failure (N_max 43 at k = 1): N_max is
  // a lower bound, ">=20" in the text views, 20 with a note here; both rows share C's note.
  r = run("table horizon --formats fp16 --k 1,2 --max-length 20 --quiet --out " + tex);
  INFO(r.err);
  REQUIRE(r.code == 0);
  text = slurp(tex);
  CHECK(balanced(text));
  t = parse_latex(text);
  REQUIRE(t.rows.size() == 2);
  for (const auto& row : t.rows) {
    const auto cells = latex_cells(row);
    REQUIRE(cells.size() == t.spec.size());
    CHECK(cells[6] == "20\\rlap{\\textsuperscript{b}}");
    for (std::size_t c = 0; c < cells.size(); ++c)
      if (t.spec[c] == 'r') CHECK(paper_number(without_mark(cells[c]).first));
  }
  REQUIRE(t.notes.size() == 2);
  CHECK(t.notes[1].find("a lower bound") != std::string::npos);
  std::filesystem::remove(tex);
}

TEST_CASE("table horizon .tex names an hf-config schedule by its file, not its path",
          "[cli][latex]") {
  const std::string dir = temp_path("hf") + "/Paper-Model-8B";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(ROPESIM_SOURCE_DIR "/examples/configs/llama3.1-8b-config.json",
                             dir + "/config.json",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string tex = temp_path("horizon_hf.tex");
  const Run r = run("table horizon --schedules 'hf-config:" + dir +
                    "/config.json;hf-config:" ROPESIM_SOURCE_DIR
                    "/examples/configs/llama3.1-8b-config.json' --formats fp32 --k 1 --C 8192 "
                    "--max-length 50 --quiet --out " +
                    tex);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const LatexTable t = parse_latex(slurp(tex));
  CHECK(t.spec == "llrlrrrrrrrrrrrr");  // g holds schedule names: left-aligned
  REQUIRE(t.rows.size() == 2);
  // a config.json by its directory, another file by its stem (LaTeX-escaped: none needed)
  CHECK(latex_cells(t.rows[0])[1] == "Paper-Model-8B");
  CHECK(latex_cells(t.rows[1])[1] == "llama3.1-8b-config");
  std::filesystem::remove(tex);
  std::filesystem::remove_all(temp_path("hf"));
}

TEST_CASE("a CSV with its provenance line loads with pandas.read_csv(path, comment='#')",
          "[cli][csv]") {
  // docs/CLI.md, "Provenance inside every file". Debian's interpreter with python3-pandas;
  // skipped where pandas is not installed.
  if (std::system("/usr/bin/python3 -c 'import pandas' >/dev/null 2>&1") != 0) {
    WARN("python3-pandas is not installed: pandas loading test skipped");
    return;
  }
  const std::string csv = temp_path("formats.csv"), result = temp_path("formats.txt");
  const Run r = run("formats --formats 'fp16;p=5,e=4' --out " + csv);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(slurp(csv).rfind("# ropesim ", 0) == 0);
  // Two rows, the header's columns, fp16's p = 11 and emin = -14 as integers, and the quoted
  // name "p=5,e=4" kept whole.
  const std::string script =
      "import pandas; d = pandas.read_csv('" + csv +
      "', comment='#'); print(len(d), list(d.columns)[:4], int(d.p[0]), int(d.emin[0]), "
      "d.name[1], file=open('" +
      result + "', 'w'))";
  REQUIRE(std::system(("/usr/bin/python3 -c \"" + script + "\"").c_str()) == 0);
  CHECK(slurp(result) == "2 ['name', 'p', 'emin', 'emax'] 11 -14 p=5,e=4\n");
  std::filesystem::remove(csv);
  std::filesystem::remove(result);
}

TEST_CASE("pandas' default reader reads a table rotations CSV exactly", "[cli][csv]") {
  // docs/CLI.md, "Provenance inside every file": pandas' default float reader (pandas <= 2.x,
  // precise_xstrtod) misread 105 of the 17 000 values of this fp16 table when each was written
  // as its shortest decimal (counted against Python's float() of each text); the CSV now
  // writes, where one exists, a decimal that reader also reads exactly (numeric::csv_decimal).
  // Every value must be the .npy's binary64 bit for bit under float(), the round_trip reader
  // and the default reader alike.
  if (std::system("/usr/bin/python3 -c 'import pandas, numpy' >/dev/null 2>&1") != 0) {
    WARN("python3-pandas is not installed: pandas reading test skipped");
    return;
  }
  const std::string csv = temp_path("rot_pandas.csv"), npy = temp_path("rot_pandas.npy"),
                    script = temp_path("rot_pandas.py"), result = temp_path("rot_pandas.txt");
  const std::string args =
      "table rotations --schedule conventional:base=10000,dim=16 --format fp16 --positions 1000 ";
  for (const auto& out : {csv, npy}) {
    const Run r = run(args + "--out " + out);
    INFO(r.err);
    REQUIRE(r.code == 0);
  }
  std::ofstream(script)
      << "import csv, sys, numpy, pandas\n"
         "path, npy, out = sys.argv[1:]\n"
         "lines = [l for l in open(path) if not l.startswith('#')]\n"
         "rows = list(csv.reader(lines))\n"
         "header, body = rows[0], rows[1:]\n"
         "a = numpy.load(npy)\n"
         "blocks = a.shape[1]\n"
         "default = pandas.read_csv(path, comment='#')\n"
         "exact = pandas.read_csv(path, comment='#', float_precision='round_trip')\n"
         "total = text_vs_npy = default_bad = exact_bad = 0\n"
         "for j, name in enumerate(header[1:], start=1):\n"
         "    kind, d = (0 if name.startswith('cos') else 1), int(name.split('_')[1])\n"
         "    for i, r in enumerate(body):\n"
         "        v = float(r[j])\n"
         "        total += 1\n"
         "        text_vs_npy += v != a[i, d, kind]\n"
         "        default_bad += default[name][i] != v\n"
         "        exact_bad += exact[name][i] != v\n"
         "print(total, blocks, text_vs_npy, default_bad, exact_bad, file=open(out, 'w'))\n";
  REQUIRE(std::system(
              ("/usr/bin/python3 " + script + " " + csv + " " + npy + " " + result).c_str()) == 0);
  // 1000 positions x 8 blocks x (cos, sin); no value other than the .npy's; no misreading.
  CHECK(slurp(result) == "16000 8 0 0 0\n");
  for (const auto& f : {csv, npy, script, result}) std::filesystem::remove(f);
}

TEST_CASE("--columns picks the columns of --out files and --json too", "[cli][columns]") {
  const std::string csv = temp_path("columns.csv");
  Run r = run("formats --formats fp16 --columns name,f_large --out " + csv);
  INFO(r.err);
  REQUIRE(r.code == 0);
  // f_large(fp16) = 17.34375 (THEORY §1: ≈ 25·ln 2 = 17.33, snapped up into fp16).
  const std::string text = slurp(csv);
  CHECK(text.substr(text.find('\n') + 1) == "name,f_large\nfp16,17.34375\n");
  r = run("formats --formats fp16 --columns p,name --json");
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].size() == 2);
  CHECK(rows[0]["p"] == 11);
  CHECK(rows[0]["name"] == "fp16");
  // Without --columns every column (formats has 12).
  r = run("formats --formats fp16 --out " + csv);
  REQUIRE(r.code == 0);
  const std::string full = slurp(csv);
  const std::string header =
      full.substr(full.find('\n') + 1, full.find('\n', full.find('\n') + 1) - full.find('\n') - 1);
  CHECK(std::count(header.begin(), header.end(), ',') == 11);
  std::filesystem::remove(csv);
  // An unknown column is refused before any file is written.
  expect_usage_error(run("formats --formats fp16 --columns name,bogus --out " + csv), "--columns");
  CHECK_FALSE(std::filesystem::exists(csv));
}

TEST_CASE("--quiet with --out prints nothing on stdout", "[cli][columns]") {
  const std::string csv = temp_path("quiet.csv"), md = temp_path("quiet.md");
  const std::string sweep =
      "sweep --schedules periodic:m=4 --realizations r3 --formats fp16 --positions 16 --out " + csv;
  Run r = run(sweep + " --quiet");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  // periodic:m=4 under r3: 4 distinct rotations, period 4 (cos, sin of kπ/2 are exact).
  CHECK(slurp(csv).find("periodic:1/4,r3,fp16,") != std::string::npos);
  r = run(sweep);  // without --quiet the table is printed as before
  REQUIRE(r.code == 0);
  CHECK(r.out.find("periodic:1/4") != std::string::npos);
  r = run("table horizon --formats fp16 --g 1 --k 1 --C 64 --quiet --out " + md);
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  CHECK(slurp(md).find("| fp16 |") != std::string::npos);
  // A shard file keeps every column for ropesim merge.
  std::filesystem::remove(csv);
  expect_usage_error(run(sweep + " --shard 1/2 --columns schedule"), "--columns without --shard");
  CHECK_FALSE(std::filesystem::exists(csv));
  std::filesystem::remove(md);
}
