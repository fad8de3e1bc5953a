// The two operations: subtract and squared_difference (SPEC section 1).
#pragma once

#include "sqdiff/broadcast.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff {

struct Options {
  Broadcast broadcast = {};
  int threads = 0;  // 0 = library default; negative is an error
};

// out = a - b, element-wise after broadcasting a and b to out's shape.
// `out` may be exactly `a` or `b` (in-place); any other overlap with an input
// gives the result as if the inputs had been copied first.
void subtract(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
              const Options& options = {});

// out = (a - b)², computed as d = a - b; out = d * d (f16/bf16 in f32, rounded once).
void squared_difference(const ConstTensorView& a, const ConstTensorView& b,
                        const TensorView& out, const Options& options = {});

}  // namespace sqdiff
