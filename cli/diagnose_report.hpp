#pragma once
// The views of a `ropesim diagnose` report (proofs/reports/diagnose.hpp), used by
// diagnose_command.cpp.
#include <span>
#include <string>

#include "cli/table.hpp"
#include "proofs/reports/diagnose.hpp"

namespace ropesim::cli {

/// The terminal summary of one report: the few lines a person reads first.
std::string summary_text(const proofs::DiagnoseReport& r);
/// One row per (path, band) and per path overall: the cos/sin error against the path's
/// reference. A band with non-finite entries shows "nan" in its maximum columns (the maxima
/// are over the finite entries; the JSON keeps both).
Table band_table(const proofs::DiagnoseReport& r);
/// The census rows of the report.
Table census_table(const proofs::DiagnoseReport& r);
/// The score check per path and offset: the largest error over every query position, where,
/// and the `ropesim rotate` command that recomputes it.
Table score_table(const proofs::DiagnoseReport& r);
/// Several frameworks side by side: per path and offset the largest relative score error, one
/// column per framework ("-" where the path was not measured there).
Table frameworks_table(std::span<const proofs::DiagnoseReport> reports);
/// The ranking of each framework side by side: per place the path and the metric that decided
/// it.
Table ranking_table(std::span<const proofs::DiagnoseReport> reports);
/// The reports as one Markdown document.
std::string markdown_report(std::span<const proofs::DiagnoseReport> reports);
/// The reports as one HTML document with SVG figures.
std::string html_report(std::span<const proofs::DiagnoseReport> reports);

}  // namespace ropesim::cli
