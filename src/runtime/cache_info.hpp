// Cache sizes of the machine, read once at run time.
#pragma once

#include <cstddef>

namespace sqdiff::detail {

// Bytes of the largest (last-level) data cache; a conservative default when
// the system does not say.
std::size_t last_level_cache_bytes();

// Makes last_level_cache_bytes() return `bytes` (0: the machine's again), so
// that tests reach the beyond-the-cache paths with small arrays: on a host with
// a 480 MiB L3 the real size costs minutes in an unoptimised sanitizer build.
void override_last_level_cache_bytes(std::size_t bytes);

// Bytes of the level-2 cache, where on current x86 cores each core keeps what
// it touched between calls; 256 KiB when the system does not say.
std::size_t level2_cache_bytes();

}  // namespace sqdiff::detail
