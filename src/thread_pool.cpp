#include "thread_pool.hpp"

#include <pthreadpool.h>

#include <array>
#include <atomic>
#include <mutex>

namespace sqdiff::detail {
namespace {

// One pool per thread count, created on first use and kept for the life of
// the process (pthreadpool cannot run a call on fewer threads than it has).
constexpr int kMaxThreads = 256;

pthreadpool_t pool_for(int threads) {
  static std::array<std::atomic<pthreadpool_t>, kMaxThreads + 1> pools{};
  static std::mutex creation;
  std::atomic<pthreadpool_t>& slot = pools[static_cast<std::size_t>(threads)];
  pthreadpool_t pool = slot.load(std::memory_order_acquire);
  if (pool != nullptr) return pool;
  const std::lock_guard<std::mutex> lock(creation);
  pool = slot.load(std::memory_order_relaxed);
  if (pool == nullptr) {
    pool = pthreadpool_create(static_cast<std::size_t>(threads));
    slot.store(pool, std::memory_order_release);
  }
  return pool;
}

}  // namespace

void parallel_for(int threads, std::size_t range, std::size_t tile, TileTask task, void* context) {
  if (threads > kMaxThreads) threads = kMaxThreads;
  pthreadpool_t pool = threads > 1 ? pool_for(threads) : nullptr;
  if (pool == nullptr) {  // one thread, or the pool could not be created
    for (std::size_t begin = 0; begin < range; begin += tile) {
      task(context, begin, range - begin < tile ? range - begin : tile);
    }
    return;
  }
  // No PTHREADPOOL_FLAG_DISABLE_DENORMALS: SPEC keeps subnormals.
  pthreadpool_parallelize_1d_tile_1d(pool, task, context, range, tile, 0);
}

}  // namespace sqdiff::detail
