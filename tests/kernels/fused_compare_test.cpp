// sqdiff::detail::fused_f32_blocks (kernels/fused_compare.hpp), `sqdiff
// compare`'s statistics and sum of squares of float32 pairs in one pass, on
// every SIMD target compiled in that this CPU supports, against an
// independent computation: each block's statistics pair by pair in scalar
// code, and the sum's correctly rounded value from sum_squared_difference
// (whatever the bound decides must be that value; a sum on a rounding
// boundary must stay undecided, for the exact fallback). Data: random values
// of many magnitudes, f32 subnormals, differences that overflow f32 but not
// f64, ties of the largest |a - b|, pairs exactly on the tolerance's
// boundary, NaN and inf at every position of a block, lengths around the
// vector widths, the block and the lanes' fold (kChain terms a lane).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "kernels/fused_compare.hpp"
#include "reduce/bounded_sum.hpp"
#include "simd_target_guard.hpp"
#include "sqdiff/reduce.hpp"

namespace {

using sqdiff::DType;
using sqdiff::detail::FiniteBlockStats;
using sqdiff::detail::SquareSums;
using sqdiff_test::TargetGuard;
using sqdiff_test::targets_to_run;

constexpr int64_t kBlock = 256;

// The statistics of pairs [from, to) as the statistics loop defines them
// (src/compare/difference_stats.hpp): |a - b| in f64, out of tolerance when not
// |a - b| <= atol + rtol * |b| (two roundings: the product is stored first).
FiniteBlockStats oracle_stats(const std::vector<float>& a, const std::vector<float>& b, int64_t from, int64_t to,
                              double atol, double rtol) {
  FiniteBlockStats s;
  for (int64_t i = from; i < to; ++i) {
    const double p = a[static_cast<std::size_t>(i)], q = b[static_cast<std::size_t>(i)];
    const double d = std::fabs(p - q);
    volatile double product = rtol * std::fabs(q);
    const double tolerance = atol + product;
    s.differing += p != q;
    s.max_abs = std::max(s.max_abs, d);
    if (!(d <= tolerance) && p != q) {
      ++s.out;
      s.worst = std::max(s.worst, d);
    }
  }
  return s;
}

// The correctly rounded f64 sum (or mean) of (a - b)^2, by the library's reduction.
double library_result(const std::vector<float>& a, const std::vector<float>& b, bool mean) {
  double out = 0;
  const sqdiff::ConstTensorView va{a.data(), DType::f32, {static_cast<int64_t>(a.size())}, {1}};
  const sqdiff::ConstTensorView vb{b.data(), DType::f32, {static_cast<int64_t>(b.size())}, {1}};
  const sqdiff::TensorView vo{&out, DType::f64, {}, {}};
  if (mean) {
    sqdiff::mean_squared_difference(va, vb, vo);
  } else {
    sqdiff::sum_squared_difference(va, vb, vo);
  }
  return out;
}

struct Outcome {
  int64_t taken;
  SquareSums sums;
  std::vector<FiniteBlockStats> stats;
};

Outcome run(const std::vector<float>& a, const std::vector<float>& b, double atol, double rtol,
            int64_t block = kBlock) {
  const auto n = static_cast<int64_t>(a.size());
  Outcome o{0, {}, std::vector<FiniteBlockStats>(static_cast<std::size_t>((n + block - 1) / block + 1))};
  o.taken = sqdiff::detail::fused_f32_blocks(a.data(), b.data(), n, block, atol, rtol, &o.sums, o.stats.data());
  return o;
}

void expect_block_stats(const Outcome& o, const std::vector<float>& a, const std::vector<float>& b, int64_t blocks,
                        double atol, double rtol, int64_t block = kBlock) {
  for (int64_t k = 0; k < blocks; ++k) {
    const int64_t from = k * block;
    const int64_t to = std::min<int64_t>(from + block, static_cast<int64_t>(a.size()));
    const FiniteBlockStats want = oracle_stats(a, b, from, to, atol, rtol);
    const FiniteBlockStats& got = o.stats[static_cast<std::size_t>(k)];
    SCOPED_TRACE(testing::Message() << "block " << k);
    EXPECT_EQ(got.differing, want.differing);
    EXPECT_EQ(got.out, want.out);
    EXPECT_EQ(std::bit_cast<uint64_t>(got.max_abs), std::bit_cast<uint64_t>(want.max_abs));
    EXPECT_EQ(std::bit_cast<uint64_t>(got.worst), std::bit_cast<uint64_t>(want.worst));
  }
}

// Every block finite: all taken, each block's statistics exact, and the sum
// and mean rounded from the bound (when it decides) equal the library's.
void check_finite(const std::vector<float>& a, const std::vector<float>& b, double atol, double rtol,
                  int64_t block = kBlock) {
  const auto n = static_cast<int64_t>(a.size());
  const Outcome o = run(a, b, atol, rtol, block);
  const int64_t blocks = (n + block - 1) / block;
  ASSERT_EQ(o.taken, blocks);
  expect_block_stats(o, a, b, blocks, atol, rtol, block);
  const sqdiff::detail::BoundedSum bounded = sqdiff::detail::bounded_of(o.sums, true, sqdiff::detail::kChain);
  for (const bool mean : {false, true}) {
    const std::optional<uint64_t> bits =
        sqdiff::detail::round_bounded(bounded, mean, static_cast<uint64_t>(n), DType::f64);
    ASSERT_TRUE(bits.has_value()) << "n " << n << " mean " << mean;  // random data: never on a boundary
    EXPECT_EQ(*bits, std::bit_cast<uint64_t>(library_result(a, b, mean))) << "n " << n << " mean " << mean;
  }
}

// Values of every magnitude f32 has, subnormals and zeros of both signs included.
float wide_value(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> kind(0, 9);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  switch (kind(rng)) {
    case 0: return std::ldexp(unit(rng), -140);  // subnormal
    case 1: return std::ldexp(unit(rng), 120);   // squares of differences beyond f32's range
    case 2: return 0.0f;
    case 3: return -0.0f;
    default: return std::ldexp(unit(rng), std::uniform_int_distribution<int>(-40, 40)(rng));
  }
}

class FusedCompareTest : public testing::TestWithParam<int64_t> {
 protected:
  TargetGuard guard_{GetParam()};
};

TEST_P(FusedCompareTest, MatchesTheStatisticsAndTheRoundedSumOnWideData) {
  std::mt19937_64 rng(23);
  const std::vector<int64_t> lengths = {1,   2,   3,   7,    8,        15,   16,          17,
                                        31,  33,  63,  64,   65,       255,  256,         257,
                                        1000, 1027, 4096, 64 * kBlock, 64 * kBlock + 11, 3 * 64 * 16 + 5};
  for (const int64_t n : lengths) {
    std::vector<float> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      a[static_cast<std::size_t>(i)] = wide_value(rng);
      // A third of the pairs equal, so that `differing` and the maxima are tested.
      b[static_cast<std::size_t>(i)] = i % 3 == 0 ? a[static_cast<std::size_t>(i)] : wide_value(rng);
    }
    SCOPED_TRACE(testing::Message() << "n " << n);
    check_finite(a, b, 0, 0);
    check_finite(a, b, 1e-3, 1e-2);
    check_finite(a, b, 0, 0, 16);  // the smallest block: a fold in most blocks on narrow targets
  }
}

TEST_P(FusedCompareTest, HugeDifferencesSquareInF64) {
  // |a - b| = 2 * FLT_MAX overflows f32 but not f64; its square (about
  // 2^258) does not overflow f64 either: all finite, taken, and summed.
  const float big = std::numeric_limits<float>::max();
  std::vector<float> a(300, big), b(300, -big);
  a[5] = 1.0f;
  check_finite(a, b, 0, 0);
  check_finite(a, b, 1.0, 1.0);
}

TEST_P(FusedCompareTest, ToleranceBoundaryAndTiesOfTheLargestDifference) {
  // |a - b| = 0.5 = atol + rtol * |b| exactly (0.25 + 0.25 * 1): within; one
  // ulp more is out. The largest |a - b| occurs at several positions.
  std::vector<float> a(515), b(515);
  for (std::size_t i = 0; i < a.size(); ++i) {
    b[i] = 1.0f;
    a[i] = i % 5 == 0 ? 1.5f : i % 5 == 1 ? std::nextafter(1.5f, 2.0f) : i % 5 == 2 ? 0.5f : 1.0f;
  }
  const Outcome o = run(a, b, 0.25, 0.25);
  ASSERT_EQ(o.taken, 3);
  expect_block_stats(o, a, b, 3, 0.25, 0.25);
  // Exact values, not only agreement: block 0 has pairs 0..255.
  EXPECT_EQ(o.stats[0].out, 51);  // i % 5 == 1 below 256
  EXPECT_EQ(o.stats[0].worst, static_cast<double>(std::nextafter(1.5f, 2.0f)) - 1.0);
  EXPECT_EQ(o.stats[0].max_abs, o.stats[0].worst);
  EXPECT_EQ(o.stats[0].differing, 154);
  check_finite(a, b, 0.25, 0.25);
}

TEST_P(FusedCompareTest, StopsAtTheFirstBlockWithANanOrAnInf) {
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()};
  for (const int64_t n : {int64_t{40}, int64_t{3 * kBlock + 7}}) {
    for (const float special : specials) {
      for (const bool in_a : {true, false}) {
        for (int64_t at = 0; at < n; at += at < 40 ? 1 : 37) {
          std::vector<float> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
          for (int64_t i = 0; i < n; ++i) {
            a[static_cast<std::size_t>(i)] = static_cast<float>(i % 7) * 0.5f;
            b[static_cast<std::size_t>(i)] = static_cast<float>(i % 3);
          }
          (in_a ? a : b)[static_cast<std::size_t>(at)] = special;
          SCOPED_TRACE(testing::Message() << "n " << n << " at " << at << " in a " << in_a << " " << special);
          const Outcome o = run(a, b, 0.5, 0.0);
          EXPECT_EQ(o.taken, at / kBlock);
          expect_block_stats(o, a, b, o.taken, 0.5, 0.0);
        }
        // inf against the same inf: equal, but not finite.
        std::vector<float> a(static_cast<std::size_t>(n), 1.0f), b(static_cast<std::size_t>(n), 1.0f);
        a.back() = b.back() = std::numeric_limits<float>::infinity();
        EXPECT_EQ(run(a, b, 0, 0).taken, (n - 1) / kBlock);
      }
    }
  }
}

TEST_P(FusedCompareTest, ASumOnARoundingBoundaryStaysUndecided) {
  // 1 + 2 * (2^-27)^2 = 1 + 2^-53: halfway between two doubles. The bound
  // cannot decide it; the caller then sums exactly.
  std::vector<float> a(600, 0.0f), b(600, 0.0f);
  a[0] = 1.0f;
  a[300] = std::ldexp(1.0f, -27);
  a[599] = std::ldexp(1.0f, -27);
  const Outcome o = run(a, b, 0, 0);
  ASSERT_EQ(o.taken, 3);
  const sqdiff::detail::BoundedSum bounded = sqdiff::detail::bounded_of(o.sums, true, sqdiff::detail::kChain);
  EXPECT_FALSE(sqdiff::detail::round_bounded(bounded, false, 600, DType::f64).has_value());
  // Its parts: hi + lo is the exact sum.
  EXPECT_EQ(o.sums.hi + 0.0, 1.0);
  EXPECT_EQ(o.sums.lo, 0x1p-53);
  // One term less is decided, and exact.
  a[599] = 0.0f;
  check_finite(a, b, 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Targets, FusedCompareTest, testing::ValuesIn(targets_to_run()),
                         [](const testing::TestParamInfo<int64_t>& target) {
                           return std::string(hwy::TargetName(target.param));
                         });

}  // namespace
