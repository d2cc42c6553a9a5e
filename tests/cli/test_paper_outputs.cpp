// Outputs for papers and notebooks (issue 21): LaTeX tables with booktabs and math-mode headers.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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
  // name is text (left); p, emin and emax are integers (right-aligned).
  CHECK(text.find("\\begin{tabular}{lrrr") != std::string::npos);
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
