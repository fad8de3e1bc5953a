// Compiles fused_f32_blocks (fused_compare.hpp) once per SIMD target; the best
// target the CPU supports runs (tests force each one).
#include "kernels/fused_compare.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/fused_compare.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "hwy/highway.h"
#include "kernels/exact_terms-inl.h"
#include "kernels/prefetch_ahead-inl.h"
#include "kernels/widen_f64-inl.h"
#include "runtime/fp_environment.hpp"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One lane's (or the tail's) double-double into the row's sums, as
// SquareRowDouble's AddBlock does: the bound counts these additions.
HWY_INLINE void FusedFold(SquareSums* sums, double hi, double lo) {
  const double s = sums->hi + hi;
  const double bv = s - sums->hi;
  sums->lo += (sums->hi - (s - bv)) + (hi - bv);
  sums->hi = s;
  sums->lo += lo;
  ++sums->additions;
}

// The double-double lanes and the statistics' accumulators of one block.
template <class D>
struct FusedLanes {
  hn::Vec<D> h0, l0, h1, l1;      // the sum of squares, two vectors of lanes
  hn::Vec<D> out, max_abs, worst;  // `out` counts as f64 (exact: at most a block per lane)
  int64_t differing;               // counted from masks, off the vector units the rest keeps busy
};

// The pairs p, q (widened): the square of p - q as SquareRowDouble's
// SquareTerm makes it (a - b = s + e; s^2 = pp + qq by FMA; t = qq + 2se
// rounded), added to the lanes h, l as SquareRowDouble adds it; and the
// statistics from s, the f64 difference the statistics loop computes too.
template <bool kTolerance, class D>
HWY_INLINE void FusedPairs(D d, hn::Vec<D> p, hn::Vec<D> q, hn::Vec<D> vatol, hn::Vec<D> vrtol, hn::Vec<D>& h,
                           hn::Vec<D>& l, FusedLanes<D>& acc) {
  hn::Vec<D> pp, t, s;
  SquareTerm(d, p, q, pp, t, s);
  hn::Vec<D> e2;
  TwoSumV<D>(h, pp, h, e2);
  l = hn::Add(l, hn::Add(e2, t));
  const auto zero = hn::Zero(d);
  const auto one = hn::Set(d, 1.0);
  const auto magnitude = hn::Abs(s);
  // For finite inputs s is 0 exactly when p == q (subnormals are kept).
  acc.differing += static_cast<int64_t>(hn::CountTrue(d, hn::Ne(s, zero)));
  acc.max_abs = hn::Max(acc.max_abs, magnitude);
  if constexpr (kTolerance) {
    // NumPy's atol + rtol * |b| in two roundings; never NaN for finite b.
    const auto out = hn::Gt(magnitude, hn::Add(vatol, hn::Mul(vrtol, hn::Abs(q))));
    acc.out = hn::Add(acc.out, hn::IfThenElseZero(out, one));
    acc.worst = hn::Max(acc.worst, hn::IfThenElseZero(out, magnitude));
  }
}

template <bool kTolerance>
int64_t FusedBlocks(const float* a, const float* b, int64_t n, int64_t block, double atol, double rtol,
                    SquareSums* sums, FiniteBlockStats* stats) {
  using D = hn::ScalableTag<double>;
  const D d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d);
  const auto vatol = hn::Set(d, atol);
  const auto vrtol = hn::Set(d, rtol);
  const auto infinity = hn::Set(d, std::numeric_limits<double>::infinity());
  FusedLanes<D> acc{zero, zero, zero, zero, zero, zero, zero, 0};
  int64_t chain = 0;  // terms per lane since the last fold
  HWY_ALIGN double hi_lanes[2 * hn::MaxLanes(d)];
  HWY_ALIGN double lo_lanes[2 * hn::MaxLanes(d)];
  const auto fold = [&] {
    hn::Store(acc.h0, d, hi_lanes);
    hn::Store(acc.h1, d, hi_lanes + N);
    hn::Store(acc.l0, d, lo_lanes);
    hn::Store(acc.l1, d, lo_lanes + N);
    for (int64_t k = 0; k < 2 * N; ++k) FusedFold(sums, hi_lanes[k], lo_lanes[k]);
    acc.h0 = acc.l0 = acc.h1 = acc.l1 = zero;
    chain = 0;
  };
  const int64_t step = 2 * N;
  int64_t taken = 0;
  for (int64_t start = 0; start < n; start += block, ++taken) {
    const int64_t m = std::min(block, n - start);
    const float* pa = a + start;
    const float* pb = b + start;
    acc.out = acc.max_abs = acc.worst = zero;
    acc.differing = 0;
    int64_t i = 0;
    while (i + step <= m) {
      const int64_t steps = std::min((m - i) / step, static_cast<int64_t>(kChain) - chain);
      for (int64_t k = 0; k < steps; ++k, i += step) {
        PrefetchAhead(pa + i, static_cast<size_t>(step));
        PrefetchAhead(pb + i, static_cast<size_t>(step));
        FusedPairs<kTolerance>(d, WideF32::Load(d, pa + i), WideF32::Load(d, pb + i), vatol, vrtol, acc.h0, acc.l0,
                               acc);
        FusedPairs<kTolerance>(d, WideF32::Load(d, pa + i + N), WideF32::Load(d, pb + i + N), vatol, vrtol, acc.h1,
                               acc.l1, acc);
      }
      chain += steps;
      if (chain == kChain) fold();
    }
    // The tail (fewer than 2N pairs, only in a last, shorter block): one
    // scalar chain, as SquareRowDouble's.
    FiniteBlockStats tail;
    double tail_hi = 0, tail_lo = 0;
    const bool has_tail = i < m;
    for (; i < m; ++i) {
      const double p = pa[i], q = pb[i];
      double pp, t, s, e2;
      ScalarSquareTerm(p, q, pp, t, s);
      TwoSum(tail_hi, pp, tail_hi, e2);
      tail_lo += e2 + t;
      const double magnitude = std::fabs(s);
      tail.differing += s != 0;
      tail.max_abs = std::max(tail.max_abs, magnitude);
      if constexpr (kTolerance) {
        const bool out = magnitude > atol + rtol * std::fabs(q);
        tail.out += out;
        if (out) tail.worst = std::max(tail.worst, magnitude);
      }
    }
    if (has_tail) FusedFold(sums, tail_hi, tail_lo);
    // A NaN or an inf in the block made its term, and so the lanes (or what
    // they were folded into), NaN or inf; no finite block does (squares of
    // f32 differences stay below 2^259).
    const auto finite = hn::And(hn::And(hn::Lt(hn::Abs(acc.h0), infinity), hn::Lt(hn::Abs(acc.h1), infinity)),
                                hn::And(hn::Lt(hn::Abs(acc.l0), infinity), hn::Lt(hn::Abs(acc.l1), infinity)));
    if (!hn::AllTrue(d, finite) || !std::isfinite(sums->hi) || !std::isfinite(sums->lo)) return taken;
    FiniteBlockStats& s = stats[taken];
    s.differing = acc.differing + tail.differing;
    s.max_abs = std::max(hn::GetLane(hn::MaxOfLanes(d, acc.max_abs)), tail.max_abs);
    if constexpr (kTolerance) {
      s.out = static_cast<int64_t>(hn::GetLane(hn::SumOfLanes(d, acc.out))) + tail.out;
      s.worst = std::max(hn::GetLane(hn::MaxOfLanes(d, acc.worst)), tail.worst);
    } else {
      // atol = rtol = 0: out of tolerance is |a - b| > 0, i.e. differing.
      s.out = s.differing;
      s.worst = s.differing > 0 ? s.max_abs : 0;
    }
  }
  if (chain > 0) fold();
  return taken;
}

int64_t FusedF32Blocks(const float* a, const float* b, int64_t n, int64_t block, double atol, double rtol,
                       SquareSums* sums, FiniteBlockStats* stats) {
  if (atol == 0 && rtol == 0) return FusedBlocks<false>(a, b, n, block, atol, rtol, sums, stats);
  return FusedBlocks<true>(a, b, n, block, atol, rtol, sums, stats);
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sqdiff::detail {

HWY_EXPORT(FusedF32Blocks);

int64_t fused_f32_blocks(const float* a, const float* b, int64_t n, int64_t block, double atol, double rtol,
                         SquareSums* sums, FiniteBlockStats* stats) {
  const ScopedIeeeDefaults ieee(DType::f32);
  return HWY_DYNAMIC_DISPATCH(FusedF32Blocks)(a, b, n, block, atol, rtol, sums, stats);
}

}  // namespace sqdiff::detail
#endif  // HWY_ONCE
