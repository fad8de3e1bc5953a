// The element-wise gradient of squared_difference: 2 (a - b) g rounded once,
// one source for every SIMD target. Computed in f64: s = a - b and p = 2s g.
// Where both are exact, one rounding of p to the output type is right; other
// elements (exponents far apart, specials) are left to the caller's exact path.
// p's exactness is checked with an FMA (2s g - p == 0). s's is checked with
// TwoSum for f64 inputs and, for the narrower inputs, with two operations
// fewer (ExactDifference below): the kernel is bound by its arithmetic.

#if defined(SQDIFF_KERNELS_GRADIENT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_GRADIENT_INL_H_
#undef SQDIFF_KERNELS_GRADIENT_INL_H_
#else
#define SQDIFF_KERNELS_GRADIENT_INL_H_
#endif

#include <cmath>
#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/false_lanes-inl.h"
#include "kernels/gradient_table.hpp"
#include "kernels/half_convert-inl.h"
#include "kernels/stream_stores-inl.h"
#include "kernels/widen_f64-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// f64 lanes narrowed to an f32 vector with round-to-odd: the truncation, with
// its last bit set when anything was dropped. Rounding that again to f16 or
// bf16 (at most 22 bits) to nearest is the same as rounding the f64 once.
template <class D>
HWY_INLINE hn::Vec<hn::Rebind<float, D>> DemoteToOdd(D d, hn::Vec<D> v) {
  const hn::Rebind<float, D> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const auto nearest = hn::DemoteTo(df, v);
  const auto back = hn::PromoteTo(d, nearest);
  // Masks of f64 lanes become masks of f32 lanes through a 0 or 1 demoted
  // alongside (Highway 1.0.3 has no mask demotion).
  const auto one = hn::Set(d, 1.0);
  const auto away = hn::Ne(hn::DemoteTo(df, hn::IfThenElseZero(hn::Gt(hn::Abs(back), hn::Abs(v)), one)), hn::Zero(df));
  const auto inexact = hn::Ne(hn::DemoteTo(df, hn::IfThenElseZero(hn::Ne(back, v), one)), hn::Zero(df));
  auto bits = hn::BitCast(du, nearest);
  bits = hn::IfThenElse(hn::RebindMask(du, away), hn::Sub(bits, hn::Set(du, 1u)), bits);
  bits = hn::IfThenElse(hn::RebindMask(du, inexact), hn::Or(bits, hn::Set(du, 1u)), bits);
  return hn::BitCast(df, bits);
}

HWY_INLINE float ScalarDemoteToOdd(double v) {
  const auto nearest = static_cast<float>(v);
  const auto back = static_cast<double>(nearest);
  uint32_t bits;
  std::memcpy(&bits, &nearest, 4);
  if (std::fabs(back) > std::fabs(v)) --bits;
  if (back != v) bits |= 1u;
  float odd;
  std::memcpy(&odd, &bits, 4);
  return odd;
}

// Whether s = a - b, computed in f64, is exact. For f64 inputs: TwoSum's error
// is zero. For inputs of at most 24 significant bits (f32, f16, bf16), two
// back-substitutions suffice: s + b == a and a - s == b. If s is inexact, its
// error d != 0 is a multiple of the lower of a's and b's last significant bits,
// so |d| >= 2^-23 times that input's magnitude, far beyond half an f64 ulp of
// it; then s + b = a + d (rounded) differs from a when a holds that bit, and
// a - s = b - d (rounded) differs from b when b does. Non-finite inputs fail
// one of the comparisons (inf - inf or NaN).
template <class Wide, class D>
HWY_INLINE hn::Mask<D> ExactDifference(D d, hn::Vec<D> a, hn::Vec<D> b, hn::Vec<D> s) {
  if constexpr (std::is_same_v<typename Wide::Storage, double>) {
    const auto bv = hn::Sub(s, a);
    const auto e = hn::Add(hn::Sub(a, hn::Sub(s, bv)), hn::Sub(hn::Neg(b), bv));
    return hn::Eq(e, hn::Zero(d));
  } else {
    return hn::And(hn::Eq(hn::Add(s, b), a), hn::Eq(hn::Sub(a, s), b));
  }
}

template <class Wide>
HWY_INLINE bool ScalarExactDifference(double a, double b, double s) {
  if constexpr (std::is_same_v<typename Wide::Storage, double>) {
    const double bv = s - a;
    return (a - (s - bv)) + (-b - bv) == 0;
  } else {
    return s + b == a && a - s == b;
  }
}

// How each output type is stored from exact f64 lanes, and how a sign flip
// makes grad_b from grad_a (negation is exact).
struct StoreF64 {
  using Storage = double;
  template <class D>
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) {
    hn::StoreU(v, d, p);
  }
  template <class D>
  static HWY_INLINE void Stream(D d, hn::Vec<D> v, Storage* aligned) {
    hn::Stream(v, d, aligned);
  }
  static HWY_INLINE void Scalar(double v, Storage* p) { *p = v; }
};

struct StoreF32 {
  using Storage = float;
  template <class D>
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
    // These targets' DemoteTo clamps to +-FLT_MAX (for UBSan's sake), where
    // rounding to nearest gives +-inf: convert lane by lane as IEEE does.
    HWY_ALIGN double lanes[hn::MaxLanes(d)];
    hn::Store(v, d, lanes);
    for (size_t k = 0; k < hn::Lanes(d); ++k) p[k] = static_cast<float>(lanes[k]);
#else
    (void)d;
    hn::StoreU(hn::DemoteTo(hn::Rebind<float, D>(), v), hn::Rebind<float, D>(), p);
#endif
  }
  template <class D>
  static HWY_INLINE void Stream(D d, hn::Vec<D> v, Storage* aligned) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
    Store(d, v, aligned);
#else
    (void)d;
    StreamHalves(hn::Rebind<float, D>(), hn::DemoteTo(hn::Rebind<float, D>(), v), aligned);
#endif
  }
  static HWY_INLINE void Scalar(double v, Storage* p) { *p = static_cast<float>(v); }
};

struct StoreF16 {
  using Storage = hwy::float16_t;
  template <class D>
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) {
    const hn::Rebind<float, D> df;
    hn::StoreU(NarrowF16(df, DemoteToOdd(d, v)), hn::Rebind<Storage, D>(), p);
  }
  template <class D>
  static HWY_INLINE void Stream(D d, hn::Vec<D> v, Storage* aligned) {
    const hn::Rebind<float, D> df;
    StreamHalves(hn::Rebind<Storage, D>(), NarrowF16(df, DemoteToOdd(d, v)), aligned);
  }
  static HWY_INLINE void Scalar(double v, Storage* p) {
    const uint16_t bits = sqdiff::float16(ScalarDemoteToOdd(v)).bits();
    std::memcpy(p, &bits, 2);
  }
};

struct StoreBF16 {
  using Storage = hwy::bfloat16_t;
  template <class D>
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) {
    const hn::Rebind<float, D> df;
    hn::StoreU(NarrowBF16(df, DemoteToOdd(d, v)), hn::Rebind<Storage, D>(), p);
  }
  template <class D>
  static HWY_INLINE void Stream(D d, hn::Vec<D> v, Storage* aligned) {
    const hn::Rebind<float, D> df;
    StreamHalves(hn::Rebind<Storage, D>(), NarrowBF16(df, DemoteToOdd(d, v)), aligned);
  }
  static HWY_INLINE void Scalar(double v, Storage* p) {
    const uint16_t bits = sqdiff::bfloat16(ScalarDemoteToOdd(v)).bits();
    std::memcpy(p, &bits, 2);
  }
};

// One element of DifferenceProductRow, for the elements before and after its
// vectors: the same computation, lane by lane.
template <class Wide, class Out>
HWY_INLINE void DifferenceProductElement(const typename Wide::Storage* a, const typename Wide::Storage* b,
                                         const typename Wide::Storage* g, typename Out::Storage* ga,
                                         typename Out::Storage* gb, size_t i, size_t& unsure_count,
                                         uint32_t* unsure) {
  constexpr bool kF64 = std::is_same_v<typename Out::Storage, double>;
  const double va = Wide::Scalar(a + i);
  const double vb = Wide::Scalar(b + i);
  const double vg = Wide::Scalar(g + i);
  const double s = va - vb;
  const double two_s = s + s;
  const double p = two_s * vg;
  bool sure = ScalarExactDifference<Wide>(va, vb, s);
  if constexpr (!kF64) sure = sure && std::fma(two_s, vg, -p) == 0;
  if constexpr (kF64) sure = sure && std::fabs(p) < HUGE_VAL && std::fabs(two_s) < HUGE_VAL;
  if (ga != nullptr) Out::Scalar(p, ga + i);
  if (gb != nullptr) Out::Scalar(-p, gb + i);
  if (!sure) unsure[unsure_count++] = static_cast<uint32_t>(i);
}

// Whether `out + i` starts a vector of `bytes` (a null output counts as such).
template <class O>
HWY_INLINE bool StartsVector(const O* out, size_t i, size_t bytes) {
  return out == nullptr || reinterpret_cast<uintptr_t>(out + i) % bytes == 0;
}

// f64 outputs need only a - b exact: the product 2s g is then rounded once by
// the multiply itself. Narrower outputs need the product exact too.
// With kStream, each output whose vectors can be aligned is written with
// non-temporal stores (the first output's alignment decides where the vectors
// start); the caller fences (FlushStream) before anything reads or rewrites
// them, the unsure elements included.
template <class Wide, class Out, bool kStream>
void DifferenceProductRow(const void* a_raw, const void* b_raw, const void* g_raw, void* ga_raw, void* gb_raw, size_t n,
                          size_t& unsure_count, uint32_t* unsure) {
  using S = typename Wide::Storage;
  using O = typename Out::Storage;
  constexpr bool kF64 = std::is_same_v<O, double>;
  const S* a = static_cast<const S*>(a_raw);
  const S* b = static_cast<const S*>(b_raw);
  const S* g = static_cast<const S*>(g_raw);
  O* ga = static_cast<O*>(ga_raw);
  O* gb = static_cast<O*>(gb_raw);
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  const size_t vector_bytes = N * sizeof(O);
  size_t i = 0;
  bool stream_a = false, stream_b = false;
  if constexpr (kStream) {
    // Elements one by one up to where the first output's vectors are aligned
    // (never, for an output not aligned to its own elements).
    const size_t head = ElementsBeforeAligned(ga != nullptr ? ga : gb, vector_bytes, n);
    for (; i < head; ++i) DifferenceProductElement<Wide, Out>(a, b, g, ga, gb, i, unsure_count, unsure);
    stream_a = ga != nullptr && StartsVector(ga, i, vector_bytes);
    stream_b = gb != nullptr && StartsVector(gb, i, vector_bytes);
  }
  for (; i + N <= n; i += N) {
    const auto va = Wide::Load(d, a + i);
    const auto vb = Wide::Load(d, b + i);
    const auto vg = Wide::Load(d, g + i);
    const auto s = hn::Sub(va, vb);
    const auto two_s = hn::Add(s, s);
    const auto p = hn::Mul(two_s, vg);
    auto sure = ExactDifference<Wide>(d, va, vb, s);
    // Narrower outputs: the FMA's test also fails for a non-finite p (inf - inf
    // or NaN), and a finite p cannot overflow f64 (|p| < 2^260 from such inputs).
    if constexpr (!kF64) sure = hn::And(sure, hn::Eq(FusedMulSub(d, two_s, vg, p), hn::Zero(d)));
    if constexpr (kF64) {
      sure = hn::And(sure, hn::And(hn::Lt(hn::Abs(p), hn::Set(d, HUGE_VAL)), hn::Lt(hn::Abs(two_s), hn::Set(d, HUGE_VAL))));
    }
    if (ga != nullptr) {
      if (stream_a) {
        Out::Stream(d, p, ga + i);
      } else {
        Out::Store(d, p, ga + i);
      }
    }
    if (gb != nullptr) {
      if (stream_b) {
        Out::Stream(d, hn::Neg(p), gb + i);
      } else {
        Out::Store(d, hn::Neg(p), gb + i);
      }
    }
    if (HWY_UNLIKELY(!hn::AllTrue(d, sure))) AppendFalseLanes(d, sure, i, unsure, unsure_count);
  }
  for (; i < n; ++i) DifferenceProductElement<Wide, Out>(a, b, g, ga, gb, i, unsure_count, unsure);
}

template <class Wide, class Out, bool kStream>
size_t DifferenceProduct(const void* a, const void* b, const void* g, void* ga, void* gb, size_t n, uint32_t* unsure) {
  size_t count = 0;
  DifferenceProductRow<Wide, Out, kStream>(a, b, g, ga, gb, n, count, unsure);
  return count;
}

constexpr GradientKernelTable MakeGradientKernelTable() {
  GradientKernelTable table{};
  table.target = HWY_TARGET;
  table.difference_product[0] = &DifferenceProduct<WideF16, StoreF16, false>;
  table.difference_product[1] = &DifferenceProduct<WideBF16, StoreBF16, false>;
  table.difference_product[2] = &DifferenceProduct<WideF32, StoreF32, false>;
  table.difference_product[3] = &DifferenceProduct<WideF64, StoreF64, false>;
  table.streaming_difference_product[0] = &DifferenceProduct<WideF16, StoreF16, true>;
  table.streaming_difference_product[1] = &DifferenceProduct<WideBF16, StoreBF16, true>;
  table.streaming_difference_product[2] = &DifferenceProduct<WideF32, StoreF32, true>;
  table.streaming_difference_product[3] = &DifferenceProduct<WideF64, StoreF64, true>;
  return table;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_GRADIENT_INL_H_
