// Sums of squared differences of float inputs, one source for every SIMD
// target. Inputs are widened to f64 exactly; what differs between the kernels
// is how the terms are accumulated, which fixes the error bound the caller
// uses (kernels/reduce_table.hpp).

#if defined(SQDIFF_KERNELS_REDUCE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_REDUCE_INL_H_
#undef SQDIFF_KERNELS_REDUCE_INL_H_
#else
#define SQDIFF_KERNELS_REDUCE_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hwy/highway.h"
#include "kernels/exact_terms-inl.h"
#include "kernels/prefetch_ahead-inl.h"
#include "kernels/reduce_table.hpp"
#include "kernels/round_f32-inl.h"
#include "kernels/round_f64-inl.h"
#include "kernels/widen_f64-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// An operand read along the row, or one element for the whole row.
template <class Wide, bool kAlong>
struct Operand {
  using S = typename Wide::Storage;
  const S* p;
  template <class D>
  HWY_INLINE hn::Vec<D> Load(D d, size_t i, hn::Vec<D> fixed) const {
    if constexpr (kAlong) {
      return Wide::Load(d, p + i);
    } else {
      (void)i;
      (void)d;
      return fixed;
    }
  }
  // Elements i to i + 2 Lanes(d), in Wide::LoadTwo's order where the type
  // has one (the same order for both operands of a row), else in order.
  template <class D>
  HWY_INLINE void LoadTwo(D d, size_t i, hn::Vec<D> fixed, hn::Vec<D>& first, hn::Vec<D>& second) const {
    if constexpr (!kAlong) {
      first = second = fixed;
    } else if constexpr (requires { Wide::LoadTwo(d, p, first, second); }) {
      Wide::LoadTwo(d, p + i, first, second);
    } else {
      first = Wide::Load(d, p + i);
      second = Wide::Load(d, p + i + hn::Lanes(d));
    }
  }
  HWY_INLINE double Scalar(size_t i) const { return Wide::Scalar(kAlong ? p + i : p); }
  HWY_INLINE void PrefetchAhead(size_t i, size_t count) const {
    if constexpr (kAlong) {
      HWY_NAMESPACE::PrefetchAhead(p + i, count);
    } else {
      (void)i;
      (void)count;
    }
  }
  template <class D>
  HWY_INLINE hn::Vec<D> Fixed(D d) const {
    return kAlong ? hn::Zero(d) : hn::Set(d, Wide::Scalar(p));
  }
};

template <class Wide, Operands kKind>
struct OperandPair {
  using A = Operand<Wide, kKind != Operands::sv>;
  using B = Operand<Wide, kKind != Operands::vs>;
};

// ---- Double-double arithmetic -------------------------------------------------

// Knuth's TwoSum: a + b = s + e exactly.
HWY_INLINE void AddBlock(SquareSums* sums, double block) {
  double s, e;
  TwoSum(sums->hi, block, s, e);
  sums->hi = s;
  sums->lo += e;
  ++sums->additions;
}

// f64 lanes whose magnitude leaves the fast bound's range: below 2^-480
// (squares near underflow lose relative accuracy) or above 2^500 (sums could
// overflow), or not finite. Zero is fine.
template <class D>
HWY_INLINE hn::Mask<D> OutOfRange(D d, hn::Vec<D> v) {
  const auto magnitude = hn::Abs(v);
  const auto tiny = hn::And(hn::Lt(magnitude, hn::Set(d, 0x1p-480)), hn::Ne(v, hn::Zero(d)));
  return hn::Or(hn::Or(hn::Ge(magnitude, hn::Set(d, 0x1p500)), tiny), hn::Ne(v, v));  // NaN: v != v
}

HWY_INLINE bool ScalarOutOfRange(double v) {
  const double magnitude = std::fabs(v);
  return !(magnitude < 0x1p500 && (magnitude >= 0x1p-480 || v == 0));
}

// ---- Rows, single precision: FMA chains in f64 lanes, folded every kChain ----

template <class Wide, Operands kKind>
void SquareRow(const void* a_raw, const void* b_raw, size_t n, SquareSums* sums) {
  using S = typename Wide::Storage;
  using Pair = OperandPair<Wide, kKind>;
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  const typename Pair::A a{static_cast<const S*>(a_raw)};
  const typename Pair::B b{static_cast<const S*>(b_raw)};
  const auto fa = a.Fixed(d);
  const auto fb = b.Fixed(d);
  auto flagged = hn::Zero(d);  // out-of-range lanes, as a nonzero value
  size_t i = 0;
  // Four vectors of accumulators: each lane chains at most kChain FMAs per block.
  const size_t block = 4 * N * kChain;
  while (i + 4 * N <= n) {
    const size_t end = i + std::min(block, (n - i) / (4 * N) * (4 * N));
    auto acc0 = hn::Zero(d), acc1 = hn::Zero(d), acc2 = hn::Zero(d), acc3 = hn::Zero(d);
    for (; i < end; i += 4 * N) {
      a.PrefetchAhead(i, 4 * N);
      b.PrefetchAhead(i, 4 * N);
      hn::Vec<decltype(d)> a0, a1, a2, a3, b0, b1, b2, b3;
      a.LoadTwo(d, i, fa, a0, a1);
      a.LoadTwo(d, i + 2 * N, fa, a2, a3);
      b.LoadTwo(d, i, fb, b0, b1);
      b.LoadTwo(d, i + 2 * N, fb, b2, b3);
      const auto d0 = hn::Sub(a0, b0);
      const auto d1 = hn::Sub(a1, b1);
      const auto d2 = hn::Sub(a2, b2);
      const auto d3 = hn::Sub(a3, b3);
      acc0 = FusedMulAdd(d, d0, d0, acc0);
      acc1 = FusedMulAdd(d, d1, d1, acc1);
      acc2 = FusedMulAdd(d, d2, d2, acc2);
      acc3 = FusedMulAdd(d, d3, d3, acc3);
      if constexpr (Wide::kCheckRange) {
        const auto bad = hn::Or(hn::Or(OutOfRange(d, d0), OutOfRange(d, d1)), hn::Or(OutOfRange(d, d2), OutOfRange(d, d3)));
        flagged = hn::IfThenElse(bad, hn::Set(d, 1.0), flagged);
      }
    }
    const auto sum = hn::Add(hn::Add(acc0, acc1), hn::Add(acc2, acc3));
    AddBlock(sums, hn::GetLane(hn::SumOfLanes(d, sum)));
  }
  // The tail (fewer than 4 vectors): one scalar chain.
  if (i < n) {
    double tail = 0;
    for (; i < n; ++i) {
      const double diff = a.Scalar(i) - b.Scalar(i);
      tail = std::fma(diff, diff, tail);
      if constexpr (Wide::kCheckRange) sums->needs_exact = sums->needs_exact || ScalarOutOfRange(diff);
    }
    AddBlock(sums, tail);
  }
  if constexpr (Wide::kCheckRange) {
    if (!hn::AllFalse(d, hn::Ne(flagged, hn::Zero(d)))) sums->needs_exact = true;
  }
}

// ---- Rows, double precision: exact-product terms in double-double lanes -----

template <class Wide, Operands kKind>
void SquareRowDouble(const void* a_raw, const void* b_raw, size_t n, SquareSums* sums) {
  using S = typename Wide::Storage;
  using Pair = OperandPair<Wide, kKind>;
  using D = hn::ScalableTag<double>;
  const D d;
  const size_t N = hn::Lanes(d);
  const typename Pair::A a{static_cast<const S*>(a_raw)};
  const typename Pair::B b{static_cast<const S*>(b_raw)};
  const auto fa = a.Fixed(d);
  const auto fb = b.Fixed(d);
  auto flagged = hn::Zero(d);
  size_t i = 0;
  const size_t block = 2 * N * kChain;
  HWY_ALIGN double hi_lanes[2 * hn::MaxLanes(d)];
  HWY_ALIGN double lo_lanes[2 * hn::MaxLanes(d)];
  while (i + 2 * N <= n) {
    const size_t end = i + std::min(block, (n - i) / (2 * N) * (2 * N));
    auto h0 = hn::Zero(d), l0 = hn::Zero(d), h1 = hn::Zero(d), l1 = hn::Zero(d);
    for (; i < end; i += 2 * N) {
      hn::Vec<D> p0, t0, s0, p1, t1, s1;
      SquareTerm(d, a.Load(d, i, fa), b.Load(d, i, fb), p0, t0, s0);
      SquareTerm(d, a.Load(d, i + N, fa), b.Load(d, i + N, fb), p1, t1, s1);
      hn::Vec<D> e0, e1;
      TwoSumV<D>(h0, p0, h0, e0);
      TwoSumV<D>(h1, p1, h1, e1);
      l0 = hn::Add(l0, hn::Add(e0, t0));
      l1 = hn::Add(l1, hn::Add(e1, t1));
      if constexpr (Wide::kCheckRange) {
        flagged = hn::IfThenElse(hn::Or(OutOfRange(d, s0), OutOfRange(d, s1)), hn::Set(d, 1.0), flagged);
      }
    }
    hn::Store(h0, d, hi_lanes);
    hn::Store(h1, d, hi_lanes + N);
    hn::Store(l0, d, lo_lanes);
    hn::Store(l1, d, lo_lanes + N);
    for (size_t k = 0; k < 2 * N; ++k) {
      AddBlock(sums, hi_lanes[k]);
      sums->lo += lo_lanes[k];
    }
  }
  if (i < n) {
    double h = 0, l = 0;
    for (; i < n; ++i) {
      double p, t, s, e;
      ScalarSquareTerm(a.Scalar(i), b.Scalar(i), p, t, s);
      TwoSum(h, p, h, e);
      l += e + t;
      if constexpr (Wide::kCheckRange) sums->needs_exact = sums->needs_exact || ScalarOutOfRange(s);
    }
    AddBlock(sums, h);
    sums->lo += l;
  }
  if constexpr (Wide::kCheckRange) {
    if (!hn::AllFalse(d, hn::Ne(flagged, hn::Zero(d)))) sums->needs_exact = true;
  }
}

// ---- Columns ------------------------------------------------------------------

// acc[i] += (a[i] - b[i])^2; with kFold, each new acc[i] is then added to
// (hi[i], lo[i]) by TwoSum and acc[i] set to 0 (ColumnSums::fold's arithmetic,
// in the same pass: a separate pass over the 4096 columns' three arrays every
// kChain rows, scalar, took the f32 [4096,4096] case on 1 thread from 0.75-0.76
// of the read bound to 0.71-0.74, sqdiff_bench).
template <class Wide, Operands kKind, bool kFold>
HWY_INLINE void SquareColumnsPass(const void* a_raw, const void* b_raw, size_t n, double* acc, double* hi,
                                  double* lo, bool* needs_exact) {
  using S = typename Wide::Storage;
  using Pair = OperandPair<Wide, kKind>;
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  const typename Pair::A a{static_cast<const S*>(a_raw)};
  const typename Pair::B b{static_cast<const S*>(b_raw)};
  const auto fa = a.Fixed(d);
  const auto fb = b.Fixed(d);
  auto flagged = hn::Zero(d);
  const auto update = [&](size_t i, hn::Vec<decltype(d)> diff) HWY_ATTR {
    const auto sum = FusedMulAdd(d, diff, diff, hn::LoadU(d, acc + i));
    if constexpr (kFold) {
      hn::Vec<decltype(d)> h, e;
      TwoSumV<decltype(d)>(hn::LoadU(d, hi + i), sum, h, e);
      hn::StoreU(h, d, hi + i);
      hn::StoreU(hn::Add(hn::LoadU(d, lo + i), e), d, lo + i);
      hn::StoreU(hn::Zero(d), d, acc + i);
    } else {
      hn::StoreU(sum, d, acc + i);
    }
  };
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    a.PrefetchAhead(i, 2 * N);
    b.PrefetchAhead(i, 2 * N);
    const auto d0 = hn::Sub(a.Load(d, i, fa), b.Load(d, i, fb));
    const auto d1 = hn::Sub(a.Load(d, i + N, fa), b.Load(d, i + N, fb));
    update(i, d0);
    update(i + N, d1);
    if constexpr (Wide::kCheckRange) {
      flagged = hn::IfThenElse(hn::Or(OutOfRange(d, d0), OutOfRange(d, d1)), hn::Set(d, 1.0), flagged);
    }
  }
  for (; i + N <= n; i += N) {
    const auto diff = hn::Sub(a.Load(d, i, fa), b.Load(d, i, fb));
    update(i, diff);
    if constexpr (Wide::kCheckRange) flagged = hn::IfThenElse(OutOfRange(d, diff), hn::Set(d, 1.0), flagged);
  }
  for (; i < n; ++i) {
    const double diff = a.Scalar(i) - b.Scalar(i);
    const double sum = std::fma(diff, diff, acc[i]);
    if constexpr (kFold) {
      double e;
      TwoSum(hi[i], sum, hi[i], e);
      lo[i] += e;
      acc[i] = 0;
    } else {
      acc[i] = sum;
    }
    if constexpr (Wide::kCheckRange) *needs_exact = *needs_exact || ScalarOutOfRange(diff);
  }
  if constexpr (Wide::kCheckRange) {
    if (!hn::AllFalse(d, hn::Ne(flagged, hn::Zero(d)))) *needs_exact = true;
  }
}

template <class Wide, Operands kKind>
void SquareColumns(const void* a_raw, const void* b_raw, size_t n, double* acc, bool* needs_exact) {
  SquareColumnsPass<Wide, kKind, false>(a_raw, b_raw, n, acc, nullptr, nullptr, needs_exact);
}

template <class Wide, Operands kKind>
void SquareColumnsFold(const void* a_raw, const void* b_raw, size_t n, double* acc, double* hi, double* lo,
                       bool* needs_exact) {
  SquareColumnsPass<Wide, kKind, true>(a_raw, b_raw, n, acc, hi, lo, needs_exact);
}

template <class Wide, Operands kKind>
void SquareColumnsDouble(const void* a_raw, const void* b_raw, size_t n, double* hi, double* lo, bool* needs_exact) {
  using S = typename Wide::Storage;
  using Pair = OperandPair<Wide, kKind>;
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  const typename Pair::A a{static_cast<const S*>(a_raw)};
  const typename Pair::B b{static_cast<const S*>(b_raw)};
  const auto fa = a.Fixed(d);
  const auto fb = b.Fixed(d);
  auto flagged = hn::Zero(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::Vec<decltype(d)> p, t, s, h, e;
    SquareTerm(d, a.Load(d, i, fa), b.Load(d, i, fb), p, t, s);
    TwoSumV<decltype(d)>(hn::LoadU(d, hi + i), p, h, e);
    hn::StoreU(h, d, hi + i);
    hn::StoreU(hn::Add(hn::LoadU(d, lo + i), hn::Add(e, t)), d, lo + i);
    if constexpr (Wide::kCheckRange) flagged = hn::IfThenElse(OutOfRange(d, s), hn::Set(d, 1.0), flagged);
  }
  for (; i < n; ++i) {
    double p, t, s, e;
    ScalarSquareTerm(a.Scalar(i), b.Scalar(i), p, t, s);
    TwoSum(hi[i], p, hi[i], e);
    lo[i] += e + t;
    if constexpr (Wide::kCheckRange) *needs_exact = *needs_exact || ScalarOutOfRange(s);
  }
  if constexpr (Wide::kCheckRange) {
    if (!hn::AllFalse(d, hn::Ne(flagged, hn::Zero(d)))) *needs_exact = true;
  }
}

// ---- Pairwise: a block of rows of x against a block of rows of y ------------

// kM rows of x against kN rows of y, held in kM * kN accumulators: each
// loaded vector serves kN (or kM) pairs, as in a GEMM micro-kernel. The
// difference is computed directly (never |x|^2 + |y|^2 - 2xy, which cancels).
template <class Wide, size_t kM, size_t kN>
HWY_INLINE void PairwiseTile(const typename Wide::Storage* x, int64_t xs, const typename Wide::Storage* y, int64_t ys,
                             size_t k_count, double* sums, size_t n_count) {
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  hn::Vec<decltype(d)> acc[kM][kN];
  for (size_t m = 0; m < kM; ++m) {
    for (size_t n = 0; n < kN; ++n) acc[m][n] = hn::Zero(d);
  }
  size_t k = 0;
  for (; k + N <= k_count; k += N) {
    hn::Vec<decltype(d)> xv[kM];
    for (size_t m = 0; m < kM; ++m) xv[m] = Wide::Load(d, x + static_cast<int64_t>(m) * xs + static_cast<int64_t>(k));
    for (size_t n = 0; n < kN; ++n) {
      const auto yv = Wide::Load(d, y + static_cast<int64_t>(n) * ys + static_cast<int64_t>(k));
      for (size_t m = 0; m < kM; ++m) {
        const auto diff = hn::Sub(xv[m], yv);
        acc[m][n] = FusedMulAdd(d, diff, diff, acc[m][n]);
      }
    }
  }
  for (size_t m = 0; m < kM; ++m) {
    for (size_t n = 0; n < kN; ++n) {
      double sum = hn::GetLane(hn::SumOfLanes(d, acc[m][n]));
      // The tail of k: one more scalar chain per pair (at most N - 1 terms).
      double tail = 0;
      for (size_t t = k; t < k_count; ++t) {
        const double diff = Wide::Scalar(x + static_cast<int64_t>(m) * xs + static_cast<int64_t>(t)) -
                            Wide::Scalar(y + static_cast<int64_t>(n) * ys + static_cast<int64_t>(t));
        tail = std::fma(diff, diff, tail);
      }
      sums[m * n_count + n] = sum + tail;
    }
  }
}

// The register block: 4 x 4 pairs with 32 vector registers (AVX-512), 2 x 4
// with 16.
#if HWY_TARGET <= HWY_AVX3
constexpr size_t kPairRows = 4;
#else
constexpr size_t kPairRows = 2;
#endif
constexpr size_t kPairCols = 4;

template <class Wide, size_t kM>
HWY_INLINE void PairwiseRows(const typename Wide::Storage* x, int64_t xs, const typename Wide::Storage* y, int64_t ys,
                             size_t n_count, size_t k_count, double* sums) {
  size_t n = 0;
  for (; n + kPairCols <= n_count; n += kPairCols) {
    PairwiseTile<Wide, kM, kPairCols>(x, xs, y + static_cast<int64_t>(n) * ys, ys, k_count, sums + n, n_count);
  }
  for (; n < n_count; ++n) {
    PairwiseTile<Wide, kM, 1>(x, xs, y + static_cast<int64_t>(n) * ys, ys, k_count, sums + n, n_count);
  }
}

template <class Wide>
void Pairwise(const void* x_raw, int64_t xs, size_t m_count, const void* y_raw, int64_t ys, size_t n_count,
              size_t k_count, double* sums) {
  using S = typename Wide::Storage;
  const S* x = static_cast<const S*>(x_raw);
  const S* y = static_cast<const S*>(y_raw);
  size_t m = 0;
  for (; m + kPairRows <= m_count; m += kPairRows) {
    PairwiseRows<Wide, kPairRows>(x + static_cast<int64_t>(m) * xs, xs, y, ys, n_count, k_count, sums + m * n_count);
  }
  for (; m < m_count; ++m) {
    PairwiseRows<Wide, 1>(x + static_cast<int64_t>(m) * xs, xs, y, ys, n_count, k_count, sums + m * n_count);
  }
}

// ---- Pairwise, one output per lane: few terms, or double-double sums --------

// kM rows of x (widened to f64, row stride xs) against kV vectors of one
// panel of y (reduce_table.hpp's layout): each x element is broadcast and
// serves kV * N outputs, each y vector kM. No horizontal sums and no tails: a
// lane is one output. x comes widened from memory by one broadcast load per
// row and k, where widening it from f32 in the loop took a conversion and a
// shuffle beside the 2 kV subtractions and FMAs (y - x, not x - y: the same
// square).
template <size_t kM, size_t kV>
HWY_INLINE void LanesTile(const double* x, size_t xs, const double* panel, size_t width, size_t k_count,
                          double* sums, size_t n_stride) {
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  hn::Vec<decltype(d)> acc[kM][kV];
  for (size_t m = 0; m < kM; ++m) {
    for (size_t v = 0; v < kV; ++v) acc[m][v] = hn::Zero(d);
  }
  for (size_t k = 0; k < k_count; ++k) {
    hn::Vec<decltype(d)> yv[kV];
    for (size_t v = 0; v < kV; ++v) yv[v] = hn::LoadU(d, panel + k * width + v * N);
    for (size_t m = 0; m < kM; ++m) {
      for (size_t v = 0; v < kV; ++v) {
        const auto diff = hn::Sub(yv[v], hn::Set(d, x[m * xs + k]));
        acc[m][v] = FusedMulAdd(d, diff, diff, acc[m][v]);
      }
    }
  }
  for (size_t m = 0; m < kM; ++m) {
    for (size_t v = 0; v < kV; ++v) hn::StoreU(acc[m][v], d, sums + m * n_stride + v * N);
  }
}

// The double-double tile: per lane h + l, each term's square exact to 2^-102
// (SquareTerm) and added to h by TwoSum, its error and the square's low part
// to l, as SquareRowDouble does in each of its lanes.
template <class Wide, size_t kM, size_t kV>
HWY_INLINE void LanesTileDouble(const typename Wide::Storage* x, int64_t xs, const double* panel, size_t width,
                                size_t k_count, double* hi, double* lo, size_t n_stride) {
  using D = hn::ScalableTag<double>;
  const D d;
  const size_t N = hn::Lanes(d);
  hn::Vec<D> h[kM][kV], l[kM][kV];
  for (size_t m = 0; m < kM; ++m) {
    for (size_t v = 0; v < kV; ++v) h[m][v] = l[m][v] = hn::Zero(d);
  }
  for (size_t k = 0; k < k_count; ++k) {
    hn::Vec<D> yv[kV];
    for (size_t v = 0; v < kV; ++v) yv[v] = hn::LoadU(d, panel + k * width + v * N);
    for (size_t m = 0; m < kM; ++m) {
      const auto xv = hn::Set(d, Wide::Scalar(x + static_cast<int64_t>(m) * xs + static_cast<int64_t>(k)));
      for (size_t v = 0; v < kV; ++v) {
        hn::Vec<D> p, t, s, e;
        SquareTerm(d, xv, yv[v], p, t, s);
        // Fast2Sum on the larger and the smaller of h and p (both >= 0):
        // the same s and the same exact error as TwoSum, one instruction fewer.
        const auto sum = hn::Add(h[m][v], p);
        e = hn::Sub(hn::Min(h[m][v], p), hn::Sub(sum, hn::Max(h[m][v], p)));
        h[m][v] = sum;
        l[m][v] = hn::Add(l[m][v], hn::Add(e, t));
      }
    }
  }
  for (size_t m = 0; m < kM; ++m) {
    for (size_t v = 0; v < kV; ++v) {
      hn::StoreU(h[m][v], d, hi + m * n_stride + v * N);
      hn::StoreU(l[m][v], d, lo + m * n_stride + v * N);
    }
  }
}

// The register blocks: kPairRows rows (4 with 32 vector registers, 2 with
// 16) by a whole panel of kPanelVectors vectors for the FMA chains; half a
// panel for the double-double ones, which hold two registers per vector of
// outputs.
template <class Wide>
void PairwiseLanes(const void* x_raw, int64_t xs, size_t m_count, const double* panels, size_t panel_count,
                   size_t k_count, double* sums) {
  using S = typename Wide::Storage;
  const S* x = static_cast<const S*>(x_raw);
  const size_t width = kPanelVectors * hn::Lanes(hn::ScalableTag<double>());
  const size_t n_stride = panel_count * width;
  // x's rows widened once (exact), read by every panel.
  std::vector<double> wide_x(m_count * k_count);
  for (size_t m = 0; m < m_count; ++m) {
    for (size_t k = 0; k < k_count; ++k) {
      wide_x[m * k_count + k] = Wide::Scalar(x + static_cast<int64_t>(m) * xs + static_cast<int64_t>(k));
    }
  }
  for (size_t p = 0; p < panel_count; ++p) {
    const double* panel = panels + p * k_count * width;
    size_t m = 0;
    for (; m + kPairRows <= m_count; m += kPairRows) {
      LanesTile<kPairRows, kPanelVectors>(wide_x.data() + m * k_count, k_count, panel, width, k_count,
                                          sums + m * n_stride + p * width, n_stride);
    }
    for (; m < m_count; ++m) {
      LanesTile<1, kPanelVectors>(wide_x.data() + m * k_count, k_count, panel, width, k_count,
                                  sums + m * n_stride + p * width, n_stride);
    }
  }
}

template <class Wide>
void PairwiseLanesDouble(const void* x_raw, int64_t xs, size_t m_count, const double* panels, size_t panel_count,
                         size_t k_count, double* hi, double* lo) {
  using S = typename Wide::Storage;
  const S* x = static_cast<const S*>(x_raw);
  const size_t N = hn::Lanes(hn::ScalableTag<double>());
  const size_t width = kPanelVectors * N;
  const size_t n_stride = panel_count * width;
  constexpr size_t kHalf = kPanelVectors / 2;
  for (size_t p = 0; p < panel_count; ++p) {
    for (size_t half = 0; half < 2; ++half) {
      const double* panel = panels + p * k_count * width + half * kHalf * N;
      const size_t column = p * width + half * kHalf * N;
      size_t m = 0;
      for (; m + kPairRows <= m_count; m += kPairRows) {
        LanesTileDouble<Wide, kPairRows, kHalf>(x + static_cast<int64_t>(m) * xs, xs, panel, width, k_count,
                                                hi + m * n_stride + column, lo + m * n_stride + column, n_stride);
      }
      for (; m < m_count; ++m) {
        LanesTileDouble<Wide, 1, kHalf>(x + static_cast<int64_t>(m) * xs, xs, panel, width, k_count,
                                        hi + m * n_stride + column, lo + m * n_stride + column, n_stride);
      }
    }
  }
}

// ---- Pairwise f64 outputs by the expansion |x|^2 + |y|^2 - 2 x.y -----------
//
// The double-double lanes above spend 17 instructions on each exact term. For
// f64 outputs of [M,1,K] with [1,N,K] (f64 inputs within the range checked by
// fast_squares.cpp's lanes_double_take, or any narrower input), each output
//   d = sum_k (x_k - y_k)^2 = Sx + Sy - 2 x.y,   Sx = sum_k x_k^2, Sy = sum_k y_k^2,
// is computed here like a GEMM, with a rigorous absolute bound E on its error;
// the outputs E decides are rounded here, the others are left (as NaN) for
// the caller, which sums them again in double-double (SquareRowDouble, the
// rows' kernel, along K) and rounds them through Reduction::finish. Every output is correctly rounded
// either way, so the results are today's bits.
//
// Per row (ExpansionPack, once per row and call), u = 2^-53:
// - The split. With 2^e above the row's largest |v_k| (frexp) and
//   beta = floor((53 - ceil(log2 K)) / 2), so that K 2^(2 beta) <= 2^53,
//   g = 2^(e - beta), v1_k = g * nearest integer to v_k / g (the magic
//   constant 1.5 2^52 rounds |v_k / g| < 2^beta <= 2^26 to an integer, ties to
//   even; v_k / g and the product by g are exact scalings by powers of two),
//   and r_k = v_k - v1_k, exact (|r_k| <= g/2; r_k = v_k when |v_k| <= g/2,
//   else v1_k and v_k are multiples of ulp(v_k) within a factor 2).
//   v1_k = i_k g with |i_k| <= 2^beta.
// - Sv as a double-double (sh, sl): each square p + q exactly (FMA), p added
//   to sh by TwoSum, its error and q to sl. The exact Sv is sh plus the exact
//   sum of those errors and q's; sl's 2K roundings (each term at most 2u Sv,
//   sl's partial sums at most 2iu Sv) leave |Sv - (sh + sl)| <= u^2 K (K + 3)
//   Sv (1 + 2^-30) <= ev = (K + 2)^2 2^-106 (sh + |sl|) (1 + 2^-40).
// - Upper bounds of the norms: nr >= ||r|| (sum of r_k^2 by FMA, within
//   gamma_K = Ku/(1 - Ku) of exact: times 1 + (K + 4) 2^-50, square root,
//   times 1 + 2^-40 for the roundings), n >= ||v|| (from sh + |sl|) and
//   n1 >= ||v1|| (n + nr, triangle inequality).
// - R = (ev + 2^-50 |sl|) (1 + 2^-40) + 2^-1001: the row's share of E.
// Inputs: f64 elements zero or within [2^-428, 2^498) (checked by the
// caller), or f16/bf16/f32 (finite ones always are; a row with a value that
// is not finite gets R = NaN, so all its outputs are left undecided). Then
// g >= 2^-453, every product of two elements, of an element and an r_k and of
// two r_k is zero or at least 2^-960 (r_k is a multiple of ulp(v_k) >= 2^-480),
// so nothing below underflows (every partial sum is a multiple of 2^-960:
// zero or normal), and nothing overflows (|v_k| < 2^498, K <= 2^16).
//
// Per output (ExpansionTile), x.y = A + B + C exactly, with
//   A = sum x1_k y1_k   (K FMAs: each partial sum is an integer of magnitude
//                        at most K 2^(2 beta) <= 2^53 times g_x g_y >= 2^-906,
//                        a double: A is EXACT, in any order),
//   B = sum x1_k ry_k,  C = sum rx_k y_k  (x.y - A = sum x1 ry + rx (y1 + ry)),
// B + C accumulated by FMA into one lane T (2K roundings): |T - (B + C)| <=
// gamma_2K sum_k (|x1_k ry_k| + |rx_k y_k|) <= 2Ku (1 + 2^-30) (||x1|| ||ry||
// + ||rx|| ||y||) (Cauchy-Schwarz), so 2 |T - (B + C)| <= P n_y.r + Q n_y with
// P = c n1_x, Q = c nr_x, c = 4Ku (1 + 2^-30) = K 2^-51 (1 + 2^-30).
// Then, exactly: s + e1 = sh_x + sh_y (TwoSum), h + e2 = s - 2A (TwoSum, 2A
// exact), so d = h + (sl_x + sl_y + e1 + e2 - 2T) + (Sx - sh_x - sl_x) +
// (Sy - sh_y - sl_y) - 2 (T - B - C); l = ((sl_x + sl_y) + (e1 + e2)) - 2T,
// four roundings, at most 4u (1 + u)^2 (|sl_x| + |sl_y| + |e1| + |e2| + 2|T|)
// <= 2^-50 (...). Hence |d - (h + l)| <= E with
//   E = R_x + R_y + (P nr_y + Q n_y) + 2^-50 (|e1| + |e2| + |2T|),
// E's own roundings (a few u, all terms non-negative) are covered by the
// 2^-40 slack below. The decision is round_double_lanes_to_f64's, with E
// absolute: e = 2 max(E, u |l|) (1 + 2^-40), low = h + (l - e), high = h +
// (l + e). l - e rounds to at most l - E - ... (e (1 - u) >= E + u |l|, and
// the subtraction is exact if its result is subnormal; 2^-1001 in R keeps
// u |l| from mattering where it could underflow), likewise l + e, and round
// to nearest is monotone: low <= round(d) <= high. low == high decides;
// also required: 2^-900 <= |h| < 2^1000 and |l| < |h|. Near-duplicate rows
// (d << Sx + Sy, where the expansion cancels) and d = 0 are left undecided.
// Cost: 3 FMAs per term (A, T twice), against 17 instructions of the
// double-double lanes.

// Per row of `row_count` rows of k_count (row_stride elements apart): the
// split v1, r and the value v itself (when parts is 3) at split[row_base(i) +
// k * k_stride + part * part_stride] with row_base(i) = i / group *
// group_stride + i % group (the panels' layout for y, rows one after the other
// for x), and sh, sl, R, n1, nr, n at consts[i * consts_row + j *
// consts_part] for j = 0..5.
template <class Wide>
void ExpansionPack(const void* rows_raw, int64_t row_stride, size_t row_count, size_t k_count, double* split,
                   size_t parts, size_t group, size_t group_stride, size_t k_stride, size_t part_stride,
                   double* consts, size_t consts_row, size_t consts_part) {
  using S = typename Wide::Storage;
  const S* rows = static_cast<const S*>(rows_raw);
  int log2_k = 0;
  while ((size_t{1} << log2_k) < k_count) ++log2_k;
  const int beta = (53 - log2_k) / 2;
  const auto kk = static_cast<double>(k_count);
  constexpr double kMagic = 0x1.8p52;
  for (size_t i = 0; i < row_count; ++i) {
    const S* v = rows + static_cast<int64_t>(i) * row_stride;
    double* out = split + i / group * group_stride + i % group;
    double largest = 0;
    bool finite = true;
    for (size_t k = 0; k < k_count; ++k) {
      const double a = std::fabs(Wide::Scalar(v + k));
      finite = finite && a <= 0x1.fffffffffffffp1023;  // false for inf and NaN
      largest = std::max(largest, a);
    }
    double g = 1;
    double inverse = 1;
    if (finite && largest > 0) {
      int e = 0;
      (void)std::frexp(largest, &e);
      g = std::ldexp(1.0, e - beta);
      inverse = std::ldexp(1.0, beta - e);
    }
    double sh = 0, sl = 0, sr = 0;
    for (size_t k = 0; k < k_count; ++k) {
      const double x = Wide::Scalar(v + k);
      // A row with a value that is not finite: v1 = v, r = 0 (its R is NaN,
      // so each of its outputs is undecided).
      const double x1 = finite ? ((x * inverse + kMagic) - kMagic) * g : x;
      const double rx = finite ? x - x1 : 0.0;
      double* at = out + k * k_stride;
      at[0] = x1;
      at[part_stride] = rx;
      if (parts == 3) at[2 * part_stride] = x;
      const double p = x * x;
      const double q = std::fma(x, x, -p);
      double e;
      TwoSum(sh, p, sh, e);
      sl += e + q;
      sr = std::fma(rx, rx, sr);
    }
    const double slack = 1 + 0x1p-40;
    const double size = sh + std::fabs(sl);
    const double ev = (kk + 2) * (kk + 2) * 0x1p-106 * size * slack;
    const double nr = std::sqrt(sr * (1 + (kk + 4) * 0x1p-50)) * slack;
    const double n = std::sqrt(size * slack) * slack;
    double* c = consts + i * consts_row;
    c[0] = sh;
    c[consts_part] = sl;
    c[2 * consts_part] = finite ? (ev + 0x1p-50 * std::fabs(sl)) * slack + 0x1p-1001 : std::nan("");
    c[3 * consts_part] = (n + nr) * slack;
    c[4 * consts_part] = nr;
    c[5 * consts_part] = n;
  }
}

// kM rows of x (split: x1, rx pairs, 2 k_count doubles a row; consts 8
// doubles a row) against kV vectors of a panel of y (panel: k_count groups of
// y1, ry, y, each `width` doubles; y_consts: 6 arrays n_stride apart, at the
// panel's column). out: the rounded output, or NaN where E does not decide.
template <size_t kM, size_t kV>
HWY_INLINE void ExpansionTile(const double* x_split, const double* x_consts, const double* panel, size_t width,
                              const double* y_consts, size_t n_stride, size_t k_count, double* out,
                              uint32_t* undecided) {
  using D = hn::ScalableTag<double>;
  const D d;
  const size_t N = hn::Lanes(d);
  hn::Vec<D> a[kM][kV], t[kM][kV];
  for (size_t m = 0; m < kM; ++m) {
    for (size_t v = 0; v < kV; ++v) a[m][v] = t[m][v] = hn::Zero(d);
  }
  for (size_t k = 0; k < k_count; ++k) {
    const double* at = panel + k * 3 * width;
    hn::Vec<D> y1[kV], ry[kV], yv[kV];
    for (size_t v = 0; v < kV; ++v) {
      y1[v] = hn::LoadU(d, at + v * N);
      ry[v] = hn::LoadU(d, at + width + v * N);
      yv[v] = hn::LoadU(d, at + 2 * width + v * N);
    }
    for (size_t m = 0; m < kM; ++m) {
      const auto x1 = hn::Set(d, x_split[(m * k_count + k) * 2]);
      const auto rx = hn::Set(d, x_split[(m * k_count + k) * 2 + 1]);
      for (size_t v = 0; v < kV; ++v) {
        a[m][v] = FusedMulAdd(d, x1, y1[v], a[m][v]);
        t[m][v] = FusedMulAdd(d, x1, ry[v], t[m][v]);
        t[m][v] = FusedMulAdd(d, rx, yv[v], t[m][v]);
      }
    }
  }
  const auto c = static_cast<double>(k_count) * 0x1p-51 * (1 + 0x1p-30);
  const auto unit = hn::Set(d, 0x1p-53);
  const auto fifty = hn::Set(d, 0x1p-50);
  const auto two = hn::Set(d, 2.0);
  const auto slack = hn::Set(d, 1 + 0x1p-40);
  const auto smallest = hn::Set(d, 0x1p-900);
  const auto largest = hn::Set(d, 0x1p1000);
  const auto nan = hn::Set(d, std::nan(""));
  for (size_t m = 0; m < kM; ++m) {
    const double* xc = x_consts + m * 8;
    const auto sxh = hn::Set(d, xc[0]);
    const auto sxl = hn::Set(d, xc[1]);
    const auto share_x = hn::Set(d, xc[2]);
    const auto p = hn::Set(d, c * xc[3]);
    const auto q = hn::Set(d, c * xc[4]);
    for (size_t v = 0; v < kV; ++v) {
      const double* yc = y_consts + v * N;
      const auto syh = hn::LoadU(d, yc);
      const auto syl = hn::LoadU(d, yc + n_stride);
      const auto share_y = hn::LoadU(d, yc + 2 * n_stride);
      const auto nry = hn::LoadU(d, yc + 4 * n_stride);
      const auto ny = hn::LoadU(d, yc + 5 * n_stride);
      hn::Vec<D> s, e1, h, e2;
      TwoSumV<D>(sxh, syh, s, e1);
      TwoDiffV<D>(s, hn::Add(a[m][v], a[m][v]), h, e2);
      const auto t2 = hn::Add(t[m][v], t[m][v]);
      const auto l = hn::Sub(hn::Add(hn::Add(sxl, syl), hn::Add(e1, e2)), t2);
      const auto rounding = hn::Mul(fifty, hn::Add(hn::Add(hn::Abs(e1), hn::Abs(e2)), hn::Abs(t2)));
      const auto error = hn::Add(hn::Add(hn::Add(share_x, share_y), hn::Add(hn::Mul(p, nry), hn::Mul(q, ny))), rounding);
      const auto small = hn::Abs(l);
      const auto e = hn::Mul(hn::Mul(two, hn::Max(error, hn::Mul(unit, small))), slack);
      const auto low = hn::Add(h, hn::Sub(l, e));
      const auto high = hn::Add(h, hn::Add(l, e));
      const auto magnitude = hn::Abs(h);
      // Comparisons with NaN are false: a NaN anywhere leaves the output undecided.
      const auto decided = hn::And(hn::And(hn::Ge(magnitude, smallest), hn::Lt(magnitude, largest)),
                                   hn::And(hn::Lt(small, magnitude), hn::Eq(low, high)));
      hn::StoreU(hn::IfThenElse(decided, low, nan), d, out + m * n_stride + v * N);
      undecided[m] += static_cast<uint32_t>(hn::CountTrue(d, hn::Not(decided)));
    }
  }
}

// Rows of x (packed by ExpansionPack: x_split 2 k_count doubles a row,
// x_consts 8 a row) against every panel of y (3 k_count width doubles each,
// y_consts 6 arrays of panel_count * width): out[m * n_stride + n], n_stride =
// panel_count * width, the rounded output or NaN (undecided).
// The register block: kExpansionRows rows of x (4 with 32 vector registers,
// 2 with 16) by kExpansionVectors (2) vectors of y's outputs, two
// accumulators each (A, T), and per k six loads of y (y1, ry, y) and two
// broadcasts of x (x1, rx) a row. Each group of y's vectors is K runs of
// those six vectors, read front to back by each block of rows (from L2: a
// group is 96 KiB at K = 256). 6 rows by 2 vectors (36 FMAs a k against 24)
// measured the same (f64 [1024,256] x [1024,256], 1 thread, 0.166-0.172 of
// the FMA peak against 0.164-0.171, sqdiff_bench, alternating runs).
#if HWY_TARGET <= HWY_AVX3
constexpr size_t kExpansionRows = 4;
#else
constexpr size_t kExpansionRows = 2;
#endif

void PairwiseExpansion(const double* x_split, const double* x_consts, size_t m_count, const double* y_panels,
                       const double* y_consts, size_t panel_count, size_t k_count, double* out,
                       uint32_t* undecided) {
  const size_t N = hn::Lanes(hn::ScalableTag<double>());
  const size_t width = kPanelVectors * N;
  const size_t n_stride = panel_count * width;
  const size_t group = kExpansionVectors * N;
  for (size_t m = 0; m < m_count; ++m) undecided[m] = 0;
  for (size_t g = 0; g < n_stride / group; ++g) {
    const double* panel = y_panels + g * k_count * 3 * group;
    const size_t column = g * group;
    size_t m = 0;
    for (; m + kExpansionRows <= m_count; m += kExpansionRows) {
      ExpansionTile<kExpansionRows, kExpansionVectors>(x_split + m * 2 * k_count, x_consts + m * 8, panel, group,
                                                       y_consts + column, n_stride, k_count,
                                                       out + m * n_stride + column, undecided + m);
    }
    for (; m < m_count; ++m) {
      ExpansionTile<1, kExpansionVectors>(x_split + m * 2 * k_count, x_consts + m * 8, panel, group,
                                          y_consts + column, n_stride, k_count, out + m * n_stride + column,
                                          undecided + m);
    }
  }
}

// ---- The table ----------------------------------------------------------------

template <class Wide>
constexpr SquareKernels MakeSquareKernels() {
  SquareKernels k{};
  k.row[0] = &SquareRow<Wide, Operands::vv>;
  k.row[1] = &SquareRow<Wide, Operands::vs>;
  k.row[2] = &SquareRow<Wide, Operands::sv>;
  k.row_double[0] = &SquareRowDouble<Wide, Operands::vv>;
  k.row_double[1] = &SquareRowDouble<Wide, Operands::vs>;
  k.row_double[2] = &SquareRowDouble<Wide, Operands::sv>;
  k.column[0] = &SquareColumns<Wide, Operands::vv>;
  k.column[1] = &SquareColumns<Wide, Operands::vs>;
  k.column[2] = &SquareColumns<Wide, Operands::sv>;
  k.column_fold[0] = &SquareColumnsFold<Wide, Operands::vv>;
  k.column_fold[1] = &SquareColumnsFold<Wide, Operands::vs>;
  k.column_fold[2] = &SquareColumnsFold<Wide, Operands::sv>;
  k.column_double[0] = &SquareColumnsDouble<Wide, Operands::vv>;
  k.column_double[1] = &SquareColumnsDouble<Wide, Operands::vs>;
  k.column_double[2] = &SquareColumnsDouble<Wide, Operands::sv>;
  k.pairwise = &Pairwise<Wide>;
  k.pairwise_lanes = &PairwiseLanes<Wide>;
  k.pairwise_lanes_double = &PairwiseLanesDouble<Wide>;
  k.expansion_pack = &ExpansionPack<Wide>;
  k.lanes = hn::MaxLanes(hn::ScalableTag<double>());
  return k;
}

constexpr ReduceKernelTable MakeReduceKernelTable() {
  ReduceKernelTable table{};
  table.target = HWY_TARGET;
  table.squares[0] = MakeSquareKernels<WideF16>();
  table.squares[1] = MakeSquareKernels<WideBF16>();
  table.squares[2] = MakeSquareKernels<WideF32>();
  table.squares[3] = MakeSquareKernels<WideF64>();
  table.round_to_f32 = &RoundSumsToF32;
  table.round_to_f64 = &RoundSumsToF64;
  table.pairwise_expansion = &PairwiseExpansion;
  return table;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_REDUCE_INL_H_
