// The only translation unit compiled with -mavx2 -mfma (numeric/CMakeLists.txt): thin calls of
// SLEEF's AVX2 u10 functions over plain float arrays. It includes no C++ library header, so
// no inline function compiled for AVX2 can be merged into code that runs on other CPUs;
// numeric/libm.cpp checks the CPU before calling in.
#include <sleef.h>

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define ROPESIM_SLEEF_AVX2 1
#endif

namespace ropesim::numeric::sleef_avx2 {

#ifdef ROPESIM_SLEEF_AVX2
bool built() { return true; }

void cosf8(const float* x, float* out) {
  _mm256_storeu_ps(out, Sleef_cosf8_u10avx2(_mm256_loadu_ps(x)));
}

void sinf8(const float* x, float* out) {
  _mm256_storeu_ps(out, Sleef_sinf8_u10avx2(_mm256_loadu_ps(x)));
}

void powf8(const float* x, const float* y, float* out) {
  _mm256_storeu_ps(out, Sleef_powf8_u10avx2(_mm256_loadu_ps(x), _mm256_loadu_ps(y)));
}
#else
// Not x86-64 (or not compiled for AVX2): never called, libm.cpp refuses sleef-u10 first.
bool built() { return false; }
void cosf8(const float*, float*) {}
void sinf8(const float*, float*) {}
void powf8(const float*, const float*, float*) {}
#endif

#define ROPESIM_STR2(x) #x
#define ROPESIM_STR(x) ROPESIM_STR2(x)
const char* version() {
  return ROPESIM_STR(SLEEF_VERSION_MAJOR) "." ROPESIM_STR(SLEEF_VERSION_MINOR) "." ROPESIM_STR(
      SLEEF_VERSION_PATCHLEVEL);
}

}  // namespace ropesim::numeric::sleef_avx2
