#include "runtime/thread_scratch.hpp"

#include <new>

namespace sqdiff::detail {
namespace {

constexpr std::size_t kAlign = 64;

std::byte* aligned_bytes(std::size_t bytes) {
  return static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{kAlign}));
}

struct Kept {
  std::unique_ptr<std::byte[], ThreadScratch::AlignedFree> buffer;
  std::size_t bytes = 0;
  bool in_use = false;
};

thread_local Kept kept[ThreadScratch::kSlots];

}  // namespace

void ThreadScratch::AlignedFree::operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{kAlign}); }

ThreadScratch::ThreadScratch(Slot slot, std::size_t bytes) : slot_(slot) {
  Kept& k = kept[slot];
  if (bytes <= kKeptBytes && !k.in_use) {
    if (k.bytes < bytes) {
      k.buffer.reset();  // the old one first: never both at once
      k.bytes = 0;
      k.buffer.reset(aligned_bytes(bytes));
      k.bytes = bytes;
    }
    k.in_use = true;
    borrowed_ = true;
    data_ = k.buffer.get();
    return;
  }
  own_.reset(aligned_bytes(bytes));
  data_ = own_.get();
}

ThreadScratch::~ThreadScratch() {
  if (borrowed_) kept[slot_].in_use = false;
}

}  // namespace sqdiff::detail
