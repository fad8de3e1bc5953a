// The indices of a mask's false lanes appended to a list: how the kernels that
// leave some elements to an exact path (the roundings that a bound does not
// decide, the gradients a check cannot certify) hand them back. Rare, so
// written for clarity: a store of the mask as numbers and a scalar loop.

#if defined(SQDIFF_KERNELS_FALSE_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_FALSE_LANES_INL_H_
#undef SQDIFF_KERNELS_FALSE_LANES_INL_H_
#else
#define SQDIFF_KERNELS_FALSE_LANES_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// indices[count++] = first + k for each lane k where `mask` is false.
template <class D>
HWY_INLINE void AppendFalseLanes(D d, hn::Mask<D> mask, std::size_t first, uint32_t* indices, std::size_t& count) {
  HWY_ALIGN hn::TFromD<D> lanes[hn::MaxLanes(d)];
  hn::Store(hn::IfThenElseZero(mask, hn::Set(d, hn::TFromD<D>{1})), d, lanes);
  for (std::size_t k = 0; k < hn::Lanes(d); ++k) {
    if (lanes[k] == 0) indices[count++] = static_cast<uint32_t>(first + k);
  }
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_FALSE_LANES_INL_H_
