// The gradients' entry points: validate both, then run them.
#include "sqdiff/gradients.hpp"

#include "reduce/reduce_call.hpp"
#include "reduce/gradient_run.hpp"

namespace sqdiff {

void squared_difference_backward(const ConstTensorView& a, const ConstTensorView& b, const ConstTensorView& grad_out,
                                 const TensorView* grad_a, const TensorView* grad_b, const Options& options) {
  detail::run_gradients("squared_difference_backward",
                        detail::validate_squared_difference_backward(a, b, grad_out, grad_a, grad_b, options));
}

void subtract_backward(const ConstTensorView& grad_out, const TensorView* grad_a, const TensorView* grad_b,
                       const Options& options) {
  detail::run_gradients("subtract_backward", detail::validate_subtract_backward(grad_out, grad_a, grad_b, options));
}

void mean_squared_difference_backward(const ConstTensorView& a, const ConstTensorView& b, const TensorView* grad_a,
                                      const TensorView* grad_b, const Options& options) {
  detail::run_gradients("mean_squared_difference_backward",
                        detail::validate_mean_squared_difference_backward(a, b, grad_a, grad_b, options));
}

}  // namespace sqdiff
