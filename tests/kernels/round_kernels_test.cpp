// The vector rounding of f32 sums (reduce_kernel_table().round_to_f32, which
// the pairwise blocks use) on every SIMD target compiled in that this CPU
// supports: lane for lane the decisions of round_single_block_to_f32, the
// scalar function it stands for (whose own test holds it to the general
// rounding), for sums near f32 midpoints, specials and the ends of the range,
// at every length and offset of a vector.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/reduce_table.hpp"
#include "reduce/square_bounds.hpp"
#include "simd_target_guard.hpp"

namespace {

using sqdiff_test::TargetGuard;
using sqdiff_test::targets_to_run;

// A sum near an f32 or the midpoint above it, within about 2^-46 relative
// (where the bound decides), or a special.
double random_sum(std::mt19937_64& rng) {
  switch (rng() % 16) {
    case 0: return 0.0;
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return std::nan("");
    case 3: return static_cast<double>(std::numeric_limits<float>::max()) * (1 + 0x1p-30);
    case 4: return static_cast<double>(std::numeric_limits<float>::denorm_min()) * static_cast<double>(rng() % 1000);
    case 5: return 1e300;
    default: break;
  }
  const uint32_t bits = 0x00800000u + static_cast<uint32_t>(rng() % (0x7F7FFFFFu - 0x00800000u + 1));
  const float f = std::bit_cast<float>(bits);
  double s = static_cast<double>(f);
  if (rng() % 2 == 0) s = (s + static_cast<double>(std::nextafter(f, INFINITY))) / 2;
  const auto steps = static_cast<int64_t>(rng() % 400) - 200;
  return std::bit_cast<double>(std::bit_cast<uint64_t>(s) + static_cast<uint64_t>(steps));
}

class RoundKernels : public ::testing::TestWithParam<int64_t> {};

TEST_P(RoundKernels, DecideAsTheScalarRoundingDoes) {
  TargetGuard guard(GetParam());
  const auto& table = sqdiff::detail::reduce_kernel_table();
  ASSERT_EQ(table.target, GetParam());
  const double relative = sqdiff::detail::single_block_relative_bound();
  std::mt19937_64 rng(0xF32u + static_cast<uint64_t>(GetParam() % 1013));
  int64_t decided = 0, undecided = 0;
  for (std::size_t n = 0; n <= 1100; n += (n < 40 ? 1 : 97)) {
    for (int round = 0; round < 20; ++round) {
      std::vector<double> sums(n);
      for (double& s : sums) s = random_sum(rng);
      std::vector<float> out(n + 4, -1.0f);
      std::vector<uint32_t> left(n + 1);
      const std::size_t count = table.round_to_f32(sums.data(), n, relative, out.data(), left.data());
      ASSERT_LE(count, n);
      std::size_t u = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const auto want = sqdiff::detail::round_single_block_to_f32(sums[i], relative);
        const bool left_here = u < count && left[u] == i;
        ASSERT_EQ(left_here, !want.has_value()) << hwy::TargetName(GetParam()) << " n " << n << " i " << i
                                                << " sum " << sums[i];
        if (left_here) {
          ++u;
          ++undecided;
        } else {
          ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), *want) << hwy::TargetName(GetParam()) << " sum " << sums[i];
          ++decided;
        }
      }
      ASSERT_EQ(u, count) << "undecided indices out of order or repeated";
      for (std::size_t i = n; i < n + 4; ++i) ASSERT_EQ(out[i], -1.0f) << "wrote past the row";
    }
  }
  EXPECT_GT(decided, 1000);
  EXPECT_GT(undecided, 1000);
}

// A double-double sum near an f64 or the midpoint above it (lo within a few
// units of 2^-106 of hi), or a special.
void random_double_double(std::mt19937_64& rng, double& hi, double& lo) {
  switch (rng() % 16) {
    case 0: hi = 0.0; lo = 0.0; return;
    case 1: hi = std::numeric_limits<double>::infinity(); lo = 0.0; return;
    case 2: hi = 1.0; lo = std::nan(""); return;
    case 3: hi = 0x1p-901; lo = 0.0; return;
    case 4: hi = 0x1p1001; lo = 0.0; return;
    case 5: hi = 1.0; lo = std::numeric_limits<double>::infinity(); return;
    default: break;
  }
  hi = std::ldexp(1.0 + static_cast<double>(rng() >> 12) * 0x1p-52, static_cast<int>(rng() % 1800) - 900);
  const double ulp = std::ldexp(1.0, std::ilogb(hi) - 52);
  const double near = rng() % 2 == 0 ? ulp / 2 : 0.0;
  lo = near + ulp * 0x1p-40 * static_cast<double>(static_cast<int64_t>(rng() % 400) - 200);
}

TEST_P(RoundKernels, DecideF64AsTheScalarRoundingDoes) {
  TargetGuard guard(GetParam());
  const auto& table = sqdiff::detail::reduce_kernel_table();
  ASSERT_EQ(table.target, GetParam());
  std::mt19937_64 rng(0xF64u + static_cast<uint64_t>(GetParam() % 1013));
  int64_t decided = 0, undecided = 0;
  for (const int64_t chain : {int64_t{1}, int64_t{64}, int64_t{1} << 16}) {
    const double relative = sqdiff::detail::double_lanes_relative_bound(chain);
    for (std::size_t n = 0; n <= 1100; n += (n < 40 ? 1 : 97)) {
      std::vector<double> hi(n), lo(n);
      for (std::size_t i = 0; i < n; ++i) random_double_double(rng, hi[i], lo[i]);
      std::vector<double> out(n + 4, -1.0);
      std::vector<uint32_t> left(n + 1);
      const std::size_t count = table.round_to_f64(hi.data(), lo.data(), n, relative, out.data(), left.data());
      ASSERT_LE(count, n);
      std::size_t u = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const auto want = sqdiff::detail::round_double_lanes_to_f64(hi[i], lo[i], relative);
        const bool left_here = u < count && left[u] == i;
        ASSERT_EQ(left_here, !want.has_value())
            << hwy::TargetName(GetParam()) << " n " << n << " i " << i << " hi " << hi[i] << " lo " << lo[i];
        if (left_here) {
          ++u;
          ++undecided;
        } else {
          ASSERT_EQ(std::bit_cast<uint64_t>(out[i]), *want) << hwy::TargetName(GetParam()) << " hi " << hi[i];
          ++decided;
        }
      }
      ASSERT_EQ(u, count) << "undecided indices out of order or repeated";
      for (std::size_t i = n; i < n + 4; ++i) ASSERT_EQ(out[i], -1.0) << "wrote past the row";
    }
  }
  EXPECT_GT(decided, 1000);
  EXPECT_GT(undecided, 1000);
}

INSTANTIATE_TEST_SUITE_P(Targets, RoundKernels, ::testing::ValuesIn(targets_to_run()),
                         [](const ::testing::TestParamInfo<int64_t>& p) { return std::string(hwy::TargetName(p.param)); });

}  // namespace
