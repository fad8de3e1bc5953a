// The bound loops: the simplest loops that move the same bytes as a case.
//
// They work on bytes, not on element types: a loop over 2n bytes bounds an f16
// case of n elements exactly as it bounds an f32 case of n/2 elements, because
// above the L1 cache only the bytes moved matter, and in L1 the limit is the
// load and store ports, which one 32-bit integer add per vector does not reach.
// Integer lanes also mean no denormal or NaN operand can slow a loop down,
// whatever bit patterns the buffers hold.
#pragma once

#include <cstddef>
#include <string_view>

namespace sqdiff_bench {

class PairRunner;

enum class LoopKind {
  add,          // c = a + b, ordinary stores (each store first reads its line)
  add_nt,       // c = a + b, streaming (non-temporal) stores, aligned body, sfence
  add_inplace,  // a = max(a, b), ordinary stores: the in-place bound (no write-allocate)
  copy,         // c = a, ordinary stores
  copy_nt,      // c = a, streaming stores
  fill,         // c = constant, ordinary stores
  fill_nt,      // c = constant, streaming stores
};

std::string_view loop_name(LoopKind kind);

// How many buffers of `bytes` each the loop reads and writes: add 3, copy 2, fill 1.
int loop_streams(LoopKind kind);

// Runs one loop over `bytes` bytes of each buffer. With threads == 2 the range
// is split in two halves at a 64-byte boundary, one per thread of `runner`
// (which must be awake: see PairRunner::wake).
void run_loop(LoopKind kind, const std::byte* a, const std::byte* b, std::byte* c, std::size_t bytes,
              int threads, PairRunner& runner);

}  // namespace sqdiff_bench
