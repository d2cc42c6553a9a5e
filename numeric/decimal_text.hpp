#pragma once
/// Decimal text of binary64 numbers for CSV files that readers other than ropesim parse.
///
/// Every correctly rounded reader (Python's float(), pandas.read_csv(...,
/// float_precision='round_trip'), R, strtod) reads the shortest round-trip decimal back as
/// the same binary64. pandas' default C reader before its switch to fast_float (pandas <= 2.x,
/// `precise_xstrtod`, float_precision=None or 'high') is not correctly rounded: it accumulates
/// at most 17 digit characters (a leading "0." counts one) in a binary64, rounding whenever
/// the integer passes 2^53, then divides by a binary64 power of ten (inexact beyond 10^22).
/// It misreads about a third of the shortest decimals of an fp32 rotation table. csv_decimal
/// writes, for each value, a decimal that every correct reader reads back exactly and that
/// pandas' default reader also reads exactly wherever such a decimal of at most 17 significant
/// digits exists (docs/CLI.md, "Provenance inside every file").
#include <string>
#include <string_view>

namespace ropesim::numeric {

/// What pandas' default CSV float reader before fast_float (pandas/_libs/src/parser/
/// tokenizer.c, `precise_xstrtod`, pandas 1.x and 2.x) computes for `text`: a sign, digits, a
/// '.' and digits, an optional exponent `e[+-]D`. Re-implemented operation by operation in
/// binary64 (round to nearest even, no fused multiply-add), so it returns the bits pandas
/// returns, including its misreadings; checked against pandas 1.5.3 by
/// tests/cli/test_paper_outputs.cpp. Not for text outside that grammar (returns NaN).
double pandas_default_read(std::string_view text);

/// The decimal text of a finite binary64 `v` for a CSV cell: fmt's shortest round-trip
/// decimal ("0.5403022766113281", "1e-05") when pandas_default_read reads it as `v`; else the
/// first decimal in scientific notation ("2.8366219997406004e-01") with 15, 16 or 17
/// significant digits (fewest first; nearest to `v` first) that both a correctly rounded
/// reader and pandas_default_read read as `v`; else (no such decimal: pandas' default reader
/// cannot produce `v` from 17 digits) the shortest round-trip decimal. Correctly rounded
/// readers read every result as `v` exactly. Non-finite `v`: "nan", "inf", "-inf".
std::string csv_decimal(double v);

}  // namespace ropesim::numeric
