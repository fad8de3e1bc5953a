// The default thread count (sqdiff/threads.hpp): every op family resolves a
// call's `threads` through it, so it lives beneath them, beside the pool.
#include "sqdiff/threads.hpp"

#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "sqdiff/error.hpp"

namespace sqdiff {
namespace {

std::atomic<int> g_default_threads{0};  // 0: automatic

int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware > 0 ? static_cast<int>(hardware) : 1;
}

// SQDIFF_NUM_THREADS if it is a positive integer; a malformed value is ignored
// (a library cannot report it anywhere better), and the docs say so.
int automatic_threads() {
  static const int threads = [] {
    if (const char* text = std::getenv("SQDIFF_NUM_THREADS")) {
      char* end = nullptr;
      const long value = std::strtol(text, &end, 10);
      if (end != text && *end == '\0' && value > 0 && value <= 1024) return static_cast<int>(value);
    }
    return available_cpus();
  }();
  return threads;
}

}  // namespace

int default_threads() {
  const int chosen = g_default_threads.load(std::memory_order_relaxed);
  return chosen > 0 ? chosen : automatic_threads();
}

void set_default_threads(int n) {
  if (n < 0) {
    throw Error("set_default_threads: " + std::to_string(n) +
                " is negative; use 0 for the automatic choice or a positive count");
  }
  g_default_threads.store(n, std::memory_order_relaxed);
}

}  // namespace sqdiff
