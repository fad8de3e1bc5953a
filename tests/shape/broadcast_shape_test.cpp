// sqdiff::broadcast_shape against every row of SPEC section 3, the none rules,
// zero-sized and negative dims, element-count overflow, and the error messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "sqdiff/sqdiff.hpp"
#include "test_support.hpp"

namespace {

using sqdiff::Broadcast;
using sqdiff::BroadcastKind;
using sqdiff::Shape;
using sqdiff_test::error_message;
using sqdiff_test::shape_str;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr Broadcast kNumpy{BroadcastKind::numpy, -1};
constexpr Broadcast kNone{BroadcastKind::none, -1};
constexpr Broadcast pdpd(int64_t axis) { return Broadcast{BroadcastKind::pdpd, axis}; }

std::string mode_str(Broadcast m) {
  switch (m.kind) {
    case BroadcastKind::none: return "(none)";
    case BroadcastKind::numpy: return "(numpy)";
    case BroadcastKind::pdpd: return "(pdpd, axis " + std::to_string(m.axis) + ")";
  }
  return "(?)";
}

// An error from broadcast_shape: prefix, both shapes and the mode are named.
void expect_error(const Shape& a, const Shape& b, Broadcast mode) {
  SCOPED_TRACE(shape_str(a) + " with " + shape_str(b) + " " + mode_str(mode));
  const std::string msg = error_message([&] { (void)sqdiff::broadcast_shape(a, b, mode); });
  EXPECT_THAT(msg, StartsWith("broadcast_shape: "));
  EXPECT_THAT(msg, HasSubstr(shape_str(a)));
  EXPECT_THAT(msg, HasSubstr(shape_str(b)));
  EXPECT_THAT(msg, HasSubstr(mode_str(mode)));
}

// The exact message of a numpy dimension mismatch.
void expect_numpy_mismatch(const Shape& a, const Shape& b, int dim, int64_t x, int64_t y) {
  const std::string expected = "broadcast_shape: cannot broadcast " + shape_str(a) + " with " +
                               shape_str(b) + " (numpy): dimension " + std::to_string(dim) +
                               " is " + std::to_string(x) + " vs " + std::to_string(y);
  EXPECT_EQ(error_message([&] { (void)sqdiff::broadcast_shape(a, b, kNumpy); }), expected);
}

struct Row {
  Shape a;
  Shape b;
  Shape out;
};

// ---------------------------------------------------------------------------
// numpy

TEST(BroadcastShapeNumpy, SpecTableSuccessRows) {
  const std::vector<Row> rows = {
      {{}, {}, {}},
      {{2, 3}, {1}, {2, 3}},
      {{3}, {2, 3}, {2, 3}},
      {{2, 3, 5}, {}, {2, 3, 5}},
      {{2, 1, 5}, {1, 4, 5}, {2, 4, 5}},
      {{6, 5}, {2, 1, 5}, {2, 6, 5}},
      {{2, 1, 5}, {4, 1}, {2, 4, 5}},
      {{3, 2, 1, 4}, {5, 4}, {3, 2, 5, 4}},
      {{1, 5, 3}, {5, 2, 1, 3}, {5, 2, 5, 3}},
      {{8, 1, 6, 1}, {7, 1, 5}, {8, 7, 6, 5}},
      {{1, 0, 3}, {3}, {1, 0, 3}},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(shape_str(r.a) + " with " + shape_str(r.b));
    EXPECT_EQ(sqdiff::broadcast_shape(r.a, r.b, kNumpy), r.out);
    // numpy broadcasting is symmetric.
    EXPECT_EQ(sqdiff::broadcast_shape(r.b, r.a, kNumpy), r.out);
  }
}

TEST(BroadcastShapeNumpy, SpecTableErrorRowsHaveExactMessages) {
  expect_numpy_mismatch({3}, {2}, 0, 3, 2);
  expect_numpy_mismatch({3, 1, 5}, {4, 4, 5}, 0, 3, 4);
  // Same element count is not the same shape; the first mismatch is reported.
  expect_numpy_mismatch({2, 3}, {3, 2}, 0, 2, 3);
  // SPEC's error example.
  expect_numpy_mismatch({3, 5, 6}, {4, 10, 12}, 0, 3, 4);
}

TEST(BroadcastShapeNumpy, MismatchDimensionIsCountedInTheRightAlignedOutput) {
  expect_numpy_mismatch({3, 1, 5}, {2, 4, 4, 5}, 1, 3, 4);
  expect_numpy_mismatch({2, 4, 4, 5}, {3, 1, 5}, 1, 4, 3);
  expect_numpy_mismatch({7}, {1, 1, 1, 5}, 3, 7, 5);
}

TEST(BroadcastShapeNumpy, ZeroSizedDims) {
  EXPECT_EQ(sqdiff::broadcast_shape({1}, {0}, kNumpy), (Shape{0}));
  EXPECT_EQ(sqdiff::broadcast_shape({0}, {1}, kNumpy), (Shape{0}));
  EXPECT_EQ(sqdiff::broadcast_shape({0}, {0}, kNumpy), (Shape{0}));
  EXPECT_EQ(sqdiff::broadcast_shape({2, 1, 4}, {0, 1}, kNumpy), (Shape{2, 0, 4}));
  EXPECT_EQ(sqdiff::broadcast_shape({0, 3}, {}, kNumpy), (Shape{0, 3}));
  // 0 is not 1: it does not broadcast against 5.
  expect_numpy_mismatch({0}, {5}, 0, 0, 5);
  expect_numpy_mismatch({5}, {0}, 0, 5, 0);
  expect_numpy_mismatch({2, 0}, {3, 1}, 0, 2, 3);
}

TEST(BroadcastShapeNumpy, AxisIsIgnored) {
  for (int64_t axis : {int64_t{-7}, int64_t{-1}, int64_t{0}, int64_t{3}, int64_t{100}}) {
    EXPECT_EQ(sqdiff::broadcast_shape({2, 1, 5}, {4, 1}, Broadcast{BroadcastKind::numpy, axis}),
              (Shape{2, 4, 5}))
        << "axis " << axis;
  }
}

TEST(BroadcastShapeNumpy, NoRankLimit) {
  Shape a(30, 1), b(25, 1), out(30, 1);
  a[0] = 2;
  b[24] = 3;
  out[0] = 2;
  out[29] = 3;
  EXPECT_EQ(sqdiff::broadcast_shape(a, b, kNumpy), out);
  const Shape ones(200, 1);
  EXPECT_EQ(sqdiff::broadcast_shape(ones, {}, kNumpy), ones);
}

TEST(BroadcastShape, DefaultModeIsNumpy) {
  static_assert(Broadcast{}.kind == BroadcastKind::numpy);
  static_assert(Broadcast{}.axis == -1);
  EXPECT_EQ(sqdiff::broadcast_shape({2, 1, 5}, {4, 1}), (Shape{2, 4, 5}));
  EXPECT_EQ(sqdiff::broadcast_shape({8, 1, 6, 1}, {7, 1, 5}), (Shape{8, 7, 6, 5}));
  EXPECT_EQ(error_message([] { (void)sqdiff::broadcast_shape({3}, {2}); }),
            "broadcast_shape: cannot broadcast [3] with [2] (numpy): dimension 0 is 3 vs 2");
}

// ---------------------------------------------------------------------------
// none

TEST(BroadcastShapeNone, IdenticalShapesAreTheOutput) {
  EXPECT_EQ(sqdiff::broadcast_shape({}, {}, kNone), (Shape{}));
  EXPECT_EQ(sqdiff::broadcast_shape({256, 56}, {256, 56}, kNone), (Shape{256, 56}));
  EXPECT_EQ(sqdiff::broadcast_shape({1, 1}, {1, 1}, kNone), (Shape{1, 1}));
  EXPECT_EQ(sqdiff::broadcast_shape({0, 3}, {0, 3}, kNone), (Shape{0, 3}));
  // The axis is ignored.
  EXPECT_EQ(sqdiff::broadcast_shape({2, 3}, {2, 3}, Broadcast{BroadcastKind::none, 9}),
            (Shape{2, 3}));
}

TEST(BroadcastShapeNone, BroadcastsNothing) {
  expect_error({2, 4}, {1, 2, 4}, kNone);
  expect_error({1, 2, 4}, {2, 4}, kNone);
  expect_error({3, 4}, {3, 1}, kNone);
  expect_error({3, 1}, {3, 4}, kNone);
  expect_error({}, {1}, kNone);
  expect_error({2, 3}, {}, kNone);
  expect_error({2, 3}, {3, 2}, kNone);
  expect_error({0}, {1}, kNone);
}

// ---------------------------------------------------------------------------
// pdpd

struct PdpdRow {
  Shape a;
  Shape b;
  int64_t axis;
};

TEST(BroadcastShapePdpd, SpecTableSuccessRows) {
  const std::vector<PdpdRow> rows = {
      {{2, 3, 4, 5}, {3, 4}, 1},
      {{2, 3, 4, 5}, {3, 1}, 1},
      {{2, 3, 4, 5}, {4, 5}, -1},
      {{2, 3, 4, 5}, {4, 5}, 2},
      {{2, 3, 4, 5}, {1, 3}, 0},
      {{2, 3, 4, 5}, {}, -1},
      {{2, 3, 4, 5}, {5}, -1},
      {{2, 3, 4, 5}, {5}, 3},
      {{2, 3, 4, 5}, {3, 1, 5}, 1},
      {{8, 7, 6, 5}, {7, 1, 5}, -1},
  };
  for (const PdpdRow& r : rows) {
    SCOPED_TRACE(shape_str(r.a) + " with " + shape_str(r.b) + " axis " + std::to_string(r.axis));
    EXPECT_EQ(sqdiff::broadcast_shape(r.a, r.b, pdpd(r.axis)), r.a);
  }
}

TEST(BroadcastShapePdpd, SpecTableErrorRows) {
  expect_error({2, 3, 4, 5}, {3, 1}, pdpd(-1));       // aligned at 2: 3 vs 4
  expect_error({2, 3, 4, 5}, {3, 1}, pdpd(-2));       // axis < -1
  expect_error({2, 3, 4, 1}, {2, 3, 4, 5}, pdpd(-1)); // b larger than a
  expect_error({8, 1, 6, 1}, {7, 1, 5}, pdpd(1));     // only b broadcasts
}

TEST(BroadcastShapePdpd, MoreRules) {
  // Rank 0 with rank 0; zero-sized dims.
  EXPECT_EQ(sqdiff::broadcast_shape({}, {}, pdpd(-1)), (Shape{}));
  EXPECT_EQ(sqdiff::broadcast_shape({}, {}, pdpd(0)), (Shape{}));
  EXPECT_EQ(sqdiff::broadcast_shape({2, 0}, {0}, pdpd(-1)), (Shape{2, 0}));
  EXPECT_EQ(sqdiff::broadcast_shape({2, 0}, {1}, pdpd(-1)), (Shape{2, 0}));
  EXPECT_EQ(sqdiff::broadcast_shape({2, 3}, {2, 3}, pdpd(0)), (Shape{2, 3}));
  // Trailing 1s of b are not dropped: [3,1] at axis -1 of a rank-3 a sits at 1.
  EXPECT_EQ(sqdiff::broadcast_shape({4, 3, 5}, {3, 1}, pdpd(-1)), (Shape{4, 3, 5}));
  expect_error({4, 5, 3}, {3, 1}, pdpd(-1));
  // axis + rank(b) > rank(a).
  expect_error({2, 3, 4, 5}, {4, 5}, pdpd(3));
  expect_error({2, 3, 4, 5}, {5}, pdpd(4));
  expect_error({}, {}, pdpd(1));
  // rank(b) > rank(a), even when a would broadcast under numpy.
  expect_error({5}, {1, 5}, pdpd(-1));
  expect_error({}, {1}, pdpd(-1));
  // A b dim larger than the a dim, or 0 vs 1 / 1 vs 0 the wrong way round.
  expect_error({2, 1, 4, 5}, {3}, pdpd(1));
  expect_error({2, 1}, {0}, pdpd(-1));
  expect_error({2, 3, 4, 5}, {3, 5}, pdpd(1));
  // Very negative axes.
  expect_error({2, 3}, {3}, pdpd(-3));
  expect_error({2, 3}, {3}, pdpd(std::numeric_limits<int64_t>::min()));
  expect_error({2, 3}, {3}, pdpd(std::numeric_limits<int64_t>::max()));
}

TEST(BroadcastShapePdpd, MessageShowsTheAxisAsGiven) {
  const std::string m1 =
      error_message([] { (void)sqdiff::broadcast_shape({8, 1, 6, 1}, {7, 1, 5}, pdpd(1)); });
  EXPECT_THAT(m1, HasSubstr("(pdpd, axis 1)"));
  const std::string m2 =
      error_message([] { (void)sqdiff::broadcast_shape({2, 3, 4, 5}, {3, 1}, pdpd(-2)); });
  EXPECT_THAT(m2, HasSubstr("(pdpd, axis -2)"));
  const std::string m3 =
      error_message([] { (void)sqdiff::broadcast_shape({2, 3, 4, 5}, {3, 1}, pdpd(-1)); });
  EXPECT_THAT(m3, HasSubstr("(pdpd, axis -1)"));
}

// ---------------------------------------------------------------------------
// Shapes that are invalid in every mode

TEST(BroadcastShape, NegativeDimIsAnError) {
  for (Broadcast mode : {kNumpy, kNone, pdpd(-1)}) {
    expect_error({2, -1}, {2, -1}, mode);
    expect_error({-3}, {1}, mode);
    expect_error({3}, {-1}, mode);
    expect_error({2, 3}, {2, -3}, mode);
  }
  // Even where the negative dim would otherwise broadcast against a 1.
  expect_error({-1}, {1}, kNumpy);
  expect_error({1, -2}, {}, kNumpy);
}

TEST(BroadcastShape, ElementCountOverflowIsAnError) {
  const int64_t two32 = int64_t{1} << 32;
  for (Broadcast mode : {kNumpy, pdpd(-1)}) expect_error({two32, two32}, {}, mode);
  expect_error({two32, two32}, {two32, two32}, kNone);
  expect_error({}, {two32, two32}, kNumpy);
  expect_error({2, int64_t{1} << 62}, {1}, kNumpy);  // exactly 2^63
  expect_error({3, 3, 3, int64_t{1} << 60}, {}, kNumpy);
  // Each input fits, the broadcast output does not.
  expect_error({two32, 1}, {two32}, kNumpy);
  expect_error({int64_t{1} << 40, 1}, {1, int64_t{1} << 40}, kNumpy);
}

// NumPy's count: a 0 dim does not excuse the other dims from fitting.
TEST(BroadcastShape, EmptyShapeWhoseOtherDimsOverflowIsAnError) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  expect_error({0, kMax, kMax}, {}, kNumpy);
  expect_error({0, kMax, kMax}, {0, kMax, kMax}, kNone);
  expect_error({0, kMax, 2}, {1}, pdpd(-1));
  expect_error({}, {3, 0, int64_t{1} << 62}, kNumpy);
  EXPECT_EQ(sqdiff::broadcast_shape({0, kMax}, {1}, kNumpy), (Shape{0, kMax}));
  EXPECT_EQ(sqdiff::broadcast_shape({0, 1 << 20}, {1 << 20}, kNumpy), (Shape{0, 1 << 20}));
}

TEST(BroadcastShape, ElementCountUpToInt64MaxIsFine) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(sqdiff::broadcast_shape({kMax}, {}, kNumpy), (Shape{kMax}));
  EXPECT_EQ(sqdiff::broadcast_shape({kMax}, {1}, kNumpy), (Shape{kMax}));
  // 2^63 - 1 = 7 * 7 * 73 * 127 * 337 * 92737 * 649657.
  const Shape factors{7, 7, 73, 127, 337, 92737, 649657};
  EXPECT_EQ(sqdiff::broadcast_shape(factors, {1}, kNumpy), factors);
  // 2^62 with a 1 in front.
  EXPECT_EQ(sqdiff::broadcast_shape({1, int64_t{1} << 62}, {}, kNumpy),
            (Shape{1, int64_t{1} << 62}));
}

TEST(BroadcastShape, ErrorIsSqdiffErrorAndInvalidArgument) {
  static_assert(std::is_base_of_v<std::invalid_argument, sqdiff::Error>);
  EXPECT_THROW((void)sqdiff::broadcast_shape({3}, {2}), sqdiff::Error);
  EXPECT_THROW((void)sqdiff::broadcast_shape({3}, {2}), std::invalid_argument);
  EXPECT_THROW((void)sqdiff::broadcast_shape({2, 4}, {1, 2, 4}, kNone), std::invalid_argument);
  EXPECT_THROW((void)sqdiff::broadcast_shape({2, 3}, {3}, pdpd(-2)), std::invalid_argument);
  EXPECT_THROW((void)sqdiff::broadcast_shape({-1}, {1}), std::invalid_argument);
}

TEST(BroadcastShape, RankZeroShapesFormatAsEmptyBrackets) {
  const std::string msg =
      error_message([] { (void)sqdiff::broadcast_shape({}, {2, 3}, kNone); });
  EXPECT_THAT(msg, StartsWith("broadcast_shape: "));
  EXPECT_THAT(msg, HasSubstr("[]"));
  EXPECT_THAT(msg, HasSubstr("[2,3]"));
  EXPECT_THAT(msg, HasSubstr("(none)"));
}

}  // namespace
