// Tests of the tile pool (src/runtime/thread_pool.hpp): every tile runs exactly
// once, on no more threads than asked for, through back-to-back and concurrent
// calls; the caller runs a prefix of the tiles and the workers the rest,
// claiming runs of up to 4 tiles.
#include "runtime/thread_pool.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

using sqdiff::detail::parallel_for;

// Set in a forked child: there LeakSanitizer would report what the parent's
// other threads own (their stacks are not in the child), which is no leak.
bool g_forked_child = false;

// Waits up to `seconds` for the child; kills it if it is still running.
// Returns its exit status, or -1 if it did not exit in time (or died of a signal).
int wait_for_exit(pid_t child, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return -1;
}

// Counts how often each element of [0, range) was covered, and by which threads.
struct Coverage {
  explicit Coverage(std::size_t range) : hits(range) {}

  static void record(void* context, std::size_t begin, std::size_t count) {
    auto& self = *static_cast<Coverage*>(context);
    for (std::size_t i = begin; i < begin + count; ++i) self.hits[i].fetch_add(1, std::memory_order_relaxed);
    const std::lock_guard<std::mutex> lock(self.mutex);
    self.threads.insert(std::this_thread::get_id());
    ++self.tiles;
  }

  // The index of the first element not covered exactly once, or range.
  std::size_t first_miss() const {
    for (std::size_t i = 0; i < hits.size(); ++i) {
      if (hits[i].load() != 1) return i;
    }
    return hits.size();
  }

  std::vector<std::atomic<int>> hits;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::size_t tiles = 0;
};

TEST(ThreadPool, EveryElementOnceForEveryShapeOfJob) {
  for (const std::size_t tile : {std::size_t{1}, std::size_t{7}, std::size_t{64}}) {
    for (const std::size_t range : {std::size_t{1}, tile - (tile > 1 ? 1 : 0), tile, tile + 1, 100 * tile + 3}) {
      for (const int threads : {1, 2, 3, 5}) {
        Coverage coverage(range);
        parallel_for(threads, range, tile, &Coverage::record, &coverage);
        EXPECT_EQ(coverage.first_miss(), range) << "range " << range << " tile " << tile << " threads " << threads;
        EXPECT_EQ(coverage.tiles, (range + tile - 1) / tile);
        EXPECT_LE(coverage.threads.size(), static_cast<std::size_t>(threads));
      }
    }
  }
}

TEST(ThreadPool, NeverMoreThreadsThanAskedAfterALargerCall) {
  Coverage wide(4096);
  parallel_for(4, wide.hits.size(), 1, &Coverage::record, &wide);
  EXPECT_EQ(wide.first_miss(), wide.hits.size());
  for (int round = 0; round < 50; ++round) {
    Coverage narrow(4096);
    parallel_for(2, narrow.hits.size(), 1, &Coverage::record, &narrow);
    ASSERT_EQ(narrow.first_miss(), narrow.hits.size());
    ASSERT_LE(narrow.threads.size(), 2u);
  }
}

// Many short calls in a row: a worker that wakes late for one call must
// neither run a tile twice nor take one from the next call.
TEST(ThreadPool, BackToBackCallsLoseNoTile) {
  for (int call = 0; call < 20000; ++call) {
    const std::size_t range = 1 + static_cast<std::size_t>(call % 37);
    Coverage coverage(range);
    parallel_for(2 + call % 2, range, 1 + static_cast<std::size_t>(call % 3), &Coverage::record, &coverage);
    ASSERT_EQ(coverage.first_miss(), range) << "call " << call;
  }
}

// Which thread ran each tile of one call (tiles of one element). A tile lasts
// a microsecond, so that a worker has the time to join even a busy machine.
struct TileOwners {
  explicit TileOwners(std::size_t tiles) : owner(tiles) {}
  static void record(void* context, std::size_t begin, std::size_t /*count*/) {
    static_cast<TileOwners*>(context)->owner[begin] = std::this_thread::get_id();
    const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(1);
    while (std::chrono::steady_clock::now() < end) {
    }
  }
  std::vector<std::thread::id> owner;
};

// The caller takes tiles from the front and the workers from the back, so
// that calls in a row give each thread the same part of the data (its
// cache's): the caller's tiles are a prefix of the range (empty when a
// spinning worker took them all first), whoever is faster.
TEST(ThreadPool, CallerRunsAPrefixAndWorkersTheRest) {
  const std::thread::id caller = std::this_thread::get_id();
  int calls_both_joined = 0;
  for (int call = 0; call < 2000; ++call) {
    TileOwners tiles(64);
    parallel_for(2, tiles.owner.size(), 1, &TileOwners::record, &tiles);
    const auto first_not_caller = std::find_if(tiles.owner.begin(), tiles.owner.end(),
                                               [&](std::thread::id id) { return id != caller; });
    ASSERT_TRUE(std::none_of(first_not_caller, tiles.owner.end(), [&](std::thread::id id) { return id == caller; }))
        << "call " << call << ": the caller ran a tile after one a worker ran";
    if (first_not_caller != tiles.owner.begin() && first_not_caller != tiles.owner.end()) ++calls_both_joined;
  }
  // Otherwise the test above proved nothing about how the two ends meet.
  EXPECT_GT(calls_both_joined, 0);
}

// Which thread ran each tile, and in which order (tiles of one element, each
// lasting a microsecond).
struct TileRuns {
  explicit TileRuns(std::size_t tiles) : owner(tiles), order(tiles) {}
  static void record(void* context, std::size_t begin, std::size_t /*count*/) {
    auto& self = *static_cast<TileRuns*>(context);
    self.owner[begin] = std::this_thread::get_id();
    self.order[begin] = self.next.fetch_add(1);
    const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(1);
    while (std::chrono::steady_clock::now() < end) {
    }
  }
  std::vector<std::thread::id> owner;
  std::vector<int> order;
  std::atomic<int> next{0};
};

// A thread claims several tiles at once while many are left (each claim
// moves shared cache lines between the cores), at most 4, and runs a claim's
// tiles in ascending order. The workers claim from the back, so each of
// their claims shows as an ascending run of consecutive tiles, the next claim
// below it.
TEST(ThreadPool, WorkersClaimRunsOfAtMostFourTiles) {
  const std::thread::id caller = std::this_thread::get_id();
  std::size_t longest_run = 0;
  for (int call = 0; call < 500; ++call) {
    TileRuns tiles(64);
    parallel_for(2, tiles.owner.size(), 1, &TileRuns::record, &tiles);
    std::vector<std::size_t> by_worker;  // the workers' tiles in the order they ran
    for (std::size_t tile = 0; tile < tiles.owner.size(); ++tile) {
      if (tiles.owner[tile] != caller) by_worker.push_back(tile);
    }
    std::sort(by_worker.begin(), by_worker.end(),
              [&](std::size_t x, std::size_t y) { return tiles.order[x] < tiles.order[y]; });
    std::size_t run = 1;
    for (std::size_t k = 1; k <= by_worker.size(); ++k) {
      if (k < by_worker.size() && by_worker[k] == by_worker[k - 1] + 1) {
        ++run;
        continue;
      }
      ASSERT_LE(run, 4u) << "call " << call << ": a worker ran " << run << " tiles in one claim";
      longest_run = std::max(longest_run, run);
      run = 1;
    }
  }
  EXPECT_GT(longest_run, 1u) << "the workers only ever claimed one tile at a time";
}

TEST(ThreadPool, ConcurrentCallersEachGetTheirWholeJob) {
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int caller = 0; caller < 4; ++caller) {
    callers.emplace_back([&failures, caller] {
      for (int call = 0; call < 500; ++call) {
        const std::size_t range = 100 + static_cast<std::size_t>(caller * 13 + call % 50);
        Coverage coverage(range);
        parallel_for(3, range, 8, &Coverage::record, &coverage);
        if (coverage.first_miss() != range) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(failures.load(), 0);
}

// A forked child inherits the pool but not its threads (pre-fork servers,
// Python's os.fork). It must be able to run parallel calls, starting workers
// of its own, and to exit: the pool's destructor must not wait for threads
// that only the parent has. Forks happen while another thread of the parent
// is inside a parallel call, so the child also inherits locks in any state.
// No thread of the parent allocates or frees while children are forked
// (Coverage::record allocates, and a thread's start frees): GCC 12's
// ASan takes no allocator lock around fork, so a child forked while another
// thread was inside malloc or free hung in its workers' start (a CI run under
// load, round 8 of 20; gdb showed them waiting on the allocator's lock).
TEST(ThreadPool, ForkedChildrenRunCallsAndExit) {
  std::vector<std::atomic<int>> hits(2048);
  const auto count_hits = [](void* context, std::size_t begin, std::size_t count) {
    auto& counters = *static_cast<std::vector<std::atomic<int>>*>(context);
    for (std::size_t i = begin; i < begin + count; ++i) counters[i].fetch_add(1, std::memory_order_relaxed);
  };
  // Both workers have run a tile, so each has finished starting (a start frees).
  for (int call = 0; call < 1000; ++call) {
    Coverage warm(4096);
    parallel_for(3, warm.hits.size(), 4, &Coverage::record, &warm);
    if (warm.threads.size() == 3) break;
  }
  std::atomic<bool> stop{false};
  std::atomic<bool> running{false};
  std::thread busy([&stop, &running, &hits, count_hits] {
    do {
      parallel_for(3, hits.size(), 2, count_hits, &hits);
      running.store(true);
    } while (!stop.load());
  });
  while (!running.load()) std::this_thread::yield();
  for (int round = 0; round < 20; ++round) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      g_forked_child = true;
      bool ok = true;
      for (int call = 0; call < 50; ++call) {
        Coverage coverage(4096);
        parallel_for(3, coverage.hits.size(), 4, &Coverage::record, &coverage);
        ok = ok && coverage.first_miss() == coverage.hits.size();
      }
      std::exit(ok ? 0 : 1);  // runs the static destructors, the pool's among them
    }
    EXPECT_EQ(wait_for_exit(child, 30), 0) << "round " << round << ": the child hung or failed";
  }
  stop.store(true);
  busy.join();
}

}  // namespace

// LeakSanitizer's hook, asked once at exit (ASan builds; unused otherwise).
extern "C" int __lsan_is_turned_off() { return g_forked_child ? 1 : 0; }
