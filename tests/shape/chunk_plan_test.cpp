// ChunkPlan (sqdiff/chunk_plan.hpp): the chunks cover every element of the
// shape exactly once, in row-major order, none larger than asked, and each
// chunk's start, shape and first position agree.
#include "sqdiff/chunk_plan.hpp"

#include <gtest/gtest.h>

#include <random>

#include "sqdiff/error.hpp"

namespace sqdiff {
namespace {

int64_t count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Row-major position of a multi-index.
int64_t position(const Shape& index, const Shape& shape) {
  int64_t p = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) p = p * shape[i] + index[i];
  return p;
}

void check_plan(const Shape& shape, int64_t max_elements) {
  SCOPED_TRACE(::testing::Message() << "rank " << shape.size() << ", max " << max_elements);
  const ChunkPlan plan(shape, max_elements);
  const int64_t total = count(shape);
  int64_t next = 0;
  for (int64_t k = 0; k < plan.chunk_count(); ++k) {
    const Chunk chunk = plan.chunk(k);
    ASSERT_EQ(chunk.start.size(), shape.size());
    EXPECT_EQ(chunk.first, next);                         // follows the previous chunk
    EXPECT_EQ(chunk.first, position(chunk.start, shape));  // start and first agree
    EXPECT_EQ(chunk.elements, shape.empty() ? 1 : count(chunk.shape));
    EXPECT_LE(chunk.elements, std::max<int64_t>(1, max_elements));
    EXPECT_GE(chunk.elements, 1);
    ASSERT_EQ(chunk.shape.size(), shape.size() - (shape.empty() ? 0 : plan.split_dim()));
    for (std::size_t i = 1; i < chunk.shape.size(); ++i) {  // whole dims after the split dim
      EXPECT_EQ(chunk.shape[i], shape[plan.split_dim() + i]);
    }
    for (std::size_t i = plan.split_dim() + 1; i < shape.size(); ++i) EXPECT_EQ(chunk.start[i], 0);
    next += chunk.elements;
  }
  EXPECT_EQ(next, total);
}

TEST(ChunkPlan, ScalarIsOneChunk) {
  const ChunkPlan plan({}, 16);
  ASSERT_EQ(plan.chunk_count(), 1);
  EXPECT_EQ(plan.chunk(0).elements, 1);
}

TEST(ChunkPlan, EmptyShapeHasNoChunks) {
  EXPECT_EQ(ChunkPlan({3, 0, 4}, 5).chunk_count(), 0);
  EXPECT_EQ(ChunkPlan({0}, 1).chunk_count(), 0);
}

TEST(ChunkPlan, SplitsTheOutermostDimThatFits) {
  const ChunkPlan plan({4, 6, 10}, 25);  // a row of 10 fits, a [6,10] slice does not
  EXPECT_EQ(plan.split_dim(), 1U);
  EXPECT_EQ(plan.chunk_count(), 4 * 3);  // blocks of 2 rows
  const Chunk last = plan.chunk(11);
  EXPECT_EQ(last.start, (Shape{3, 4, 0}));
  EXPECT_EQ(last.shape, (Shape{2, 10}));
  EXPECT_EQ(last.first, 3 * 60 + 40);
}

TEST(ChunkPlan, SplitsTheInnermostDimWhenARowIsTooLong) {
  const ChunkPlan plan({2, 7}, 3);
  EXPECT_EQ(plan.split_dim(), 1U);
  EXPECT_EQ(plan.chunk_count(), 2 * 3);
  EXPECT_EQ(plan.chunk(2).shape, (Shape{1}));  // 7 = 3 + 3 + 1
}

TEST(ChunkPlan, RandomShapesAreCoveredInOrder) {
  std::mt19937 rng(17);
  for (int round = 0; round < 400; ++round) {
    const int rank = static_cast<int>(rng() % 5);
    Shape shape;
    for (int i = 0; i < rank; ++i) shape.push_back(static_cast<int64_t>(rng() % 6) + (round % 7 == 0 ? 0 : 1));
    const int64_t max_elements = static_cast<int64_t>(rng() % 40) + 1;
    check_plan(shape, max_elements);
  }
}

TEST(ChunkPlan, RefusesShapesWithoutAnElementCount) {
  EXPECT_THROW(ChunkPlan({2, -1}, 4), Error);
  EXPECT_THROW(ChunkPlan({int64_t{1} << 32, int64_t{1} << 32}, 4), Error);
  // NumPy's rule: the non-zero dims' product must fit, also in an empty shape.
  EXPECT_THROW(ChunkPlan({int64_t{1} << 32, 0, int64_t{1} << 32}, 4), Error);
  EXPECT_EQ(ChunkPlan({int64_t{1} << 31, 0, int64_t{1} << 31}, 4).chunk_count(), 0);
}

}  // namespace
}  // namespace sqdiff
