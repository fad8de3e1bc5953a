// Decided lanes for int16 subtract (SPEC 9's general path, either rounding):
// quantized_decided-inl.h's method in float64 lanes. A float32 estimate of an
// int16 output has an evaluation error near 2u 2^16 (u = 2^-24), about 1 lane
// in 60 undecided; float64's is below 1e-10, far under the pipeline's own
// roundings (near 5e-5 for calibrated scales), so about 2 lanes in 10,000 are
// left to the exact pipeline.
//
// The bound (quantized/decided_lanes.cpp, decide_subtract_wide, computes each
// term, rounded up). Write mu_a, mu_b, mu_o for the real values m 2^(e-31) of
// the call's multipliers (exactly what the integer pipeline multiplies by); the
// input shift is 15. The reference computes, for the stored x and y,
//   s_a = scale(x - zp_a), s_b = scale(y - zp_b), d = s_a - s_b,
//   result = clamp(round(Z)), Z = zp_o + (the output stage's value before its
//   last rounding), round to nearest with some tie rule
// (int16 zero points are all 0, SPEC 9; the proof keeps them). The real value
//   Y = (x - zp_a) alpha - (y - zp_b) beta + zp_o,
//   alpha = 2^15 mu_a mu_o, beta = 2^15 mu_b mu_o,
// differs from Z by at most E_in + E_1:
// - E_in = (delta_a + delta_b) mu_o, delta the distance of s from its real
//   value (x - zp) 2^15 mu: 0 for the input whose multiplier is 1/2 (a shift,
//   exact); for the other, double rounding: SRDHM's rounding (at most 1/2)
//   divided by 2^r, plus RDBPOT's (1/2): 1/2 + 2^-(r+1) for r >= 1, 1/2 for
//   r = 0; single rounding, one rounding: 1/2. (A multiplier flushed to 0
//   gives s = 0 = its real value: 1/2 still bounds it.)
// - E_1: double rounding with r_o >= 1 rounds twice; the first, SRDHM, moves
//   the value by at most 1/2 before RDBPOT divides it by 2^r_o: 2^-(r_o+1).
//   Otherwise the output stage rounds once, from Z = d mu_o + zp_o itself: 0.
//
// The estimate. With k fraction bits (19 <= k <= 32, below) and
// M = 1.5 2^(52-k), a double in the binade [2^(52-k), 2^(53-k)) whose spacing
// is 2^-k:
//   Ys = fl(fl(x a_d) + fl(fl(y nb_d) + c_d)),  a_d = fl(alpha),
//   nb_d = fl(-beta), c_d = fl(c0_d + M), c0_d = zp_o - zp_a a_d - zp_b nb_d
//   in double,
// each MulAdd fused or not (one rounding where the target has FMA, two where
// not: the bound takes two). With u = 2^-53, Ys - M lies within E_f of Y:
// - alpha and beta: alpha = 2^15 mu_a mu_o, a product of two 31-bit
//   significands times powers of two, rounded once in double: a_d = alpha
//   (1 + t), |t| <= u; each product x a_d rounded (no FMA) adds u more, so
//   |fl(x a_d) - x alpha| <= (2u + u^2) |x| alpha, and the same for y:
//   2u (1 + 2^-20) (|x| alpha + |y| beta) <= 2u (1 + 2^-20) P, P = 32768 (alpha + beta);
// - the three roundings at the binade's spacing 2^-k (c_d, the inner sum, the
//   outer sum): 3 2^-(k+1), as long as every partial sum stays within
//   M +- 2^(51-k), the binade: k's choice below keeps S + 2 <= 2^(49-k) for
//   S = P + |c0|, which bounds every partial sum's distance from M;
// - c0_d: three roundings of u on terms of at most |zp_o| + P, and a_d's and
//   beta's own u on zp_a alpha and zp_b beta: below 2^-50 (|zp_o| + P)
//   (0 for int16's zero points, as it happens).
// E = E_in + E_1 + E_f bounds |(Ys - M) - Z|.
//
// The decision, in the double's bits. In the binade, bits(Ys) - bits(M) =
// (Ys - M) 2^k =: V, an integer (M's low k bits are 0 for k <= 51). With
// t = V + 2^(k-1), f its low k bits and q = t >> k (arithmetic), Ys - M =
// q - 1/2 + f 2^-k; Z lies within E of it, so round(Z) = q whatever the tie
// rule when E 2^k < f < 2^k - E 2^k. With a margin w = 2^(j-1) > E 2^k
// (j <= k - 2), the lanes where the bits j..k-1 of B = t + w are all zero hold
// every f < w and every f >= 2^k - w (f + w < 2^j, or 2^k <= f + w < 2^k + w);
// the rest are decided, and for them f + w < 2^k, so B >> k = q. B is one
// 64-bit addition: bits(Ys) + (2^(k-1) + w - bits(M)). For k <= 32 the low
// 32 bits of B's logical shift right by k are bits k..k+31 of B, those of its
// arithmetic shift: q modulo 2^32, which is q (|q| <= S + 1 < 2^31). A vector
// with any undecided lane is computed again by the exact pipeline; the clamp
// acts on the exact q. Undecided lanes are a fraction of about 2 w 2^-k <= 4 E
// of the outputs.
//
// k: S is below 2^30 (mu_a, mu_b <= 1/2 and mu_o < 1, so alpha + beta < 2^15;
// the zero points are 0), so k = min(32, 49 - ceil(log2(S + 2))) is 19 or
// more, the evaluation error tiny beside E_in + E_1.
//
// Results do not depend on the target: a decided lane's result is LiteRT's
// integer, whichever roundings the estimate took; only which vectors go exact
// may differ.

#if defined(SQDIFF_KERNELS_QUANTIZED_DECIDED_WIDE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_QUANTIZED_DECIDED_WIDE_INL_H_
#undef SQDIFF_KERNELS_QUANTIZED_DECIDED_WIDE_INL_H_
#else
#define SQDIFF_KERNELS_QUANTIZED_DECIDED_WIDE_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "kernels/quantized_decided-inl.h"
#include "kernels/quantized_pipelines-inl.h"
#include "kernels/quantized_table.hpp"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Half as many float64 lanes as D32 has int32 lanes (the scalar target: one,
// and one part per vector instead of two).
using DF64 = hn::Repartition<double, D32>;
using VF64 = hn::Vec<DF64>;
using DI64 = hn::RebindToSigned<DF64>;
using DU64 = hn::RebindToUnsigned<DF64>;
using VI64 = hn::Vec<DI64>;

// An int32 vector as doubles: its lower and upper halves.
struct WideParts {
  VF64 lo;
  VF64 hi;  // unused on the scalar target
};

HWY_INLINE WideParts ToWideParts(V32 v) {
#if HWY_TARGET == HWY_SCALAR
  return {hn::PromoteTo(DF64(), v), hn::Zero(DF64())};
#else
  const hn::Rebind<int32_t, DF64> dh;
  return {hn::PromoteTo(DF64(), hn::LowerHalf(dh, v)), hn::PromoteTo(DF64(), hn::UpperHalf(dh, v))};
#endif
}

// An input as stored (for the exact pipeline) with its part of the estimate.
struct WideDecidedInput {
  V32 stored;
  WideParts part;
};

template <bool kSingleRounding, HalfInput kHalfInput>
struct WideDecidedSubtractPipeline {
  using Exact = GeneralPipeline<false, kSingleRounding, kHalfInput>;
  Exact exact;
  VF64 alpha;
  VF64 neg_beta;
  VF64 offset;
  VI64 round_bias;      // 2^(k-1) + w - bits(M)
  VI64 undecided_mask;  // bits j..k-1
  int fraction_bits;
  V32 out_min;
  V32 out_max;
  ExactVectorCount count;

  explicit WideDecidedSubtractPipeline(const QuantizedKernelParams& p)
      : exact(p),
        alpha(hn::Set(DF64(), p.decided.wide_alpha)),
        neg_beta(hn::Set(DF64(), p.decided.wide_neg_beta)),
        offset(hn::Set(DF64(), p.decided.wide_offset)),
        round_bias(hn::Set(DI64(), p.decided.wide_round_bias)),
        undecided_mask(hn::Set(DI64(), p.decided.wide_undecided_mask)),
        fraction_bits(p.decided.fraction_bits),
        out_min(hn::Set(D32(), p.out_min)),
        out_max(hn::Set(D32(), p.out_max)),
        count(p.decided) {}

  HWY_INLINE WideDecidedInput ScaleA(V32 x) const { return {x, ToWideParts(x)}; }
  HWY_INLINE WideDecidedInput ScaleB(V32 y) const {
    WideParts part = ToWideParts(y);
    part.lo = hn::MulAdd(part.lo, neg_beta, offset);
#if HWY_TARGET != HWY_SCALAR
    part.hi = hn::MulAdd(part.hi, neg_beta, offset);
#endif
    return {y, part};
  }

  // B = bits(Ys) + round_bias (quantized_decided_wide-inl.h's proof).
  HWY_INLINE VI64 Biased(VF64 a_part, VF64 b_part) const {
    return hn::Add(hn::BitCast(DI64(), hn::MulAdd(a_part, alpha, b_part)), round_bias);
  }

  HWY_INLINE auto Undecided(VI64 biased) const {
    return hn::Eq(hn::And(biased, undecided_mask), hn::Zero(DI64()));
  }

  // q in the low 32 bits of each 64-bit lane (k <= 32).
  HWY_INLINE hn::Vec<DU64> Rounded(VI64 biased) const {
    return hn::ShiftRightSame(hn::BitCast(DU64(), biased), fraction_bits);
  }

  HWY_INLINE V32 Output(const WideDecidedInput& a, const WideDecidedInput& b) const {
#if HWY_TARGET == HWY_SCALAR
    const VI64 lo = Biased(a.part.lo, b.part.lo);
    if (HWY_UNLIKELY(!hn::AllFalse(DI64(), Undecided(lo)))) return ExactOutput(a, b);
    const V32 rounded = hn::Set(D32(), static_cast<int32_t>(static_cast<uint32_t>(hn::GetLane(Rounded(lo)))));
#else
    const VI64 lo = Biased(a.part.lo, b.part.lo);
    const VI64 hi = Biased(a.part.hi, b.part.hi);
    if (HWY_UNLIKELY(!hn::AllFalse(DI64(), hn::Or(Undecided(lo), Undecided(hi))))) return ExactOutput(a, b);
    // The even int32 lanes hold the low halves: lo's elements, then hi's.
    const V32 rounded = hn::ConcatEven(D32(), hn::BitCast(D32(), Rounded(hi)), hn::BitCast(D32(), Rounded(lo)));
#endif
    return hn::Min(hn::Max(rounded, out_min), out_max);
  }

  HWY_NOINLINE V32 ExactOutput(const WideDecidedInput& a, const WideDecidedInput& b) const {
    ++count.exact;
    return exact.Output(exact.ScaleA(a.stored), exact.ScaleB(b.stored));
  }

  const ExactVectorCount& Count() const { return count; }
};

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_QUANTIZED_DECIDED_WIDE_INL_H_
