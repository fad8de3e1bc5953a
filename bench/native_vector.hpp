// One vector of the widest integer SIMD the bench is compiled for
// (-march=native: AVX-512 on the reference machine), for the bound loops of
// the element-wise ops (bound_loops.cpp) and of the reductions
// (reduce_bound_loops.cpp). Loads and ordinary stores are unaligned;
// streaming stores need an aligned address.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace sqdiff_bench::native {

#if defined(__AVX512F__)
using Vec = __m512i;
inline Vec load(const std::byte* p) { return _mm512_loadu_si512(p); }
inline void store(std::byte* p, Vec v) { _mm512_storeu_si512(p, v); }
inline void stream(std::byte* p, Vec v) { _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v); }
inline Vec add(Vec a, Vec b) { return _mm512_add_epi32(a, b); }
inline Vec sub(Vec a, Vec b) { return _mm512_sub_epi32(a, b); }
inline Vec zero() { return _mm512_setzero_si512(); }
// (The masked form: GCC 12 warns falsely (-Wmaybe-uninitialized) on the
// unmasked _mm512_max_epi32, whose pass-through operand is undefined.)
inline Vec max(Vec a, Vec b) { return _mm512_mask_max_epi32(a, 0xFFFF, a, b); }
inline Vec splat(int32_t x) { return _mm512_set1_epi32(x); }
#elif defined(__AVX2__)
using Vec = __m256i;
inline Vec load(const std::byte* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void store(std::byte* p, Vec v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
inline void stream(std::byte* p, Vec v) { _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v); }
inline Vec add(Vec a, Vec b) { return _mm256_add_epi32(a, b); }
inline Vec sub(Vec a, Vec b) { return _mm256_sub_epi32(a, b); }
inline Vec zero() { return _mm256_setzero_si256(); }
inline Vec max(Vec a, Vec b) { return _mm256_max_epi32(a, b); }
inline Vec splat(int32_t x) { return _mm256_set1_epi32(x); }
#else
using Vec = __m128i;
inline Vec load(const std::byte* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline void store(std::byte* p, Vec v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
inline void stream(std::byte* p, Vec v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), v); }
inline Vec add(Vec a, Vec b) { return _mm_add_epi32(a, b); }
inline Vec sub(Vec a, Vec b) { return _mm_sub_epi32(a, b); }
inline Vec zero() { return _mm_setzero_si128(); }
inline Vec max(Vec a, Vec b) {  // SSE2 has no 32-bit max; compare and blend
  const Vec greater = _mm_cmpgt_epi32(a, b);
  return _mm_or_si128(_mm_and_si128(greater, a), _mm_andnot_si128(greater, b));
}
inline Vec splat(int32_t x) { return _mm_set1_epi32(x); }
#endif

}  // namespace sqdiff_bench::native
