#pragma once
// The views of a `ropesim diagnose` report (proofs/diagnose.hpp), used by diagnose_command.cpp.
#include <span>
#include <string>

#include "cli/table.hpp"
#include "proofs/diagnose.hpp"

namespace ropesim::cli {

/// The terminal summary of one report.
std::string summary_text(const proofs::DiagnoseReport& r);
/// Per band: the rotation error of the realised table.
Table band_table(const proofs::DiagnoseReport& r);
/// The census rows of the report.
Table census_table(const proofs::DiagnoseReport& r);
/// The attention-score paths of the report.
Table score_table(const proofs::DiagnoseReport& r);
/// Several reports side by side: one row per framework.
Table frameworks_table(std::span<const proofs::DiagnoseReport> reports);
/// The reports ranked.
Table ranking_table(std::span<const proofs::DiagnoseReport> reports);
/// The reports as one Markdown document.
std::string markdown_report(std::span<const proofs::DiagnoseReport> reports);
/// The reports as one HTML document with SVG figures.
std::string html_report(std::span<const proofs::DiagnoseReport> reports);

}  // namespace ropesim::cli
