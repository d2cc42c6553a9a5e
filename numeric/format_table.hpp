#pragma once
/// The formats table (`ropesim formats`, ropesim.formats in Python; THEORY §1): per format its
/// precision, exponent range, extremes, unit roundoff, f_large and N_max, as JSON cells.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "numeric/format.hpp"
#include "numeric/rounding.hpp"

namespace ropesim::numeric {

/// The formats a table lists and the rounding its f_large and unit roundoff are taken under.
struct FormatTable {
  std::vector<Format> formats;
  Rounding rounding = Rounding::nearest_even;
};

/// The table of the formats `list` names (a list as `--formats` takes it: split_unique with
/// ListKind::formats, ranges such as `p=4..8,e=5` expanded; nullopt: every preset) under the
/// rounding `rounding` spells. Throws InvalidArgument naming `--formats` or `--rounding` (an
/// empty list, a bad spelling, a format listed twice).
FormatTable format_table(const std::optional<std::string>& list, const std::string& rounding);

/// The columns of every row, in order: name, p, emin, emax, max, min_positive, unit_roundoff,
/// f_large, n_max, subnormals, overflow, rounding.
const std::vector<std::string>& format_table_columns();

/// The cells of format `f`'s row under `mode`, in format_table_columns() order. An exact value
/// is a JSON number when a binary64 holds it; otherwise its text (40 significant digits, "2^k",
/// an integer's digits), marked as a number by type (json_number.hpp: exact_number, which
/// carries the exact value under a NumberTextMarking). emin, emax: null for fixed point;
/// f_large: null when none exists; overflow: "inf" or "saturate" (no infinities).
std::vector<nlohmann::json> format_table_row(const Format& f, Rounding mode);

/// The table as `ropesim formats --json` prints it: a list of objects, one per format, keyed by
/// format_table_columns().
nlohmann::json to_json(const FormatTable& table);

}  // namespace ropesim::numeric
