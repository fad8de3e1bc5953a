// Threads (issue 3): the default thread count and its overrides, and results
// that are bit-identical for every thread count on outputs large enough to be
// split, including tiles that start mid-row and the streaming-store path.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "sqdiff/sqdiff.hpp"

namespace {

using sqdiff::DType;
using sqdiff::Shape;

TEST(DefaultThreads, SetAndReset) {
  const int automatic = sqdiff::default_threads();
  EXPECT_GE(automatic, 1);
  sqdiff::set_default_threads(3);
  EXPECT_EQ(sqdiff::default_threads(), 3);
  sqdiff::set_default_threads(0);
  EXPECT_EQ(sqdiff::default_threads(), automatic);
  EXPECT_THROW(sqdiff::set_default_threads(-1), sqdiff::Error);
  EXPECT_EQ(sqdiff::default_threads(), automatic);
}

// The environment is read once per process: check it in a fresh one.
TEST(DefaultThreads, EnvironmentVariable) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  setenv("SQDIFF_NUM_THREADS", "3", 1);
  EXPECT_EXIT(std::exit(sqdiff::default_threads()), testing::ExitedWithCode(3), "");
  setenv("SQDIFF_NUM_THREADS", "not a number", 1);
  EXPECT_EXIT(std::exit(sqdiff::default_threads() >= 1 ? 0 : 1), testing::ExitedWithCode(0), "");
  unsetenv("SQDIFF_NUM_THREADS");
}

struct Case {
  const char* name;
  DType dtype;
  Shape a;
  Shape b;
  Shape a_strides = {};
};

std::vector<unsigned char> random_bytes(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> bytes(n);
  for (auto& byte : bytes) byte = static_cast<unsigned char>(rng());
  return bytes;
}

int64_t count(const Shape& shape) {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return n;
}

int64_t extent(const Shape& shape, const Shape& strides) {
  if (strides.empty()) return count(shape);
  int64_t last = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) last += (shape[i] - 1) * strides[i];
  return last + 1;
}

std::vector<unsigned char> run(const Case& c, int threads, bool in_place) {
  const std::size_t size = sqdiff::dtype_size(c.dtype);
  std::vector<unsigned char> a = random_bytes(static_cast<std::size_t>(extent(c.a, c.a_strides)) * size, 1);
  const std::vector<unsigned char> b = random_bytes(static_cast<std::size_t>(count(c.b)) * size, 2);
  const Shape out_shape = sqdiff::broadcast_shape(c.a, c.b);
  std::vector<unsigned char> out(static_cast<std::size_t>(count(out_shape)) * size);
  const sqdiff::Options options{.threads = threads};
  if (in_place) {
    sqdiff::squared_difference({a.data(), c.dtype, c.a}, {b.data(), c.dtype, c.b}, {a.data(), c.dtype, c.a},
                               options);
    return a;
  }
  sqdiff::squared_difference({a.data(), c.dtype, c.a, c.a_strides}, {b.data(), c.dtype, c.b},
                             {out.data(), c.dtype, out_shape}, options);
  return out;
}

// Sizes above the one-thread threshold (256 KiB of output); the first is
// larger than any last-level cache here, so it takes the streaming path.
const Case kCases[] = {
    {"f32 same shape, 40 MiB (streaming)", DType::f32, {10 << 20}, {10 << 20}},
    // Long rows in 256-bit vectors on AVX-512 (RowKernels::narrow_long_rows):
    // out of place when the call fits L2, in place at any size.
    {"f32 same shape, 1.2 MiB in all (narrow long rows)", DType::f32, {100'003}, {100'003}},
    {"i32 with a scalar, one long row", DType::i32, {300'007}, {1}},
    {"f16 one long row", DType::f16, {3'000'001}, {3'000'001}},
    {"i8 row broadcast, rows of 999", DType::i8, {2'001, 999}, {999}},
    {"u16 column broadcast", DType::u16, {777, 1'031}, {777, 1}},
    {"f64 per-channel", DType::f64, {3, 17, 97, 101}, {1, 17, 1, 1}},
    {"bf16 both-sided", DType::bf16, {61, 1, 67, 1}, {59, 1, 71}},
    {"i32 strided input", DType::i32, {1'500, 701}, {701}, {1'405, 2}},
    {"f32 tiny inner dims (periodic rows)", DType::f32, {1, 32, 32, 2}, {1'024, 1, 1, 2}},
    // Block rows of 30 in batches of 7 that the kernel walks 700 at a time:
    // tiles start inside batches and inside the dim above them.
    {"f32 the specs' kind of block rows, batched", DType::f32, {3, 700, 1, 6, 1}, {3, 1, 7, 1, 5}},
};

TEST(Threads, BitIdenticalForEveryThreadCount) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const std::vector<unsigned char> one = run(c, 1, false);
    for (int threads : {2, 3, 4, 7}) {
      EXPECT_TRUE(run(c, threads, false) == one) << threads << " threads";
    }
  }
}

TEST(Threads, InPlaceBitIdenticalForEveryThreadCount) {
  for (const Case& c : kCases) {
    if (!c.a_strides.empty() || sqdiff::broadcast_shape(c.a, c.b) != c.a) continue;
    SCOPED_TRACE(c.name);
    const std::vector<unsigned char> one = run(c, 1, true);
    for (int threads : {2, 3}) EXPECT_TRUE(run(c, threads, true) == one) << threads << " threads";
  }
}

// The split paths also give the right values, not merely the same ones:
// streamed out of place, and in place (where long rows are narrow).
TEST(Threads, LargeF32MatchesScalarLoop) {
  const int64_t n = 10 << 20;
  std::vector<float> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-1e3f, 1e3f);
  for (int64_t i = 0; i < n; ++i) {
    a[static_cast<std::size_t>(i)] = value(rng);
    b[static_cast<std::size_t>(i)] = value(rng);
  }
  for (int threads : {1, 2}) {
    for (const bool in_place : {false, true}) {
      if (in_place) {
        out = a;
      } else {
        std::fill(out.begin(), out.end(), 0.0f);
      }
      sqdiff::squared_difference({in_place ? out.data() : a.data(), DType::f32, {n}}, {b.data(), DType::f32, {n}},
                                 {out.data(), DType::f32, {n}}, {.threads = threads});
      for (std::size_t i = 0; i < out.size(); ++i) {
        const float d = a[i] - b[i];
        const float expected = d * d;
        ASSERT_EQ(std::memcmp(&out[i], &expected, sizeof(float)), 0)
            << "element " << i << ", " << threads << " threads" << (in_place ? ", in place" : "");
      }
    }
  }
}

}  // namespace
