// The argument checks the two kinds of partial state share (exact states,
// partial_sums.hpp; bounded states, bounded_partial_sums.hpp): what a combine
// and a finish call must be given before any state is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sqdiff/tensor_view.hpp"

namespace sqdiff::detail {

// Throws Error (messages start with `op`) unless `outputs` states of `words`
// words each can be combined from `from` into `into`: a count that is not
// negative, pointers that are not null when there are states, a size that
// fits in memory, and `into` and `from` the same states or apart. False when
// there is nothing to do (no states).
bool check_combine_arguments(const char* op, uint64_t* into, const uint64_t* from, int64_t outputs,
                             std::size_t words);

// Throws Error unless `out` can take the finished states of inputs of type
// `input` (output types as for sum_ / mean_squared_difference, a dense
// row-major view, data when it has elements, `states` not null then either,
// `count` not negative); returns its element count.
int64_t check_finish_arguments(const char* op, DType input, const uint64_t* states, int64_t count, bool mean,
                               const TensorView& out);

}  // namespace sqdiff::detail
