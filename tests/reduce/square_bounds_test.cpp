// The inline rounding of one kernel block's f32 sum (round_single_block_to_f32,
// which the pairwise blocks use for a million outputs a call) against the
// general functions it stands for: it must never decide where
// round_to_f32_if_decided(bound_single(...)) does not, nor give another result
// (it may leave more to the exact path). Sums near f32 midpoints and the ends
// of the normal range are where the two could part.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "reduce/square_bounds.hpp"

namespace {

using sqdiff::detail::bound_double;
using sqdiff::detail::bound_single;
using sqdiff::detail::double_lanes_relative_bound;
using sqdiff::detail::round_double_lanes_to_f64;
using sqdiff::detail::round_if_decided;
using sqdiff::detail::round_single_block_to_f32;
using sqdiff::detail::round_to_f32_if_decided;
using sqdiff::detail::single_block_relative_bound;
using sqdiff::detail::SquareSums;

// The double `steps` ulps from x (negative: below).
double ulps_from(double x, int64_t steps) {
  return std::bit_cast<double>(std::bit_cast<uint64_t>(x) + static_cast<uint64_t>(steps));
}

TEST(SquareBounds, TheInlineF32RoundingDecidesOnlyAsTheGeneralOneDoes) {
  const double relative = single_block_relative_bound();
  std::mt19937_64 rng(0x5B0D);
  int64_t decided = 0, undecided_near_midpoints = 0;
  const auto check = [&](double s) {
    const auto fast = round_single_block_to_f32(s, relative);
    const auto general = round_to_f32_if_decided(bound_single(SquareSums{s, 0.0, 1, false}));
    if (fast) {
      ASSERT_TRUE(general.has_value()) << "decided where the general rounding does not: s = " << s;
      ASSERT_EQ(*fast, *general) << "s = " << s;
      ++decided;
    }
  };
  for (int i = 0; i < 200000; ++i) {
    // A positive f32 (normal, or the largest finite) and the midpoint above it.
    const uint32_t bits = 0x00800000u + static_cast<uint32_t>(rng() % (0x7F7FFFFFu - 0x00800000u + 1));
    const float f = std::bit_cast<float>(bits);
    const double mid = (static_cast<double>(f) + static_cast<double>(std::nextafter(f, INFINITY))) / 2;
    // Doubles from the midpoint out past the bound (about 2^-48 relative: 2^5 ulps).
    const auto steps = static_cast<int64_t>(rng() % 200) - 100;
    check(ulps_from(mid, steps));
    check(ulps_from(static_cast<double>(f), steps));
    if (!round_single_block_to_f32(ulps_from(mid, steps), relative) && std::llabs(steps) <= 8) {
      ++undecided_near_midpoints;
    }
  }
  for (const double s : {0.0, -0.0, std::numeric_limits<double>::infinity(), std::nan(""),
                         static_cast<double>(std::numeric_limits<float>::min()),
                         static_cast<double>(std::numeric_limits<float>::denorm_min()),
                         static_cast<double>(std::numeric_limits<float>::max()), 1e300}) {
    check(s);
  }
  // Most draws are decided, and those within a few ulps of a midpoint are not.
  EXPECT_GT(decided, 200000);
  EXPECT_GT(undecided_near_midpoints, 0);
}

// The same for the pairwise double-double lanes' f64 rounding
// (round_double_lanes_to_f64) against round_if_decided(bound_double(...)):
// sums near f64 midpoints (lo near half an ulp of hi), at several chains.
TEST(SquareBounds, TheInlineF64RoundingDecidesOnlyAsTheGeneralOneDoes) {
  std::mt19937_64 rng(0x5B64);
  int64_t decided = 0, undecided_near_midpoints = 0;
  for (const int64_t chain : {int64_t{1}, int64_t{3}, int64_t{64}, int64_t{256}, int64_t{1} << 16}) {
    const double relative = double_lanes_relative_bound(chain);
    const auto check = [&](double hi, double lo) {
      const auto fast = round_double_lanes_to_f64(hi, lo, relative);
      const auto general = round_if_decided(bound_double(SquareSums{hi, lo, 1, false}, chain), sqdiff::DType::f64);
      if (fast) {
        ASSERT_TRUE(general.has_value()) << "decided where the general rounding does not: " << hi << " + " << lo;
        ASSERT_EQ(*fast, *general) << hi << " + " << lo;
        ++decided;
      }
    };
    for (int i = 0; i < 40000; ++i) {
      const double hi =
          std::ldexp(1.0 + static_cast<double>(rng() >> 12) * 0x1p-52, static_cast<int>(rng() % 1900) - 950);
      const double half_ulp = std::ldexp(1.0, std::ilogb(hi) - 53);
      // lo from the midpoint out past the bound (2^-106 to 2^-70 of hi).
      const double offset = std::ldexp(static_cast<double>(static_cast<int64_t>(rng() % 200) - 100),
                                       std::ilogb(hi) - 106 + static_cast<int>(rng() % 36));
      check(hi, half_ulp + offset);
      check(hi, -half_ulp + offset);
      check(hi, offset);
      if (std::fabs(offset) < half_ulp * 0x1p-60 && !round_double_lanes_to_f64(hi, half_ulp + offset, relative)) {
        ++undecided_near_midpoints;
      }
    }
    for (const double hi : {0.0, -0.0, std::numeric_limits<double>::infinity(), std::nan(""), 0x1p-1000, 0x1p-900,
                            0x1p1000, std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min()}) {
      check(hi, 0.0);
      check(hi, hi * 0x1p-60);
    }
  }
  EXPECT_GT(decided, 200000);
  EXPECT_GT(undecided_near_midpoints, 0);
}

}  // namespace
