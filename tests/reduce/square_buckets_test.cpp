// SquareBuckets (src/reduce/square_buckets.hpp), the exact path's sum of
// squares of single-precision differences, limb for limb against ExactSum's
// own term method (add_square_of_difference), which it replaced for those
// types: random values of every binade, subnormals, zeros, differences too
// wide for a double (which it must decline), and enough terms to flush its
// buckets several times.
#include "reduce/square_buckets.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using sqdiff::DType;
using sqdiff::detail::ExactSum;
using sqdiff::detail::SquareBuckets;
using sqdiff::detail::exact_format;

// Sums (a - b)^2 both ways; the terms SquareBuckets declines go to ExactSum's
// method in its sum too. Returns how many it declined.
int64_t expect_same_sums(const std::vector<float>& a, const std::vector<float>& b) {
  ExactSum reference(exact_format(DType::f32));
  ExactSum bucketed(exact_format(DType::f32));
  SquareBuckets buckets(bucketed.format());
  int64_t declined = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    reference.add_square_of_difference(a[i], b[i], false);
    if (!buckets.add(a[i], b[i])) {
      ++declined;
      bucketed.add_square_of_difference(a[i], b[i], false);
    }
  }
  buckets.flush_into(bucketed);
  const auto want = reference.limbs();
  const auto got = bucketed.limbs();
  EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin(), got.end()));
  return declined;
}

float random_float(std::mt19937_64& random, int min_exponent, int max_exponent) {
  std::uniform_int_distribution<int> exponent(min_exponent, max_exponent);
  const double m = 1.0 + std::ldexp(static_cast<double>(random() >> 40), -24);
  return static_cast<float>(std::ldexp(random() & 1 ? -m : m, exponent(random)));
}

TEST(SquareBuckets, RandomValuesOfEveryBinadeSumExactly) {
  std::mt19937_64 random(11);
  std::vector<float> a, b;
  for (int i = 0; i < 200000; ++i) {
    a.push_back(random_float(random, -149, 127));
    // Mostly near a (exact differences), sometimes anywhere (declined ones).
    b.push_back(i % 5 == 0 ? random_float(random, -149, 127) : a.back() * (1 + static_cast<float>(i % 7) * 0x1p-10f));
  }
  const int64_t declined = expect_same_sums(a, b);
  EXPECT_GT(declined, 0);
  EXPECT_LT(declined, 60000);
}

TEST(SquareBuckets, SubnormalsZerosAndTheExtremes) {
  const float tiny = std::numeric_limits<float>::denorm_min();
  const float big = std::numeric_limits<float>::max();
  const std::vector<float> a = {tiny, 0.0f, -0.0f, tiny * 3, big, -big, 1e-38f, 0x1p-126f, 0.0f};
  const std::vector<float> b = {0.0f, -0.0f, 0.0f, -tiny, 0.0f, big, -1e-38f, tiny, -big};
  expect_same_sums(a, b);
}

TEST(SquareBuckets, ManyTermsOfOneSizeFlushTheBucketsExactly) {
  // 9M terms with 53-bit differences in one bucket: more than the buckets
  // take before a flush (4 sets of 2^21), each square near 2^106 of its unit.
  std::vector<float> a(9'000'000), b(9'000'000);
  std::mt19937_64 random(3);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = std::ldexp(1.0f + std::ldexp(static_cast<float>(random() >> 41), -23), 20);
    b[i] = -std::ldexp(1.0f + std::ldexp(static_cast<float>(random() >> 41), -23), -9);
  }
  EXPECT_EQ(expect_same_sums(a, b), 0);
}

TEST(SquareBuckets, DeclinesWhatIsNotAFiniteExactDifference) {
  SquareBuckets buckets(exact_format(DType::f32));
  EXPECT_FALSE(buckets.add(0x1p100, 0x1p-100));  // 200 bits apart: not a double
  EXPECT_FALSE(buckets.add(INFINITY, 1.0));
  EXPECT_FALSE(buckets.add(1.0, std::nan("")));
  EXPECT_TRUE(buckets.add(3.0, -4.0));
  EXPECT_TRUE(buckets.add(0.0, -0.0));
}

}  // namespace
