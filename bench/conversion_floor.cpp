#include "conversion_floor.hpp"

#include <immintrin.h>

#include <stdexcept>

namespace sqdiff_bench {
namespace {

#if defined(__AVX512F__) && defined(__F16C__)
#define SQDIFF_BENCH_F16_FLOOR 1
__m512 widen_f16(const std::byte* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
void narrow_f16(__m512 v, std::byte* p) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
#else
#define SQDIFF_BENCH_F16_FLOOR 0
#endif

#if defined(__AVX512F__) && defined(__AVX512BF16__)
#define SQDIFF_BENCH_BF16_FLOOR 1
__m512 widen_bf16(const std::byte* p) {
  const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}
void narrow_bf16(__m512 v, std::byte* p) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)));
}
#else
#define SQDIFF_BENCH_BF16_FLOOR 0
#endif

#if SQDIFF_BENCH_F16_FLOOR || SQDIFF_BENCH_BF16_FLOOR
template <__m512 (*kWiden)(const std::byte*), void (*kNarrow)(__m512, std::byte*)>
void floor_loop(bool squared, const std::byte* a, const std::byte* b, std::byte* out, std::size_t n) {
  constexpr std::size_t kStep = 16 * 2;  // 16 lanes of 2 bytes
  const std::size_t bytes = n * 2;
  if (squared) {
    for (std::size_t i = 0; i < bytes; i += kStep) {
      const __m512 d = _mm512_sub_ps(kWiden(a + i), kWiden(b + i));
      kNarrow(_mm512_mul_ps(d, d), out + i);
    }
  } else {
    for (std::size_t i = 0; i < bytes; i += kStep) kNarrow(_mm512_sub_ps(kWiden(a + i), kWiden(b + i)), out + i);
  }
}
#endif

}  // namespace

bool has_conversion_floor(sqdiff::DType dtype) {
  return (dtype == sqdiff::DType::f16 && SQDIFF_BENCH_F16_FLOOR) ||
         (dtype == sqdiff::DType::bf16 && SQDIFF_BENCH_BF16_FLOOR);
}

void conversion_floor(sqdiff::DType dtype, bool squared, const std::byte* a, const std::byte* b, std::byte* out,
                      std::size_t n) {
  if (n % 16 != 0) throw std::invalid_argument("conversion_floor: n must be a multiple of 16");
#if SQDIFF_BENCH_F16_FLOOR
  if (dtype == sqdiff::DType::f16) return floor_loop<widen_f16, narrow_f16>(squared, a, b, out, n);
#endif
#if SQDIFF_BENCH_BF16_FLOOR
  if (dtype == sqdiff::DType::bf16) return floor_loop<widen_bf16, narrow_bf16>(squared, a, b, out, n);
#endif
  (void)squared, (void)a, (void)b, (void)out;
  throw std::invalid_argument("conversion_floor: not compiled for this dtype");
}

}  // namespace sqdiff_bench
