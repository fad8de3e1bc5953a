// Compiles the element-wise kernel table (elementwise_table-inl.h) once per SIMD target and
// exports the table of the best target the CPU supports.
#include "kernels/kernel_table.hpp"

#include <atomic>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/elementwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/elementwise_table-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {

const KernelTable* GetKernelTable() {
  static constexpr KernelTable kTable = MakeKernelTable<BFloat16Codec>();
#if SQDIFF_HAVE_BF16_INSTRUCTIONS
  static constexpr KernelTable kBF16InstructionTable = MakeKernelTable<BFloat16InstructionCodec>();
  if (use_bf16_instructions()) return &kBF16InstructionTable;
#endif
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

bool cpu_has_bf16_instructions() {
#if HWY_ARCH_X86 && (HWY_COMPILER_GCC || HWY_COMPILER_CLANG)
  static const bool has = [] {
    __builtin_cpu_init();  // may run before main (static initialisers)
    return __builtin_cpu_supports("avx512bf16") != 0;
  }();
  return has;
#else
  return false;
#endif
}

namespace {
// Decided once, at load time, so that kernel_table() reads one flag: through
// a function-local static and a second flag, this check took ~8% of a
// 16-element call (perf). A kernel_table() call from an earlier static
// initialiser sees false and gets the integer rounding: exact too.
std::atomic<bool> g_use_bf16_instructions{cpu_has_bf16_instructions()};
}  // namespace

void allow_bf16_instructions(bool allowed) {
  g_use_bf16_instructions.store(allowed && cpu_has_bf16_instructions(), std::memory_order_relaxed);
}

bool use_bf16_instructions() { return g_use_bf16_instructions.load(std::memory_order_relaxed); }

}  // namespace sqdiff::detail
#endif  // HWY_ONCE
