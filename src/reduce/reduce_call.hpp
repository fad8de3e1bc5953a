// Validation of the reductions and gradients: every check that can fail runs
// here, before anything is written, and turns the caller's views into one
// description shared by all of them: a sum, over some dims of the broadcast
// shape, of one kind of term per element.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "shape/dim_vector.hpp"
#include "sqdiff/gradients.hpp"
#include "sqdiff/reduce.hpp"

namespace sqdiff::detail {

// What is summed at each element of the broadcast shape.
enum class Term : uint8_t {
  square_of_difference,  // (a - b)^2: sum_ and mean_squared_difference
  difference_product,    // +-2 (a - b) g: squared_difference_backward
  value,                 // +-g: subtract_backward (operand 0 is g)
};

inline constexpr int kMaxOperands = 3;

struct ReduceCall {
  DType input = DType::f32;
  DType output = DType::f32;
  Term term = Term::square_of_difference;
  bool negate = false;  // the terms' sign (grad_b)
  bool mean = false;
  DimVector shape;      // the broadcast shape
  int operands = 2;     // a, b (squares); a, b, g (difference products); g (values)
  std::array<const std::byte*, kMaxOperands> data = {};
  std::array<DimVector, kMaxOperands> strides;  // in elements, over shape's dims, 0 where broadcast
  std::byte* out = nullptr;
  DimVector out_strides;  // over shape's dims, 0 on the reduced ones
  DimVector reduced;      // 1 on the dims summed over
  int64_t count = 0;      // terms per output element (the mean's divisor)
  uint64_t divisor = 0;   // gradients of a mean: each output's sum divided by it (0: not divided)
  int64_t outputs = 0;    // output elements; 0: nothing to do
  bool out_aliases_input = false;  // the output shares bytes with an input: computed aside first
  int threads = 0;
};

// SPEC section 7's output types: Error unless `output` is one for `input`.
void check_reduction_output_type(std::string_view op, DType input, DType output, bool mean);

// sum_ / mean_squared_difference. Throws Error (messages start with `op`).
ReduceCall validate_reduction(std::string_view op, const ConstTensorView& a, const ConstTensorView& b,
                              const TensorView& out, const ReduceOptions& options, bool mean);

// partial_sum_squared_difference: the reduction's call, whose "output" is the
// dense array of exact states, `words` 64-bit words each.
ReduceCall validate_partial_reduction(std::string_view op, const ConstTensorView& a, const ConstTensorView& b,
                                      uint64_t* partials, std::size_t words, const ReduceOptions& options);

// The two gradients of squared_difference_backward (either may be skipped):
// [0] for grad_a, [1] for grad_b, each with outputs 0 when skipped or empty.
std::array<ReduceCall, 2> validate_squared_difference_backward(const ConstTensorView& a, const ConstTensorView& b,
                                                               const ConstTensorView& grad_out,
                                                               const TensorView* grad_a, const TensorView* grad_b,
                                                               const Options& options);

// mean_squared_difference_backward: squared_difference_backward's calls with a
// grad_out of ones (a constant, every stride 0) and the broadcast element
// count as the divisor of every output.
std::array<ReduceCall, 2> validate_mean_squared_difference_backward(const ConstTensorView& a, const ConstTensorView& b,
                                                                    const TensorView* grad_a, const TensorView* grad_b,
                                                                    const Options& options);

std::array<ReduceCall, 2> validate_subtract_backward(const ConstTensorView& grad_out, const TensorView* grad_a,
                                                     const TensorView* grad_b, const Options& options);

}  // namespace sqdiff::detail
