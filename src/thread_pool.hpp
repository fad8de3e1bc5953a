// Parallel loops over a 1-D range on pthreadpool (XNNPACK's pool: a worker
// wake-up costs well under a microsecond and tiles are handed out dynamically;
// docs/PERFORMANCE.md has the comparison with oneTBB).
#pragma once

#include <cstddef>

namespace sqdiff::detail {

// task(context, begin, count) over [0, range) in tiles of `tile` (the last may
// be shorter), on `threads` threads including the caller. threads <= 1 runs
// inline. Calls from different threads are safe (they take turns on a pool).
using TileTask = void (*)(void* context, std::size_t begin, std::size_t count);
void parallel_for(int threads, std::size_t range, std::size_t tile, TileTask task, void* context);

}  // namespace sqdiff::detail
