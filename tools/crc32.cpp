#include "crc32.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sqdiff::tools {
namespace {

// zlib's own loop, in pieces its uInt length can take.
uint32_t crc32_zlib(uint32_t crc, const unsigned char* data, std::size_t size) {
  uLong value = crc;
  while (size > 0) {
    const std::size_t step = std::min<std::size_t>(size, std::numeric_limits<uInt>::max());
    value = ::crc32(value, data, static_cast<uInt>(step));
    data += step;
    size -= step;
  }
  return static_cast<uint32_t>(value);
}

#if defined(__x86_64__)

__m128i load(const unsigned char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }

// x carried 128 bits further by `k` (its halves times x^(n+64) and x^n mod P), plus the next 128 bits.
__attribute__((target("pclmul"))) inline __m128i fold(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

// Folding with carry-less products (Intel's "Fast CRC Computation for Generic
// Polynomials Using PCLMULQDQ", Gopal et al., 2009): four 128-bit lanes of the
// message are carried forward 512 bits at a time by multiplying each half by
// x^(512±64) mod P (bit-reflected, so the constants below are those powers'
// reflections), folded into one lane, reduced to 64 and then 32 bits, and the
// last step is a Barrett reduction by P. The register holds the CRC's internal
// state (zlib's crc inverted); `size` is a multiple of 16, at least 64.
__attribute__((target("pclmul,sse4.1"))) uint32_t fold_register(uint32_t state, const unsigned char* data,
                                                              std::size_t size) {
  const __m128i fold512 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
  const __m128i fold128 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
  const __m128i fold64 = _mm_set_epi64x(0, 0x163cd6124);
  const __m128i barrett = _mm_set_epi64x(0x1f7011641, 0x1db710641);  // mu (high), P (low)
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);

  __m128i x0 = _mm_xor_si128(load(data), _mm_cvtsi32_si128(static_cast<int>(state)));
  __m128i x1 = load(data + 16), x2 = load(data + 32), x3 = load(data + 48);
  data += 64;
  size -= 64;
  for (; size >= 64; data += 64, size -= 64) {
    x0 = fold(x0, fold512, load(data));
    x1 = fold(x1, fold512, load(data + 16));
    x2 = fold(x2, fold512, load(data + 32));
    x3 = fold(x3, fold512, load(data + 48));
  }
  x0 = fold(fold(fold(x0, fold128, x1), fold128, x2), fold128, x3);
  for (; size >= 16; data += 16, size -= 16) x0 = fold(x0, fold128, load(data));

  // 128 bits to 64: the low half times x^64 mod P, plus the high half.
  x0 = _mm_xor_si128(_mm_clmulepi64_si128(x0, fold128, 0x10), _mm_srli_si128(x0, 8));
  // 64 bits to 32.
  x0 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, mask32), fold64, 0x00), _mm_srli_si128(x0, 4));
  // Barrett: the quotient from mu, then the remainder's correction from P.
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), barrett, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), barrett, 0x00);
  return static_cast<uint32_t>(_mm_extract_epi32(_mm_xor_si128(x0, t), 1));
}

bool has_carryless_multiply() {
  static const bool has = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return has;
}

#endif

}  // namespace

uint32_t crc32(uint32_t crc, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
  if (size >= 64 && has_carryless_multiply()) {
    const std::size_t folded = size & ~std::size_t{15};
    crc = ~fold_register(~crc, bytes, folded);
    bytes += folded;
    size -= folded;
  }
#endif
  return crc32_zlib(crc, bytes, size);
}

}  // namespace sqdiff::tools
