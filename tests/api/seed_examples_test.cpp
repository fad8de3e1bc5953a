// The examples of the specification texts sqdiff started from
// (/work/shared/seeds): OpenVINO's IR examples for SquaredDifference-1 and
// Subtract-1, and SPEC section 3's error example.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sqdiff/sqdiff.hpp"
#include "test_support.hpp"

namespace {

using sqdiff::Broadcast;
using sqdiff::BroadcastKind;
using sqdiff::Options;
using sqdiff::Shape;
using sqdiff_test::dtype_of;
using sqdiff_test::error_message;
using sqdiff_test::Op;
using sqdiff_test::op_name;
using sqdiff_test::ref_apply;
using sqdiff_test::run_op;
using sqdiff_test::same_value;

constexpr Op kOps[] = {Op::subtract, Op::squared_difference};

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  if constexpr (std::is_integral_v<T>) {
    for (T& x : v) x = static_cast<T>(rng());  // full range: squares wrap
  } else {
    std::uniform_real_distribution<T> dist(T(-100), T(100));
    for (T& x : v) x = dist(rng);
  }
  return v;
}

// Example 1: [256,56] with [256,56], auto_broadcast="none".
template <class T>
void example_no_broadcast() {
  std::mt19937_64 rng(256056);
  const Shape s{256, 56};
  Options none;
  none.broadcast = Broadcast{BroadcastKind::none, -1};
  EXPECT_EQ(sqdiff::broadcast_shape(s, s, none.broadcast), s);
  const std::vector<T> a = random_values<T>(256 * 56, rng);
  const std::vector<T> b = random_values<T>(256 * 56, rng);
  for (Op op : kOps) {
    for (const Options& options : {none, Options{}}) {
      std::vector<T> out(256 * 56);
      run_op(op, {a.data(), dtype_of<T>, s}, {b.data(), dtype_of<T>, s}, {out.data(), dtype_of<T>, s}, options);
      int failures = 0;
      for (int i = 0; i < 256; ++i) {
        for (int j = 0; j < 56; ++j) {
          const std::size_t k = static_cast<std::size_t>(i * 56 + j);
          const ::testing::AssertionResult r = same_value(ref_apply(op, a[k], b[k]), out[k]);
          if (!r && failures++ < 8) ADD_FAILURE() << op_name(op) << " at [" << i << "," << j << "]: " << r.message();
        }
      }
      EXPECT_EQ(failures, 0);
    }
  }
}

// Example 2: [8,1,6,1] with [7,1,5], numpy, giving [8,7,6,5]:
// out[i][j][k][l] = f(a[i][0][k][0], b[j][0][l]).
template <class T>
void example_numpy_broadcast() {
  std::mt19937_64 rng(8161715);
  const Shape as{8, 1, 6, 1}, bs{7, 1, 5}, os{8, 7, 6, 5};
  EXPECT_EQ(sqdiff::broadcast_shape(as, bs), os);
  const std::vector<T> a = random_values<T>(8 * 6, rng);
  const std::vector<T> b = random_values<T>(7 * 5, rng);
  for (Op op : kOps) {
    std::vector<T> out(8 * 7 * 6 * 5);
    run_op(op, {a.data(), dtype_of<T>, as}, {b.data(), dtype_of<T>, bs}, {out.data(), dtype_of<T>, os});
    int failures = 0;
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 7; ++j)
        for (int k = 0; k < 6; ++k)
          for (int l = 0; l < 5; ++l) {
            const T av = a[static_cast<std::size_t>(i * 6 + k)];
            const T bv = b[static_cast<std::size_t>(j * 5 + l)];
            const T got = out[static_cast<std::size_t>(((i * 7 + j) * 6 + k) * 5 + l)];
            const ::testing::AssertionResult r = same_value(ref_apply(op, av, bv), got);
            if (!r && failures++ < 8)
              ADD_FAILURE() << op_name(op) << " at [" << i << "," << j << "," << k << "," << l
                            << "]: " << r.message();
          }
    EXPECT_EQ(failures, 0);
  }
  // With auto_broadcast="none" the same shapes are an error.
  std::vector<T> out(8 * 7 * 6 * 5);
  Options none;
  none.broadcast = Broadcast{BroadcastKind::none, -1};
  for (Op op : kOps) {
    EXPECT_THROW(run_op(op, {a.data(), dtype_of<T>, as}, {b.data(), dtype_of<T>, bs},
                        {out.data(), dtype_of<T>, os}, none),
                 sqdiff::Error);
  }
}

TEST(SeedExamples, NoBroadcastF32) { example_no_broadcast<float>(); }
TEST(SeedExamples, NoBroadcastI32) { example_no_broadcast<int32_t>(); }
TEST(SeedExamples, NumpyBroadcastF32) { example_numpy_broadcast<float>(); }
TEST(SeedExamples, NumpyBroadcastI32) { example_numpy_broadcast<int32_t>(); }

// The scalar loop above agrees with plain arithmetic on a few hand values.
TEST(SeedExamples, ScalarLoopSanity) {
  EXPECT_EQ(ref_apply(Op::subtract, 3.0f, 5.0f), -2.0f);
  EXPECT_EQ(ref_apply(Op::squared_difference, 3.0f, 5.0f), 4.0f);
  EXPECT_EQ(ref_apply(Op::squared_difference, int32_t{-7}, int32_t{5}), 144);
  EXPECT_EQ(ref_apply(Op::squared_difference, int32_t{0}, int32_t{65536}), 0);
}

// SPEC section 3: "squared_difference: cannot broadcast [3,5,6] with
// [4,10,12] (numpy): dimension 0 is 3 vs 4".
TEST(SeedExamples, SpecErrorExample) {
  const Shape as{3, 5, 6}, bs{4, 10, 12};
  const std::vector<float> a(3 * 5 * 6, 1.0f), b(4 * 10 * 12, 2.0f);
  std::vector<float> out(4 * 10 * 12, -7.0f);
  const std::string tail = "cannot broadcast [3,5,6] with [4,10,12] (numpy): dimension 0 is 3 vs 4";
  for (Op op : kOps) {
    for (const Shape& os : {Shape{3, 5, 6}, Shape{4, 10, 12}}) {
      const std::string msg = error_message([&] {
        run_op(op, {a.data(), sqdiff::DType::f32, as}, {b.data(), sqdiff::DType::f32, bs},
               {out.data(), sqdiff::DType::f32, os});
      });
      EXPECT_EQ(msg, std::string(op_name(op)) + ": " + tail);
    }
  }
  for (float v : out) ASSERT_EQ(v, -7.0f);
  EXPECT_EQ(error_message([&] { (void)sqdiff::broadcast_shape(as, bs); }), "broadcast_shape: " + tail);
}

}  // namespace
