// Cache sizes of the machine, read once at run time.
#pragma once

#include <cstddef>

namespace sqdiff::detail {

// Bytes of the largest (last-level) data cache; a conservative default when
// the system does not say.
std::size_t last_level_cache_bytes();

// Bytes of the level-2 cache, where on current x86 cores each core keeps what
// it touched between calls; 256 KiB when the system does not say.
std::size_t level2_cache_bytes();

}  // namespace sqdiff::detail
