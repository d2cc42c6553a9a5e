#pragma once
// Drawing figures with gnuplot for `ropesim plot` (docs/CLI.md): the output kind chosen by the
// file extension, safe quoting of text into gnuplot strings, and running gnuplot on a script
// so that the figure appears atomically (gnuplot writes a temporary name that is renamed).
// Output only: the numbers drawn are computed by the library before they get here.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ropesim::cli {

/// The figure formats chosen by file extension: SVG and PNG (sized in pixels), PDF through
/// gnuplot's pdfcairo terminal (sized in inches).
enum class PlotKind { svg, png, pdf };

/// Maps `.svg .png .pdf` to a kind; throws ropesim::InvalidArgument naming `flag` and the
/// accepted extensions otherwise (also for an empty name).
PlotKind plot_kind_for(const std::string& path, const std::string& flag);

/// The font size in points of a figure of `kind` when --font gives none: svg 13, png 11, pdf 9.
double default_font_size(PlotKind kind);

/// How a figure is drawn, beyond its content: the options --size, --font and --no-footnote of
/// `ropesim plot` (docs/CLI.md, "ropesim plot").
struct FigureStyle {
  /// --size W,H: pixels for SVG and PNG, inches for PDF; nullopt = the plot's default (its
  /// pixel size; for PDF the pixel size / 200, e.g. 1400 × 800 → 7in × 4in).
  std::optional<std::pair<double, double>> size;
  /// --font NAME[,SIZE]: the family of every text (default "sans") ...
  std::string font_family = "sans";
  /// ... and the size in points of tick labels and axis labels; titles, keys and notes keep
  /// their proportion to it. nullopt = the kind's default (SVG 13, PNG 11, PDF 9).
  std::optional<double> font_size;
  /// false with --no-footnote: no provenance line at the bottom of the figure.
  bool footnote = true;

  /// The size in points of a text the plot writes at `nominal` points in a default SVG, scaled
  /// to this style's font size (nominal 13 is the base size); 1 = 1 point.
  double font_points(double nominal, PlotKind kind) const;
};

/// Parses --size "W,H" for a figure of `kind`: two numbers, pixels (integers 100..20000) for
/// SVG/PNG, inches (0.5..100; "cm" after a number gives centimetres) for PDF. Throws
/// ropesim::InvalidArgument naming --size and the accepted values.
std::pair<double, double> parse_figure_size(const std::string& text, PlotKind kind);

/// Parses --font "NAME[,SIZE]": NAME of letters, digits, spaces, '-' and '_' (1..64
/// characters), SIZE in points (4..72). Throws ropesim::InvalidArgument naming --font and the
/// accepted values.
std::pair<std::string, std::optional<double>> parse_figure_font(const std::string& text);

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

/// The terminal and output lines for `kind` writing to `output_path`: `width` × `height` pixels
/// (SVG, PNG) or style.size inches (PDF), style's font, white background, labels not enhanced
/// (see gnuplot_quote). PNG prefers pngcairo and falls back to gd's png when cairo is missing;
/// PDF is pdfcairo (in Debian's gnuplot-nox).
std::string gnuplot_terminal(PlotKind kind, const std::string& output_path, int width, int height,
                             const FigureStyle& style = {});

/// What draw_with_gnuplot draws: the script body (after the terminal lines), the figure file and
/// its kind, the plot's default size in pixels, the style, and where to hand over the script.
struct Figure {
  std::string body;
  PlotKind kind = PlotKind::svg;
  std::string out_path;
  int width = 1400, height = 800;  ///< the default size in pixels (--size replaces it)
  FigureStyle style;
  /// --gnuplot-script: also write the complete script (terminal lines, data blocks, plot)
  /// here, with `set output` naming out_path, so that `gnuplot FILE` redraws the figure; empty:
  /// none.
  std::string script_path;
};

/// Runs gnuplot on figure.body to draw figure.out_path. The script goes to a temporary file
/// and gnuplot is started without a shell; it writes a temporary figure that reaches out_path
/// through io::write_output_file only when gnuplot succeeded and wrote a non-empty file. A
/// footnote with cli::provenance_line() is added at the bottom unless style.footnote is false.
/// The script is then written to figure.script_path (if any), starting with the provenance as
/// a comment. Otherwise throws ropesim::InvalidArgument (one line, exit 2 like a missing
/// gnuplot; no file is left behind) naming gnuplot: it could not be started, failed (its exit
/// status and first error line), was killed by a signal, wrote no figure, or did not finish
/// within gnuplot_timeout_seconds() (then its process group is killed).
void draw_with_gnuplot(const Figure& figure);

}  // namespace ropesim::cli
