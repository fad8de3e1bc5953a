#include "tflite/tensor_storage.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace sqdiff::tools::tflite {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

}  // namespace

std::shared_ptr<void> allocate_tensor_storage(std::size_t bytes) {
  if (bytes < kHugePage) {
    void* p = ::operator new(std::max<std::size_t>(bytes, 1), std::align_val_t{64});
    return std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t{64}); });
  }
  const std::size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, size);
  if (p == nullptr) throw std::bad_alloc();
  // Advice only: where the kernel has no huge pages to give, 4 KiB pages serve.
  (void)::madvise(p, size, MADV_HUGEPAGE);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

void touch_pages(const void* data, std::size_t bytes) {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const auto* p = static_cast<const volatile unsigned char*>(data);
  unsigned char sink = 0;
  for (std::size_t i = 0; i < bytes; i += page) sink ^= p[i];
  (void)sink;
}

}  // namespace sqdiff::tools::tflite
