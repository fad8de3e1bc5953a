// The table of shape-free inner kernels, one per (operation, dtype, row kind),
// for the SIMD target chosen at run time. Kernels know nothing of shapes: each
// processes one row of `n` elements.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

enum class Op : uint8_t { subtract, squared_difference };
inline constexpr int kOpCount = 2;

// vv: out[i] = f(a[i], b[i])   vs: out[i] = f(a[i], *b)   sv: out[i] = f(*a, b[i])
// Within a row all pointers address contiguous elements; the scalar operand is
// one element. `out` may equal `a` (vv, vs) or `b` (vv, sv): each element is
// read before its own output is written. Kernels never touch memory outside
// the rows.

// A kernel call covers `rows` rows of n elements: row r of each operand starts
// r * stride elements after its row 0 (so one call can cover a 2-D block and
// short rows do not cost one call each).
struct RowBatch {
  std::size_t rows = 1;
  int64_t a_stride = 0;
  int64_t b_stride = 0;
  int64_t out_stride = 0;
  // vp / pv: the repeating operand holds `period` elements and element i of
  // the row uses element (phase + i) % period of it.
  std::size_t period = 0;
  std::size_t phase = 0;
  // block: element i of the row reads element a_index[i] of a's row and
  // b_index[i] of b's; no index reaches past a_span (b_span) elements, and
  // the tables hold kLookupPadding more entries than the row reads.
  const int32_t* a_index = nullptr;
  const int32_t* b_index = nullptr;
  std::size_t a_span = 0;
  std::size_t b_span = 0;
  // block: the batch runs `outer_rows` times, each time from outer_*_stride
  // elements further on (the dim above the batch's, walked in the kernel).
  std::size_t outer_rows = 1;
  int64_t outer_a_stride = 0;
  int64_t outer_b_stride = 0;
  int64_t outer_out_stride = 0;
  // Per-call constants of kernels that need them (the quantized ops'
  // multipliers, kernels/quantized_table.hpp); null for the others.
  const void* params = nullptr;
};

// Entries past the end of a block's index tables, so that two vectors of
// indices can be loaded at any element of the row: twice the most 32-bit lanes
// of any target (AVX-512; elementwise-inl.h checks it). Two, so that a row of
// one vector loads its second index vector unconditionally too: chosen by a
// branch, the vectors went through the stack, and those stores and loads drew
// ~15% of a 16-element block call's samples (perf).
inline constexpr std::size_t kLookupPadding = 32;

// Rows of at least this many bytes per operand are long: on AVX-512 targets
// the narrow_long_rows vv, vs and sv kernels run them in 256-bit vectors (the
// reason is in elementwise-inl.h; the tests take rows either side of it).
inline constexpr std::size_t kLongRowBytes = 128 * 1024;

using RowKernel = void (*)(const void* a, const void* b, void* out, std::size_t n, const RowBatch& batch);

struct RowKinds {
  RowKernel vv;
  RowKernel vs;
  RowKernel sv;
  RowKernel vp;  // b repeats (RowBatch::period)
  RowKernel pv;  // a repeats
  RowKernel block;  // both operands looked up (RowBatch::a_index); null where lookup_lanes is 0
};

// `streaming` writes the output with non-temporal stores where it is aligned;
// the caller must fence (hwy::FlushStream) before another thread reads it.
// `narrow_long_rows` stores plainly too, for calls whose bytes fit the
// threads' L2 caches and calls in place on one thread: there long rows
// (kLongRowBytes) take narrower vectors.
struct RowKernels {
  RowKinds plain;
  RowKinds streaming;
  RowKinds narrow_long_rows;
};

// to[i] = from[i * stride] for i < n, strides in elements; one per element
// size (1, 2, 4, 8 bytes).
using GatherKernel = void (*)(const void* from, int64_t stride, void* to, std::size_t n);
struct GatherKernels {
  GatherKernel by_size[4];

  GatherKernel for_size(std::size_t element_size) const {
    return by_size[element_size == 1 ? 0 : element_size == 2 ? 1 : element_size == 4 ? 2 : 3];
  }
};

struct KernelTable {
  int64_t target;  // the HWY_* bit of the target these kernels were compiled for
  bool bf16_instructions;  // bf16 stores use AVX512-BF16's vcvtneps2bf16
  RowKernels kernels[kOpCount][kDTypeCount];
  // The most elements of a row's source a block kernel can look up (one
  // vector of the dtype's compute lanes); 0 for dtypes without one (8- and
  // 16-bit integers: Highway 1.0.3 looks up 32- and 64-bit lanes only).
  std::size_t lookup_lanes[kDTypeCount];
  GatherKernels gather;

  const RowKernels& at(Op op, DType dtype) const {
    return kernels[static_cast<int>(op)][static_cast<int>(dtype)];
  }
};

// The table for the best target the CPU supports (honours hwy's
// SetSupportedTargetsForTest, so tests can run every target). On AVX-512
// targets, the bf16 kernels use the AVX512-BF16 instructions when the CPU has
// them and allow_bf16_instructions has not turned them off.
const KernelTable& kernel_table();

// Whether this CPU has AVX512-BF16.
bool cpu_has_bf16_instructions();

// For tests: false makes kernel_table() return the tables with the integer
// bf16 rounding, so that it is tested on AVX-512 targets too. Default true.
void allow_bf16_instructions(bool allowed);

// The CPU has them and they are allowed.
bool use_bf16_instructions();

// Bit mask (hwy's HWY_* target bits) of the targets compiled into the library.
int64_t compiled_targets();

}  // namespace sqdiff::detail
