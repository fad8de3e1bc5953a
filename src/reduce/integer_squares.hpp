// Sums of squared differences of integer inputs, exactly: a difference of two
// integers fits 65 bits and its square 128, so a three-limb accumulator holds
// any sum of them (2^63 terms of up to 2^128). No error bound, no fallback.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "reduce/exact_sum.hpp"
#include "reduce/reduce_call.hpp"
#include "reduce/reduce_plan.hpp"

namespace sqdiff::detail {

// The exact sum of one output's squares: its operands start at `base`
// (element offsets) and run over the reduced dims `summed` (the plan's).
ExactSum integer_square_sum(const ReduceCall& call, const std::vector<ReduceDim>& summed,
                            const std::array<int64_t, kMaxOperands>& base);

}  // namespace sqdiff::detail
