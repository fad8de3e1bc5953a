// SPEC section 2 and 4: subnormals are kept and results rounded to nearest
// even even when the caller runs with flush-to-zero, denormals-are-zero or
// another rounding mode; the caller's settings are restored after the call.
#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <xmmintrin.h>

#include <bit>
#include <cstring>
#include <cstdint>
#include <vector>

#include "kernels/kernel_table.hpp"
#include "sqdiff/sqdiff.hpp"

namespace {

using sqdiff::DType;

// Flush-to-zero, denormals-are-zero and round toward zero, as a -ffast-math
// program with an odd rounding mode might run.
constexpr unsigned kHostileBits = 0x8000u | 0x0040u | 0x6000u;

class HostileFpEnvironment {
 public:
  HostileFpEnvironment() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kHostileBits); }
  ~HostileFpEnvironment() { _mm_setcsr(saved_); }
  HostileFpEnvironment(const HostileFpEnvironment&) = delete;
  HostileFpEnvironment& operator=(const HostileFpEnvironment&) = delete;

 private:
  unsigned saved_;
};

// Lengths that cover a SIMD body and a tail on every target.
constexpr int64_t kLength = 67;

// Same shapes take the dense fast path; a b of shape [1] (broadcast) the
// general one.
enum class Path { dense, general };

template <typename T>
std::vector<T> run(DType dtype, bool squared, T a_value, T b_value, Path path = Path::dense) {
  const int64_t b_length = path == Path::dense ? kLength : 1;
  std::vector<T> a(kLength, a_value), b(static_cast<std::size_t>(b_length), b_value), out(kLength);
  const sqdiff::ConstTensorView va{a.data(), dtype, {kLength}};
  const sqdiff::ConstTensorView vb{b.data(), dtype, {b_length}};
  const sqdiff::TensorView vo{out.data(), dtype, {kLength}};
  const unsigned before = _mm_getcsr();
  if (squared) {
    sqdiff::squared_difference(va, vb, vo);
  } else {
    sqdiff::subtract(va, vb, vo);
  }
  EXPECT_EQ(_mm_getcsr(), before) << "the caller's MXCSR was not restored";
  return out;
}

template <typename T>
void expect_all(const std::vector<T>& values, T expected, const char* what) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(std::memcmp(&values[i], &expected, sizeof(T)), 0) << what << " at " << i;
  }
}

// The expected values are computed here, in the default environment, by plain
// scalar arithmetic; the library then runs in the hostile one.
struct Expected {
  float f32_min_subnormal = std::bit_cast<float>(1u);
  double f64_tiny = 1e-160;
  double f64_tiny_squared = 1e-160 * 1e-160;  // subnormal in f64
  float f32_rounded = 1.0f - 1e-8f;           // 1.0 when rounded to nearest
};

void check_ieee_defaults(const Expected& expected, Path path) {
  ASSERT_NE(expected.f64_tiny_squared, 0.0);
  ASSERT_EQ(expected.f32_rounded, 1.0f);
  const HostileFpEnvironment hostile;
  // Denormal inputs are not zeroed (DAZ) and denormal results not flushed (FTZ).
  expect_all(run<float>(DType::f32, false, expected.f32_min_subnormal, 0.0f, path), expected.f32_min_subnormal,
             "f32 subnormal input");
  expect_all(run<double>(DType::f64, true, expected.f64_tiny, 0.0, path), expected.f64_tiny_squared,
             "f64 subnormal result");
  // Round to nearest even, not toward zero.
  expect_all(run<float>(DType::f32, false, 1.0f, 1e-8f, path), expected.f32_rounded, "f32 rounding");
  // f16: 2^-14 - 2^-24 = the largest f16 subnormal (0x03FF); subnormal f16
  // inputs must not be zeroed on the way through f32 either.
  expect_all(run<uint16_t>(DType::f16, false, 0x0400, 0x0001, path), static_cast<uint16_t>(0x03FF),
             "f16 subnormal result");
  // bf16: 1 - 2^-9 is a tie between 1 - 2^-8 and 1; to even gives 1 (0x3F80),
  // toward zero would give 0x3F7F.
  expect_all(run<uint16_t>(DType::bf16, false, 0x3F80, 0x3B00, path), static_cast<uint16_t>(0x3F80), "bf16 tie");
  // Integers ignore MXCSR; the caller's settings still come back (run() checks).
  expect_all(run<int32_t>(DType::i32, true, 7, -5, path), 144, "i32");
}

TEST(FpEnvironment, IeeeDefaultsHoldOnEveryTarget) {
  int ran = 0;
  for (int64_t targets = sqdiff::detail::compiled_targets() & hwy::SupportedTargets(); targets != 0;
       targets &= targets - 1) {
    const int64_t target = targets & -targets;
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    check_ieee_defaults(Expected{}, Path::dense);
    check_ieee_defaults(Expected{}, Path::general);
    ++ran;
  }
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_GE(ran, 2);
}

TEST(FpEnvironment, DefaultEnvironmentIsNotWritten) {
  const unsigned before = _mm_getcsr();
  std::vector<float> a(8, 3.0f), b(8, 1.0f), out(8);
  sqdiff::squared_difference({a.data(), DType::f32, {8}}, {b.data(), DType::f32, {8}}, {out.data(), DType::f32, {8}});
  EXPECT_EQ(_mm_getcsr(), before);
  EXPECT_EQ(out[0], 4.0f);
}

}  // namespace
