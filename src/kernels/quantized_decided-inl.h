// Decided lanes: the general 8-bit pipelines of SPEC 9 at the speed of a few
// float operations, with LiteRT's exact integer results. Each output is
// estimated in float32 from per-call constants, together with a bound on the
// estimate's distance from the value the reference pipeline rounds; where the
// bound decides the final rounding, the estimate's rounding is the result, and
// a vector with any undecided lane is computed again by the exact pipeline.
//
// The bound (quantized/decided_lanes.cpp computes each term, rounded up).
// Write mu_a, mu_b, mu_o for the real values m 2^(e-31) of the call's
// multipliers (exactly what the integer pipeline multiplies by) and k_in for
// its input shift (20 for 8-bit subtract, 7 for 8-bit squared difference).
//
// Subtract. The reference computes, for the stored x and y,
//   s_a = scale(x - zp_a), s_b = scale(y - zp_b), d = s_a - s_b,
//   result = clamp(round(Z)), Z = zp_o + (the output stage's value before its
//   last rounding), round to nearest with some tie rule.
// The real value Y = (x - zp_a) alpha - (y - zp_b) beta + zp_o, with
// alpha = 2^k_in mu_a mu_o and beta = 2^k_in mu_b mu_o, differs from Z by at
// most E_in + E_1:
// - E_in = (delta_a + delta_b) mu_o: s_a differs from (x - zp_a) 2^k_in mu_a
//   by delta_a: 0 for the input whose multiplier is 1/2 (exact); for the
//   other, SRDHM's rounding (at most 1/2) divided by 2^r plus RDBPOT's (1/2):
//   1/2 + 2^-(r+1) for r >= 1, 1/2 for r = 0; single rounding one rounding: 1/2.
// - E_1: double rounding with r_o >= 1 rounds twice; the first, SRDHM, moves
//   the value by at most 1/2 before RDBPOT divides it by 2^r_o: 2^-(r_o+1).
//   Otherwise the output stage rounds once, from Z = d mu_o + zp_o: 0.
// The estimate, with M = 1.5 2^(23-k) (a float with k fraction bits in the
// binade [2^(23-k), 2^(24-k))), is
//   Ys = fl(fl(x a_f) + fl(fl(y nb_f) + c_f)),  a_f = fl(alpha),
//   nb_f = fl(-beta), c_f = fl(zp_o - zp_a alpha + zp_b beta + M),
// its products fused or not (MulAdd is one rounding where the target has FMA,
// two where not: the bound takes two). Its distance from Y + M is at most
// - u = 2^-24 relative on each of alpha and beta (their float32 rounding, after
//   a double one of 2^-53) and u on each product: 2u (|x| alpha + |y| beta);
// - 2^-(k+1) for each of the three roundings at the binade's spacing 2^-k
//   (c_f, the inner sum, the outer sum): 3 2^-(k+1), as long as every partial
//   sum stays within M +- 2^(22-k), which k's choice ensures (S + 2 <= 2^(20-k)
//   for S = max |x| alpha + max |y| beta + |zp_o - zp_a alpha + zp_b beta|);
// - the constant's own double arithmetic, below 2^-40 (1 + S).
// E = E_in + E_1 + E_f bounds |(Ys - M) - Z|. Then the bits of Ys less those of
// M are V = (Ys - M) 2^k, an integer (k <= 14, so that M's bits shifted down
// by k are a multiple of 256 and the results' low bytes are the 8-bit outputs). With t = V + 2^(k-1) and f its low k
// bits, Ys - M = q - 1/2 + f 2^-k for q = t >> k; Z lies within E of it, so
// round(Z) = q whatever the tie rule when E 2^k < f < 2^k - E 2^k. With a
// margin w = 2^(j-1) > E 2^k, the lanes where (t + w)'s bits j..k-1 are all
// zero hold every f < w and every f >= 2^k - w: the rest are decided, and for
// them (t + w) >> k = q. The clamp then acts on the exact q. Undecided lanes are
// a fraction of about 2 w 2^-k of the outputs (E ~ 1e-4 for typical scales).
//
// Squared difference. The inputs' scaling is exact as in the exact pipeline
// (integer, d exact); only the output stage is estimated:
//   Ys = fl(fl(fl(h) o_f) + c_f), h = min(d^2, h_max), o_f = fl(mu_o),
//   c_f = fl(zp_o + M),
// within 3u h mu_o + 2 2^-(k+1) (+ the constant's 2^-40) of h mu_o + zp_o + M,
// which is within E_1 of Z. The reference result grows with d^2 (SPEC 9
// saturates the product rather than wrapping it), and h_max is a square whose
// value reaches the clamp's top plus one: every d^2 beyond it clamps to the
// same top as h_max does, and h_max keeps the estimate's range small.

#if defined(SQDIFF_KERNELS_QUANTIZED_DECIDED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_QUANTIZED_DECIDED_INL_H_
#undef SQDIFF_KERNELS_QUANTIZED_DECIDED_INL_H_
#else
#define SQDIFF_KERNELS_QUANTIZED_DECIDED_INL_H_
#endif

#include <atomic>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/quantized_pipelines-inl.h"
#include "kernels/quantized_table.hpp"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF32 = hn::Repartition<float, D32>;
using VF32 = hn::Vec<DF32>;

// How many vectors took the exact pipeline, counted in the row loop's pipeline
// object and added to the call's counters once per batch of rows.
struct ExactVectorCount {
  std::atomic<int64_t>* vectors;
  std::atomic<int64_t>* exact_vectors;
  mutable int64_t exact = 0;

  explicit ExactVectorCount(const DecidedLanes& lanes) : vectors(lanes.vectors), exact_vectors(lanes.exact_vectors) {}

  void Report(int64_t vector_count) const {
    if (vectors != nullptr) vectors->fetch_add(vector_count, std::memory_order_relaxed);
    if (exact_vectors != nullptr && exact != 0) exact_vectors->fetch_add(exact, std::memory_order_relaxed);
  }
};

// One vector of estimates in the binade of M to 8-bit results: the lanes the
// bound cannot decide, the rounded values of the others, the clamp. Results
// are in each lane's low byte, above magic_high (a multiple of 256: k <= 14).
struct DecidedOutput {
  V32 round_bias;
  V32 undecided_mask;
  V32 magic_high;
  int fraction_bits;
  V32 out_min;  // plus magic_high
  V32 out_max;
  ExactVectorCount count;

  explicit DecidedOutput(const QuantizedKernelParams& p)
      : round_bias(hn::Set(D32(), p.decided.round_bias)),
        undecided_mask(hn::Set(D32(), p.decided.undecided_mask)),
        magic_high(hn::Set(D32(), p.decided.magic_high)),
        fraction_bits(p.decided.fraction_bits),
        out_min(hn::Set(D32(), p.out_min + p.decided.magic_high)),
        out_max(hn::Set(D32(), p.out_max + p.decided.magic_high)),
        count(p.decided) {}

  // exact_result() computes the vector by the exact pipeline (clamped, as
  // values), for a vector with an undecided lane.
  template <class ExactResult>
  HWY_INLINE V32 operator()(VF32 estimate, const ExactResult& exact_result) const {
    const V32 biased = hn::Add(hn::BitCast(D32(), estimate), round_bias);
    // (AVX-512 compilers make the And and the compare with zero one vptestnmd.)
    if (HWY_UNLIKELY(!hn::AllFalse(D32(), hn::Eq(hn::And(biased, undecided_mask), hn::Zero(D32()))))) {
      ++count.exact;
      return hn::Add(exact_result(), magic_high);
    }
    return hn::Min(hn::Max(hn::ShiftRightSame(biased, fraction_bits), out_min), out_max);
  }
};

// An input as stored (for the exact pipeline) with its part of the estimate.
struct DecidedInput {
  V32 stored;
  VF32 part;
};

template <bool kSingleRounding, HalfInput kHalfInput>
struct DecidedSubtractPipeline {
  using Exact = GeneralPipeline<false, kSingleRounding, kHalfInput>;
  Exact exact;
  VF32 alpha;
  VF32 neg_beta;
  VF32 offset;
  DecidedOutput output;
  static constexpr bool kLowByteResults = true;

  explicit DecidedSubtractPipeline(const QuantizedKernelParams& p)
      : exact(p),
        alpha(hn::Set(DF32(), p.decided.alpha)),
        neg_beta(hn::Set(DF32(), p.decided.neg_beta)),
        offset(hn::Set(DF32(), p.decided.offset)),
        output(p) {}

  HWY_INLINE DecidedInput ScaleA(V32 x) const { return {x, hn::ConvertTo(DF32(), x)}; }
  HWY_INLINE DecidedInput ScaleB(V32 y) const { return {y, hn::MulAdd(hn::ConvertTo(DF32(), y), neg_beta, offset)}; }

  HWY_INLINE V32 Output(const DecidedInput& a, const DecidedInput& b) const {
    return output(hn::MulAdd(a.part, alpha, b.part),
                  [&] { return exact.Output(exact.ScaleA(a.stored), exact.ScaleB(b.stored)); });
  }

  const ExactVectorCount& Count() const { return output.count; }
};

template <bool kSingleRounding, HalfInput kHalfInput>
struct DecidedSquarePipeline {
  using Exact = GeneralPipeline<true, kSingleRounding, kHalfInput>;
  Exact exact;
  V32 square_max;
  VF32 out_multiplier;
  VF32 offset;
  DecidedOutput output;
  static constexpr bool kLowByteResults = true;

  explicit DecidedSquarePipeline(const QuantizedKernelParams& p)
      : exact(p),
        square_max(hn::Set(D32(), p.decided.square_max)),
        out_multiplier(hn::Set(DF32(), p.decided.out_multiplier)),
        offset(hn::Set(DF32(), p.decided.offset)),
        output(p) {}

  HWY_INLINE V32 ScaleA(V32 x) const { return exact.ScaleA(x); }
  HWY_INLINE V32 ScaleB(V32 y) const { return exact.ScaleB(y); }

  HWY_INLINE V32 Output(V32 scaled_a, V32 scaled_b) const {
    const V32 difference = hn::Sub(scaled_a, scaled_b);  // |difference| <= 2^15: the square fits
    const V32 square = hn::Min(hn::Mul(difference, difference), square_max);
    return output(hn::MulAdd(hn::ConvertTo(DF32(), square), out_multiplier, offset),
                  [&] { return exact.Output(scaled_a, scaled_b); });
  }

  const ExactVectorCount& Count() const { return output.count; }
};

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_QUANTIZED_DECIDED_INL_H_
