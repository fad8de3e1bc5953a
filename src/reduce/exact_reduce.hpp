// The exact path: one output element's terms summed into an ExactSum, then
// rounded once. The fast paths fall back to it where their error bound
// straddles a rounding boundary; on its own it is the reference.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "reduce/exact_sum.hpp"
#include "reduce/reduce_call.hpp"
#include "reduce/reduce_plan.hpp"

namespace sqdiff::detail {

// The exact sum of the terms of the output element whose operands start at
// `base` (element offsets), over the `summed` dims.
ExactSum exact_output_sum(const ReduceCall& call, const std::vector<ReduceDim>& summed,
                          const std::array<int64_t, kMaxOperands>& base);

// Adds the terms over the `summed` dims to `sum`.
void add_exact_terms(const ReduceCall& call, const std::vector<ReduceDim>& summed,
                     const std::array<int64_t, kMaxOperands>& base, ExactSum& sum);

}  // namespace sqdiff::detail
