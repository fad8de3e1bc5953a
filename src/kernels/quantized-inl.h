// Row kernels of the quantized ops (SPEC section 9), one source for every SIMD
// target. Elements widen to int32 lanes; the fixed-point multiplications take
// 32x32->64-bit products of the even lanes (MulEven), the odd lanes shifted
// down into even places, and put the 32-bit results back in their lanes.
// Partial vectors at a row's ends run the same vector code on a stack copy,
// so every element of every target gets the same instructions' results.

#if defined(SQDIFF_KERNELS_QUANTIZED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_QUANTIZED_INL_H_
#undef SQDIFF_KERNELS_QUANTIZED_INL_H_
#else
#define SQDIFF_KERNELS_QUANTIZED_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/kernel_table.hpp"
#include "kernels/quantized_table.hpp"
#include "kernels/stream_stores-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D32 = hn::ScalableTag<int32_t>;
using V32 = hn::Vec<D32>;

// ---- Fixed-point arithmetic on int32 lanes ----------------------------------

// The low 32 bits of floor((x * m + rounding) / 2^shift) in each lane, the
// product and the sum in 64 bits (no overflow: |x m| < 2^62, rounding <= 2^61).
// kShift > 0 is a shift known at compile time (the double rounding's 31).
template <int kShift>
HWY_INLINE V32 ProductShiftedRight(V32 x, V32 m, int64_t rounding, int shift) {
  const D32 d;
#if HWY_TARGET == HWY_SCALAR
  // One lane: no 64-bit partner lanes to pair with; the same arithmetic in scalars.
  const int64_t sum = int64_t{hn::GetLane(x)} * int64_t{hn::GetLane(m)} + rounding;
  const int64_t shifted = sum >> (kShift > 0 ? kShift : shift);
  return hn::Set(d, static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(shifted))));
#else
  const hn::Repartition<int64_t, D32> d64;
  const hn::Repartition<uint64_t, D32> du64;
  const auto round = hn::Set(d64, rounding);
  const auto even = hn::Add(hn::MulEven(x, m), round);
  const V32 x_odd = hn::BitCast(d, hn::ShiftRight<32>(hn::BitCast(du64, x)));  // odd lanes into even places
  const auto odd = hn::Add(hn::MulEven(x_odd, m), round);
  if constexpr (kShift == 31) {
    // Even lanes: bits 31..62 of the sum shifted down to bits 0..31; odd
    // lanes: shifted up by one, the same bits land in bits 32..63.
    const auto even_result = hn::ShiftRight<31>(hn::BitCast(du64, even));
    const auto odd_result = hn::ShiftLeft<1>(hn::BitCast(du64, odd));
    return hn::OddEven(hn::BitCast(d, odd_result), hn::BitCast(d, even_result));
  } else {
    // Arithmetic shifts: for shifts beyond 32 the sign reaches the low half.
    const auto even_result = hn::ShiftRightSame(even, shift);
    const auto odd_result = hn::ShiftLeft<32>(hn::BitCast(du64, hn::ShiftRightSame(odd, shift)));
    return hn::OddEven(hn::BitCast(d, odd_result), hn::BitCast(d, even_result));
  }
#endif
}

// x * 2^shift modulo 2^32 (shift 0..31): unsigned, so that it is defined
// where TFLite's int32 product overflows.
HWY_INLINE V32 ShiftLeftWrapping(V32 x, int shift) {
  const hn::RebindToUnsigned<D32> du;
  return hn::BitCast(D32(), hn::ShiftLeftSame(hn::BitCast(du, x), shift));
}

// a + b modulo 2^32.
HWY_INLINE V32 AddWrapping(V32 a, V32 b) {
  const hn::RebindToUnsigned<D32> du;
  return hn::BitCast(D32(), hn::Add(hn::BitCast(du, a), hn::BitCast(du, b)));
}

// A rounding right shift by a per-call amount, as broadcast vectors.
struct RoundingShift {
  int shift;
  V32 mask;  // 2^shift - 1
  V32 half;  // mask >> 1

  explicit RoundingShift(int amount)
      : shift(amount),
        mask(hn::Set(D32(), static_cast<int32_t>((uint32_t{1} << amount) - 1u))),
        half(hn::Set(D32(), static_cast<int32_t>(((uint32_t{1} << amount) - 1u) >> 1))) {}

  // RDBPOT: x / 2^shift rounded to nearest, ties away from zero, as gemmlowp:
  // the floor, plus one where the remainder exceeds half (half + 1 for
  // negative x, whose ties go down). Shift 0 leaves x (mask 0).
  HWY_INLINE V32 operator()(V32 x) const {
    const D32 d;
    const V32 floor = hn::ShiftRightSame(x, shift);
    const V32 remainder = hn::And(x, mask);
    const V32 threshold = hn::Sub(half, hn::ShiftRight<31>(x));  // x >> 31 is -1 for negative x
    return hn::Sub(floor, hn::VecFromMask(d, hn::Gt(remainder, threshold)));
  }
};

// RDBPOT in five operations for values below 2^30 in magnitude (the inputs'
// SRDHM, a multiplier below 1 on at most 2^30): (h + 2^(r-1) - [h < 0]) >> r
// rounds half away from zero, and the sum stays in int32. r = 0 adds nothing
// (bias and sign term 0).
struct RoundingShiftOfSmall {
  int shift;
  V32 bias;       // 2^(r-1), or 0
  V32 sign_mask;  // all ones for r >= 1, 0 for r = 0

  explicit RoundingShiftOfSmall(int amount)
      : shift(amount),
        bias(hn::Set(D32(), amount == 0 ? 0 : int32_t{1} << (amount - 1))),
        sign_mask(hn::Set(D32(), amount == 0 ? 0 : -1)) {}

  HWY_INLINE V32 operator()(V32 h) const {
    const V32 minus_one_if_negative = hn::And(hn::ShiftRight<31>(h), sign_mask);
    return hn::ShiftRightSame(AddWrapping(AddWrapping(h, bias), minus_one_if_negative), shift);
  }
};

// One multiplication by a real multiplier (Requantizer), broadcast once per
// call. kLeftShift: the multiplier may be 1 or more (squared_difference's output).
template <bool kSingleRounding, bool kLeftShift>
struct Multiply {
  V32 multiplier;
  int left_shift;
  RoundingShift right;  // any int32: the output's SRDHM reaches 2^30
  int total_shift;
  int64_t rounding;

  explicit Multiply(const Requantizer& r)
      : multiplier(hn::Set(D32(), r.multiplier)),
        left_shift(r.left_shift),
        right(r.right_shift),
        total_shift(r.total_shift),
        rounding(r.rounding) {}

  HWY_INLINE V32 operator()(V32 x) const {
    if constexpr (kSingleRounding) {
      // TFLITE_SINGLE_ROUNDING: (x m + 2^(total_shift - 1)) >> total_shift.
      return ProductShiftedRight<0>(x, multiplier, rounding, total_shift);
    } else {
      // gemmlowp: SRDHM(x 2^left, m) = floor((x 2^left m + 2^30) / 2^31), then RDBPOT.
      // SRDHM saturates only for x = m = INT32_MIN, and m is never negative.
      const V32 shifted = kLeftShift ? ShiftLeftWrapping(x, left_shift) : x;
      return right(ProductShiftedRight<31>(shifted, multiplier, int64_t{1} << 30, 31));
    }
  }
};

// The scaling of the input whose multiplier is exactly 1/2 (2^30, e = 0):
// with either rounding floor((w + 1) / 2) for w = (x - zp) 2^k (SRDHM(w, 2^30)
// = floor((w 2^30 + 2^30) / 2^31), then a shift by 0; the single rounding's
// (w 2^30 + 2^30) >> 31 is the same), which is (x - zp) 2^(k-1) for k >= 1:
// (x 2^s + c) >> r with s = k - 1, c = -zp 2^(k-1), r = 0, or for k = 0
// s = 0, c = 1 - zp, r = 1.
struct HalfScaling {
  int left;
  V32 offset;
  int right;

  HalfScaling(int32_t zero_point, int input_left_shift)
      : left(input_left_shift == 0 ? 0 : input_left_shift - 1),
        offset(hn::Set(D32(), input_left_shift == 0 ? 1 - zero_point
                                                    : static_cast<int32_t>(-(int64_t{zero_point} << left)))),
        right(input_left_shift == 0 ? 1 : 0) {}

  HWY_INLINE V32 operator()(V32 x) const {
    return hn::ShiftRightSame(hn::Add(ShiftLeftWrapping(x, left), offset), right);
  }
};

// The other input's scaling, c = RDBPOT(SRDHM((x - zp) 2^k, m), r). With
// double rounding, SRDHM of a value with k known zero bits needs no 64-bit
// product: m splits into high and low parts whose int32 products are exact,
// - subtract (k = 20, 15): with s = 31 - k, m = h 2^s + l,
//   SRDHM(v 2^k, m) = v h + ((v l + 2^(s-1)) >> s)  (|v| 2^s <= 2^31);
// - squared_difference (|w| = |v 2^k| <= 2^15): m = h 2^16 + l,
//   SRDHM(w, m) = (w h + ((w l) >> 16) + 2^14) >> 15  (floors nest).
// Single rounding takes the 64-bit products (Multiply).
template <bool kSquare, bool kSingleRounding>
struct InputScaling {
  V32 zero_point;
  int left;
  int split;
  V32 high;
  V32 low;
  V32 bias;
  RoundingShiftOfSmall right;
  Multiply<kSingleRounding, false> single;

  InputScaling(int32_t zp, int input_left_shift, const Requantizer& r)
      : zero_point(hn::Set(D32(), zp)),
        left(input_left_shift),
        split(kSquare ? 16 : 31 - input_left_shift),
        high(hn::Set(D32(), r.multiplier >> split)),
        low(hn::Set(D32(), static_cast<int32_t>(static_cast<uint32_t>(r.multiplier) & ((uint32_t{1} << split) - 1u)))),
        bias(hn::Set(D32(), kSquare ? int32_t{1} << 14 : int32_t{1} << (split - 1))),
        right(r.right_shift),
        single(r) {}

  HWY_INLINE V32 operator()(V32 x) const {
    const V32 v = hn::Sub(x, zero_point);
    if constexpr (kSingleRounding) {
      return single(ShiftLeftWrapping(v, left));
    } else if constexpr (kSquare) {
      const V32 w = ShiftLeftWrapping(v, left);
      const V32 sum = hn::Add(hn::Add(hn::Mul(w, high), hn::ShiftRight<16>(hn::Mul(w, low))), bias);
      return right(hn::ShiftRight<15>(sum));
    } else {
      const V32 rounded_low = hn::ShiftRightSame(hn::Add(hn::Mul(v, low), bias), split);
      return right(hn::Add(hn::Mul(v, high), rounded_low));
    }
  }
};

// ---- Pipelines: SPEC 9's per-element algorithms ------------------------------

// The general path: each input centred, shifted left and scaled to the
// common scale; their difference (squared) scaled to the output's.
// kHalfInput is the input of the larger scale, whose multiplier is 1/2.
template <bool kSquare, bool kSingleRounding, HalfInput kHalfInput>
struct GeneralPipeline {
  HalfScaling half;
  InputScaling<kSquare, kSingleRounding> other;
  V32 out_zero_point;
  Multiply<kSingleRounding, kSquare> out;
  V32 overflow_above;  // squared_difference: squares whose output product leaves int32
  V32 out_min;
  V32 out_max;

  explicit GeneralPipeline(const QuantizedKernelParams& p)
      : half(kHalfInput == HalfInput::a ? p.a_zero_point : p.b_zero_point, p.input_left_shift),
        other(kHalfInput == HalfInput::a ? p.b_zero_point : p.a_zero_point, p.input_left_shift,
              kHalfInput == HalfInput::a ? p.b : p.a),
        out_zero_point(hn::Set(D32(), p.out_zero_point)),
        out(p.out),
        overflow_above(hn::Set(D32(), p.out.overflow_above)),
        out_min(hn::Set(D32(), p.out_min)),
        out_max(hn::Set(D32(), p.out_max)) {}

  HWY_INLINE V32 ScaleA(V32 x) const { return kHalfInput == HalfInput::a ? half(x) : other(x); }
  HWY_INLINE V32 ScaleB(V32 x) const { return kHalfInput == HalfInput::b ? half(x) : other(x); }

  HWY_INLINE V32 Output(V32 scaled_a, V32 scaled_b) const {
    // |scaled| <= 2^29 each (a multiplier of at most 1/2 on at most 2^30).
    const V32 difference = hn::Sub(scaled_a, scaled_b);
    if constexpr (kSquare) {
      // The square is below 2^31 (|difference| <= 32640 for i8, 32768 for
      // i16), but with an output multiplier of 2 or more its product can leave
      // int32: SPEC 9 takes it in 64 bits, so those lanes are at least 2^30,
      // and so is every product kept to 2^30, the zero point added without
      // overflow (|zp| <= 2^15); the clamp saturates them all alike.
      const D32 d;
      const V32 square = hn::Mul(difference, difference);
      const V32 saturated = hn::Set(d, int32_t{1} << 30);
      const V32 product = hn::IfThenElse(hn::Gt(square, overflow_above), saturated, out(square));
      return hn::Min(hn::Max(hn::Add(hn::Min(product, saturated), out_zero_point), out_min), out_max);
    } else {
      // A multiplier below 1 (LiteRT's bound): |out(difference)| <= 2^30.
      return hn::Min(hn::Max(hn::Add(out(difference), out_zero_point), out_min), out_max);
    }
  }
};

// reference_ops::Sub16: one input shifted down by a rounding shift (the other
// by 0), a saturating int16 subtraction, the activation's clamp. The clamp to
// [max(min, -32768), min(max, 32767)] is sat16 and the clamp in one.
struct PowerOfTwoPipeline {
  RoundingShift a;
  RoundingShift b;
  V32 out_min;
  V32 out_max;

  explicit PowerOfTwoPipeline(const QuantizedKernelParams& p)
      : a(p.a.right_shift), b(p.b.right_shift), out_min(hn::Set(D32(), p.out_min)), out_max(hn::Set(D32(), p.out_max)) {}

  HWY_INLINE V32 ScaleA(V32 x) const { return a(x); }
  HWY_INLINE V32 ScaleB(V32 x) const { return b(x); }
  HWY_INLINE V32 Output(V32 scaled_a, V32 scaled_b) const {
    return hn::Min(hn::Max(hn::Sub(scaled_a, scaled_b), out_min), out_max);
  }
};

// ---- Rows ---------------------------------------------------------------------

// Storage lanes, as many as the int32 lanes that compute them.
template <class T>
using DStorage = hn::Rebind<T, D32>;

template <class T>
HWY_INLINE V32 LoadWidened(const T* p) {
  return hn::PromoteTo(D32(), hn::LoadU(DStorage<T>(), p));
}

// The clamped results fit T: the demotion's saturation never acts.
template <class T>
HWY_INLINE hn::Vec<DStorage<T>> Narrowed(V32 v) {
  return hn::DemoteTo(DStorage<T>(), v);
}

// An input read along the row, or one element for the whole row (scaled once).
template <class T, bool kOneElement>
struct Input {
  const T* row;
  V32 scaled_element;  // kOneElement only
};

// Elements [i, i + count) of a row, count < one vector: the inputs copied to
// zeroed stack vectors, the output stored from one. In place is safe: both
// inputs are read before the output is written.
template <class T, bool kAOne, bool kBOne, class Pipeline>
HWY_INLINE void PartialVector(const Pipeline& pipeline, const Input<T, kAOne>& a, const Input<T, kBOne>& b, T* out,
                              size_t i, size_t count) {
  constexpr size_t kMaxLanes = hn::MaxLanes(D32());
  HWY_ALIGN T buffer_a[kMaxLanes] = {};
  HWY_ALIGN T buffer_b[kMaxLanes] = {};
  HWY_ALIGN T buffer_out[kMaxLanes] = {};
  V32 scaled_a;
  V32 scaled_b;
  if constexpr (kAOne) {
    scaled_a = a.scaled_element;
  } else {
    std::memcpy(buffer_a, a.row + i, count * sizeof(T));
    scaled_a = pipeline.ScaleA(LoadWidened(buffer_a));
  }
  if constexpr (kBOne) {
    scaled_b = b.scaled_element;
  } else {
    std::memcpy(buffer_b, b.row + i, count * sizeof(T));
    scaled_b = pipeline.ScaleB(LoadWidened(buffer_b));
  }
  hn::StoreU(Narrowed<T>(pipeline.Output(scaled_a, scaled_b)), DStorage<T>(), buffer_out);
  std::memcpy(out + i, buffer_out, count * sizeof(T));
}

// out[i] = f(a[i], b[i]) for i < n (an input of one element: f(a[0], b[i]) or
// f(a[i], b[0])). kStream: the aligned body stores non-temporally.
template <class T, bool kStream, bool kAOne, bool kBOne, class Pipeline>
HWY_INLINE void Row(const Pipeline& pipeline, const Input<T, kAOne>& a, const Input<T, kBOne>& b, T* out, size_t n) {
  const DStorage<T> ds;
  const size_t lanes = hn::Lanes(D32());
  size_t i = 0;
  if constexpr (kStream) {
    const size_t head = ElementsBeforeAligned(out, lanes * sizeof(T), n);
    if (head != 0) PartialVector(pipeline, a, b, out, 0, head);
    i = head;
  }
  for (; i + lanes <= n; i += lanes) {
    V32 scaled_a = a.scaled_element;
    V32 scaled_b = b.scaled_element;
    if constexpr (!kAOne) scaled_a = pipeline.ScaleA(LoadWidened(a.row + i));
    if constexpr (!kBOne) scaled_b = pipeline.ScaleB(LoadWidened(b.row + i));
    const auto result = Narrowed<T>(pipeline.Output(scaled_a, scaled_b));
    if constexpr (kStream) {
      StreamHalves(ds, result, out + i);
    } else {
      hn::StoreU(result, ds, out + i);
    }
  }
  if (i < n) PartialVector(pipeline, a, b, out, i, n - i);
}

template <class T, bool kOneElement, class Pipeline>
HWY_INLINE Input<T, kOneElement> MakeInput(const Pipeline& pipeline, const T* row, bool is_a) {
  Input<T, kOneElement> input{row, hn::Zero(D32())};
  if constexpr (kOneElement) {
    const V32 element = hn::Set(D32(), static_cast<int32_t>(*row));
    input.scaled_element = is_a ? pipeline.ScaleA(element) : pipeline.ScaleB(element);
  }
  return input;
}

template <class T>
HWY_INLINE const T* RowStart(const void* base, int64_t stride, size_t r) {
  return static_cast<const T*>(base) + static_cast<int64_t>(r) * stride;
}

// vv (neither one element), vs (b one element), sv (a one element), for each
// row of the batch.
template <class T, class Pipeline, bool kStream, bool kAOne, bool kBOne>
void RowsOfOperands(const void* a, const void* b, void* out, size_t n, const RowBatch& shared_batch) {
  const RowBatch batch = shared_batch;  // a local copy: a store may alias the caller's
  const Pipeline pipeline(*static_cast<const QuantizedKernelParams*>(batch.params));
  for (size_t r = 0; r < batch.rows; ++r) {
    const auto input_a = MakeInput<T, kAOne>(pipeline, RowStart<T>(a, batch.a_stride, r), true);
    const auto input_b = MakeInput<T, kBOne>(pipeline, RowStart<T>(b, batch.b_stride, r), false);
    T* row_out = static_cast<T*>(out) + static_cast<int64_t>(r) * batch.out_stride;
    Row<T, kStream>(pipeline, input_a, input_b, row_out, n);
  }
}

// vp / pv: the input kRepeating (0 = a, 1 = b) repeats its first `period`
// elements from `phase` on. The pattern is written out once per row into a
// stack row of whole periods, which then serves every piece of the row as an
// ordinary contiguous input.
template <class T, class Pipeline, int kRepeating>
void PeriodicRows(const void* a, const void* b, void* out, size_t n, const RowBatch& shared_batch) {
  const RowBatch batch = shared_batch;
  const Pipeline pipeline(*static_cast<const QuantizedKernelParams*>(batch.params));
  constexpr size_t kExpandedMax = 512;  // a multiple of every period (2..16)
  const size_t period = batch.period;
  const size_t expanded = kExpandedMax - kExpandedMax % period;
  HWY_ALIGN T pattern_row[kExpandedMax];
  for (size_t r = 0; r < batch.rows; ++r) {
    const T* row_a = RowStart<T>(a, batch.a_stride, r);
    const T* row_b = RowStart<T>(b, batch.b_stride, r);
    T* row_out = static_cast<T*>(out) + static_cast<int64_t>(r) * batch.out_stride;
    const size_t phase = r == 0 ? batch.phase : 0;  // only a first row starts inside a period
    const T* pattern = kRepeating == 0 ? row_a : row_b;
    for (size_t i = 0; i < expanded; ++i) pattern_row[i] = pattern[(phase + i) % period];
    for (size_t done = 0; done < n; done += expanded) {
      const size_t count = n - done < expanded ? n - done : expanded;
      const Input<T, false> repeating{pattern_row, hn::Zero(D32())};
      const Input<T, false> running{(kRepeating == 0 ? row_b : row_a) + done, hn::Zero(D32())};
      if constexpr (kRepeating == 0) {
        Row<T, false>(pipeline, repeating, running, row_out + done, count);
      } else {
        Row<T, false>(pipeline, running, repeating, row_out + done, count);
      }
    }
  }
}

template <class T, class Pipeline, bool kStream>
constexpr RowKinds MakeQuantizedRowKinds() {
  return RowKinds{
      .vv = &RowsOfOperands<T, Pipeline, kStream, false, false>,
      .vs = &RowsOfOperands<T, Pipeline, kStream, false, true>,
      .sv = &RowsOfOperands<T, Pipeline, kStream, true, false>,
      .vp = &PeriodicRows<T, Pipeline, 1>,
      .pv = &PeriodicRows<T, Pipeline, 0>,
      .block = nullptr,  // never planned: the quantized ops plan with no lookup lanes
  };
}

template <class T, class Pipeline>
constexpr RowKernels MakeQuantizedRowKernels() {
  return RowKernels{
      .plain = MakeQuantizedRowKinds<T, Pipeline, false>(),
      .streaming = MakeQuantizedRowKinds<T, Pipeline, true>(),
      .narrow_long_rows = MakeQuantizedRowKinds<T, Pipeline, false>(),
  };
}

template <class Pipeline>
constexpr void SetPipelineKernels(QuantizedKernelTable& table, QuantizedPipeline pipeline, HalfInput half) {
  auto& row = table.kernels[static_cast<int>(pipeline)][static_cast<int>(half)];
  row[static_cast<int>(QuantizedType::i8)] = MakeQuantizedRowKernels<int8_t, Pipeline>();
  row[static_cast<int>(QuantizedType::u8)] = MakeQuantizedRowKernels<uint8_t, Pipeline>();
  row[static_cast<int>(QuantizedType::i16)] = MakeQuantizedRowKernels<int16_t, Pipeline>();
}

template <bool kSquare, bool kSingleRounding>
constexpr void SetGeneralKernels(QuantizedKernelTable& table, QuantizedPipeline pipeline) {
  SetPipelineKernels<GeneralPipeline<kSquare, kSingleRounding, HalfInput::a>>(table, pipeline, HalfInput::a);
  SetPipelineKernels<GeneralPipeline<kSquare, kSingleRounding, HalfInput::b>>(table, pipeline, HalfInput::b);
}

constexpr QuantizedKernelTable MakeQuantizedKernelTable() {
  QuantizedKernelTable table{};
  table.target = HWY_TARGET;
  SetGeneralKernels<false, false>(table, QuantizedPipeline::subtract_double_rounding);
  SetGeneralKernels<false, true>(table, QuantizedPipeline::subtract_single_rounding);
  SetGeneralKernels<true, false>(table, QuantizedPipeline::squared_difference_double_rounding);
  SetGeneralKernels<true, true>(table, QuantizedPipeline::squared_difference_single_rounding);
  // Only int16 takes this path; the 8-bit entries are there so that no entry is null.
  SetPipelineKernels<PowerOfTwoPipeline>(table, QuantizedPipeline::subtract_int16_power_of_two, HalfInput::a);
  SetPipelineKernels<PowerOfTwoPipeline>(table, QuantizedPipeline::subtract_int16_power_of_two, HalfInput::b);
  return table;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_QUANTIZED_INL_H_
