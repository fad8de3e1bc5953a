// Constant operands of the 8-bit quantized ops: where one input is a single
// element along a row (x - c, (x - c)^2: mean subtraction, normalisation), the
// output is a function of one byte, so a 256-entry table built per row by the
// exact pipeline (quantized-inl.h) gives every output, applied with byte
// permutes: vpermi2b on AVX-512 VBMI (two 128-entry halves, picked by the
// index's top bit), pshufb on 16-entry pieces elsewhere.

#if defined(SQDIFF_KERNELS_QUANTIZED_LOOKUP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_QUANTIZED_LOOKUP_INL_H_
#undef SQDIFF_KERNELS_QUANTIZED_LOOKUP_INL_H_
#else
#define SQDIFF_KERNELS_QUANTIZED_LOOKUP_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out = table[in] for every byte of a row.
struct ByteTable {
  HWY_ALIGN uint8_t bytes[256];
};

#if HWY_TARGET == HWY_AVX3_DL

HWY_INLINE __m512i LookUp(__m512i t0, __m512i t1, __m512i t2, __m512i t3, __m512i index) {
  const __m512i low_half = _mm512_permutex2var_epi8(t0, index, t1);   // bit 6 picks t0 / t1
  const __m512i high_half = _mm512_permutex2var_epi8(t2, index, t3);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low_half, high_half);  // bit 7
}

// kStream: non-temporal stores for the 64-byte-aligned body (the caller fences).
template <bool kStream>
HWY_INLINE void LookUpBytes(const ByteTable& table, const uint8_t* in, uint8_t* out, size_t n) {
  const __m512i t0 = _mm512_load_si512(table.bytes);
  const __m512i t1 = _mm512_load_si512(table.bytes + 64);
  const __m512i t2 = _mm512_load_si512(table.bytes + 128);
  const __m512i t3 = _mm512_load_si512(table.bytes + 192);
  const auto masked = [&](size_t i, size_t count) {
    const __mmask64 mask = count >= 64 ? ~__mmask64{0} : (__mmask64{1} << count) - 1;
    _mm512_mask_storeu_epi8(out + i, mask, LookUp(t0, t1, t2, t3, _mm512_maskz_loadu_epi8(mask, in + i)));
  };
  size_t i = 0;
  if constexpr (kStream) {
    const size_t misalignment = reinterpret_cast<uintptr_t>(out) & 63;
    const size_t head = misalignment == 0 ? 0 : (64 - misalignment < n ? 64 - misalignment : n);
    if (head != 0) masked(0, head);
    i = head;
  }
  for (; i + 64 <= n; i += 64) {
    const __m512i result = LookUp(t0, t1, t2, t3, _mm512_loadu_si512(in + i));
    if constexpr (kStream) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i), result);
    } else {
      _mm512_storeu_si512(out + i, result);
    }
  }
  if (i < n) masked(i, n - i);
}

#elif HWY_TARGET == HWY_SCALAR

template <bool kStream>
HWY_INLINE void LookUpBytes(const ByteTable& table, const uint8_t* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = table.bytes[in[i]];
}

#else

// Sixteen pieces of sixteen entries: each lane takes the piece its high
// nibble names, looked up by its low nibble.
template <bool kStream>
HWY_INLINE void LookUpBytes(const ByteTable& table, const uint8_t* in, uint8_t* out, size_t n) {
  const hn::ScalableTag<uint8_t> d8;
  const size_t lanes = hn::Lanes(d8);
  hn::Vec<decltype(d8)> pieces[16];
  for (int j = 0; j < 16; ++j) pieces[j] = hn::LoadDup128(d8, table.bytes + 16 * j);
  const auto low_bits = hn::Set(d8, 0x0F);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto index = hn::LoadU(d8, in + i);
    const auto low = hn::And(index, low_bits);
    const auto high = hn::ShiftRight<4>(index);
    auto result = hn::TableLookupBytes(pieces[0], low);
    for (int j = 1; j < 16; ++j) {
      result = hn::IfThenElse(hn::Eq(high, hn::Set(d8, static_cast<uint8_t>(j))), hn::TableLookupBytes(pieces[j], low),
                              result);
    }
    hn::StoreU(result, d8, out + i);
  }
  for (; i < n; ++i) out[i] = table.bytes[in[i]];
}

#endif

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_QUANTIZED_LOOKUP_INL_H_
