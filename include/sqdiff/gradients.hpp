// The backward passes of the two ops, with broadcasting undone by summation
// (SPEC section 8): each gradient element is the exact value rounded once.
#pragma once

#include "sqdiff/ops.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff {

// grad_a = sum_to(2 (a - b) grad_out, shape of a), grad_b = sum_to(-2 (a -
// b) grad_out, shape of b); grad_out has the broadcast shape. A null
// gradient is skipped. Float types only (f16, bf16, f32, f64), one type for
// all five tensors.
void squared_difference_backward(const ConstTensorView& a, const ConstTensorView& b, const ConstTensorView& grad_out,
                                 const TensorView* grad_a, const TensorView* grad_b, const Options& options = {});

// grad_a = sum_to(grad_out, shape of a), grad_b = sum_to(-grad_out, shape of
// b). The shapes of a and b are those of grad_a and grad_b; a skipped
// (null) gradient's input is taken to have grad_out's shape (b in pdpd: a
// scalar, which fits every axis), and grad_out must have the broadcast
// shape of the two.
void subtract_backward(const ConstTensorView& grad_out, const TensorView* grad_a, const TensorView* grad_b,
                       const Options& options = {});

// The gradients of the mean squared error, mean((a - b)^2) over all n
// elements of the broadcast shape: grad_a = sum_to(2 (a - b) / n, shape of a),
// grad_b = sum_to(-2 (a - b) / n, shape of b), each element the exact value
// (division included) rounded once; with n = 0 every element is +0 (a sum of
// no terms). Float types only, one type for all four tensors; a null
// gradient is skipped.
void mean_squared_difference_backward(const ConstTensorView& a, const ConstTensorView& b, const TensorView* grad_a,
                                      const TensorView* grad_b, const Options& options = {});

}  // namespace sqdiff
