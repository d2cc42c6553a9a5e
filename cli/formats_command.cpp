// `ropesim formats`: every preset format with its derived quantities (THEORY §1); the table
// is numeric::format_table (numeric/format_table.hpp), rendered here.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "numeric/format.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/format_table.hpp"

namespace ropesim::cli {

namespace {

/// N_max for people: exact digits up to 2^64, else 2^k (N_max is a power of two whenever
/// max ≥ 1) or the leading digits.
std::string n_max_display(const mpz_class& n) {
  const std::size_t bits = mpz_sizeinbase(n.get_mpz_t(), 2);
  if (bits <= 64) return n.get_str();
  if (mpz_popcount(n.get_mpz_t()) == 1) return fmt::format("2^{}", bits - 1);
  return fmt::format("{:.6e}", n.get_d());
}

}  // namespace

Action add_formats_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "formats",
      "List number formats: p, exponent range, max, min positive, unit roundoff, f_large, N_max");
  auto json = std::make_shared<bool>(false);
  auto formats = std::make_shared<std::string>();
  auto rounding = std::make_shared<std::string>("nearest-even");
  auto out = std::make_shared<std::string>();
  auto columns = std::make_shared<std::string>();
  cmd->add_flag("--json", *json, "Print JSON (a list of objects) instead of a table");
  cmd->add_option(
      "--formats", *formats,
      "Formats to list (comma-separated; ';' when a spec has commas). Default: every preset");
  cmd->add_option("--rounding", *rounding,
                  "Rounding mode for f_large and unit roundoff: nearest-even nearest-away "
                  "toward-zero upward downward");
  cmd->add_option(
      "-o,--out", *out,
      "Also write the table to FILE (.csv .md .json .tex; every column unless --columns)");
  cmd->add_option("--columns", *columns,
                  "Columns of the terminal, --out and --json: all, or a comma list (terminal "
                  "default: the main ones)");
  return [cmd, json, formats, rounding, out, columns]() -> int {
    if (!cmd->parsed()) return -1;
    const numeric::FormatTable formats_table = numeric::format_table(
        cmd->count("--formats") > 0 ? std::optional<std::string>(*formats) : std::nullopt,
        *rounding);
    const numeric::Rounding mode = formats_table.rounding;
    const std::vector<numeric::Format>& list = formats_table.formats;
    std::optional<OutputKind> kind;
    if (cmd->count("--out") > 0) {
      kind = output_kind_for(*out, "--out");
      io::check_output_path(*out, "--out");
    }

    Table table;
    table.columns = numeric::format_table_columns();
    table.terminal_columns = {"name",         "p",       "emin",  "emax",    "max",
                              "min_positive", "f_large", "n_max", "overflow"};
    table.numeric_columns = {"p",       "emin", "emax", "max", "min_positive", "unit_roundoff",
                             "f_large", "n_max"};
    for (const auto& f : list) table.rows.push_back(numeric::format_table_row(f, mode));
    if (kind) io::write_output_file(*out, render(table.for_files(*columns), *kind));
    if (*json) {
      std::cout << table.for_files(*columns).to_json().dump(2) << "\n";
    } else {
      Table display = table;
      for (std::size_t i = 0; i < list.size(); ++i)
        display.rows[i][8] = n_max_display(numeric::n_max(list[i]));
      std::cout << display.for_terminal(*columns).to_text();
      std::cout << fmt::format(
          "rounding: {}; f_large = smallest positive f in F with round(exp(-f)) = 0 (THEORY §1; "
          "'-' = none exists); N_max = floor(min(1, max) / min positive) [LC25 Prop B.6]; "
          "overflow 'saturate' = no infinities (an extension of THEORY's F)\n",
          numeric::to_string(mode));
    }
    return 0;
  };
}

}  // namespace ropesim::cli
