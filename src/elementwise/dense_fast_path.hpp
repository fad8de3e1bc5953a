// The shortcut for the most common small call: a, b and out dense, of one
// shape and one dtype, small enough for one thread. It only ever accepts:
// anything unusual, invalid input included, is left to the general
// validate -> plan -> run path, which owns every error message.
#pragma once

#include "kernels/kernel_table.hpp"
#include "sqdiff/ops.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff::detail {

// Runs the call and returns true when it qualifies; returns false, having
// touched nothing, otherwise.
bool try_dense_fast_path(Op op, const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                         const Options& options);

}  // namespace sqdiff::detail
