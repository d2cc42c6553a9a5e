#include "numeric/format.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "core/suggest.hpp"
#include "numeric/rounding.hpp"

namespace ropesim::numeric {

namespace {

// MPFR's default exponent range is about ±2^30; keep formats well inside it so that the
// emin/emax recipe (NUMERIC §1) never leaves MPFR's own range.
constexpr int kExponentLimit = 1 << 28;
// Transcendental functions are rounded with Ziv loops up to 2^16 bits and f_large bisects over
// F: 4096 bits (far beyond binary256's 237) keeps every command within seconds.
constexpr int kPrecisionLimit = 4096;

Format floating(std::string name, int p, int emin, int emax) {
  Format f;
  f.name = std::move(name);
  f.kind = Format::Kind::floating;
  f.precision = p;
  f.emin = emin;
  f.emax = emax;
  return f;
}

int parse_int(std::string_view text, std::string_view what, std::string_view spec) {
  int value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (!text.empty() && *first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range && ptr == last) {
    throw InvalidArgument("format '" + std::string(spec) + "': " + std::string(what) + " = " +
                          std::string(text) + " is out of range; accepted: " + format_spellings());
  }
  if (text.empty() || ec != std::errc() || ptr != last) {
    throw InvalidArgument("format '" + std::string(spec) + "': " + std::string(what) +
                          " must be an integer, got '" + std::string(text) +
                          "'; accepted: " + format_spellings());
  }
  return value;
}

[[noreturn]] void bad_format(std::string_view spec, const std::string& why,
                             std::string_view head = {}) {
  std::string hint;
  if (!head.empty()) {
    // the nearest preset or alias name ("bfloat61" -> bfloat16, "fp61" -> fp16)
    std::vector<std::string> names = preset_format_names();
    for (const auto& [alias, preset] : format_aliases()) names.push_back(alias);
    hint = did_you_mean(head, names);
  }
  throw InvalidArgument("unknown format '" + std::string(spec) + "'" +
                        (why.empty() ? std::string() : " (" + why + ")") + hint +
                        "; accepted: " + format_spellings());
}

}  // namespace

Format Format::fp64() { return floating("fp64", 53, -1022, 1023); }
Format Format::fp32() { return floating("fp32", 24, -126, 127); }
Format Format::tf32() { return floating("tf32", 11, -126, 127); }
Format Format::fp16() { return floating("fp16", 11, -14, 15); }
Format Format::bf16() { return floating("bf16", 8, -126, 127); }
Format Format::fp8e5m2() { return floating("fp8e5m2", 3, -14, 15); }
Format Format::fp8e4m3() {
  // OCP 8-bit floating point (2023), E4M3: bias 7, emax 8, the code S.1111.111 is NaN, so the
  // top binade loses one significand (max = 1.110b · 2^8 = 448); no infinities, saturating.
  Format f = floating("fp8e4m3", 4, -6, 8);
  f.has_infinity = false;
  f.reserved_top_codes = 1;
  return f;
}

Format Format::ieee(int p, int exponent_bits) {
  if (p < 2 || p > kPrecisionLimit) {
    throw InvalidArgument("format precision p must be in 2..4096, got " + std::to_string(p));
  }
  if (exponent_bits < 2 || exponent_bits > 28) {
    throw InvalidArgument("format exponent width e must be in 2..28, got " +
                          std::to_string(exponent_bits));
  }
  const int emax = (1 << (exponent_bits - 1)) - 1;
  return floating("p=" + std::to_string(p) + ",e=" + std::to_string(exponent_bits), p, 1 - emax,
                  emax);
}

Format Format::custom(int p, int emin, int emax) {
  if (p < 2 || p > kPrecisionLimit) {
    throw InvalidArgument("format precision p must be in 2..4096, got " + std::to_string(p));
  }
  if (emin > emax || emin < -kExponentLimit || emax > kExponentLimit) {
    throw InvalidArgument(
        "format exponent range must satisfy -2^28 <= emin <= emax <= 2^28, got emin=" +
        std::to_string(emin) + ", emax=" + std::to_string(emax));
  }
  return floating(
      "p=" + std::to_string(p) + ",emin=" + std::to_string(emin) + ",emax=" + std::to_string(emax),
      p, emin, emax);
}

Format Format::fixed(int integer_bits, int fraction_bits) {
  // each part bounded first, so that I + F cannot overflow
  if (integer_bits < 0 || fraction_bits < 0 || integer_bits > 1000 || fraction_bits > 1000 ||
      integer_bits + fraction_bits < 1 || integer_bits + fraction_bits > 1000) {
    throw InvalidArgument("fixed-point format needs I >= 0, F >= 0, 1 <= I + F <= 1000, got I=" +
                          std::to_string(integer_bits) + ", F=" + std::to_string(fraction_bits));
  }
  Format f;
  f.name = "fixed:" + std::to_string(integer_bits) + "." + std::to_string(fraction_bits);
  f.kind = Kind::fixed_point;
  f.precision = integer_bits + fraction_bits;
  f.integer_bits = integer_bits;
  f.fraction_bits = fraction_bits;
  f.emin = -fraction_bits;
  f.emax = integer_bits - 1;
  f.subnormals = false;
  f.has_infinity = false;
  f.has_nan = false;
  return f;
}

bool Format::fits_double() const {
  if (kind == Kind::fixed_point) {
    return precision <= 53 && fraction_bits <= 1074 && integer_bits <= 1023;
  }
  const int smallest_exponent = subnormals ? emin - precision + 1 : emin - precision + 1;
  return precision <= 53 && emax <= 1023 && smallest_exponent >= -1074;
}

namespace {

constexpr std::string_view fp64_torch[] = {"float64", "double"};
constexpr std::string_view fp32_torch[] = {"float32", "float"};
constexpr std::string_view fp16_torch[] = {"float16", "half"};
constexpr std::string_view bf16_torch[] = {"bfloat16"};
constexpr std::string_view fp8e4m3_torch[] = {"float8_e4m3fn"};
constexpr std::string_view fp8e5m2_torch[] = {"float8_e5m2"};

// The one table of named formats (format.hpp NamedFormat).
constexpr NamedFormat named_format_table[] = {
    {"fp64", &Format::fp64, fp64_torch, 6},
    {"fp32", &Format::fp32, fp32_torch, 5},
    {"tf32", &Format::tf32, {}, 4},
    {"fp16", &Format::fp16, fp16_torch, 3},
    {"bf16", &Format::bf16, bf16_torch, 2},
    {"fp8e4m3", &Format::fp8e4m3, fp8e4m3_torch, 0},
    {"fp8e5m2", &Format::fp8e5m2, fp8e5m2_torch, 1},
};

}  // namespace

std::span<const NamedFormat> named_formats() { return named_format_table; }

std::vector<std::string> preset_format_names() {
  std::vector<std::string> names;
  for (const NamedFormat& n : named_formats()) names.emplace_back(n.name);
  return names;
}

const std::vector<std::pair<std::string, std::string>>& format_aliases() {
  static const std::vector<std::pair<std::string, std::string>> aliases = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const NamedFormat& n : named_formats()) {
      for (const std::string_view alias : n.torch_names) out.emplace_back(alias, n.name);
    }
    return out;
  }();
  return aliases;
}

std::string format_spellings() {
  std::string names;
  for (const NamedFormat& n : named_formats()) names += std::string(n.name) + ", ";
  return names +
         "p=P,e=E, p=P,emin=A,emax=B, fixed:I.F "
         "(floating formats may add ,subnormals=off and/or ,overflow=saturate; PyTorch names "
         "such as bfloat16, float16, half, float32, torch.bfloat16 are aliases)";
}

std::vector<std::string> expand_format_range(std::string_view spec) {
  const std::string text(spec);
  if (text.find("..") == std::string::npos) {
    (void)parse_format(text);
    return {text};
  }
  // Split into comma items; each item is kept or, if it is key=A..B, expanded.
  std::vector<std::vector<std::string>> choices;
  for (const std::string& item : split_items(text, ',', "format", Repeats::keys)) {
    const std::size_t dots = item.find("..");
    const std::size_t eq = item.find('=');
    if (dots == std::string::npos) {
      choices.push_back({item});
    } else {
      auto bad = [&](const std::string& why) -> void {
        throw InvalidArgument("bad format range '" + text + "': " + why +
                              "; accepted: key=A..B with integers A <= B, e.g. p=4..53,e=11");
      };
      if (eq == std::string::npos || eq > dots) bad("'" + item + "' is not key=A..B");
      const std::string key = item.substr(0, eq);
      const std::string a = item.substr(eq + 1, dots - eq - 1), b = item.substr(dots + 2);
      auto integer = [&](const std::string& s) -> long {
        const bool negative = !s.empty() && s[0] == '-';
        const std::string digits = negative ? s.substr(1) : s;
        if (digits.empty() || digits.size() > 9 ||
            digits.find_first_not_of("0123456789") != std::string::npos) {
          bad("'" + s + "' is not an integer");
        }
        return (negative ? -1 : 1) * std::stol(digits);
      };
      const long lo = integer(a), hi = integer(b);
      if (lo > hi) bad("the range " + a + ".." + b + " is empty");
      if (hi - lo >= 4096) bad("more than 4096 values");
      std::vector<std::string> values;
      for (long v = lo; v <= hi; ++v) values.push_back(key + "=" + std::to_string(v));
      choices.push_back(std::move(values));
    }
  }
  std::vector<std::string> out{""};
  for (const auto& options : choices) {
    std::vector<std::string> next;
    for (const auto& prefix : out) {
      for (const auto& o : options) next.push_back(prefix.empty() ? o : prefix + "," + o);
    }
    if (next.size() > 4096) {
      throw InvalidArgument("format range '" + text +
                            "' stands for more than 4096 formats; split it");
    }
    out = std::move(next);
  }
  for (const auto& s : out) {
    try {
      (void)parse_format(s);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("format range '" + text + "' includes " + e.what());
    }
  }
  return out;
}

namespace {
Format parse_format_unchecked(std::string_view spec);
}

Format parse_format(std::string_view spec) {
  try {
    return parse_format_unchecked(spec);
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    if (message.find("accepted:") != std::string::npos) throw;
    throw InvalidArgument("format '" + std::string(spec) + "': " + message +
                          "; accepted: " + format_spellings());
  }
}

bool operator==(const Format& a, const Format& b) {
  // The same set F and arithmetic, whatever the spelling: `p=11,e=5` equals fp16.
  return a.kind == b.kind && a.precision == b.precision && a.emin == b.emin && a.emax == b.emax &&
         a.subnormals == b.subnormals && a.has_infinity == b.has_infinity &&
         a.has_nan == b.has_nan && a.reserved_top_codes == b.reserved_top_codes &&
         a.integer_bits == b.integer_bits && a.fraction_bits == b.fraction_bits;
}

namespace {
Format parse_format_unchecked(std::string_view spec) {
  std::string text(spec);
  if (text.empty()) bad_format(spec, "empty");
  // Split on commas into key=value items (fixed:I.F and presets are single items): no empty
  // item, no key twice (`subnormals=off,subnormals=on` says two things).
  const std::vector<std::string> items = split_pieces(text, ',');
  if (const auto fault =
          list_fault(items, text, ',', Repeats::keys)) {  // a typo, not an unknown format
    throw InvalidArgument("format '" + text + "': " + fault->problem +
                          "; accepted: " + format_spellings());
  }

  Format f;
  std::size_t next = 1;
  std::string head = items.front();
  // PyTorch's dtype names (format_aliases), with or without `torch.`
  const std::string_view torch_prefix = "torch.";
  if (head.rfind(torch_prefix, 0) == 0) head = head.substr(torch_prefix.size());
  const NamedFormat* named = nullptr;
  for (const NamedFormat& n : named_formats()) {
    const auto& aliases = n.torch_names;
    if (head == n.name || std::find(aliases.begin(), aliases.end(), head) != aliases.end()) {
      named = &n;
    }
  }
  if (named != nullptr) {
    f = named->make();
  } else if (head.rfind("fixed:", 0) == 0) {
    const std::string body = head.substr(6);
    const std::size_t dot = body.find('.');
    if (dot == std::string::npos) bad_format(spec, "fixed point is written fixed:I.F");
    f = Format::fixed(parse_int(body.substr(0, dot), "I", spec),
                      parse_int(body.substr(dot + 1), "F", spec));
    if (items.size() > 1) bad_format(spec, "fixed-point formats take no options");
  } else if (head.rfind("p=", 0) == 0) {
    const int p = parse_int(head.substr(2), "p", spec);
    if (items.size() >= 2 && items[1].rfind("e=", 0) == 0) {
      f = Format::ieee(p, parse_int(items[1].substr(2), "e", spec));
      next = 2;
    } else if (items.size() >= 3 && items[1].rfind("emin=", 0) == 0 &&
               items[2].rfind("emax=", 0) == 0) {
      f = Format::custom(p, parse_int(items[1].substr(5), "emin", spec),
                         parse_int(items[2].substr(5), "emax", spec));
      next = 3;
    } else {
      bad_format(spec, "p=P must be followed by e=E or by emin=A,emax=B");
    }
  } else {
    bad_format(spec, "", head);
  }
  for (; next < items.size(); ++next) {
    const std::string& option = items[next];
    if (option == "subnormals=off") {
      f.subnormals = false;
    } else if (option == "subnormals=on") {
      f.subnormals = true;
    } else if (option == "overflow=saturate") {
      f.has_infinity = false;
    } else if (option == "overflow=inf") {
      if (f.reserved_top_codes != 0) bad_format(spec, "fp8e4m3 has no infinity");
      f.has_infinity = true;
    } else {
      bad_format(spec, "unknown option '" + option + "'");
    }
    f.name += "," + option;
  }
  return f;
}
}  // namespace

namespace {

constexpr Spelling<Rounding> rounding_names[] = {{Rounding::nearest_even, "nearest-even"},
                                                 {Rounding::nearest_away, "nearest-away"},
                                                 {Rounding::toward_zero, "toward-zero"},
                                                 {Rounding::upward, "upward"},
                                                 {Rounding::downward, "downward"}};
constexpr Spelling<Rounding> rounding_aliases[] = {
    {Rounding::nearest_even, "rne"}, {Rounding::nearest_away, "rna"}, {Rounding::toward_zero, "rz"},
    {Rounding::upward, "ru"},        {Rounding::upward, "up"},        {Rounding::downward, "rd"},
    {Rounding::downward, "down"}};
constexpr std::string_view rounding_suggestions[] = {
    "nearest-even", "nearest-away", "toward-zero", "upward", "downward",
    "rne",          "rna",          "rz",          "ru",     "rd"};
constexpr EnumNames<Rounding> rounding_table{
    .what = "rounding mode",
    .names = rounding_names,
    .aliases = rounding_aliases,
    .accepted =
        "nearest-even (rne), nearest-away (rna), toward-zero (rz), upward (ru), "
        "downward (rd)",
    .suggest = true,
    .suggestions = rounding_suggestions};

}  // namespace

Rounding parse_rounding(std::string_view text) { return parse_name(rounding_table, text); }

std::string_view to_string(Rounding mode) { return name_of(rounding_table, mode); }

}  // namespace ropesim::numeric
