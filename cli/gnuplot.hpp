#pragma once
// Drawing figures with gnuplot for `ropesim plot` (docs/CLI.md): the output kind chosen by the
// file extension, safe quoting of text into gnuplot strings, and running gnuplot on a script
// so that the figure appears atomically (gnuplot writes a temporary name that is renamed).
// Output only: the numbers drawn are computed by the library before they get here.
#include <string>
#include <string_view>
#include <vector>

namespace ropesim::cli {

/// The figure formats chosen by file extension.
enum class PlotKind { svg, png };

/// Maps `.svg .png` to a kind; throws ropesim::InvalidArgument naming `flag` and the accepted
/// extensions otherwise (also for an empty name).
PlotKind plot_kind_for(const std::string& path, const std::string& flag);

/// `text` as a gnuplot double-quoted string literal that reads back as exactly `text` (line
/// breaks and other control characters become spaces) and is never code: gnuplot expands
/// `@macros` and back-quoted shell commands anywhere on a line, even inside quotes, so every
/// character outside letters, digits and harmless punctuation (in particular " \ ` @ ' $) is
/// written as an octal escape \ooo, which gnuplot decodes only after that expansion. UTF-8 is
/// kept as it is. Labels are drawn `noenhanced`, so `^ _ { }` in user text (format and
/// schedule specs) are not markup either.
std::string gnuplot_quote(std::string_view text);

/// Several lines as one gnuplot string expression: the quoted lines joined by "\n"
/// (`"line 1"."\n"."line 2"`), for two-line titles.
std::string gnuplot_lines(const std::vector<std::string>& lines);

/// A number as gnuplot reads it back exactly enough for drawing (shortest round-trip decimal;
/// "NaN" for a non-finite value, which gnuplot skips).
std::string gnuplot_number(double value);

/// How long gnuplot may run for one figure before ropesim stops it (seconds): every figure
/// of `ropesim plot` takes gnuplot well under a second, so 60 s means it hangs (e.g. waiting
/// for a terminal). The environment variable ROPESIM_GNUPLOT_TIMEOUT (an integer number of
/// seconds, 1..999999) replaces it.
inline constexpr double kGnuplotTimeoutSeconds = 60;

/// kGnuplotTimeoutSeconds, or ROPESIM_GNUPLOT_TIMEOUT when set; throws ropesim::InvalidArgument
/// naming the variable and the accepted values when it is not such an integer.
double gnuplot_timeout_seconds();

/// Throws ropesim::InvalidArgument ("gnuplot is not installed …; apt-get install gnuplot-nox")
/// unless an executable `gnuplot` is on PATH. Call before computing.
void require_gnuplot();

/// The terminal and output lines for `kind` writing to `temporary_path`, `width` × `height`
/// pixels, white background, labels not enhanced (see gnuplot_quote). PNG prefers pngcairo and
/// falls back to gd's png when cairo is missing.
std::string gnuplot_terminal(PlotKind kind, const std::string& temporary_path, int width,
                             int height);

/// Runs gnuplot on `body` (the script after the terminal lines) to draw `out_path` of `kind`
/// at `width` × `height`. The script goes to a temporary file and gnuplot is started without a
/// shell; it writes `out_path.tmp.<pid>`, which is renamed to `out_path` only when gnuplot
/// succeeded and wrote a non-empty file. A footnote with cli::provenance_line() is added at the
/// bottom of the figure. Otherwise throws ropesim::InvalidArgument (one line, exit 2 like a
/// missing gnuplot; no file is left behind) naming gnuplot: it could not be started, failed
/// (its exit status and first error line), was killed by a signal, wrote no figure, or did not
/// finish within gnuplot_timeout_seconds() (then its process group is killed).
void draw_with_gnuplot(const std::string& body, PlotKind kind, const std::string& out_path,
                       int width, int height);

}  // namespace ropesim::cli
