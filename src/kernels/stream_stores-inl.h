// Non-temporal stores of output rows, for the element-wise and the gradient
// kernels: where a row's streaming body starts, and how a narrowed vector
// streams.

#if defined(SQDIFF_KERNELS_STREAM_STORES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_STREAM_STORES_INL_H_
#undef SQDIFF_KERNELS_STREAM_STORES_INL_H_
#else
#define SQDIFF_KERNELS_STREAM_STORES_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elements before `out` reaches the alignment that streaming stores need, or
// n when `out` can never get there (not even element-aligned).
template <class S>
HWY_INLINE size_t ElementsBeforeAligned(const S* out, size_t vector_bytes, size_t n) {
  const auto address = reinterpret_cast<uintptr_t>(out);
  if (address % sizeof(S) != 0) return n;
  const size_t head = ((vector_bytes - address % vector_bytes) % vector_bytes) / sizeof(S);
  return head < n ? head : n;
}

// Highway 1.0.3 streams a 64-bit vector (f16 lanes of an SSE4 f32 vector) with
// a 16-byte movntdq: misaligned and too wide. Those store normally.
template <class DH>
HWY_INLINE void StreamHalves(DH dh, hn::Vec<DH> v, hn::TFromD<DH>* aligned) {
  if constexpr (hn::MaxLanes(DH()) * sizeof(hn::TFromD<DH>) >= 16) {
    hn::Stream(v, dh, aligned);
  } else {
    hn::StoreU(v, dh, aligned);
  }
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_STREAM_STORES_INL_H_
