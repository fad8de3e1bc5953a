// Sums and means of squared differences over axes of the broadcast shape, in
// one pass, correctly rounded (SPEC section 7).
#pragma once

#include <optional>

#include "sqdiff/broadcast.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff {

struct ReduceOptions {
  Broadcast broadcast = {};
  // The axes of the broadcast shape to reduce; nullopt: all of them; negative
  // ones count from the end; an empty list reduces nothing.
  std::optional<Shape> axes = std::nullopt;
  bool keepdims = false;  // keep each reduced axis as a 1
  int threads = 0;        // 0 = library default; negative is an error
};

// The shape of a reduction over `axes` of `shape`. Throws Error for an axis
// out of range or repeated.
Shape reduced_shape(const Shape& shape, const std::optional<Shape>& axes, bool keepdims);

// out = sum over the axes of (a - b)^2. The output type is chosen by the
// caller: the input type, f32 or f64 for f16/bf16/f32 inputs; f64 or f32 for
// f64; i64 or f64 for signed and u64 or f64 for unsigned integers. The result
// is the exact value rounded once to nearest even (so it does not depend on
// threads, SIMD target or layout); an integer sum that does not fit i64/u64
// is an Error, and nothing is written.
void sum_squared_difference(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                            const ReduceOptions& options = {});

// out = that sum divided by the number of reduced elements, rounded once
// (NaN over no elements). Output types as for the sum, but f64 or f32 for
// integer inputs.
void mean_squared_difference(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                             const ReduceOptions& options = {});

}  // namespace sqdiff
