// round_if_decided on exact doubles (no error bound): the fast paths' last
// step, rounding a double into f16, bf16 or f32. Checked against a rounding
// that works differently (bracket the value by its truncation and the next
// value up, compare distances exactly) and, for f32 and f16, against the
// CPU's own conversions, over random doubles of every binade of each format,
// the edges of the normal range, ties, and values that round up a binade.
#include "reduce/rounding.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

namespace {

using sqdiff::DType;
using sqdiff::detail::Approximation;
using sqdiff::detail::float_bits_to_double;
using sqdiff::detail::round_if_decided;
using sqdiff::detail::round_to_f32_if_decided;

struct Format {
  DType dtype;
  int precision;
  int min_exponent;
  int max_exponent;
};

constexpr Format kFormats[] = {
    {DType::f16, 11, -14, 15},
    {DType::bf16, 8, -126, 127},
    {DType::f32, 24, -126, 127},
};

// x rounded to nearest even with `precision` bits, for x in the normal range:
// the truncation toward zero and the next value up, whichever is nearer.
double reference_round(double x, const Format& f) {
  int exponent = 0;
  std::frexp(x, &exponent);  // x = m * 2^exponent, 0.5 <= |m| < 1
  const double ulp = std::ldexp(1.0, exponent - f.precision);
  const double down = std::trunc(x / ulp) * ulp;  // exact: a power-of-2 scaling
  const double up = down + std::copysign(ulp, x);
  const double below = std::fabs(x - down);  // exact: same binade
  const double above = std::fabs(up - x);
  if (below < above) return down;
  if (above < below) return up;
  const bool down_is_even = std::fmod(std::fabs(down) / ulp, 2.0) == 0.0;
  return down_is_even ? down : up;
}

// reference_round, with results past the largest finite value as infinity.
double reference_round_or_overflow(double x, const Format& f) {
  const double rounded = reference_round(x, f);
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.max_exponent);
  return std::fabs(rounded) > largest ? std::copysign(INFINITY, x) : rounded;
}

double fast_round(double x, const Format& f) {
  const std::optional<uint64_t> bits = round_if_decided(Approximation{x, 0, 0}, f.dtype);
  EXPECT_TRUE(bits.has_value()) << x;
  return bits ? float_bits_to_double(*bits, f.dtype) : std::nan("");
}

TEST(Rounding, RandomDoublesInEveryBinadeRoundToNearestEven) {
  std::mt19937_64 random(20261125);
  for (const Format& f : kFormats) {
    std::uniform_int_distribution<int> binade(f.min_exponent, f.max_exponent);
    for (int i = 0; i < 200000; ++i) {
      const double m = std::ldexp(static_cast<double>(random() >> 11), -53) + 1.0;  // [1, 2)
      const double x = std::ldexp(m, binade(random)) * ((i & 1) ? -1 : 1);
      const double expected = reference_round_or_overflow(x, f);
      ASSERT_EQ(fast_round(x, f), expected) << std::hexfloat << x << " into precision " << f.precision;
      if (f.dtype == DType::f32) {
        ASSERT_EQ(fast_round(x, f), static_cast<double>(static_cast<float>(x)));
      }
      if (f.dtype == DType::f16) {
        ASSERT_EQ(fast_round(x, f), static_cast<double>(static_cast<_Float16>(x)));
      }
    }
  }
}

TEST(Rounding, TiesGoToEvenAndCarriesReachTheNextBinadeOrInfinity) {
  for (const Format& f : kFormats) {
    const double one_ulp = std::ldexp(1.0, 1 - f.precision);
    EXPECT_EQ(fast_round(1.0 + one_ulp / 2, f), 1.0);                      // tie, 1 is even
    EXPECT_EQ(fast_round(1.0 + 1.5 * one_ulp, f), 1.0 + 2 * one_ulp);     // tie, rounds up to even
    EXPECT_EQ(fast_round(2.0 - one_ulp / 4, f), 2.0);                      // carries into the exponent
    const double largest = std::ldexp(2.0 - 2 * one_ulp / 2, f.max_exponent);
    EXPECT_EQ(fast_round(largest, f), largest);
    // Half an ulp above the largest finite value is a tie with 2^(max+1): infinity.
    EXPECT_EQ(fast_round(largest + std::ldexp(one_ulp / 2, f.max_exponent), f), INFINITY);
    EXPECT_EQ(fast_round(-(largest + std::ldexp(one_ulp, f.max_exponent) / 4), f), -largest);
    const double smallest_normal = std::ldexp(1.0, f.min_exponent);
    EXPECT_EQ(fast_round(smallest_normal, f), smallest_normal);
    EXPECT_EQ(fast_round(smallest_normal * (1 + one_ulp / 4), f), smallest_normal);
  }
}

TEST(Rounding, SubnormalResultsStillRoundCorrectly) {
  // Below the normal range the general rounding takes over.
  EXPECT_EQ(fast_round(0x1.8p-149, kFormats[2]), 0x1p-148);  // f32: 1.5 of the smallest subnormal, tie to even
  EXPECT_EQ(fast_round(0x1.4p-149, kFormats[2]), 0x1p-149);
  EXPECT_EQ(fast_round(0x1.8p-24, kFormats[0]), 0x1p-23);    // f16 likewise
}

// The f32 shortcut the fast paths try first: whenever it decides, it agrees
// with the general decision, and it declines near a midpoint.
TEST(Rounding, TheF32ShortcutAgreesWithTheGeneralDecision) {
  std::mt19937_64 random(7);
  std::uniform_int_distribution<int> binade(-126, 127);
  int decided = 0;
  for (int i = 0; i < 200000; ++i) {
    const double hi = std::ldexp(std::ldexp(static_cast<double>(random() >> 11), -53) + 1.0, binade(random));
    const double lo = std::ldexp(static_cast<double>(random() >> 11), -53) * std::ldexp(hi, -53) * ((i & 1) ? -1 : 1);
    const double error = std::ldexp(hi, -static_cast<int>(20 + random() % 40));
    const Approximation x{hi, lo, error};
    const std::optional<uint64_t> fast = round_to_f32_if_decided(x);
    const std::optional<uint64_t> general = round_if_decided(x, DType::f32);
    if (fast && general) {
      ASSERT_EQ(*fast, *general) << std::hexfloat << hi << " " << lo << " " << error;
    }
    // The shortcut decides only what its bound allows: both ends of the
    // interval round to its answer (where the general rounding of each end,
    // as a value of its own, decides).
    if (fast) {
      ++decided;
      for (const double end : {lo - error, lo + error}) {
        if (const auto rounded_end = round_if_decided(Approximation{hi, end, 0}, DType::f32)) {
          ASSERT_EQ(*rounded_end, *fast) << std::hexfloat << hi << " " << end;
        }
      }
    }
  }
  EXPECT_GT(decided, 150000);  // the tight bounds are nearly all decided
}

TEST(Rounding, TheF32ShortcutDeclinesAtAndNearMidpoints) {
  const double one_ulp = 0x1p-23;
  const double midpoint = 1.0 + one_ulp / 2;
  EXPECT_FALSE(round_to_f32_if_decided(Approximation{midpoint, 0, 0}));
  EXPECT_FALSE(round_to_f32_if_decided(Approximation{midpoint, 0x1p-70, 0x1p-60}));
  EXPECT_FALSE(round_to_f32_if_decided(Approximation{0x1p-140, 0, 0}));   // subnormal in f32
  EXPECT_FALSE(round_to_f32_if_decided(Approximation{0x1.fffffep127, 0, 0}));  // the largest finite
  EXPECT_FALSE(round_to_f32_if_decided(Approximation{0, 0, 0}));
  const std::optional<uint64_t> clear = round_to_f32_if_decided(Approximation{midpoint, 0x1p-40, 0x1p-60});
  ASSERT_TRUE(clear);
  EXPECT_EQ(*clear, std::bit_cast<uint32_t>(1.0f + 0x1p-23f));
}

}  // namespace
