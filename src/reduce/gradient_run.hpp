// Runs validated gradient calls (reduce_call.hpp). A gradient whose input is
// not broadcast sums one term per element: the SIMD kernel rounds it
// (kernels/gradient_table.hpp), both gradients in one pass when both are like
// that. A gradient summed over broadcast dims adds signed terms in
// double-double with a bound on the sum of their magnitudes, and sums an
// output exactly where the bound straddles a rounding boundary or does not
// hold (a term that is not finite, or an f64 term near under- or
// overflow). With set_fast_square_reductions(false) every output is summed
// exactly.
#pragma once

#include <array>
#include <string_view>

#include "reduce/reduce_call.hpp"

namespace sqdiff::detail {

void run_gradients(std::string_view op, const std::array<ReduceCall, 2>& calls);

}  // namespace sqdiff::detail
