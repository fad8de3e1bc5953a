// The general subtract (SPEC 9) when all three multipliers are powers of two:
// every m is 2^30, as for equal scales, an output scale twice the inputs' or
// any scales 2^n apart. Outputs there lie on rounding boundaries by design (an
// output scale of 2 s gives (x - y) / 2), so no estimate can decide them; the
// same integer results come from shifts alone:
// - an input, RDBPOT(SRDHM((x - zp) 2^k, 2^30), r) with r <= k - 1: SRDHM of
//   an even w by 2^30 is floor((w + 1) / 2) = w / 2, and the rounding shift of
//   a multiple of 2^r is exact, so it is (x - zp) 2^(k-1-r); single rounding,
//   floor(((x - zp) 2^k 2^30 + 2^(30+r)) / 2^(31+r)), is the same integer;
// - the output, double rounding: RDBPOT(SRDHM(d, 2^30), r) =
//   RDBPOT(floor((d + 1) / 2), r); single rounding:
//   floor((d 2^30 + 2^(30+r)) / 2^(31+r)) = floor((d + 2^r) / 2^(r+1)).
// quantized/decided_lanes.cpp chooses this pipeline only where r <= 29 keeps
// d + 2^r in int32 (|d| <= 2^29: |x - zp| <= 2^15 times 2^(k-1) <= 2^14).

#if defined(SQDIFF_KERNELS_QUANTIZED_DYADIC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_QUANTIZED_DYADIC_INL_H_
#undef SQDIFF_KERNELS_QUANTIZED_DYADIC_INL_H_
#else
#define SQDIFF_KERNELS_QUANTIZED_DYADIC_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "kernels/quantized_pipelines-inl.h"
#include "kernels/quantized_table.hpp"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <bool kSingleRounding>
struct DyadicSubtractPipeline {
  V32 a_zero_point;
  V32 b_zero_point;
  int a_shift;
  int b_shift;
  RoundingShift out_right;  // double rounding: RDBPOT by r
  int single_shift;         // single rounding: r + 1
  V32 single_bias;          // single rounding: 2^r
  V32 out_zero_point;
  V32 out_min;
  V32 out_max;

  explicit DyadicSubtractPipeline(const QuantizedKernelParams& p)
      : a_zero_point(hn::Set(D32(), p.a_zero_point)),
        b_zero_point(hn::Set(D32(), p.b_zero_point)),
        a_shift(p.dyadic_a_shift),
        b_shift(p.dyadic_b_shift),
        out_right(kSingleRounding ? 0 : p.out.right_shift),
        single_shift(p.out.total_shift - 30),
        single_bias(hn::Set(D32(), kSingleRounding ? int32_t{1} << (p.out.total_shift - 31) : 0)),
        out_zero_point(hn::Set(D32(), p.out_zero_point)),
        out_min(hn::Set(D32(), p.out_min)),
        out_max(hn::Set(D32(), p.out_max)) {}

  HWY_INLINE V32 ScaleA(V32 x) const { return hn::ShiftLeftSame(hn::Sub(x, a_zero_point), a_shift); }
  HWY_INLINE V32 ScaleB(V32 y) const { return hn::ShiftLeftSame(hn::Sub(y, b_zero_point), b_shift); }

  HWY_INLINE V32 Output(V32 scaled_a, V32 scaled_b) const {
    const V32 difference = hn::Sub(scaled_a, scaled_b);
    V32 result;
    if constexpr (kSingleRounding) {
      result = hn::ShiftRightSame(hn::Add(difference, single_bias), single_shift);
    } else {
      result = out_right(hn::ShiftRight<1>(hn::Add(difference, hn::Set(D32(), 1))));
    }
    return hn::Min(hn::Max(hn::Add(result, out_zero_point), out_min), out_max);
  }
};

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_QUANTIZED_DYADIC_INL_H_
