// Row kernels for subtract and squared_difference, one source for every SIMD
// target: an op says what is computed, a codec (element_codecs-inl.h) how a
// storage type is loaded into the lanes that compute and stored back; the rows
// run them over every row kind of the plan (kernel_table.hpp).

#if defined(SQDIFF_KERNELS_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_ELEMENTWISE_INL_H_
#undef SQDIFF_KERNELS_ELEMENTWISE_INL_H_
#else
#define SQDIFF_KERNELS_ELEMENTWISE_INL_H_
#endif

#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/element_codecs-inl.h"
#include "kernels/stream_stores-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- Ops ----------------------------------------------------------------------

// d * d, also for 8-bit lanes, which x86 cannot multiply: view pairs of bytes
// as 16-bit lanes. The low byte of w*w is (even byte)² mod 256, and
// (w & 0xFF00) * (w >> 8) puts (odd byte)² mod 256 in the high byte.
template <class D>
HWY_INLINE hn::Vec<D> Square(D d, hn::Vec<D> v) {
#if HWY_TARGET != HWY_SCALAR
  if constexpr (sizeof(hn::TFromD<D>) == 1) {
    const hn::Repartition<uint16_t, D> d16;
    const auto w = hn::BitCast(d16, v);
    const auto even = hn::And(hn::Mul(w, w), hn::Set(d16, 0x00FFu));
    const auto odd = hn::Mul(hn::And(w, hn::Set(d16, 0xFF00u)), hn::ShiftRight<8>(w));
    return hn::BitCast(d, hn::Or(even, odd));
  } else {
    return hn::Mul(v, v);
  }
#else
  (void)d;
  return hn::Mul(v, v);
#endif
}

struct SubtractOp {
  template <class D>
  static HWY_INLINE hn::Vec<D> Apply(D /*d*/, hn::Vec<D> a, hn::Vec<D> b) {
    return hn::Sub(a, b);
  }
};

struct SquaredDifferenceOp {
  template <class D>
  static HWY_INLINE hn::Vec<D> Apply(D d, hn::Vec<D> a, hn::Vec<D> b) {
    return Square(d, hn::Sub(a, b));
  }
};

// ---- Rows -----------------------------------------------------------------------

// The partial vectors at either end of a row run the same vector code as the
// body and never touch memory past the row's ends: masked loads and stores
// where they cannot fault (AVX-512), small stack buffers elsewhere (masked
// loads may fault on SSE4/AVX2 in Highway 1.0.3).
#undef SQDIFF_MASKED_PARTIALS
#if !HWY_MEM_OPS_MIGHT_FAULT && HWY_TARGET != HWY_SCALAR
#define SQDIFF_MASKED_PARTIALS 1
#else
#define SQDIFF_MASKED_PARTIALS 0
#endif

template <class Codec>
struct LaneBuffer {
  using Storage = typename Codec::Storage;
  static constexpr size_t kCapacity = HWY_MAX_BYTES / sizeof(typename Codec::Compute);
  HWY_ALIGN Storage lanes[kCapacity] = {};

  void Fill(const Storage* from, size_t count) { std::memcpy(lanes, from, count * sizeof(Storage)); }
  void Drain(Storage* to, size_t count) const { std::memcpy(to, lanes, count * sizeof(Storage)); }
};

// The first `count` lanes of a partial vector, with their mask over the
// storage lanes where masked memory operations are used.
template <class Codec, class D>
struct PartialLanes {
  size_t count;
#if SQDIFF_MASKED_PARTIALS
  hn::Mask<hn::Rebind<typename Codec::Storage, D>> first;
  PartialLanes(D /*d*/, size_t n) : count(n), first(hn::FirstN(hn::Rebind<typename Codec::Storage, D>(), n)) {}
#else
  PartialLanes(D /*d*/, size_t n) : count(n) {}
#endif
};

// How every row of one length splits into whole vectors and a partial one,
// worked out once per kernel call: per row, the mask cost the specs' 56 rows
// of 30 f32 ~30 of their ~180 ns (kernel alone, vv rows).
template <class Codec, class D>
struct RowSplit {
  size_t length;
  size_t whole;  // elements in whole vectors
  PartialLanes<Codec, D> tail;

  RowSplit(D d, size_t n) : length(n), whole(n - n % hn::Lanes(d)), tail(d, n % hn::Lanes(d)) {}
};

// An operand that advances along the row.
template <class Codec>
struct RowOperand {
  const typename Codec::Storage* row;

  template <class D>
  HWY_INLINE hn::Vec<D> Load(D d, size_t i) const {
    return Codec::Load(d, row + i);
  }
  template <class D>
    requires kHasOwnPairOrder<Codec, D>
  HWY_INLINE LanePair<D> LoadPairInOwnOrder(D d, size_t i) const {
    return Codec::LoadPairInOwnOrder(d, row + i);
  }
  template <class D>
  HWY_INLINE hn::Vec<D> LoadPartial(D d, size_t i, const PartialLanes<Codec, D>& part) const {
#if !SQDIFF_MASKED_PARTIALS
    LaneBuffer<Codec> buffer;
    buffer.Fill(row + i, part.count);
    return Codec::Load(d, buffer.lanes);
#else
    return Codec::LoadFirst(d, row + i, part.first);  // masked-off lanes cannot fault here
#endif
  }
};

// An operand that is one element for the whole row, widened once.
template <class Codec, class D>
struct ScalarOperand {
  hn::Vec<D> value;

  ScalarOperand(D d, const typename Codec::Storage* scalar) : value(hn::Set(d, Codec::Widen(*scalar))) {}
  HWY_INLINE hn::Vec<D> Load(D /*d*/, size_t /*i*/) const { return value; }
  HWY_INLINE LanePair<D> LoadPairInOwnOrder(D /*d*/, size_t /*i*/) const { return {value, value}; }
  template <class Part>
  HWY_INLINE hn::Vec<D> LoadPartial(D /*d*/, size_t /*i*/, const Part& /*part*/) const { return value; }
};

template <class Codec, class Op, class D, class A, class B>
HWY_INLINE void RowPartial(D d, const A& a, const B& b, typename Codec::Storage* out, size_t i,
                           const PartialLanes<Codec, D>& part) {
  const auto result = Op::Apply(d, a.LoadPartial(d, i, part), b.LoadPartial(d, i, part));
#if !SQDIFF_MASKED_PARTIALS
  LaneBuffer<Codec> buffer;
  Codec::Store(d, result, buffer.lanes);
  buffer.Drain(out + i, part.count);
#else
  Codec::StoreFirst(d, result, out + i, part.first);
#endif
}

// out[i] = op(a[i], b[i]) for i < n. With kStream, the aligned body uses
// non-temporal stores: the caller issues the fence (FlushStream) after the
// last row of its share, before it reports completion.
template <class Codec, class Op, bool kStream, class D, class A, class B>
HWY_INLINE void Row(D d, const A& a, const B& b, typename Codec::Storage* out, size_t n) {
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  if constexpr (kStream) {
    const size_t head = ElementsBeforeAligned(out, lanes * sizeof(typename Codec::Storage), n);
    for (; i + lanes <= head; i += lanes) {  // only when `out` cannot be aligned
      Codec::Store(d, Op::Apply(d, a.Load(d, i), b.Load(d, i)), out + i);
    }
    if (i < head) {
      RowPartial<Codec, Op>(d, a, b, out, i, PartialLanes<Codec, D>(d, head - i));
      i = head;
    }
    for (; i + lanes <= n; i += lanes) {
      Codec::Stream(d, Op::Apply(d, a.Load(d, i), b.Load(d, i)), out + i);
    }
  } else {
    for (; i + lanes <= n; i += lanes) {
      Codec::Store(d, Op::Apply(d, a.Load(d, i), b.Load(d, i)), out + i);
    }
  }
  if (i < n) RowPartial<Codec, Op>(d, a, b, out, i, PartialLanes<Codec, D>(d, n - i));
}

// The longest row, in bytes of one operand, that the in-place rows unroll:
// two such operands fill 32 KiB of a 48 KiB L1.
constexpr size_t kUnrolledRowBytes = 16 * 1024;

// The vectors of long rows (kLongRowBytes, beyond L1) in calls whose data
// stays in L2, or that one thread writes in place (the narrow_long_rows
// kernels): 256 bits, two a step, where the target's own are 512. On this
// machine (Sapphire Rapids, 48 KiB L1, 2 MiB L2), f32 rows in L2 took 1-7%
// less time so than in 512-bit vectors (192K-320K elements in place, 24K-160K
// out of place), and in place from L3 and memory between 0.5% more and 2.6%
// less (1M-64M, f32 and i32, 1 thread); out of place from memory they took 2-4%
// more (8M with a scalar, 64M), and in and near L1 more too (4K-8K: 9-33%;
// 16K: 2%): scratch loops and both kernel sets in one process, alternating.
// sqdiff_bench against Eigen, 64M in place: 1.01 (f32) and 0.99 (i32) so on 1
// thread against 1.00 and 0.97 in 512-bit vectors, but 0.98 and 1.00 on 2
// threads against 1.00 and 1.01 (means of 3-4 full runs each), hence in place
// on one thread only. 256K f32 in place on 1 thread: 1.02 of Eigen's time, 0.94-0.99
// in 512-bit vectors. Native types only: f16 and bf16 spend their time converting.
#undef SQDIFF_HALF_WIDTH_LONG_ROWS
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
#define SQDIFF_HALF_WIDTH_LONG_ROWS 1
#else
#define SQDIFF_HALF_WIDTH_LONG_ROWS 0
#endif

template <class Codec>
constexpr bool kHalvesLongRows = SQDIFF_HALF_WIDTH_LONG_ROWS &&
                                 std::is_same_v<typename Codec::Storage, typename Codec::Compute>;

template <class Codec>
using LongRowTag = hn::CappedTag<typename Codec::Compute, 32 / sizeof(typename Codec::Compute)>;

// Whether D is LongRowTag narrower than the target's full vectors.
template <class D>
constexpr bool kIsHalfWidth = hn::MaxLanes(D()) < hn::MaxLanes(hn::ScalableTag<hn::TFromD<D>>());

// Whether the row written is this operand's own row (an in-place call).
template <class Operand, class Storage>
HWY_INLINE bool WritesOver(const Operand& operand, const Storage* out) {
  if constexpr (requires { operand.row; }) {
    return operand.row == out;
  } else {
    return false;
  }
}

// Codecs that store two vectors at once more cheaply than one by one.
template <class Codec, class D>
constexpr bool kStoresPairs = requires(D d, hn::Vec<D> v, typename Codec::Storage* p) {
  Codec::StorePair(d, v, v, p);
};

// Operands that can read a pair of vectors in their codec's own order.
template <class Operand, class D>
constexpr bool kReadsOwnPairOrder = requires(const Operand& operand, D d) { operand.LoadPairInOwnOrder(d, 0); };

// One row of a batch whose rows all have split.length elements.
template <class Codec, class Op, bool kStream, class D, class A, class B>
HWY_INLINE void Row(D d, const A& a, const B& b, typename Codec::Storage* out, const RowSplit<Codec, D>& split) {
  if constexpr (kStream) {
    Row<Codec, Op, true>(d, a, b, out, split.length);  // each row's head depends on its alignment
  } else {
    const size_t lanes = hn::Lanes(d);
    size_t i = 0;
    if constexpr (kHasOwnPairOrder<Codec, D> && kReadsOwnPairOrder<A, D> && kReadsOwnPairOrder<B, D>) {
      for (; i + 2 * lanes <= split.whole; i += 2 * lanes) {
        const LanePair<D> a_pair = a.LoadPairInOwnOrder(d, i);
        const LanePair<D> b_pair = b.LoadPairInOwnOrder(d, i);
        Codec::StorePairFromOwnOrder(
            d, LanePair<D>{Op::Apply(d, a_pair.first, b_pair.first), Op::Apply(d, a_pair.second, b_pair.second)},
            out + i);
      }
    } else if constexpr (kStoresPairs<Codec, D>) {
      for (; i + 2 * lanes <= split.whole; i += 2 * lanes) {
        Codec::StorePair(d, Op::Apply(d, a.Load(d, i), b.Load(d, i)),
                         Op::Apply(d, a.Load(d, i + lanes), b.Load(d, i + lanes)), out + i);
      }
    } else if constexpr (kIsHalfWidth<D>) {
      // Long rows (kLongRowBytes): two vectors a step took up to 2% less than one.
      for (; i + 2 * lanes <= split.whole; i += 2 * lanes) {
        Codec::Store(d, Op::Apply(d, a.Load(d, i), b.Load(d, i)), out + i);
        Codec::Store(d, Op::Apply(d, a.Load(d, i + lanes), b.Load(d, i + lanes)), out + i + lanes);
      }
    } else if ((WritesOver(a, out) || WritesOver(b, out)) &&
               split.whole * sizeof(typename Codec::Storage) <= kUnrolledRowBytes) {
      // In place and within L1, four vectors a step: at 4K f32 the kernel took
      // 8-12 ns (6-8%) less than one vector a step. Out of place the same loop
      // took 4-11% more (4K subtract in L1, 256K on 2 threads in L2), and in
      // place beyond L1 1-2% more (256K f32, 1 thread), so those keep the
      // plain loop (sqdiff_bench and a scratch program, on this machine).
      for (; i + 4 * lanes <= split.whole; i += 4 * lanes) {
        Codec::Store(d, Op::Apply(d, a.Load(d, i), b.Load(d, i)), out + i);
        Codec::Store(d, Op::Apply(d, a.Load(d, i + lanes), b.Load(d, i + lanes)), out + i + lanes);
        Codec::Store(d, Op::Apply(d, a.Load(d, i + 2 * lanes), b.Load(d, i + 2 * lanes)), out + i + 2 * lanes);
        Codec::Store(d, Op::Apply(d, a.Load(d, i + 3 * lanes), b.Load(d, i + 3 * lanes)), out + i + 3 * lanes);
      }
    }
    for (; i < split.whole; i += lanes) {
      Codec::Store(d, Op::Apply(d, a.Load(d, i), b.Load(d, i)), out + i);
    }
    if (split.tail.count != 0) RowPartial<Codec, Op>(d, a, b, out, split.whole, split.tail);
  }
}

// A row of one to two vectors, read at fixed offsets, so that an operand held
// in registers (VectorPair) stays there. Plain stores only.
template <class Codec, class Op, class D, class A, class B>
HWY_INLINE void RowOfTwoVectorsAtMost(D d, const A& a, const B& b, typename Codec::Storage* out,
                                      const RowSplit<Codec, D>& split) {
  const size_t lanes = hn::Lanes(d);
  if (split.whole == 0) {
    RowPartial<Codec, Op>(d, a, b, out, 0, split.tail);
    return;
  }
  Codec::Store(d, Op::Apply(d, a.Load(d, 0), b.Load(d, 0)), out);
  if (split.whole > lanes) {
    Codec::Store(d, Op::Apply(d, a.Load(d, lanes), b.Load(d, lanes)), out + lanes);
  } else if (split.tail.count != 0) {
    RowPartial<Codec, Op>(d, a, b, out, lanes, split.tail);
  }
}

template <class Codec>
HWY_INLINE const typename Codec::Storage* RowStart(const void* base, int64_t stride, size_t r) {
  return static_cast<const typename Codec::Storage*>(base) + static_cast<int64_t>(r) * stride;
}

// How a vv, vs or sv kernel reads an input's row: along it, or one element.
template <class Codec>
struct AlongRow {
  template <class D>
  HWY_INLINE RowOperand<Codec> operator()(D /*d*/, const typename Codec::Storage* row) const {
    return RowOperand<Codec>{row};
  }
};
template <class Codec>
struct OneElement {
  template <class D>
  HWY_INLINE ScalarOperand<Codec, D> operator()(D d, const typename Codec::Storage* row) const {
    return ScalarOperand<Codec, D>(d, row);
  }
};

// The rows of a batch; read_a(d, row) and read_b(d, row) make the operands
// of one row from its start. `batch` must be the kernel's local copy: a
// vector store may alias anything, so fields read through the caller's
// reference were loaded again after every store (the specs' 56 block rows took
// 341 ns that way, 208 ns with the copy; kernel alone, same data).
// Every row has split.length elements; kAtMostTwoVectors: that is one or two
// vectors (RowOfTwoVectorsAtMost).
template <class Codec, class Op, bool kStream, bool kAtMostTwoVectors = false, class D, class ReadA, class ReadB>
HWY_INLINE void BatchRows(D d, const ReadA& read_a, const ReadB& read_b, const void* a, const void* b, void* out,
                          const RowSplit<Codec, D>& split, const RowBatch& batch) {
  using S = typename Codec::Storage;
  const S* row_a = static_cast<const S*>(a);
  const S* row_b = static_cast<const S*>(b);
  S* row_out = static_cast<S*>(out);
  for (size_t r = 0; r < batch.rows; ++r) {
    if constexpr (kAtMostTwoVectors) {
      static_assert(!kStream, "rows of fixed offsets store plainly");
      RowOfTwoVectorsAtMost<Codec, Op>(d, read_a(d, row_a), read_b(d, row_b), row_out, split);
    } else {
      Row<Codec, Op, kStream>(d, read_a(d, row_a), read_b(d, row_b), row_out, split);
    }
    row_a += batch.a_stride;
    row_b += batch.b_stride;
    row_out += batch.out_stride;
  }
}

// vv, vs and sv: each operand reads its row as ReadA (ReadB) says, along the
// row or one element (vs: out[i] = op(a[i], *b); sv: out[i] = op(*a, b[i]),
// not the mirror of vs, since subtract is not symmetric).
// kNarrowLongRows: long rows take 256-bit vectors (RowKernels::narrow_long_rows).
template <class Codec, class Op, bool kStream, template <class> class ReadA, template <class> class ReadB,
          bool kNarrowLongRows = false>
void RowOfOperands(const void* a, const void* b, void* out, size_t n, const RowBatch& shared_batch) {
  const RowBatch batch = shared_batch;
  if constexpr (kHalvesLongRows<Codec> && kNarrowLongRows) {
    static_assert(!kStream, "the narrower vectors store plainly");
    if (n * sizeof(typename Codec::Storage) >= kLongRowBytes) {
      using DH = LongRowTag<Codec>;
      const DH dh;
      BatchRows<Codec, Op, false>(dh, ReadA<Codec>(), ReadB<Codec>(), a, b, out, RowSplit<Codec, DH>(dh, n), batch);
      return;
    }
  }
  using D = hn::ScalableTag<typename Codec::Compute>;
  const D d;
  BatchRows<Codec, Op, kStream>(d, ReadA<Codec>(), ReadB<Codec>(), a, b, out, RowSplit<Codec, D>(d, n), batch);
}

// A short pattern repeated along the row, when its period divides the lane
// count: every vector of the row then holds the same lanes.
template <class Codec, class D>
struct PatternOperand {
  hn::Vec<D> value;

  PatternOperand(D d, const typename Codec::Storage* pattern, size_t period, size_t phase) {
    LaneBuffer<Codec> buffer;
    for (size_t i = 0; i < hn::Lanes(d); ++i) buffer.lanes[i] = pattern[(phase + i) % period];
    value = Codec::Load(d, buffer.lanes);
  }
  HWY_INLINE hn::Vec<D> Load(D /*d*/, size_t /*i*/) const { return value; }
  template <class Part>
  HWY_INLINE hn::Vec<D> LoadPartial(D /*d*/, size_t /*i*/, const Part& /*part*/) const { return value; }
};

// One row where the operand `kRepeating` (0 = a, 1 = b) repeats its first
// `period` elements, starting at `phase`, and the other runs contiguously.
template <class Codec, class Op, int kRepeating, class D>
HWY_INLINE void PeriodicRow(D d, const typename Codec::Storage* contiguous, const typename Codec::Storage* pattern,
                            typename Codec::Storage* out, size_t n, size_t period, size_t phase) {
  const auto call = [&](const auto& repeating, const auto& running, typename Codec::Storage* to, size_t count) {
    if constexpr (kRepeating == 0) {
      Row<Codec, Op, false>(d, repeating, running, to, count);
    } else {
      Row<Codec, Op, false>(d, running, repeating, to, count);
    }
  };
  if (hn::Lanes(d) % period == 0) {
    call(PatternOperand<Codec, D>(d, pattern, period, phase), RowOperand<Codec>{contiguous}, out, n);
    return;
  }
  // Otherwise one period at a time (the first piece up to the period's end).
  for (size_t i = 0; i < n;) {
    const size_t offset = (phase + i) % period;
    const size_t count = period - offset < n - i ? period - offset : n - i;
    call(RowOperand<Codec>{pattern + offset}, RowOperand<Codec>{contiguous + i}, out + i, count);
    i += count;
  }
}

template <class Codec, class Op, int kRepeating>
void RowPeriodic(const void* a, const void* b, void* out, size_t n, const RowBatch& shared_batch) {
  const RowBatch batch = shared_batch;  // a local copy: see BatchRows
  using S = typename Codec::Storage;
  const hn::ScalableTag<typename Codec::Compute> d;
  for (size_t r = 0; r < batch.rows; ++r) {
    const S* row_a = RowStart<Codec>(a, batch.a_stride, r);
    const S* row_b = RowStart<Codec>(b, batch.b_stride, r);
    S* row_out = static_cast<S*>(out) + static_cast<int64_t>(r) * batch.out_stride;
    // Only a first row can start inside a period; whole rows start at 0.
    const size_t phase = r == 0 ? batch.phase : 0;
    if constexpr (kRepeating == 0) {
      PeriodicRow<Codec, Op, 0>(d, row_b, row_a, row_out, n, batch.period, phase);
    } else {
      PeriodicRow<Codec, Op, 1>(d, row_a, row_b, row_out, n, batch.period, phase);
    }
  }
}

// Compute lanes that Highway 1.0.3 can permute across a whole vector.
template <class Codec>
constexpr bool kHasLookup = sizeof(typename Codec::Compute) >= 4;

// Table indices for lanes of type T, from the 32-bit table.
template <class D>
HWY_INLINE auto LoadIndices(D d, const int32_t* table) {
  using T = hn::TFromD<D>;
  if constexpr (sizeof(T) == 4) {
    return hn::IndicesFromVec(d, hn::LoadU(hn::RebindToSigned<D>(), table));
  } else {
    return hn::IndicesFromVec(d, hn::PromoteTo(hn::RebindToSigned<D>(), hn::LoadU(hn::Rebind<int32_t, D>(), table)));
  }
}

// An operand whose row is a rearrangement of a few source elements (a tiny
// input broadcast over a small block): the source is one vector, loaded once
// per row, and each vector of the row is one lane permutation of it.
template <class Codec, class D>
struct LookupOperand {
  hn::Vec<D> source;
  const int32_t* table;

  LookupOperand(D d, const typename Codec::Storage* row, size_t span, const int32_t* index)
      : source(RowOperand<Codec>{row}.LoadPartial(d, 0, PartialLanes<Codec, D>(d, span))), table(index) {}
  HWY_INLINE hn::Vec<D> Load(D d, size_t i) const { return hn::TableLookupLanes(source, LoadIndices(d, table + i)); }
  // The tables are padded (kLookupPadding), so a partial vector reads them whole.
  template <class Part>
  HWY_INLINE hn::Vec<D> LoadPartial(D d, size_t i, const Part& /*part*/) const { return Load(d, i); }
};

// A looked-up row that is the same for every row of a batch, expanded once
// into compute lanes, so that each row reads it with plain loads. kMaxRow
// holds the specs' kind of block (inputs of up to a vector each, lanes x lanes
// elements) with room for the last partial vector; a longer row (64-bit lanes
// allow blocks of up to 256 elements) looks its lanes up as it goes.
template <class Codec, class D>
struct ExpandedOperand {
  static constexpr size_t kMaxRow = hn::MaxLanes(D()) * (hn::MaxLanes(D()) + 1);
  // A vector more than the longest row: a streaming row loads from any element
  // (its first aligned store decides where the vectors start).
  HWY_ALIGN typename Codec::Compute lanes[kMaxRow + hn::MaxLanes(D())];

  // Fills whole vectors and zeroes the vector after them, so that every load
  // within a row of n reads lanes that were written.
  ExpandedOperand(D d, const LookupOperand<Codec, D>& lookup, size_t n) {
    size_t i = 0;
    for (; i < n; i += hn::Lanes(d)) hn::Store(lookup.Load(d, i), d, lanes + i);
    hn::Store(hn::Zero(d), d, lanes + i);
  }
  HWY_INLINE hn::Vec<D> Load(D d, size_t i) const { return hn::LoadU(d, lanes + i); }
  template <class Part>
  HWY_INLINE hn::Vec<D> LoadPartial(D d, size_t i, const Part& /*part*/) const { return hn::LoadU(d, lanes + i); }
};

// An operand's index vectors (and its source's lanes) for rows of one or two
// vectors, loaded once per kernel call instead of in every row or batch.
template <class Codec, class D>
struct PairLookupIndices {
  using Indices = decltype(LoadIndices(D(), static_cast<const int32_t*>(nullptr)));
  Indices first;
  Indices second;
  PartialLanes<Codec, D> source_lanes;

  // A table holds n + kLookupPadding entries: the second vector is padding
  // for a row of one vector, and is not used then.
  PairLookupIndices(D d, const int32_t* table, size_t span)
      : first(LoadIndices(d, table)), second(LoadIndices(d, table + hn::Lanes(d))), source_lanes(d, span) {}
};

// A looked-up row of one or two vectors. The indices are held by value: held
// by reference, they were stored to the stack and loaded back in every batch.
template <class Codec, class D>
struct PairLookup {
  hn::Vec<D> source;
  PairLookupIndices<Codec, D> indices;

  PairLookup(D d, const typename Codec::Storage* row, const PairLookupIndices<Codec, D>& row_indices)
      : source(RowOperand<Codec>{row}.LoadPartial(d, 0, row_indices.source_lanes)), indices(row_indices) {}
  HWY_INLINE hn::Vec<D> Load(D /*d*/, size_t i) const {
    return hn::TableLookupLanes(source, i == 0 ? indices.first : indices.second);
  }
  template <class Part>
  HWY_INLINE hn::Vec<D> LoadPartial(D d, size_t i, const Part& /*part*/) const { return Load(d, i); }
};

// A looked-up row of one or two vectors that is the same for every row of a
// batch, held in two registers: through ExpandedOperand's buffer, each batch
// stored its vectors and every row loaded them back (the specs' 56 block rows:
// ~160-190 ns that way, ~110-140 ns in registers; scratch kernels side by side).
template <class Codec, class D>
struct VectorPair {
  hn::Vec<D> first;
  hn::Vec<D> second;

  VectorPair(D d, const PairLookup<Codec, D>& lookup)
      : first(lookup.Load(d, 0)), second(lookup.Load(d, hn::Lanes(d))) {}
  HWY_INLINE hn::Vec<D> Load(D /*d*/, size_t i) const { return i == 0 ? first : second; }
  template <class Part>
  HWY_INLINE hn::Vec<D> LoadPartial(D d, size_t i, const Part& /*part*/) const { return Load(d, i); }
};

// visit(a, b, out) at the start of each of the batch's outer rows.
template <class S, class Visit>
HWY_INLINE void ForEachOuterRow(const void* a, const void* b, void* out, const RowBatch& batch, const Visit& visit) {
  const S* outer_a = static_cast<const S*>(a);
  const S* outer_b = static_cast<const S*>(b);
  S* outer_out = static_cast<S*>(out);
  for (size_t o = 0; o < batch.outer_rows; ++o) {
    visit(outer_a, outer_b, outer_out);
    outer_a += batch.outer_a_stride;
    outer_b += batch.outer_b_stride;
    outer_out += batch.outer_out_stride;
  }
}

// The rows of the batches whose operand kFixed (0: a, 1: b) is the same in
// every row of a batch, looked up once per batch: into registers when a row
// fits in two vectors (with both operands' indices in registers for the whole
// call), into an L1 buffer otherwise. What does not depend on the batch is
// set up once: set up per batch, the specs' 8 batches took ~114 ns against
// ~90 (kernel alone, 20M calls each, alternating).
template <class Codec, class Op, bool kStream, int kFixed, class D>
HWY_INLINE void RowsAroundFixed(D d, const void* a, const void* b, void* out, size_t n, const RowBatch& batch) {
  using S = typename Codec::Storage;
  const RowSplit<Codec, D> split(d, n);
  const int32_t* fixed_index = kFixed == 0 ? batch.a_index : batch.b_index;
  const size_t fixed_span = kFixed == 0 ? batch.a_span : batch.b_span;
  const int32_t* moving_index = kFixed == 0 ? batch.b_index : batch.a_index;
  const size_t moving_span = kFixed == 0 ? batch.b_span : batch.a_span;
  const auto fixed_row = [](const S* row_a, const S* row_b) { return kFixed == 0 ? row_a : row_b; };
  const auto run = [&](const S* row_a, const S* row_b, S* row_out, const auto& held, const auto& read_moving,
                       auto at_most_two_vectors) {
    using Held = std::remove_cv_t<std::remove_reference_t<decltype(held)>>;
    const auto read_held = [&](D /*d*/, const S* /*row*/) -> const Held& { return held; };
    constexpr bool kShort = decltype(at_most_two_vectors)::value;
    if constexpr (kFixed == 0) {
      BatchRows<Codec, Op, kStream, kShort>(d, read_held, read_moving, row_a, row_b, row_out, split, batch);
    } else {
      BatchRows<Codec, Op, kStream, kShort>(d, read_moving, read_held, row_a, row_b, row_out, split, batch);
    }
  };
  if constexpr (!kStream) {
    if (n <= 2 * hn::Lanes(d)) {
      const PairLookupIndices<Codec, D> fixed_indices(d, fixed_index, fixed_span);
      const PairLookupIndices<Codec, D> moving_indices(d, moving_index, moving_span);
      const auto read_moving = [&](D dd, const S* row) { return PairLookup<Codec, D>(dd, row, moving_indices); };
      ForEachOuterRow<S>(a, b, out, batch, [&](const S* row_a, const S* row_b, S* row_out) {
        const VectorPair<Codec, D> held(d, PairLookup<Codec, D>(d, fixed_row(row_a, row_b), fixed_indices));
        run(row_a, row_b, row_out, held, read_moving, std::true_type());
      });
      return;
    }
  }
  const auto read_moving = [&](D dd, const S* row) {
    return LookupOperand<Codec, D>(dd, row, moving_span, moving_index);
  };
  ForEachOuterRow<S>(a, b, out, batch, [&](const S* row_a, const S* row_b, S* row_out) {
    const LookupOperand<Codec, D> fixed(d, fixed_row(row_a, row_b), fixed_span, fixed_index);
    run(row_a, row_b, row_out, ExpandedOperand<Codec, D>(d, fixed, n), read_moving, std::false_type());
  });
}

// The rows of a small 2-D block flattened into one (the specs' [8,1,6,1] with
// [7,1,5]: a row of 30 per (i, j), a repeating each of 6 elements 5 times and
// b repeating its 5 elements 6 times), without copying either input. The
// operand whose row does not move along the batch (stride 0) is looked up once
// per batch: the specs' 56 rows took 242-250 ns looked up row by row, 192-200
// ns so (kernel alone, side by side).
template <class Codec, class Op, bool kStream>
void RowBlock(const void* a, const void* b, void* out, size_t n, const RowBatch& shared_batch) {
  const RowBatch batch = shared_batch;  // a local copy: see BatchRows
  using S = typename Codec::Storage;
  using D = hn::ScalableTag<typename Codec::Compute>;
  const D d;
  const bool fits = n <= ExpandedOperand<Codec, D>::kMaxRow;
  if (batch.rows > 1 && fits && batch.a_stride == 0) {
    RowsAroundFixed<Codec, Op, kStream, 0>(d, a, b, out, n, batch);
    return;
  }
  if (batch.rows > 1 && fits && batch.b_stride == 0) {
    RowsAroundFixed<Codec, Op, kStream, 1>(d, a, b, out, n, batch);
    return;
  }
  using Lookup = LookupOperand<Codec, D>;
  const auto read_a = [&](D dd, const S* row) { return Lookup(dd, row, batch.a_span, batch.a_index); };
  const auto read_b = [&](D dd, const S* row) { return Lookup(dd, row, batch.b_span, batch.b_index); };
  const RowSplit<Codec, D> split(d, n);
  ForEachOuterRow<S>(a, b, out, batch, [&](const S* row_a, const S* row_b, S* row_out) {
    BatchRows<Codec, Op, kStream>(d, read_a, read_b, row_a, row_b, row_out, split, batch);
  });
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_ELEMENTWISE_INL_H_
