#include "mapped_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace sqdiff::tools {

void release_mapped_pages(const void* begin, int64_t bytes) {
  if (bytes <= 0) return;
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<uintptr_t>(begin);
  const uintptr_t first = (start + page - 1) / page * page;
  const uintptr_t end = (start + static_cast<uintptr_t>(bytes)) / page * page;
  if (end <= first) return;
  ::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

}  // namespace sqdiff::tools
