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
// bf16 in the cheapest lane order, 32 lanes at a time: an in-block unpack
// widens each input (a bf16 is the upper half of its f32), one vcvtne2ps2bf16
// narrows both results, and a permute of 64-bit groups restores the order.
// Widening in order (vpmovzxwd and a shift per 16 lanes) and narrowing each
// vector with vcvtneps2bf16 took ~1.5x as long.
void bf16_floor_loop(bool squared, const std::byte* a, const std::byte* b, std::byte* out, std::size_t n) {
  constexpr std::size_t kStep = 32 * 2;  // 32 lanes of 2 bytes
  const std::size_t bytes = n * 2;
  const __m512i zero = _mm512_setzero_si512();
  const __m512i in_order = _mm512_set_epi64(7, 3, 6, 2, 5, 1, 4, 0);
  for (std::size_t i = 0; i < bytes; i += kStep) {
    const __m512i va = _mm512_loadu_si512(a + i);
    const __m512i vb = _mm512_loadu_si512(b + i);
    __m512 low = _mm512_sub_ps(_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, va)),
                               _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, vb)));
    __m512 high = _mm512_sub_ps(_mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, va)),
                                _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, vb)));
    if (squared) {
      low = _mm512_mul_ps(low, low);
      high = _mm512_mul_ps(high, high);
    }
    const auto narrowed = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(high, low));
    _mm512_storeu_si512(out + i, _mm512_permutexvar_epi64(in_order, narrowed));
  }
}
#else
#define SQDIFF_BENCH_BF16_FLOOR 0
#endif

#if SQDIFF_BENCH_F16_FLOOR
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
  if (n % 32 != 0) throw std::invalid_argument("conversion_floor: n must be a multiple of 32");
#if SQDIFF_BENCH_F16_FLOOR
  if (dtype == sqdiff::DType::f16) return floor_loop<widen_f16, narrow_f16>(squared, a, b, out, n);
#endif
#if SQDIFF_BENCH_BF16_FLOOR
  if (dtype == sqdiff::DType::bf16) return bf16_floor_loop(squared, a, b, out, n);
#endif
  (void)squared, (void)a, (void)b, (void)out;
  throw std::invalid_argument("conversion_floor: not compiled for this dtype");
}

}  // namespace sqdiff_bench
