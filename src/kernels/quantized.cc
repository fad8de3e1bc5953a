// Compiles the quantized row kernels of quantized-inl.h once per SIMD target
// and hands out the table of the best target the CPU supports.
#include "kernels/quantized_table.hpp"

#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quantized.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/quantized-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {

const QuantizedKernelTable* GetQuantizedKernelTable() {
  static constexpr QuantizedKernelTable kTable = MakeQuantizedKernelTable();
  return &kTable;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sqdiff::detail {

// The table of the best compiled target the CPU supports (hwy::SupportedTargets
// honours SetSupportedTargetsForTest), chosen here rather than by HWY_EXPORT:
// this file alone is compiled with HWY_WANT_AVX3_DL, and Highway's dispatch
// helpers (hwy::ChosenTarget) are inline functions whose bodies depend on the
// compiled targets. Used from two sets of targets they break the one-definition
// rule: an unoptimised build called a null entry of the element-wise table.
const QuantizedKernelTable& quantized_kernel_table() {
  const int64_t supported = hwy::SupportedTargets();
#define SQDIFF_QUANTIZED_TARGET(TARGET, NAMESPACE) \
  if ((supported & (TARGET)) != 0) return *NAMESPACE::GetQuantizedKernelTable();
#if HWY_TARGETS & HWY_AVX3_DL
  SQDIFF_QUANTIZED_TARGET(HWY_AVX3_DL, N_AVX3_DL)
#endif
#if HWY_TARGETS & HWY_AVX3
  SQDIFF_QUANTIZED_TARGET(HWY_AVX3, N_AVX3)
#endif
#if HWY_TARGETS & HWY_AVX2
  SQDIFF_QUANTIZED_TARGET(HWY_AVX2, N_AVX2)
#endif
#if HWY_TARGETS & HWY_SSE4
  SQDIFF_QUANTIZED_TARGET(HWY_SSE4, N_SSE4)
#endif
#if HWY_TARGETS & HWY_SSSE3
  SQDIFF_QUANTIZED_TARGET(HWY_SSSE3, N_SSSE3)
#endif
#if HWY_TARGETS & HWY_EMU128
  SQDIFF_QUANTIZED_TARGET(HWY_EMU128, N_EMU128)
#endif
#if HWY_TARGETS & HWY_SCALAR
  SQDIFF_QUANTIZED_TARGET(HWY_SCALAR, N_SCALAR)
#endif
#undef SQDIFF_QUANTIZED_TARGET
  // Elsewhere (another architecture, a build of the static target alone): the
  // target this file was compiled for.
  return *HWY_STATIC_DISPATCH(GetQuantizedKernelTable)();
}

int64_t quantized_compiled_targets() { return HWY_TARGETS; }

}  // namespace sqdiff::detail
#endif  // HWY_ONCE
