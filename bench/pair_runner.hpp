// Two threads for the 2-thread bound loops: the caller and one worker that is
// started once and kept alive, so that thread start-up is never timed.
//
// The worker sleeps (futex) unless it has been woken with wake(); a woken
// worker spins on an atomic until park(). wake() also pins the worker to a
// CPU other than the caller's, so that the two halves really run side by side. The benchmarks wake it before the
// clock starts and park it after the clock stops, so the timed region of a
// 2-thread bound loop contains only the work and one hand-off between two
// hot cores, and a parked worker never competes with the code under test.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

namespace sqdiff_bench {

class PairRunner {
 public:
  using Task = void (*)(void* context, int part);

  PairRunner();
  ~PairRunner();
  PairRunner(const PairRunner&) = delete;
  PairRunner& operator=(const PairRunner&) = delete;

  // Returns once the worker is spinning, ready to take a task at once.
  void wake();
  // Lets the worker go back to sleep.
  void park();
  // Runs task(context, 0) here and task(context, 1) on the worker; returns
  // when both have finished.
  void run(Task task, void* context);

 private:
  void worker_loop();
  void post(Task task, void* context);
  void wait_for_worker();

  std::atomic<uint32_t> sequence_{0};  // bumped by the caller once per task
  std::atomic<uint32_t> done_{0};      // the worker's last finished sequence
  std::atomic<bool> hot_{false};       // spin instead of sleeping
  std::atomic<bool> sleeping_{false};  // the worker is (about to be) in a futex wait
  std::atomic<bool> stop_{false};
  Task task_ = nullptr;
  void* context_ = nullptr;
  int worker_cpu_ = -1;  // the CPU the worker is pinned to, -1 before the first wake()
  std::thread worker_;
};

// The one runner the benchmarks share.
PairRunner& pair_runner();

}  // namespace sqdiff_bench
