// How long an idle pool worker spins before it sleeps, adapted to how the
// caller actually calls.
//
// Spinning pays only when the next call comes before the spin ends: then the
// worker joins it at once instead of paying a futex wake-up (tens of
// microseconds on a VM). Every microsecond spun after the last call of a
// burst is a core taken from the caller's next work, which on a 2-core
// machine is half of it. So, like oneTBB's and OpenMP's passive waiting, the
// budget follows the gaps the workers observe between the end of their work
// and the next call:
// - a burst of back-to-back calls (gaps of a few microseconds) keeps a budget
//   of a few times the typical gap, so the tail after the burst is short;
// - a gap the spin just missed, but that a longer spin (up to kMax) would have
//   caught, raises the budget to catch the next one (a loop with some work
//   between calls);
// - gaps longer than kMax (isolated calls) halve the budget towards kMin, so
//   a program that calls now and then stops paying for spins that never pay.
// The state is one word updated with relaxed atomics: racing workers may lose
// an update, which only delays the adaptation by a call.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace sqdiff::detail {

class SpinBudget {
 public:
  static constexpr int64_t kMinNs = 2'000;
  static constexpr int64_t kMaxNs = 200'000;
  // The budget covers this many typical gaps: gaps within a burst vary, and
  // a miss costs a wake-up, far more than spinning a little longer.
  static constexpr int64_t kGapsCovered = 4;

  int64_t budget_ns() const { return budget_ns_.load(std::memory_order_relaxed); }

  // One wait of a worker ended after `gap_ns` (spinning or asleep).
  void record_gap(int64_t gap_ns) {
    const int64_t budget = budget_ns();
    int64_t next = budget;
    if (gap_ns > kMaxNs) {
      next = budget / 2;
    } else {
      // Caught, or would have been caught by a longer spin: cover the gap.
      // A smaller gap lowers the budget gradually (an average over about
      // eight gaps), so one quick call in a slow loop does not cut it short.
      const int64_t wanted = kGapsCovered * gap_ns;
      next = wanted >= budget ? wanted : budget - (budget - wanted + 7) / 8;
    }
    budget_ns_.store(std::clamp(next, kMinNs, kMaxNs), std::memory_order_relaxed);
  }

 private:
  std::atomic<int64_t> budget_ns_{kMaxNs};
};

}  // namespace sqdiff::detail
