// The words of a bounded partial state (sqdiff/bounded_partial_sums.hpp) for
// a sum the library made outside bounded_partial_sum_squared_difference:
// `sqdiff compare`'s fused pass (kernels/fused_compare.hpp) sums its chunks
// together with their statistics, and hands their states to
// combine_bounded_partial_sums and finish_bounded_partial_sums as any other.
#pragma once

#include <cstdint>

#include "reduce/bounded_sum.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

// to[0 .. kBoundedPartialSumWords) = the state of `sum`, for inputs of type `input`.
void store_bounded_state(const BoundedSum& sum, DType input, uint64_t* to);

}  // namespace sqdiff::detail
