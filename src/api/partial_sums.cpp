// The exact partial sums' entry points (reduce/exact_state.cpp implements them).
#include "sqdiff/partial_sums.hpp"

#include "reduce/exact_state.hpp"

namespace sqdiff {

std::size_t partial_sum_words(DType input) { return detail::exact_state_words(input); }

void partial_sum_squared_difference(const ConstTensorView& a, const ConstTensorView& b, uint64_t* partials,
                                    const ReduceOptions& options) {
  detail::compute_exact_states(a, b, partials, options);
}

void combine_partial_sums(DType input, uint64_t* into, const uint64_t* from, int64_t outputs) {
  detail::combine_exact_states(input, into, from, outputs);
}

void finish_partial_sums(DType input, const uint64_t* partials, int64_t count, bool mean, const TensorView& out) {
  detail::finish_exact_states(input, partials, count, mean, out);
}

}  // namespace sqdiff
