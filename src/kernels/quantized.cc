// Compiles the quantized row kernels of quantized-inl.h once per SIMD target
// and exports the table of the best target the CPU supports.
#include "kernels/quantized_table.hpp"

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

// HWY_EXPORT takes one plain function: returning the whole table keeps the
// dispatch out of the inner loops.
HWY_EXPORT(GetQuantizedKernelTable);

const QuantizedKernelTable& quantized_kernel_table() { return *HWY_DYNAMIC_DISPATCH(GetQuantizedKernelTable)(); }

int64_t quantized_compiled_targets() { return HWY_TARGETS; }

}  // namespace sqdiff::detail
#endif  // HWY_ONCE
