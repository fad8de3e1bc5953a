// Strided rows packed into contiguous ones: a repeated element (stride 0), a
// reversed row (stride -1) and every other element (stride 2) as whole
// vectors. Other strides, and the last partial vector, are copied element by
// element: the CPU's gather instructions measured slower than that on this AMD EPYC
// (8M f32 with stride 2: 0.26 of the bound against 0.39).

#if defined(SQDIFF_KERNELS_GATHER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_GATHER_INL_H_
#undef SQDIFF_KERNELS_GATHER_INL_H_
#else
#define SQDIFF_KERNELS_GATHER_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Indexes from the base: stepping a pointer past the last element of a
// reversed view would leave the buffer. memcpy: the views need not be aligned
// to their element size.
template <typename T>
HWY_INLINE void GatherTail(const T* from, int64_t stride, T* to, size_t begin, size_t n) {
  for (size_t i = begin; i < n; ++i) std::memcpy(to + i, from + static_cast<int64_t>(i) * stride, sizeof(T));
}

// to[i] = from[i * stride] for i < n; T is the unsigned type of the element size.
template <typename T>
void GatherRow(const void* source, int64_t stride, void* target, size_t n) {
  const auto* from = static_cast<const T*>(source);
  auto* to = static_cast<T*>(target);
  size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  if (stride == 0) {  // one element repeated
    T value;
    std::memcpy(&value, from, sizeof(T));
    for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Set(d, value), d, to + i);
  }
  if (stride == 2) {  // every other element: a strided slice, one channel of two
    // Two vectors hold a vector's worth at their even lanes. The odd lane
    // after the last element may lie past the caller's buffer, so the last
    // vector is left to the tail.
    for (; i + lanes < n; i += lanes) {
      const T* pair = from + 2 * i;
      hn::StoreU(hn::ConcatEven(d, hn::LoadU(d, pair + lanes), hn::LoadU(d, pair)), d, to + i);
    }
  }
  if constexpr (sizeof(T) >= 2) {  // Highway 1.0.3 reverses 16-bit lanes and wider
    if (stride == -1) {
      // Elements i .. i + lanes - 1 are the vector that ends at from - i.
      for (; i + lanes <= n; i += lanes) {
        hn::StoreU(hn::Reverse(d, hn::LoadU(d, from - static_cast<int64_t>(i + lanes - 1))), d, to + i);
      }
    }
  }
#endif
  GatherTail(from, stride, to, i, n);
}

constexpr GatherKernels MakeGatherKernels() {
  return {&GatherRow<uint8_t>, &GatherRow<uint16_t>, &GatherRow<uint32_t>, &GatherRow<uint64_t>};
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_GATHER_INL_H_
