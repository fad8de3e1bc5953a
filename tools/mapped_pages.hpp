// Keeping a streaming pass over memory-mapped inputs within bounded memory:
// pages of a file mapping that the pass has finished with are dropped from
// the process (they stay in the page cache), so the resident set does not
// grow to the size of the files.
#pragma once

#include <cstdint>

namespace sqdiff::tools {

// Drops the pages lying wholly inside [begin, begin + bytes) of a read-only
// file mapping from this process's resident set. A later read of them faults
// them back in from the page cache or the file, so this is only ever a cost,
// never a change of contents. Errors are ignored (it is advice).
void release_mapped_pages(const void* begin, int64_t bytes);

}  // namespace sqdiff::tools
