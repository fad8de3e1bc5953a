// Exact sums of squared differences before rounding: the state that lets the
// pieces of one reduction (chunks of a file, blocks of a Dask array) be
// summed apart and combined exactly, so that the rounded result is bit for
// bit the one a single call gives (SPEC section 7).
#pragma once

#include <cstddef>
#include <cstdint>

#include "sqdiff/reduce.hpp"

namespace sqdiff {

// 64-bit words per output element of the state for inputs of `input` type
// (it depends only on the type: the limbs of an exact fixed-point sum, 3 for
// f16 and the integers, 10 for bf16 and f32, 67 for f64, and a word of flags:
// 4, 11, 11 and 68 words).
std::size_t partial_sum_words(DType input);

// partials[i * words .. (i + 1) * words) = the exact sum of (a - b)^2 for
// output element i (row-major over reduced_shape(broadcast shape, axes,
// keepdims)). Same validation as sum_squared_difference; `partials` is dense
// and must not overlap the inputs.
void partial_sum_squared_difference(const ConstTensorView& a, const ConstTensorView& b, uint64_t* partials,
                                    const ReduceOptions& options = {});

// into[i] += from[i] for `outputs` states, exactly. Both from inputs of type `input`.
void combine_partial_sums(DType input, uint64_t* into, const uint64_t* from, int64_t outputs);

// Rounds `outputs` states into `out` (dense row-major over its shape, whose
// element count must be `outputs`): the sum, or with `mean` the sum divided by
// `count` (the number of terms per output element; NaN when 0). Output types
// and errors as for sum_ / mean_squared_difference.
void finish_partial_sums(DType input, const uint64_t* partials, int64_t count, bool mean, const TensorView& out);

}  // namespace sqdiff
