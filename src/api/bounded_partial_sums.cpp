// The bounded partial sums' entry points (reduce/bounded_state.cpp implements them).
#include "sqdiff/bounded_partial_sums.hpp"

#include "reduce/bounded_state.hpp"

namespace sqdiff {

void bounded_partial_sum_squared_difference(const ConstTensorView& a, const ConstTensorView& b, DType out,
                                            uint64_t* states, const ReduceOptions& options) {
  detail::compute_bounded_states(a, b, out, states, options);
}

void combine_bounded_partial_sums(DType input, uint64_t* into, const uint64_t* from, int64_t outputs) {
  detail::combine_bounded_states(input, into, from, outputs);
}

int64_t finish_bounded_partial_sums(DType input, const uint64_t* states, int64_t count, bool mean,
                                    const TensorView& out, uint8_t* undecided) {
  return detail::finish_bounded_states(input, states, count, mean, out, undecided);
}

}  // namespace sqdiff
