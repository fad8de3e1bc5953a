// Bounded partial sums: the fast counterpart of the exact partial states
// (partial_sums.hpp). Each piece of one reduction (a chunk of a file, a block
// of a Dask array) is summed at the speed of sum_squared_difference into a
// double-double with a rigorous error bound; the pieces' states are added
// with their bounds; and each output is rounded once, correctly, whenever its
// bound decides the rounding (bit for bit the result of one call over all
// the pieces, whatever the pieces and the order of adding them). An output
// the bound leaves undecided (an exact sum within about 2^-40 of its own
// magnitude from a rounding boundary of the output type, such as one that
// lies on it, or terms the fast path leaves to the exact one) is reported,
// not written: the caller sums it again with the exact states from the same
// pieces. For float inputs (f16, bf16, f32, f64).
#pragma once

#include <cstddef>
#include <cstdint>

#include "sqdiff/reduce.hpp"

namespace sqdiff {

// 64-bit words per output element of a bounded state: the double-double
// (high, low), the bound, and a tag word (the state's mark and layout
// version, the input type, and the flags of NaN, +inf and "only the exact sum
// decides"). Words are in the machine's byte order; the layout may change
// between versions, and a state of another version is refused.
inline constexpr std::size_t kBoundedPartialSumWords = 4;

// states[i * 4 .. (i + 1) * 4) = output element i's sum of (a - b)^2 with its
// bound (row-major over reduced_shape(broadcast shape, axes, keepdims)).
// `out` is the type the states will be rounded into: the sums are kept
// precisely enough for it (double-double for f64). Validation as for
// sum_squared_difference, and the inputs must be of a float type; `states` is
// dense and must not overlap the inputs.
void bounded_partial_sum_squared_difference(const ConstTensorView& a, const ConstTensorView& b, DType out,
                                            uint64_t* states, const ReduceOptions& options = {});

// into[i] += from[i] for `outputs` states of inputs of type `input`, bounds
// included. `into` and `from` are the same states or do not overlap. Every
// state is checked first (as the exact states are: a state not written by
// this library's bounded functions for inputs of `input` type is an Error,
// and so is one whose sum or bound no such inputs reach: beyond 2^64 times
// the square of twice the type's largest finite value for f16, bf16 and f32),
// and nothing is written when one is refused.
void combine_bounded_partial_sums(DType input, uint64_t* into, const uint64_t* from, int64_t outputs);

// Rounds `outputs` states into `out` (dense row-major over its shape, whose
// element count must be `outputs`): the sum or, with `mean`, the sum divided
// by `count` (the terms per output element; NaN when 0), with the output
// types of sum_ / mean_squared_difference. Writes every output element whose
// bound decides its rounding, and sets undecided[i] to 1 for the others
// (0 for the written ones), whose elements are left as they were; returns how
// many are undecided. Refused states are an Error, and then nothing is written.
int64_t finish_bounded_partial_sums(DType input, const uint64_t* states, int64_t count, bool mean,
                                    const TensorView& out, uint8_t* undecided);

}  // namespace sqdiff
