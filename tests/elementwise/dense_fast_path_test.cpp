// Tests of the dense same-shape shortcut (src/dense_fast_path.hpp): which
// calls it takes, that it leaves every other call untouched for the general
// path, and that what it computes is bit-identical to the general path.
#include "elementwise/dense_fast_path.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "oracle.hpp"
#include "sqdiff/sqdiff.hpp"
#include "test_support.hpp"

namespace {

using sqdiff::ConstTensorView;
using sqdiff::DType;
using sqdiff::Options;
using sqdiff::Shape;
using sqdiff::TensorView;
using sqdiff::detail::Op;
using sqdiff::detail::try_dense_fast_path;

constexpr float kUntouched = -7.0f;

struct F32Case {
  std::vector<float> a = std::vector<float>(64, 0.0f);
  std::vector<float> b = std::vector<float>(64, 0.0f);
  std::vector<float> out = std::vector<float>(64, kUntouched);
  F32Case() {
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = 0.5f * static_cast<float>(i);
      b[i] = 3.0f - static_cast<float>(i % 5);
    }
  }
  bool untouched() const {
    for (const float x : out) {
      if (x != kUntouched) return false;
    }
    return true;
  }
};

TEST(DenseFastPath, TakesDenseSameShapeCallsAndComputesThem) {
  F32Case c;
  const Shape shape{4, 4};
  ASSERT_TRUE(try_dense_fast_path(Op::squared_difference, {c.a.data(), DType::f32, shape},
                                  {c.b.data(), DType::f32, shape}, {c.out.data(), DType::f32, shape}, {}));
  for (std::size_t i = 0; i < 16; ++i) {
    const float d = c.a[i] - c.b[i];
    EXPECT_EQ(c.out[i], d * d) << i;
  }
  EXPECT_EQ(c.out[16], kUntouched);  // nothing past the 16 elements
}

TEST(DenseFastPath, TakesExactInPlaceAndEveryShapeRuleThatIsTheIdentity) {
  F32Case c;
  const Shape shape{2, 3};
  const std::vector<float> a = c.a;
  ASSERT_TRUE(try_dense_fast_path(Op::subtract, {c.a.data(), DType::f32, shape}, {c.b.data(), DType::f32, shape},
                                  {c.a.data(), DType::f32, shape}, {}));
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(c.a[i], a[i] - c.b[i]);
  for (const sqdiff::Broadcast mode : {sqdiff::Broadcast{sqdiff::BroadcastKind::none, -1},
                                       sqdiff::Broadcast{sqdiff::BroadcastKind::pdpd, -1},
                                       sqdiff::Broadcast{sqdiff::BroadcastKind::pdpd, 0}}) {
    Options options;
    options.broadcast = mode;
    EXPECT_TRUE(try_dense_fast_path(Op::subtract, {c.a.data(), DType::f32, shape}, {c.b.data(), DType::f32, shape},
                                    {c.out.data(), DType::f32, shape}, options));
  }
}

TEST(DenseFastPath, LeavesEveryOtherCallToTheGeneralPath) {
  const Shape shape{2, 3};
  struct Variation {
    const char* what;
    void (*apply)(ConstTensorView& a, ConstTensorView& b, TensorView& out, Options& options);
  };
  const Variation variations[] = {
      {"b partly overlaps out", [](ConstTensorView&, ConstTensorView& b, TensorView& out, Options&) {
         b.data = static_cast<float*>(out.data) + 1;
       }},
      {"explicit strides", [](ConstTensorView& a, ConstTensorView&, TensorView&, Options&) { a.strides = {3, 1}; }},
      {"shapes differ", [](ConstTensorView&, ConstTensorView& b, TensorView&, Options&) { b.shape = {3}; }},
      {"out shape differs", [](ConstTensorView&, ConstTensorView&, TensorView& out, Options&) { out.shape = {6}; }},
      {"pdpd axis 1", [](ConstTensorView&, ConstTensorView&, TensorView&, Options& o) {
         o.broadcast = {sqdiff::BroadcastKind::pdpd, 1};
       }},
      {"negative threads", [](ConstTensorView&, ConstTensorView&, TensorView&, Options& o) { o.threads = -1; }},
      {"null a", [](ConstTensorView& a, ConstTensorView&, TensorView&, Options&) { a.data = nullptr; }},
      {"empty", [](ConstTensorView& a, ConstTensorView& b, TensorView& out, Options&) {
         a.shape = b.shape = out.shape = {0, 3};
       }},
      {"negative dim", [](ConstTensorView& a, ConstTensorView& b, TensorView& out, Options&) {
         a.shape = b.shape = out.shape = {-2, -3};
       }},
      {"dtypes differ", [](ConstTensorView&, ConstTensorView& b, TensorView&, Options&) { b.dtype = DType::i32; }},
      {"invalid dtype", [](ConstTensorView& a, ConstTensorView& b, TensorView& out, Options&) {
         a.dtype = b.dtype = out.dtype = static_cast<DType>(200);
       }},
      {"above the one-thread size", [](ConstTensorView& a, ConstTensorView& b, TensorView& out, Options&) {
         a.shape = b.shape = out.shape = {1 << 16, 1 << 16};  // never read: declined first
       }},
  };
  for (const Variation& variation : variations) {
    F32Case c;
    ConstTensorView a{c.a.data(), DType::f32, shape};
    ConstTensorView b{c.b.data(), DType::f32, shape};
    TensorView out{c.out.data(), DType::f32, shape};
    Options options;
    variation.apply(a, b, out, options);
    EXPECT_FALSE(try_dense_fast_path(Op::squared_difference, a, b, out, options)) << variation.what;
    EXPECT_TRUE(c.untouched()) << variation.what;
  }
}

// The general path, reached by spelling the dense strides out, is checked
// against the oracle elsewhere; the shortcut must agree with it bit for bit.
TEST(DenseFastPath, BitIdenticalToTheGeneralPathForEveryDType) {
  std::mt19937_64 rng(20261122);
  for (const DType dtype : sqdiff_test::oracle::kAllDTypes) {
    const std::size_t size = sqdiff::dtype_size(dtype);
    for (const Shape& shape : {Shape{1}, Shape{67}, Shape{3, 5, 7}}) {
      const auto count = static_cast<std::size_t>(sqdiff_test::numel(shape));
      std::vector<std::byte> a(count * size);
      std::vector<std::byte> b(count * size);
      for (auto& x : a) x = static_cast<std::byte>(rng());
      for (auto& x : b) x = static_cast<std::byte>(rng());
      const Shape strides = sqdiff_test::dense_strides(shape);
      for (const Op op : {Op::subtract, Op::squared_difference}) {
        std::vector<std::byte> fast(count * size);
        std::vector<std::byte> general(count * size);
        ASSERT_TRUE(try_dense_fast_path(op, {a.data(), dtype, shape}, {b.data(), dtype, shape},
                                        {fast.data(), dtype, shape}, {}));
        const ConstTensorView ga{a.data(), dtype, shape, strides};
        const ConstTensorView gb{b.data(), dtype, shape, strides};
        const TensorView gout{general.data(), dtype, shape, strides};
        if (op == Op::subtract) {
          sqdiff::subtract(ga, gb, gout);
        } else {
          sqdiff::squared_difference(ga, gb, gout);
        }
        EXPECT_EQ(std::memcmp(fast.data(), general.data(), fast.size()), 0)
            << sqdiff_test::oracle::name_of(dtype) << " " << sqdiff_test::shape_str(shape);
      }
    }
  }
}

}  // namespace
