// sqdiff::float16 conversions checked against an independent oracle
// (test_support.hpp: values decoded with std::ldexp, rounding by table search
// and exact midpoint comparison in double).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "sqdiff/float16.hpp"
#include "test_support.hpp"

namespace {

using sqdiff::float16;
using sqdiff_test::f16_oracle_to_float;
using sqdiff_test::half_bits_to_double;
using sqdiff_test::half_is_nan;
using sqdiff_test::kF16Format;

constexpr uint32_t kF32QuietBit = 0x00400000u;
constexpr uint16_t kF16QuietBit = 0x0200u;
constexpr uint16_t kF16Inf = 0x7C00u;

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
float float_of(uint32_t b) { return std::bit_cast<float>(b); }
uint16_t to_half(float f) { return float16(f).bits(); }
float to_float(uint16_t h) { return static_cast<float>(float16::from_bits(h)); }

// Expected half for a float; NaN inputs are handled by the callers.
uint16_t oracle(float f) { return sqdiff_test::round_float_to_half_oracle(kF16Format, f); }

// A float NaN must become a quiet half NaN with the same sign.
::testing::AssertionResult is_quiet_nan_with_sign(uint16_t h, bool negative) {
  if (!half_is_nan(kF16Format, h)) return ::testing::AssertionFailure() << std::hex << h << " is not NaN";
  if ((h & kF16QuietBit) == 0) return ::testing::AssertionFailure() << std::hex << h << " is not quiet";
  if (((h & 0x8000u) != 0) != negative)
    return ::testing::AssertionFailure() << std::hex << h << " has the wrong sign";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult converts_like_oracle(float f) {
  const uint16_t got = to_half(f);
  if (std::isnan(f)) return is_quiet_nan_with_sign(got, std::signbit(f));
  const uint16_t want = oracle(f);
  if (got == want) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << std::hex << "float bits 0x" << bits_of(f) << ": got 0x" << got
                                       << ", want 0x" << want;
}

// --- the oracle itself, anchored on literal values --------------------------

TEST(Float16Oracle, AnchorValues) {
  EXPECT_EQ(half_bits_to_double(kF16Format, 0x3C00), 1.0);
  EXPECT_EQ(half_bits_to_double(kF16Format, 0xC000), -2.0);
  EXPECT_EQ(half_bits_to_double(kF16Format, 0x7BFF), 65504.0);
  EXPECT_EQ(half_bits_to_double(kF16Format, 0x0400), std::ldexp(1.0, -14));
  EXPECT_EQ(half_bits_to_double(kF16Format, 0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(half_bits_to_double(kF16Format, 0x3555), 1365.0 / 4096.0);
  EXPECT_EQ(oracle(1.0f), 0x3C00);
  EXPECT_EQ(oracle(65520.0f), 0x7C00);
  EXPECT_EQ(oracle(-0.0f), 0x8000);
}

// --- half -> float ------------------------------------------------------------

TEST(Float16, ToFloatExhaustive) {
  int failures = 0;
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float got = to_float(bits);
    if (half_is_nan(kF16Format, bits)) {
      const bool ok = std::isnan(got) && (bits_of(got) & kF32QuietBit) != 0 &&
                      std::signbit(got) == ((bits & 0x8000u) != 0);
      if (!ok && failures++ < 10) ADD_FAILURE() << std::hex << "half 0x" << h << " -> float 0x" << bits_of(got);
    } else {
      const float want = f16_oracle_to_float(bits);
      if (bits_of(got) != bits_of(want) && failures++ < 10)
        ADD_FAILURE() << std::hex << "half 0x" << h << " -> float 0x" << bits_of(got) << ", want 0x"
                      << bits_of(want);
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(Float16, ToFloatLiterals) {
  EXPECT_EQ(to_float(0x3C00), 1.0f);
  EXPECT_EQ(to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(to_float(0x03FF), 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(to_float(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(bits_of(to_float(0x8000)), 0x80000000u);
  EXPECT_EQ(bits_of(to_float(0x0000)), 0x00000000u);
  // A signalling half NaN comes back as a quiet float NaN.
  EXPECT_TRUE(std::isnan(to_float(0x7C01)));
  EXPECT_NE(bits_of(to_float(0x7C01)) & kF32QuietBit, 0u);
  EXPECT_TRUE(std::signbit(to_float(0xFC01)));
}

// --- float -> half ------------------------------------------------------------

TEST(Float16, EveryHalfRoundTripsExactly) {
  int failures = 0;
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const uint16_t back = to_half(to_float(bits));
    const bool ok = half_is_nan(kF16Format, bits)
                        ? static_cast<bool>(is_quiet_nan_with_sign(back, (bits & 0x8000u) != 0))
                        : back == bits;
    if (!ok && failures++ < 10) ADD_FAILURE() << std::hex << "half 0x" << h << " came back as 0x" << back;
  }
  EXPECT_EQ(failures, 0);
}

// Between every pair of adjacent halves (including 65504 and the first
// overflowing value 65536): the midpoint ties to the even pattern, one float
// ulp below goes down, one float ulp above goes up.
TEST(Float16, MidpointsTieToEvenAndNeighboursRoundToNearest) {
  int failures = 0;
  for (uint32_t c = 0; c < kF16Inf; ++c) {
    const double lo = half_bits_to_double(kF16Format, static_cast<uint16_t>(c));
    const double hi = c + 1 == kF16Inf ? 65536.0 : half_bits_to_double(kF16Format, static_cast<uint16_t>(c + 1));
    const double mid_d = (lo + hi) / 2;
    const float mid = static_cast<float>(mid_d);
    ASSERT_EQ(static_cast<double>(mid), mid_d) << "midpoint not a float for " << c;
    const float below = std::nextafter(mid, 0.0f);
    const float above = std::nextafter(mid, std::numeric_limits<float>::infinity());
    const uint16_t even = static_cast<uint16_t>(c % 2 == 0 ? c : c + 1);
    for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      const float s = sign ? -1.0f : 1.0f;
      const struct {
        float in;
        uint16_t want;
      } cases[] = {{s * mid, static_cast<uint16_t>(even | sign)},
                   {s * below, static_cast<uint16_t>(c | sign)},
                   {s * above, static_cast<uint16_t>((c + 1) | sign)}};
      for (const auto& k : cases) {
        const uint16_t got = to_half(k.in);
        if (got != k.want && failures++ < 10)
          ADD_FAILURE() << std::hex << "float 0x" << bits_of(k.in) << ": got 0x" << got << ", want 0x" << k.want;
        // The oracle must agree with the structural expectation.
        if (oracle(k.in) != k.want && failures++ < 10)
          ADD_FAILURE() << std::hex << "oracle disagrees for float 0x" << bits_of(k.in);
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(Float16, Overflow) {
  EXPECT_EQ(to_half(65520.0f), 0x7C00);   // the midpoint 65504..65536 ties to "even" inf
  EXPECT_EQ(to_half(-65520.0f), 0xFC00);
  EXPECT_EQ(to_half(65519.99f), 0x7BFF);  // just below: 65504
  EXPECT_EQ(to_half(-65519.99f), 0xFBFF);
  EXPECT_EQ(to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(to_half(65536.0f), 0x7C00);
  EXPECT_EQ(to_half(1e10f), 0x7C00);
  EXPECT_EQ(to_half(std::numeric_limits<float>::max()), 0x7C00);
  EXPECT_EQ(to_half(-std::numeric_limits<float>::max()), 0xFC00);
  EXPECT_EQ(to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(to_half(-std::numeric_limits<float>::infinity()), 0xFC00);
}

TEST(Float16, SubnormalsAndZeros) {
  const float u = std::ldexp(1.0f, -24);  // smallest half subnormal
  EXPECT_EQ(to_half(u), 0x0001);
  EXPECT_EQ(to_half(-u), 0x8001);
  EXPECT_EQ(to_half(u / 2), 0x0000);                                   // tie to even: 0
  EXPECT_EQ(to_half(-u / 2), 0x8000);
  EXPECT_EQ(to_half(std::nextafter(u / 2, 1.0f)), 0x0001);
  EXPECT_EQ(to_half(3 * u / 2), 0x0002);                               // tie to even: 2
  EXPECT_EQ(to_half(5 * u / 2), 0x0002);                               // tie to even: 2
  EXPECT_EQ(to_half(1023 * u), 0x03FF);                                // largest subnormal
  EXPECT_EQ(to_half(1023.5f * u), 0x0400);                             // ties up to the smallest normal
  EXPECT_EQ(to_half(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(to_half(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(to_half(std::numeric_limits<float>::min()), 0x0000);
  EXPECT_EQ(to_half(0.0f), 0x0000);
  EXPECT_EQ(to_half(-0.0f), 0x8000);
}

TEST(Float16, NaNStaysQuietNaNWithItsSign) {
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(is_quiet_nan_with_sign(to_half(qnan), false));
  EXPECT_TRUE(is_quiet_nan_with_sign(to_half(-qnan), true));
  // Signalling NaNs, including ones whose payload lies only in the low bits
  // that binary16 cannot hold: still NaN, never inf.
  for (uint32_t b : {0x7F800001u, 0x7F800FFFu, 0x7F801000u, 0x7FBFFFFFu, 0x7FC00000u, 0x7FFFFFFFu}) {
    EXPECT_TRUE(is_quiet_nan_with_sign(to_half(float_of(b)), false)) << std::hex << b;
    EXPECT_TRUE(is_quiet_nan_with_sign(to_half(float_of(b | 0x80000000u)), true)) << std::hex << b;
  }
}

// A few million random floats from a fixed seed: all bit patterns, and then
// patterns concentrated on the exponents where binary16 rounding happens.
TEST(Float16, RandomSweepMatchesOracle) {
  std::mt19937 rng(20240611u);
  int failures = 0;
  for (int i = 0; i < 3'000'000; ++i) {
    const float f = float_of(static_cast<uint32_t>(rng()));
    const ::testing::AssertionResult r = converts_like_oracle(f);
    if (!r && failures++ < 10) ADD_FAILURE() << r.message();
  }
  std::uniform_int_distribution<uint32_t> exponent(127 - 26, 127 + 16);
  for (int i = 0; i < 2'000'000; ++i) {
    const uint32_t b = (static_cast<uint32_t>(rng()) & 0x807FFFFFu) | (exponent(rng) << 23);
    const ::testing::AssertionResult r = converts_like_oracle(float_of(b));
    if (!r && failures++ < 10) ADD_FAILURE() << r.message();
  }
  EXPECT_EQ(failures, 0);
}

// --- value-type behaviour -----------------------------------------------------

TEST(Float16, ConstexprUsable) {
  static_assert(float16(1.0f).bits() == 0x3C00);
  static_assert(float16(-2.0f).bits() == 0xC000);
  static_assert(float16(65520.0f).bits() == 0x7C00);
  static_assert(static_cast<float>(float16::from_bits(0x3555)) == 0.333251953125f);
  static_assert(static_cast<float>(float16::from_bits(0x0001)) == 0x1p-24f);
  static_assert(float16().bits() == 0);
  constexpr float16 h = float16::from_bits(0x7BFF);
  static_assert(static_cast<float>(h) == 65504.0f);
  EXPECT_EQ(h.bits(), 0x7BFF);
}

TEST(Float16, EqualityIsBitwise) {
  EXPECT_TRUE(float16::from_bits(0x7E00) == float16::from_bits(0x7E00));  // NaN == same NaN
  EXPECT_FALSE(float16::from_bits(0x0000) == float16::from_bits(0x8000)); // +0 != -0
  EXPECT_TRUE(float16(1.0f) == float16::from_bits(0x3C00));
  EXPECT_FALSE(float16(1.0f) == float16(2.0f));
}

}  // namespace
