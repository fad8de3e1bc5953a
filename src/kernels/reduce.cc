// Compiles the reduction kernels of reduce-inl.h once per SIMD target and
// exports the table of the best target the CPU supports.
#include "kernels/reduce_table.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/reduce.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/reduce-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {

const ReduceKernelTable* GetReduceKernelTable() {
  static constexpr ReduceKernelTable kTable = MakeReduceKernelTable();
  return &kTable;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sqdiff::detail {

HWY_EXPORT(GetReduceKernelTable);

const ReduceKernelTable& reduce_kernel_table() { return *HWY_DYNAMIC_DISPATCH(GetReduceKernelTable)(); }

}  // namespace sqdiff::detail
#endif  // HWY_ONCE
