// Row kernels of the quantized ops (SPEC section 9), one source for every SIMD
// target: the rows and broadcast patterns of the element-wise plan, each
// element computed by a pipeline (quantized_pipelines-inl.h: LiteRT's exact
// integer algorithms; quantized_dyadic-inl.h: the same when every multiplier
// is a power of two; quantized_decided-inl.h: a cheap estimate whose error
// bound decides the rounding, the exact pipeline where it cannot). Partial
// vectors at a row's ends run the same vector code on a stack copy, so every
// element of every target gets the same instructions' results.

#if defined(SQDIFF_KERNELS_QUANTIZED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_QUANTIZED_INL_H_
#undef SQDIFF_KERNELS_QUANTIZED_INL_H_
#else
#define SQDIFF_KERNELS_QUANTIZED_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "hwy/highway.h"
#include "kernels/kernel_table.hpp"
#include "kernels/quantized_decided-inl.h"
#include "kernels/quantized_decided_wide-inl.h"
#include "kernels/quantized_dyadic-inl.h"
#include "kernels/quantized_lookup-inl.h"
#include "kernels/quantized_pipelines-inl.h"
#include "kernels/quantized_table.hpp"
#include "kernels/stream_stores-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- Rows ---------------------------------------------------------------------

// Storage lanes, as many as the int32 lanes that compute them.
template <class T>
using DStorage = hn::Rebind<T, D32>;

template <class T>
HWY_INLINE V32 LoadWidened(const T* p) {
  return hn::PromoteTo(D32(), hn::LoadU(DStorage<T>(), p));
}

// The low byte of each int32 lane. Highway 1.0.3's TruncateTo for AVX3_DL
// permutes dwords where it means bytes (_mm512_permutexvar_epi32 with byte
// indices), so the AVX-512 targets take vpmovdb directly.
HWY_INLINE hn::Vec<hn::Rebind<uint8_t, D32>> LowBytes(V32 v) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return hn::Vec<hn::Rebind<uint8_t, D32>>{_mm512_cvtepi32_epi8(v.raw)};
#else
  return hn::TruncateTo(hn::Rebind<uint8_t, D32>(), hn::BitCast(hn::RebindToUnsigned<D32>(), v));
#endif
}

// The clamped results fit T: the demotion's saturation never acts. Pipelines
// with kLowByteResults (the decided lanes) return 8-bit results in each lane's
// low byte, above a multiple of 256: truncation keeps them.
template <class T, class Pipeline>
HWY_INLINE hn::Vec<DStorage<T>> Narrowed(V32 v) {
  if constexpr (requires { Pipeline::kPackedWordResults; }) {
    // The int16 results already packed in the low half (quantized_decided_wide-inl.h).
    static_assert(sizeof(T) == 2);
    return hn::BitCast(DStorage<T>(), hn::LowerHalf(hn::Half<D32>(), v));
  } else if constexpr (requires { Pipeline::kLowByteResults; }) {
    static_assert(sizeof(T) == 1);
    return hn::BitCast(DStorage<T>(), LowBytes(v));
  } else {
    return hn::DemoteTo(DStorage<T>(), v);
  }
}

// What a pipeline makes of an input vector before Output combines the two:
// V32 for the exact pipelines, the estimate's part as well for the decided ones.
template <class Pipeline>
using ScaledA = decltype(std::declval<const Pipeline&>().ScaleA(std::declval<V32>()));
template <class Pipeline>
using ScaledB = decltype(std::declval<const Pipeline&>().ScaleB(std::declval<V32>()));

// An input vector loaded and scaled: by the pipeline's own LoadA / LoadB where
// it has them (the float64 decided lanes convert int16 straight to doubles),
// else widened to int32 lanes and scaled.
template <class Pipeline, class T>
HWY_INLINE ScaledA<Pipeline> LoadScaledA(const Pipeline& pipeline, const T* p) {
  if constexpr (requires { pipeline.LoadA(p); }) {
    return pipeline.LoadA(p);
  } else {
    return pipeline.ScaleA(LoadWidened(p));
  }
}

template <class Pipeline, class T>
HWY_INLINE ScaledB<Pipeline> LoadScaledB(const Pipeline& pipeline, const T* p) {
  if constexpr (requires { pipeline.LoadB(p); }) {
    return pipeline.LoadB(p);
  } else {
    return pipeline.ScaleB(LoadWidened(p));
  }
}

// An input read along the row, or one element for the whole row (scaled once).
template <class T, bool kOneElement, class Scaled>
struct Input {
  const T* row;
  Scaled scaled_element;  // kOneElement only
};

template <class T, bool kOneElement, class Pipeline>
using InputA = Input<T, kOneElement, ScaledA<Pipeline>>;
template <class T, bool kOneElement, class Pipeline>
using InputB = Input<T, kOneElement, ScaledB<Pipeline>>;

// Elements [i, i + count) of a row, count < one vector: the inputs copied to
// zeroed stack vectors, the output stored from one. In place is safe: both
// inputs are read before the output is written.
template <class T, bool kAOne, bool kBOne, class Pipeline>
HWY_INLINE void PartialVector(const Pipeline& pipeline, const InputA<T, kAOne, Pipeline>& a,
                              const InputB<T, kBOne, Pipeline>& b, T* out, size_t i, size_t count) {
  constexpr size_t kMaxLanes = hn::MaxLanes(D32());
  HWY_ALIGN T buffer_a[kMaxLanes] = {};
  HWY_ALIGN T buffer_b[kMaxLanes] = {};
  HWY_ALIGN T buffer_out[kMaxLanes] = {};
  ScaledA<Pipeline> scaled_a = a.scaled_element;
  ScaledB<Pipeline> scaled_b = b.scaled_element;
  if constexpr (!kAOne) {
    std::memcpy(buffer_a, a.row + i, count * sizeof(T));
    scaled_a = LoadScaledA(pipeline, static_cast<const T*>(buffer_a));
  }
  if constexpr (!kBOne) {
    std::memcpy(buffer_b, b.row + i, count * sizeof(T));
    scaled_b = LoadScaledB(pipeline, static_cast<const T*>(buffer_b));
  }
  hn::StoreU(Narrowed<T, Pipeline>(pipeline.Output(scaled_a, scaled_b)), DStorage<T>(), buffer_out);
  std::memcpy(out + i, buffer_out, count * sizeof(T));
}

// out[i] = f(a[i], b[i]) for i < n (an input of one element: f(a[0], b[i]) or
// f(a[i], b[0])). kStream: the aligned body stores non-temporally. Returns
// how many vectors it computed.
template <class T, bool kStream, bool kAOne, bool kBOne, class Pipeline>
HWY_INLINE size_t Row(const Pipeline& pipeline, const InputA<T, kAOne, Pipeline>& a,
                      const InputB<T, kBOne, Pipeline>& b, T* out, size_t n) {
  const DStorage<T> ds;
  const size_t lanes = hn::Lanes(D32());
  size_t i = 0;
  size_t vectors = 0;
  if constexpr (kStream) {
    const size_t head = ElementsBeforeAligned(out, lanes * sizeof(T), n);
    if (head != 0) {
      PartialVector<T, kAOne, kBOne>(pipeline, a, b, out, 0, head);
      ++vectors;
    }
    i = head;
  }
  for (; i + lanes <= n; i += lanes) {
    ScaledA<Pipeline> scaled_a = a.scaled_element;
    ScaledB<Pipeline> scaled_b = b.scaled_element;
    if constexpr (!kAOne) scaled_a = LoadScaledA(pipeline, a.row + i);
    if constexpr (!kBOne) scaled_b = LoadScaledB(pipeline, b.row + i);
    const auto result = Narrowed<T, Pipeline>(pipeline.Output(scaled_a, scaled_b));
    if constexpr (kStream) {
      StreamHalves(ds, result, out + i);
    } else {
      hn::StoreU(result, ds, out + i);
    }
    ++vectors;
  }
  if (i < n) {
    PartialVector<T, kAOne, kBOne>(pipeline, a, b, out, i, n - i);
    ++vectors;
  }
  return vectors;
}

template <class T, bool kOneElement, class Pipeline>
HWY_INLINE InputA<T, kOneElement, Pipeline> MakeInputA(const Pipeline& pipeline, const T* row) {
  if constexpr (kOneElement) return {row, pipeline.ScaleA(hn::Set(D32(), static_cast<int32_t>(*row)))};
  return {row, ScaledA<Pipeline>{}};
}

template <class T, bool kOneElement, class Pipeline>
HWY_INLINE InputB<T, kOneElement, Pipeline> MakeInputB(const Pipeline& pipeline, const T* row) {
  if constexpr (kOneElement) return {row, pipeline.ScaleB(hn::Set(D32(), static_cast<int32_t>(*row)))};
  return {row, ScaledB<Pipeline>{}};
}

template <class T>
HWY_INLINE const T* RowStart(const void* base, int64_t stride, size_t r) {
  return static_cast<const T*>(base) + static_cast<int64_t>(r) * stride;
}

// A pipeline that may send vectors down an exact path tells the call's
// counters how many it computed (quantized_decided-inl.h).
template <class Pipeline>
HWY_INLINE void ReportVectors(const Pipeline& pipeline, size_t vectors) {
  if constexpr (requires { pipeline.Count(); }) pipeline.Count().Report(static_cast<int64_t>(vectors));
}

// vv (neither one element), vs (b one element), sv (a one element), for each
// row of the batch.
template <class T, class Pipeline, bool kStream, bool kAOne, bool kBOne>
void RowsOfOperands(const void* a, const void* b, void* out, size_t n, const RowBatch& batch) {
  const Pipeline pipeline(*static_cast<const QuantizedKernelParams*>(batch.params));
  size_t vectors = 0;
  for (size_t r = 0; r < batch.rows; ++r) {
    const auto input_a = MakeInputA<T, kAOne>(pipeline, RowStart<T>(a, batch.a_stride, r));
    const auto input_b = MakeInputB<T, kBOne>(pipeline, RowStart<T>(b, batch.b_stride, r));
    T* row_out = static_cast<T*>(out) + static_cast<int64_t>(r) * batch.out_stride;
    vectors += Row<T, kStream, kAOne, kBOne>(pipeline, input_a, input_b, row_out, n);
  }
  ReportVectors(pipeline, vectors);
}

// vp / pv: the input kRepeating (0 = a, 1 = b) repeats its first `period`
// elements from `phase` on. The pattern is written out once per row into a
// stack row of whole periods, which then serves every piece of the row as an
// ordinary contiguous input.
template <class T, class Pipeline, int kRepeating>
void PeriodicRows(const void* a, const void* b, void* out, size_t n, const RowBatch& batch) {
  const Pipeline pipeline(*static_cast<const QuantizedKernelParams*>(batch.params));
  constexpr size_t kExpandedMax = 512;  // a multiple of every period (2..16)
  const size_t period = batch.period;
  const size_t expanded = kExpandedMax - kExpandedMax % period;
  HWY_ALIGN T pattern_row[kExpandedMax];
  size_t vectors = 0;
  for (size_t r = 0; r < batch.rows; ++r) {
    const T* row_a = RowStart<T>(a, batch.a_stride, r);
    const T* row_b = RowStart<T>(b, batch.b_stride, r);
    T* row_out = static_cast<T*>(out) + static_cast<int64_t>(r) * batch.out_stride;
    const size_t phase = r == 0 ? batch.phase : 0;  // only a first row starts inside a period
    const T* pattern = kRepeating == 0 ? row_a : row_b;
    for (size_t i = 0; i < expanded; ++i) pattern_row[i] = pattern[(phase + i) % period];
    for (size_t done = 0; done < n; done += expanded) {
      const size_t count = n - done < expanded ? n - done : expanded;
      const T* running = (kRepeating == 0 ? row_b : row_a) + done;
      const auto input_a = MakeInputA<T, false>(pipeline, kRepeating == 0 ? pattern_row : running);
      const auto input_b = MakeInputB<T, false>(pipeline, kRepeating == 0 ? running : pattern_row);
      vectors += Row<T, false, false, false>(pipeline, input_a, input_b, row_out + done, count);
    }
  }
  ReportVectors(pipeline, vectors);
}

// Rows through the decided lanes (quantized_decided-inl.h), in segments: a
// call whose outputs mostly lie near rounding boundaries (simple ratios of
// scales, such as decimal ones) would compute most vectors twice, so once a
// segment sends a quarter of its vectors down the exact pipeline, the rest of
// the batch runs on the exact pipeline alone. Either way every output is
// LiteRT's: only the speed depends on the switch.
template <class T, class Fast, class Exact, bool kStream, bool kAOne, bool kBOne>
void DecidedRows(const void* a, const void* b, void* out, size_t n, const RowBatch& batch) {
  const auto& params = *static_cast<const QuantizedKernelParams*>(batch.params);
  const Fast fast(params);
  const Exact exact(params);
  constexpr size_t kSegment = 4096;
  bool exact_only = false;
  size_t vectors = 0;
  size_t switched = 0;  // vectors computed after the switch: all exact
  for (size_t r = 0; r < batch.rows; ++r) {
    const T* row_a = RowStart<T>(a, batch.a_stride, r);
    const T* row_b = RowStart<T>(b, batch.b_stride, r);
    T* row_out = static_cast<T*>(out) + static_cast<int64_t>(r) * batch.out_stride;
    if (exact_only) {
      switched += Row<T, kStream, kAOne, kBOne>(exact, MakeInputA<T, kAOne>(exact, row_a),
                                                MakeInputB<T, kBOne>(exact, row_b), row_out, n);
      continue;
    }
    const auto fast_a = MakeInputA<T, kAOne>(fast, row_a);
    const auto fast_b = MakeInputB<T, kBOne>(fast, row_b);
    for (size_t done = 0; done < n; done += kSegment) {
      const size_t count = n - done < kSegment ? n - done : kSegment;
      const auto segment_a = InputA<T, kAOne, Fast>{kAOne ? row_a : row_a + done, fast_a.scaled_element};
      const auto segment_b = InputB<T, kBOne, Fast>{kBOne ? row_b : row_b + done, fast_b.scaled_element};
      if (exact_only) {
        const auto exact_a = MakeInputA<T, kAOne>(exact, segment_a.row);
        const auto exact_b = MakeInputB<T, kBOne>(exact, segment_b.row);
        switched += Row<T, kStream, kAOne, kBOne>(exact, exact_a, exact_b, row_out + done, count);
        continue;
      }
      const int64_t exact_before = fast.Count().exact;
      const size_t segment_vectors = Row<T, kStream, kAOne, kBOne>(fast, segment_a, segment_b, row_out + done, count);
      vectors += segment_vectors;
      exact_only = static_cast<size_t>(fast.Count().exact - exact_before) * 4 > segment_vectors;
    }
  }
  fast.Count().exact += static_cast<int64_t>(switched);
  ReportVectors(fast, vectors + switched);
}

// The smallest row for which a constant operand's table (256 outputs through
// the exact pipeline, about as long as a few hundred through the decided
// lanes) pays for itself.
inline constexpr size_t kTableMinimum = 1024;

// The table of x -> f(x, c) (kAOne: c -> f(c, x)) for one 8-bit constant c,
// by the exact pipeline: every entry is LiteRT's result.
template <class T, class Exact, bool kAOne>
HWY_INLINE void BuildTable(const Exact& exact, T constant, ByteTable& table) {
  static_assert(sizeof(T) == 1);
  HWY_ALIGN T values[256];
  HWY_ALIGN T results[256];
  for (int v = 0; v < 256; ++v) {
    const auto byte = static_cast<uint8_t>(v);
    std::memcpy(&values[v], &byte, 1);
  }
  const T one[1] = {constant};
  if constexpr (kAOne) {
    Row<T, false, true, false>(exact, MakeInputA<T, true>(exact, one), MakeInputB<T, false>(exact, values), results, 256);
  } else {
    Row<T, false, false, true>(exact, MakeInputA<T, false>(exact, values), MakeInputB<T, true>(exact, one), results, 256);
  }
  std::memcpy(table.bytes, results, 256);
}

// vs / sv rows of an 8-bit op: one table per distinct constant (a tensor
// broadcast from one element builds it once per batch).
template <class T, class Exact, bool kStream, bool kAOne>
void TableRows(const void* a, const void* b, void* out, size_t n, const RowBatch& batch) {
  const Exact exact(*static_cast<const QuantizedKernelParams*>(batch.params));
  ByteTable table;
  bool built = false;
  T last{};
  for (size_t r = 0; r < batch.rows; ++r) {
    const T* row_a = RowStart<T>(a, batch.a_stride, r);
    const T* row_b = RowStart<T>(b, batch.b_stride, r);
    const T constant = kAOne ? row_a[0] : row_b[0];
    if (!built || constant != last) {
      BuildTable<T, Exact, kAOne>(exact, constant, table);
      built = true;
      last = constant;
    }
    const T* running = kAOne ? row_b : row_a;
    T* row_out = static_cast<T*>(out) + static_cast<int64_t>(r) * batch.out_stride;
    LookUpBytes<kStream>(table, reinterpret_cast<const uint8_t*>(running), reinterpret_cast<uint8_t*>(row_out), n);
  }
}

// The row kinds of a call: a constant operand's table for long 8-bit rows,
// Fast's where the call's constants allow it (the decided lanes), Exact's
// elsewhere. Fast = Exact: a pipeline with no fast form.
template <class Fast, class Exact>
struct PipelinePair {
  static const QuantizedKernelParams& Params(const RowBatch& batch) {
    return *static_cast<const QuantizedKernelParams*>(batch.params);
  }

  template <class T, bool kStream, bool kAOne, bool kBOne>
  static void Rows(const void* a, const void* b, void* out, size_t n, const RowBatch& shared_batch) {
    const RowBatch batch = shared_batch;  // a local copy: a store may alias the caller's
    if constexpr (sizeof(T) == 1 && kAOne != kBOne) {
      if (n >= kTableMinimum) return TableRows<T, Exact, kStream, kAOne>(a, b, out, n, batch);
    }
    if constexpr (!std::is_same_v<Fast, Exact>) {
      if (Params(batch).decided.enabled) return DecidedRows<T, Fast, Exact, kStream, kAOne, kBOne>(a, b, out, n, batch);
    }
    RowsOfOperands<T, Exact, kStream, kAOne, kBOne>(a, b, out, n, batch);
  }

  template <class T, int kRepeating>
  static void Periodic(const void* a, const void* b, void* out, size_t n, const RowBatch& shared_batch) {
    const RowBatch batch = shared_batch;
    if constexpr (!std::is_same_v<Fast, Exact>) {
      if (Params(batch).decided.enabled) return PeriodicRows<T, Fast, kRepeating>(a, b, out, n, batch);
    }
    PeriodicRows<T, Exact, kRepeating>(a, b, out, n, batch);
  }
};

// A pipeline with no fast form.
template <class Pipeline>
using Only = PipelinePair<Pipeline, Pipeline>;

template <class T, class Pair, bool kStream>
constexpr RowKinds MakeQuantizedRowKinds() {
  using Choice = Pair;
  return RowKinds{
      .vv = &Choice::template Rows<T, kStream, false, false>,
      .vs = &Choice::template Rows<T, kStream, false, true>,
      .sv = &Choice::template Rows<T, kStream, true, false>,
      .vp = &Choice::template Periodic<T, 1>,
      .pv = &Choice::template Periodic<T, 0>,
      .block = nullptr,  // never planned: the quantized ops plan with no lookup lanes
  };
}

template <class T, class Pair>
constexpr RowKernels MakeQuantizedRowKernels() {
  return RowKernels{
      .plain = MakeQuantizedRowKinds<T, Pair, false>(),
      .streaming = MakeQuantizedRowKinds<T, Pair, true>(),
      .narrow_long_rows = MakeQuantizedRowKinds<T, Pair, false>(),
  };
}

// The 8-bit types take Pair8; int16 takes Pair16: the float64 decided lanes
// for subtract (quantized_decided_wide-inl.h), the exact pipeline alone for
// squared difference (quantized/decided_lanes.cpp enables neither otherwise).
template <class Pair8, class Pair16>
constexpr void SetPipelineKernels(QuantizedKernelTable& table, QuantizedPipeline pipeline, HalfInput half) {
  auto& row = table.kernels[static_cast<int>(pipeline)][static_cast<int>(half)];
  row[static_cast<int>(QuantizedType::i8)] = MakeQuantizedRowKernels<int8_t, Pair8>();
  row[static_cast<int>(QuantizedType::u8)] = MakeQuantizedRowKernels<uint8_t, Pair8>();
  row[static_cast<int>(QuantizedType::i16)] = MakeQuantizedRowKernels<int16_t, Pair16>();
}

template <bool kSingleRounding, HalfInput kHalf>
constexpr void SetSubtractKernelsOf(QuantizedKernelTable& table, QuantizedPipeline pipeline) {
  using Exact = GeneralPipeline<false, kSingleRounding, kHalf>;
  SetPipelineKernels<PipelinePair<DecidedSubtractPipeline<kSingleRounding, kHalf>, Exact>,
                     PipelinePair<WideDecidedSubtractPipeline<kSingleRounding, kHalf>, Exact>>(table, pipeline, kHalf);
}

template <bool kSingleRounding>
constexpr void SetSubtractKernels(QuantizedKernelTable& table, QuantizedPipeline pipeline) {
  SetSubtractKernelsOf<kSingleRounding, HalfInput::a>(table, pipeline);
  SetSubtractKernelsOf<kSingleRounding, HalfInput::b>(table, pipeline);
}

template <bool kSingleRounding, HalfInput kHalf>
constexpr void SetSquareKernelsOf(QuantizedKernelTable& table, QuantizedPipeline pipeline) {
  using Exact = GeneralPipeline<true, kSingleRounding, kHalf>;
  SetPipelineKernels<PipelinePair<DecidedSquarePipeline<kSingleRounding, kHalf>, Exact>, Only<Exact>>(table, pipeline,
                                                                                                     kHalf);
}

template <bool kSingleRounding>
constexpr void SetSquareKernels(QuantizedKernelTable& table, QuantizedPipeline pipeline) {
  SetSquareKernelsOf<kSingleRounding, HalfInput::a>(table, pipeline);
  SetSquareKernelsOf<kSingleRounding, HalfInput::b>(table, pipeline);
}

// Pipelines with one form for both HalfInput entries.
template <class Pipeline>
constexpr void SetSymmetricKernels(QuantizedKernelTable& table, QuantizedPipeline pipeline) {
  SetPipelineKernels<Only<Pipeline>, Only<Pipeline>>(table, pipeline, HalfInput::a);
  SetPipelineKernels<Only<Pipeline>, Only<Pipeline>>(table, pipeline, HalfInput::b);
}

constexpr QuantizedKernelTable MakeQuantizedKernelTable() {
  QuantizedKernelTable table{};
  table.target = HWY_TARGET;
  SetSubtractKernels<false>(table, QuantizedPipeline::subtract_double_rounding);
  SetSubtractKernels<true>(table, QuantizedPipeline::subtract_single_rounding);
  SetSquareKernels<false>(table, QuantizedPipeline::squared_difference_double_rounding);
  SetSquareKernels<true>(table, QuantizedPipeline::squared_difference_single_rounding);
  // Only int16 takes this path; the 8-bit entries are there so that no entry is null.
  SetSymmetricKernels<PowerOfTwoPipeline>(table, QuantizedPipeline::subtract_int16_power_of_two);
  SetSymmetricKernels<DyadicSubtractPipeline<false>>(table, QuantizedPipeline::subtract_dyadic_double_rounding);
  SetSymmetricKernels<DyadicSubtractPipeline<true>>(table, QuantizedPipeline::subtract_dyadic_single_rounding);
  return table;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_QUANTIZED_INL_H_
