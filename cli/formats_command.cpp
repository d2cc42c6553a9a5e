// `ropesim formats`: every preset format with its derived quantities (THEORY §1).
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "numeric/format.hpp"
#include "numeric/format_properties.hpp"

namespace ropesim::cli {

namespace {

nlohmann::json value_cell(const numeric::Format& f, const numeric::Value& v) {
  if (!f.fits_double() || v.is_wide()) return v.to_decimal(40);
  return v.to_double();
}

/// N_max as a JSON number when a double holds it exactly, "2^k" for a larger power of two
/// (N_max is one whenever max ≥ 1; its decimal digits for p=11,e=28 would be 40 MB), and the
/// exact digits otherwise (then N_max ≤ max/min_positive < 2^(p+1)·…, small).
nlohmann::json n_max_cell(const mpz_class& n) {
  const std::size_t bits = mpz_sizeinbase(n.get_mpz_t(), 2);
  if (bits <= 1023) {
    const double d = n.get_d();
    if (mpz_class(d) == n) {
      if (d < 9007199254740992.0) return static_cast<std::uint64_t>(d);
      return d;
    }
  }
  if (mpz_popcount(n.get_mpz_t()) == 1) return fmt::format("2^{}", bits - 1);
  return n.get_str();
}

/// The unit roundoff 2^e as a JSON number when a double holds it, else "2^e" (p=4096 gives
/// 2^-4096, which a double would print as 0).
nlohmann::json unit_roundoff_cell(const numeric::Format& f, numeric::Rounding mode) {
  const long e = numeric::unit_roundoff_exponent(f, mode);
  if (e >= -1074) return std::ldexp(1.0, static_cast<int>(e));
  return fmt::format("2^{}", e);
}

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
    numeric::Rounding mode;
    try {
      mode = numeric::parse_rounding(*rounding);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string("--rounding: ") + e.what());
    }
    std::vector<numeric::Format> list;
    const std::vector<std::string> names =
        formats->empty() ? numeric::preset_format_names()
                         : split_unique(*formats, "--formats", ListKind::formats);
    for (const auto& name : names) {
      try {
        list.push_back(numeric::parse_format(name));
      } catch (const InvalidArgument& e) {
        throw InvalidArgument(std::string("--formats: ") + e.what());
      }
    }
    std::optional<OutputKind> kind;
    if (cmd->count("--out") > 0) {
      kind = output_kind_for(*out, "--out");
      io::check_output_path(*out, "--out");
    }
    if (cmd->count("--formats") > 0 && formats->empty()) {
      throw InvalidArgument("--formats: empty list; accepted: " + numeric::format_spellings());
    }

    Table table;
    table.columns = {"name",          "p",       "emin",  "emax",       "max",      "min_positive",
                     "unit_roundoff", "f_large", "n_max", "subnormals", "overflow", "rounding"};
    table.terminal_columns = {"name",         "p",       "emin",  "emax",    "max",
                              "min_positive", "f_large", "n_max", "overflow"};
    table.numeric_columns = {"p",       "emin", "emax", "max", "min_positive", "unit_roundoff",
                             "f_large", "n_max"};
    for (const auto& f : list) {
      const auto fl = numeric::f_large(f, mode);
      const bool fixed = f.is_fixed_point();
      table.rows.push_back(
          {f.name, f.precision, fixed ? nlohmann::json(nullptr) : nlohmann::json(f.emin),
           fixed ? nlohmann::json(nullptr) : nlohmann::json(f.emax),
           value_cell(f, numeric::max_finite(f)), value_cell(f, numeric::min_positive(f)),
           unit_roundoff_cell(f, mode), fl ? value_cell(f, *fl) : nlohmann::json(nullptr),
           n_max_cell(numeric::n_max(f)),
           // THEORY §1: formats without infinities saturate, an extension of F.
           f.subnormals, f.has_infinity ? "inf" : "saturate",
           std::string(numeric::to_string(mode))});
    }
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
