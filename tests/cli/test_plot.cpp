// `ropesim plot`: figures through gnuplot (docs/CLI.md). Each plot writes a non-empty SVG with
// its title, axis labels and provenance; --data writes the plotted numbers, checked here against
// values derived independently (docs/tables/horizon.md, periodic tables, NUMERIC §4); bad input
// exits 2 with one line and no file.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"

using namespace cli_test;

namespace {

bool gnuplot_available() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// CSV rows (skipping the `# ropesim …` provenance line), split on commas outside quotes.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (char c : line) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        cells.emplace_back();
      } else {
        cells.back() += c;
      }
    }
    rows.push_back(cells);
  }
  return rows;
}

std::string column(const std::vector<std::vector<std::string>>& rows, std::size_t row,
                   const std::string& name) {
  const auto& header = rows.at(0);
  for (std::size_t c = 0; c < header.size(); ++c) {
    if (header[c] == name) return rows.at(row).at(c);
  }
  FAIL("no column " << name);
  return {};
}

#define REQUIRE_GNUPLOT()                                                                \
  do {                                                                                   \
    if (!gnuplot_available()) {                                                          \
      WARN("gnuplot is not installed (apt-get install gnuplot-nox): plot test skipped"); \
      return;                                                                            \
    }                                                                                    \
  } while (false)

}  // namespace

TEST_CASE("plot horizon: fp16 g=1 k=1 C auto gives N_max 43 in the CSV and an SVG with its labels",
          "[cli][plot]") {
  REQUIRE_GNUPLOT();
  // docs/tables/horizon.md: fp16, g = 1, k = 1, C auto → C = 2096 (record n=25), N_max = 43
  // (query 45 ties BOS at offset 44 = the tie distance, round_F(cos 44) = 1), δ bound 43;
  // tie cap π·sqrt(2/u) with u = 2^-11 is π·64 = 201.06.
  const std::string svg = temp_path("horizon.svg"), csv = temp_path("horizon.csv");
  const Run r = run("plot horizon --formats fp16 --k 1 --out " + svg + " --data " + csv);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("n_max") != std::string::npos);  // the horizon table on stdout
  const std::string figure = slurp(svg);
  CHECK(figure.rfind("<?xml", 0) == 0);
  CHECK(figure.find("</svg>") != std::string::npos);
  CHECK(figure.find("Certified range N_max^(k) of the fixed-offset head Y^k") != std::string::npos);
  CHECK(figure.find("precision p of F (bits, including the hidden bit)") != std::string::npos);
  CHECK(figure.find("length L (positions), log scale") != std::string::npos);
  CHECK(figure.find("command: ropesim plot horizon --formats fp16") != std::string::npos);
  const auto rows = csv_rows(slurp(csv));
  REQUIRE(rows.size() == 2);
  CHECK(column(rows, 1, "format") == "fp16");
  CHECK(column(rows, 1, "p") == "11");
  CHECK(column(rows, 1, "C") == "2096");
  CHECK(column(rows, 1, "n_max") == "43");
  CHECK(column(rows, 1, "n_max_at_limit") == "no");
  CHECK(column(rows, 1, "delta_bound") == "43");
  CHECK(column(rows, 1, "tie_distance") == "44");
  CHECK(column(rows, 1, "tie_cap") == "201.062");
  CHECK(slurp(csv).rfind("# ropesim", 0) == 0);
  std::filesystem::remove(svg);
  std::filesystem::remove(csv);
}

TEST_CASE("plot horizon marks values at the scan limit as lower bounds", "[cli][plot]") {
  REQUIRE_GNUPLOT();
  // fp32 g=1 k=1 has N_max = 709 (docs/tables/horizon.md); a scan limited to L = 100 cannot
  // reach the failing query, so the value is the lower bound ">= 100".
  const std::string svg = temp_path("horizon_limit.svg"), csv = temp_path("horizon_limit.csv");
  const Run r = run("plot horizon --formats fp32 --max-length 100 --out " + svg + " --data " + csv);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find(">=100") != std::string::npos);
  const auto rows = csv_rows(slurp(csv));
  CHECK(column(rows, 1, "n_max") == "100");
  CHECK(column(rows, 1, "n_max_at_limit") == "yes");
  CHECK(slurp(svg).find("N_max ≥ (scan limit) (k=1)") != std::string::npos);
  std::filesystem::remove(svg);
  std::filesystem::remove(csv);
}

TEST_CASE("plot horizon --schedule: a real head's N_max per p, as the quadratic scan finds it",
          "[cli][plot]") {
  REQUIRE_GNUPLOT();
  // The multi-frequency head over llama3-8b's 64 blocks at p = 6 (8 exponent bits) fails early
  // (docs/figures/README.md, horizon_llama3.svg). The figure's points come from the candidate
  // algorithm; the reference is the quadratic scan of `horizon --algorithm scan` (a second
  // implementation of the certified range), and p = 6 and 7 must differ (the precision matters).
  const std::string svg = temp_path("horizon_llama3.svg"), csv = temp_path("horizon_llama3.csv");
  const Run r =
      run("plot horizon --schedule llama3-8b --formats p=6..7,e=8 --k 1 --max-length "
          "600 --out " +
          svg + " --data " + csv);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = csv_rows(slurp(csv));
  REQUIRE(rows.size() == 3);
  for (std::size_t row = 1; row <= 2; ++row) {
    const std::string format = column(rows, row, "format");
    const Run scan = run("horizon --schedule llama3-8b --format " + format +
                         " --k 1 --max-length 600 --algorithm scan --json");
    REQUIRE(scan.code == 0);
    const auto j = nlohmann::json::parse(scan.out);
    CHECK(column(rows, row, "n_max") == std::to_string(j.at("n_max").get<std::uint64_t>()));
    CHECK(column(rows, row, "n_max_at_limit") ==
          (j.at("n_max_at_limit").get<bool>() ? "yes" : "no"));
  }
  CHECK(column(rows, 1, "n_max") != column(rows, 2, "n_max"));
  CHECK(slurp(svg).find("head over llama3-8b (equal weights)") != std::string::npos);
  // --g and --schedule name two different heads: refused in one line, nothing written
  const std::string untouched = temp_path("horizon_two_heads.svg");
  const Run both = run("plot horizon --schedule llama3-8b --g 1 --formats fp16 --out " + untouched);
  CHECK(both.code == 2);
  CHECK(both.err.find("--g excludes --schedule") != std::string::npos);
  CHECK(std::count(both.err.begin(), both.err.end(), '\n') == 1);
  CHECK_FALSE(std::filesystem::exists(untouched));
  std::filesystem::remove(svg);
  std::filesystem::remove(csv);
}

TEST_CASE("plot horizon --algorithm scan: the quadratic scan's quick limit, as the table's",
          "[cli][plot]") {
  REQUIRE_GNUPLOT();
  // docs/tables/horizon.md ("N_max against the precision p", measured with --algorithm scan):
  // p=31,e=11 has no failing query within the quadratic scan's limit of 2000 positions on the
  // reference path (the candidate algorithm's default limit is 10^7), C auto = 2^40.
  const std::string svg = temp_path("horizon_scan.svg"), csv = temp_path("horizon_scan.csv");
  const Run r =
      run("plot horizon --formats p=31,e=11 --algorithm scan --out " + svg + " --data " + csv);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = csv_rows(slurp(csv));
  REQUIRE(rows.size() == 2);
  CHECK(column(rows, 1, "C") == "1.09951163e+12");
  CHECK(column(rows, 1, "n_max") == "2000");
  CHECK(column(rows, 1, "n_max_at_limit") == "yes");
  const std::string untouched = temp_path("horizon_bad_algorithm.svg");
  const Run bad = run("plot horizon --formats fp16 --algorithm quick --out " + untouched);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--algorithm: unknown certified-range algorithm 'quick'; accepted: auto, "
                     "candidates, scan") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);  // one line
  CHECK_FALSE(std::filesystem::exists(untouched));               // no file written
  std::filesystem::remove(svg);
  std::filesystem::remove(csv);
}

TEST_CASE("plot rotations: periodic:m=2,3,12 under r3 has 12 distinct rotations in every format",
          "[cli][plot]") {
  REQUIRE_GNUPLOT();
  // r3 realises T_d(i mod m_d): blocks of period 2, 3 and 12 repeat with lcm(2, 3, 12) = 12,
  // and positions 0..11 differ in the m = 12 block (cos/sin of 2πr/12 are 12 distinct pairs in
  // any format with p ≥ 3), so exactly 12 distinct rotations among 100 positions, period 12.
  const std::string svg = temp_path("rotations.svg"), csv = temp_path("rotations.csv");
  const Run r =
      run("plot rotations --schedules periodic:m=2,3,12 --realization r3 --formats fp16,bf16 "
          "--positions 100 --out " +
          svg + " --data " + csv);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = csv_rows(slurp(csv));
  REQUIRE(rows.size() == 3);
  for (std::size_t i = 1; i <= 2; ++i) {
    CHECK(column(rows, i, "distinct") == "12");
    CHECK(column(rows, i, "period") == "12");
  }
  CHECK(column(rows, 1, "format") == "fp16");
  CHECK(column(rows, 2, "format") == "bf16");
  const std::string figure = slurp(svg);
  CHECK(figure.find("Distinct realised rotations") != std::string::npos);
  CHECK(figure.find("distinct realised rotations (count), log scale") != std::string::npos);
  CHECK(figure.find("number format F") != std::string::npos);
  CHECK(figure.find("periodic:1/2,1/3,1/12") != std::string::npos);  // the legend
  std::filesystem::remove(svg);
  std::filesystem::remove(csv);
}

TEST_CASE("plot rotations: a model preset under r1 at fp32 has every position distinct",
          "[cli][plot]") {
  REQUIRE_GNUPLOT();
  // r1 at fp32: block 1 has θ = 1 rad/token and cos(i), i < 64, are 64 reals at least ~1e-3
  // apart (distinct integers mod 2π), far above fp32's spacing, so all 64 rotations differ.
  const std::string png = temp_path("rotations.png");
  const Run r = run("plot rotations --models llama2-7b --formats fp32 --positions 64 --out " + png);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("llama2-7b") != std::string::npos);
  CHECK(r.out.find(" 64 ") != std::string::npos);
  const std::string image = slurp(png);
  REQUIRE(image.size() > 8);
  CHECK(image.substr(1, 3) == "PNG");
  std::filesystem::remove(png);
}

TEST_CASE("plot error: the GPT-NeoX #1003 table peaks at 0.78 at position 2008, block 1",
          "[cli][plot]") {
  REQUIRE_GNUPLOT();
  // NUMERIC §4: the report's max |cos_half − cos_float| over its 2048 × 16 table is 0.7819, at
  // position 2008, second frequency (block 1). There θ̂ = fp16(10^(-1/4)) = 0.5625 and
  // φ = fp16(0.5625·2008 = 1129.5) = 1130 (ties-to-even at spacing 1 between 1024 and 2048),
  // while the exact angle is 2008·0.56234 = 1129.18: cos 1130 = 0.56253 → fp16 0.5625, cos
  // 1129.18 = −0.21938, so |error| = 0.7819. sin: −0.8267 vs −0.9756, 0.149, smaller.
  const std::string svg = temp_path("error.svg"), csv = temp_path("error.csv");
  const Run r =
      run("plot error --schedule conventional:base=10000,dim=32 --realization r2 --format fp16 "
          "--positions 2048 --out " +
          svg + " --data " + csv);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("max error     0.78") != std::string::npos);
  CHECK(r.out.find("at position 2008, block 1") != std::string::npos);
  const auto rows = csv_rows(slurp(csv));
  REQUIRE(rows.size() == 1 + 2048 * 16);
  // Row of position 2008, block 1 (position-major, 16 blocks each).
  const std::size_t row = 1 + 2008 * 16 + 1;
  CHECK(column(rows, row, "position") == "2008");
  CHECK(column(rows, row, "block") == "1");
  CHECK(column(rows, row, "cos_realised") == "0.5625");
  CHECK(std::stod(column(rows, row, "error")) == Approx(0.7819).margin(0.00005));
  CHECK(std::stod(column(rows, row, "cos_exact")) == Approx(-0.21938).margin(0.00001));
  const std::string figure = slurp(svg);
  CHECK(figure.find("Realised-rotation error") != std::string::npos);
  CHECK(figure.find("position i (tokens, BOS = 0)") != std::string::npos);
  CHECK(figure.find("conventional:base=10000,dim=32, realisation r2 in fp16") != std::string::npos);
  CHECK(figure.find("max 0.7819 at i = 2008, block 1") != std::string::npos);
  std::filesystem::remove(svg);
  std::filesystem::remove(csv);
}

TEST_CASE("plot error: an exactly representable periodic table has error 0", "[cli][plot]") {
  REQUIRE_GNUPLOT();
  // θ = 2π/4: cos and sin of multiples of π/2 are 0 and ±1, exact in every format.
  const std::string svg = temp_path("error_exact.svg");
  const Run r = run(
      "plot error --schedule periodic:m=4 --realization r3 --format fp16 --positions 16 --out " +
      svg);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("max error     0 ") != std::string::npos);
  CHECK(std::filesystem::file_size(svg) > 0);
  std::filesystem::remove(svg);
}

TEST_CASE("plot: bad input exits 2 with one line and writes no file", "[cli][plot]") {
  const std::string svg = temp_path("bad.svg"), csv = temp_path("bad.csv");
  expect_usage_error(run("plot horizon --formats fp16"), "--out");
  expect_usage_error(run("plot horizon --formats fp16 --out " + temp_path("bad.eps")),
                     ".svg .png .pdf");
  expect_usage_error(run("plot error --schedule single:g=1 --out " + temp_path("bad.csv")),
                     ".svg .png");
  expect_usage_error(run("plot horizon --formats fp16 --out " +
                         std::filesystem::temp_directory_path().string() + "/"),
                     "--out");
  const std::string dir = temp_path("dir.svg");
  std::filesystem::create_directories(dir);
  expect_usage_error(run("plot rotations --formats fp16 --positions 8 --out " + dir),
                     "is a directory");
  std::filesystem::remove(dir);
  expect_usage_error(
      run("plot horizon --formats fp16 --out " + svg + " --data " + temp_path("bad.txt")), ".csv");
  expect_usage_error(run("plot horizon --formats fixed:4.4 --out " + svg + " --data " + csv),
                     "fixed point");
  expect_usage_error(run("plot horizon --formats fp16,p=11,e=5 --out " + svg), "same format");
  expect_usage_error(run("plot rotations --models nosuch --out " + svg), "--models");
  expect_usage_error(run("plot rotations --realization r1,r2 --out " + svg), "one realization");
  expect_usage_error(run("plot error --schedule bogus --out " + svg), "--schedule");
  expect_usage_error(run("plot error --schedule single:g=1 --realization r3 --out " + svg),
                     "--realization");
  expect_usage_error(
      run("plot error --schedule conventional:base=10000,dim=32 --positions 1000000 --out " + svg),
      "--positions");
  expect_usage_error(run("plot"), "horizon rotations error");
  CHECK_FALSE(std::filesystem::exists(svg));
  CHECK_FALSE(std::filesystem::exists(csv));
}

TEST_CASE("plot horizon --out FILE.pdf with --size, --font, --no-footnote and --gnuplot-script",
          "[cli][plot]") {
  REQUIRE_GNUPLOT();
  const std::string pdf = temp_path("paper.pdf"), script = temp_path("paper.gp");
  const Run r =
      run("plot horizon --formats fp16 --k 1 --out " + pdf +
          " --size 6,3.5 --font 'DejaVu Serif,10' --no-footnote --gnuplot-script " + script);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string figure = slurp(pdf);
  CHECK(figure.rfind("%PDF-", 0) == 0);
  // 6 in × 3.5 in = 432 pt × 252 pt (72 pt per inch).
  CHECK(figure.find("/MediaBox [ 0 0 432 252 ]") != std::string::npos);
  const std::string text = slurp(script);
  CHECK(text.rfind("# ropesim ", 0) == 0);  // the provenance as a comment
  CHECK(text.find("set terminal pdfcairo size 6in,3.5in noenhanced font \"DejaVu Serif,10\"") !=
        std::string::npos);
  CHECK(text.find("set output \"" + pdf + "\"") != std::string::npos);
  // Sizes scale with the font: PDF's default base is 9 pt for the nominal 13 of an SVG, so a
  // 10 pt base makes the title (nominal 13) 13 · 9/13 · 10/9 = 10 pt and the key (nominal 10)
  // 10 · 9/13 · 10/9 = 7.69… → 7.7 pt.
  CHECK(text.find("nearest-even\" font ',10'") != std::string::npos);
  CHECK(text.find("spacing 1.1 font ',7.7'") != std::string::npos);
  CHECK(text.find("set label 1000") == std::string::npos);  // --no-footnote
  CHECK(text.find("plot $K1") != std::string::npos);        // the data travel inside
  // The handed-over script redraws the figure by itself.
  std::filesystem::remove(pdf);
  REQUIRE(std::system(("gnuplot " + script + " 2>/dev/null").c_str()) == 0);
  CHECK(slurp(pdf).rfind("%PDF-", 0) == 0);
  std::filesystem::remove(pdf);
  std::filesystem::remove(script);
}

TEST_CASE("plot: --size and --font reach the SVG; the footnote is there unless --no-footnote",
          "[cli][plot]") {
  REQUIRE_GNUPLOT();
  const std::string svg = temp_path("sized.svg");
  Run r =
      run("plot rotations --schedules periodic:m=4 --realization r3 --formats fp16 "
          "--positions 8 --size 800,500 --font Courier,16 --out " +
          svg);
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::string figure = slurp(svg);
  CHECK(figure.find("width=\"800\" height=\"500\"") != std::string::npos);
  CHECK(figure.find("font-family=\"Courier\"") != std::string::npos);
  CHECK(figure.find("font-size=\"16.00\"") != std::string::npos);
  CHECK(figure.find("command: ropesim plot rotations") != std::string::npos);
  r =
      run("plot rotations --schedules periodic:m=4 --realization r3 --formats fp16 --positions 8 "
          "--no-footnote --out " +
          svg);
  REQUIRE(r.code == 0);
  figure = slurp(svg);
  CHECK(figure.find("width=\"1400\" height=\"750\"") != std::string::npos);  // the default
  CHECK(figure.find("command: ropesim") == std::string::npos);
  std::filesystem::remove(svg);
}

TEST_CASE("plot horizon draws bounds beyond its axis as arrows instead of stretching it",
          "[cli][plot]") {
  REQUIRE_GNUPLOT();
  // docs/figures/horizon.csv (g = 1, k = 1, C auto): p = 7 has N_max 27, tie distance 44, tie
  // cap 50.27, exact bound 411557986 and heuristic 4.39e8; p = 8 has N_max 43, tie distance 44,
  // tie cap 71.09, exact bound 43, heuristic 82.4. The axis top is the decade at or above
  // 3 · 71.09 = 213.3, i.e. 1000; only p = 7's two values lie beyond it: two arrows.
  const std::string svg = temp_path("arrows.svg"), script = temp_path("arrows.gp"),
                    csv = temp_path("arrows.csv");
  const Run r = run("plot horizon --formats p=7..8,e=8 --k 1 --out " + svg + " --data " + csv +
                    " --gnuplot-script " + script);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = csv_rows(slurp(csv));
  REQUIRE(rows.size() == 3);
  CHECK(column(rows, 1, "delta_bound") == "411557986");  // the data keep the value
  const std::string text = slurp(script);
  CHECK(text.find("set yrange [*:1000]") != std::string::npos);
  std::size_t arrows = 0;
  for (std::size_t at = text.find("set arrow "); at != std::string::npos;
       at = text.find("set arrow ", at + 1)) {
    ++arrows;
    CHECK(text.substr(at, text.find('\n', at) - at).find("first 1000 head") != std::string::npos);
  }
  CHECK(arrows == 2);
  CHECK(text.find("exact bound up to 4.1e+08, heuristic up to 4.4e+08") != std::string::npos);
  CHECK(slurp(svg).find("exact bound beyond the axis (k=1)") != std::string::npos);
  for (const auto& f : {svg, script, csv}) std::filesystem::remove(f);
}

TEST_CASE("plot: bad --size, --font and --gnuplot-script exit 2 with one line and no file",
          "[cli][plot]") {
  const std::string svg = temp_path("badopt.svg"), pdf = temp_path("badopt.pdf"),
                    script = temp_path("badopt.gp");
  const std::string horizon = "plot horizon --formats fp16 --out ";
  expect_usage_error(run(horizon + svg + " --size 99,500"), "pixels, integers from 100 to 20000");
  expect_usage_error(run(horizon + svg + " --size 800"), "--size");
  expect_usage_error(run(horizon + svg + " --size 8in,5in"), "--size");  // inches are for .pdf
  expect_usage_error(run(horizon + pdf + " --size 1400,800"), "inches from 0.5 to 100");
  expect_usage_error(run(horizon + pdf + " --size 7,-4"), "--size");
  expect_usage_error(run(horizon + svg + " --font ''"), "--font");
  expect_usage_error(run(horizon + svg + " --font 'Times,100'"), "SIZE in points from 4 to 72");
  expect_usage_error(run(horizon + svg + " --font 'a\"b'"), "--font");
  expect_usage_error(run(horizon + svg + " --gnuplot-script " + svg), "also the --out file");
  expect_usage_error(run(horizon + svg + " --gnuplot-script ''"), "--gnuplot-script");
  for (const auto& f : {svg, pdf, script}) CHECK_FALSE(std::filesystem::exists(f));
}

TEST_CASE("plot without gnuplot on PATH: one line naming gnuplot-nox, exit 2, no file",
          "[cli][plot]") {
  const std::string svg = temp_path("nognuplot.svg");
  // run() starts the binary through the shell: a first harmless command, then the plot with an
  // empty PATH (the binary itself is named by its absolute path).
  expect_usage_error(run("--version >/dev/null; PATH=/nonexistent " + std::string(ROPESIM_BINARY) +
                         " plot horizon --formats fp16 --out " + svg),
                     "apt-get install gnuplot-nox");
  CHECK_FALSE(std::filesystem::exists(svg));
}
