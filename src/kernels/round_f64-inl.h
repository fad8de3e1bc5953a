// round_double_lanes_to_f64 (reduce/square_bounds.hpp) on a row of
// double-double sums at a time, in vectors: the pairwise lanes kernels leave a
// million f64 outputs a call as hi + lo pairs, and deciding each through
// Reduction::finish costs more than summing it. Lane for lane the same
// arithmetic as the scalar function, so the same decisions
// (tests/kernels/round_kernels_test.cpp).

#if defined(SQDIFF_KERNELS_ROUND_F64_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_ROUND_F64_INL_H_
#undef SQDIFF_KERNELS_ROUND_F64_INL_H_
#else
#define SQDIFF_KERNELS_ROUND_F64_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/false_lanes-inl.h"
#include "kernels/reduce_table.hpp"
#include "reduce/square_bounds.hpp"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = the f64 that hi[i] + lo[i] rounds to, for each i < n the decision
// takes; the others' indices go to `undecided` (room for n) and their outputs
// hold garbage. Returns how many those are.
inline std::size_t RoundSumsToF64(const double* hi, const double* lo, std::size_t n, double relative, double* out,
                                  uint32_t* undecided) {
  const hn::ScalableTag<double> d;
  const std::size_t N = hn::Lanes(d);
  const auto smallest = hn::Set(d, 0x1p-900);
  const auto largest = hn::Set(d, 0x1p1000);
  const auto unit = hn::Set(d, 0x1p-53);
  const auto two = hn::Set(d, 2.0);
  const auto slack = hn::Set(d, 1 + 0x1p-40);
  const auto rel = hn::Set(d, relative);
  std::size_t count = 0;
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto h = hn::LoadU(d, hi + i);
    const auto l = hn::LoadU(d, lo + i);
    const auto magnitude = hn::Abs(h);
    const auto small = hn::Abs(l);
    // Comparisons with NaN are false: a NaN hi or lo is left undecided.
    const auto in_range = hn::And(hn::And(hn::Ge(magnitude, smallest), hn::Lt(magnitude, largest)),
                                  hn::Lt(small, magnitude));
    const auto error = hn::Mul(rel, hn::Add(magnitude, small));
    const auto e = hn::Mul(hn::Mul(two, hn::Max(error, hn::Mul(unit, small))), slack);
    const auto low = hn::Add(h, hn::Sub(l, e));
    const auto high = hn::Add(h, hn::Add(l, e));
    const auto decided = hn::And(in_range, hn::Eq(low, high));
    hn::StoreU(low, d, out + i);
    if (HWY_UNLIKELY(!hn::AllTrue(d, decided))) AppendFalseLanes(d, decided, i, undecided, count);
  }
  for (; i < n; ++i) {
    if (const std::optional<uint64_t> bits = round_double_lanes_to_f64(hi[i], lo[i], relative)) {
      std::memcpy(out + i, &*bits, 8);
    } else {
      undecided[count++] = static_cast<uint32_t>(i);
    }
  }
  return count;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_ROUND_F64_INL_H_
