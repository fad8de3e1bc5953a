// sqdiff::bfloat16 conversions checked against an independent oracle
// (test_support.hpp: values decoded with std::ldexp, rounding by table search
// and exact midpoint comparison in double).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "sqdiff/bfloat16.hpp"
#include "test_support.hpp"

namespace {

using sqdiff::bfloat16;
using sqdiff_test::bf16_oracle_to_float;
using sqdiff_test::half_bits_to_double;
using sqdiff_test::half_is_nan;
using sqdiff_test::kBF16Format;

constexpr uint32_t kF32QuietBit = 0x00400000u;
constexpr uint16_t kBF16QuietBit = 0x0040u;
constexpr uint16_t kBF16Inf = 0x7F80u;

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
float float_of(uint32_t b) { return std::bit_cast<float>(b); }
uint16_t to_bf16(float f) { return bfloat16(f).bits(); }
float to_float(uint16_t h) { return static_cast<float>(bfloat16::from_bits(h)); }

uint16_t oracle(float f) { return sqdiff_test::round_float_to_half_oracle(kBF16Format, f); }

::testing::AssertionResult is_quiet_nan_with_sign(uint16_t h, bool negative) {
  if (!half_is_nan(kBF16Format, h)) return ::testing::AssertionFailure() << std::hex << h << " is not NaN";
  if ((h & kBF16QuietBit) == 0) return ::testing::AssertionFailure() << std::hex << h << " is not quiet";
  if (((h & 0x8000u) != 0) != negative)
    return ::testing::AssertionFailure() << std::hex << h << " has the wrong sign";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult converts_like_oracle(float f) {
  const uint16_t got = to_bf16(f);
  if (std::isnan(f)) return is_quiet_nan_with_sign(got, std::signbit(f));
  const uint16_t want = oracle(f);
  if (got == want) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << std::hex << "float bits 0x" << bits_of(f) << ": got 0x" << got
                                       << ", want 0x" << want;
}

TEST(BFloat16Oracle, AnchorValues) {
  EXPECT_EQ(half_bits_to_double(kBF16Format, 0x3F80), 1.0);
  EXPECT_EQ(half_bits_to_double(kBF16Format, 0xC000), -2.0);
  EXPECT_EQ(half_bits_to_double(kBF16Format, 0x7F7F), std::ldexp(255.0, 120));
  EXPECT_EQ(half_bits_to_double(kBF16Format, 0x0080), std::ldexp(1.0, -126));
  EXPECT_EQ(half_bits_to_double(kBF16Format, 0x0001), std::ldexp(1.0, -133));
  EXPECT_EQ(half_bits_to_double(kBF16Format, 0x3EAB), 171.0 / 512.0);
  EXPECT_EQ(oracle(1.0f), 0x3F80);
  EXPECT_EQ(oracle(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(oracle(-0.0f), 0x8000);
}

// --- bfloat16 -> float --------------------------------------------------------

TEST(BFloat16, ToFloatExhaustive) {
  int failures = 0;
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float got = to_float(bits);
    if (half_is_nan(kBF16Format, bits)) {
      // bfloat16 -> float is a plain widening: NaN stays NaN with its sign.
      // A quiet bfloat16 NaN stays quiet.
      bool ok = std::isnan(got) && std::signbit(got) == ((bits & 0x8000u) != 0);
      if ((bits & kBF16QuietBit) != 0) ok = ok && (bits_of(got) & kF32QuietBit) != 0;
      if (!ok && failures++ < 10) ADD_FAILURE() << std::hex << "bf16 0x" << h << " -> float 0x" << bits_of(got);
    } else {
      const float want = bf16_oracle_to_float(bits);
      if (bits_of(got) != bits_of(want) && failures++ < 10)
        ADD_FAILURE() << std::hex << "bf16 0x" << h << " -> float 0x" << bits_of(got) << ", want 0x"
                      << bits_of(want);
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(BFloat16, ToFloatLiterals) {
  EXPECT_EQ(to_float(0x3F80), 1.0f);
  EXPECT_EQ(to_float(0x7F7F), std::ldexp(255.0f, 120));
  EXPECT_EQ(to_float(0x0001), std::ldexp(1.0f, -133));
  EXPECT_EQ(to_float(0x7F80), std::numeric_limits<float>::infinity());
  EXPECT_EQ(to_float(0xFF80), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(bits_of(to_float(0x8000)), 0x80000000u);
  EXPECT_EQ(bits_of(to_float(0x0000)), 0x00000000u);
  EXPECT_TRUE(std::isnan(to_float(0x7FC0)));
  EXPECT_TRUE(std::isnan(to_float(0x7F81)));
}

// --- float -> bfloat16 --------------------------------------------------------

TEST(BFloat16, EveryBFloat16RoundTripsExactly) {
  int failures = 0;
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const uint16_t back = to_bf16(to_float(bits));
    const bool ok = half_is_nan(kBF16Format, bits)
                        ? static_cast<bool>(is_quiet_nan_with_sign(back, (bits & 0x8000u) != 0))
                        : back == bits;
    if (!ok && failures++ < 10) ADD_FAILURE() << std::hex << "bf16 0x" << h << " came back as 0x" << back;
  }
  EXPECT_EQ(failures, 0);
}

TEST(BFloat16, MidpointsTieToEvenAndNeighboursRoundToNearest) {
  int failures = 0;
  for (uint32_t c = 0; c < kBF16Inf; ++c) {
    const double lo = half_bits_to_double(kBF16Format, static_cast<uint16_t>(c));
    const double hi = c + 1 == kBF16Inf ? std::ldexp(1.0, 128)
                                        : half_bits_to_double(kBF16Format, static_cast<uint16_t>(c + 1));
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
        const uint16_t got = to_bf16(k.in);
        if (got != k.want && failures++ < 10)
          ADD_FAILURE() << std::hex << "float 0x" << bits_of(k.in) << ": got 0x" << got << ", want 0x" << k.want;
        if (oracle(k.in) != k.want && failures++ < 10)
          ADD_FAILURE() << std::hex << "oracle disagrees for float 0x" << bits_of(k.in);
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(BFloat16, Overflow) {
  // The largest finite bfloat16 is 0x7F7F = 255 * 2^120; the midpoint to the
  // next power of two, 2^128, ties to the even pattern: inf.
  const float max_bf16 = std::ldexp(255.0f, 120);
  const float tie = std::ldexp(511.0f, 119);
  EXPECT_EQ(to_bf16(max_bf16), 0x7F7F);
  EXPECT_EQ(to_bf16(tie), 0x7F80);
  EXPECT_EQ(to_bf16(-tie), 0xFF80);
  EXPECT_EQ(to_bf16(std::nextafter(tie, 0.0f)), 0x7F7F);
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(to_bf16(-std::numeric_limits<float>::max()), 0xFF80);
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(to_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
}

TEST(BFloat16, SubnormalsAndZeros) {
  const float u = std::ldexp(1.0f, -133);  // smallest bfloat16 subnormal
  EXPECT_EQ(to_bf16(u), 0x0001);
  EXPECT_EQ(to_bf16(-u), 0x8001);
  EXPECT_EQ(to_bf16(u / 2), 0x0000);  // tie to even
  EXPECT_EQ(to_bf16(-u / 2), 0x8000);
  EXPECT_EQ(to_bf16(std::nextafter(u / 2, 1.0f)), 0x0001);
  EXPECT_EQ(to_bf16(3 * u / 2), 0x0002);
  EXPECT_EQ(to_bf16(127 * u), 0x007F);       // largest subnormal
  EXPECT_EQ(to_bf16(127.5f * u), 0x0080);    // ties up to the smallest normal
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::min()), 0x0080);
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(to_bf16(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(to_bf16(0.0f), 0x0000);
  EXPECT_EQ(to_bf16(-0.0f), 0x8000);
}

TEST(BFloat16, RoundsToNearestEvenNotTruncation) {
  EXPECT_EQ(to_bf16(float_of(0x3F80FFFFu)), 0x3F81);  // truncation would give 0x3F80
  EXPECT_EQ(to_bf16(float_of(0x3F808000u)), 0x3F80);  // tie, even below
  EXPECT_EQ(to_bf16(float_of(0x3F818000u)), 0x3F82);  // tie, even above
  EXPECT_EQ(to_bf16(float_of(0x3F807FFFu)), 0x3F80);
  EXPECT_EQ(to_bf16(float_of(0xBF80FFFFu)), 0xBF81);
  EXPECT_EQ(to_bf16(float_of(0x3FFFFFFFu)), 0x4000);  // carries into the exponent
}

TEST(BFloat16, NaNStaysQuietNaNWithItsSign) {
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(is_quiet_nan_with_sign(to_bf16(qnan), false));
  EXPECT_TRUE(is_quiet_nan_with_sign(to_bf16(-qnan), true));
  // Payload only in the low 16 bits: rounding must not turn it into inf.
  for (uint32_t b : {0x7F800001u, 0x7F807FFFu, 0x7F808000u, 0x7F80FFFFu, 0x7FBFFFFFu, 0x7FFFFFFFu}) {
    EXPECT_TRUE(is_quiet_nan_with_sign(to_bf16(float_of(b)), false)) << std::hex << b;
    EXPECT_TRUE(is_quiet_nan_with_sign(to_bf16(float_of(b | 0x80000000u)), true)) << std::hex << b;
  }
}

TEST(BFloat16, RandomSweepMatchesOracle) {
  std::mt19937 rng(20240612u);
  int failures = 0;
  for (int i = 0; i < 4'000'000; ++i) {
    const ::testing::AssertionResult r = converts_like_oracle(float_of(static_cast<uint32_t>(rng())));
    if (!r && failures++ < 10) ADD_FAILURE() << r.message();
  }
  // Values close to bfloat16 midpoints: the low 16 bits near 0x8000.
  std::uniform_int_distribution<uint32_t> near_half(0x7FF0u, 0x8010u);
  for (int i = 0; i < 1'000'000; ++i) {
    const uint32_t b = (static_cast<uint32_t>(rng()) & 0xFFFF0000u) | near_half(rng);
    const ::testing::AssertionResult r = converts_like_oracle(float_of(b));
    if (!r && failures++ < 10) ADD_FAILURE() << r.message();
  }
  EXPECT_EQ(failures, 0);
}

TEST(BFloat16, ConstexprUsable) {
  static_assert(bfloat16(1.0f).bits() == 0x3F80);
  static_assert(bfloat16(-2.0f).bits() == 0xC000);
  static_assert(bfloat16(std::numeric_limits<float>::max()).bits() == 0x7F80);
  static_assert(static_cast<float>(bfloat16::from_bits(0x3EAB)) == 0.333984375f);
  static_assert(bfloat16().bits() == 0);
  constexpr bfloat16 h = bfloat16::from_bits(0x7F7F);
  static_assert(static_cast<float>(h) == 0x1.FEp127f);
  EXPECT_EQ(h.bits(), 0x7F7F);
}

TEST(BFloat16, EqualityIsBitwise) {
  EXPECT_TRUE(bfloat16::from_bits(0x7FC0) == bfloat16::from_bits(0x7FC0));
  EXPECT_FALSE(bfloat16::from_bits(0x0000) == bfloat16::from_bits(0x8000));
  EXPECT_TRUE(bfloat16(1.0f) == bfloat16::from_bits(0x3F80));
  EXPECT_FALSE(bfloat16(1.0f) == bfloat16(2.0f));
}

}  // namespace
