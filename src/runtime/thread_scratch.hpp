// Scratch memory a thread keeps from one task to the next.
//
// The pairwise tasks need up to a few hundred KiB each for their sums (rows of
// x against all of y), and each call as much again for y, packed. Allocated
// and freed per task, glibc could hand it back to the kernel at every free
// and fault it in again, zeroed, at the next task: f64 pairwise 1024 x 1024,
// K = 3, 1 thread took 5.2 ms against 1.2 ms with the same buffers kept
// (sqdiff_bench, or MALLOC_TRIM_THRESHOLD_ set high), depending on what the
// process had allocated before. Each thread keeps up to kKeptBytes per slot;
// larger requests, and a slot already in use further up the same thread's
// stack, get memory of their own for the object's lifetime, as before.
#pragma once

#include <cstddef>
#include <memory>

namespace sqdiff::detail {

class ThreadScratch {
 public:
  enum Slot : int { first, second, third, kSlots };
  static constexpr std::size_t kKeptBytes = std::size_t{4} << 20;

  // Room for `bytes` bytes, uninitialised, aligned for any scalar or vector.
  ThreadScratch(Slot slot, std::size_t bytes);
  ~ThreadScratch();
  ThreadScratch(const ThreadScratch&) = delete;
  ThreadScratch& operator=(const ThreadScratch&) = delete;

  // Frees what the aligned allocation of thread_scratch.cpp gave.
  struct AlignedFree {
    void operator()(std::byte* p) const;
  };

  template <class T>
  T* as() {
    return reinterpret_cast<T*>(data_);
  }

 private:
  Slot slot_;
  bool borrowed_ = false;  // data_ is the thread's kept buffer of slot_
  std::unique_ptr<std::byte[], AlignedFree> own_;
  std::byte* data_ = nullptr;
};

}  // namespace sqdiff::detail
