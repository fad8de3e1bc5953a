// The reductions' entry points: validate, then run.
#include "sqdiff/reduce.hpp"

#include "reduce/reduce_call.hpp"
#include "reduce/reduce_execute.hpp"

namespace sqdiff {

void sum_squared_difference(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                            const ReduceOptions& options) {
  detail::execute_reduction("sum_squared_difference",
                            detail::validate_reduction("sum_squared_difference", a, b, out, options, false));
}

void mean_squared_difference(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                             const ReduceOptions& options) {
  detail::execute_reduction("mean_squared_difference",
                            detail::validate_reduction("mean_squared_difference", a, b, out, options, true));
}

}  // namespace sqdiff
