#pragma once
/// The finite set F of THEORY §1: a binary floating-point or fixed-point format.
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ropesim::numeric {

/// A number format F (THEORY §1).
///
/// Floating point: value = (-1)^s · m · 2^(e - p + 1), integer significand m < 2^p,
/// precision p in bits including the hidden bit, normal exponents e in [emin, emax] (IEEE
/// convention: the smallest normal is 2^emin, the largest binade is [2^emax, 2^(emax+1))).
/// Subnormals (e = emin, m < 2^(p-1)) exist iff `subnormals`. Overflow goes to ±inf when
/// `has_infinity`, otherwise results saturate to ±max finite. `reserved_top_codes` removes the
/// largest significands of the top binade (OCP fp8 E4M3 reserves 1: S.1111.111 is NaN, so
/// max = 448).
///
/// Fixed point `fixed:I.F`: value = k · 2^-F with |k| ≤ 2^(I+F) - 1 (I integer bits, F fraction
/// bits, plus a sign); saturating; no infinities; one zero (+0: results that IEEE would make
/// −0 are +0). Operations with no real result (0/0, √-1, log of a negative) give NaN, which
/// lies outside the format; reports flag it.
///
/// Conventions for formats without infinity (fp8e4m3, `overflow=saturate`, fixed point): an
/// infinite or overflowing result saturates to ±max finite in every rounding mode (x/0,
/// log(0), conversion of ±inf). Without subnormals, F near zero is {0, ±2^emin}: the
/// nearest-even tie at 2^(emin-1) goes to 0, nearest-away to 2^emin.
struct Format {
  enum class Kind { floating, fixed_point };

  std::string name;  ///< a spelling that `parse_format` maps back to this format
  Kind kind = Kind::floating;
  int precision = 53;  ///< floating: p incl. hidden bit; fixed point: I + F
  int emin = -1022;    ///< floating only
  int emax = 1023;     ///< floating only
  bool subnormals = true;
  bool has_infinity = true;
  bool has_nan = true;
  int reserved_top_codes = 0;
  int integer_bits = 0;   ///< fixed point only
  int fraction_bits = 0;  ///< fixed point only

  static Format fp64();
  static Format fp32();
  static Format tf32();     ///< p = 11, 8 exponent bits (NVIDIA TensorFloat-32)
  static Format fp16();     ///< IEEE binary16
  static Format bf16();     ///< bfloat16: p = 8, 8 exponent bits
  static Format fp8e4m3();  ///< OCP E4M3: p = 4, emin -6, emax 8, max 448, no inf, saturating
  static Format fp8e5m2();  ///< OCP E5M2: p = 3, emin -14, emax 15, IEEE-like

  /// IEEE-style format with p bits of precision and `exponent_bits` exponent bits
  /// (emax = 2^(E-1) - 1, emin = 1 - emax). Throws InvalidArgument unless 2 ≤ p ≤ 4096 and
  /// 2 ≤ E ≤ 28.
  static Format ieee(int p, int exponent_bits);
  /// Precision p and normal exponent range [emin, emax]. Throws InvalidArgument unless 2 ≤ p ≤
  /// 4096, or if emin > emax or the range exceeds what MPFR can represent.
  static Format custom(int p, int emin, int emax);
  /// Fixed point with I integer and F fraction bits. Throws InvalidArgument unless
  /// I ≥ 0, F ≥ 0, 1 ≤ I + F ≤ 1000.
  static Format fixed(int integer_bits, int fraction_bits);

  bool is_fixed_point() const { return kind == Kind::fixed_point; }
  /// True when every value of the format is exactly a double (p ≤ 53 and the exponent range,
  /// subnormals included, inside binary64's): such values are stored as a double.
  bool fits_double() const;

  /// Same set F and arithmetic (every field but `name`): `p=11,e=5` equals fp16.
  friend bool operator==(const Format& a, const Format& b);
};

/// One named (preset) format: the row every list of presets is read from — the parser
/// (parse_format), the spellings (format_spellings, `ropesim formats`), the aliases
/// (format_aliases), the compiler's format hint (proofs/compiler/compiler_hint.hpp) and the
/// property generators (properties/generators.hpp). Adding a named format is one row of
/// named_formats() (numeric/format.cpp) plus its test and docs.
struct NamedFormat {
  std::string_view name;  ///< the preset's spelling, e.g. "fp16" (Format::name of make())
  Format (*make)();       ///< its constructor, e.g. Format::fp16
  /// PyTorch's dtype names for it (torch.dtype; parsed with or without `torch.`), e.g.
  /// float16, half
  std::span<const std::string_view> torch_names;
  /// Its place when the presets are ordered from the smallest up, 0 first: by storage width
  /// (8 bits for fp8e4m3 and fp8e5m2, 16 for bf16 and fp16, 19 for tf32, ...), equal widths in
  /// the order the hint has always used (fp8e4m3 before fp8e5m2, bf16 before fp16). The
  /// compiler's hint tries the presets in this order.
  int size_rank;
};

/// The named formats, in the order `ropesim formats` lists them: fp64, fp32, tf32, fp16, bf16,
/// fp8e4m3, fp8e5m2.
std::span<const NamedFormat> named_formats();

/// The preset names (named_formats()' names), in the order `ropesim formats` lists them.
std::vector<std::string> preset_format_names();

/// Parses a format spelling:
///   presets `fp64 fp32 tf32 fp16 bf16 fp8e4m3 fp8e5m2`;
///   `p=P,e=E` (IEEE-style, E exponent bits); `p=P,emin=A,emax=B`;
///   `fixed:I.F`;
///   PyTorch's dtype names for the presets (format_aliases(), with or without `torch.`):
///   bfloat16 → bf16; float16, half → fp16; float32, float → fp32; float64, double → fp64;
///   float8_e4m3fn → fp8e4m3; float8_e5m2 → fp8e5m2 (the Format keeps the preset's name);
/// optionally followed by `,subnormals=off` and/or `,overflow=saturate` (floating formats).
/// Throws InvalidArgument naming the bad spelling, the nearest names (ropesim::did_you_mean)
/// and the accepted ones.
Format parse_format(std::string_view spec);

/// PyTorch dtype names accepted for the preset formats (named_formats()' torch_names, in its
/// order), as (alias, preset) pairs: the
/// `torch.<name>` attributes of torch/_C/_VariableFunctions (torch.bfloat16, torch.float16 =
/// torch.half, torch.float32 = torch.float, torch.float64 = torch.double,
/// torch.float8_e4m3fn, torch.float8_e5m2; PyTorch docs "torch.dtype"). parse_format also
/// accepts each with the `torch.` prefix.
const std::vector<std::pair<std::string, std::string>>& format_aliases();

/// The accepted spellings, for error messages and `--help`.
std::string format_spellings();

/// Expands the integer ranges of one format spelling into the spellings it stands for, in
/// increasing order (the last range varies fastest): `p=4..53,e=11` gives p=4,e=11 …
/// p=53,e=11; `p=11,e=5..8` four formats; `p=8..11,e=5..6` eight. Any `key=A..B` with
/// integers A ≤ B may be a range (p, e, emin, emax). A spelling without `..` is returned as it
/// is. Throws InvalidArgument for a malformed or empty range, or more than 4096 formats; each
/// expanded spelling is checked with parse_format.
std::vector<std::string> expand_format_range(std::string_view spec);

}  // namespace ropesim::numeric
