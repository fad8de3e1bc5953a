// Compiles the row kernels of elementwise-inl.h once per SIMD target and
// exports the table of the best target the CPU supports.
#include "kernels/kernel_table.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/elementwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/elementwise-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {

const KernelTable* GetKernelTable() {
  static constexpr KernelTable kTable = MakeKernelTable();
  return &kTable;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sqdiff::detail {

// HWY_EXPORT takes one plain function: returning the whole table keeps the
// dispatch out of the inner loops.
HWY_EXPORT(GetKernelTable);

const KernelTable& kernel_table() { return *HWY_DYNAMIC_DISPATCH(GetKernelTable)(); }

int64_t compiled_targets() { return HWY_TARGETS; }

}  // namespace sqdiff::detail
#endif  // HWY_ONCE
