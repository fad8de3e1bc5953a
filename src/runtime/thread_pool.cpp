// A small pool built for one kind of job: independent tiles of one call.
//
// Why not pthreadpool (which this replaced): it makes every call wait until
// each worker has checked in, even a worker that has no tile left to take. On
// a busy 2-core machine a descheduled worker turned 2-thread calls of a few
// hundred microseconds into ~8 ms stalls, and its workers spun ~27 ms after
// each call. Here a call ends as soon as its tiles are done: a worker that
// wakes late finds none left and goes back to waiting, and workers spin
// only briefly before they sleep (spin_budget.hpp: how briefly adapts to the
// caller's gaps between calls). oneTBB, measured beside pthreadpool, hands
// out an empty 2-task job faster (0.15 us vs 0.4-1.0 us) but kept a 1M-element
// f32 call on the caller (x0.99 over one thread, pthreadpool x2.26).
#include "runtime/thread_pool.hpp"

#include "runtime/spin_budget.hpp"

#include <emmintrin.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

namespace sqdiff::detail {
namespace {

constexpr int kMaxThreads = 256;
constexpr int64_t kMostTilesPerClaim = 4;

void run_inline(std::size_t range, std::size_t tile, TileTask task, void* context) {
  for (std::size_t begin = 0; begin < range; begin += tile) {
    task(context, begin, range - begin < tile ? range - begin : tile);
  }
}

class Pool {
 public:
  Pool() {
    // A forked child inherits this object but not its threads; without this
    // it would wait forever for them, when it exits (the destructor's join)
    // or when a worker still counted as asleep holds a lock.
    g_pool = this;
    pthread_atfork(nullptr, nullptr, [] { g_pool->forget_threads_after_fork(); });
  }

  ~Pool() {
    stop_.store(true);
    wake_workers();
    for (const pthread_t worker : workers_) pthread_join(worker, nullptr);
  }

  // Runs the job on the caller and up to threads - 1 workers. Calls from
  // other threads while one is running run inline on their own thread.
  void run(int threads, std::size_t range, std::size_t tile, TileTask task, void* context) {
    std::unique_lock<std::mutex> lock(call_mutex_, std::try_to_lock);
    if (!lock.owns_lock() || !grow_to(threads - 1)) {
      run_inline(range, tile, task, context);
      return;
    }
    // The job's fields are published by the release store of remaining_ and
    // stay unchanged until every claimed tile has been reported done.
    task_ = task;
    context_ = context;
    range_ = range;
    tile_ = tile;
    tiles_ = static_cast<int64_t>((range + tile - 1) / tile);
    done_.store(0, std::memory_order_relaxed);
    claimed_from_front_.store(0, std::memory_order_relaxed);
    claimed_from_back_.store(0, std::memory_order_relaxed);
    helpers_.store(threads - 1, std::memory_order_relaxed);
    remaining_.store(tiles_, std::memory_order_release);
    wake_workers();

    run_tiles(End::front);
    // Only tiles already claimed are waited for; on a busy machine the
    // worker holding one may be descheduled, so yield after a short spin.
    for (int spins = 0; done_.load(std::memory_order_acquire) != tiles_; ++spins) {
      if (spins < 4096) {
        _mm_pause();
      } else {
        sched_yield();
      }
    }
  }

 private:
  // The caller takes tiles from the front of the range, the workers from the
  // back. Calls in a row then give each thread the same tiles every time
  // (about its share from its end), so the data a thread wrote or read stays
  // in its core's L2 for the next call; handed out in one order, the tiles
  // fell to either thread by chance and moved between the cores' caches.
  // 256K f32 out of place (3 MiB, 8 tiles, each core's half in its L2) on 2
  // threads, sqdiff_bench over repeated runs: 14.7-27.7 us, 5 runs of 14
  // above 19 us, with tiles in one order; 14.3-16.9 us in 12 of 12 so.
  // A late worker still only takes what the caller has not.
  enum class End { front, back };

  // Claims runs of tiles and runs them until none is left. A claim takes a
  // share of what is left, at most kMostTilesPerClaim (guided scheduling):
  // fewer claims while much is left, single tiles at the end to balance the
  // threads. Every claim moves remaining_'s and done_'s cache lines between
  // the cores. Per-channel [8,64,128,128] f32 (32 MiB out) on 2 threads, in
  // one process against XNNPACK: one claim per 128 KiB tile ran at 0.991-0.996
  // of its speed, claims of up to 4 tiles at 0.996-1.007, of any share
  // 0.997-1.005 (scratch harness, the same 8 runs). The cap bounds what a
  // descheduled worker can hold up. A claim (remaining_ still positive when
  // the exchange succeeds) belongs to the current job: the caller publishes
  // the next job only after every claimed tile is done, and claims never take
  // more than tiles_ in all, so the front's indices and the back's never
  // meet. Each side runs a claim's tiles in ascending order.
  // The share is computed before the claim, from atomics only: a worker
  // looping after its job's last tile may read the next job's values, and
  // still takes no more than `left`, the value its exchange succeeds on.
  void run_tiles(End end) {
    int64_t left = remaining_.load(std::memory_order_acquire);
    for (;;) {
      int64_t take = 0;
      do {
        if (left <= 0) return;
        const int64_t threads = helpers_.load(std::memory_order_relaxed) + 1;
        take = std::clamp<int64_t>(left / (2 * threads), 1, kMostTilesPerClaim);
      } while (!remaining_.compare_exchange_weak(left, left - take, std::memory_order_acq_rel,
                                                 std::memory_order_acquire));
      const int64_t first = end == End::front
                                ? claimed_from_front_.fetch_add(take, std::memory_order_relaxed)
                                : tiles_ - take - claimed_from_back_.fetch_add(take, std::memory_order_relaxed);
      for (int64_t index = first; index < first + take; ++index) {
        const std::size_t begin = static_cast<std::size_t>(index) * tile_;
        task_(context_, begin, range_ - begin < tile_ ? range_ - begin : tile_);
      }
      done_.fetch_add(take, std::memory_order_release);
      left -= take;
    }
  }

  // Raw pthreads rather than std::thread: the child of a fork must drop the
  // handles of threads it does not have, and a joinable std::thread cannot be
  // dropped without std::terminate.
  bool grow_to(int helpers) {
    workers_.reserve(static_cast<std::size_t>(helpers));
    while (static_cast<int>(workers_.size()) < helpers) {
      // The worker's index travels as the thread's argument; the pool is g_pool.
      void* index = reinterpret_cast<void*>(static_cast<intptr_t>(workers_.size()));
      pthread_t worker;
      if (pthread_create(&worker, nullptr, &Pool::start_worker, index) != 0) {
        return !workers_.empty();  // the system refused a thread: run on those there are
      }
      workers_.push_back(worker);
    }
    return true;
  }

  static void* start_worker(void* index) {
    g_pool->work(static_cast<int>(reinterpret_cast<intptr_t>(index)));
    return nullptr;
  }

  // In the child of a fork only the forking thread exists: the workers are
  // gone, and so is any lock they (or other threads) held at the fork. The
  // child starts again from no workers and fresh locks; the forking thread
  // cannot have been inside run(), so no job is in flight.
  void forget_threads_after_fork() {
    new (&call_mutex_) std::mutex();
    new (&sleep_mutex_) std::mutex();
    new (&wake_) std::condition_variable();
    workers_.clear();
    sleepers_.store(0);
    helpers_.store(0);
    remaining_.store(0);
    done_.store(0);
  }

  // A new worker joins the call that created it. Stopping is checked after
  // reading the epoch: a worker that starts only after the pool's destructor
  // bumped the epoch reads the new value, and sees stop_ set before it.
  void work(int index) {
    uint32_t seen = epoch_.load();
    while (!stop_.load()) {
      // A worker beyond this call's thread count stays out of it.
      if (index < helpers_.load(std::memory_order_relaxed)) run_tiles(End::back);
      seen = wait_for_change(seen);
    }
  }

  // The caller's side of the hand-shake in wait_for_change: with both sides
  // seq_cst, either the caller sees the sleeper or the sleeper sees the new
  // epoch before it sleeps. (Not std::atomic::wait: libstdc++ 12's loses
  // wake-ups; a worker slept through the pool's destruction.)
  void wake_workers() {
    epoch_.fetch_add(1);
    if (sleepers_.load() > 0) {
      const std::lock_guard<std::mutex> lock(sleep_mutex_);
      wake_.notify_all();
    }
  }

  uint32_t wait_for_change(uint32_t seen) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const auto spin_end = start + std::chrono::nanoseconds(spin_budget_.budget_ns());
    const auto record_gap = [&] {
      spin_budget_.record_gap(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    };
    for (int spins = 0;; ++spins) {
      const uint32_t now = epoch_.load(std::memory_order_acquire);
      if (now != seen) {
        record_gap();
        return now;
      }
      if ((spins & 63) == 0 && Clock::now() > spin_end) break;
      _mm_pause();
    }
    std::unique_lock<std::mutex> lock(sleep_mutex_);
    sleepers_.fetch_add(1);
    wake_.wait(lock, [&] { return epoch_.load() != seen; });
    sleepers_.fetch_sub(1);
    record_gap();
    return epoch_.load(std::memory_order_acquire);
  }

  static inline Pool* g_pool = nullptr;  // for the fork handler

  std::mutex call_mutex_;  // one call at a time uses the workers
  std::vector<pthread_t> workers_;
  std::atomic<uint32_t> epoch_{0};  // bumped once per call: wakes the workers
  std::atomic<int> sleepers_{0};    // workers asleep on wake_
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stop_{false};
  SpinBudget spin_budget_;
  std::atomic<int> helpers_{0};
  alignas(64) std::atomic<int64_t> remaining_{0};  // tiles not yet claimed
  alignas(64) std::atomic<int64_t> done_{0};       // tiles finished
  alignas(64) std::atomic<int64_t> claimed_from_front_{0};  // by the caller
  alignas(64) std::atomic<int64_t> claimed_from_back_{0};   // by the workers
  // The current job.
  TileTask task_ = nullptr;
  void* context_ = nullptr;
  std::size_t range_ = 0;
  std::size_t tile_ = 1;
  int64_t tiles_ = 0;
};

}  // namespace

void parallel_for(int threads, std::size_t range, std::size_t tile, TileTask task, void* context) {
  if (threads > kMaxThreads) threads = kMaxThreads;
  if (threads <= 1 || range <= tile) {
    run_inline(range, tile, task, context);
    return;
  }
  static Pool pool;
  pool.run(threads, range, tile, task, context);
}

}  // namespace sqdiff::detail
