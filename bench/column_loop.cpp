#include "column_loop.hpp"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace sqdiff_bench {
namespace {

#if defined(__AVX512F__)
using VecD = __m512d;
constexpr std::size_t kLanes = 8;
// (The zero-masked form: GCC 12 warns falsely (-Wmaybe-uninitialized) on the
// unmasked _mm512_cvtps_pd, whose pass-through operand is undefined.)
inline VecD widen(const float* p) { return _mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(p)); }
inline VecD load(const double* p) { return _mm512_loadu_pd(p); }
inline void store(double* p, VecD v) { _mm512_storeu_pd(p, v); }
inline VecD sub(VecD a, VecD b) { return _mm512_sub_pd(a, b); }
inline VecD fma(VecD a, VecD b, VecD c) { return _mm512_fmadd_pd(a, b, c); }
#elif defined(__AVX2__) && defined(__FMA__)
using VecD = __m256d;
constexpr std::size_t kLanes = 4;
inline VecD widen(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
inline VecD load(const double* p) { return _mm256_loadu_pd(p); }
inline void store(double* p, VecD v) { _mm256_storeu_pd(p, v); }
inline VecD sub(VecD a, VecD b) { return _mm256_sub_pd(a, b); }
inline VecD fma(VecD a, VecD b, VecD c) { return _mm256_fmadd_pd(a, b, c); }
#else
#error "the column loop needs AVX2 and FMA or AVX-512 (the bench is built with -march=native)"
#endif

constexpr std::size_t kStep = 16;  // f32 elements: one 64-byte line of each input
constexpr std::size_t kAhead = 1024;  // f32 elements: 4 KiB

}  // namespace

double run_column_loop(const float* a, const float* b, std::size_t rows, std::size_t columns, std::size_t kept,
                       double* sums) {
  std::memset(sums, 0, kept * sizeof(double));
  for (std::size_t r = 0; r < rows; ++r) {
    const float* ar = a + r * columns;
    const float* br = b + r * columns;
    for (std::size_t j = 0; j < columns; j += kStep) {
      // As integers: past the last row these point nowhere, and the prefetch is dropped.
      _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(ar + j) + kAhead * 4), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(br + j) + kAhead * 4), _MM_HINT_T0);
      double* s = sums + j % kept;
      for (std::size_t k = 0; k < kStep; k += kLanes) {
        const VecD d = sub(widen(ar + j + k), widen(br + j + k));
        store(s + k, fma(d, d, load(s + k)));
      }
    }
  }
  double total = 0;
  for (std::size_t j = 0; j < kept; ++j) total += sums[j];
  return total;
}

}  // namespace sqdiff_bench
