#pragma once
/// The math libraries real frameworks call for cos, sin and pow in binary32, called here as
/// they are (not re-implemented), so that a pipeline step can compute what the framework
/// computes bit for bit (NUMERIC §3 "libm `cosf` is not guaranteed correctly
/// rounded").
///
///   cr         the correctly rounded result (MPFR / numeric::Arithmetic; the default)
///   glibc      the system libm's cosf, sinf, powf (glibc ≥ 2.28: sysdeps/ieee754/flt-32
///              s_sinf.c, s_cosf.c, e_powf.c, selected at load time by ifunc, e.g. the FMA
///              variant on x86-64 CPUs with FMA). PyTorch's scalar path (ATEN_CPU_CAPABILITY=
///              default: Vectorized<float>::cos = map(std::cos)) and ggml's CPU rope
///              (cosf/sinf/powf) call these. Another glibc may give other bits: glibc_version()
///              is recorded in provenance.
///   sleef-u10  SLEEF 3.5's AVX2 u10 functions Sleef_cosf8_u10avx2, Sleef_sinf8_u10avx2,
///              Sleef_powf8_u10avx2 (Debian's libsleef3, the library Debian's PyTorch links).
///              PyTorch 1.13 at CPU capability AVX2 calls Sleef_cosf8_u10 / Sleef_sinf8_u10 /
///              Sleef_powf8_u10 (ATen/cpu/vec/vec256/vec256_float.h:190, 196, 267), SLEEF's
///              dispatchers, which pick the avx2 variant on a CPU with AVX2 and FMA; this
///              module calls the avx2 variant by name so that the bits do not depend on the
///              dispatcher. The vector functions are not lane-independent: Sleef_cosf8_u10avx2
///              takes its wider double-float argument reduction for all eight lanes when
///              any lane has |x| ≥ 125 (sleefsimdsp.c xcosf_u1/xsinf_u1: the short
///              Cody–Waite path needs every |x| < TRIGRANGEMAX2f), so a lane's bits depend on
///              its vector mates; callers pass the whole vector.
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace ropesim::numeric {

/// Which implementation computes a transcendental step (see the file comment).
enum class LibmImplementation {
  correctly_rounded,  ///< "cr"
  glibc,              ///< "glibc"
  sleef_u10,          ///< "sleef-u10"
};

/// "cr", "glibc", "sleef-u10".
std::string_view to_string(LibmImplementation implementation);
/// Parses "cr", "glibc" or "sleef-u10". Throws InvalidArgument naming the text, the nearest
/// name (did_you_mean) and the accepted ones.
LibmImplementation parse_libm_implementation(std::string_view text);
/// The accepted spellings, "cr | glibc | sleef-u10".
std::string libm_implementation_spellings();

/// Lanes of the SLEEF vector functions called (AVX2: 8 binary32 values).
inline constexpr std::size_t kSleefLanes = 8;
/// A vector of kSleefLanes binary32 values.
using SleefVector = std::array<float, kSleefLanes>;

/// True when this CPU can run the AVX2 variants (x86-64 with AVX2 and FMA,
/// __builtin_cpu_supports); false on other architectures, where sleef-u10 is refused.
bool sleef_avx2_available();
/// Throws InvalidArgument (one line: sleef-u10 needs AVX2 and FMA; accepted here: cr, glibc)
/// when !sleef_avx2_available().
void require_sleef_avx2();

/// Sleef_cosf8_u10avx2(x) lane by lane; requires sleef_avx2_available() (checked: throws).
SleefVector sleef_cosf8_u10(const SleefVector& x);
/// Sleef_sinf8_u10avx2(x); as sleef_cosf8_u10.
SleefVector sleef_sinf8_u10(const SleefVector& x);
/// Sleef_powf8_u10avx2(x, y); as sleef_cosf8_u10.
SleefVector sleef_powf8_u10(const SleefVector& x, const SleefVector& y);

/// glibc's cosf(x), sinf(x), powf(x, y) (the system libm, default rounding mode).
float glibc_cosf(float x);
float glibc_sinf(float x);
float glibc_powf(float x, float y);

/// gnu_get_libc_version(), e.g. "2.36".
std::string glibc_version();
/// The SLEEF header version built against, e.g. "3.5.1".
std::string sleef_version();

}  // namespace ropesim::numeric
