// Unit tests of widen_short_rows (src/short_rows.hpp): which plans it widens,
// the widened plan exactly, and the index tables or copies it makes. The
// differential and SIMD-target tests check the results of whole calls that
// take these paths.
#include "elementwise/short_rows.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "elementwise/plan.hpp"
#include "kernels/kernel_table.hpp"

namespace {

using sqdiff::detail::make_plan;
using sqdiff::detail::Plan;
using sqdiff::detail::RowKind;
using sqdiff::detail::ShortRowInputs;
using sqdiff::detail::ShortRowScratch;
using sqdiff::detail::widen_short_rows;

// Lookup lanes of f32 on AVX-512, and none (8- and 16-bit integers).
constexpr std::size_t kSixteenLanes = 16;
constexpr std::size_t kNoLookup = 0;

std::vector<float> iota_floats(std::size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

float at(const std::byte* data, int64_t index) {
  float value = 0.0f;
  std::memcpy(&value, data + index * 4, 4);
  return value;
}

Plan spec_example_plan() { return make_plan({{8, 7, 6, 5}, {210, 30, 5, 1}, {6, 0, 1, 0}, {0, 5, 0, 1}}); }

ShortRowInputs inputs_of(const std::vector<float>& a, const std::vector<float>& b) {
  return {reinterpret_cast<const std::byte*>(a.data()), reinterpret_cast<const std::byte*>(b.data())};
}

// The specs' example widened either way: 8 x 7 rows of 30, out contiguous.
void expect_spec_example_rows(const Plan& plan) {
  ASSERT_EQ(plan.rank, 3);
  EXPECT_EQ(plan.size[0], 8);
  EXPECT_EQ(plan.size[1], 7);
  EXPECT_EQ(plan.size[2], 30);
  EXPECT_EQ(plan.stride_out[0], 210);
  EXPECT_EQ(plan.stride_out[1], 30);
  EXPECT_EQ(plan.stride_out[2], 1);
  EXPECT_EQ(plan.element_count, 1680);
}

// The specs' [8,1,6,1] with [7,1,5] where lanes can be looked up: 336 rows of
// 5 become 56 block rows of 30 that read the inputs in place.
TEST(ShortRows, SpecExampleBecomesBlockRowsOfThirty) {
  const std::vector<float> a = iota_floats(48);
  const std::vector<float> b = iota_floats(35);
  Plan plan = spec_example_plan();
  ShortRowInputs inputs = inputs_of(a, b);
  ShortRowScratch scratch;
  ASSERT_TRUE(widen_short_rows(plan, 4, kSixteenLanes, inputs, scratch));

  expect_spec_example_rows(plan);
  EXPECT_EQ(plan.row_kind, RowKind::block);
  EXPECT_EQ(plan.stride_a[0], 6);
  EXPECT_EQ(plan.stride_a[1], 0);
  EXPECT_EQ(plan.stride_b[0], 0);
  EXPECT_EQ(plan.stride_b[1], 5);
  EXPECT_EQ(plan.span_a, 6);
  EXPECT_EQ(plan.span_b, 5);
  EXPECT_EQ(inputs.a, reinterpret_cast<const std::byte*>(a.data()));
  EXPECT_EQ(inputs.b, reinterpret_cast<const std::byte*>(b.data()));
  EXPECT_TRUE(scratch.copies.empty());

  // Every output element reads the a and b elements the broadcast says, and
  // the padding past the row indexes a lane that exists.
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t j = 0; j < 7; ++j) {
      for (int64_t k = 0; k < 6; ++k) {
        for (int64_t l = 0; l < 5; ++l) {
          const std::size_t column = static_cast<std::size_t>(k * 5 + l);
          const int64_t a_row = plan.offset_a + i * plan.stride_a[0] + j * plan.stride_a[1];
          const int64_t b_row = plan.offset_b + i * plan.stride_b[0] + j * plan.stride_b[1];
          ASSERT_EQ(at(inputs.a, a_row + plan.index_a[column]), a[static_cast<std::size_t>(i * 6 + k)]);
          ASSERT_EQ(at(inputs.b, b_row + plan.index_b[column]), b[static_cast<std::size_t>(j * 5 + l)]);
        }
      }
    }
  }
  for (std::size_t pad = 30; pad < 30 + sqdiff::detail::kLookupPadding; ++pad) {
    EXPECT_EQ(plan.index_a[pad], 0);
    EXPECT_EQ(plan.index_b[pad], 0);
  }
}

// The plan and copies of the specs' example widened over copies.
void check_spec_example_copies(const Plan& plan, const ShortRowInputs& inputs, const ShortRowScratch& scratch,
                               const std::vector<float>& a, const std::vector<float>& b) {
  expect_spec_example_rows(plan);
  EXPECT_EQ(plan.row_kind, RowKind::vv);
  EXPECT_EQ(plan.stride_a[0], 30);
  EXPECT_EQ(plan.stride_a[1], 0);
  EXPECT_EQ(plan.stride_a[2], 1);
  EXPECT_EQ(plan.stride_b[0], 0);
  EXPECT_EQ(plan.stride_b[1], 30);
  EXPECT_EQ(plan.stride_b[2], 1);
  EXPECT_EQ(scratch.copies.size(), (8 + 7) * 30 * 4u);

  // Every output element reads the a and b elements the broadcast says.
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t j = 0; j < 7; ++j) {
      for (int64_t k = 0; k < 6; ++k) {
        for (int64_t l = 0; l < 5; ++l) {
          const int64_t column = k * 5 + l;
          ASSERT_EQ(at(inputs.a, i * plan.stride_a[0] + j * plan.stride_a[1] + column), a[i * 6 + k]);
          ASSERT_EQ(at(inputs.b, i * plan.stride_b[0] + j * plan.stride_b[1] + column), b[j * 5 + l]);
        }
      }
    }
  }
}

// Where lanes cannot be looked up (8- and 16-bit integers), or an input's part
// of the block spans more than a vector (f64 on AVX2: 4 lanes, a spans 6), the
// 336 rows of 5 become 56 rows of 30 over copies.
TEST(ShortRows, SpecExampleBecomesRowsOfThirtyOverCopies) {
  for (const std::size_t lookup_lanes : {kNoLookup, std::size_t{4}}) {
    SCOPED_TRACE(lookup_lanes);
    const std::vector<float> a = iota_floats(48);
    const std::vector<float> b = iota_floats(35);
    Plan plan = spec_example_plan();
    ShortRowInputs inputs = inputs_of(a, b);
    ShortRowScratch scratch;
    ASSERT_TRUE(widen_short_rows(plan, 4, lookup_lanes, inputs, scratch));
    check_spec_example_copies(plan, inputs, scratch, a, b);
  }
}

// A row broadcast over a column one: b is constant over the block, a is copied.
TEST(ShortRows, ConstantInputKeepsItsStrides) {
  const std::vector<float> a = iota_floats(12);
  const std::vector<float> b = iota_floats(5);
  // out [5, 4, 3]; a [1, 4, 3] transposed to strides (0, 1, 4); b [5, 1, 1].
  Plan plan = make_plan({{5, 4, 3}, {12, 3, 1}, {0, 1, 4}, {1, 0, 0}});
  ShortRowInputs inputs = inputs_of(a, b);
  ShortRowScratch scratch;
  ASSERT_TRUE(widen_short_rows(plan, 4, kNoLookup, inputs, scratch));
  ASSERT_EQ(plan.rank, 2);
  EXPECT_EQ(plan.row_kind, RowKind::vs);
  EXPECT_EQ(plan.size[1], 12);
  EXPECT_EQ(plan.stride_b[0], 1);
  EXPECT_EQ(plan.stride_b[1], 0);
  EXPECT_EQ(inputs.b, reinterpret_cast<const std::byte*>(b.data()));
  for (int64_t j = 0; j < 4; ++j) {
    for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(at(inputs.a, j * 3 + k), a[j + 4 * k]);
  }
}

// One scratch across calls, as ops.cpp keeps it per thread: a call reuses the
// last call's index tables only for the same block, and each call's tables
// equal those built in a fresh scratch.
TEST(ShortRows, ReusedScratchTablesFollowTheBlock) {
  const std::vector<float> data(4096);
  const auto* p = reinterpret_cast<const std::byte*>(data.data());
  const Plan spec = spec_example_plan();
  // [8,1,4,1] with [7,1,3]: another block; then b's part transposed (the
  // same m and n as the one before, other strides).
  const Plan smaller = make_plan({{8, 7, 4, 3}, {84, 12, 3, 1}, {4, 0, 1, 0}, {0, 3, 0, 1}});
  const Plan transposed = make_plan({{8, 7, 4, 3}, {84, 12, 3, 1}, {4, 0, 1, 0}, {0, 12, 0, 4}});
  ShortRowScratch shared;
  for (const Plan& original : {spec, smaller, smaller, transposed, spec}) {
    Plan reused = original;
    Plan fresh = original;
    ShortRowScratch fresh_scratch;
    ShortRowInputs reused_inputs{p, p};
    ShortRowInputs fresh_inputs{p, p};
    ASSERT_TRUE(widen_short_rows(reused, 4, kSixteenLanes, reused_inputs, shared));
    ASSERT_TRUE(widen_short_rows(fresh, 4, kSixteenLanes, fresh_inputs, fresh_scratch));
    ASSERT_EQ(reused.row_kind, RowKind::block);
    const auto entries = static_cast<std::size_t>(reused.size[static_cast<std::size_t>(reused.rank - 1)]) +
                         sqdiff::detail::kLookupPadding;
    EXPECT_EQ(std::vector<int32_t>(reused.index_a, reused.index_a + entries),
              std::vector<int32_t>(fresh.index_a, fresh.index_a + entries));
    EXPECT_EQ(std::vector<int32_t>(reused.index_b, reused.index_b + entries),
              std::vector<int32_t>(fresh.index_b, fresh.index_b + entries));
  }
}

TEST(ShortRows, LeavesPlansThatDoNotGain) {
  ShortRowScratch scratch;
  const std::vector<float> data(4096);
  const auto* p = reinterpret_cast<const std::byte*>(data.data());
  // Rows of a vector or more: the row kernels are efficient already.
  Plan long_rows = make_plan({{8, 7, 6, 16}, {672, 96, 16, 1}, {96, 0, 16, 1}, {0, 16, 0, 1}});
  // Short rows, but the copy of b (one per row of 15) would be as large as the output.
  Plan costly_copy = make_plan({{64, 3, 5}, {15, 5, 1}, {15, 5, 1}, {1, 0, 0}});
  // A periodic row reads more than its stride says.
  Plan periodic = make_plan({{2, 4}, {4, 1}, {4, 1}, {0, 1}});
  for (Plan* plan : {&long_rows, &costly_copy, &periodic}) {
    const Plan before = *plan;
    ShortRowInputs inputs{p, p};
    EXPECT_FALSE(widen_short_rows(*plan, 4, kSixteenLanes, inputs, scratch));
    EXPECT_EQ(plan->rank, before.rank);
    EXPECT_EQ(plan->row_kind, before.row_kind);
    EXPECT_EQ(inputs.a, p);
    EXPECT_EQ(inputs.b, p);
  }
}

}  // namespace
