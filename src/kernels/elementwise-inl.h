// Row kernels for subtract and squared_difference, one source for every SIMD
// target. A codec says how a storage type is loaded into the lanes that compute
// (f16/bf16 widen to f32) and stored back; an op says what is computed.

#if defined(SQDIFF_KERNELS_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_ELEMENTWISE_INL_H_
#undef SQDIFF_KERNELS_ELEMENTWISE_INL_H_
#else
#define SQDIFF_KERNELS_ELEMENTWISE_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"
#include "kernels/half_convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- Codecs: storage type <-> compute lanes ---------------------------------

// Floats compute in their own type; integers in the unsigned type of the same
// width, where wrap-around is defined (signed kernels reuse these).
template <typename T>
struct NativeCodec {
  using Storage = T;
  using Compute = T;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    return hn::LoadU(d, p);
  }
  template <class D>
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) {
    hn::StoreU(v, d, p);
  }
};

struct Float16Codec {
  using Storage = hwy::float16_t;
  using Compute = float;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    return WidenF16(d, hn::LoadU(hn::Rebind<Storage, D>(), p));
  }
  template <class D>
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) {
    hn::StoreU(NarrowF16(d, v), hn::Rebind<Storage, D>(), p);
  }
};

struct BFloat16Codec {
  using Storage = hwy::bfloat16_t;
  using Compute = float;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    return WidenBF16(d, hn::LoadU(hn::Rebind<Storage, D>(), p));
  }
  template <class D>
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) {
    hn::StoreU(NarrowBF16(d, v), hn::Rebind<Storage, D>(), p);
  }
};

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

// The last partial vector goes through small stack buffers, so that the tail
// runs the same vector code as the body and no access passes the row's end
// (masked loads may fault on SSE4/AVX2 in Highway 1.0.3).
template <class Codec>
struct TailBuffer {
  using Storage = typename Codec::Storage;
  static constexpr size_t kCapacity = HWY_MAX_BYTES / sizeof(typename Codec::Compute);
  HWY_ALIGN Storage lanes[kCapacity] = {};

  void Fill(const Storage* from, size_t count) { std::memcpy(lanes, from, count * sizeof(Storage)); }
  void Drain(Storage* to, size_t count) const { std::memcpy(to, lanes, count * sizeof(Storage)); }
};

// The vector holding `*scalar` in every lane, widened exactly as a load would.
template <class Codec, class D>
HWY_INLINE hn::Vec<D> Splat(D d, const typename Codec::Storage* scalar) {
  TailBuffer<Codec> buffer;
  for (size_t i = 0; i < hn::Lanes(d); ++i) buffer.lanes[i] = *scalar;
  return Codec::Load(d, buffer.lanes);
}

template <class Codec, class Op>
void RowVV(const void* a_row, const void* b_row, void* out_row, size_t n) {
  using S = typename Codec::Storage;
  const hn::ScalableTag<typename Codec::Compute> d;
  const size_t lanes = hn::Lanes(d);
  const S* a = static_cast<const S*>(a_row);
  const S* b = static_cast<const S*>(b_row);
  S* out = static_cast<S*>(out_row);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    Codec::Store(d, Op::Apply(d, Codec::Load(d, a + i), Codec::Load(d, b + i)), out + i);
  }
  if (i == n) return;
  TailBuffer<Codec> ta, tb, to;
  ta.Fill(a + i, n - i);
  tb.Fill(b + i, n - i);
  Codec::Store(d, Op::Apply(d, Codec::Load(d, ta.lanes), Codec::Load(d, tb.lanes)), to.lanes);
  to.Drain(out + i, n - i);
}

// out[i] = op(a[i], *b)
template <class Codec, class Op>
void RowVS(const void* a_row, const void* b_scalar, void* out_row, size_t n) {
  using S = typename Codec::Storage;
  const hn::ScalableTag<typename Codec::Compute> d;
  const size_t lanes = hn::Lanes(d);
  const S* a = static_cast<const S*>(a_row);
  S* out = static_cast<S*>(out_row);
  const auto b = Splat<Codec>(d, static_cast<const S*>(b_scalar));
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    Codec::Store(d, Op::Apply(d, Codec::Load(d, a + i), b), out + i);
  }
  if (i == n) return;
  TailBuffer<Codec> ta, to;
  ta.Fill(a + i, n - i);
  Codec::Store(d, Op::Apply(d, Codec::Load(d, ta.lanes), b), to.lanes);
  to.Drain(out + i, n - i);
}

// out[i] = op(*a, b[i]); not the mirror of RowVS, since subtract is not symmetric.
template <class Codec, class Op>
void RowSV(const void* a_scalar, const void* b_row, void* out_row, size_t n) {
  using S = typename Codec::Storage;
  const hn::ScalableTag<typename Codec::Compute> d;
  const size_t lanes = hn::Lanes(d);
  const auto a = Splat<Codec>(d, static_cast<const S*>(a_scalar));
  const S* b = static_cast<const S*>(b_row);
  S* out = static_cast<S*>(out_row);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    Codec::Store(d, Op::Apply(d, a, Codec::Load(d, b + i)), out + i);
  }
  if (i == n) return;
  TailBuffer<Codec> tb, to;
  tb.Fill(b + i, n - i);
  Codec::Store(d, Op::Apply(d, a, Codec::Load(d, tb.lanes)), to.lanes);
  to.Drain(out + i, n - i);
}

template <class Codec, class Op>
constexpr RowKernels MakeRowKernels() {
  return {&RowVV<Codec, Op>, &RowVS<Codec, Op>, &RowSV<Codec, Op>};
}

// One row of the table: the kernels of `Op` for every dtype, in DType order.
template <class Op>
constexpr void FillOp(RowKernels (&row)[kDTypeCount]) {
  row[static_cast<int>(DType::f16)] = MakeRowKernels<Float16Codec, Op>();
  row[static_cast<int>(DType::bf16)] = MakeRowKernels<BFloat16Codec, Op>();
  row[static_cast<int>(DType::f32)] = MakeRowKernels<NativeCodec<float>, Op>();
  row[static_cast<int>(DType::f64)] = MakeRowKernels<NativeCodec<double>, Op>();
  row[static_cast<int>(DType::i8)] = MakeRowKernels<NativeCodec<uint8_t>, Op>();
  row[static_cast<int>(DType::i16)] = MakeRowKernels<NativeCodec<uint16_t>, Op>();
  row[static_cast<int>(DType::i32)] = MakeRowKernels<NativeCodec<uint32_t>, Op>();
  row[static_cast<int>(DType::i64)] = MakeRowKernels<NativeCodec<uint64_t>, Op>();
  row[static_cast<int>(DType::u8)] = MakeRowKernels<NativeCodec<uint8_t>, Op>();
  row[static_cast<int>(DType::u16)] = MakeRowKernels<NativeCodec<uint16_t>, Op>();
  row[static_cast<int>(DType::u32)] = MakeRowKernels<NativeCodec<uint32_t>, Op>();
  row[static_cast<int>(DType::u64)] = MakeRowKernels<NativeCodec<uint64_t>, Op>();
}

constexpr KernelTable MakeKernelTable() {
  KernelTable table{};
  table.target = HWY_TARGET;
  FillOp<SubtractOp>(table.kernels[static_cast<int>(Op::subtract)]);
  FillOp<SquaredDifferenceOp>(table.kernels[static_cast<int>(Op::squared_difference)]);
  return table;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_ELEMENTWISE_INL_H_
