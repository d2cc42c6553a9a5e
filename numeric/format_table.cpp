// The formats table (numeric/format_table.hpp; THEORY §1).
#include "numeric/format_table.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/json_number.hpp"
#include "numeric/spec_lists.hpp"

namespace ropesim::numeric {

namespace {

/// An element of F as a JSON number when F fits a binary64, else its 40-digit decimal (the
/// exact value under a NumberTextMarking).
nlohmann::json value_cell(const Format& f, const Value& v) {
  if (!f.fits_double() || v.is_wide()) return exact_number(exact_rational(v), v.to_decimal(40));
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
  if (mpz_popcount(n.get_mpz_t()) == 1) return number_text(fmt::format("2^{}", bits - 1));
  return number_text(n.get_str());
}

/// The unit roundoff 2^e as a JSON number when a double holds it, else "2^e" (p=4096 gives
/// 2^-4096, which a double would print as 0).
nlohmann::json unit_roundoff_cell(const Format& f, Rounding mode) {
  const long e = unit_roundoff_exponent(f, mode);
  if (e >= -1074) return std::ldexp(1.0, static_cast<int>(e));
  return number_text(fmt::format("2^{}", e));
}

}  // namespace

FormatTable format_table(const std::optional<std::string>& list, const std::string& rounding) {
  FormatTable table;
  table.rounding = with_context("--rounding", [&] { return parse_rounding(rounding); });
  if (list && list->empty())
    throw InvalidArgument("--formats: empty list; accepted: " + format_spellings());
  const std::vector<std::string> names =
      list ? split_unique(*list, "--formats", ListKind::formats) : preset_format_names();
  for (const auto& name : names)
    table.formats.push_back(with_context("--formats", [&] { return parse_format(name); }));
  return table;
}

const std::vector<std::string>& format_table_columns() {
  static const std::vector<std::string> columns = {
      "name",          "p",       "emin",  "emax",       "max",      "min_positive",
      "unit_roundoff", "f_large", "n_max", "subnormals", "overflow", "rounding"};
  return columns;
}

std::vector<nlohmann::json> format_table_row(const Format& f, Rounding mode) {
  const auto fl = f_large(f, mode);
  const bool fixed = f.is_fixed_point();
  return {f.name, f.precision, fixed ? nlohmann::json(nullptr) : nlohmann::json(f.emin),
          fixed ? nlohmann::json(nullptr) : nlohmann::json(f.emax), value_cell(f, max_finite(f)),
          value_cell(f, min_positive(f)), unit_roundoff_cell(f, mode),
          fl ? value_cell(f, *fl) : nlohmann::json(nullptr), n_max_cell(n_max(f)),
          // THEORY §1: formats without infinities saturate, an extension of F.
          f.subnormals, f.has_infinity ? "inf" : "saturate", std::string(to_string(mode))};
}

nlohmann::json to_json(const FormatTable& table) {
  nlohmann::json list = nlohmann::json::array();
  const auto& columns = format_table_columns();
  for (const auto& f : table.formats) {
    const auto row = format_table_row(f, table.rounding);
    nlohmann::json object = nlohmann::json::object();
    for (std::size_t c = 0; c < columns.size(); ++c) object[columns[c]] = row[c];
    list.push_back(std::move(object));
  }
  return list;
}

}  // namespace ropesim::numeric
