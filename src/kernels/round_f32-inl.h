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
  const hn::RebindToUnsigned<decltype(df)> du;
  const std::size_t N = hn::Lanes(d);
  const auto smallest = hn::Set(d, static_cast<double>(std::numeric_limits<float>::min()));
  const auto largest = hn::Set(d, static_cast<double>(std::numeric_limits<float>::max()));
  const auto one = hn::Set(du, 1u);
  const auto half = hn::Set(d, 0.5);
  const auto unit = hn::Set(d, 0x1p-53);
  const auto slack = hn::Set(d, 1 + 0x1p-40);
  const auto rel = hn::Set(d, relative);
  std::size_t count = 0;
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto s = hn::LoadU(d, sums + i);
    // The candidate, as the CPU converts (to nearest even: the fast paths run
    // with the IEEE defaults); the SCALAR and EMU128 targets clamp beyond
    // FLT_MAX, which the range check below leaves undecided as it does inf.
    const auto candidate = hn::DemoteTo(df, s);
    const auto wide = hn::PromoteTo(d, candidate);
    const auto magnitude = hn::Abs(wide);
    const auto in_range = hn::And(hn::Ge(magnitude, smallest), hn::Lt(magnitude, largest));
    const auto bits = hn::BitCast(du, candidate);
    const auto below = hn::PromoteTo(d, hn::BitCast(df, hn::Sub(bits, one)));
    const auto above = hn::PromoteTo(d, hn::BitCast(df, hn::Add(bits, one)));
    const auto mid_below = hn::Mul(hn::Add(wide, below), half);
    const auto mid_above = hn::Mul(hn::Add(wide, above), half);
    const auto a = hn::Abs(s);
    const auto margin = hn::Mul(hn::Add(hn::Mul(rel, a), hn::Mul(a, unit)), slack);
    const auto from_below = hn::Sub(s, mid_below);
    const auto to_above = hn::Sub(mid_above, s);
    const auto between = hn::Gt(hn::Mul(from_below, to_above), hn::Zero(d));
    const auto clear = hn::And(hn::Gt(hn::Abs(from_below), margin), hn::Gt(hn::Abs(to_above), margin));
    const auto decided = hn::And(hn::And(in_range, between), clear);
    hn::StoreU(candidate, df, out + i);
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
