// Shape-free kernels of the gradients where no dim is summed: each output
// element is one term, rounded once. The SIMD code computes it exactly in f64
// where it can tell (a - b exact and the product exact, checked by TwoSum and
// FMA) and leaves the few other elements (exponents far apart, special
// values, f64 products that need more than a double) to the caller's exact
// path, by position.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

// grad_a[i] = RN(2 (a[i] - b[i]) g[i]) and grad_b[i] = -grad_a[i] for i < n
// (either output may be null). Returns how many elements it could not round
// exactly and writes their indices to `unsure` (room for n); those outputs
// hold garbage until the caller rewrites them.
using DifferenceProductKernel = std::size_t (*)(const void* a, const void* b, const void* g, void* grad_a,
                                                void* grad_b, std::size_t n, uint32_t* unsure);

struct GradientKernelTable {
  int64_t target;
  DifferenceProductKernel difference_product[4];  // f16, bf16, f32, f64
  // The same, writing each output whose vectors can be aligned with
  // non-temporal stores: for calls that move more than the last-level cache
  // holds. The caller fences (hwy::FlushStream) before the outputs are read or
  // rewritten (the unsure elements).
  DifferenceProductKernel streaming_difference_product[4];

  DifferenceProductKernel for_input(DType dtype, bool streaming = false) const {
    return (streaming ? streaming_difference_product : difference_product)[static_cast<int>(dtype)];
  }
};

const GradientKernelTable& gradient_kernel_table();

}  // namespace sqdiff::detail
