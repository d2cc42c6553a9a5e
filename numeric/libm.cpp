#include "numeric/libm.hpp"

#include <gnu/libc-version.h>

#include <cmath>
#include <vector>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/suggest.hpp"

namespace ropesim::numeric {

// numeric/libm_sleef_avx2.cpp, compiled with -mavx2 -mfma (plain C types only, so that no
// inline function compiled for AVX2 can be shared with the rest of the program).
namespace sleef_avx2 {
bool built();
void cosf8(const float* x, float* out);
void sinf8(const float* x, float* out);
void powf8(const float* x, const float* y, float* out);
const char* version();
}  // namespace sleef_avx2

namespace {

constexpr Spelling<LibmImplementation> libm_names[] = {
    {LibmImplementation::correctly_rounded, "cr"},
    {LibmImplementation::glibc, "glibc"},
    {LibmImplementation::sleef_u10, "sleef-u10"}};
constexpr EnumNames<LibmImplementation> libm_table{.what = "math library implementation",
                                                   .names = libm_names,
                                                   .aliases = {},
                                                   .accepted = "cr | glibc | sleef-u10",
                                                   .suggest = true,
                                                   .suggestions = {}};

}  // namespace

std::string_view to_string(LibmImplementation implementation) {
  return name_of(libm_table, implementation);
}

std::string libm_implementation_spellings() { return std::string(libm_table.accepted); }

LibmImplementation parse_libm_implementation(std::string_view text) {
  return parse_name(libm_table, text);
}

bool sleef_avx2_available() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return sleef_avx2::built() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

void require_sleef_avx2() {
  if (!sleef_avx2_available()) {
    throw InvalidArgument(
        "sleef-u10 calls SLEEF's AVX2 functions (PyTorch's AVX2 capability) and this CPU lacks "
        "AVX2 or FMA; accepted here: cr or glibc");
  }
}

SleefVector sleef_cosf8_u10(const SleefVector& x) {
  require_sleef_avx2();
  SleefVector out{};
  sleef_avx2::cosf8(x.data(), out.data());
  return out;
}

SleefVector sleef_sinf8_u10(const SleefVector& x) {
  require_sleef_avx2();
  SleefVector out{};
  sleef_avx2::sinf8(x.data(), out.data());
  return out;
}

SleefVector sleef_powf8_u10(const SleefVector& x, const SleefVector& y) {
  require_sleef_avx2();
  SleefVector out{};
  sleef_avx2::powf8(x.data(), y.data(), out.data());
  return out;
}

float glibc_cosf(float x) { return ::cosf(x); }
float glibc_sinf(float x) { return ::sinf(x); }
float glibc_powf(float x, float y) { return ::powf(x, y); }

std::string glibc_version() { return gnu_get_libc_version(); }

std::string sleef_version() { return sleef_avx2::version(); }

}  // namespace ropesim::numeric
