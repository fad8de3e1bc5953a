// Exact sums of squared differences before rounding: the state that lets the
// pieces of one reduction (chunks of a file, blocks of a Dask array) be
// summed apart and combined exactly, so that the rounded result is bit for
// bit the one a single call gives (SPEC section 7).
#pragma once

#include <cstddef>
#include <cstdint>

#include "sqdiff/reduce.hpp"

namespace sqdiff {

// What a state is, and where one may come from: the words that
// partial_sum_squared_difference and combine_partial_sums write, for inputs
// of one type, by this version of the library (the layout may change between
// versions; words are in the machine's byte order). A state is an exact
// fixed-point sum (the limbs, least significant first) and a tag word that
// marks it as a state and names its layout version and its input type's
// format, beside the flags of NaN, +inf and the sign of a zero. Every state
// passed in is checked: one that is not such a state (zeroed memory, garbage,
// another version's, one of an input type with another format such as bf16
// for f32 (the integer types share one), a negative or otherwise impossible
// sum) is an Error, and nothing is written. A zero-filled buffer is not a
// state: the state of an empty sum comes from partial_sum_squared_difference
// over no elements.

// 64-bit words per output element of the state for inputs of `input` type
// (it depends only on the type: the limbs of an exact fixed-point sum, 3 for
// f16 and the integers, 10 for bf16 and f32, 67 for f64, and the tag word:
// 4, 11, 11 and 68 words).
std::size_t partial_sum_words(DType input);

// partials[i * words .. (i + 1) * words) = the exact sum of (a - b)^2 for
// output element i (row-major over reduced_shape(broadcast shape, axes,
// keepdims)). Same validation as sum_squared_difference; `partials` is dense
// and must not overlap the inputs.
void partial_sum_squared_difference(const ConstTensorView& a, const ConstTensorView& b, uint64_t* partials,
                                    const ReduceOptions& options = {});

// into[i] += from[i] for `outputs` states, exactly. Both from inputs of type
// `input`; `into` and `from` are the same states or do not overlap. A state's
// capacity is at least 2^63 of the input type's largest squares (2^191 for
// the integers): a sum beyond it is an Error, never a wrapped value. Nothing
// is written when any state is refused or any sum overflows.
void combine_partial_sums(DType input, uint64_t* into, const uint64_t* from, int64_t outputs);

// Rounds `outputs` states into `out` (dense row-major over its shape, whose
// element count must be `outputs`): the sum, or with `mean` the sum divided by
// `count` (the number of terms per output element; NaN when 0). Output types
// and errors as for sum_ / mean_squared_difference, and the states' checks.
void finish_partial_sums(DType input, const uint64_t* partials, int64_t count, bool mean, const TensorView& out);

}  // namespace sqdiff
