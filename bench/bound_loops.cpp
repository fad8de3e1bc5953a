#include "bound_loops.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "native_vector.hpp"
#include "pair_runner.hpp"

namespace sqdiff_bench {
namespace {

using native::add;
using native::load;
using native::max;
using native::splat;
using native::store;
using native::stream;
using native::Vec;

constexpr std::size_t kLane = sizeof(Vec);
constexpr std::size_t kUnroll = 4;
constexpr std::size_t kLineAlign = 64;  // streaming stores: whole, aligned lines

// Byte tails (never hit by the benchmarks' sizes, kept for correctness).
void add_bytes(const std::byte* a, const std::byte* b, std::byte* c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) c[i] = static_cast<std::byte>(static_cast<uint8_t>(a[i]) + static_cast<uint8_t>(b[i]));
}

// Bytes before the first aligned output line: streaming stores start there.
std::size_t bytes_to_aligned_line(const std::byte* c, std::size_t n) {
  const auto misalign = reinterpret_cast<std::uintptr_t>(c) % kLineAlign;
  return misalign == 0 ? 0 : std::min(n, kLineAlign - misalign);
}

// One unrolled step's four vectors, streamed or stored.
template <bool kStream>
void store_unrolled(std::byte* c, Vec s0, Vec s1, Vec s2, Vec s3) {
  if constexpr (kStream) {
    stream(c, s0);
    stream(c + kLane, s1);
    stream(c + 2 * kLane, s2);
    stream(c + 3 * kLane, s3);
  } else {
    store(c, s0);
    store(c + kLane, s1);
    store(c + 2 * kLane, s2);
    store(c + 3 * kLane, s3);
  }
}

// The loops are written with an explicit 4x unroll of full vectors so that
// the compiler can neither vectorise them differently nor turn a copy into a
// call to memcpy (glibc's memcpy switches to streaming stores on its own above
// a size threshold, which would blur the plain/streaming distinction).
template <bool kStream>
void add_loop(const std::byte* a, const std::byte* b, std::byte* c, std::size_t n) {
  std::size_t i = 0;
  if constexpr (kStream) {
    // Plain stores up to the first aligned output line, streaming after it.
    const std::size_t head = bytes_to_aligned_line(c, n);
    for (; i + 4 <= head; i += 4) {
      uint32_t x, y;
      std::memcpy(&x, a + i, 4);
      std::memcpy(&y, b + i, 4);
      x += y;
      std::memcpy(c + i, &x, 4);
    }
    add_bytes(a + i, b + i, c + i, head - i);
    i = head;
  }
  for (; i + kUnroll * kLane <= n; i += kUnroll * kLane) {
    const Vec s0 = add(load(a + i), load(b + i));
    const Vec s1 = add(load(a + i + kLane), load(b + i + kLane));
    const Vec s2 = add(load(a + i + 2 * kLane), load(b + i + 2 * kLane));
    const Vec s3 = add(load(a + i + 3 * kLane), load(b + i + 3 * kLane));
    store_unrolled<kStream>(c + i, s0, s1, s2, s3);
  }
  for (; i + kLane <= n; i += kLane) store(c + i, add(load(a + i), load(b + i)));
  add_bytes(a + i, b + i, c + i, n - i);
  if constexpr (kStream) _mm_sfence();
}

// a = max(a, b): reads two streams and writes one back in place. The benchmark
// data are chosen so that this leaves `a` unchanged (every b is negative as a
// 32-bit integer, every a is not), so the cases that run after it see the same
// values as before.
void max_inplace_loop(std::byte* a, const std::byte* b, std::size_t n) {
  std::size_t i = 0;
  for (; i + kUnroll * kLane <= n; i += kUnroll * kLane) {
    const Vec s0 = max(load(a + i), load(b + i));
    const Vec s1 = max(load(a + i + kLane), load(b + i + kLane));
    const Vec s2 = max(load(a + i + 2 * kLane), load(b + i + 2 * kLane));
    const Vec s3 = max(load(a + i + 3 * kLane), load(b + i + 3 * kLane));
    store_unrolled<false>(a + i, s0, s1, s2, s3);
  }
  for (; i + kLane <= n; i += kLane) store(a + i, max(load(a + i), load(b + i)));
  // Leave a byte tail untouched: it changes nothing about the bound.
}

template <bool kStream>
void copy_loop(const std::byte* a, std::byte* c, std::size_t n) {
  std::size_t i = 0;
  if constexpr (kStream) {
    const std::size_t head = bytes_to_aligned_line(c, n);
    for (; i < head; ++i) c[i] = a[i];
  }
  for (; i + kUnroll * kLane <= n; i += kUnroll * kLane) {
    const Vec s0 = load(a + i);
    const Vec s1 = load(a + i + kLane);
    const Vec s2 = load(a + i + 2 * kLane);
    const Vec s3 = load(a + i + 3 * kLane);
    store_unrolled<kStream>(c + i, s0, s1, s2, s3);
  }
  for (; i + kLane <= n; i += kLane) store(c + i, load(a + i));
  for (; i < n; ++i) c[i] = a[i];
  if constexpr (kStream) _mm_sfence();
}

template <bool kStream>
void fill_loop(std::byte* c, std::size_t n) {
  const Vec v = splat(0x3F800000);  // 1.0f: a harmless value for any case reading c later
  std::size_t i = 0;
  if constexpr (kStream) {
    const std::size_t head = bytes_to_aligned_line(c, n);
    for (; i < head; ++i) c[i] = std::byte{0};
  }
  for (; i + kUnroll * kLane <= n; i += kUnroll * kLane) {
    store_unrolled<kStream>(c + i, v, v, v, v);
  }
  for (; i + kLane <= n; i += kLane) store(c + i, v);
  for (; i < n; ++i) c[i] = std::byte{0};
  if constexpr (kStream) _mm_sfence();
}

void run_range(LoopKind kind, const std::byte* a, const std::byte* b, std::byte* c, std::size_t n) {
  switch (kind) {
    case LoopKind::add: add_loop<false>(a, b, c, n); break;
    case LoopKind::add_nt: add_loop<true>(a, b, c, n); break;
    // In place: `a` is the output; the const_cast is the bench's own buffer.
    case LoopKind::add_inplace: max_inplace_loop(const_cast<std::byte*>(a), b, n); break;
    case LoopKind::copy: copy_loop<false>(a, c, n); break;
    case LoopKind::copy_nt: copy_loop<true>(a, c, n); break;
    case LoopKind::fill: fill_loop<false>(c, n); break;
    case LoopKind::fill_nt: fill_loop<true>(c, n); break;
  }
}

struct SplitJob {
  LoopKind kind;
  const std::byte* a;
  const std::byte* b;
  std::byte* c;
  std::size_t bytes;
  std::size_t split;  // first byte of the second half
};

void run_half(void* context, int part) {
  const auto& job = *static_cast<const SplitJob*>(context);
  const std::size_t begin = part == 0 ? 0 : job.split;
  const std::size_t end = part == 0 ? job.split : job.bytes;
  const std::byte* b = job.b != nullptr ? job.b + begin : nullptr;
  std::byte* c = job.c != nullptr ? job.c + begin : nullptr;
  run_range(job.kind, job.a != nullptr ? job.a + begin : nullptr, b, c, end - begin);
}

}  // namespace

std::string_view loop_name(LoopKind kind) {
  switch (kind) {
    case LoopKind::add: return "add";
    case LoopKind::add_nt: return "add_nt";
    case LoopKind::add_inplace: return "add_inplace";
    case LoopKind::copy: return "copy";
    case LoopKind::copy_nt: return "copy_nt";
    case LoopKind::fill: return "fill";
    case LoopKind::fill_nt: return "fill_nt";
  }
  return "?";
}

int loop_streams(LoopKind kind) {
  switch (kind) {
    case LoopKind::add:
    case LoopKind::add_nt:
    case LoopKind::add_inplace: return 3;
    case LoopKind::copy:
    case LoopKind::copy_nt: return 2;
    case LoopKind::fill:
    case LoopKind::fill_nt: return 1;
  }
  return 1;
}

void run_loop(LoopKind kind, const std::byte* a, const std::byte* b, std::byte* c, std::size_t bytes,
              int threads, PairRunner& runner) {
  if (threads <= 1) {
    run_range(kind, a, b, c, bytes);
    return;
  }
  SplitJob job{kind, a, b, c, bytes, (bytes / 2) / kLineAlign * kLineAlign};
  runner.run(run_half, &job);
}

}  // namespace sqdiff_bench
