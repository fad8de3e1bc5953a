// The words of a bounded partial state (sqdiff/bounded_partial_sums.hpp):
// written by the bounded entry points and by the comparison's fused pass
// (kernels/fused_compare.hpp sums its chunks together with their statistics
// and hands their states to combine_bounded_partial_sums and
// finish_bounded_partial_sums as any other), read back only once checked.
#pragma once

#include <cstdint>

#include "reduce/bounded_sum.hpp"
#include "sqdiff/bounded_partial_sums.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

// to[0 .. kBoundedPartialSumWords) = the state of `sum`, for inputs of type `input`.
void store_bounded_state(const BoundedSum& sum, DType input, uint64_t* to);

// The bounded entry points' implementations (sqdiff/bounded_partial_sums.hpp),
// which the comparison calls too; each validates its arguments as the entry
// point it implements, with that entry point's name in its messages.
void compute_bounded_states(const ConstTensorView& a, const ConstTensorView& b, DType out, uint64_t* states,
                            const ReduceOptions& options);
void combine_bounded_states(DType input, uint64_t* into, const uint64_t* from, int64_t outputs);
int64_t finish_bounded_states(DType input, const uint64_t* states, int64_t count, bool mean, const TensorView& out,
                              uint8_t* undecided);

// State `index` of `states` (kBoundedPartialSumWords words each), once checked
// to be what store_bounded_state writes for inputs of type `input`; else Error,
// its message starting "op: name index".
BoundedSum load_bounded_state(const char* op, const char* name, DType input, const uint64_t* states, int64_t index);

}  // namespace sqdiff::detail
