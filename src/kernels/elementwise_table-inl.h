// The element-wise kernel table of one SIMD target (kernel_table.hpp): for each
// op and dtype, the row kernels of elementwise-inl.h for every row kind, plain
// and streaming; elementwise.cc compiles it once per target.

#if defined(SQDIFF_KERNELS_ELEMENTWISE_TABLE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_ELEMENTWISE_TABLE_INL_H_
#undef SQDIFF_KERNELS_ELEMENTWISE_TABLE_INL_H_
#else
#define SQDIFF_KERNELS_ELEMENTWISE_TABLE_INL_H_
#endif

#include <type_traits>

#include "hwy/highway.h"
#include "kernels/elementwise-inl.h"
#include "kernels/gather-inl.h"
#include "kernels/kernel_table.hpp"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class Codec, class Op, bool kStream>
constexpr RowKernel BlockKernel() {
  if constexpr (kHasLookup<Codec>) {
    return &RowBlock<Codec, Op, kStream>;
  } else {
    return nullptr;
  }
}

template <class Codec, class Op, bool kStream, bool kNarrowLongRows = false>
constexpr RowKinds MakeRowKinds() {
  // Periodic rows come from short inner dims: plain stores in either table.
  return {&RowOfOperands<Codec, Op, kStream, AlongRow, AlongRow, kNarrowLongRows>,
          &RowOfOperands<Codec, Op, kStream, AlongRow, OneElement, kNarrowLongRows>,
          &RowOfOperands<Codec, Op, kStream, OneElement, AlongRow, kNarrowLongRows>,
          &RowPeriodic<Codec, Op, 1>,
          &RowPeriodic<Codec, Op, 0>,
          BlockKernel<Codec, Op, kStream>()};
}

template <class Codec, class Op>
constexpr RowKernels MakeRowKernels() {
  return {MakeRowKinds<Codec, Op, false>(), MakeRowKinds<Codec, Op, true>(), MakeRowKinds<Codec, Op, false, true>()};
}

template <class Codec>
constexpr size_t LookupLanes() {
  static_assert(2 * hn::MaxLanes(hn::ScalableTag<float>()) <= kLookupPadding, "block tables need more padding");
  if constexpr (kHasLookup<Codec>) {
    return hn::MaxLanes(hn::ScalableTag<typename Codec::Compute>());
  } else {
    return 0;
  }
}

// Fills one entry per dtype, in DType order, with make(codec of that dtype).
template <class BF16Codec, class Entry, class Make>
constexpr void FillDTypes(Entry (&row)[kDTypeCount], Make make) {
  row[static_cast<int>(DType::f16)] = make(Float16Codec{});
  row[static_cast<int>(DType::bf16)] = make(BF16Codec{});
  row[static_cast<int>(DType::f32)] = make(NativeCodec<float>{});
  row[static_cast<int>(DType::f64)] = make(NativeCodec<double>{});
  row[static_cast<int>(DType::i8)] = make(NativeCodec<uint8_t>{});
  row[static_cast<int>(DType::i16)] = make(NativeCodec<uint16_t>{});
  row[static_cast<int>(DType::i32)] = make(NativeCodec<uint32_t>{});
  row[static_cast<int>(DType::i64)] = make(NativeCodec<uint64_t>{});
  row[static_cast<int>(DType::u8)] = make(NativeCodec<uint8_t>{});
  row[static_cast<int>(DType::u16)] = make(NativeCodec<uint16_t>{});
  row[static_cast<int>(DType::u32)] = make(NativeCodec<uint32_t>{});
  row[static_cast<int>(DType::u64)] = make(NativeCodec<uint64_t>{});
}

// One row of the table: the kernels of `Op` for every dtype.
template <class BF16Codec, class Op>
constexpr void FillOp(RowKernels (&row)[kDTypeCount]) {
  FillDTypes<BF16Codec>(row, [](auto codec) { return MakeRowKernels<decltype(codec), Op>(); });
}

// BF16Codec: BFloat16Codec, or BFloat16InstructionCodec where the CPU has them.
template <class BF16Codec>
constexpr KernelTable MakeKernelTable() {
  KernelTable table{};
  table.target = HWY_TARGET;
  table.bf16_instructions = !std::is_same_v<BF16Codec, BFloat16Codec>;
  FillDTypes<BF16Codec>(table.lookup_lanes, [](auto codec) { return LookupLanes<decltype(codec)>(); });
  table.gather = MakeGatherKernels();
  FillOp<BF16Codec, SubtractOp>(table.kernels[static_cast<int>(Op::subtract)]);
  FillOp<BF16Codec, SquaredDifferenceOp>(table.kernels[static_cast<int>(Op::squared_difference)]);
  return table;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_ELEMENTWISE_TABLE_INL_H_
