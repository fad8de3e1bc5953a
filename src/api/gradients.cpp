// The gradients' entry points: validate both, then run each.
#include "sqdiff/gradients.hpp"

#include "reduce/reduce_call.hpp"
#include "reduce/reduce_execute.hpp"

namespace sqdiff {

void squared_difference_backward(const ConstTensorView& a, const ConstTensorView& b, const ConstTensorView& grad_out,
                                 const TensorView* grad_a, const TensorView* grad_b, const Options& options) {
  const auto calls = detail::validate_squared_difference_backward(a, b, grad_out, grad_a, grad_b, options);
  for (const detail::ReduceCall& call : calls) detail::execute_reduction("squared_difference_backward", call);
}

void subtract_backward(const ConstTensorView& grad_out, const TensorView* grad_a, const TensorView* grad_b,
                       const Options& options) {
  const auto calls = detail::validate_subtract_backward(grad_out, grad_a, grad_b, options);
  for (const detail::ReduceCall& call : calls) detail::execute_reduction("subtract_backward", call);
}

}  // namespace sqdiff
