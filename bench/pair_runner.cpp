#include "pair_runner.hpp"

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

namespace sqdiff_bench {
namespace {

// A CPU the caller may run on other than `here` (the next one in its
// affinity mask), or -1 if there is none.
int other_cpu(int here) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (here < 0 || sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return -1;
  for (int step = 1; step < CPU_SETSIZE; ++step) {
    const int cpu = (here + step) % CPU_SETSIZE;
    if (CPU_ISSET(cpu, &allowed)) return cpu == here ? -1 : cpu;
  }
  return -1;
}

}  // namespace

PairRunner::PairRunner() : worker_([this] { worker_loop(); }) {}

PairRunner::~PairRunner() {
  stop_.store(true);
  post(nullptr, nullptr);
  worker_.join();
}

void PairRunner::worker_loop() {
  uint32_t seen = 0;
  for (;;) {
    for (;;) {
      if (sequence_.load(std::memory_order_acquire) != seen) break;
      if (hot_.load(std::memory_order_relaxed)) {
        _mm_pause();
        continue;
      }
      // Announce the sleep before re-checking, so that post() either sees
      // sleeping_ and wakes us, or we see its new sequence number.
      sleeping_.store(true);
      if (sequence_.load() == seen && !hot_.load()) sequence_.wait(seen);
      sleeping_.store(false);
    }
    seen = sequence_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    if (task_ != nullptr) task_(context_, 1);
    done_.store(seen, std::memory_order_release);
  }
}

void PairRunner::post(Task task, void* context) {
  task_ = task;
  context_ = context;
  sequence_.fetch_add(1);  // seq_cst: pairs with the worker's sleeping_ store
  if (sleeping_.load()) sequence_.notify_one();
}

void PairRunner::wake() {
  // Keep the worker off the caller's CPU. Left to itself, the scheduler may
  // wake the worker on the caller's CPU when the other CPUs are busy with
  // other processes; then the two threads take turns on one CPU and every
  // join waits for a scheduler tick (milliseconds).
  const int cpu = other_cpu(sched_getcpu());
  if (cpu >= 0 && cpu != worker_cpu_) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (pthread_setaffinity_np(worker_.native_handle(), sizeof(one), &one) == 0) worker_cpu_ = cpu;
  }
  hot_.store(true);
  post(nullptr, nullptr);
  wait_for_worker();
}

void PairRunner::wait_for_worker() {
  const uint32_t target = sequence_.load(std::memory_order_relaxed);
  for (unsigned spins = 1; done_.load(std::memory_order_acquire) != target; ++spins) {
    // Spin; but should the caller itself have been moved onto the worker's
    // CPU, give that CPU to the worker now and then.
    if (spins % 1024 == 0 && sched_getcpu() == worker_cpu_) {
      sched_yield();
    } else {
      _mm_pause();
    }
  }
}

void PairRunner::park() { hot_.store(false); }

void PairRunner::run(Task task, void* context) {
  post(task, context);
  task(context, 0);
  wait_for_worker();
}

PairRunner& pair_runner() {
  static PairRunner runner;
  return runner;
}

}  // namespace sqdiff_bench
