// round_single_block_to_f32 (reduce/square_bounds.hpp) on a row of sums at a
// time, in vectors: the pairwise blocks round a million f32 outputs a call,
// where the scalar decision cost as much as the kernel that made the sums.
// Lane for lane the same arithmetic as the scalar function, so the same
// decisions (tests/kernels/round_kernels_test.cpp).

#if defined(SQDIFF_KERNELS_ROUND_F32_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_ROUND_F32_INL_H_
#undef SQDIFF_KERNELS_ROUND_F32_INL_H_
#else
#define SQDIFF_KERNELS_ROUND_F32_INL_H_
#endif

#include <cstdint>
#include <cstring>
#include <limits>

#include "hwy/highway.h"
#include "kernels/false_lanes-inl.h"
#include "kernels/reduce_table.hpp"
#include "reduce/square_bounds.hpp"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = the f32 that sums[i] rounds to, for each i < n the decision takes;
// the others' indices go to `undecided` (room for n) and their outputs hold
// garbage. Returns how many those are.
inline std::size_t RoundSumsToF32(const double* sums, std::size_t n, double relative, float* out,
                                  uint32_t* undecided) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<float, decltype(d)> df;
  const hn::RebindToUnsigned<decltype(d)> du;
  const std::size_t N = hn::Lanes(d);
  const auto smallest = hn::Set(d, static_cast<double>(std::numeric_limits<float>::min()));
  const auto largest = hn::Set(d, static_cast<double>(std::numeric_limits<float>::max()));
  const uint64_t clearance = single_block_clearance(relative);
  const auto below_f32 = hn::Set(du, (uint64_t{1} << 29) - 1);
  const auto window_start = hn::Set(du, (uint64_t{1} << 28) - clearance);
  const auto window_width = hn::Set(du, 2 * clearance);
  std::size_t count = 0;
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto s = hn::LoadU(d, sums + i);
    const auto magnitude = hn::Abs(s);
    const auto in_range = hn::And(hn::Ge(magnitude, smallest), hn::Lt(magnitude, largest));  // NaN: false
    const auto from_window = hn::Sub(hn::And(hn::BitCast(du, magnitude), below_f32), window_start);
    const auto clear = hn::RebindMask(d, hn::Gt(from_window, window_width));
    const auto decided = hn::And(in_range, clear);
    // The f32 nearest to s, as the CPU converts (to nearest even: the fast
    // paths run with the IEEE defaults); decided lanes are never ties.
    hn::StoreU(hn::DemoteTo(df, s), df, out + i);
    if (HWY_UNLIKELY(!hn::AllTrue(d, decided))) AppendFalseLanes(d, decided, i, undecided, count);
  }
  for (; i < n; ++i) {
    if (const std::optional<uint32_t> bits = round_single_block_to_f32(sums[i], relative)) {
      std::memcpy(out + i, &*bits, 4);
    } else {
      undecided[count++] = static_cast<uint32_t>(i);
    }
  }
  return count;
}

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_ROUND_F32_INL_H_
