// ThreadScratch keeps one buffer per slot and thread across tasks, never
// hands the same memory to two live objects, and aligns it for vectors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>

#include "runtime/thread_scratch.hpp"

namespace {

using sqdiff::detail::ThreadScratch;

std::uintptr_t address(ThreadScratch& s) { return reinterpret_cast<std::uintptr_t>(s.as<std::byte>()); }

TEST(ThreadScratch, ASlotIsKeptFromOneObjectToTheNext) {
  std::uintptr_t before = 0;
  {
    ThreadScratch s(ThreadScratch::first, 1000);
    before = address(s);
    std::memset(s.as<std::byte>(), 7, 1000);
  }
  ThreadScratch again(ThreadScratch::first, 800);  // smaller: no new buffer
  EXPECT_EQ(address(again), before);
}

TEST(ThreadScratch, LiveObjectsNeverShareMemory) {
  ThreadScratch a(ThreadScratch::first, 4096);
  ThreadScratch b(ThreadScratch::second, 4096);
  ThreadScratch nested(ThreadScratch::first, 4096);  // slot first is in use: memory of its own
  const std::uintptr_t pa = address(a), pb = address(b), pn = address(nested);
  EXPECT_TRUE(pa + 4096 <= pb || pb + 4096 <= pa);
  EXPECT_TRUE(pa + 4096 <= pn || pn + 4096 <= pa);
  EXPECT_TRUE(pb + 4096 <= pn || pn + 4096 <= pb);
  // All of each is writable (ASan checks the bounds).
  std::memset(a.as<std::byte>(), 1, 4096);
  std::memset(b.as<std::byte>(), 2, 4096);
  std::memset(nested.as<std::byte>(), 3, 4096);
  EXPECT_EQ(a.as<unsigned char>()[4095], 1);
  EXPECT_EQ(b.as<unsigned char>()[4095], 2);
}

TEST(ThreadScratch, GrowsAndAlignsForVectors) {
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{100}, std::size_t{1} << 17, std::size_t{3} << 20}) {
    ThreadScratch s(ThreadScratch::second, bytes);
    EXPECT_EQ(address(s) % 64, 0u) << bytes;
    std::memset(s.as<std::byte>(), 0, bytes);
  }
}

TEST(ThreadScratch, LargeRequestsAreNotKept) {
  std::uintptr_t kept = 0;
  {
    ThreadScratch small(ThreadScratch::first, 64);
    kept = address(small);
  }
  {
    ThreadScratch large(ThreadScratch::first, ThreadScratch::kKeptBytes + 1);
    std::memset(large.as<std::byte>(), 0, ThreadScratch::kKeptBytes + 1);
  }
  ThreadScratch after(ThreadScratch::first, 64);
  EXPECT_EQ(address(after), kept);  // the kept buffer was not replaced by the large one
}

TEST(ThreadScratch, EachThreadHasItsOwn) {
  ThreadScratch mine(ThreadScratch::first, 256);
  std::uintptr_t theirs = 0;
  std::thread other([&] {
    ThreadScratch s(ThreadScratch::first, 256);  // this slot is free on that thread
    theirs = address(s);
    std::memset(s.as<std::byte>(), 5, 256);
  });
  other.join();
  EXPECT_NE(theirs, address(mine));
}

}  // namespace
