// Software prefetch a fixed distance ahead of a row, for kernels that widen to
// f64 and so do more work per byte than a plain read: the hardware
// prefetchers alone, which stop at each 4 KiB page, left them short of the
// bound loop. Not target-specific (hwy::Prefetch), but kept with the kernels
// that use it.

#if defined(SQDIFF_KERNELS_PREFETCH_AHEAD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_PREFETCH_AHEAD_INL_H_
#undef SQDIFF_KERNELS_PREFETCH_AHEAD_INL_H_
#else
#define SQDIFF_KERNELS_PREFETCH_AHEAD_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {

// Asks for the lines 4 KiB past elements [at, at + count). Measured on the
// reductions' rows (sqdiff_bench, ratio to the bound loop without -> with 4 KiB
// ahead: f32 64M all axes 1 thread 0.97 -> 1.03, 2 threads 0.89 -> 0.98; per
// row [4096,4096] 0.86 -> 1.02 and 0.64 -> 0.99; per channel 0.57 -> 0.97 and
// 0.79 -> 0.96; 1, 2 and 8 KiB did less; the column kernel, per column
// [4096,4096] 1 thread: 0.57-0.60 -> 0.71-0.74). Addresses are formed as
// integers: past the end of the row they point nowhere, and a prefetch there
// is dropped.
template <class S>
HWY_INLINE void PrefetchAhead(const S* at, size_t count) {
  constexpr size_t kPrefetchBytes = 4096;
  constexpr size_t kLineBytes = 64;
  const uintptr_t ahead = reinterpret_cast<uintptr_t>(at) + kPrefetchBytes;
  for (size_t k = 0; k < count * sizeof(S); k += kLineBytes) {
    hwy::Prefetch(reinterpret_cast<const char*>(ahead + k));
  }
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_PREFETCH_AHEAD_INL_H_
