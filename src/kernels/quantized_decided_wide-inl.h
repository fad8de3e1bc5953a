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
//   nb_d = fl(-beta), c_d = fl(c0_d + M (+ 1/2 + w 2^-k, below)),
//   c0_d = zp_o - zp_a a_d - zp_b nb_d in double,
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
// The decision, in the double's bits. The kernel's constant also holds
// g = 1/2 + w 2^-k, w = 2^(j-1) the margin (j <= k - 2, below), a multiple of
// the grid: c_d = fl(c0_d + M + g), and its estimate Ys' is the expression
// above with that c_d. Every partial sum then lies within M +- (S + 3), in the
// binade, so the same three roundings of at most 2^-(k+1) and the products'
// 2u make Ys' - M - g lie within E_f of Y, and within E of Z. In the binade,
// bits(Ys') - bits(M) = (Ys' - M) 2^k =: B, an integer, and M's low k bits are
// 0 (k <= 51): B's low k bits are bits(Ys')'s, and B >> k = (bits(Ys') >> k) -
// (bits(M) >> k). Then B = t + w, t = V + 2^(k-1), V = (Ys' - M - g) 2^k (an
// integer); with f the low k bits of t and q = t >> k (arithmetic),
// Ys' - M - g = q - 1/2 + f 2^-k. Z lies
// within E of it, so round(Z) = q whatever the tie rule when
// E 2^k < f < 2^k - E 2^k.
// With w > E 2^k, the lanes where bits j..k-1 of B are all zero hold every
// f < w and every f >= 2^k - w (f + w < 2^j, or 2^k <= f + w < 2^k + w); the
// rest are decided, and for them f + w < 2^k, so B >> k = q. Since k <= 32,
// bits j..k-1 lie in the low 32 bits of bits(Ys'), and the low 32 bits of
// bits(Ys') >> k (logical) less those of bits(M) >> k are q modulo 2^32,
// which is q (|q| <= S + 1 < 2^31). For k = 32 the first are the double's
// high half. A vector with any undecided lane is computed again by the exact
// pipeline; the clamp acts on the exact q (without an activation, the
// narrowing to int16 saturates: that is the clamp). Where k = 32 and S + 2
// lies within the clamp's range (DecidedLanes::wide_words), a decided q =
// round(Z), |Z| <= S + E < S + 1, needs no clamp and fits int16: the low 16
// bits of the high half, q plus magic_high (whose low 16 bits are 0 for
// k = 32), are the result (AVX-512 packs them with one word permute).
// Undecided lanes are a fraction of about 2 w 2^-k <= 4 E of the outputs.
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

// A vector of D32's lanes as doubles: its lower and upper halves (the scalar
// target: one lane, in lo).
struct WideParts {
  VF64 lo;
  VF64 hi;
};

HWY_INLINE WideParts ToWideParts(V32 v) {
#if HWY_TARGET == HWY_SCALAR
  return {hn::PromoteTo(DF64(), v), hn::Zero(DF64())};
#else
  const hn::Rebind<int32_t, DF64> dh;
  return {hn::PromoteTo(DF64(), hn::LowerHalf(dh, v)), hn::PromoteTo(DF64(), hn::UpperHalf(dh, v))};
#endif
}

// Lanes(D32) int16 from p as doubles. AVX-512: each half sign-extended to
// int64 and converted (vpmovsxwq, vcvtqq2pd: one uop each, where int32's
// vcvtdq2pd takes two and the halves an extract).
HWY_INLINE WideParts LoadWideParts(const int16_t* p) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8));
  return {VF64{_mm512_cvtepi64_pd(_mm512_cvtepi16_epi64(lo))}, VF64{_mm512_cvtepi64_pd(_mm512_cvtepi16_epi64(hi))}};
#else
  return ToWideParts(hn::PromoteTo(D32(), hn::LoadU(hn::Rebind<int16_t, D32>(), p)));
#endif
}

// The doubles of integers back in int32 lanes (exact): for the exact pipeline.
HWY_INLINE V32 FromWideParts(const WideParts& v) {
#if HWY_TARGET == HWY_SCALAR
  return hn::DemoteTo(D32(), v.lo);
#else
  const hn::Rebind<int32_t, DF64> dh;
  return hn::Combine(D32(), hn::DemoteTo(dh, v.hi), hn::DemoteTo(dh, v.lo));
#endif
}

// AVX-512: the results leave Output as 16 int16 in the vector's low 256 bits
// (quantized-inl.h's Narrowed takes them as they are), so that the common
// case packs them with one word permute.
#undef SQDIFF_WIDE_PACKED_WORDS  // this header is read once per target
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define SQDIFF_WIDE_PACKED_WORDS 1
#else
#define SQDIFF_WIDE_PACKED_WORDS 0
#endif

// An input: its stored integers (exact, as doubles) and its part of the estimate.
struct WideDecidedInput {
  WideParts value;
  WideParts part;
};

template <bool kSingleRounding, HalfInput kHalfInput>
struct WideDecidedSubtractPipeline {
  using Exact = GeneralPipeline<false, kSingleRounding, kHalfInput>;
  Exact exact;
  VF64 alpha;
  VF64 neg_beta;
  VF64 offset;          // c0 + M + 1/2 + w 2^-k
  V32 undecided_mask;   // bits j..k-1 of the low 32 bits
  V32 magic;            // the low 32 bits of bits(M) >> k
  int fraction_bits;    // k
  bool top_dwords;      // k = 32: bits k..k+31 are the high half
  bool clamps;          // the activation's range is narrower than int16's
  bool words;           // k = 32 and every decided q within the clamp (DecidedLanes::wide_words)
#if SQDIFF_WIDE_PACKED_WORDS
  static constexpr bool kPackedWordResults = true;
  V32 word_index;       // the low word of each 64-bit lane's high half, lo's then hi's
#endif
  V32 out_min;
  V32 out_max;
  ExactVectorCount count;

  explicit WideDecidedSubtractPipeline(const QuantizedKernelParams& p)
      : exact(p),
        alpha(hn::Set(DF64(), p.decided.wide_alpha)),
        neg_beta(hn::Set(DF64(), p.decided.wide_neg_beta)),
        offset(hn::Set(DF64(), p.decided.wide_offset)),
        undecided_mask(hn::Set(D32(), p.decided.undecided_mask)),
        magic(hn::Set(D32(), p.decided.magic_high)),
        fraction_bits(p.decided.fraction_bits),
        top_dwords(p.decided.fraction_bits == 32),
        clamps(p.out_min > -32768 || p.out_max < 32767),
        words(p.decided.wide_words),
#if SQDIFF_WIDE_PACKED_WORDS
        word_index(WordIndex()),
#endif
        out_min(hn::Set(D32(), p.out_min)),
        out_max(hn::Set(D32(), p.out_max)),
        count(p.decided) {}

#if SQDIFF_WIDE_PACKED_WORDS
  static V32 WordIndex() {
    alignas(64) int16_t index[32] = {};
    for (int i = 0; i < 8; ++i) {
      index[i] = static_cast<int16_t>(4 * i + 2);            // lo's 64-bit lane i: words 4i..4i+3
      index[8 + i] = static_cast<int16_t>(32 + 4 * i + 2);  // hi's
    }
    return V32{_mm512_load_si512(index)};
  }
#endif

  // Results as Output hands them on: int32 lanes, or (AVX-512) packed words.
  HWY_INLINE V32 Packed(V32 v) const {
#if SQDIFF_WIDE_PACKED_WORDS
    return V32{_mm512_zextsi256_si512(_mm512_cvtsepi32_epi16(v.raw))};  // vpmovsdw: saturates, as DemoteTo
#else
    return v;
#endif
  }

  HWY_INLINE WideDecidedInput FromParts(const WideParts& value, bool is_b) const {
    WideDecidedInput input{value, value};
    if (is_b) {
      input.part.lo = hn::MulAdd(value.lo, neg_beta, offset);
#if HWY_TARGET != HWY_SCALAR
      input.part.hi = hn::MulAdd(value.hi, neg_beta, offset);
#endif
    }
    return input;
  }

  HWY_INLINE WideDecidedInput ScaleA(V32 x) const { return FromParts(ToWideParts(x), false); }
  HWY_INLINE WideDecidedInput ScaleB(V32 y) const { return FromParts(ToWideParts(y), true); }
  HWY_INLINE WideDecidedInput LoadA(const int16_t* p) const { return FromParts(LoadWideParts(p), false); }
  HWY_INLINE WideDecidedInput LoadB(const int16_t* p) const { return FromParts(LoadWideParts(p), true); }

  // bits(Ys') for Ys' = fl(x alpha + (y neg_beta + offset)): its low k bits
  // are those of t + w, its bits k.. those of (t + w) >> k plus bits(M) >> k
  // (quantized_decided_wide-inl.h's proof).
  HWY_INLINE hn::Vec<DU64> Bits(VF64 a_part, VF64 b_part) const {
    return hn::BitCast(DU64(), hn::MulAdd(a_part, alpha, b_part));
  }

  HWY_INLINE V32 Output(const WideDecidedInput& a, const WideDecidedInput& b) const {
#if HWY_TARGET == HWY_SCALAR
    const uint64_t bits = hn::GetLane(Bits(a.part.lo, b.part.lo));
    const V32 low = hn::Set(D32(), static_cast<int32_t>(static_cast<uint32_t>(bits)));
    const V32 high = hn::Set(D32(), static_cast<int32_t>(static_cast<uint32_t>(bits >> fraction_bits)));
    if (HWY_UNLIKELY(!hn::AllFalse(D32(), hn::Eq(hn::And(low, undecided_mask), hn::Zero(D32()))))) {
      return ExactOutput(a.value, b.value);
    }
    const V32 rounded = hn::Sub(high, magic);
#else
    const V32 lo = hn::BitCast(D32(), Bits(a.part.lo, b.part.lo));
    const V32 hi = hn::BitCast(D32(), Bits(a.part.hi, b.part.hi));
    // The low halves of the 64-bit lanes, lo's then hi's: the fraction bits.
    const V32 low = hn::ConcatEven(D32(), hi, lo);
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    const bool any_undecided = _mm512_testn_epi32_mask(low.raw, undecided_mask.raw) != 0;  // one vptestnmd
#else
    const bool any_undecided = !hn::AllFalse(D32(), hn::Eq(hn::And(low, undecided_mask), hn::Zero(D32())));
#endif
    if (HWY_UNLIKELY(any_undecided)) return Packed(ExactOutput(a.value, b.value));
#if SQDIFF_WIDE_PACKED_WORDS
    // k = 32 and every decided q within [out_min, out_max] (so within int16):
    // the low word of each high half is magic_high's low word (0) plus q.
    if (words) return V32{_mm512_permutex2var_epi16(lo.raw, word_index.raw, hi.raw)};
#endif
    V32 high;
    if (top_dwords) {
      high = hn::ConcatOdd(D32(), hi, lo);
    } else {
      const auto shifted_lo = hn::ShiftRightSame(hn::BitCast(DU64(), lo), fraction_bits);
      const auto shifted_hi = hn::ShiftRightSame(hn::BitCast(DU64(), hi), fraction_bits);
      high = hn::ConcatEven(D32(), hn::BitCast(D32(), shifted_hi), hn::BitCast(D32(), shifted_lo));
    }
    const V32 rounded = hn::Sub(high, magic);
#endif
    // Without an activation the narrowing's saturation is the clamp.
    return Packed(clamps ? hn::Min(hn::Max(rounded, out_min), out_max) : rounded);
  }

  // Inline, from the inputs' values only (an out-of-line call taking the
  // inputs by reference made the compiler spill them on every vector).
  HWY_INLINE V32 ExactOutput(const WideParts& x, const WideParts& y) const {
    ++count.exact;
    return exact.Output(exact.ScaleA(FromWideParts(x)), exact.ScaleB(FromWideParts(y)));
  }

  const ExactVectorCount& Count() const { return count; }
};

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_QUANTIZED_DECIDED_WIDE_INL_H_
