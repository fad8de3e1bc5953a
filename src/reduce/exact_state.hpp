// Exact partial states (sqdiff/partial_sums.hpp): the entry points'
// implementations, which the comparison (compare/chunk_squares.cpp) calls too.
// Each validates its arguments as the entry point it implements, with that
// entry point's name in its messages.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sqdiff/partial_sums.hpp"

namespace sqdiff::detail {

std::size_t exact_state_words(DType input);
void compute_exact_states(const ConstTensorView& a, const ConstTensorView& b, uint64_t* partials,
                          const ReduceOptions& options);
void combine_exact_states(DType input, uint64_t* into, const uint64_t* from, int64_t outputs);
void finish_exact_states(DType input, const uint64_t* partials, int64_t count, bool mean, const TensorView& out);

}  // namespace sqdiff::detail
