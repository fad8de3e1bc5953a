// The benchmark buffers: four large, huge-page-aligned regions shared by
// every benchmark, allocated once on first use.
#pragma once

#include <sqdiff/dtype.hpp>

#include <cstddef>

namespace sqdiff_bench {

struct Buffers {
  std::byte* a;  // first input (and the output of in-place cases)
  std::byte* b;  // second input
  std::byte* c;  // output of the cases, the peer and the plain-store bound loops
  std::byte* d;  // output of the streaming-store bound loops (see docs/PERFORMANCE.md)
  std::size_t bytes;  // size of each
};

// 256 MiB each: 64M f32 elements.
Buffers& buffers();

// a: values in [1, 2) (i32: [0, 1000)); b: values in [-0.5, -0.25) (f64: the same values)
// (i32: [-1000, -1]). Every a is non-negative and every b negative, both as
// values and as the sign bit of each 32-bit word; repeated in-place squared
// differences only grow a (up to inf), never into denormals.
// Both skip the work when the buffer already holds at least `count` such
// values from an earlier call.
void fill_a(sqdiff::DType dtype, std::size_t count);
void fill_b(sqdiff::DType dtype, std::size_t count);

// An in-place benchmark wrote into a: the next fill_a must rewrite it.
void a_was_overwritten();

// A fifth buffer of the same size, allocated on first use (the gradient
// cases' grad_out), filled with fill_b's values for `count` elements.
std::byte* gradient_buffer(sqdiff::DType dtype, std::size_t count);

}  // namespace sqdiff_bench
