// Compiles the gradient kernels of gradient-inl.h once per SIMD target and
// exports the table of the best target the CPU supports.
#include "kernels/gradient_table.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gradient.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/gradient-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {

const GradientKernelTable* GetGradientKernelTable() {
  static constexpr GradientKernelTable kTable = MakeGradientKernelTable();
  return &kTable;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sqdiff::detail {

HWY_EXPORT(GetGradientKernelTable);

const GradientKernelTable& gradient_kernel_table() { return *HWY_DYNAMIC_DISPATCH(GetGradientKernelTable)(); }

}  // namespace sqdiff::detail
#endif  // HWY_ONCE
