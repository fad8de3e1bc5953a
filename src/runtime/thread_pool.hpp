// Parallel loops over a 1-D range: tiles handed out dynamically, a few at a
// time, to the caller, from the front, and a few persistent workers, from the
// back (thread_pool.cpp says why, and why it is not pthreadpool or oneTBB).
#pragma once

#include <cstddef>

namespace sqdiff::detail {

// task(context, begin, count) over [0, range) in tiles of `tile` (the last may
// be shorter), on `threads` threads including the caller. threads <= 1 runs
// inline. Calls from different threads are safe: while one call uses the
// workers, a concurrent call runs inline on its own thread.
using TileTask = void (*)(void* context, std::size_t begin, std::size_t count);
void parallel_for(int threads, std::size_t range, std::size_t tile, TileTask task, void* context);

}  // namespace sqdiff::detail
