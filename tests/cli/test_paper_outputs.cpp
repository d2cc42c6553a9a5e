// Outputs for papers and notebooks: LaTeX tables with booktabs and math-mode headers.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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
  // 12 columns, all left-aligned (the same for every shard of a run).
  CHECK(text.find("\\begin{tabular}{llllllllllll}\n") != std::string::npos);
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
