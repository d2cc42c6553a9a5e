// The figure options of the plot commands: the output kind from the file name, --size and
// --font (cli/gnuplot.hpp).
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cli/gnuplot.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"

extern char** environ;

namespace ropesim::cli {

/// The terminal font size of each kind when --font gives none (points).
double default_font_size(PlotKind kind) {
  switch (kind) {
    case PlotKind::svg:
      return 13;
    case PlotKind::png:
      return 11;
    case PlotKind::pdf:
      break;
  }
  return 9;
}

PlotKind plot_kind_for(const std::string& path, const std::string& flag) {
  if (path.empty())
    throw InvalidArgument(flag + ": empty file name; accepted: a path ending in .svg .png .pdf");
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".svg") return PlotKind::svg;
  if (ext == ".png") return PlotKind::png;
  if (ext == ".pdf") return PlotKind::pdf;
  throw InvalidArgument(flag + ": unknown figure extension '" + ext + "' in '" + path +
                        "'; accepted: .svg .png .pdf");
}

namespace {

/// A decimal number with at most `decimals` digits after the point, the whole text parsed
/// (no sign, no exponent); nullopt otherwise.
std::optional<double> plain_number(const std::string& text, int decimals) {
  std::size_t digits = 0, point = std::string::npos;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '.' && point == std::string::npos) {
      point = i;
    } else if (std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
      ++digits;
    } else {
      return std::nullopt;
    }
  }
  if (digits == 0 || digits > 9) return std::nullopt;
  if (point != std::string::npos && static_cast<int>(text.size() - point - 1) > decimals)
    return std::nullopt;
  return std::stod(text);
}

}  // namespace

double FigureStyle::font_points(double nominal, PlotKind kind) const {
  const double base = default_font_size(kind);
  // The nominal sizes were chosen for SVG (base 13) and PNG (base 11) figures of 1400 pixels;
  // a PDF is 7 inches wide, so its default scales them by 9/13.
  const double kind_scale = kind == PlotKind::pdf ? 9.0 / 13.0 : 1.0;
  const double points = nominal * kind_scale * font_size.value_or(base) / base;
  return std::round(points * 10) / 10;
}

std::pair<double, double> parse_figure_size(const std::string& text, PlotKind kind) {
  const bool pdf = kind == PlotKind::pdf;
  const std::string accepted =
      pdf ? "accepted for .pdf: W,H in inches from 0.5 to 100 (e.g. 7,4), or in centimetres "
            "(e.g. 17cm,10cm)"
          : "accepted for .svg/.png: W,H in pixels, integers from 100 to 20000 (e.g. 1400,800)";
  const std::size_t comma = text.find(',');
  const auto one = [&](std::string part) -> std::optional<double> {
    double unit = 1;
    if (pdf && part.size() > 2 && part.substr(part.size() - 2) == "cm") {
      part.resize(part.size() - 2);
      unit = 1 / 2.54;
    } else if (pdf && part.size() > 2 && part.substr(part.size() - 2) == "in") {
      part.resize(part.size() - 2);
    }
    const auto value = plain_number(part, pdf ? 3 : 0);
    if (!value) return std::nullopt;
    const double v = *value * unit;
    if (pdf ? (v < 0.5 || v > 100) : (v < 100 || v > 20000)) return std::nullopt;
    return v;
  };
  if (comma != std::string::npos && text.find(',', comma + 1) == std::string::npos) {
    const auto w = one(text.substr(0, comma)), h = one(text.substr(comma + 1));
    if (w && h) return {*w, *h};
  }
  throw InvalidArgument("--size: '" + text + "' is not a figure size; " + accepted);
}

std::pair<std::string, std::optional<double>> parse_figure_font(const std::string& text) {
  const std::string accepted =
      "accepted: NAME or NAME,SIZE with NAME of letters, digits, spaces, '-' and '_' (e.g. "
      "'Times', 'DejaVu Sans,10') and SIZE in points from 4 to 72";
  const std::size_t comma = text.find(',');
  const std::string name = text.substr(0, comma);
  bool good = !name.empty() && name.size() <= 64 && name.front() != ' ' && name.back() != ' ';
  for (char c : name) {
    good = good &&
           (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == ' ' || c == '-' || c == '_');
  }
  std::optional<double> size;
  if (good && comma != std::string::npos) {
    size = plain_number(text.substr(comma + 1), 2);
    good = size && *size >= 4 && *size <= 72;
  }
  if (!good) throw InvalidArgument("--font: '" + text + "' is not a font; " + accepted);
  return {name, size};
}

}  // namespace ropesim::cli
