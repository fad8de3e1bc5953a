// Tests of the pool's adaptive spin (src/runtime/spin_budget.hpp): the budget
// shrinks to a few gaps in a burst of calls, grows to catch a gap a longer
// spin would have caught, and decays towards its minimum for isolated calls.
// Pure policy, no clocks: the pool feeds it the gaps it measures.
#include "runtime/spin_budget.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using sqdiff::detail::SpinBudget;

TEST(SpinBudget, StartsAtTheMaximumSoThatTheFirstBurstIsCaught) {
  const SpinBudget budget;
  EXPECT_EQ(budget.budget_ns(), SpinBudget::kMaxNs);
}

TEST(SpinBudget, ABurstOfShortGapsBringsTheBudgetDownToAFewGaps) {
  SpinBudget budget;
  for (int i = 0; i < 100; ++i) budget.record_gap(3'000);
  // kGapsCovered gaps of 3 us, approached from above by eighths.
  EXPECT_EQ(budget.budget_ns(), SpinBudget::kGapsCovered * 3'000);
}

TEST(SpinBudget, OneShortGapInASlowLoopDoesNotCutTheBudgetShort) {
  SpinBudget budget;
  for (int i = 0; i < 100; ++i) budget.record_gap(40'000);
  EXPECT_EQ(budget.budget_ns(), SpinBudget::kGapsCovered * 40'000);
  budget.record_gap(1'000);
  // Moves an eighth of the way down only, still covering the next 40 us gap.
  EXPECT_GT(budget.budget_ns(), 40'000 * 3);
}

TEST(SpinBudget, AGapALongerSpinWouldHaveCaughtRaisesTheBudgetAtOnce) {
  SpinBudget budget;
  for (int i = 0; i < 100; ++i) budget.record_gap(2'000);
  budget.record_gap(30'000);  // missed: the worker slept through it
  EXPECT_EQ(budget.budget_ns(), SpinBudget::kGapsCovered * 30'000);
}

TEST(SpinBudget, IsolatedCallsHalveTheBudgetDownToTheMinimum) {
  SpinBudget budget;
  budget.record_gap(10'000'000);
  EXPECT_EQ(budget.budget_ns(), SpinBudget::kMaxNs / 2);
  for (int i = 0; i < 20; ++i) budget.record_gap(10'000'000);
  EXPECT_EQ(budget.budget_ns(), SpinBudget::kMinNs);
}

TEST(SpinBudget, NeverLeavesItsBounds) {
  SpinBudget budget;
  const int64_t gaps[] = {0, 1, SpinBudget::kMaxNs, SpinBudget::kMaxNs + 1, INT64_MAX / 8, 50'000, 0};
  for (const int64_t gap : gaps) {
    budget.record_gap(gap);
    EXPECT_GE(budget.budget_ns(), SpinBudget::kMinNs);
    EXPECT_LE(budget.budget_ns(), SpinBudget::kMaxNs);
  }
}

}  // namespace
