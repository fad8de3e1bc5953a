// choose_policy: how many threads, whether the output streams past the caches
// and whether long rows take narrower vectors, from the sizes of a call
// (src/execute.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "elementwise/execute.hpp"
#include "elementwise/plan.hpp"
#include "runtime/cache_info.hpp"

namespace {

using sqdiff::detail::choose_policy;
using sqdiff::detail::ExecutionPolicy;
using sqdiff::detail::make_plan;
using sqdiff::detail::Plan;

constexpr std::size_t kF32 = 4;

// A dense 1-D f32 output of `bytes` (a rank-1 plan needs no memory of that size).
Plan dense_output(std::size_t bytes) {
  const auto n = static_cast<int64_t>(bytes / kF32);
  return make_plan({{n}, {1}, {1}, {0}});
}

// Rows of 4 elements, 8 apart: the output's rows are not dense.
Plan strided_output(std::size_t bytes) {
  const auto rows = static_cast<int64_t>(bytes / kF32 / 4);
  return make_plan({{rows, 4}, {8, 2}, {4, 1}, {0, 0}});
}

const std::size_t kCache = sqdiff::detail::last_level_cache_bytes();
constexpr std::size_t kTinyInputs = 40 << 10;

TEST(ExecutionPolicy, SmallOutputsRunOnOneThreadWithPlainStores) {
  const ExecutionPolicy policy =
      choose_policy(dense_output(sqdiff::detail::kMinParallelOutputBytes - kF32), kF32, kTinyInputs, 2, false);
  EXPECT_EQ(policy.threads, 1);
  EXPECT_FALSE(policy.streaming_stores);
  EXPECT_EQ(choose_policy(dense_output(sqdiff::detail::kMinParallelOutputBytes), kF32, kTinyInputs, 2, false).threads,
            2);
}

TEST(ExecutionPolicy, OneThreadStreamsWhatTheCacheCannotHold) {
  // Output and inputs together decide: a read-heavy call streams sooner.
  EXPECT_FALSE(choose_policy(dense_output(kCache / 2), kF32, kCache / 4, 1, false).streaming_stores);
  EXPECT_TRUE(choose_policy(dense_output(kCache / 2), kF32, kCache, 1, false).streaming_stores);
  EXPECT_TRUE(choose_policy(dense_output(2 * kCache), kF32, kTinyInputs, 1, false).streaming_stores);
}

TEST(ExecutionPolicy, ThreadsWritingFromSmallInputsStreamOnlyFarBeyondTheCache) {
  // Written from tiny inputs by 2 threads: plain stores up to 4x the cache,
  // inputs included.
  EXPECT_FALSE(choose_policy(dense_output(2 * kCache), kF32, kTinyInputs, 2, false).streaming_stores);
  EXPECT_FALSE(choose_policy(dense_output(4 * kCache - kTinyInputs), kF32, kTinyInputs, 2, false).streaming_stores);
  EXPECT_TRUE(choose_policy(dense_output(8 * kCache), kF32, kTinyInputs, 2, false).streaming_stores);
  // Read-heavy with 2 threads: the one-thread rule.
  EXPECT_TRUE(choose_policy(dense_output(kCache), kF32, kCache, 2, false).streaming_stores);
}

TEST(ExecutionPolicy, NeverStreamsInPlaceOrIntoStridedRows) {
  EXPECT_FALSE(choose_policy(dense_output(8 * kCache), kF32, 8 * kCache, 1, true).streaming_stores);
  EXPECT_FALSE(choose_policy(strided_output(8 * kCache), kF32, 8 * kCache, 1, false).streaming_stores);
}

const std::size_t kLevel2 = sqdiff::detail::level2_cache_bytes();

TEST(ExecutionPolicy, LongRowsAreNarrowWhenEachThreadsLevel2HoldsTheCallOrOneThreadWorksInPlace) {
  // Inputs and output counted together.
  EXPECT_TRUE(choose_policy(dense_output(kLevel2 / 4), kF32, kLevel2 / 2, 1, false).narrow_long_rows);
  EXPECT_TRUE(choose_policy(dense_output(kLevel2 / 2), kF32, kLevel2 / 2, 1, false).narrow_long_rows);
  EXPECT_FALSE(choose_policy(dense_output(kLevel2 / 2), kF32, kLevel2 / 2 + kF32, 1, false).narrow_long_rows);
  // In place on one thread, whatever the size; not on two beyond their L2s.
  EXPECT_TRUE(choose_policy(dense_output(4 * kLevel2), kF32, 8 * kLevel2, 1, true).narrow_long_rows);
  const ExecutionPolicy in_place_on_two = choose_policy(dense_output(4 * kLevel2), kF32, 8 * kLevel2, 2, true);
  ASSERT_EQ(in_place_on_two.threads, 2);
  EXPECT_FALSE(in_place_on_two.narrow_long_rows);
  // Two threads, two caches.
  const std::size_t output = std::max(2 * kLevel2 / 3, sqdiff::detail::kMinParallelOutputBytes);
  const ExecutionPolicy shared = choose_policy(dense_output(output), kF32, 2 * kLevel2 - output, 2, false);
  ASSERT_EQ(shared.threads, 2);
  EXPECT_TRUE(shared.narrow_long_rows);
  EXPECT_FALSE(choose_policy(dense_output(output), kF32, 2 * kLevel2 - output + kF32, 2, false).narrow_long_rows);
  // Streamed outputs are far beyond it.
  const ExecutionPolicy streamed = choose_policy(dense_output(2 * kCache), kF32, kTinyInputs, 1, false);
  ASSERT_TRUE(streamed.streaming_stores);
  EXPECT_FALSE(streamed.narrow_long_rows);
}

}  // namespace
