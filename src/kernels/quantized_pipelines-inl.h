// The quantized ops' exact per-element algorithms (SPEC section 9) on int32
// lanes, one source for every SIMD target: LiteRT's integer pipelines as
// written, the reference every faster path falls back to. The fixed-point
// multiplications take 32x32->64-bit products of the even lanes (MulEven), the
// odd lanes shifted down into even places, and put the 32-bit results back in
// their lanes.

#if defined(SQDIFF_KERNELS_QUANTIZED_PIPELINES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_QUANTIZED_PIPELINES_INL_H_
#undef SQDIFF_KERNELS_QUANTIZED_PIPELINES_INL_H_
#else
#define SQDIFF_KERNELS_QUANTIZED_PIPELINES_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "kernels/quantized_table.hpp"

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

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_QUANTIZED_PIPELINES_INL_H_
