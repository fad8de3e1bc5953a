// Error-free transformations in f64 (TwoSum, TwoSum of a difference) and the
// square of a difference as an exact-to-2^-102 pair: the terms of the
// double-double sums (reduce-inl.h's double-precision rows and pairwise lanes,
// fused_compare.cc's statistics pass), which share SquareRowDouble's bound only
// if they compute exactly these roundings.

#if defined(SQDIFF_KERNELS_EXACT_TERMS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_EXACT_TERMS_INL_H_
#undef SQDIFF_KERNELS_EXACT_TERMS_INL_H_
#else
#define SQDIFF_KERNELS_EXACT_TERMS_INL_H_
#endif

#include <cmath>

#include "hwy/highway.h"
#include "kernels/widen_f64-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

HWY_INLINE void TwoSum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bv = s - a;
  e = (a - (s - bv)) + (b - bv);
}

template <class D>
HWY_INLINE void TwoSumV(hn::Vec<D> a, hn::Vec<D> b, hn::Vec<D>& s, hn::Vec<D>& e) {
  s = hn::Add(a, b);
  const auto bv = hn::Sub(s, a);
  e = hn::Add(hn::Sub(a, hn::Sub(s, bv)), hn::Sub(b, bv));
}

// The square of a - b as p + t: a - b = s + e (TwoSum), s^2 = p + q (FMA), and
// t = q + 2se (rounded: its error, with the e^2 left out, is below 2^-102 p).
// TwoSum(a, -b) without the negation: the same roundings (negating is
// exact), so the same s and e, one instruction fewer per term.
template <class D>
HWY_INLINE void TwoDiffV(hn::Vec<D> a, hn::Vec<D> b, hn::Vec<D>& s, hn::Vec<D>& e) {
  s = hn::Sub(a, b);
  const auto bv = hn::Sub(s, a);
  e = hn::Sub(hn::Sub(a, hn::Sub(s, bv)), hn::Add(b, bv));
}

template <class D>
HWY_INLINE void SquareTerm(D d, hn::Vec<D> a, hn::Vec<D> b, hn::Vec<D>& p, hn::Vec<D>& t, hn::Vec<D>& s) {
  hn::Vec<D> e;
  TwoDiffV<D>(a, b, s, e);
  p = hn::Mul(s, s);
  const auto q = FusedMulSub(d, s, s, p);
  t = FusedMulAdd(d, hn::Add(s, s), e, q);
}

HWY_INLINE void ScalarSquareTerm(double a, double b, double& p, double& t, double& s) {
  double e;
  TwoSum(a, -b, s, e);
  p = s * s;
  const double q = std::fma(s, s, -p);
  t = std::fma(s + s, e, q);
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_EXACT_TERMS_INL_H_
