// The only translation unit compiled with -mavx2 -mfma (numeric/CMakeLists.txt): thin calls of
// SLEEF's AVX2 u10 functions over plain float arrays. It includes no C++ library header, so
// no inline function compiled for AVX2 can be merged into code that runs on other CPUs;
// numeric/libm.cpp checks the CPU before calling in.
#include <immintrin.h>
#include <sleef.h>

namespace ropesim::numeric::sleef_avx2 {

void cosf8(const float* x, float* out) {
  _mm256_storeu_ps(out, Sleef_cosf8_u10avx2(_mm256_loadu_ps(x)));
}

void sinf8(const float* x, float* out) {
  _mm256_storeu_ps(out, Sleef_sinf8_u10avx2(_mm256_loadu_ps(x)));
}

void powf8(const float* x, const float* y, float* out) {
  _mm256_storeu_ps(out, Sleef_powf8_u10avx2(_mm256_loadu_ps(x), _mm256_loadu_ps(y)));
}

#define ROPESIM_STR2(x) #x
#define ROPESIM_STR(x) ROPESIM_STR2(x)
const char* version() {
  return ROPESIM_STR(SLEEF_VERSION_MAJOR) "." ROPESIM_STR(SLEEF_VERSION_MINOR) "." ROPESIM_STR(
      SLEEF_VERSION_PATCHLEVEL);
}

}  // namespace ropesim::numeric::sleef_avx2
