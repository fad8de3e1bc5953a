// Float storage types read as f64 lanes, exactly: what the reductions and
// gradients compute in. Each loader also reads one element as a double, for
// tails.

#if defined(SQDIFF_KERNELS_WIDEN_F64_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_WIDEN_F64_INL_H_
#undef SQDIFF_KERNELS_WIDEN_F64_INL_H_
#else
#define SQDIFF_KERNELS_WIDEN_F64_INL_H_
#endif

#include <cmath>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/half_convert-inl.h"
#include "sqdiff/bfloat16.hpp"
#include "sqdiff/float16.hpp"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// a * b + c rounded once, on every target. Highway's MulAdd rounds twice
// where the target has no FMA instruction (SSSE3, SSE4, EMU128, SCALAR:
// HWY_NATIVE_FMA 0), but the reductions' error bounds (reduce/
// square_bounds.hpp), their exact-product terms and the gradients' exactness
// checks all need one rounding: those targets take std::fma lane by lane
// (correct, slower; CPUs without FMA are rare).
template <class D>
HWY_INLINE hn::Vec<D> FusedMulAdd(D d, hn::Vec<D> a, hn::Vec<D> b, hn::Vec<D> c) {
#if HWY_NATIVE_FMA
  (void)d;
  return hn::MulAdd(a, b, c);
#else
  HWY_ALIGN double la[hn::MaxLanes(d)];
  HWY_ALIGN double lb[hn::MaxLanes(d)];
  HWY_ALIGN double lc[hn::MaxLanes(d)];
  hn::Store(a, d, la);
  hn::Store(b, d, lb);
  hn::Store(c, d, lc);
  for (size_t k = 0; k < hn::Lanes(d); ++k) la[k] = std::fma(la[k], lb[k], lc[k]);
  return hn::Load(d, la);
#endif
}

// a * b - c rounded once (FusedMulAdd's reasons).
template <class D>
HWY_INLINE hn::Vec<D> FusedMulSub(D d, hn::Vec<D> a, hn::Vec<D> b, hn::Vec<D> c) {
#if HWY_NATIVE_FMA
  (void)d;
  return hn::MulSub(a, b, c);  // one instruction, not a negation and an FMA
#else
  return FusedMulAdd(d, a, b, hn::Neg(c));
#endif
}

// Lanes(d) elements of the storage type as f64 lanes.

struct WideF64 {
  using Storage = double;
  static constexpr bool kCheckRange = true;  // only f64 values can leave the fast bound's range
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    return hn::LoadU(d, p);
  }
  static HWY_INLINE double Scalar(const Storage* p) { return *p; }
};

struct WideF32 {
  using Storage = float;
  static constexpr bool kCheckRange = false;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, D>(), p));
  }
  static HWY_INLINE double Scalar(const Storage* p) { return *p; }
};

struct WideF16 {
  using Storage = hwy::float16_t;
  static constexpr bool kCheckRange = false;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    const hn::Rebind<float, D> df;
    return hn::PromoteTo(d, WidenF16(df, hn::LoadU(hn::Rebind<Storage, D>(), p)));
  }
  static HWY_INLINE double Scalar(const Storage* p) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return static_cast<float>(sqdiff::float16::from_bits(bits));
  }
};

struct WideBF16 {
  using Storage = hwy::bfloat16_t;
  static constexpr bool kCheckRange = false;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    const hn::Rebind<float, D> df;
    return hn::PromoteTo(d, WidenBF16(df, hn::LoadU(hn::Rebind<Storage, D>(), p)));
  }
#if HWY_TARGET != HWY_SCALAR  // one lane: no pairs in a lane
  // The 2 * Lanes(d) elements from p, as two vectors in an order of their own
  // (the even-numbered ones, then the odd): a bfloat16 is the high half of
  // its float, so the 32-bit lanes holding two of them give both floats with
  // one shift and one mask. Load's widening (a zero extension and a shift)
  // took two shuffle-port instructions more per vector, where the sums of
  // squares of bf16 are bound by those ports (docs/PERFORMANCE.md). Callers
  // that read both operands this way pair the same elements.
  template <class D>
  static HWY_INLINE void LoadTwo(D d, const Storage* p, hn::Vec<D>& even, hn::Vec<D>& odd) {
    const hn::Rebind<float, D> df;
    const hn::Rebind<uint32_t, D> du;
    const hn::Repartition<Storage, decltype(du)> dbf;
    const auto pairs = hn::BitCast(du, hn::LoadU(dbf, p));
    even = hn::PromoteTo(d, hn::BitCast(df, hn::ShiftLeft<16>(pairs)));
    odd = hn::PromoteTo(d, hn::BitCast(df, hn::And(pairs, hn::Set(du, 0xFFFF0000u))));
  }
#endif
  static HWY_INLINE double Scalar(const Storage* p) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return static_cast<float>(sqdiff::bfloat16::from_bits(bits));
  }
};

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_WIDEN_F64_INL_H_
